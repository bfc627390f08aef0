// One display name per node, the same in every output (check, analyze, plan from-dump, the daemon's
// findings, live analysis, metrics and the API). Built once per fabric (+ plan + node-name-map).
// Pure: no I/O.
//
//   ibf::NameBook names(fabric, tier_of);            // tier_of: routing's Analysis::tier_of ({} = unknown)
//   names.name(id);                                  // "leaf03", "dir1/L12/U1", "leaf-cfb0"
//   names.port(id, 19);                              // "leaf03/19"
//   ibf::NameBook planned(fabric, tier_of, plan_names);  // plan_names[id]: the plan's name ("" = none)
//
// The rule, first that applies:
//   1. the plan's name for the node (`preferred`, e.g. from checks/identity.h), unless it only
//      echoes the node's own name where rule 2 would not take it (a description, or a name several
//      nodes share): a plan made from a dump then names nodes as rules 2-4 do without a plan;
//   2. the node's name (Node::name: the node-name-map's name, else derived from the NodeDescription,
//      see derive_name) when no other node has it and it is a name, not a description (no blanks,
//      no '#': "Voltaire 4036 # 4036-369C" is not a name);
//   3. a name unique in the fabric taken from the NodeDescription: a director's line or spine card
//      "MF0;dir1:CS7500/L12/U1" -> "dir1/L12/U1", a Voltaire switch's given name "Voltaire 4036 #
//      4036-369C" -> "4036-369C", a host adapter "gpu01 mlx5_1" -> "gpu01:mlx5_1";
//   4. a synthesized name that says what the node is: its tier (or "switch", "host", "router") and
//      the last 4 hex digits of its GUID, "leaf-cfb0" (8 digits when 4 are shared).
// A name from 1 or 2 that several nodes share gets "@" and their short GUID ("ib3@8af0").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"

namespace ibf {

class NameBook {
public:
    NameBook() = default;
    // tier_of: per NodeId, 1 = leaf, 2 = spine, 3 = core (0 or missing = unknown).
    // preferred: per NodeId, a name to use first ("" = none); may be shorter than the fabric.
    explicit NameBook(const Fabric& f, const std::vector<int>& tier_of = {},
                      const std::vector<std::string>& preferred = {});

    const std::string& name(NodeId n) const { return names_[n]; }
    std::string port(NodeId n, int port) const { return names_[n] + "/" + std::to_string(port); }
    // {name, node GUID, port}: a finding's endpoint.
    Endpoint endpoint(const Fabric& f, NodeId n, int port) const { return {names_[n], f.node(n).guid, port}; }
    const std::vector<std::string>& all() const { return names_; }
    size_t size() const { return names_.size(); }

private:
    std::vector<std::string> names_;
};

// True for SHARP aggregation nodes: a CA whose description contains "Aggregation Node" (any case).
// They are CAs but not hosts: named "sharp-b208" (rule 4; their descriptions are the vendor's
// default, "Mellanox Technologies Aggregation Node"), not counted or drawn as hosts.
bool is_aggregation_node(const Node& n);

// True for a name a plan can carry as a node name (docs/plan.md, "Names"): not empty, no ':' (it
// separates node and HCA), and '/' only between the non-empty parts of a chassis card's name ("dir1/L03/U2") whose last part is not a number (that would read as
// node/port: "leaf03/19"). plan_name_ok("dir1/L03/U2") == true, plan_name_ok("a/19") == false.
bool plan_name_ok(std::string_view name);

// "leaf", "spine", "core", "tier<n>" for n > 3, "" for 0.
std::string tier_word(int level);
// Last `digits` hex digits of a GUID, lower case: short_guid(0xf4521403007e8af0) == "8af0".
std::string short_guid(Guid g, int digits = 4);

}  // namespace ibf
