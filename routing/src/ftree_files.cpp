#include "ibf/ftree_files.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace ibf {

FtreeFiles ftree_files(const Fabric& f, const Analysis& a) {
    FtreeFiles out;
    std::vector<Guid> roots;
    const int top = a.levels();
    for (const SwitchInfo& s : a.switches)
        if (top > 0 && s.tier == top) roots.push_back(f.node(s.node).guid);
    std::sort(roots.begin(), roots.end());
    for (Guid g : roots) out.root_guids += guid_hex(g) + "\n";
    out.roots = static_cast<int>(roots.size());

    std::vector<Guid> cns;
    for (NodeId h : a.compute_hosts) {
        const Node& n = f.node(h);
        for (const Port& p : n.ports) {
            if (!p.valid || !p.linked() || p.peer >= a.tier_of.size() || a.tier_of[p.peer] != 1) continue;
            if (p.guid == 0) { ++out.skipped_ports; continue; }
            cns.push_back(p.guid);
        }
    }
    std::sort(cns.begin(), cns.end());
    cns.erase(std::unique(cns.begin(), cns.end()), cns.end());
    for (Guid g : cns) out.cn_guids += guid_hex(g) + "\n";
    out.compute_ports = static_cast<int>(cns.size());

    std::vector<std::tuple<int, std::string, Guid>> entries;  // (tier order, name, guid)
    for (const SwitchInfo& s : a.switches)
        entries.emplace_back(s.tier == 0 ? 1000 : -s.tier, display_name(f, a, s.node), f.node(s.node).guid);
    for (NodeId h = 0; h < f.size(); ++h) {
        const Node& n = f.node(h);
        if (n.type != NodeType::CA || is_aggregation_node(n) || n.name.empty()) continue;
        if (f.find_by_name(n.name).size() != 1) continue;
        entries.emplace_back(0, n.description, n.guid);
    }
    std::sort(entries.begin(), entries.end());
    out.node_name_map = "# ib-node-name-map written by `ibfabric routing-files`: <node guid> \"<name>\"\n";
    for (auto& [order, name, guid] : entries) {
        std::string escaped;
        for (char c : name) {
            if (c == '"' || c == '\\') escaped += '\\';
            escaped += c;
        }
        out.node_name_map += guid_hex(guid) + " \"" + escaped + "\"\n";
    }
    return out;
}

}  // namespace ibf
