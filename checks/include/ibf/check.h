// The check engine: plan vs actual fabric -> findings. Pure: no I/O, no clocks.
//
//   std::vector<ibf::Finding> fs = ibf::check(plan, fabric);
//
// Planned nodes are matched to actual nodes by GUID when the plan gives one, else by name (and
// HCA). Then every planned link is compared with the actual cabling:
//   missing_link, unexpected_link, miswired (one finding per cable that goes elsewhere: a crossed
//   pair of parallel cables is two miswired findings; a cable moved to another port is one),
//   missing_node, unexpected_node, rate_mismatch, rate_below_capability, mtu_mismatch.
// Findings come out sorted (kind, a.name, a.port) so output is stable.
#pragma once

#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/plan.h"

namespace ibf {

struct CheckOptions {
    bool rate_below_capability = true;  // report links that run slower than both ends could
};

std::vector<Finding> check(const Plan& plan, const Fabric& actual, const CheckOptions& opt = {});

}  // namespace ibf
