// Findings of a running lab: from ibfabricd's API (what the OpenSM plugin streamed), or, when the
// lab runs without the daemon, from ibnetdiscover run under umad2sim and the check engine.
//
//   auto r = ibf::lab_findings_via_daemon(state);           // nullopt until the first check
//   auto fs = ibf::lab_findings_via_discover(state, plan);  // one discovery, checked here
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibf/check.h"
#include "ibf/finding.h"
#include "ibf/lab_runner.h"
#include "ibf/plan.h"

namespace ibf {

struct LabFindings {
    std::vector<Finding> findings;
    int64_t sweep_seq = -1;  // the snapshot they came from (daemon), -1 for discover
    std::string via;         // "ibfabricd" or "ibnetdiscover"
};

// GET /api/v1/findings once. nullopt while the daemon has no checked snapshot newer than
// `after_seq` (sweep_seq null, or <= after_seq). LabError when the daemon does not answer.
std::optional<LabFindings> lab_findings_via_daemon(const LabState& s, int64_t after_seq = -1);

// Polls lab_findings_via_daemon until it has findings or `timeout_s` passes.
std::optional<LabFindings> lab_wait_findings(const LabState& s, int64_t after_seq, double timeout_s);

// Runs ibnetdiscover in the lab, parses it (ibf_dumps) and checks it against `expected`.
// ibsim reports every port as able to run 12xHDR, so rate_below_capability is off by default.
LabFindings lab_findings_via_discover(const LabState& s, const Plan& expected,
                                      CheckOptions opt = CheckOptions{.rate_below_capability = false});

}  // namespace ibf
