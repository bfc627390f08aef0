// JSON for the history: a FabricState (compact arrays, the keyframes the database stores) and a
// Change (the objects GET /api/v1/history/changes serves, docs/api.md), both read back exactly,
// and a change list as findings (`ibfabric diff` prints them like `ibfabric check`). Pure.
//
//   nlohmann::json j = changes_to_json(cs);            // [{"kind": "link_changed", "a": {...}, ...}]
//   std::vector<Change> back = changes_from_json(j);   // == cs
//   std::vector<Finding> fs = changes_as_findings(cs); // link_removed -> missing_link, ...
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/fabric_diff.h"
#include "ibf/finding.h"

namespace ibf {

// {"nodes": [[guid, type, name, ports], ...], "links": [[guid_a, port_a, guid_b, port_b, width,
// speed, mtu], ...], "lids": [[guid, port, lid], ...], "sms": [[guid, lid, priority, state], ...]}
// (GUIDs as numbers, width/speed/type/state as their enum values).
nlohmann::json state_to_json(const FabricState& s);
// std::invalid_argument on a malformed object.
FabricState state_from_json(const nlohmann::json& j);

// One object per change:
//   node_added/node_removed: {"kind", "node": {"name", "guid", "type", "ports"}, "text"}
//   link_*: {"kind", "a": {"name", "guid", "port"}, "b": {...}, "before": {"rate", "mtu", "w", "s"} | null,
//            "after": {...} | null, "text"}     (w, s: the width and speed enum values, for exact reads)
//   lid_changed: {"kind", "a": {"name", "guid", "port"}, "before": LID | 0, "after": LID | 0, "text"}
//   sm_*: {"kind", "sm": "0x...", "before": {"state", "priority", "lid"} | null, "after": ..., "text"}
nlohmann::json change_to_json(const Change& c);
nlohmann::json changes_to_json(const std::vector<Change>& cs);
// std::invalid_argument on a malformed object.
Change change_from_json(const nlohmann::json& j);
std::vector<Change> changes_from_json(const nlohmann::json& j);

// The changes as findings, the earlier sweep standing in for the plan: link_removed ->
// missing_link (error), link_added -> unexpected_link (warning), link_changed -> rate_mismatch
// (error when slower, info when faster) or mtu_mismatch, node_removed -> missing_node,
// node_added -> unexpected_node (warning), lid_changed -> lid_changed. SM changes have no finding
// kind: they are in the change list only.
// With `planned` (a_name, a_port, b_name, b_port -> whether the plan has that cable, either way
// round), a link_added the plan has is a planned cable back in place: no finding (restored()).
using PlannedCableFn = std::function<bool(const std::string&, int, const std::string&, int)>;
std::vector<Finding> changes_as_findings(const std::vector<Change>& cs, const PlannedCableFn& planned = {});
// Whether `c` is a planned cable that came back (a link_added that `planned` has).
bool restored(const Change& c, const PlannedCableFn& planned);

}  // namespace ibf
