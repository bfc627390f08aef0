// Helpers shared by the config tests: read example files, look planned cables up by end.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "ibf/plan.h"

namespace ibf::test {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::string example_path(const std::string& name) {
    return std::string(IBF_SOURCE_DIR) + "/config/examples/" + name;
}

inline std::string end_name(const Plan& p, const PlannedEnd& e) {
    const PlannedNode& n = p.nodes[e.node];
    return n.name + (n.hca.empty() ? "" : ":" + n.hca) + "/" + std::to_string(e.port);
}

// "leaf01/19" -> "spine01/1", both directions.
inline std::map<std::string, std::string> peer_map(const Plan& p) {
    std::map<std::string, std::string> m;
    for (const auto& l : p.links) {
        m[end_name(p, l.a)] = end_name(p, l.b);
        m[end_name(p, l.b)] = end_name(p, l.a);
    }
    return m;
}

inline const PlannedLink* link_at(const Plan& p, const std::string& end) {
    for (const auto& l : p.links)
        if (end_name(p, l.a) == end || end_name(p, l.b) == end) return &l;
    return nullptr;
}

inline size_t count_type(const Plan& p, NodeType t) {
    size_t n = 0;
    for (const auto& x : p.nodes) n += x.type == t;
    return n;
}

}  // namespace ibf::test
