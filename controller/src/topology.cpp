// Loading the declared topology, node-name-map and token files for the daemon.
#include <fstream>
#include <sstream>

#include "ibf/daemon.h"
#include "ibf/error.h"
#include "ibf/plan_yaml.h"

namespace ibf {
namespace {

std::string read_file(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, 0, "cannot read " + what);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

Topology load_topology(const DaemonConfig& c) {
    Topology t;
    if (!c.topology.empty())
        t.plan = std::make_shared<const Plan>(load_plan(read_file(c.topology, "the topology"), c.topology));
    if (!c.node_name_map.empty())
        t.names = std::make_shared<const NodeNameMap>(
            parse_node_name_map(read_file(c.node_name_map, "the node-name-map"), c.node_name_map));
    return t;
}

std::optional<std::string> load_token(const DaemonConfig& c) {
    if (c.token_file.empty()) return std::nullopt;
    std::string s = read_file(c.token_file, "the token file");
    const char* ws = " \t\r\n";
    s.erase(0, s.find_first_not_of(ws) == std::string::npos ? s.size() : s.find_first_not_of(ws));
    s.erase(s.find_last_not_of(ws) + 1);
    if (s.empty()) throw InputError(c.token_file, 0, 0, "the token file is empty");
    if (s.find_first_of(ws) != std::string::npos)
        throw InputError(c.token_file, 1, 0, "the token must be one word without spaces");
    return s;
}

}  // namespace ibf
