#include "ibf/lft.h"

#include <algorithm>
#include <string>

namespace ibf {

LftReport lft_balance(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const LftOptions& opt) {
    LftReport r;
    // Destination LIDs of compute-host ports.
    std::vector<uint8_t> host_lid(65536, 0);
    for (NodeId h : a.compute_hosts) {
        const Node& n = f.node(h);
        for (const Port& p : n.ports) {
            if (!p.valid || p.lid == 0) continue;
            int count = 1 << std::min<int>(p.lmc, 7);
            for (int i = 0; i < count && p.lid + i < 65536; ++i) host_lid[p.lid + i] = 1;
        }
    }
    for (const SwitchLft& t : lfts) {
        auto id = f.find(t.switch_guid);
        if (!id) continue;
        const SwitchInfo* si = a.info(*id);
        if (!si || si->up_bundles.empty()) continue;
        LftBalance b;
        b.node = *id;
        b.tier = si->tier;
        std::vector<int> load(f.node(*id).ports.size(), -1);
        for (const Bundle& bu : si->up_bundles)
            for (int p : bu.ports) load[p] = 0;
        for (size_t lid = 1; lid < t.port_by_lid.size() && lid < host_lid.size(); ++lid) {
            if (!host_lid[lid]) continue;
            int p = t.port_by_lid[lid];
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
        if (b.imbalanced) {
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
                         std::to_string(mn->port) + " (mean " + mean +
                         "): check the routing engine (ftree fell back to minhop?) and the root/cn guid files";
            r.findings.push_back(std::move(fd));
        }
        r.switches.push_back(std::move(b));
    }
    return r;
}

}  // namespace ibf
