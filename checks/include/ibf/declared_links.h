// The links of a fabric that are cabled as a plan declares them, for the plan-aware analysis
// (routing/declared.h: what the plan declares is no anomaly). Pure.
//
//   ibf::NodeMatch m = ibf::match_nodes(plan, fabric);
//   ibf::AnalyzeOptions ao; ao.declared = ibf::declared_links(plan, fabric, m);
#pragma once

#include <vector>

#include "ibf/fabric.h"
#include "ibf/identity.h"
#include "ibf/plan.h"

namespace ibf {

// Planned links whose two nodes are matched and whose two planned ports are cabled to each other.
std::vector<Link> declared_links(const Plan& plan, const Fabric& f, const NodeMatch& m);

}  // namespace ibf
