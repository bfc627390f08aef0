// The plan's `scope:` (docs/plan.md): findings the plan says to leave out. Internal to checks/.
#pragma once

#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/plan.h"

namespace ibf::detail {

// Drops unexpected_node findings about CAs when the plan says `hosts: ignore`, and every finding
// with an end whose name matches one of `ignore:`'s patterns. Order is kept.
std::vector<Finding> apply_plan_scope(const Plan& plan, const Fabric& actual, std::vector<Finding> fs);

}  // namespace ibf::detail
