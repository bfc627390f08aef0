// The check engine: plan vs actual fabric -> findings. Pure: no I/O, no clocks.
//
//   std::vector<ibf::Finding> fs = ibf::check(plan, fabric);
//
// Planned nodes are matched to actual nodes by GUID, else by name (and HCA), else by position
// (ibf/identity.h); every node is named by one ibf::NameBook (plan names first). Then every planned link is compared with the actual cabling:
//   missing_link, unexpected_link, miswired (one finding per cable that goes elsewhere: a crossed
//   pair of parallel cables is two miswired findings; a cable moved to another port is one),
//   missing_node, unexpected_node, identity_changed (renamed or replaced), rate_mismatch, rate_below_capability, mtu_mismatch.
// Findings come out sorted (kind, a.name, a.port) so output is stable.
#pragma once

#include <string>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/plan.h"

namespace ibf {

struct CheckOptions {
    bool rate_below_capability = true;  // report links that run slower than both ends could
    // routing's Analysis::tier_of of the fabric, for the names of nodes that need a synthesized one
    // ("leaf-cfb0", ibf/names.h); empty: "switch-cfb0".
    std::vector<int> tier_of;
    friend bool operator==(const CheckOptions&, const CheckOptions&) = default;
};

std::vector<Finding> check(const Plan& plan, const Fabric& actual, const CheckOptions& opt = {});

// A planned link found cabled exactly as planned (both ends on the planned ports), whatever its
// rate: the daemon uses these to put the planned rate and cable label next to a live link.
struct LinkMatch {
    size_t planned = 0;            // index into Plan::links
    NodeId a = kNoNode, b = kNoNode;  // actual nodes of the planned link's a and b ends
    int pa = 0, pb = 0;
};
// The same findings as check(); `matches` (when not null) receives the exactly cabled links.
//   std::vector<ibf::LinkMatch> m; auto fs = ibf::check(plan, fabric, {}, &m);
std::vector<Finding> check(const Plan& plan, const Fabric& actual, const CheckOptions& opt,
                           std::vector<LinkMatch>* matches);

// What the plan asks for that `actual` cannot show, so check() could not compare it: "rate" when
// the plan gives rates and no cabled port of `actual` knows its active rate, "mtu" likewise for
// MTUs (no dump format carries one; OpenSM's snapshots do). Reports say so (render_unchecked, `unchecked` in JSON).
// Pure; linear.
//   ibf::unchecked_fields(plan_with_mtu, ibnetdiscover_fabric) == std::vector<std::string>{"mtu"}
std::vector<std::string> unchecked_fields(const Plan& plan, const Fabric& actual);

// For a plan made from a known-good dump (`golden`, e.g. plan_from_fabric): where the two dumps name
// the same node by different GUIDs (iblinkinfo prints a CA's port GUIDs, not its node GUID, so
// readers use its lowest port GUID), points the plan's GUID at the actual node that has the same
// port GUID. Only planned GUIDs absent from `actual` change, and only to actual GUIDs no planned node
// uses. Returns how many planned nodes it re-pointed. Pure; linear.
size_t align_golden_guids(Plan& plan, const Fabric& golden, const Fabric& actual);

}  // namespace ibf
