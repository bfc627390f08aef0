// Routing validation (route_check.h): one pass per destination LID collects pair verdicts,
// per-port pair counts and channel dependencies; findings are built from the groups at the end.
#include "ibf/route_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

namespace ibf {

namespace {

struct Group {
    long dests = 0, pairs = 0;
    size_t dest = 0;  // sample destination (index into dests())
    int src = -1;     // sample source switch
    int32_t hops = 0, shortest = 0;  // route_non_minimal sample
    size_t last = SIZE_MAX;          // the last destination counted in `dests`
    void add(size_t di, int s, long n) {
        if (pairs == 0) dest = di, src = s;
        if (last != di) ++dests, last = di;
        pairs += n;
    }
};

struct Flagged {
    DegradedLink link;
    NodeId peer = kNoNode;
    int peer_port = 0;
    long pairs = 0;
    bool sampled = false;
    size_t dest = 0;       // sample destination
    uint32_t channel = 0;  // the channel that carried it
};

std::string lid_text(uint32_t lid) { return "LID " + std::to_string(lid); }

class Validator {
public:
    Validator(const RouteGraph& g, const Analysis& a, const RouteCheckOptions& o)
        : g_(g), f_(g.fabric()), a_(a), o_(o), w_(g), through_(g.switches(), 0), from_routed_(g.switches(), 0),
          self_routed_(g.dests().size(), 0), flag_of_(g.channels(), -1) {
        r_.port_pairs.assign(g.channels(), 0);
        for (int s = 0; s < g.switches(); ++s)
            if (!g.cas_on(s).empty()) sources_.push_back(s);
        uint64_t bits = 0;
        for (int s = 0; s < g.switches(); ++s) {
            cdg_base_.push_back(bits);
            bits += static_cast<uint64_t>(g.ports(s) + 1) * static_cast<uint64_t>(g.ports(s) + 1);
        }
        if (o.credit_loops) cdg_.assign(bits / 64 + 1, 0);
        flag_links();
    }
    RouteCheck run();

private:
    void flag_links();
    void destination(size_t di);
    void classify(size_t di, int s, long n, int32_t v);
    int loop_key(int32_t end);
    void aggregate(size_t di);
    void bfs(int from);
    void credit_loop_findings();
    void report_credit_loop(const std::vector<uint32_t>& members, int32_t c, const std::vector<uint32_t>& start,
                            const std::vector<std::pair<uint32_t, uint32_t>>& edges, const std::vector<int32_t>& comp);
    std::string cycle_text(size_t di, int key);
    void group_findings();
    void degraded_findings();
    std::string sample_pair(size_t di, int src_sw) const;
    int sample_source(size_t di, uint32_t channel);
    std::string name(NodeId n) const { return display_name(f_, a_, n); }
    std::string sw_name(int s) const { return name(g_.node_of(s)); }
    std::string chan_text(int s, int p) const { return sw_name(s) + "/" + std::to_string(p); }

    const RouteGraph& g_;
    const Fabric& f_;
    const Analysis& a_;
    const RouteCheckOptions& o_;
    DestWalk w_;
    RouteCheck r_;
    std::vector<int> sources_;
    std::vector<long> through_, from_routed_;
    std::vector<uint8_t> self_routed_;
    std::vector<std::vector<int32_t>> by_hops_;
    std::vector<std::vector<int16_t>> dist_of_;  // per destination switch (filled on first use)
    const int16_t* dist_ = nullptr;
    std::vector<int32_t> queue_;
    std::vector<uint64_t> cdg_base_, cdg_;
    std::vector<int32_t> flag_of_;
    std::vector<Flagged> flagged_;
    std::map<std::pair<int, int32_t>, Group> unreachable_;  // (switch, verdict)
    std::map<int, Group> loops_;                             // by the lowest switch on the cycle
    std::map<int, Group> detours_;                           // by source switch
    std::unordered_map<int32_t, int> loop_keys_;             // per destination: end -> key
};

void Validator::flag_links() {
    for (const DegradedLink& d : o_.degraded) {
        const Port* p = d.node < f_.size() ? f_.node(d.node).port(d.port) : nullptr;
        if (!p || !p->linked()) continue;
        Flagged fl{d, p->peer, p->peer_port};
        const int idx = static_cast<int>(flagged_.size());
        bool any = false;
        for (auto [n, port] : {std::pair<NodeId, int>{d.node, d.port}, {p->peer, p->peer_port}})
            if (int s = g_.sw_of(n); s >= 0 && flag_of_[g_.channel(s, port)] < 0) {
                flag_of_[g_.channel(s, port)] = idx;
                any = true;
            }
        if (any) flagged_.push_back(std::move(fl));
    }
}

RouteCheck Validator::run() {
    const std::vector<RouteDest>& ds = g_.dests();
    for (size_t di = 0; di < ds.size(); ++di) {  // in LID order: DestWalk's table blocks load once
        if (ds[di].sw < 0) continue;  // a CA cabled to a CA or router: no switch route reaches it
        if (o_.non_minimal) bfs(ds[di].sw);
        destination(di);
    }
    if (o_.credit_loops) credit_loop_findings();
    group_findings();
    degraded_findings();
    std::stable_sort(r_.findings.begin(), r_.findings.end(), [](const Finding& x, const Finding& y) {
        return x.kind != y.kind ? x.kind < y.kind : x.a.name < y.a.name;
    });
    return std::move(r_);
}

void Validator::destination(size_t di) {
    const RouteDest& d = g_.dests()[di];
    w_.reset(d);
    loop_keys_.clear();
    for (int s : sources_) {
        const long n = static_cast<long>(g_.cas_on(s).size()) - (s == d.sw ? 1 : 0);
        if (n <= 0) continue;
        const int32_t v = w_.verdict(s);
        classify(di, s, n, v);
        if (v >= 0) {
            through_[s] += n;
            ++from_routed_[s];
        }
    }
    // The destination's own port is no source; its switch-mates counted it in from_routed_ only
    // when the switch had other sources.
    if (g_.cas_on(d.sw).size() > 1 && w_.verdict(d.sw) >= 0) self_routed_[di] = 1;
    aggregate(di);
}

void Validator::classify(size_t di, int s, long n, int32_t v) {
    r_.pairs += n;
    if (v >= 0) {
        r_.routed += n;
        const int cables = v + 1;
        r_.max_hops = std::max(r_.max_hops, cables);
        if (static_cast<size_t>(cables) >= r_.hop_histogram.size()) r_.hop_histogram.resize(cables + 1, 0);
        r_.hop_histogram[cables] += n;
        if (o_.non_minimal && dist_[s] >= 0 && v > dist_[s] + 1) {
            r_.non_minimal += n;
            Group& gr = detours_[s];
            if (gr.pairs == 0) gr.hops = cables, gr.shortest = dist_[s] + 2;
            gr.add(di, s, n);
        }
        return;
    }
    if (v == kRouteNoTable) {
        r_.unverified += n;
        return;
    }
    Group& gr = v == kRouteLoop ? loops_[loop_key(w_.broke_at(s))] : unreachable_[{w_.broke_at(s), v}];
    (v == kRouteLoop ? r_.looping : r_.unreachable) += n;
    gr.add(di, s, n);
}

// The lowest switch number on the forwarding cycle through `end`.
int Validator::loop_key(int32_t end) {
    if (auto it = loop_keys_.find(end); it != loop_keys_.end()) return it->second;
    int key = end;
    for (int32_t t = w_.next(end), n = 0; t >= 0 && t != end && n < g_.switches(); t = w_.next(t), ++n) key = std::min(key, t);
    loop_keys_[end] = key;
    return key;
}

// Pairs through each switch, farthest switches first: per-port counts, channel dependencies.
void Validator::aggregate(size_t di) {
    for (int32_t s : w_.settled()) {
        const int32_t v = w_.verdict(s);
        if (v < 1) continue;
        if (static_cast<size_t>(v) >= by_hops_.size()) by_hops_.resize(v + 1);
        by_hops_[v].push_back(s);
    }
    for (size_t v = by_hops_.size(); v-- > 1;) {
        for (int32_t t : by_hops_[v]) {
            const long n = through_[t];
            if (n == 0) continue;
            const uint8_t p = w_.port(t);
            const uint32_t ch = g_.channel(t, p);
            r_.port_pairs[ch] += n;
            if (int fi = flag_of_[ch]; fi >= 0 && !flagged_[fi].sampled)
                flagged_[fi].sampled = true, flagged_[fi].dest = di, flagged_[fi].channel = ch;
            if (v < 2) continue;
            const int32_t u = w_.hop(t);
            through_[u] += n;
            if (!cdg_.empty() && w_.verdict(u) >= 2) {
                const uint64_t side = static_cast<uint64_t>(g_.ports(u) + 1);
                const uint64_t bit = cdg_base_[u] + g_.hop_port(t, p) * side + w_.port(u);
                cdg_[bit / 64] |= uint64_t{1} << (bit % 64);
            }
        }
        by_hops_[v].clear();
    }
    for (int32_t s : w_.settled()) through_[s] = 0;
}

// Switch hops from every switch to `from`, computed once per destination switch and kept.
void Validator::bfs(int from) {
    if (dist_of_.empty()) dist_of_.resize(g_.switches());
    std::vector<int16_t>& d = dist_of_[from];
    if (d.empty()) {
        d.assign(g_.switches(), -1);
        queue_.assign(1, from);
        d[from] = 0;
        for (size_t i = 0; i < queue_.size(); ++i) {
            const int s = queue_[i];
            for (int p = 1; p <= g_.ports(s); ++p)
                if (int32_t t = g_.hop(s, p); t >= 0 && d[t] < 0) {
                    d[t] = static_cast<int16_t>(d[s] + 1);
                    queue_.push_back(t);
                }
        }
    }
    dist_ = d.data();
}

std::string Validator::sample_pair(size_t di, int src_sw) const {
    const RouteDest& d = g_.dests()[di];
    std::string src = "?";
    for (auto [n, p] : g_.cas_on(src_sw))
        if (n != d.node || p != d.port) {
            src = name(n) + "/" + std::to_string(p);
            break;
        }
    return src + " -> " + name(d.node) + "/" + std::to_string(d.port) + " (" + lid_text(d.lid) + ")";
}

// The source switch of one routed pair of destination `di` whose route leaves through `channel`.
int Validator::sample_source(size_t di, uint32_t channel) {
    const RouteDest& d = g_.dests()[di];
    w_.reset(d);
    for (int s : sources_) {
        if (w_.verdict(s) < 0 || static_cast<long>(g_.cas_on(s).size()) - (s == d.sw ? 1 : 0) <= 0) continue;
        for (int32_t t = s, n = 0; t >= 0 && n <= g_.switches(); t = w_.next(t), ++n) {
            if (g_.channel(t, w_.port(t)) == channel) return s;
            if (w_.verdict(t) < 2) break;
        }
    }
    return -1;
}

void Validator::credit_loop_findings() {
    const uint32_t nch = g_.channels();
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    for (int u = 0; u < g_.switches(); ++u) {
        const uint64_t side = static_cast<uint64_t>(g_.ports(u) + 1);
        for (int in = 1; in <= g_.ports(u); ++in) {
            const int32_t t = g_.hop(u, in);
            if (t < 0) continue;
            const uint32_t from = g_.channel(t, g_.hop_port(u, in));
            for (int out = 1; out <= g_.ports(u); ++out) {
                const uint64_t bit = cdg_base_[u] + in * side + out;
                if (cdg_[bit / 64] >> (bit % 64) & 1) edges.push_back({from, g_.channel(u, out)});
            }
        }
    }
    std::sort(edges.begin(), edges.end());
    std::vector<uint32_t> start(nch + 1, 0);
    for (auto& e : edges) ++start[e.first + 1];
    for (uint32_t i = 0; i < nch; ++i) start[i + 1] += start[i];
    // Tarjan's strongly connected components, iteratively.
    std::vector<int32_t> index(nch, -1), low(nch, 0), comp(nch, -1);
    std::vector<uint8_t> on(nch, 0);
    std::vector<uint32_t> stack;
    std::vector<std::pair<uint32_t, uint32_t>> call;  // (channel, next edge)
    int32_t counter = 0, comps = 0;
    for (uint32_t root = 0; root < nch; ++root) {
        if (index[root] >= 0 || start[root] == start[root + 1]) continue;
        auto enter = [&](uint32_t v) {
            index[v] = low[v] = counter++;
            stack.push_back(v), on[v] = 1;
            call.push_back({v, start[v]});
        };
        enter(root);
        while (!call.empty()) {
            auto [v, e] = call.back();
            if (e < start[v + 1]) {
                ++call.back().second;
                const uint32_t w = edges[e].second;
                if (index[w] < 0) enter(w);
                else if (on[w]) low[v] = std::min(low[v], index[w]);
                continue;
            }
            call.pop_back();
            if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[v]);
            if (low[v] != index[v]) continue;
            std::vector<uint32_t> members;
            for (uint32_t m = UINT32_MAX; m != v;) {
                m = stack.back();
                stack.pop_back(), on[m] = 0, comp[m] = comps;
                members.push_back(m);
            }
            if (members.size() > 1) report_credit_loop(members, comps, start, edges, comp);
            ++comps;
        }
    }
}

void Validator::report_credit_loop(const std::vector<uint32_t>& members, int32_t c, const std::vector<uint32_t>& start,
                                   const std::vector<std::pair<uint32_t, uint32_t>>& edges, const std::vector<int32_t>& comp) {
    // One cycle inside the component: follow edges that stay in it until a channel repeats.
    std::vector<uint32_t> path;
    std::unordered_map<uint32_t, size_t> pos;
    uint32_t cur = *std::min_element(members.begin(), members.end());
    while (!pos.count(cur)) {
        pos[cur] = path.size();
        path.push_back(cur);
        for (uint32_t e = start[cur]; e < start[cur + 1]; ++e)
            if (comp[edges[e].second] == c) {
                cur = edges[e].second;
                break;
            }
    }
    path.erase(path.begin(), path.begin() + static_cast<long>(pos[cur]));
    ++r_.credit_loops;
    auto [s0, p0] = g_.channel_port(path[0]);
    const Port* pt = f_.node(g_.node_of(s0)).port(p0);
    Finding fd;
    fd.kind = FindingKind::credit_loop;
    fd.severity = default_severity(fd.kind);
    fd.a = {sw_name(s0), f_.node(g_.node_of(s0)).guid, p0};
    if (pt && pt->linked()) fd.b = {name(pt->peer), f_.node(pt->peer).guid, pt->peer_port};
    fd.expected = "no cycle in the channel dependency graph";
    fd.actual = "a cycle of " + std::to_string(path.size()) + " channels (" + std::to_string(members.size()) +
                " channels depend on each other)";
    std::string cyc;
    for (size_t i = 0; i < path.size() && i < 12; ++i) {
        auto [s, p] = g_.channel_port(path[i]);
        cyc += chan_text(s, p) + " -> ";
    }
    cyc += path.size() > 12 ? "... -> " + chan_text(s0, p0) : chan_text(s0, p0);
    fd.message = "credit loop (the routes can deadlock) over the switch egress ports " + cyc +
                 "; computed on VL0 only: SL2VL tables are not exported, so every route is taken to share one VL; "
                 "route with a deadlock-free engine (ftree or updn on a fat-tree, dfsssp elsewhere) or fix the "
                 "cabling that makes routes turn back up";
    r_.findings.push_back(std::move(fd));
}

// The forwarding cycle for destination `di` from its lowest switch `key` back to it.
std::string Validator::cycle_text(size_t di, int key) {
    w_.reset(g_.dests()[di]);
    std::string t = sw_name(key);
    for (int32_t s = w_.next(key), n = 0; s >= 0 && n < 12; s = w_.next(s), ++n) {
        t += " -> " + sw_name(s);
        if (s == key) break;
    }
    return t;
}

void Validator::group_findings() {
    const std::vector<RouteDest>& ds = g_.dests();
    auto base = [&](FindingKind k, int s, const Group& gr) {
        Finding fd;
        fd.kind = k;
        fd.severity = default_severity(k);
        fd.a = {sw_name(s), f_.node(g_.node_of(s)).guid, 0};
        const RouteDest& d = ds[gr.dest];
        fd.b = {name(d.node), f_.node(d.node).guid, d.port};
        return fd;
    };
    auto counts = [](const Group& gr) {
        return std::to_string(gr.dests) + " CA LID" + (gr.dests == 1 ? "" : "s") + ", " + std::to_string(gr.pairs) +
               " CA->CA pair" + (gr.pairs == 1 ? "" : "s");
    };
    for (const auto& [key, gr] : unreachable_) {
        auto [s, v] = key;
        Finding fd = base(FindingKind::route_unreachable, s, gr);
        const uint8_t p = g_.port(s, ds[gr.dest].lid);
        fd.expected = "a route to every CA";
        if (v == kRouteNoEntry) fd.actual = "no LFT entry (255)";
        else if (p == 0) fd.actual = "port 0 (the switch itself)";
        else if (g_.hop(s, p) == kHopCa) fd.actual = "port " + std::to_string(p) + " leads to another CA";
        else fd.actual = "port " + std::to_string(p) + " is not linked to a switch or the CA";
        if (v != kRouteNoEntry) fd.a.port = p;
        fd.message = "routes end at " + fd.a.name + " (" + fd.actual + ") for " + counts(gr) + ", e.g. " +
                     sample_pair(gr.dest, gr.src) +
                     "; these hosts cannot talk: check the OpenSM log for routing errors and that the destination's "
                     "links are up, then re-sweep";
        r_.findings.push_back(std::move(fd));
    }
    for (const auto& [s, gr] : loops_) {
        Finding fd = base(FindingKind::route_loop, s, gr);
        fd.expected = "routes that arrive";
        fd.actual = "loop " + cycle_text(gr.dest, s);
        fd.message = "forwarding " + fd.actual + " for " + counts(gr) + ", e.g. " + sample_pair(gr.dest, gr.src) +
                     "; the switches' tables disagree (changed by hand, or OpenSM stopped mid-update): re-sweep "
                     "OpenSM and check its log";
        r_.findings.push_back(std::move(fd));
    }
    for (const auto& [s, gr] : detours_) {
        Finding fd = base(FindingKind::route_non_minimal, s, gr);
        fd.expected = std::to_string(gr.shortest) + " cables";
        fd.actual = std::to_string(gr.hops) + " cables";
        fd.message = fd.a.name + " routes " + counts(gr) + " over more cables than the shortest path (e.g. " +
                     sample_pair(gr.dest, gr.src) + ": " + fd.actual + ", shortest " + fd.expected +
                     "); a missing link or the routing engine made the detour: see `ibfabric analyze` and "
                     "the engine's guid files";
        r_.findings.push_back(std::move(fd));
    }
}

void Validator::degraded_findings() {
    for (Flagged& fl : flagged_) {
        const NodeId ends[2] = {fl.link.node, fl.peer};
        const int ports[2] = {fl.link.port, fl.peer_port};
        long pairs = 0;
        for (int i = 0; i < 2; ++i) {
            if (int s = g_.sw_of(ends[i]); s >= 0) {
                pairs += r_.port_pairs[g_.channel(s, ports[i])];
                continue;
            }
            // A CA end: the pairs it sends (its switch's routed destinations, less its own LIDs).
            const int s = g_.sw_of(ends[1 - i]);
            if (s < 0) continue;
            long own = 0;
            for (size_t di = 0; di < g_.dests().size(); ++di)
                if (g_.dests()[di].node == ends[i] && g_.dests()[di].port == ports[i]) own += self_routed_[di];
            pairs += from_routed_[s] - own;
        }
        if (pairs <= 0) continue;
        Finding fd;
        fd.kind = FindingKind::route_via_degraded_link;
        fd.severity = default_severity(fd.kind);
        fd.a = {name(ends[0]), f_.node(ends[0]).guid, ports[0]};
        fd.b = {name(ends[1]), f_.node(ends[1]).guid, ports[1]};
        fd.expected = "no routes over a degraded link";
        fd.actual = std::to_string(pairs) + " CA->CA pairs";
        std::string sample;
        if (fl.sampled)
            if (int src = sample_source(fl.dest, fl.channel); src >= 0) sample = ", e.g. " + sample_pair(fl.dest, src);
        fd.message = std::to_string(pairs) + " CA->CA routes cross " + port_label(f_, ends[0], ports[0]) + " -- " +
                     port_label(f_, ends[1], ports[1]) + " (" + fl.link.why + ")" + sample +
                     "; fix the link, or disable its port so OpenSM routes around it";
        r_.findings.push_back(std::move(fd));
    }
}

}  // namespace

std::vector<DegradedLink> degraded_links(const Fabric& f, const std::vector<Finding>& findings) {
    std::vector<DegradedLink> out;
    std::map<std::pair<NodeId, int>, size_t> seen;  // by the link's lower end
    for (const Finding& fd : findings) {
        switch (fd.kind) {
            case FindingKind::rate_mismatch: case FindingKind::rate_below_capability: case FindingKind::rate_outlier:
            case FindingKind::link_flapping: case FindingKind::port_errors: break;
            default: continue;
        }
        const Endpoint* ends[2] = {&fd.a, &fd.b};
        for (const Endpoint* e : ends) {
            auto id = e->guid ? f.find(e->guid) : std::nullopt;
            const Port* p = id ? f.node(*id).port(e->port) : nullptr;
            if (!p || e->port == 0 || !p->linked()) continue;
            const auto key = std::min(std::pair<NodeId, int>{*id, e->port}, std::pair<NodeId, int>{p->peer, p->peer_port});
            const std::string why = (fd.actual.empty() ? "" : fd.actual + ", expected " + fd.expected + ": ") +
                                    std::string(to_string(fd.kind));
            if (auto it = seen.find(key); it != seen.end()) out[it->second].why += "; " + std::string(to_string(fd.kind));
            else seen[key] = out.size(), out.push_back({*id, e->port, why});
            break;
        }
    }
    return out;
}

namespace {
struct Hasher {
    uint64_t h = 0xcbf29ce484222325ULL;
    void add(uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; }
    void add(const std::string& s) { bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
    void bytes(const uint8_t* p, size_t n) {
        add(n);
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            std::memcpy(&w, p + i, 8);
            add(w);
        }
        for (; i < n; ++i) add(p[i]);
    }
};
}  // namespace

uint64_t route_inputs_hash(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const RouteCheckOptions& opt) {
    Hasher h;
    for (NodeId n = 0; n < f.size(); ++n) {
        const Node& node = f.node(n);
        h.add(node.guid), h.add(static_cast<uint64_t>(node.type)), h.add(display_name(f, a, n));
        for (const Port& p : node.ports)
            h.add(uint64_t{p.valid} | uint64_t{p.lid} << 8 | uint64_t{p.lmc} << 24 | uint64_t{p.peer} << 32), h.add(p.peer_port);
    }
    for (const SwitchLft& t : lfts) h.add(t.switch_guid), h.bytes(t.port_by_lid.data(), t.port_by_lid.size());
    for (const DegradedLink& d : opt.degraded) h.add(d.node), h.add(static_cast<uint64_t>(d.port)), h.add(d.why);
    h.add(uint64_t{opt.non_minimal} | uint64_t{opt.credit_loops} << 1);
    return h.h;
}

const RouteCheck& RouteCheckCache::check(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts,
                                         const RouteCheckOptions& opt) {
    const uint64_t key = route_inputs_hash(f, a, lfts, opt);
    cached_ = valid_ && key == key_;
    if (!cached_) {
        last_ = check_routes(RouteGraph(f, lfts), a, opt);
        key_ = key, valid_ = true;
    }
    return last_;
}

nlohmann::json route_check_json(const RouteCheck& rc) {
    return {{"pairs", rc.pairs},           {"routed", rc.routed},         {"unreachable", rc.unreachable},
            {"looping", rc.looping},       {"unverified", rc.unverified}, {"non_minimal", rc.non_minimal},
            {"max_hops", rc.max_hops},     {"hop_histogram", rc.hop_histogram}, {"credit_loops", rc.credit_loops},
            {"vl", "VL0 only (SL2VL tables are not exported)"}};
}

RouteCheck check_routes(const RouteGraph& g, const Analysis& a, const RouteCheckOptions& opt) {
    return Validator(g, a, opt).run();
}

}  // namespace ibf

