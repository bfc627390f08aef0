// What the lab can be expected to show for a plan. Pure: no I/O.
//
//   ibf::LabExpectation e = ibf::lab_expectation(plan);
//   if (e.adjusted) write(e.yaml);   // check against this instead of the plan; print e.warnings
//
// ibsim 0.10 reports MtuCap 2048 on every port and cannot run NDR/XDR (or enable FDR10), so a
// plan that expects MTU 4096 or NDR would show an mtu_mismatch / rate_mismatch on every link of a
// perfectly cabled lab. The lab checks against an equivalent plan (same nodes, ports, cables,
// labels, GUIDs) with those expectations mapped to what ibsim can do: MTU capped at 2048, NDR/XDR
// -> HDR, FDR10 -> FDR — the same mapping the net generator applies. Written as an explicit-cables
// YAML plan (docs/plan.md) so ibfabricd loads it like any other plan.
#pragma once

#include <string>
#include <vector>

#include "ibf/plan.h"

namespace ibf {

inline constexpr int kIbsimMtuCap = 2048;

struct LabExpectation {
    bool adjusted = false;              // false: the plan can be used as it is
    std::string yaml;                   // the adjusted plan (set when adjusted)
    std::vector<std::string> warnings;  // one line per kind of adjustment
};

LabExpectation lab_expectation(const Plan& plan);

// The plan as an explicit-cables YAML plan (nodes: with type/ports/guid, cables: with label,
// rate, mtu), unchanged.
std::string plan_to_yaml(const Plan& plan);

}  // namespace ibf
