// Findings about the Subnet Managers themselves, from what the HA engine knows (ha_engine.h) and
// the fabric the daemon believes in. Pure. The kinds are in model/include/ibf/finding.h
// (sm_split_brain ... lid_changed) and docs/findings.md describes each.
//
//   std::vector<ibf::Finding> f = ibf::ha::ha_findings(engine, current_snapshot.get(), now_ms);
#pragma once

#include <cstdint>
#include <vector>

#include "ibf/finding.h"
#include "ibf/ha_engine.h"

namespace ibf::ha {

// `current` may be null (no fabric yet). Findings are sorted by kind, then SM GUID.
//  - sm_split_brain: two or more live SMs in one subnet group say MASTER (critical once this agent's
//    healing sweeps failed: HaEngine::split_brain());
//  - sm_master_lid_mismatch: Active ports of `current` (a master's sweep) whose MasterSMLID is known
//    and is not that master's LID (one finding per node, the ports listed);
//  - sm_stalled: the live master's ActCount has not moved for `stall_ms`;
//  - sm_standby_not_polling: a live STANDBY whose ActCount has not moved for `stall_ms`;
//  - sm_unknown: an SM whose GUID is not in `expect.sms` (when that list is given);
//  - sm_not_sweeping (critical): a live MASTER that has owed a sweep for `sweep_timeout_ms`
//    (HaEngine::not_sweeping), which replaces the ActCount sm_stalled for it;
//  - sm_config_mismatch: an SM whose priority differs from `expect.priorities` (unless the SMs
//    have exactly the configured priorities, exchanged: a switchover did that);
//  - sm_conf_drift: SMs of one subnet whose plugins sent different opensm.conf settings (routing
//    engine, guid files, lmc, honor_guid2lid_file, sm_key digest): one finding per SM and setting;
//  - sm_no_standby: HA is configured (mode monitor/act) and the master's group has no live STANDBY;
//  - lid_changed: a port whose LID differs across the latest master change.
std::vector<Finding> ha_findings(const HaEngine& e, const Snapshot* current, int64_t now_ms);

}  // namespace ibf::ha
