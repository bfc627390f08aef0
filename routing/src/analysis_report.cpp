// analysis_to_json and the plain-text tier table.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>

#include "ibf/analysis.h"
#include "ibf/text.h"

namespace ibf {
namespace {
double round2(double x) { return static_cast<double>(static_cast<long long>(x * 100 + (x >= 0 ? 0.5 : -0.5))) / 100; }

std::string fmt_ratio(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f:1", x);
    return buf;
}
std::string fmt_gbps(double x) {
    char buf[32];
    if (x >= 1000) std::snprintf(buf, sizeof buf, "%.2f Tb/s", x / 1000);
    else std::snprintf(buf, sizeof buf, "%.0f Gb/s", x);
    return buf;
}
}  // namespace

nlohmann::json analysis_to_json(const Fabric& f, const Analysis& a, bool per_switch) {
    nlohmann::json j;
    j["levels"] = a.levels();
    j["compute_hosts"] = a.compute_hosts.size();
    j["aggregation_nodes"] = a.aggregation_nodes.size();
    j["host_links"] = a.host_links;
    j["host_gbps"] = round2(a.host_gbps);
    j["bisection_gbps"] = round2(a.bisection_gbps);
    nlohmann::json tiers = nlohmann::json::array();
    for (const TierInfo& t : a.tiers) {
        nlohmann::json bs = nlohmann::json::object();
        for (auto& [size, count] : t.bundle_sizes) bs[std::to_string(size)] = count;
        tiers.push_back({{"level", t.level},
                         {"name", t.name},
                         {"switches", t.switches},
                         {"hosts", t.hosts},
                         {"down_links", t.down_links},
                         {"up_links", t.up_links},
                         {"intra_links", t.intra_links},
                         {"bundle_sizes", bs},
                         {"down_gbps", round2(t.down_gbps)},
                         {"up_gbps", round2(t.up_gbps)},
                         {"oversubscription_min", round2(t.oversub_min)},
                         {"oversubscription_max", round2(t.oversub_max)}});
    }
    j["tiers"] = tiers;
    if (!per_switch) return j;
    // names and GUID strings once per switch (bundles refer to them again and again)
    std::unordered_map<NodeId, std::pair<std::string, std::string>> label;
    label.reserve(a.switches.size());
    for (const SwitchInfo& s : a.switches) label[s.node] = {display_name(f, a, s.node), guid_hex(f.node(s.node).guid)};
    auto name_of = [&](NodeId n) -> const std::pair<std::string, std::string>& {
        auto it = label.find(n);
        if (it == label.end()) it = label.emplace(n, std::make_pair(display_name(f, a, n), guid_hex(f.node(n).guid))).first;
        return it->second;
    };
    nlohmann::json sws = nlohmann::json::array();
    for (const SwitchInfo& s : a.switches) {
        nlohmann::json bundles = nlohmann::json::array();
        for (const Bundle& b : s.up_bundles)
            bundles.push_back({{"peer", name_of(b.peer).first},
                               {"peer_guid", name_of(b.peer).second},
                               {"cables", b.cables},
                               {"ports", b.ports},
                               {"peer_ports", b.peer_ports}});
        nlohmann::json o = {{"name", name_of(s.node).first},
                            {"guid", name_of(s.node).second},
                            {"tier", s.tier},
                            {"tier_name", tier_name(s.tier)},
                            {"hosts", s.hosts},
                            {"other_cas", s.other_cas},
                            {"down_links", s.down_links},
                            {"up_links", s.up_links},
                            {"intra_links", s.intra_links},
                            {"skip_links", s.skip_links},
                            {"down_gbps", round2(s.down_gbps)},
                            {"up_gbps", round2(s.up_gbps)},
                            {"oversubscription", round2(s.oversubscription)},
                            {"up_bundles", bundles}};
        if (!s.chassis.empty()) o["chassis"] = s.chassis;
        sws.push_back(std::move(o));
    }
    j["switches"] = sws;
    return j;
}

std::string render_tier_table(const Fabric& f, const Analysis& a) {
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "%-7s %8s %6s %6s %6s %6s  %-18s %s\n", "tier", "switches", "hosts", "down", "up", "intra",
                  "uplink bundles", "oversubscription");
    out += line;
    for (const TierInfo& t : a.tiers) {
        std::string bundles;
        for (auto& [size, count] : t.bundle_sizes)
            bundles += (bundles.empty() ? "" : " ") + std::to_string(count) + "x" + std::to_string(size);
        if (bundles.empty()) bundles = "-";
        std::string over = t.up_links == 0 ? "-"
                           : t.oversub_min == t.oversub_max
                               ? fmt_ratio(t.oversub_min)
                               : fmt_ratio(t.oversub_min) + " .. " + fmt_ratio(t.oversub_max);
        std::snprintf(line, sizeof line, "%-7s %8d %6d %6d %6d %6d  %-18s %s\n", terminal_safe(t.name).c_str(), t.switches, t.hosts, t.down_links,
                      t.up_links, t.intra_links, bundles.c_str(), over.c_str());
        out += line;
    }
    int unknown = 0;
    for (const SwitchInfo& s : a.switches) unknown += s.tier == 0;
    if (unknown) out += std::to_string(unknown) + " switch(es) with no path to a host: tier unknown\n";
    std::snprintf(line, sizeof line, "%zu compute hosts (%d links, %s)", a.compute_hosts.size(), a.host_links,
                  fmt_gbps(a.host_gbps).c_str());
    out += line;
    if (!a.aggregation_nodes.empty()) out += ", " + std::to_string(a.aggregation_nodes.size()) + " aggregation nodes";
    out += "; bisection bandwidth estimate " + fmt_gbps(a.bisection_gbps) + "\n";
    (void)f;
    return out;
}

std::string render_switch_table(const Fabric& f, const Analysis& a) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-28s %-6s %5s %5s %5s  %-22s %s\n", "switch", "tier", "hosts", "down", "up", "uplink bundles",
                  "oversubscription");
    out += line;
    std::vector<const SwitchInfo*> order;
    for (const SwitchInfo& s : a.switches) order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [&](const SwitchInfo* x, const SwitchInfo* y) {
        return std::make_pair(x->tier == 0 ? 1000 : x->tier, display_name(f, a, x->node)) <
               std::make_pair(y->tier == 0 ? 1000 : y->tier, display_name(f, a, y->node));
    });
    for (const SwitchInfo* s : order) {
        std::map<int, int> sizes;
        for (const Bundle& b : s->up_bundles) ++sizes[b.cables];
        std::string bundles;
        for (auto& [size, count] : sizes) bundles += (bundles.empty() ? "" : " ") + std::to_string(count) + "x" + std::to_string(size);
        if (bundles.empty()) bundles = "-";
        std::string over = s->up_gbps > 0 && s->down_gbps > 0 ? fmt_ratio(s->oversubscription) : "-";
        std::snprintf(line, sizeof line, "%-28s %-6s %5d %5d %5d  %-22s %s\n",
                      terminal_safe(display_name(f, a, s->node)).c_str(),
                      tier_name(s->tier).c_str(), s->hosts, s->down_links, s->up_links, bundles.c_str(), over.c_str());
        out += line;
    }
    return out;
}

}  // namespace ibf
