// guid2lid_text(): OpenSM's guid2lid file from a fabric (guid2lid.h). Pure.
#include "ibf/guid2lid.h"

#include <cstdio>
#include <map>

namespace ibf::ha {

std::string guid2lid_text(const Fabric& f) {
    std::map<Guid, std::pair<unsigned, unsigned>> ranges;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || p.guid == 0 || p.lid == 0) continue;
            if (n.type == NodeType::Switch && p.num != 0) continue;
            ranges[p.guid] = {p.lid, p.lid + (1u << p.lmc) - 1};
        }
    std::string out;
    char line[64];
    for (const auto& [g, r] : ranges) {
        std::snprintf(line, sizeof line, "0x%016llx 0x%04x 0x%04x\n", static_cast<unsigned long long>(g), r.first, r.second);
        out += line;
    }
    return out;
}

}  // namespace ibf::ha
