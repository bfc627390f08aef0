#include "ibf/lft.h"

#include "ibf/route_graph.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

namespace ibf {

namespace {
std::string lower_word(const std::string& s) {
    size_t b = s.find_first_not_of(" \t,");
    if (b == std::string::npos) return "";
    size_t e = s.find_first_of(" \t,", b);
    std::string w = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return w;
}

bool balancing(const std::string& engine) {
    return engine == "ftree" || engine == "updn" || engine == "dnup" || engine == "sssp" || engine == "dfsssp";
}

// What to check, after the numbers, for the engine that routed.
std::string imbalance_advice(const LftOptions& opt) {
    const std::string used = lower_word(opt.engine), want = lower_word(opt.configured);
    if (used.empty() && want.empty())
        return "the routing engine is not known here (offline tables); if it is ftree or updn, check its "
               "root/cn guid files";
    if (!want.empty() && used != want && balancing(want))
        return "OpenSM routed with " + (used.empty() ? std::string("another engine") : used) + ", not the configured " +
               want + " (see routing_fallback); fix what made " + want + " fail";
    if (used == "ftree") return "ftree should spread host routes evenly: check root_guid_file and cn_guid_file";
    if (used == "updn" || used == "dnup") return used + " should spread host routes evenly: check root_guid_file";
    return used + " should spread host routes evenly: check the OpenSM log for routing errors";
}
}  // namespace

bool balance_expected(const std::string& engine, const std::string& configured) {
    const std::string used = lower_word(engine), want = lower_word(configured);
    if (used.empty() && want.empty()) return true;
    return balancing(used) || balancing(want);
}

namespace {

// Destination LIDs of compute-host ports (1 = a host's), indexed by LID.
std::vector<uint8_t> host_lids(const Fabric& f, const Analysis& a) {
    std::vector<uint8_t> host_lid(65536, 0);
    for (NodeId h : a.compute_hosts) {
        const Node& n = f.node(h);
        for (const Port& p : n.ports) {
            if (!p.valid || p.lid == 0) continue;
            int count = 1 << std::min<int>(p.lmc, 7);
            for (int i = 0; i < count && p.lid + i < 65536; ++i) host_lid[p.lid + i] = 1;
        }
    }
    return host_lid;
}

// One table's balance and, when unbalanced and `report`, its finding.
LftBalanceKeep::Table balance_one(const Fabric& f, const Analysis& a, const std::vector<uint8_t>& host_lid, const SwitchLft& t,
                                  const LftOptions& opt, bool report) {
    LftBalanceKeep::Table out{.switch_guid = t.switch_guid, .hash = lft_hash_of(t)};
    auto id = f.find(t.switch_guid);
    if (!id) return out;
    const SwitchInfo* si = a.info(*id);
    if (!si || si->up_bundles.empty()) return out;
    LftBalance b;
    b.node = *id;
    b.tier = si->tier;
    std::vector<int> load(f.node(*id).ports.size(), -1);
    for (const Bundle& bu : si->up_bundles)
        for (int p : bu.ports) load[p] = 0;
    const std::vector<uint8_t>& port_by_lid = t.port_by_lid();
    for (size_t lid = 1; lid < port_by_lid.size() && lid < host_lid.size(); ++lid) {
        if (!host_lid[lid]) continue;
        int p = port_by_lid[lid];
        if (p < static_cast<int>(load.size()) && load[p] >= 0) ++load[p];
    }
    for (const Bundle& bu : si->up_bundles)
        for (int p : bu.ports) b.up_ports.push_back({p, bu.peer, load[p]});
    std::sort(b.up_ports.begin(), b.up_ports.end(), [](const PortLoad& x, const PortLoad& y) { return x.port < y.port; });
    auto [mn, mx] = std::minmax_element(b.up_ports.begin(), b.up_ports.end(),
                                        [](const PortLoad& x, const PortLoad& y) { return x.routes < y.routes; });
    b.min_routes = mn->routes;
    b.max_routes = mx->routes;
    long total = 0;
    for (const PortLoad& pl : b.up_ports) total += pl.routes;
    b.mean = static_cast<double>(total) / static_cast<double>(b.up_ports.size());
    int spread = b.max_routes - b.min_routes;
    b.imbalanced = spread >= opt.min_spread && spread > opt.tolerance * b.mean;
    if (b.imbalanced && report) {
        Finding fd;
        fd.kind = FindingKind::lft_imbalance;
        fd.severity = default_severity(fd.kind);
        fd.a = {display_name(f, a, *id), f.node(*id).guid, mx->port};
        fd.b = {display_name(f, a, mx->peer), f.node(mx->peer).guid, 0};
        char mean[32];
        std::snprintf(mean, sizeof mean, "%.1f", b.mean);
        fd.expected = "about " + std::string(mean) + " routes per uplink";
        fd.actual = std::to_string(b.max_routes) + " on port " + std::to_string(mx->port) + ", " +
                    std::to_string(b.min_routes) + " on port " + std::to_string(mn->port);
        fd.message = display_name(f, a, *id) + " routes " + std::to_string(b.max_routes) + " host destinations through uplink " +
                     std::to_string(mx->port) + " but " + std::to_string(b.min_routes) + " through uplink " +
                     std::to_string(mn->port) + " (mean " + mean + "); " + imbalance_advice(opt);
        out.finding = std::move(fd);
    }
    out.balance = std::move(b);
    return out;
}

LftReport report_of(const LftBalanceKeep& keep) {
    LftReport r;
    for (const LftBalanceKeep::Table& t : keep.tables) {
        if (t.balance) r.switches.push_back(*t.balance);
        if (t.finding) r.findings.push_back(*t.finding);
    }
    return r;
}

}  // namespace

LftReport lft_balance(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const LftOptions& opt,
                      LftBalanceKeep& keep) {
    const bool report = balance_expected(opt.engine, opt.configured);
    std::vector<uint8_t> host_lid;
    keep.tables.resize(lfts.size());
    keep.recounted.clear();
    for (size_t i = 0; i < lfts.size(); ++i) {
        LftBalanceKeep::Table& k = keep.tables[i];
        if (k.switch_guid == lfts[i].switch_guid && k.hash != 0 && k.hash == lft_hash_of(lfts[i])) continue;
        if (host_lid.empty()) host_lid = host_lids(f, a);
        k = balance_one(f, a, host_lid, lfts[i], opt, report);
        keep.recounted.push_back(i);
    }
    return report_of(keep);
}

LftReport lft_balance(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const LftOptions& opt) {
    LftBalanceKeep keep;
    return lft_balance(f, a, lfts, opt, keep);
}

LftPaths lft_paths(const Fabric& f, const std::vector<SwitchLft>& lfts) {
    // Per destination LID, one pass over the switches in breadth-first order from its switch
    // settles and counts the routes that go down that tree (DestWalk::settle); a destination the
    // pass did not settle in full is counted switch by switch through the memoised walk.
    LftPaths r;
    const RouteGraph g(f, lfts);
    DestWalk w(g);
    const bool narrow = g.switches() < DestWalk::kNarrow;
    std::vector<std::vector<uint16_t>> order_of(narrow ? static_cast<size_t>(g.switches()) : 0);
    std::vector<int16_t> dist(static_cast<size_t>(g.switches()));
    std::vector<int32_t> queue;
    auto routed = [&](int32_t hops, long n) {
        r.routes += n;
        r.max_hops = std::max(r.max_hops, hops);
        if (static_cast<size_t>(hops) >= r.hop_histogram.size()) r.hop_histogram.resize(hops + 1, 0);
        r.hop_histogram[hops] += n;
    };
    for (const RouteDest& d : g.dests()) {  // in LID order
        w.reset(d);
        DestWalk::TableRoutes c;
        if (narrow && d.sw >= 0) {
            std::vector<uint16_t>& order = order_of[static_cast<size_t>(d.sw)];
            if (order.empty()) {
                g.breadth_first(d.sw, dist, queue);
                order.assign(queue.begin(), queue.end());
            }
            w.settle(order, &c);
        }
        if (c.complete) {
            for (int32_t h = 0; h < DestWalk::TableRoutes::kHops; ++h)
                if (const long n = c.routed_at(h)) routed(h, n);
            r.unrouted += c.unrouted, r.broken += c.broken;
            continue;
        }
        for (int s = 0; s < g.switches(); ++s) {
            if (!g.has_table(s)) continue;
            int32_t hops = 0;
            switch (table_route(w, s, hops)) {
                case TableRoute::unrouted: ++r.unrouted; break;
                case TableRoute::broken: ++r.broken; break;
                case TableRoute::unverified: break;
                case TableRoute::routed: routed(hops, 1); break;
            }
        }
    }
    return r;
}

}  // namespace ibf
