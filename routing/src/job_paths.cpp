// job_paths.h: the cables a job's host pairs cross and the all-to-all bound they allow.
#include "ibf/job_paths.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ibf/hostlist.h"

namespace ibf {

namespace {

std::string nm(const Fabric& f, const std::vector<std::string>& names, NodeId n) {
    return n < names.size() && !names[n].empty() ? names[n] : f.node(n).name;
}

const Port* first_linked(const Node& n) {
    for (const Port& p : n.ports)
        if (p.valid && p.num > 0 && p.linked() && p.lid) return &p;
    return nullptr;
}

// The sending ends (node, port) of the cables a trace crosses.
std::vector<std::pair<NodeId, int>> sends(const Fabric& f, const RouteTrace& t) {
    std::vector<std::pair<NodeId, int>> out;
    if (f.node(t.src).type != NodeType::Switch) out.push_back({t.src, t.src_port});
    for (const RouteHop& h : t.hops) out.push_back({h.node, h.out_port});
    return out;
}

}  // namespace

JobPaths job_paths(const RouteGraph& g, const std::vector<std::string>& names, const std::vector<NodeId>& hosts,
                   const LinkNotes& notes) {
    const Fabric& f = g.fabric();
    JobPaths j;
    std::vector<std::pair<NodeId, const Port*>> ends;
    for (NodeId h : hosts)
        if (const Port* p = first_linked(f.node(h))) ends.push_back({h, p});
    j.hosts = static_cast<int>(ends.size());
    std::map<std::pair<NodeId, int>, long> load;
    for (const auto& [s, sp] : ends)
        for (const auto& [d, dp] : ends) {
            if (s == d) continue;
            ++j.pairs;
            const RouteTrace t = trace_route(g, s, sp->num, dp->lid, names);
            if (!t.arrived) {
                ++j.unrouted;
                if (j.unrouted_samples.size() < 5) j.unrouted_samples.push_back(nm(f, names, s) + " -> " + nm(f, names, d) + ": " + t.why);
                continue;
            }
            for (auto e : sends(f, t)) ++load[e];
        }
    for (const auto& [e, n] : load) {
        const Port& p = f.node(e.first).ports[e.second];
        JobLink l{e.first, e.second, p.peer, p.peer_port, p.rate().gbps(), n, {}};
        if (auto it = notes.find(e); it != notes.end()) l.issues = it->second.issues;
        j.links.push_back(std::move(l));
    }
    std::sort(j.links.begin(), j.links.end(), [](const JobLink& a, const JobLink& b) {
        if (a.issues.empty() != b.issues.empty()) return !a.issues.empty();
        return a.pairs != b.pairs ? a.pairs > b.pairs : std::pair(a.node, a.port) < std::pair(b.node, b.port);
    });
    double worst = 0;
    for (size_t i = 0; i < j.links.size(); ++i) {
        const double share = j.links[i].gbps / static_cast<double>(j.links[i].pairs);
        if (j.links[i].gbps > 0 && (worst == 0 || share < worst)) worst = share, j.bottleneck = i;
    }
    if (worst > 0) j.all_to_all_gbps = worst * (j.hosts - 1);
    return j;
}

nlohmann::json job_paths_json(const Fabric& f, const std::vector<std::string>& names, const JobPaths& j) {
    nlohmann::json links = nlohmann::json::array();
    for (const JobLink& l : j.links)
        links.push_back({{"from", nm(f, names, l.node) + "/" + std::to_string(l.port)},
                         {"to", nm(f, names, l.peer) + "/" + std::to_string(l.peer_port)},
                         {"gbps", l.gbps},
                         {"pairs", l.pairs},
                         {"issues", l.issues}});
    return {{"hosts", j.hosts},
            {"pairs", j.pairs},
            {"unrouted", j.unrouted},
            {"unrouted_samples", j.unrouted_samples},
            {"all_to_all_gbps_per_host", j.all_to_all_gbps},
            {"bottleneck", j.links.empty() ? nlohmann::json(nullptr) : links[j.bottleneck]},
            {"links", std::move(links)}};
}

std::optional<std::vector<NodeId>> job_hosts(const Fabric& f, std::string_view hostlist, std::string& error) {
    std::vector<NodeId> hosts;
    try {
        for (const std::string& h : hostlist_expand(std::string(hostlist))) {
            NodeId id = kNoNode;
            for (NodeId n : f.find_by_name(h))
                if (f.node(n).type == NodeType::CA) id = n;
            if (id == kNoNode) {
                error = "no host '" + h + "' in the fabric";
                return std::nullopt;
            }
            hosts.push_back(id);
        }
    } catch (const std::exception& e) {
        error = e.what();
        return std::nullopt;
    }
    return hosts;
}

std::string render_job_paths(const nlohmann::json& j, size_t max_links) {
    char line[256];
    const nlohmann::json& links = j.at("links");
    std::snprintf(line, sizeof line, "%d hosts, %ld pairs (%ld do not arrive), %zu cables used\n", j.at("hosts").get<int>(),
                  j.at("pairs").get<long>(), j.at("unrouted").get<long>(), links.size());
    std::string out = line;
    for (const auto& s : j.at("unrouted_samples")) out += "  no route: " + s.get<std::string>() + "\n";
    if (const nlohmann::json& b = j.at("bottleneck"); !b.is_null()) {
        std::snprintf(line, sizeof line, "all-to-all bound: %.1f Gb/s per host (%s -> %s: %ld pairs over %.0f Gb/s)\n",
                      j.at("all_to_all_gbps_per_host").get<double>(), b.at("from").get<std::string>().c_str(),
                      b.at("to").get<std::string>().c_str(), b.at("pairs").get<long>(), b.at("gbps").get<double>());
        out += line;
    }
    for (size_t i = 0; i < links.size() && i < max_links; ++i) {
        const nlohmann::json& l = links[i];
        std::snprintf(line, sizeof line, "  %-22s -> %-22s %6.0f Gb/s %6ld pairs", l.at("from").get<std::string>().c_str(),
                      l.at("to").get<std::string>().c_str(), l.at("gbps").get<double>(), l.at("pairs").get<long>());
        out += line;
        for (const auto& is : l.at("issues")) out += "  [" + is.get<std::string>() + "]";
        out += "\n";
    }
    if (links.size() > max_links) out += "  ... " + std::to_string(links.size() - max_links) + " more (--json for all)\n";
    return out;
}

std::string render_job_paths(const Fabric& f, const std::vector<std::string>& names, const JobPaths& j, size_t max_links) {
    return render_job_paths(job_paths_json(f, names, j), max_links);
}

}  // namespace ibf
