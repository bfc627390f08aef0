// Which fabric node is which plan node. Pure; linear (plus a few rounds over unmatched switches).
//
//   ibf::NodeMatch m = ibf::match_nodes(plan, fabric);
//   m.resolved[planned_index];      // the fabric node, or kNoNode
//   m.how[planned_index];           // MatchHow::position: found by its cabling (renamed or replaced)
//   ibf::NameBook names = ibf::plan_name_book(plan, fabric, m, tier_of);  // plan names first
//
// Order of identities:
//   1. GUID: the plan's GUID is the node's GUID, or one of its ports' GUIDs (what ibstat shows);
//   2. name (after the node-name-map) among the nodes no GUID claimed, the HCA narrowing a host's name
//      (HCA-pinned names first), the planned type breaking ties; also for planned nodes whose GUID
//      is gone (replaced hardware that kept its name); a name that fits several nodes is ambiguous;
//   3. position: a planned switch still unmatched is the unclaimed fabric switch that most of its
//      planned neighbours' ports lead to (more than half of its planned links whose far end is
//      matched, and at least two). Repeated until nothing changes, so a spine whose leaves matched
//      and a leaf whose spines matched are both found. A renamed switch (a node-name-map that calls
//      ib3 "rack03-leaf-ib3") or an RMA'd one (new GUID, same cables) is then one identity_changed
//      finding, and its cabling, rate and MTU are still checked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/names.h"
#include "ibf/plan.h"

namespace ibf {

enum class MatchHow : uint8_t { none, guid, port_guid, name, position };

struct NodeMatch {
    static constexpr uint32_t kUnclaimed = UINT32_MAX;
    static constexpr uint32_t kAmbiguous = UINT32_MAX - 1;
    std::vector<NodeId> resolved;               // per planned node: fabric node or kNoNode
    std::vector<MatchHow> how;                  // per planned node
    std::vector<std::vector<NodeId>> ambiguous; // per planned node: candidates when its name fits several
    std::vector<uint32_t> claimed;              // per fabric node: planned index, kUnclaimed or kAmbiguous
};

NodeMatch match_nodes(const Plan& plan, const Fabric& f);

// Per fabric node: the plan's name of the planned node it matched ("" for the rest).
std::vector<std::string> plan_names(const Plan& plan, const NodeMatch& m, size_t fabric_size);
// The NameBook every output of a checked fabric uses: plan names first (names.h).
NameBook plan_name_book(const Plan& plan, const Fabric& f, const NodeMatch& m, const std::vector<int>& tier_of = {});
// The same, matching first: what the daemon's live analysis and metrics use next to check().
NameBook plan_name_book(const Plan& plan, const Fabric& f, const std::vector<int>& tier_of = {});

}  // namespace ibf
