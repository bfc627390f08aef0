// impact.h: pairs, paths and oversubscription before and after taking nodes or ports out.
#include "ibf/impact.h"

#include <cstdio>

#include "ibf/hostlist.h"

namespace ibf {

namespace {

// Per leaf (switch with compute host ports): its host ports; shortest path counts between leaves.
struct LeafPaths {
    std::vector<NodeId> leaves;
    std::vector<std::vector<std::pair<NodeId, int>>> hosts;  // per leaf
    std::vector<int> dist;       // leaves x leaves, -1 unreachable
    std::vector<double> count;   // leaves x leaves, shortest paths
};

LeafPaths leaf_paths(const Fabric& f, const Analysis& a, const std::vector<NodeId>& leaves) {
    LeafPaths lp;
    lp.leaves = leaves;
    std::vector<uint8_t> compute(f.size(), 0);
    for (NodeId h : a.compute_hosts) compute[h] = 1;
    for (NodeId l : leaves) {
        lp.hosts.emplace_back();
        for (const Port& p : f.node(l).ports)
            if (p.valid && p.linked() && compute[p.peer]) lp.hosts.back().push_back({p.peer, p.peer_port});
    }
    const size_t L = leaves.size();
    lp.dist.assign(L * L, -1);
    lp.count.assign(L * L, 0);
    std::vector<int> idx(f.size(), -1), dist(f.size());
    for (size_t i = 0; i < L; ++i) idx[leaves[i]] = static_cast<int>(i);
    std::vector<double> cnt(f.size());
    std::vector<NodeId> queue;
    for (size_t i = 0; i < L; ++i) {
        std::fill(dist.begin(), dist.end(), -1);
        std::fill(cnt.begin(), cnt.end(), 0.0);
        dist[leaves[i]] = 0, cnt[leaves[i]] = 1;
        queue.assign(1, leaves[i]);
        for (size_t q = 0; q < queue.size(); ++q) {
            const NodeId s = queue[q];
            for (const Port& p : f.node(s).ports) {
                if (!p.valid || p.num == 0 || !p.linked() || f.node(p.peer).type != NodeType::Switch) continue;
                if (dist[p.peer] < 0) dist[p.peer] = dist[s] + 1, queue.push_back(p.peer);
                if (dist[p.peer] == dist[s] + 1) cnt[p.peer] += cnt[s];
            }
        }
        for (size_t j = 0; j < L; ++j) lp.dist[i * L + j] = dist[leaves[j]], lp.count[i * L + j] = cnt[leaves[j]];
    }
    return lp;
}

std::string host_text(const Fabric& f, const Analysis& a, std::pair<NodeId, int> h) {
    return display_name(f, a, h.first) + "/" + std::to_string(h.second);
}

Fabric without(const Fabric& f, const std::vector<ImpactTarget>& targets) {
    Fabric g = f;
    for (const ImpactTarget& t : targets) {
        const Node& n = g.node(t.node);
        for (int p = t.port ? t.port : 1; p <= (t.port ? t.port : n.num_ports()); ++p)
            if (const Port* pt = g.node(t.node).port(p); pt && pt->linked()) g.disconnect(t.node, p);
    }
    return g;
}

}  // namespace

bool parse_impact_target(const Fabric& f, const Analysis& a, std::string_view what, ImpactTarget& out, std::string& error) {
    std::string_view name = what;
    int port = 0;
    if (size_t slash = what.rfind('/'); slash != std::string_view::npos && slash + 1 < what.size()) {
        const std::string num(what.substr(slash + 1));
        if (num.find_first_not_of("0123456789") == std::string::npos && num.size() < 4)
            name = what.substr(0, slash), port = std::stoi(num);
    }
    NodeId id = kNoNode;
    if (auto g = name.size() > 6 ? parse_guid(name) : std::nullopt; g && f.find(*g)) id = *f.find(*g);
    for (NodeId n = 0; n < f.size() && id == kNoNode; ++n)
        if (display_name(f, a, n) == name) id = n;
    if (id == kNoNode) {
        error = "no node '" + std::string(name) + "' in the fabric";
        return false;
    }
    if (port && !f.node(id).port(port)) {
        error = display_name(f, a, id) + " has no port " + std::to_string(port);
        return false;
    }
    out = {id, port};
    return true;
}

std::string_view impact_assumption() {
    return "assumes the SM re-routes every pair over a shortest path of what is left (minimal up/down "
           "rerouting, as ftree, updn and minhop do on a fat-tree)";
}

Impact impact(const Fabric& f, const std::vector<ImpactTarget>& targets) {
    Impact im;
    const Analysis a = analyze(f);
    for (const ImpactTarget& t : targets)
        im.removed.push_back(display_name(f, a, t.node) + (t.port ? "/" + std::to_string(t.port) : ""));
    const Fabric g = without(f, targets);
    const Analysis b = analyze(g);
    std::vector<NodeId> leaves;
    for (const SwitchInfo& s : a.switches)
        if (s.node != kNoNode && s.hosts > 0) leaves.push_back(s.node);
    const LeafPaths before = leaf_paths(f, a, leaves), after = leaf_paths(g, a, leaves);
    const size_t L = leaves.size();
    // Host ports that lost their cable: cut off. The others by leaf pair.
    std::vector<std::vector<std::pair<NodeId, int>>> kept(L);
    for (size_t i = 0; i < L; ++i)
        for (auto h : before.hosts[i]) {
            const Port* p = g.node(h.first).port(h.second);
            if (p && p->linked()) kept[i].push_back(h);
            else im.hosts_cut_off.push_back(host_text(f, a, h));
        }
    long total = 0, alive = 0;
    for (size_t i = 0; i < L; ++i) total += static_cast<long>(before.hosts[i].size()), alive += static_cast<long>(kept[i].size());
    im.pairs = total * (total - 1) / 2;
    im.unreachable = im.pairs - alive * (alive - 1) / 2;  // every pair with a cut-off host
    for (size_t i = 0; i < L; ++i)
        for (size_t j = i + 1; j < L; ++j) {
            const long n = static_cast<long>(kept[i].size() * kept[j].size());
            if (n == 0) continue;
            const size_t k = i * L + j;
            const std::string sample = kept[i].empty() ? "" : host_text(f, a, kept[i][0]) + " -- " + host_text(f, a, kept[j][0]);
            if (after.dist[k] < 0) {
                im.unreachable += n;
                if (im.sample_unreachable.empty()) im.sample_unreachable = sample;
            } else if (after.dist[k] > before.dist[k]) {
                im.longer += n, im.fewer_paths += n;
                if (im.sample_fewer.empty()) im.sample_fewer = sample;
            } else if (after.count[k] < before.count[k]) {
                im.fewer_paths += n;
                if (im.sample_fewer.empty()) im.sample_fewer = sample;
            }
        }
    if (im.sample_unreachable.empty() && !im.hosts_cut_off.empty()) im.sample_unreachable = im.hosts_cut_off[0] + " -- any";
    for (size_t t = 0; t < a.tiers.size(); ++t) {
        ImpactTier it{a.tiers[t].level, a.tiers[t].name, a.tiers[t].oversub_max, 0, a.tiers[t].up_gbps, 0};
        if (t < b.tiers.size()) it.oversub_max_after = b.tiers[t].oversub_max, it.up_gbps_after = b.tiers[t].up_gbps;
        im.tiers.push_back(it);
    }
    im.bisection_before = a.bisection_gbps, im.bisection_after = b.bisection_gbps;
    return im;
}

nlohmann::json impact_json(const Impact& im) {
    nlohmann::json tiers = nlohmann::json::array();
    for (const ImpactTier& t : im.tiers)
        tiers.push_back({{"level", t.level}, {"name", t.name},
                         {"oversubscription_max", {{"before", t.oversub_max_before}, {"after", t.oversub_max_after}}},
                         {"up_gbps", {{"before", t.up_gbps_before}, {"after", t.up_gbps_after}}}});
    auto opt = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
    return {{"removed", im.removed},
            {"assumption", impact_assumption()},
            {"pairs", im.pairs},
            {"unreachable", im.unreachable},
            {"fewer_paths", im.fewer_paths},
            {"longer", im.longer},
            {"hosts_cut_off", im.hosts_cut_off},
            {"sample_unreachable", opt(im.sample_unreachable)},
            {"sample_fewer_paths", opt(im.sample_fewer)},
            {"tiers", std::move(tiers)},
            {"bisection_gbps", {{"before", im.bisection_before}, {"after", im.bisection_after}}}};
}

Impact impact_from_json(const nlohmann::json& j) {
    Impact im;
    auto opt = [](const nlohmann::json& v) { return v.is_null() ? std::string() : v.get<std::string>(); };
    im.removed = j.at("removed").get<std::vector<std::string>>();
    im.pairs = j.at("pairs").get<long>();
    im.unreachable = j.at("unreachable").get<long>();
    im.fewer_paths = j.at("fewer_paths").get<long>();
    im.longer = j.at("longer").get<long>();
    im.hosts_cut_off = j.at("hosts_cut_off").get<std::vector<std::string>>();
    im.sample_unreachable = opt(j.at("sample_unreachable"));
    im.sample_fewer = opt(j.at("sample_fewer_paths"));
    for (const nlohmann::json& t : j.at("tiers"))
        im.tiers.push_back({t.at("level").get<int>(), t.at("name").get<std::string>(),
                            t.at("oversubscription_max").at("before").get<double>(),
                            t.at("oversubscription_max").at("after").get<double>(), t.at("up_gbps").at("before").get<double>(),
                            t.at("up_gbps").at("after").get<double>()});
    im.bisection_before = j.at("bisection_gbps").at("before").get<double>();
    im.bisection_after = j.at("bisection_gbps").at("after").get<double>();
    return im;
}

std::string render_impact(const Impact& im) {
    std::string out = "without";
    for (const std::string& r : im.removed) out += " " + r;
    out += " (" + std::string(impact_assumption()) + "):\n";
    char line[256];
    std::snprintf(line, sizeof line, "  host pairs: %ld; unreachable %ld, fewer shortest paths %ld (of them longer %ld)\n",
                  im.pairs, im.unreachable, im.fewer_paths, im.longer);
    out += line;
    if (!im.sample_unreachable.empty()) out += "  e.g. unreachable: " + im.sample_unreachable + "\n";
    if (!im.sample_fewer.empty()) out += "  e.g. fewer paths: " + im.sample_fewer + "\n";
    if (!im.hosts_cut_off.empty()) out += "  hosts cut off: " + hostlist_compress(im.hosts_cut_off) + "\n";
    for (const ImpactTier& t : im.tiers) {
        if (t.up_gbps_before == 0 && t.up_gbps_after == 0) {
            out += "  " + t.name + " (top tier, no uplinks)\n";
            continue;
        }
        std::snprintf(line, sizeof line, "  %-6s up %.0f -> %.0f Gb/s, oversubscription up to %.2f:1 -> %.2f:1\n",
                      t.name.c_str(), t.up_gbps_before, t.up_gbps_after, t.oversub_max_before, t.oversub_max_after);
        out += line;
    }
    std::snprintf(line, sizeof line, "  bisection estimate %.0f -> %.0f Gb/s\n", im.bisection_before, im.bisection_after);
    return out + line;
}

}  // namespace ibf
