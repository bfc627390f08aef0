// The declared topology: YAML plan files (schema in docs/plan.md), or a known-good dump used as
// a plan ("golden snapshot").
//
//   ibf::Plan p = ibf::load_plan(text, "plan.yaml");        // YAML or any dump format
//   ibf::Plan g = ibf::plan_from_fabric(fabric, "golden");   // every node by GUID, every link
//   if (!p.node_name_map.empty()) ...                        // the plan names a node-name-map: load it
//
// Examples: config/examples/*.yaml. The compact fat-tree's port assignment rule is in docs/plan.md.
// YAML errors are ibf::InputError naming file:line:column and what was expected.
// Pure: no I/O (the caller reads files; a plan that names other files is resolved by the caller).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/plan.h"

namespace ibf {

// What a plan may expand to (docs/plan.md "Limits"), so memory stays bounded whatever the file
// says: an InputError at file:line:column, never std::bad_alloc. An InfiniBand subnet has at most
// 48k unicast LIDs; these leave room and keep a plan at the limit within ~200 MB.
inline constexpr size_t kMaxPlanYamlNodes = 250000;  // YAML nodes, aliases counted as what they stand for
inline constexpr size_t kMaxPlanNodes = 100000;      // nodes the plan names (switches + hosts + cable ends)
inline constexpr size_t kMaxPlanLinks = 500000;      // cables, compact tiers expanded
inline constexpr size_t kMaxNameBytes = 255;         // one node name (NodeDescription holds 64)

// Parses a YAML plan: compact fat-tree tiers + hosts, explicit cables, or both, expanded into
// one set of planned nodes and links.
Plan parse_plan_yaml(std::string_view text, const std::string& file);

// A plan that expects exactly `f`: every node by GUID (and name), every link, its active rate
// (when known) and MTU (when known).
Plan plan_from_fabric(const Fabric& f, const std::string& source);

// YAML plan or dump (detected), whichever `text` is.
Plan load_plan(std::string_view text, const std::string& file);

// True when `text` looks like a YAML plan (a top-level `version:` key) rather than a dump.
bool looks_like_plan_yaml(std::string_view text);

// Expands a name pattern as plans write them: "leaf[01-18]" -> leaf01..leaf18 (zero-padded when
// the range start is), "r[1-2]n[1-3]" -> r1n1, r1n2, ..., "sw[1-2,5]" -> sw1, sw2, sw5; a name
// without brackets is itself. Errors (bad pattern, bad range, more than `max_names` names, a name
// longer than kMaxNameBytes) are InputError at file:line:column (pass the scalar's position;
// 0 = unknown), raised before anything is expanded.
std::vector<std::string> expand_name_pattern(std::string_view pattern, const std::string& file = "",
                                             int line = 0, int column = 0, size_t max_names = kMaxPlanNodes);

}  // namespace ibf
