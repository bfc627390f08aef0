// Routing validation (route_check.h): one pass per destination LID collects pair verdicts,
// per-port pair counts and channel dependencies; findings are built from the groups at the end.
#include "ibf/route_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <thread>
#include <unordered_map>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace ibf {

namespace {

// One destination's share of a finding group: its pairs and the first source switch (in source
// order) that had one; for route_non_minimal the cables of that route and the shortest.
struct DestPart {
    long pairs = 0;
    int src = -1;
    int32_t hops = 0, shortest = 0;
};
// A finding group by destination index: the sample is the first destination (as a full pass in
// LID order finds it), and a destination walked again replaces its share.
using Group = std::map<size_t, DestPart>;

long group_pairs(const Group& g) {
    long n = 0;
    for (const auto& [di, part] : g) n += part.pairs;
    return n;
}

// An allocator for the counters that one destination touches a line of per switch, all over
// tens of MB (the dependency counters: 32 MB at 48k LIDs): 2 MiB-aligned with transparent huge
// pages asked for, so that those touches do not each miss the TLB as well. Small arrays: the
// usual allocator.
template <class T>
struct LargeAlloc {
    using value_type = T;
    static constexpr size_t kHuge = size_t{2} << 20;
    LargeAlloc() = default;
    template <class U>
    LargeAlloc(const LargeAlloc<U>&) {}
    static bool large(size_t n) { return n * sizeof(T) >= 2 * kHuge; }
    T* allocate(size_t n) {
        if (!large(n)) return std::allocator<T>().allocate(n);
        const size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
        void* p = std::aligned_alloc(kHuge, bytes);
        if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without it (or THP off) the same, slower
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, size_t n) {
        if (large(n)) std::free(p);
        else std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const LargeAlloc<U>&) const { return true; }
};

}  // namespace

// Everything the findings are made of, as sums over destinations, so that a destination walked
// again can take its share out and put the new one in (RouteCheckCache). Fresh: a full pass.
struct RouteCheckCache::State {
    long pairs = 0, routed = 0, unreachable = 0, looping = 0, unverified = 0, non_minimal = 0;
    std::vector<long> hop_histogram;       // trailing zeros trimmed when the result is made
    // RouteCheckOptions::switch_routes: (switch with a table, CA LID) routes, as lft_paths counts them.
    long sw_routes = 0, sw_unrouted = 0, sw_broken = 0;
    std::vector<long> sw_hops;             // index = cables from the switch to the CA
    std::vector<long> port_pairs;          // per channel
    std::vector<long> from_routed;         // per switch: destinations its CAs reach
    std::vector<uint8_t> self_routed;      // per destination
    std::map<std::pair<int, int32_t>, Group> unreachable_g;  // (switch, verdict)
    std::map<int, Group> loops;                              // by the lowest switch on the cycle
    std::map<int, Group> detours;                            // by source switch
    // Channel dependencies: per switch u, (ports+1)^2 counters of destinations routed in at one
    // port and out at another (at most one per destination: fits 16 bits below 65536 LIDs),
    // out-port major: a destination leaves u by one port, so its counters at u share a row.
    std::vector<uint64_t> cdg_base;
    std::vector<uint16_t, LargeAlloc<uint16_t>> cdg;
    bool saturated = false;                // a counter hit 65535 (duplicate LIDs): no increments
    // Per flagged link (Validator::flagged_ order), per destination: 0, or 1 + which end's channel
    // its routes crossed first.
    std::vector<std::vector<uint8_t>> crossing;
    // Per destination switch, filled on first use: the cables from every switch (non_minimal),
    // and the switches in breadth-first order from it (DestWalk::settle; empty when the graph is
    // too wide for it).
    std::vector<std::vector<int16_t>> dist_of;
    std::vector<std::vector<uint16_t>> order_of;
    // The tables this state was made from (per switch with a table), for the next check: the
    // snapshot's own SwitchLfts, their bytes shared with it (snapshot.h), not a copy.
    std::vector<SwitchLft> tables;
    std::vector<int32_t> table_of;         // per switch: index into tables, -1 = none
    uint64_t topology = 0;                 // route_inputs_hash without the tables
    RouteCheck last;
};

namespace {

struct Flagged {
    DegradedLink link;
    NodeId peer = kNoNode;
    int peer_port = 0;
    uint32_t chan[2] = {UINT32_MAX, UINT32_MAX};  // its channels (switch ends), first-flagged order
};

std::string lid_text(uint32_t lid) { return "LID " + std::to_string(lid); }

using State = RouteCheckCache::State;

// One destination's counts by hop count, kept in registers and the stack while its sources or
// switches are gone through, then added to the state's histogram once (instead of a
// read-modify-write of the state per source or switch).
struct Sums {
    static constexpr int32_t kHops = 64;
    long by_hops[kHops] = {};
    long total = 0;
    int32_t top = -1;
    // false: `hops` is kHops or more (the caller counts it itself).
    bool add(int32_t hops, long n) {
        if (hops >= kHops) return false;
        by_hops[hops] += n;
        top = std::max(top, hops);
        return true;
    }
    void into(std::vector<long>& histogram, int sign) const {
        if (top < 0) return;
        if (static_cast<size_t>(top) >= histogram.size()) histogram.resize(top + 1, 0);
        for (int32_t h = 0; h <= top; ++h) histogram[h] += sign * by_hops[h];
    }
};

class Validator {
public:
    // `block`: DestWalk's (1 for a few scattered destinations).
    Validator(const RouteGraph& g, const Analysis& a, const RouteCheckOptions& o, State& st,
              uint32_t block = DestWalk::kMaxBlock)
        : g_(g), f_(g.fabric()), a_(a), o_(o), st_(st), w_(g, block), through_(g.switches(), 0), flag_of_(g.channels(), -1),
          pending_(static_cast<size_t>(g.switches()) * w_.block_size(), 0), pending_dest_(w_.block_size(), kNoDest) {
        uint64_t ca_ports = 0;
        for (int s = 0; s < g.switches(); ++s) {
            if (!g.cas_on(s).empty()) sources_.push_back(s), source_cas_.push_back(static_cast<long>(g.cas_on(s).size()));
            if (g.has_table(s)) tabled_.push_back(s);
            ca_ports += g.cas_on(s).size();
        }
        if (ca_ports >= kDependency) throw std::length_error("route validation: 2^31 CA ports or more");
        flag_links();
        if (!st_.port_pairs.empty()) return;  // kept from an earlier pass over the same fabric
        st_.port_pairs.assign(g.channels(), 0);
        st_.from_routed.assign(g.switches(), 0);
        st_.self_routed.assign(g.dests().size(), 0);
        uint64_t cells = 0;
        for (int s = 0; s < g.switches(); ++s) {
            st_.cdg_base.push_back(cells);
            cells += static_cast<uint64_t>(g.ports(s) + 1) * static_cast<uint64_t>(g.ports(s) + 1);
        }
        if (o.credit_loops) st_.cdg.assign(cells, 0);
        st_.crossing.assign(flagged_.size(), std::vector<uint8_t>(g.dests().size(), 0));
    }
    // Every destination, in LID order (DestWalk's table blocks load once).
    void all() {
        for (size_t di = 0; di < g_.dests().size(); ++di) destination(di, +1);
    }
    ~Validator() { flush(); }
    // Destination di's share: +1 adds it, -1 takes out what the same tables added.
    void destination(size_t di, int sign);
    RouteCheck result();

private:
    void flag_links();
    void classify(size_t di, int s, long n, int32_t v, int sign);
    int loop_key(int32_t end);
    void aggregate(size_t di, int sign);
    void flush();
    void switch_routes(int sign, const DestWalk::TableRoutes* settled = nullptr);
    void bfs(int from);
    void credit_loop_findings(RouteCheck& r);
    void report_credit_loop(RouteCheck& r, const std::vector<uint32_t>& members, int32_t c, const std::vector<uint32_t>& start,
                            const std::vector<std::pair<uint32_t, uint32_t>>& edges, const std::vector<int32_t>& comp);
    std::string cycle_text(size_t di, int key);
    void group_findings(RouteCheck& r);
    void degraded_findings(RouteCheck& r);
    std::string sample_pair(size_t di, int src_sw) const;
    int sample_source(size_t di, uint32_t channel);
    std::string name(NodeId n) const { return display_name(f_, a_, n); }
    std::string sw_name(int s) const { return name(g_.node_of(s)); }
    std::string chan_text(int s, int p) const { return sw_name(s) + "/" + std::to_string(p); }

    const RouteGraph& g_;
    const Fabric& f_;
    const Analysis& a_;
    const RouteCheckOptions& o_;
    State& st_;
    DestWalk w_;
    std::vector<int> sources_;
    std::vector<long> source_cas_;  // per source: its CA ports (cas_on(s).size(), read per destination)
    std::vector<int> tabled_;  // the switches with a table
    uint32_t calls_ = 0;       // destination() calls: every 64th looks at RouteCheckOptions::cancel
    std::vector<long> through_;
    const int16_t* dist_ = nullptr;
    std::vector<int32_t> queue_;
    std::vector<int32_t> flag_of_;
    std::vector<Flagged> flagged_;
    std::unordered_map<int32_t, int> loop_keys_;  // per destination: end -> key
    // The pairs through each switch for the destinations of one block of DestWalk's LIDs
    // (switch-major within a LID's row), | kDependency when the next switch passes them on to
    // another: added to the per-port counts and dependency counters by flush(), a switch at a
    // time (a destination touches ~1 line of them per switch, all over MBs; a switch's lines
    // take every destination of the block at once). pending_dest_: the destination of each LID.
    static constexpr uint32_t kDependency = 1u << 31;
    static constexpr size_t kNoDest = SIZE_MAX;
    std::vector<uint32_t> pending_;
    std::vector<size_t> pending_dest_;
    uint32_t pending_first_ = UINT32_MAX;  // the block's first LID; UINT32_MAX: nothing pending
    int pending_sign_ = 0;
};

void Validator::flag_links() {
    for (const DegradedLink& d : o_.degraded) {
        const Port* p = d.node < f_.size() ? f_.node(d.node).port(d.port) : nullptr;
        if (!p || !p->linked()) continue;
        Flagged fl{d, p->peer, p->peer_port};
        const int idx = static_cast<int>(flagged_.size());
        int ends = 0;
        for (auto [n, port] : {std::pair<NodeId, int>{d.node, d.port}, {p->peer, p->peer_port}})
            if (int s = g_.sw_of(n); s >= 0 && flag_of_[g_.channel(s, port)] < 0) {
                flag_of_[g_.channel(s, port)] = idx;
                fl.chan[ends++] = g_.channel(s, port);
            }
        if (ends > 0) flagged_.push_back(std::move(fl));
    }
}

RouteCheck Validator::result() {
    flush();
    RouteCheck r;
    r.pairs = st_.pairs, r.routed = st_.routed, r.unreachable = st_.unreachable, r.looping = st_.looping;
    r.unverified = st_.unverified, r.non_minimal = st_.non_minimal;
    r.hop_histogram = st_.hop_histogram;
    while (!r.hop_histogram.empty() && r.hop_histogram.back() == 0) r.hop_histogram.pop_back();
    r.max_hops = r.hop_histogram.empty() ? 0 : static_cast<int>(r.hop_histogram.size()) - 1;
    r.port_pairs = st_.port_pairs;
    if (o_.switch_routes) {
        LftPaths& p = r.switch_routes.emplace();
        p.routes = st_.sw_routes, p.unrouted = st_.sw_unrouted, p.broken = st_.sw_broken;
        p.hop_histogram.assign(st_.sw_hops.begin(), st_.sw_hops.end());
        while (!p.hop_histogram.empty() && p.hop_histogram.back() == 0) p.hop_histogram.pop_back();
        p.max_hops = p.hop_histogram.empty() ? 0 : static_cast<int>(p.hop_histogram.size()) - 1;
    }
    if (o_.credit_loops) credit_loop_findings(r);
    group_findings(r);
    degraded_findings(r);
    std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& x, const Finding& y) {
        return x.kind != y.kind ? x.kind < y.kind : x.a.name < y.a.name;
    });
    return r;
}

void Validator::destination(size_t di, int sign) {
    if (o_.cancel && (++calls_ & 63) == 0 && o_.cancel->load(std::memory_order_relaxed)) throw RouteCheckCancelled();
    const RouteDest& d = g_.dests()[di];
    // What is pending belongs to the block the walk holds, one destination per LID, one sign.
    if (pending_first_ != UINT32_MAX &&
        (d.lid / w_.block_size() * w_.block_size() != pending_first_ || sign != pending_sign_ ||
         pending_dest_[d.lid - pending_first_] != kNoDest))
        flush();
    if (d.sw < 0) {  // a CA cabled to a CA or router: no switch route reaches it
        if (o_.switch_routes) {
            w_.reset(d);
            switch_routes(sign);
        }
        return;
    }
    bfs(d.sw);
    w_.reset(d);
    DestWalk::TableRoutes table_routes;
    w_.settle(st_.order_of[d.sw], o_.switch_routes ? &table_routes : nullptr);
    loop_keys_.clear();
    if (sign < 0)
        for (auto& c : st_.crossing) c[di] = 0;
    // Minimal routes (nearly all) are summed here and added once; the rest go to classify().
    Sums sums;
    for (size_t i = 0; i < sources_.size(); ++i) {
        const int s = sources_[i];
        const long n = source_cas_[i] - (s == d.sw ? 1 : 0);
        if (n <= 0) continue;
        const int32_t v = w_.verdict(s);
        if (v >= 0 && !(o_.non_minimal && dist_[s] >= 0 && v > dist_[s] + 1) && sums.add(v + 1, n)) sums.total += n;
        else classify(di, s, n, v, sign);
        if (v >= 0) {
            through_[s] += n;
            st_.from_routed[s] += sign;
        }
    }
    st_.pairs += sign * sums.total, st_.routed += sign * sums.total;
    sums.into(st_.hop_histogram, sign);
    // The destination's own port is no source; its switch-mates counted it in from_routed only
    // when the switch had other sources.
    st_.self_routed[di] = sign > 0 && g_.cas_on(d.sw).size() > 1 && w_.verdict(d.sw) >= 0;
    aggregate(di, sign);
    if (o_.switch_routes) switch_routes(sign, &table_routes);
}

// Every table's route to the destination (the walk's memo of the sources' routes reused): what
// lft_paths counts, added or taken out.
// `settled`: what DestWalk::settle counted on the way, taken when complete.
void Validator::switch_routes(int sign, const DestWalk::TableRoutes* settled) {
    using Counts = DestWalk::TableRoutes;
    Counts c;  // counted here, added once
    Sums routed;  // routes of Counts::kHops cables or more
    if (settled && settled->complete) {
        c = *settled;
    } else {
        for (size_t i = 0; i < tabled_.size(); ++i) {
            int32_t v = 0;
            switch (table_route(w_, tabled_[i], v)) {
                case TableRoute::unrouted: ++c.unrouted; break;
                case TableRoute::broken: ++c.broken; break;
                case TableRoute::unverified: break;
                case TableRoute::routed:
                    if (v < Counts::kHops) {
                        ++c.routed[i % Counts::kLanes][v];  // lanes: no wait on the last increment
                        break;
                    }
                    ++routed.total;
                    if (!routed.add(v, 1)) {
                        if (static_cast<size_t>(v) >= st_.sw_hops.size()) st_.sw_hops.resize(v + 1, 0);
                        st_.sw_hops[v] += sign;
                    }
                    break;
            }
        }
    }
    for (int32_t h = 0; h < Counts::kHops; ++h)
        if (const long n = c.routed_at(h)) routed.add(h, n), routed.total += n;
    st_.sw_routes += sign * routed.total, st_.sw_unrouted += sign * long{c.unrouted}, st_.sw_broken += sign * long{c.broken};
    routed.into(st_.sw_hops, sign);
}

// Adds (sign > 0) or takes out destination di's share of group `key` of `groups`.
template <class Groups, class Key>
DestPart* share(Groups& groups, const Key& key, size_t di, int s, long n, int sign) {
    if (sign < 0) {
        if (auto it = groups.find(key); it != groups.end() && it->second.erase(di) && it->second.empty()) groups.erase(it);
        return nullptr;
    }
    auto [it, fresh] = groups[key].try_emplace(di);
    if (fresh) it->second.src = s;
    it->second.pairs += n;
    return fresh ? &it->second : nullptr;
}

void Validator::classify(size_t di, int s, long n, int32_t v, int sign) {
    const long dn = sign * n;
    st_.pairs += dn;
    if (v >= 0) {
        st_.routed += dn;
        const int cables = v + 1;
        if (static_cast<size_t>(cables) >= st_.hop_histogram.size()) st_.hop_histogram.resize(cables + 1, 0);
        st_.hop_histogram[cables] += dn;
        if (o_.non_minimal && dist_[s] >= 0 && v > dist_[s] + 1) {
            st_.non_minimal += dn;
            if (DestPart* p = share(st_.detours, s, di, s, n, sign)) p->hops = cables, p->shortest = dist_[s] + 2;
        }
        return;
    }
    if (v == kRouteNoTable) {
        st_.unverified += dn;
        return;
    }
    if (v == kRouteLoop) {
        st_.looping += dn;
        share(st_.loops, loop_key(w_.broke_at(s)), di, s, n, sign);
    } else {
        st_.unreachable += dn;
        share(st_.unreachable_g, std::pair<int, int32_t>{w_.broke_at(s), v}, di, s, n, sign);
    }
}

// The lowest switch number on the forwarding cycle through `end`.
int Validator::loop_key(int32_t end) {
    if (auto it = loop_keys_.find(end); it != loop_keys_.end()) return it->second;
    int key = end;
    for (int32_t t = w_.next(end), n = 0; t >= 0 && t != end && n < g_.switches(); t = w_.next(t), ++n) key = std::min(key, t);
    loop_keys_[end] = key;
    return key;
}

// Pairs through each switch, every switch before the ones its route leads to (settled()
// backwards), into pending_ (flush() adds them up). The order changes no sum, no counter (one
// increment per destination at most) and no crossing (routed pairs cross a link one way only).
void Validator::aggregate(size_t di, int sign) {
    const uint32_t lid = w_.dest().lid;
    pending_first_ = w_.block_first(), pending_sign_ = sign;
    pending_dest_[lid - pending_first_] = di;
    uint32_t* row = pending_.data() + static_cast<size_t>(lid - pending_first_) * static_cast<size_t>(g_.switches());
    const std::vector<int32_t>& order = w_.settled();
    for (size_t i = order.size(); i-- > 0;) {
        const int32_t t = order[i];
        const long n = through_[t];
        if (n == 0) continue;  // only routed switches (verdict >= 1) have pairs through them
        through_[t] = 0;       // every switch that adds to t came before it
        const int32_t v = w_.verdict(t);
        row[t] = static_cast<uint32_t>(n) | (v >= 3 ? kDependency : 0);  // verdict(next) >= 2: it passes them on
        if (v >= 2) through_[w_.hop(t)] += n;
    }
}

// The pending block into the per-port counts and dependency counters, a switch at a time: its
// per-port counts are a few lines, its dependency counters (in the next switches' rows) are
// found for every LID first and asked for at once, then added.
void Validator::flush() {
    if (pending_first_ == UINT32_MAX) return;
    const bool cdg = !st_.cdg.empty(), flags = !flagged_.empty();
    const int sign = pending_sign_;
    const size_t n = static_cast<size_t>(g_.switches());
    const uint32_t block = w_.block_size();
    uint16_t* deps[DestWalk::kMaxBlock];
    constexpr size_t kLine = 64 / sizeof(uint32_t);  // switches per line of a pending_ row
    for (size_t t = 0; t < n; ++t) {
        if (t % kLine == 0 && t + kLine < n)  // the rows are n apart: no hardware prefetch
            for (uint32_t j = 0; j < block; ++j) __builtin_prefetch(&pending_[j * n + t + kLine]);
        const int sw = static_cast<int>(t);
        size_t k = 0;
        for (uint32_t j = 0; j < block; ++j) {
            uint32_t& x = pending_[j * n + t];
            if (x == 0) continue;
            const uint32_t lid = pending_first_ + j;
            const uint8_t p = w_.port_of(lid, sw);
            const uint32_t ch = g_.channel(sw, p);
            st_.port_pairs[ch] += sign * static_cast<long>(x & ~kDependency);
            if (flags)
                if (int fi = flag_of_[ch]; fi >= 0 && sign > 0 && st_.crossing[fi][pending_dest_[j]] == 0)
                    st_.crossing[fi][pending_dest_[j]] = ch == flagged_[fi].chan[0] ? 1 : 2;
            if (cdg && (x & kDependency)) {
                const int32_t u = w_.hop_of(lid, sw);
                const uint64_t side = static_cast<uint64_t>(g_.ports(u) + 1);
                deps[k] = &st_.cdg[st_.cdg_base[u] + w_.port_of(lid, u) * side + g_.hop_port_row(sw)[p]];
                __builtin_prefetch(deps[k++], 1);
            }
            x = 0;
        }
        for (size_t i = 0; i < k; ++i) {
            if (*deps[i] == UINT16_MAX) st_.saturated = true;  // stays set: the dependency is real
            else *deps[i] = static_cast<uint16_t>(*deps[i] + sign);
        }
    }
    std::fill(pending_dest_.begin(), pending_dest_.end(), kNoDest);
    pending_first_ = UINT32_MAX;
}

void Validator::bfs(int from) {
    const int n = g_.switches();
    if (st_.dist_of.empty()) st_.dist_of.resize(n), st_.order_of.resize(n);
    std::vector<int16_t>& d = st_.dist_of[from];
    if (d.empty()) {  // one BFS per destination switch, kept (a full validation: ~5 % of it at 48k)
        d.resize(n);
        g_.breadth_first(from, d, queue_);
        if (n < DestWalk::kNarrow) st_.order_of[from].assign(queue_.begin(), queue_.end());
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

void Validator::credit_loop_findings(RouteCheck& r) {
    const uint32_t nch = g_.channels();
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    for (int u = 0; u < g_.switches(); ++u) {
        const uint64_t side = static_cast<uint64_t>(g_.ports(u) + 1);
        for (int in = 1; in <= g_.ports(u); ++in) {
            const int32_t t = g_.hop(u, in);
            if (t < 0) continue;
            const uint32_t from = g_.channel(t, g_.hop_port(u, in));
            for (int out = 1; out <= g_.ports(u); ++out) {
                if (st_.cdg[st_.cdg_base[u] + out * side + in] != 0) edges.push_back({from, g_.channel(u, out)});
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
            if (members.size() > 1) report_credit_loop(r, members, comps, start, edges, comp);
            ++comps;
        }
    }
}

void Validator::report_credit_loop(RouteCheck& r, const std::vector<uint32_t>& members, int32_t c, const std::vector<uint32_t>& start,
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
    ++r.credit_loops;
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
    r.findings.push_back(std::move(fd));
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

void Validator::group_findings(RouteCheck& r) {
    const std::vector<RouteDest>& ds = g_.dests();
    struct Sum {
        size_t dest;         // the first destination
        const DestPart& at;  // its share
        long dests, pairs;
    };
    auto sum = [](const Group& gr) { return Sum{gr.begin()->first, gr.begin()->second, static_cast<long>(gr.size()), group_pairs(gr)}; };
    auto base = [&](FindingKind k, int s, const Sum& gr) {
        Finding fd;
        fd.kind = k;
        fd.severity = default_severity(k);
        fd.a = {sw_name(s), f_.node(g_.node_of(s)).guid, 0};
        const RouteDest& d = ds[gr.dest];
        fd.b = {name(d.node), f_.node(d.node).guid, d.port};
        return fd;
    };
    auto counts = [](const Sum& gr) {
        return std::to_string(gr.dests) + " CA LID" + (gr.dests == 1 ? "" : "s") + ", " + std::to_string(gr.pairs) +
               " CA->CA pair" + (gr.pairs == 1 ? "" : "s");
    };
    for (const auto& [key, group] : st_.unreachable_g) {
        auto [s, v] = key;
        const Sum gr = sum(group);
        Finding fd = base(FindingKind::route_unreachable, s, gr);
        const uint8_t p = g_.port(s, ds[gr.dest].lid);
        fd.expected = "a route to every CA";
        if (v == kRouteNoEntry) fd.actual = "no LFT entry (255)";
        else if (p == 0) fd.actual = "port 0 (the switch itself)";
        else if (g_.hop(s, p) == kHopCa) fd.actual = "port " + std::to_string(p) + " leads to another CA";
        else fd.actual = "port " + std::to_string(p) + " is not linked to a switch or the CA";
        if (v != kRouteNoEntry) fd.a.port = p;
        fd.message = "routes end at " + fd.a.name + " (" + fd.actual + ") for " + counts(gr) + ", e.g. " +
                     sample_pair(gr.dest, gr.at.src) +
                     "; these hosts cannot talk: check the OpenSM log for routing errors and that the destination's "
                     "links are up, then re-sweep";
        r.findings.push_back(std::move(fd));
    }
    for (const auto& [s, group] : st_.loops) {
        const Sum gr = sum(group);
        Finding fd = base(FindingKind::route_loop, s, gr);
        fd.expected = "routes that arrive";
        fd.actual = "loop " + cycle_text(gr.dest, s);
        fd.message = "forwarding " + fd.actual + " for " + counts(gr) + ", e.g. " + sample_pair(gr.dest, gr.at.src) +
                     "; the switches' tables disagree (changed by hand, or OpenSM stopped mid-update): re-sweep "
                     "OpenSM and check its log";
        r.findings.push_back(std::move(fd));
    }
    for (const auto& [s, group] : st_.detours) {
        const Sum gr = sum(group);
        Finding fd = base(FindingKind::route_non_minimal, s, gr);
        fd.expected = std::to_string(gr.at.shortest) + " cables";
        fd.actual = std::to_string(gr.at.hops) + " cables";
        fd.message = fd.a.name + " routes " + counts(gr) + " over more cables than the shortest path (e.g. " +
                     sample_pair(gr.dest, gr.at.src) + ": " + fd.actual + ", shortest " + fd.expected +
                     "); a missing link or the routing engine made the detour: see `ibfabric analyze` and "
                     "the engine's guid files";
        r.findings.push_back(std::move(fd));
    }
}

void Validator::degraded_findings(RouteCheck& r) {
    for (size_t fi = 0; fi < flagged_.size(); ++fi) {
        const Flagged& fl = flagged_[fi];
        const NodeId ends[2] = {fl.link.node, fl.peer};
        const int ports[2] = {fl.link.port, fl.peer_port};
        long pairs = 0;
        for (int i = 0; i < 2; ++i) {
            if (int s = g_.sw_of(ends[i]); s >= 0) {
                pairs += st_.port_pairs[g_.channel(s, ports[i])];
                continue;
            }
            // A CA end: the pairs it sends (its switch's routed destinations, less its own LIDs).
            const int s = g_.sw_of(ends[1 - i]);
            if (s < 0) continue;
            long own = 0;
            for (size_t di = 0; di < g_.dests().size(); ++di)
                if (g_.dests()[di].node == ends[i] && g_.dests()[di].port == ports[i]) own += st_.self_routed[di];
            pairs += st_.from_routed[s] - own;
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
        // The first destination whose routes cross it, and the channel they crossed first.
        const std::vector<uint8_t>& crossed = st_.crossing[fi];
        if (auto it = std::find_if(crossed.begin(), crossed.end(), [](uint8_t c) { return c != 0; }); it != crossed.end()) {
            const auto di = static_cast<size_t>(it - crossed.begin());
            if (int src = sample_source(di, fl.chan[*it - 1]); src >= 0) sample = ", e.g. " + sample_pair(di, src);
        }
        fd.message = std::to_string(pairs) + " CA->CA routes cross " + port_label(f_, ends[0], ports[0]) + " -- " +
                     port_label(f_, ends[1], ports[1]) + " (" + fl.link.why + ")" + sample +
                     "; fix the link, or disable its port so OpenSM routes around it";
        r.findings.push_back(std::move(fd));
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

namespace {

template <class T>
void add_into(std::vector<T>& to, const std::vector<T>& from) {
    if (to.size() < from.size()) to.resize(from.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) to[i] += from[i];
}

// Adds what a pass over other destinations found (`part`, made by a Validator of its own) to
// `st`: the sums add up, the per-destination parts do not overlap. The dependency counters
// saturate as one pass would: at 65535, with `saturated` set when the sum goes beyond.
void merge_state(State& st, State&& part) {
    st.pairs += part.pairs, st.routed += part.routed, st.unreachable += part.unreachable;
    st.looping += part.looping, st.unverified += part.unverified, st.non_minimal += part.non_minimal;
    add_into(st.hop_histogram, part.hop_histogram);
    st.sw_routes += part.sw_routes, st.sw_unrouted += part.sw_unrouted, st.sw_broken += part.sw_broken;
    add_into(st.sw_hops, part.sw_hops);
    add_into(st.port_pairs, part.port_pairs);
    add_into(st.from_routed, part.from_routed);
    for (size_t di = 0; di < part.self_routed.size(); ++di) st.self_routed[di] |= part.self_routed[di];
    auto groups = [](auto& to, auto& from) {
        for (auto& [key, g] : from) to[key].merge(g);  // destination indices: disjoint
    };
    groups(st.unreachable_g, part.unreachable_g);
    groups(st.loops, part.loops);
    groups(st.detours, part.detours);
    st.saturated = st.saturated || part.saturated;
    for (size_t i = 0; i < part.cdg.size(); ++i) {
        const uint32_t sum = uint32_t{st.cdg[i]} + part.cdg[i];
        if (sum > UINT16_MAX) st.saturated = true;
        st.cdg[i] = static_cast<uint16_t>(std::min<uint32_t>(sum, UINT16_MAX));
    }
    for (size_t fi = 0; fi < part.crossing.size(); ++fi)
        for (size_t di = 0; di < part.crossing[fi].size(); ++di)
            if (part.crossing[fi][di]) st.crossing[fi][di] = part.crossing[fi][di];
    if (st.dist_of.size() < part.dist_of.size()) st.dist_of.resize(part.dist_of.size()), st.order_of.resize(part.dist_of.size());
    for (size_t s = 0; s < part.dist_of.size(); ++s)
        if (st.dist_of[s].empty()) st.dist_of[s] = std::move(part.dist_of[s]), st.order_of[s] = std::move(part.order_of[s]);
}

// A full pass into the fresh `st`, and its result. With opt.threads > 1 the destinations are
// split into that many runs of whole 64-LID blocks, each walked by a Validator of its own into a
// State of its own (the first into `st`), merged into `st` in order: the same State and result
// as one thread (route_check_test compares them).
RouteCheck validate_all(const RouteGraph& g, const Analysis& a, const RouteCheckOptions& opt, State& st) {
    const size_t n = g.dests().size();
    const size_t threads = std::clamp<size_t>(opt.threads, 1, std::max<size_t>(1, n / std::max<size_t>(1, opt.min_dests_per_thread)));
    if (threads == 1) {
        Validator v(g, a, opt, st);
        v.all();
        return v.result();
    }
    // Cut points at block starts, so that no 64-LID block of the tables is loaded twice.
    std::vector<size_t> cut{0};
    for (size_t t = 1; t < threads; ++t) {
        size_t c = std::max(cut.back(), n * t / threads);
        while (c < n && c > 0 && g.dests()[c].lid / DestWalk::kMaxBlock == g.dests()[c - 1].lid / DestWalk::kMaxBlock) ++c;
        cut.push_back(c);
    }
    cut.push_back(n);
    std::vector<State> parts(threads - 1);
    std::vector<std::exception_ptr> failed(threads);
    auto run = [&](size_t t) {
        try {
            Validator v(g, a, opt, t == 0 ? st : parts[t - 1]);
            for (size_t di = cut[t]; di < cut[t + 1]; ++di) v.destination(di, +1);
        } catch (...) {
            failed[t] = std::current_exception();  // bad_alloc: rethrown on this thread
        }
    };
    {
        std::vector<std::jthread> pool;
        for (size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
        run(0);
    }  // joined
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    for (State& p : parts) merge_state(st, std::move(p));
    Validator v(g, a, opt, st);  // st is filled: the constructor keeps it
    return v.result();
}

}  // namespace

namespace {
// Everything but the tables: nodes, names, ports, LIDs, cables, degraded links, options.
uint64_t topology_hash(const Fabric& f, const Analysis& a, const RouteCheckOptions& opt) {
    Hasher h;
    for (NodeId n = 0; n < f.size(); ++n) {
        const Node& node = f.node(n);
        h.add(node.guid), h.add(static_cast<uint64_t>(node.type)), h.add(display_name(f, a, n));
        for (const Port& p : node.ports)
            h.add(uint64_t{p.valid} | uint64_t{p.lid} << 8 | uint64_t{p.lmc} << 24 | uint64_t{p.peer} << 32), h.add(p.peer_port);
    }
    for (const DegradedLink& d : opt.degraded) h.add(d.node), h.add(static_cast<uint64_t>(d.port)), h.add(d.why);
    h.add(uint64_t{opt.non_minimal} | uint64_t{opt.credit_loops} << 1 | uint64_t{opt.switch_routes} << 2);
    return h.h;
}
}  // namespace

uint64_t route_inputs_hash(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const RouteCheckOptions& opt) {
    Hasher h;
    h.add(topology_hash(f, a, opt));
    for (const SwitchLft& t : lfts) h.add(t.switch_guid), h.add(lft_hash_of(t));
    return h.h;
}

std::string_view to_string(RouteCheckCache::Mode m) {
    switch (m) {
        case RouteCheckCache::Mode::incremental: return "incremental";
        case RouteCheckCache::Mode::unchanged: return "unchanged";
        default: return "full";
    }
}

RouteCheckCache::RouteCheckCache() = default;
RouteCheckCache::~RouteCheckCache() = default;
RouteCheckCache::RouteCheckCache(RouteCheckCache&&) noexcept = default;
RouteCheckCache& RouteCheckCache::operator=(RouteCheckCache&&) noexcept = default;

const RouteCheck& RouteCheckCache::check(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts,
                                         const RouteCheckOptions& opt) {
    try {
        return run(f, a, lfts, opt);
    } catch (const RouteCheckCancelled&) {
        state_.reset();  // an incremental step stopped halfway: its sums are neither the old nor the new
        throw;
    }
}

const RouteCheck& RouteCheckCache::run(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts,
                                       const RouteCheckOptions& opt) {
    const RouteGraph g(f, lfts);
    const uint64_t topology = topology_hash(f, a, opt);
    bool same = state_ && state_->topology == topology && !state_->saturated;
    for (int s = 0; same && s < g.switches(); ++s) same = g.has_table(s) == (state_->table_of[s] >= 0);
    // The destination LIDs whose entry changed in some table (the tables with a new hash only).
    std::vector<uint8_t> lid_dirty;
    std::vector<int> changed;
    std::vector<uint64_t> hashes(g.switches(), 0);
    for (int s = 0; same && s < g.switches(); ++s) {
        if (!g.has_table(s)) continue;
        const SwitchLft& now = *g.table(s);
        const SwitchLft& was = state_->tables[state_->table_of[s]];
        if (now.shared_port_by_lid() == was.shared_port_by_lid()) {  // the same bytes: unchanged, not read
            hashes[s] = was.hash;
            continue;
        }
        hashes[s] = lft_hash_of(now);
        if (hashes[s] == was.hash) continue;
        const std::vector<uint8_t>& x = was.port_by_lid();
        const std::vector<uint8_t>& y = now.port_by_lid();
        const size_t n = std::max(x.size(), y.size());
        if (lid_dirty.size() < n) lid_dirty.resize(n, 0);
        for (size_t lid = 0; lid < n; ++lid)
            if ((lid < x.size() ? x[lid] : kLftNoPath) != (lid < y.size() ? y[lid] : kLftNoPath)) lid_dirty[lid] = 1;
        changed.push_back(s);
    }
    std::vector<size_t> dirty;
    for (size_t di = 0; same && di < g.dests().size(); ++di)
        if (g.dests()[di].lid < lid_dirty.size() && lid_dirty[g.dests()[di].lid] && (g.dests()[di].sw >= 0 || opt.switch_routes))
            dirty.push_back(di);
    tables_changed_ = changed.size();
    // Keeps the new tables (their shared bytes, and every hash) for the next check.
    auto keep = [&](const std::vector<int>& which) {
        for (int s : which) {
            SwitchLft& t = state_->tables[state_->table_of[s]];
            t = *g.table(s);
            t.hash = hashes[s];
        }
    };
    if (same && dirty.empty()) {
        keep(changed);  // equal entries where the destinations are (a switch LID, say): same result
        mode_ = Mode::unchanged, revalidated_ = 0;
        return state_->last;
    }
    if (same && dirty.size() * 2 <= g.dests().size()) {
        // Rows of 64 LIDs when the changed destinations crowd them (4 or more a block on average).
        size_t blocks = 0;
        for (size_t i = 0; i < dirty.size(); ++i)
            blocks += i == 0 || g.dests()[dirty[i]].lid / DestWalk::kMaxBlock != g.dests()[dirty[i - 1]].lid / DestWalk::kMaxBlock;
        const uint32_t block = dirty.size() >= 4 * blocks ? DestWalk::kMaxBlock : 1;
        // Take out what the last tables gave these destinations, then put in what the new ones give.
        {
            const RouteGraph old(f, state_->tables);
            Validator v(old, a, opt, *state_, block);
            for (size_t di : dirty) v.destination(di, -1);
        }
        keep(changed);
        Validator v(g, a, opt, *state_, block);
        for (size_t di : dirty) v.destination(di, +1);
        state_->last = v.result();
        mode_ = Mode::incremental, revalidated_ = dirty.size();
        return state_->last;
    }
    auto st = std::make_unique<State>();
    st->topology = topology;
    st->table_of.assign(g.switches(), -1);
    for (int s = 0; s < g.switches(); ++s)
        if (g.has_table(s)) {
            st->table_of[s] = static_cast<int32_t>(st->tables.size());
            SwitchLft& t = st->tables.emplace_back(*g.table(s));  // shares the bytes
            t.hash = lft_hash_of(t);
        }
    st->last = validate_all(g, a, opt, *st);
    state_ = std::move(st);
    mode_ = Mode::full, revalidated_ = g.dests().size();
    return state_->last;
}

nlohmann::json route_check_json(const RouteCheck& rc) {
    nlohmann::json j = {{"pairs", rc.pairs},           {"routed", rc.routed},         {"unreachable", rc.unreachable},
                        {"looping", rc.looping},       {"unverified", rc.unverified}, {"non_minimal", rc.non_minimal},
                        {"max_hops", rc.max_hops},     {"hop_histogram", rc.hop_histogram}, {"credit_loops", rc.credit_loops},
                        {"vl", "VL0 only (SL2VL tables are not exported)"}};
    if (rc.switch_routes) j["switch_routes"] = switch_routes_json(*rc.switch_routes);
    return j;
}

nlohmann::json switch_routes_json(const LftPaths& p) {
    return {{"max_hops", p.max_hops},
            {"hop_histogram", p.hop_histogram},
            {"routes", p.routes},
            {"routes_unrouted", p.unrouted},
            {"routes_broken", p.broken}};
}

RouteCheck check_routes(const RouteGraph& g, const Analysis& a, const RouteCheckOptions& opt) {
    RouteCheckCache::State st;
    return validate_all(g, a, opt, st);
}

}  // namespace ibf
