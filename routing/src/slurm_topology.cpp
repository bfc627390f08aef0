// slurm_topology.h: topology.conf (tree and block) from the fat-tree analysis.
#include "ibf/slurm_topology.h"

#include <algorithm>
#include <map>
#include <cstdio>
#include <set>

#include "ibf/hostlist.h"

namespace ibf {

namespace {

std::string slurm_name(std::string s) {
    for (char& c : s)
        if (c == ' ' || c == '\t' || c == ',' || c == '[' || c == ']' || c == '=' || c == '/') c = '_';
    return s;
}

// A host's Slurm NodeName.
std::string host_name(const Fabric& f, const SlurmTopologyOptions& opt, NodeId h) {
    return slurm_name(h < opt.host_names.size() && !opt.host_names[h].empty() ? opt.host_names[h] : f.node(h).name);
}

// The compute hosts cabled to `sw` (node names, once each).
std::vector<std::string> hosts_of(const Fabric& f, const Analysis& a, const SlurmTopologyOptions& opt, NodeId sw) {
    std::set<NodeId> compute(a.compute_hosts.begin(), a.compute_hosts.end());
    std::set<std::string> out;
    for (const Port& p : f.node(sw).ports)
        if (p.valid && p.linked() && compute.count(p.peer)) out.insert(host_name(f, opt, p.peer));
    return {out.begin(), out.end()};
}

std::vector<NodeId> by_name(const Fabric& f, const Analysis& a, std::vector<NodeId> v) {
    std::sort(v.begin(), v.end(), [&](NodeId x, NodeId y) { return display_name(f, a, x) < display_name(f, a, y); });
    return v;
}

std::string tree(const Fabric& f, const Analysis& a, const SlurmTopologyOptions& opt, int& lines) {
    std::string out;
    for (int tier = 1; tier <= a.levels(); ++tier) {
        std::vector<NodeId> sws;
        for (const SwitchInfo& s : a.switches)
            if (s.node != kNoNode && s.tier == tier) sws.push_back(s.node);
        for (NodeId sw : by_name(f, a, sws)) {
            std::vector<std::string> below;
            if (tier == 1) {
                below = hosts_of(f, a, opt, sw);
            } else {
                std::set<std::string> names;
                for (const Port& p : f.node(sw).ports)
                    if (p.valid && p.linked() && p.peer < a.tier_of.size() && a.tier_of[p.peer] == tier - 1)
                        names.insert(slurm_name(display_name(f, a, p.peer)));
                below.assign(names.begin(), names.end());
            }
            if (below.empty()) continue;
            out += "SwitchName=" + slurm_name(display_name(f, a, sw)) + (tier == 1 ? " Nodes=" : " Switches=") +
                   hostlist_compress(below) + "\n";
            ++lines;
        }
    }
    return out;
}

std::string blocks(const Fabric& f, const Analysis& a, const SlurmTopologyOptions& opt, int& lines) {
    std::vector<NodeId> leaves;
    for (const SwitchInfo& s : a.switches)
        if (s.node != kNoNode && s.tier == 1) leaves.push_back(s.node);
    std::map<std::set<NodeId>, size_t> group_of;  // uplink peers -> group index
    std::vector<std::vector<std::string>> groups;
    for (NodeId leaf : by_name(f, a, leaves)) {
        std::vector<std::string> hosts = hosts_of(f, a, opt, leaf);
        if (hosts.empty()) continue;
        std::set<NodeId> up;
        for (const Bundle& b : a.info(leaf)->up_bundles) up.insert(b.peer);
        auto [it, fresh] = group_of.try_emplace(up, groups.size());
        if (fresh) groups.emplace_back();
        groups[it->second].insert(groups[it->second].end(), hosts.begin(), hosts.end());
    }
    std::string out;
    char name[32];
    for (size_t i = 0; i < groups.size(); ++i) {
        std::snprintf(name, sizeof name, "block%02zu", i + 1);
        out += "BlockName=" + std::string(name) + " Nodes=" + hostlist_compress(groups[i]) + "\n";
        ++lines;
    }
    return out;
}

// "# hosts on no leaf switch ...: tank1 (on ib7), ..." for compute hosts cabled to higher tiers
// only; a host whose adapters hang off several switches once, with each ("(on spine01, spine02)").
std::string off_leaf_hosts(const Fabric& f, const Analysis& a, const SlurmTopologyOptions& opt) {
    std::map<std::string, std::set<std::string>> off;  // host name -> the switches its adapters are on
    std::set<std::string> on_a_leaf;
    for (NodeId h : a.compute_hosts) {
        bool on_leaf = false;
        std::string where;
        for (const Port& p : f.node(h).ports)
            if (p.valid && p.linked() && p.peer < a.tier_of.size()) {
                on_leaf = on_leaf || a.tier_of[p.peer] == 1;
                if (where.empty()) where = slurm_name(display_name(f, a, p.peer));
            }
        if (on_leaf) on_a_leaf.insert(host_name(f, opt, h));
        else if (!where.empty()) off[host_name(f, opt, h)].insert(where);
    }
    std::string out;
    for (const auto& [host, where] : off) {
        if (on_a_leaf.count(host)) continue;  // listed under a leaf through another adapter
        std::string list;
        for (const std::string& w : where) list += (list.empty() ? "" : ", ") + w;
        out += " " + host + " (on " + list + ")";
    }
    if (out.empty()) return "";
    return "# compute hosts on no leaf switch, left out (Slurm's tree places nodes under leaves):" + out + "\n";
}

}  // namespace

std::string slurm_topology(const Fabric& f, const Analysis& a, const SlurmTopologyOptions& opt) {
    int lines = 0;
    const std::string body = off_leaf_hosts(f, a, opt) + (opt.block ? blocks(f, a, opt, lines) : tree(f, a, opt, lines));
    std::string head = "# Slurm topology.conf (topology/" + std::string(opt.block ? "block" : "tree") + ") by ibfabric";
    if (!opt.source.empty()) head += " from " + opt.source;
    std::set<std::string> hosts;  // by name: a dual-rail host's two adapters are one host
    for (NodeId h : a.compute_hosts) hosts.insert(host_name(f, opt, h));
    head += ": " + std::to_string(hosts.size()) + " compute hosts, " + std::to_string(lines) +
            (opt.block ? " block" : " switch") + (lines == 1 ? "\n" : opt.block ? "s\n" : "es\n");
    return head + body;
}

}  // namespace ibf
