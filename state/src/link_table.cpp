// link_table(): the per-link rows of /metrics, built once per check.
#include "ibf/link_table.h"

#include <algorithm>
#include <map>
#include <utility>

#include "ibf/analysis.h"
#include "ibf/text.h"

namespace ibf {
namespace {

// 0 for hosts (CAs, routers), the switch's tier, -1 for a switch of unknown tier.
int level(const Fabric& f, const std::vector<int>& tier_of, NodeId n) {
    if (f.node(n).type != NodeType::Switch) return 0;
    const int t = n < tier_of.size() ? tier_of[n] : 0;
    return t > 0 ? t : -1;
}

std::string level_name(int l) { return l == 0 ? "host" : l < 0 ? "unknown" : tier_name(l); }

// Should (b, pb) be the local end instead of (a, pa)?
bool b_is_local(const Fabric& f, int la, int lb, const Link& l) {
    const bool sa = f.node(l.a).type == NodeType::Switch, sb = f.node(l.b).type == NodeType::Switch;
    if (sa != sb) return sb;
    if (la != lb && la > 0 && lb > 0) return lb < la;
    const Guid ga = f.node(l.a).guid, gb = f.node(l.b).guid;
    return std::pair(gb, l.pb) < std::pair(ga, l.pa);
}

}  // namespace

// Prometheus's escapes (\\, \", \n) over terminal_safe(): a NodeDescription with an ESC
// sequence must not reach a terminal that `curl /metrics` prints to (issue 19 item 9).
std::string escape_label_value(const std::string& s) {
    std::string o;
    o.reserve(s.size());
    size_t from = 0;
    for (;;) {
        const size_t nl = s.find('\n', from);
        for (char ch : terminal_safe(std::string_view(s).substr(from, nl == std::string::npos ? std::string::npos : nl - from))) {
            if (ch == '\\' || ch == '"') o += '\\';
            o += ch;
        }
        if (nl == std::string::npos) return o;
        o += "\\n";
        from = nl + 1;
    }
}

LinkTable link_table(const Fabric& f, const std::vector<int>& tier_of, const Plan* plan,
                     const std::vector<LinkMatch>& matches, const std::vector<std::string>& names) {
    // Planned link by actual (node, port) of either end.
    std::map<std::pair<NodeId, int>, size_t> planned;
    if (plan)
        for (const LinkMatch& m : matches)
            if (m.planned < plan->links.size()) {
                planned[{m.a, m.pa}] = m.planned;
                planned[{m.b, m.pb}] = m.planned;
            }
    LinkTable t;
    const auto links = f.links();
    t.rows.reserve(links.size());
    for (const Link& l : links) {
        const int la = level(f, tier_of, l.a), lb = level(f, tier_of, l.b);
        const bool swap = b_is_local(f, la, lb, l);
        const NodeId ln = swap ? l.b : l.a, rn = swap ? l.a : l.b;
        const int lp = swap ? l.pb : l.pa, rp = swap ? l.pa : l.pb;
        const int llev = swap ? lb : la, rlev = swap ? la : lb;
        const Port& p = f.node(ln).ports[lp];
        LinkRow r;
        r.local_guid = f.node(ln).guid;
        r.remote_guid = f.node(rn).guid;
        r.local_port = lp;
        r.remote_port = rp;
        r.local_name = names.size() == f.size() ? names[ln] : f.node(ln).name;
        r.remote_name = names.size() == f.size() ? names[rn] : f.node(rn).name;
        const int lo = std::min(llev < 0 ? 1000 : llev, rlev < 0 ? 1000 : rlev);
        const int hi = std::max(llev < 0 ? 1000 : llev, rlev < 0 ? 1000 : rlev);
        r.tier = level_name(lo == 1000 ? -1 : lo) + "-" + level_name(hi == 1000 ? -1 : hi);
        r.state = static_cast<int>(p.state);
        r.lanes = lanes(p.width_active);
        r.lane_bps = lane_data_gbps(p.speed_active) * 1e9;
        r.rate_bps = r.lanes * r.lane_bps;
        r.mtu_bytes = p.mtu_active;
        if (auto it = planned.find({ln, lp}); it != planned.end()) {
            const PlannedLink& pl = plan->links[it->second];
            r.label = pl.label;
            if (pl.rate && pl.rate->width != Width::Unknown && pl.rate->speed != Speed::Unknown)
                r.planned_rate_bps = pl.rate->gbps() * 1e9;
        }
        r.labels = "local_guid=\"" + guid_hex(r.local_guid) + "\",local_name=\"" + escape_label_value(r.local_name) +
                   "\",local_port=\"" + std::to_string(lp) + "\",remote_guid=\"" + guid_hex(r.remote_guid) +
                   "\",remote_name=\"" + escape_label_value(r.remote_name) + "\",remote_port=\"" +
                   std::to_string(rp) + "\",tier=\"" + r.tier + "\"";
        t.row_of[{r.local_guid, r.local_port}] = t.rows.size();
        t.row_of[{r.remote_guid, r.remote_port}] = t.rows.size();
        r.deviates = r.state != 4 || (r.planned_rate_bps > 0 && r.rate_bps < r.planned_rate_bps);
        t.rows.push_back(std::move(r));
    }
    std::map<std::string, uint32_t> tier_ix;
    std::map<Guid, uint32_t> node_ix;
    for (const LinkRow& r : t.rows) {
        tier_ix.try_emplace(r.tier, 0);
        node_ix.try_emplace(r.local_guid, 0);
    }
    for (auto& [name, i] : tier_ix) {
        i = static_cast<uint32_t>(t.tiers.size());
        t.tiers.push_back(name);
    }
    t.local_node_labels.resize(node_ix.size());
    uint32_t next = 0;
    for (auto& [g, i] : node_ix) i = next++;
    for (const LinkRow& r : t.rows) {
        t.tier_of_row.push_back(tier_ix.at(r.tier));
        const uint32_t n = node_ix.at(r.local_guid);
        t.local_node_of_row.push_back(n);
        if (t.local_node_labels[n].empty())
            t.local_node_labels[n] = "switch_guid=\"" + guid_hex(r.local_guid) + "\",switch_name=\"" +
                                     escape_label_value(r.local_name) + "\"";
    }
    return t;
}

namespace {
// Calls `end(guid, port)` for every end of `f` that names a port (a whole node, an imbalanced LFT
// or a rename, is not its every link): a, b, its links' ends, its members'.
template <class F>
void each_end(const Finding& f, F&& end) {
    auto one = [&](const Endpoint& e) {
        if (e.guid && e.port != 0) end(e.guid, e.port);
    };
    one(f.a);
    one(f.b);
    for (const FindingLink& l : f.links) {
        one(l.a);
        one(l.b);
    }
    for (const Finding& m : f.members) each_end(m, end);
}
}  // namespace

void mark_deviating_links(LinkTable& t, const std::vector<Finding>& findings) {
    for (const Finding& f : findings)
        each_end(f, [&](Guid g, int port) {
            if (auto it = t.row_of.find({g, port}); it != t.row_of.end()) t.rows[it->second].deviates = true;
        });
}

void deviating_ends(const std::vector<Finding>& findings, std::vector<std::pair<Guid, int>>& out) {
    for (const Finding& f : findings) each_end(f, [&](Guid g, int port) { out.emplace_back(g, port); });
}

}  // namespace ibf
