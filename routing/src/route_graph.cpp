// RouteGraph (the tables as a compact graph) and DestWalk (every switch's route to one LID).
#include "ibf/route_graph.h"

#include <algorithm>

namespace ibf {

namespace {

// Every LID of a port: base .. base + 2^LMC - 1 (LMC capped at 7), below 65536.
template <class F>
void for_each_lid(const Port& p, F&& f) {
    const int count = 1 << std::min<int>(p.lmc, 7);
    for (int i = 0; i < count && p.lid + i < 65536; ++i) f(static_cast<uint32_t>(p.lid + i));
}
}  // namespace

RouteGraph::RouteGraph(const Fabric& f, const std::vector<SwitchLft>& lfts) : f_(&f), sw_of_(f.size(), -1) {
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::Switch) {
            sw_of_[n] = static_cast<int32_t>(nodes_.size());
            nodes_.push_back(n);
        }
    tables_.assign(nodes_.size(), nullptr);
    for (const SwitchLft& t : lfts)
        if (auto id = f.find(t.switch_guid); id && sw_of_[*id] >= 0 && !tables_[sw_of_[*id]])
            tables_[sw_of_[*id]] = &t;
    entries_.assign(nodes_.size(), {});
    for (size_t s = 0; s < nodes_.size(); ++s)
        if (tables_[s]) entries_[s] = tables_[s]->port_by_lid();
    base_.reserve(nodes_.size() + 1);
    cas_.resize(nodes_.size());
    uint32_t next = 0;
    for (size_t s = 0; s < nodes_.size(); ++s) {
        base_.push_back(next);
        const Node& node = f.node(nodes_[s]);
        for (int p = 0; p <= node.num_ports(); ++p) {
            const Port* pt = p > 0 ? node.port(p) : nullptr;
            int32_t to = kHopDead;
            if (pt && pt->linked()) {
                const NodeType t = f.node(pt->peer).type;
                to = t == NodeType::Switch ? sw_of_[pt->peer] : t == NodeType::CA ? kHopCa : kHopDead;
                if (t == NodeType::CA) cas_[s].push_back({pt->peer, pt->peer_port});
            }
            hop_.push_back(to);
            far_port_.push_back(pt && pt->linked() ? pt->peer_port : 0);
        }
        next += static_cast<uint32_t>(node.num_ports() + 1);
    }
    base_.push_back(next);
    std::vector<int32_t> seen(nodes_.size(), -1);
    adj_start_.reserve(nodes_.size() + 1);
    for (size_t s = 0; s < nodes_.size(); ++s) {
        adj_start_.push_back(static_cast<uint32_t>(adj_.size()));
        for (uint32_t c = base_[s] + 1; c < base_[s + 1]; ++c)
            if (const int32_t t = hop_[c]; t >= 0 && seen[t] != static_cast<int32_t>(s)) seen[t] = static_cast<int32_t>(s), adj_.push_back(t);
    }
    adj_start_.push_back(static_cast<uint32_t>(adj_.size()));
    for (NodeId n = 0; n < f.size(); ++n) {
        const Node& node = f.node(n);
        if (node.type == NodeType::Switch) {
            if (const Port* p0 = node.port(0); p0 && p0->lid)
                for_each_lid(*p0, [&](uint32_t lid) { owners_.push_back({lid, {n, 0}}); });
            continue;
        }
        if (node.type != NodeType::CA) continue;
        for (const Port& p : node.ports) {
            if (!p.valid || p.lid == 0) continue;
            for_each_lid(p, [&](uint32_t lid) { owners_.push_back({lid, {n, p.num}}); });
            if (!p.linked()) continue;
            const int32_t sw = f.node(p.peer).type == NodeType::Switch ? sw_of_[p.peer] : -1;
            for_each_lid(p, [&](uint32_t lid) { dests_.push_back({lid, n, p.num, sw, sw >= 0 ? p.peer_port : uint8_t{0}}); });
        }
    }
    std::sort(owners_.begin(), owners_.end());
    std::stable_sort(dests_.begin(), dests_.end(), [](const RouteDest& a, const RouteDest& b) { return a.lid < b.lid; });
}

std::optional<std::pair<NodeId, int>> RouteGraph::owner(uint32_t lid) const {
    auto it = std::lower_bound(owners_.begin(), owners_.end(), lid, [](const auto& e, uint32_t l) { return e.first < l; });
    if (it == owners_.end() || it->first != lid) return std::nullopt;
    return it->second;
}

std::pair<int, int> RouteGraph::channel_port(uint32_t ch) const {
    const int s = static_cast<int>(std::upper_bound(base_.begin(), base_.end(), ch) - base_.begin()) - 1;
    return {s, static_cast<int>(ch - base_[s])};
}

size_t RouteGraph::breadth_first(int from, std::span<int16_t> dist, std::vector<int32_t>& order) const {
    // Over the switch neighbours alone (no CA ports, parallel cables once), without a branch on
    // whether a neighbour is new (half are, at random): each switch enters the queue once, one
    // spare cell takes the writes that do not count.
    std::fill(dist.begin(), dist.end(), int16_t{-1});
    order.resize(nodes_.size() + 1);
    int32_t* queue = order.data();
    const int32_t* adj = adj_.data();
    size_t tail = 0;
    queue[tail++] = from;
    dist[from] = 0;
    for (size_t i = 0; i < tail; ++i) {
        const int s = queue[i];
        const int16_t next = static_cast<int16_t>(dist[s] + 1);
        for (uint32_t e = adj_start_[s], last = adj_start_[s + 1]; e < last; ++e) {
            const int32_t t = adj[e];
            const int16_t was = dist[t];
            dist[t] = was < 0 ? next : was;
            queue[tail] = t;
            tail += was < 0;
        }
    }
    order.resize(tail);
    return tail;
}

DestWalk::DestWalk(const RouteGraph& g, uint32_t block)
    : g_(g), block_size_(std::clamp<uint32_t>(block, 1, kMaxBlock)), memo_(g.switches()), end_(g.switches(), -1) {}

void DestWalk::load_block(uint32_t first) {
    const int n = g_.switches();
    const uint32_t block = block_size_;
    const size_t cells = static_cast<size_t>(n) * block;
    const bool narrow = n < kNarrow;
    if (block_.size() != cells) {
        block_.assign(cells, kLftNoPath);
        if (narrow) hops_.assign(cells, kCodeDead);
    }
    uint8_t* out = block_.data();
    uint16_t* hout = hops_.data();
    // Each switch's line is in a table of its own (no hardware prefetch across them): ask for the
    // lines a few switches ahead, so that their misses overlap.
    constexpr int kAhead = 16;
    auto line = [&](int sw) -> const uint8_t* {
        const std::span<const uint8_t> e = g_.entries(sw);
        return first < e.size() ? e.data() + first : nullptr;
    };
    for (int sw = 0; sw < std::min(n, kAhead); ++sw)
        if (const uint8_t* in = line(sw)) __builtin_prefetch(in);
    for (int sw = 0; sw < n; ++sw) {  // one switch's table line and port row at a time
        if (sw + kAhead < n)
            if (const uint8_t* ahead = line(sw + kAhead)) __builtin_prefetch(ahead);
        const std::span<const uint8_t> e = g_.entries(sw);
        const size_t have = first < e.size() ? std::min<size_t>(block, e.size() - first) : 0;
        const uint8_t* in = have ? e.data() + first : nullptr;
        for (uint32_t j = 0; j < block; ++j) out[j * n + sw] = j < have ? in[j] : kLftNoPath;
        if (!narrow) continue;
        const int32_t* row = g_.hop_row(sw);
        const int ports = g_.ports(sw);
        const bool table = g_.has_table(sw);
        for (uint32_t j = 0; j < block; ++j) {
            const uint8_t p = out[j * n + sw];
            uint16_t c = !table ? kCodeNoTable : p == kLftNoPath ? kCodeNoEntry : kCodeDead;
            if (table && p != kLftNoPath && p <= ports) {  // row[0] is kHopDead
                const int32_t h = row[p];
                c = h >= 0 ? static_cast<uint16_t>(h) : h == kHopCa ? kCodeCa : kCodeDead;
            }
            hout[j * n + sw] = c;
        }
    }
    block_first_ = first;
}

void DestWalk::reset(const RouteDest& d) {
    d_ = d;
    const uint32_t first = d.lid / block_size_ * block_size_;
    if (first != block_first_) load_block(first);
    row_ = block_.data() + static_cast<size_t>(d.lid - first) * g_.switches();
    settled_.clear();
    if (++gen_ == 0) {  // wrapped: every stamp could look current
        for (Memo& m : memo_) m.stamp = 0;
        gen_ = 1;
    }
}

void DestWalk::settle(std::span<const uint16_t> order, TableRoutes* routes) {
    if (routes) *routes = {};
    if (hops_.empty() || d_.sw < 0) return;
    verdict(d_.sw);  // the one switch a CA entry can arrive from; stamped, so passed over below
    const uint16_t* code = hops_.data() + (row_ - block_.data());
    Memo* memo = memo_.data();
    int32_t* end = end_.data();
    const uint32_t gen = gen_;
    // table_route() of a switch settled with verdict v (its code c): counted in `lane`.
    uint32_t long_routes = 0;
    auto count = [&](size_t lane, uint16_t c, int32_t v) {
        if (c == kCodeNoTable) return;  // no table: not one of the switches counted
        if (c == kCodeNoEntry) ++routes->unrouted;
        else if (v >= TableRoutes::kHops) ++long_routes;
        else if (v >= 0) ++routes->routed[lane][v];
        else if (v != kRouteNoTable) ++routes->broken;
    };
    if (routes)
        for (const int32_t s : settled_) count(0, code[s], memo[s].verdict);
    size_t lane = 0;
    for (const uint16_t s : order) {
        if (memo[s].stamp == gen) continue;
        const uint16_t c = code[s];
        int32_t v = kRouteDeadEnd, e = s;  // a CA (not the destination's) or a dead port
        if (c < kCodeNoTable) {
            const Memo m = memo[c];  // never kOnWalk: no walk is under way
            if (m.stamp != gen) continue;  // its next switch comes later: walked on demand
            v = m.verdict >= 0 ? m.verdict + 1 : m.verdict, e = end[c];
        } else if (c == kCodeNoTable) {
            v = kRouteNoTable;
        } else if (c == kCodeNoEntry) {
            v = kRouteNoEntry;
        }
        memo[s] = {gen, v}, end[s] = e;
        settled_.push_back(s);
        if (routes) count(++lane % TableRoutes::kLanes, c, v);
    }
    if (routes) routes->complete = settled_.size() == static_cast<size_t>(g_.switches()) && long_routes == 0;
}

int32_t DestWalk::next(int sw) const {
    const int32_t h = hop(sw);
    return h >= 0 ? h : -1;
}

int32_t DestWalk::walk(int sw) {
    // Follow the tables from sw until a settled switch, the destination or a break.
    walk_.clear();
    int32_t cur = sw, verdict = 0, end = -1;
    for (;;) {
        if (const Memo m = memo_[cur]; m.stamp == gen_) {
            if (m.verdict == kOnWalk) verdict = kRouteLoop, end = cur;
            else verdict = m.verdict, end = end_[cur];
            break;
        }
        if (!g_.has_table(cur)) {
            verdict = kRouteNoTable, end = cur;
            memo_[cur] = {gen_, verdict}, end_[cur] = cur;
            settled_.push_back(cur);
            break;
        }
        memo_[cur] = {gen_, kOnWalk};
        walk_.push_back(cur);
        const uint8_t p = row_[cur];
        if (p == kLftNoPath) {
            verdict = kRouteNoEntry, end = cur;
            break;
        }
        if (cur == d_.sw && p == d_.sw_port) {
            verdict = 0;  // the next "switch" is the host itself: cur is 1 cable away
            break;
        }
        const int32_t h = hop(cur);
        if (h < 0) {
            verdict = kRouteDeadEnd, end = cur;
            break;
        }
        cur = h;
    }
    // Unwind: each switch on the walk is one cable further than the next one. Settled from the
    // far end back, so that settled() lists every switch after the ones its route passes.
    for (size_t i = walk_.size(); i-- > 0;) {
        if (verdict >= 0) ++verdict;
        memo_[walk_[i]].verdict = verdict;
        end_[walk_[i]] = end;
        settled_.push_back(walk_[i]);
    }
    return memo_[sw].verdict;
}

RouteTrace trace_route(const RouteGraph& g, NodeId src, int src_port, uint32_t lid, const std::vector<std::string>& names) {
    const Fabric& f = g.fabric();
    RouteTrace t;
    t.src = src, t.src_port = src_port, t.lid = lid;
    if (auto o = g.owner(lid)) t.dst = o->first, t.dst_port = o->second;
    auto nm = [&](NodeId n) { return n < names.size() ? names[n] : f.node(n).name; };
    const std::string lid_s = "LID " + std::to_string(lid);
    int sw = g.sw_of(src), in = 0;
    if (sw < 0) {
        const Port* p = f.node(src).port(src_port);
        if (!p || !p->linked()) return t.why = nm(src) + "/" + std::to_string(src_port) + " is not linked", t;
        if (p->peer == t.dst && p->peer_port == t.dst_port) return t.arrived = true, t;
        sw = g.sw_of(p->peer), in = p->peer_port;
        if (sw < 0) return t.why = nm(src) + " is not cabled to a switch", t;
    }
    std::vector<uint8_t> seen(g.switches(), 0);
    for (;;) {
        const NodeId n = g.node_of(sw);
        const uint8_t out = g.port(sw, lid);
        t.hops.push_back({n, in, out});
        if (seen[sw]++) return t.why = "a forwarding loop back to " + nm(n), t;
        if (!g.has_table(sw)) return t.why = nm(n) + " has no forwarding table here", t;
        if (out == kLftNoPath) return t.why = nm(n) + " has no LFT entry for " + lid_s, t;
        if (out == 0) {
            t.arrived = t.dst == n;
            if (!t.arrived) t.why = nm(n) + " sends " + lid_s + " to itself (port 0)";
            return t;
        }
        const Port* p = f.node(n).port(out);
        if (!p || !p->linked()) return t.why = nm(n) + "/" + std::to_string(out) + " is not linked", t;
        if (p->peer == t.dst && p->peer_port == t.dst_port) return t.arrived = true, t;
        if (g.sw_of(p->peer) < 0) return t.why = nm(n) + "/" + std::to_string(out) + " leads to " + nm(p->peer) + ", not to " + lid_s, t;
        sw = g.sw_of(p->peer), in = p->peer_port;
    }
}


}  // namespace ibf
