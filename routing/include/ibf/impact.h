// What taking switches, cables or ports out would do, before anyone touches them: host pairs that
// lose every path, pairs left with fewer shortest paths or longer ones, hosts cut off, and the
// per-tier oversubscription and bisection estimate before and after. Pure: no I/O.
//
//   std::vector<ibf::ImpactTarget> t = {{spine01, 0}, {leaf03, 19}};  // port 0 = the whole node
//   ibf::Impact im = ibf::impact(fabric, t);
//   im.unreachable;                                                  // > 0: someone loses the fabric
//
// Assumption (stated in every report): after the change the SM routes each pair over a shortest
// path of what is left, as ftree, updn and minhop do on a fat-tree (minimal up/down rerouting), so
// a pair keeps a route while any path is left and its "paths" are the shortest ones (parallel
// cables count separately). Endpoints are the compute hosts' ports on switches; pairs unordered.
// Cost: one BFS over the switches per leaf, before and after.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/analysis.h"
#include "ibf/fabric.h"

namespace ibf {

struct ImpactTarget {
    NodeId node = kNoNode;
    int port = 0;  // 0 = every port of the node
};

// "spine01" or "leaf03/19" (names as analyze() gives them, or a node GUID); false and `error`
// when the fabric has no such node or port.
bool parse_impact_target(const Fabric& f, const Analysis& a, std::string_view what, ImpactTarget& out, std::string& error);

struct ImpactTier {
    int level = 0;
    std::string name;
    double oversub_max_before = 0, oversub_max_after = 0;
    double up_gbps_before = 0, up_gbps_after = 0;
};

struct Impact {
    std::vector<std::string> removed;     // what was taken out, as named
    long pairs = 0;                       // host port pairs before
    long unreachable = 0;                 // pairs with no path left (hosts cut off included)
    long fewer_paths = 0;                 // pairs still connected over fewer shortest paths
    long longer = 0;                      // pairs whose shortest path gets longer
    std::vector<std::string> hosts_cut_off;  // host ports with no switch left (names "node001/1")
    std::string sample_unreachable, sample_fewer;  // one pair each ("node001/1 -- node044/1"), "" = none
    std::vector<ImpactTier> tiers;
    double bisection_before = 0, bisection_after = 0;
};

Impact impact(const Fabric& f, const std::vector<ImpactTarget>& targets);

// The assumption above, one line.
std::string_view impact_assumption();
nlohmann::json impact_json(const Impact& im);
// The inverse of impact_json (`ibfabric impact --url` renders the daemon's answer); throws
// nlohmann::json::exception when `j` is not one.
Impact impact_from_json(const nlohmann::json& j);
std::string render_impact(const Impact& im);

}  // namespace ibf
