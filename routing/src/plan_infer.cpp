#include "ibf/plan_infer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace ibf {
namespace {

bool safe(const std::string& s) {
    if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; });
}

// A YAML double-quoted scalar. Control characters (C0, DEL, and C1 as UTF-8) become YAML's \xNN
// escapes: the YAML stays valid and a NodeDescription's escape sequence never reaches a terminal.
std::string q(const std::string& s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string o = "\"";
    for (size_t i = 0; i < s.size(); ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        const bool c1 = c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f &&
                        static_cast<unsigned char>(s[i + 1]) >= 0x80;
        if (c1) c = static_cast<unsigned char>(s[++i]);
        if (c < 0x20 || c == 0x7f || c1) {
            o += "\\x";
            o += kHex[c >> 4];
            o += kHex[c & 15];
            continue;
        }
        if (c == '"' || c == '\\') o += '\\';
        o += static_cast<char>(c);
    }
    return o + "\"";
}

std::string hexg(Guid g, bool prefix = true) {
    char buf[24];
    std::snprintf(buf, sizeof buf, prefix ? "0x%016llx" : "%016llx", static_cast<unsigned long long>(g));
    return buf;
}

// "1-16,18,20" keeping the given order (only ascending runs are folded).
std::string port_list(const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!s.empty()) s += ",";
        s += std::to_string(v[i]);
        if (j > i) s += "-" + std::to_string(v[j]);
        i = j + 1;
    }
    return s;
}

// Names in order, consecutive numbered runs folded into patterns ("ib[1-6]", "node[001-324]").
std::string name_list(const std::vector<std::string>& names, size_t min_run = 3) {
    auto split = [](const std::string& n) {
        size_t k = n.size();
        while (k > 0 && std::isdigit(static_cast<unsigned char>(n[k - 1]))) --k;
        return std::make_pair(n.substr(0, k), n.substr(k));
    };
    std::string out = "[";
    bool first = true;
    for (size_t i = 0; i < names.size();) {
        auto [prefix, digits] = split(names[i]);
        size_t j = i + 1;
        if (!digits.empty() && digits.size() < 10) {
            bool padded = digits.size() > 1 && digits[0] == '0';
            long num = std::stol(digits);
            while (j < names.size()) {
                auto [p2, d2] = split(names[j]);
                if (p2 != prefix || d2.empty() || d2.size() >= 10) break;
                long n2 = std::stol(d2);
                if (n2 != num + static_cast<long>(j - i)) break;
                if (padded ? d2.size() != digits.size() : d2 != std::to_string(n2)) break;
                ++j;
            }
        }
        out += first ? "" : ", ";
        first = false;
        if (j - i >= min_run && j - i >= 2) {
            out += q(prefix + "[" + digits + "-" + split(names[j - 1]).second + "]");
        } else {
            j = i + 1;
            out += q(names[i]);
        }
        i = j;
    }
    return out + "]";
}

struct LinkKey {
    NodeId n;
    int p;
    bool operator<(const LinkKey& o) const { return std::tie(n, p) < std::tie(o.n, o.p); }
};

}  // namespace

InferredPlan infer_plan_yaml(const Fabric& f, const Analysis& a, const std::string& source, const InferOptions& opt) {
    InferredPlan out;
    const size_t n = f.size();
    const int levels = a.levels();
    auto tier = [&](NodeId x) { return x < a.tier_of.size() ? a.tier_of[x] : 0; };
    auto is_sw = [&](NodeId x) { return f.node(x).type == NodeType::Switch; };

    // ---- names a plan can carry ----
    std::vector<std::string> pname(n), phca(n);
    std::set<std::string> used;
    for (NodeId x = 0; x < n; ++x) {
        if (!is_sw(x)) continue;
        // The display name (ibf/names.h) wherever a plan can carry it; a chassis card's
        // "dir1/L12/U1" as "dir1-L12-U1" (a plan name has no '/').
        std::string c = display_name(f, a, x);
        if (!safe(c)) std::replace(c.begin(), c.end(), '/', '-');
        if (!safe(c) || used.count(c)) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "%04llx", static_cast<unsigned long long>(f.node(x).guid & 0xffff));
            c = (tier(x) ? tier_name(tier(x)) : std::string("switch")) + "-" + buf;
        }
        if (used.count(c)) c = "switch-" + hexg(f.node(x).guid, false);
        used.insert(c);
        pname[x] = c;
    }
    std::map<std::string, int> key_count;
    for (NodeId x = 0; x < n; ++x)
        if (f.node(x).type == NodeType::CA) ++key_count[f.node(x).name + ":" + derive_hca(NodeType::CA, f.node(x).description)];
    for (NodeId x = 0; x < n; ++x) {
        const Node& node = f.node(x);
        if (node.type != NodeType::CA) continue;
        std::string name = node.name, hca = derive_hca(NodeType::CA, node.description);
        // A SHARP aggregation node's description is the vendor's ("Mellanox Technologies Aggregation
        // Node"): its first words are no host name and HCA, so it takes its display name ("sharp-b208").
        bool ok = !is_aggregation_node(node) && safe(name) && (hca.empty() || safe(hca)) &&
                  key_count[name + ":" + hca] == 1 && !used.count(name);
        if (!ok) {  // the display name (ibf/names.h) when a plan can carry it
            std::string d = display_name(f, a, x);
            name = safe(d) && !used.count(d) ? d : "host-" + hexg(node.guid, false);
            hca.clear();
        }
        pname[x] = name;
        phca[x] = hca;
    }
    for (NodeId x = 0; x < n; ++x)
        if (f.node(x).type == NodeType::CA) used.insert(pname[x]);
    for (NodeId x = 0; x < n; ++x)
        if (pname[x].empty()) pname[x] = (f.node(x).type == NodeType::Router ? "router-" : "node-") + hexg(f.node(x).guid, false);

    // ---- rates, MTU ----
    std::vector<Link> links = f.links();
    auto rate_of = [&](const Link& l) { return f.node(l.a).ports[l.pa].rate(); };
    std::map<std::pair<int, int>, int> rate_count;
    for (const Link& l : links) {
        Rate r = rate_of(l);
        if (r.known()) ++rate_count[{static_cast<int>(r.width), static_cast<int>(r.speed)}];
    }
    std::optional<Rate> plan_rate;
    {
        int best = 0;
        for (auto& [k, c] : rate_count) {
            Rate r{static_cast<Width>(k.first), static_cast<Speed>(k.second)};
            if (c > best || (c == best && plan_rate && r.gbps() > plan_rate->gbps())) best = c, plan_rate = r;
        }
    }
    int mtu = -1;
    for (const Link& l : links) {
        int ma = f.node(l.a).ports[l.pa].mtu_active, mb = f.node(l.b).ports[l.pb].mtu_active;
        int m = ma && mb ? std::min(ma, mb) : 0;
        if (m == 0 || (mtu != -1 && m != mtu)) { mtu = 0; break; }
        mtu = m;
    }
    auto rate_suffix = [&](const Rate& r) -> std::string {
        if (!r.known() || (plan_rate && r == *plan_rate)) return "";
        return ", rate: " + to_string(r);
    };

    // ---- tiers ----
    std::vector<std::vector<NodeId>> members(levels + 1);
    for (const SwitchInfo& s : a.switches)
        if (s.tier > 0) members[s.tier].push_back(s.node);
    std::vector<bool> declared(levels + 1, false);
    for (int t = 1; t <= levels; ++t) {
        auto& m = members[t];
        std::sort(m.begin(), m.end(), [&](NodeId x, NodeId y) { return pname[x] < pname[y]; });
        declared[t] = !m.empty() && std::all_of(m.begin(), m.end(), [&](NodeId x) { return f.node(x).num_ports() == f.node(m[0]).num_ports(); });
    }
    std::set<LinkKey> covered;  // by either end
    auto cover = [&](NodeId x, int p) {
        const Port& pt = f.node(x).ports[p];
        covered.insert({x, p});
        covered.insert({pt.peer, pt.peer_port});
    };
    struct Pair { std::vector<int> up, down; int c = 0; std::optional<Rate> rate; std::vector<std::pair<LinkKey, Rate>> overrides; };
    std::map<int, Pair> pairs;  // lower tier -> compact uplinks
    std::vector<bool> ordered(levels + 2, false);
    std::vector<int> pods_of(levels + 2, 1);
    auto port_to = [&](NodeId lo, NodeId up) {
        std::vector<std::pair<int, int>> v;  // (upper port, lower port)
        for (int p = 1; p <= f.node(lo).num_ports(); ++p) {
            const Port& pt = f.node(lo).ports[p];
            if (pt.valid && pt.peer == up) v.emplace_back(pt.peer_port, p);
        }
        std::sort(v.begin(), v.end());
        return v;
    };
    // Records a compact pair: tier orders, covered cables, the uplink rate and its exceptions.
    auto finish = [&](int t, const std::vector<NodeId>& lowers, const std::vector<NodeId>& upper_order, Pair pr) {
        members[t] = lowers;
        members[t + 1] = upper_order;
        ordered[t] = ordered[t + 1] = true;
        std::map<std::pair<int, int>, int> rc;
        for (NodeId lo : lowers)
            for (int p : pr.up) {
                Rate r = f.node(lo).ports[p].rate();
                ++rc[{static_cast<int>(r.width), static_cast<int>(r.speed)}];
            }
        int best = 0;
        for (auto& [k, cnt] : rc)
            if (cnt > best) best = cnt, pr.rate = Rate{static_cast<Width>(k.first), static_cast<Speed>(k.second)};
        for (NodeId lo : lowers)
            for (int p : pr.up) {
                cover(lo, p);
                Rate r = f.node(lo).ports[p].rate();
                if (r.known() && pr.rate && !(r == *pr.rate)) pr.overrides.push_back({{lo, p}, r});
            }
        out.compact_switches += static_cast<int>(lowers.size());
        pairs[t] = std::move(pr);
    };
    // Lower switches of a tier that do not fit its pair's rule go to a tier of their own
    // ("leaf_other"): same ports, no compact uplinks, their uplinks explicit.
    std::vector<std::vector<NodeId>> others(levels + 1);
    for (int t = 1; t + 1 <= levels; ++t) {
        if (!declared[t] || !declared[t + 1]) continue;
        auto& uppers = members[t + 1];
        std::vector<int> sizes;
        for (NodeId lo : members[t])
            if (const SwitchInfo* si = a.info(lo))
                for (const Bundle& b : si->up_bundles) sizes.push_back(b.cables);
        int c = 0;
        {
            std::map<int, int> cnt;
            for (int x : sizes) ++cnt[x];
            int best = 0;
            for (auto& [x, k] : cnt)
                if (k >= best) best = k, c = x;
        }
        if (c <= 0) continue;
        auto fits_c = [&](NodeId lo, size_t bundles) {
            const SwitchInfo* si = a.info(lo);
            return si && si->up_bundles.size() == bundles && !si->skip_links && !si->intra_links &&
                   std::all_of(si->up_bundles.begin(), si->up_bundles.end(), [&](const Bundle& b) { return b.cables == c; });
        };
        auto min_port_to = [&](NodeId lo, NodeId up) { return port_to(lo, up)[0].second; };
        // pods: components of the lower-upper bundle graph
        std::unordered_map<NodeId, int> comp;
        int ncomp = 0;
        {
            std::unordered_map<NodeId, std::vector<NodeId>> adj;
            for (NodeId lo : members[t])
                if (const SwitchInfo* si = a.info(lo))
                    for (const Bundle& b : si->up_bundles) adj[lo].push_back(b.peer), adj[b.peer].push_back(lo);
            for (NodeId lo : members[t]) {
                if (comp.count(lo)) continue;
                std::vector<NodeId> stack{lo};
                comp[lo] = ncomp;
                while (!stack.empty()) {
                    NodeId x = stack.back();
                    stack.pop_back();
                    for (NodeId y : adj[x])
                        if (!comp.count(y)) comp[y] = ncomp, stack.push_back(y);
                }
                ++ncomp;
            }
        }
        if (!ordered[t] && ncomp > 1) {  // pod-local with several pods, all or nothing
            std::vector<std::vector<NodeId>> L(ncomp), S(ncomp);
            for (NodeId lo : members[t]) L[comp[lo]].push_back(lo);
            bool ok = true;
            for (NodeId up : uppers) {
                if (!comp.count(up)) { ok = false; break; }
                S[comp[up]].push_back(up);
            }
            for (int p = 0; p < ncomp && ok; ++p)
                ok = !S[p].empty() && L[p].size() == L[0].size() && S[p].size() == S[0].size() &&
                     std::all_of(L[p].begin(), L[p].end(), [&](NodeId lo) { return fits_c(lo, S[p].size()); });
            std::vector<int> order(ncomp);
            for (int p = 0; p < ncomp; ++p) order[p] = p;
            if (ok) {
                std::sort(order.begin(), order.end(), [&](int x, int y) {
                    auto mx = *std::min_element(L[x].begin(), L[x].end(), [&](NodeId u, NodeId v) { return pname[u] < pname[v]; });
                    auto my = *std::min_element(L[y].begin(), L[y].end(), [&](NodeId u, NodeId v) { return pname[u] < pname[v]; });
                    return pname[mx] < pname[my];
                });
            }
            Pair pr0;
            pr0.c = c;
            std::vector<NodeId> all_l, all_s;
            for (int oi = 0; oi < ncomp && ok; ++oi) {
                auto& lp = L[order[oi]];
                auto& sp = S[order[oi]];
                NodeId s0 = *std::min_element(sp.begin(), sp.end());
                std::sort(lp.begin(), lp.end(), [&](NodeId x, NodeId y) { return port_to(x, s0)[0].first < port_to(y, s0)[0].first; });
                std::vector<int> down, up;
                for (NodeId lo : lp)
                    for (auto& e : port_to(lo, s0)) down.push_back(e.first);
                NodeId tl = lp[0];
                std::sort(sp.begin(), sp.end(), [&](NodeId x, NodeId y) { return min_port_to(tl, x) < min_port_to(tl, y); });
                for (NodeId u : sp) {
                    auto v = port_to(tl, u);
                    for (int j = 0; j < c && ok; ++j) {
                        auto it = std::find_if(v.begin(), v.end(), [&](auto& e) { return e.first == down[j]; });
                        if (it == v.end()) ok = false; else up.push_back(it->second);
                    }
                }
                if (!ok) break;
                if (oi == 0) pr0.up = up, pr0.down = down;
                else if (up != pr0.up || down != pr0.down) { ok = false; break; }
                for (size_t r = 0; r < lp.size() && ok; ++r)
                    for (size_t k = 0; k < up.size() && ok; ++k) {
                        const Port& pt = f.node(lp[r]).ports[up[k]];
                        ok = pt.valid && pt.peer == sp[k / c] && pt.peer_port == down[r * c + k % c];
                    }
                all_l.insert(all_l.end(), lp.begin(), lp.end());
                all_s.insert(all_s.end(), sp.begin(), sp.end());
            }
            if (ok) {
                pods_of[t] = pods_of[t + 1] = ncomp;
                finish(t, all_l, all_s, std::move(pr0));
            }
            continue;
        }
        if (ordered[t] && pods_of[t] > 1) {  // planes: position j of every pod -> plane j of the upper tier
            const int P = pods_of[t];
            auto& lowers = members[t];
            const size_t nper = lowers.size() / static_cast<size_t>(P);
            bool ok = nper > 0 && uppers.size() % nper == 0;
            const size_t g = ok ? uppers.size() / nper : 0;
            for (NodeId lo : lowers) ok = ok && fits_c(lo, g);
            auto lower_at = [&](int p, size_t j) { return lowers[static_cast<size_t>(p) * nper + j]; };
            std::vector<std::vector<NodeId>> planes(nper);
            std::set<NodeId> seen;
            for (size_t j = 0; j < nper && ok; ++j) {
                for (const Bundle& b : a.info(lower_at(0, j))->up_bundles) planes[j].push_back(b.peer);
                std::sort(planes[j].begin(), planes[j].end());
                for (int p = 1; p < P && ok; ++p) {
                    std::vector<NodeId> mine;
                    for (const Bundle& b : a.info(lower_at(p, j))->up_bundles) mine.push_back(b.peer);
                    std::sort(mine.begin(), mine.end());
                    ok = mine == planes[j];
                }
                for (NodeId u : planes[j]) ok = ok && seen.insert(u).second;
            }
            Pair pr;
            pr.c = c;
            if (ok) {
                NodeId tl = lower_at(0, 0);
                std::sort(planes[0].begin(), planes[0].end(), [&](NodeId x, NodeId y) { return min_port_to(tl, x) < min_port_to(tl, y); });
                NodeId core0 = planes[0][0];
                for (int p = 0; p < P; ++p)
                    for (auto& e : port_to(lower_at(p, 0), core0)) pr.down.push_back(e.first);
                for (NodeId u : planes[0]) {
                    auto v = port_to(tl, u);
                    for (int j = 0; j < c && ok; ++j) {
                        auto it = std::find_if(v.begin(), v.end(), [&](auto& e) { return e.first == pr.down[j]; });
                        if (it == v.end()) ok = false; else pr.up.push_back(it->second);
                    }
                }
            }
            for (size_t j = 1; j < nper && ok; ++j) {
                NodeId lj = lower_at(0, j);
                auto index_of = [&](NodeId u) {
                    auto it = std::find(pr.up.begin(), pr.up.end(), min_port_to(lj, u));
                    return it - pr.up.begin();
                };
                std::sort(planes[j].begin(), planes[j].end(), [&](NodeId x, NodeId y) { return index_of(x) < index_of(y); });
            }
            for (int p = 0; p < P && ok; ++p)
                for (size_t j = 0; j < nper && ok; ++j)
                    for (size_t k = 0; k < pr.up.size() && ok; ++k) {
                        const Port& pt = f.node(lower_at(p, j)).ports[pr.up[k]];
                        ok = pt.valid && pt.peer == planes[j][k / c] && pt.peer_port == pr.down[static_cast<size_t>(p) * c + k % c];
                    }
            if (ok) {
                std::vector<NodeId> all_s;
                for (auto& pl : planes) all_s.insert(all_s.end(), pl.begin(), pl.end());
                std::vector<NodeId> all_l = lowers;
                finish(t, all_l, all_s, std::move(pr));
            }
            continue;
        }
        std::vector<NodeId> cand;
        for (NodeId lo : members[t]) {
            const SwitchInfo* si = a.info(lo);
            bool fits = si && si->up_bundles.size() == uppers.size() && !si->skip_links && !si->intra_links &&
                        std::all_of(si->up_bundles.begin(), si->up_bundles.end(), [&](const Bundle& b) { return b.cables == c; });
            if (fits) cand.push_back(lo);
        }
        if (ordered[t] && cand.size() != members[t].size()) continue;  // its order is fixed by the pair below
        NodeId s0 = uppers[0];
        std::optional<Pair> found;
        std::vector<NodeId> upper_order;
        for (size_t attempt = 0; attempt < 3 && !cand.empty() && !found;) {
            if (!ordered[t])
                std::sort(cand.begin(), cand.end(), [&](NodeId x, NodeId y) { return port_to(x, s0)[0].first < port_to(y, s0)[0].first; });
            size_t tr = std::min(attempt, cand.size() - 1);  // template rank
            Pair pr;
            pr.c = c;
            for (NodeId lo : cand)
                for (auto& e : port_to(lo, s0)) pr.down.push_back(e.first);
            NodeId tl = cand[tr];
            upper_order = uppers;
            std::sort(upper_order.begin(), upper_order.end(), [&](NodeId x, NodeId y) { return port_to(tl, x)[0].second < port_to(tl, y)[0].second; });
            bool ok = true;
            for (NodeId up : upper_order) {
                auto v = port_to(tl, up);
                for (int j = 0; j < c && ok; ++j) {
                    auto it = std::find_if(v.begin(), v.end(), [&](auto& e) { return e.first == pr.down[tr * c + j]; });
                    if (it == v.end()) ok = false; else pr.up.push_back(it->second);
                }
            }
            std::vector<NodeId> failing;
            for (size_t r = 0; r < cand.size() && ok; ++r)
                for (size_t k = 0; k < pr.up.size(); ++k) {
                    const Port& pt = f.node(cand[r]).ports[pr.up[k]];
                    if (!(pt.valid && pt.peer == upper_order[k / c] && pt.peer_port == pr.down[r * c + k % c])) {
                        failing.push_back(cand[r]);
                        break;
                    }
                }
            if (ok && failing.empty()) {
                found = std::move(pr);
            } else if (ok && !ordered[t] && failing.size() * 2 < cand.size()) {
                for (NodeId x : failing) cand.erase(std::find(cand.begin(), cand.end(), x));
            } else {
                ++attempt;
            }
        }
        if (!found) continue;
        for (NodeId lo : members[t])
            if (std::find(cand.begin(), cand.end(), lo) == cand.end()) others[t].push_back(lo);
        finish(t, cand, upper_order, std::move(*found));
    }
    std::vector<bool> in_declared(n, false);
    for (int t = 1; t <= levels; ++t) {
        std::sort(others[t].begin(), others[t].end(), [&](NodeId x, NodeId y) { return pname[x] < pname[y]; });
        if (declared[t])
            for (NodeId x : members[t]) in_declared[x] = true;
        for (NodeId x : others[t]) in_declared[x] = true;  // same port count as their tier
    }

    // ---- host groups: per leaf, HCA, HCA port and rate ----
    std::string hosts_yaml;
    struct HostGroup {
        std::vector<NodeId> sws;  // leaves, a numbered run
        std::string hca;
        int hport = 1;
        Rate rate;
        std::vector<int> ports;
        std::vector<std::string> names;
    };
    std::vector<HostGroup> hgroups;
    std::set<NodeId> grouped;
    std::map<NodeId, std::set<int>> host_ports;  // per leaf, ports used by host groups
    if (levels >= 1 && declared[1]) {
        std::vector<NodeId> leaves = members[1];
        leaves.insert(leaves.end(), others[1].begin(), others[1].end());
        for (NodeId s : leaves) {
            std::map<std::tuple<std::string, int, int, int>, std::vector<std::pair<int, NodeId>>> groups;
            for (int p = 1; p <= f.node(s).num_ports(); ++p) {
                const Port& pt = f.node(s).ports[p];
                if (!pt.valid || !pt.linked() || f.node(pt.peer).type != NodeType::CA) continue;
                if (is_aggregation_node(f.node(pt.peer)) || grouped.count(pt.peer)) continue;
                Rate r = pt.rate();
                groups[{phca[pt.peer], pt.peer_port, static_cast<int>(r.width), static_cast<int>(r.speed)}].push_back({p, pt.peer});
                grouped.insert(pt.peer);
            }
            for (auto& [key, v] : groups) {
                auto& [hca, hport, w, sp] = key;
                std::sort(v.begin(), v.end());
                HostGroup g{{s}, hca, hport, Rate{static_cast<Width>(w), static_cast<Speed>(sp)}, {}, {}};
                for (auto& [p, h] : v) g.names.push_back(pname[h]), g.ports.push_back(p), host_ports[s].insert(p), cover(s, p);
                out.compact_hosts += static_cast<int>(v.size());
                // Leaves in a numbered run with the same host layout share one group.
                if (!hgroups.empty()) {
                    HostGroup& prev = hgroups.back();
                    if (prev.hca == g.hca && prev.hport == g.hport && prev.rate == g.rate && prev.ports == g.ports) {
                        std::vector<std::string> sws;
                        for (NodeId x : prev.sws) sws.push_back(pname[x]);
                        sws.push_back(pname[s]);
                        if (name_list(sws, 2).find("\", \"") == std::string::npos) {
                            prev.sws.push_back(s);
                            prev.names.insert(prev.names.end(), g.names.begin(), g.names.end());
                            continue;
                        }
                    }
                }
                hgroups.push_back(std::move(g));
            }
        }
    }
    for (const HostGroup& g : hgroups) {
        std::vector<std::string> sws;
        for (NodeId x : g.sws) sws.push_back(pname[x]);
        std::string attach = name_list(sws, 2);
        attach = attach.substr(1, attach.size() - 2);  // the one quoted pattern
        hosts_yaml += "  - {names: " + name_list(g.names) + (g.hca.empty() ? "" : ", hca: " + q(g.hca)) +
                      ", port: " + std::to_string(g.hport) + ", attach: " + attach + ", ports: " + q(port_list(g.ports)) +
                      ", per_switch: " + std::to_string(g.ports.size()) + rate_suffix(g.rate) + "}\n";
    }

    // ---- write ----
    std::string y;
    y += "# Plan inferred by `ibfabric plan from-dump` from " + source + "\n";
    y += "# " + std::to_string(f.count(NodeType::Switch)) + " switches, " + std::to_string(f.count(NodeType::CA)) + " CAs, " +
         std::to_string(links.size()) + " links. " +
         (opt.pin_all_guids ? "Every node is pinned by GUID under nodes:.\n"
                            : "Nodes are matched by name; those with generated names are pinned by GUID under nodes:.\n");
    y += "version: 1\n";
    y += "name: " + q("from-dump") + "\n";
    if (plan_rate) y += "rate: " + to_string(*plan_rate) + "\n";
    if (mtu > 0) y += "mtu: " + std::to_string(mtu) + "\n";
    bool any_tier = false;
    for (int t = 1; t <= levels; ++t) any_tier |= declared[t];
    if (any_tier) {
        y += "\nswitches:\n";
        auto down_of = [&](const std::vector<NodeId>& sws) {
            std::set<int> d;
            for (NodeId x : sws)
                if (host_ports.count(x)) d.insert(host_ports[x].begin(), host_ports[x].end());
            return std::vector<int>(d.begin(), d.end());
        };
        for (int t = 1; t <= levels; ++t) {
            if (!declared[t]) continue;
            if (!others[t].empty()) {
                std::vector<std::string> names;
                for (NodeId x : others[t]) names.push_back(pname[x]);
                y += "  " + tier_name(t) + "_other:   # " + tier_name(t) + " switches whose uplinks do not follow the rule: explicit cables\n";
                y += "    names: " + name_list(names) + "\n";
                y += "    ports: " + std::to_string(f.node(others[t][0]).num_ports()) + "\n";
                std::vector<int> down = down_of(others[t]);
                if (!down.empty()) y += "    down: " + q(port_list(down)) + "\n";
            }
            std::vector<std::string> names;
            for (NodeId x : members[t]) names.push_back(pname[x]);
            out.tier_switches += static_cast<int>(members[t].size() + others[t].size());
            y += "  " + tier_name(t) + ":\n";
            y += "    names: " + name_list(names) + "\n";
            y += "    ports: " + std::to_string(f.node(members[t][0]).num_ports()) + "\n";
            if (pods_of[t] > 1) y += "    pods: " + std::to_string(pods_of[t]) + "\n";
            std::vector<int> down;
            if (pairs.count(t - 1)) down = pairs[t - 1].down;
            else if (t == 1) down = down_of(members[1]);
            if (!down.empty()) y += "    down: " + q(port_list(down)) + "\n";
            if (pairs.count(t)) {
                const Pair& pr = pairs[t];
                y += "    up: " + q(port_list(pr.up)) + "\n";
                y += "    up_to: " + tier_name(t + 1) + "\n";
                if (pr.c != 1) y += "    cables_per_pair: " + std::to_string(pr.c) + "\n";
                if (pr.rate && !(plan_rate && *pr.rate == *plan_rate)) y += "    rate: " + to_string(*pr.rate) + "\n";
            }
        }
    }
    if (!hosts_yaml.empty()) y += "\nhosts:\n" + hosts_yaml;

    auto end_yaml = [&](NodeId x, int p) {
        std::string s = "{node: " + q(pname[x]);
        if (!phca[x].empty()) s += ", hca: " + q(phca[x]);
        return s + ", port: " + std::to_string(p) + "}";
    };
    std::string cables;
    for (const Link& l : links) {
        if (covered.count({l.a, l.pa})) continue;
        cables += "  - {a: " + end_yaml(l.a, l.pa) + ", b: " + end_yaml(l.b, l.pb) + rate_suffix(rate_of(l)) + "}\n";
        ++out.explicit_cables;
    }
    if (!cables.empty()) y += "\ncables:\n" + cables;

    std::string overrides;
    for (auto& [t, pr] : pairs)
        for (auto& [k, r] : pr.overrides)
            overrides += "  - {port: " + q(pname[k.n] + "/" + std::to_string(k.p)) + ", rate: " + to_string(r) + "}\n";
    if (!overrides.empty()) y += "\noverrides:\n" + overrides;

    std::string nodes;
    for (NodeId x = 0; x < n; ++x) {
        const Node& node = f.node(x);
        if (node.type != NodeType::Switch && node.type != NodeType::CA) {
            nodes += "  " + q(pname[x]) + ": {type: router, ports: " + std::to_string(node.num_ports()) + ", guid: " + hexg(node.guid) + "}\n";
            continue;
        }
        std::string key = pname[x] + (phca[x].empty() ? "" : ":" + phca[x]);
        const bool own_name = pname[x] == node.name && phca[x] == (is_sw(x) ? std::string() : derive_hca(NodeType::CA, node.description));
        const bool pin = opt.pin_all_guids || !own_name;
        if (in_declared[x] || grouped.count(x)) {
            if (pin) nodes += "  " + q(key) + ": " + hexg(node.guid) + "\n";
        } else {
            nodes += "  " + q(key) + ": {type: " + (is_sw(x) ? "switch" : "ca") + ", ports: " + std::to_string(node.num_ports()) +
                 (pin ? ", guid: " + hexg(node.guid) : std::string()) + "}\n";
        }
    }
    if (!nodes.empty()) y += "\nnodes:\n" + nodes;
    out.yaml = std::move(y);
    return out;
}

}  // namespace ibf
