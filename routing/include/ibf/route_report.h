// `ibfabric route` without the I/O: naming the two ends (host name, GUID or LID), the notes to put
// on each cable (planned rate, label, findings), and a traced route as text or JSON. Pure.
//
//   auto src = ibf::resolve_route_end(fabric, analysis.names, "node001");   // or "0x...", "12", "leaf01"
//   ibf::RouteTrace t = ibf::trace_route(graph, src->node, src->port, dst->lid, analysis.names);
//   ibf::LinkNotes notes = ibf::link_notes(fabric, findings, planned);
//   std::cout << ibf::render_route(fabric, analysis.names, t, notes);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/finding.h"
#include "ibf/route_graph.h"

namespace ibf {

struct RouteEnd {
    NodeId node = kNoNode;
    int port = 0;      // CA port (0 for a switch)
    uint32_t lid = 0;  // its (base) LID
};
// "node001" (a name or display name; a CA's first linked port), "node001/2", a node or port GUID
// ("0x0002c903000e0b72": more than 4 hex digits), a LID ("12", "0xc"). InputError-free: nullopt
// and `error` says why ("no node or LID 'nod001'", "'node002' has no LID").
std::optional<RouteEnd> resolve_route_end(const Fabric& f, const std::vector<std::string>& names, std::string_view what,
                                          std::string& error);

// What a cable carries for people: the plan's rate and label, the findings about it.
struct LinkNote {
    std::string planned_rate;         // "4xHDR", "" = not planned / unknown
    std::string label;
    std::vector<std::string> issues;  // "rate_mismatch: 1xEDR, expected 4xEDR", ...
};
// Keyed by both ends (node, port).
using LinkNotes = std::map<std::pair<NodeId, int>, LinkNote>;
struct PlannedCable {
    NodeId a = kNoNode;
    int pa = 0;
    NodeId b = kNoNode;
    int pb = 0;
    std::string rate, label;
};
LinkNotes link_notes(const Fabric& f, const std::vector<Finding>& findings, const std::vector<PlannedCable>& planned);

// One traced route: {"from", "to", "lid", "arrived", "why", "cables": [{"from", "to", "rate",
// "planned_rate", "label", "issues"}]} (docs/cli.md, "route").
nlohmann::json route_json(const Fabric& f, const std::vector<std::string>& names, const RouteTrace& t, const LinkNotes& notes);
// The same as lines: a heading, then one line per cable.
std::string render_route(const Fabric& f, const std::vector<std::string>& names, const RouteTrace& t, const LinkNotes& notes);
// True when the route arrived and no cable on it has an issue.
bool route_clean(const Fabric& f, const RouteTrace& t, const LinkNotes& notes);
// render_route and route_clean of a route_json (`ibfabric route --url` renders the daemon's
// answer); throw nlohmann::json::exception when `j` is not one.
std::string render_route_json(const nlohmann::json& j);
bool route_clean_json(const nlohmann::json& j);

}  // namespace ibf
