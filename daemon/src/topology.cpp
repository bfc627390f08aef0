// Loading the declared topology, node-name-map and token files for the daemon.

#include <cstdio>

#include "ibf/daemon.h"
#include "ibf/error.h"
#include "ibf/inputs.h"
#include "ibf/waivers.h"

namespace ibf {

Topology load_topology(const DaemonConfig& c) {
    Topology t;
    if (!c.topology.empty()) {
        // Same resolution as `ibfabric check`: a YAML plan or a golden dump, and the node-name-map
        // from the config, else the one the plan names.
        Expected e = load_expected(c.topology, c.node_name_map);
        t.plan = std::make_shared<const Plan>(std::move(e.plan));
        if (!e.names.empty()) t.names = std::make_shared<const NodeNameMap>(std::move(e.names));
    } else if (!c.node_name_map.empty()) {
        t.names = std::make_shared<const NodeNameMap>(load_node_name_map(c.node_name_map));
    }
    if (!c.waivers.empty())
        t.waivers = std::make_shared<const WaiverSet>(parse_waivers(read_text_file(c.waivers, "waiver file", 1u << 20), c.waivers));
    return t;
}

std::optional<std::string> load_token(const DaemonConfig& c) {
    if (c.token_file.empty()) return std::nullopt;
    FileContents fc = read_regular_file(c.token_file, "token file", kMaxTokenFileBytes);
    // Group write, or any access for others, lets someone else read or replace the token.
    if (fc.mode & 0027) {
        char mode[16];
        std::snprintf(mode, sizeof mode, "%04o", fc.mode);
        throw InputError(c.token_file, 0, 0,
                         std::string("mode ") + mode + " lets other users read or change the token; chmod 0600 (or 0640 "
                         "with the group of the readers)");
    }
    std::string& s = fc.text;
    const char* ws = " \t\r\n";
    s.erase(0, s.find_first_not_of(ws) == std::string::npos ? s.size() : s.find_first_not_of(ws));
    s.erase(s.find_last_not_of(ws) + 1);
    if (s.empty()) throw InputError(c.token_file, 0, 0, "the token file is empty");
    if (s.find_first_of(ws) != std::string::npos)
        throw InputError(c.token_file, 1, 0, "the token must be one word without spaces");
    return s;
}

}  // namespace ibf
