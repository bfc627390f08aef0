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

// A name a plan can carry as it is (and that needs no pattern syntax).
bool safe(const std::string& s) {
    if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0])) || !plan_name_ok(s)) return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/'; });
}

std::string hexg(Guid g) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(g));
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
std::vector<std::string> name_list(const std::vector<std::string>& names, size_t min_run = 3) {
    auto split = [](const std::string& n) {
        size_t k = n.size();
        while (k > 0 && std::isdigit(static_cast<unsigned char>(n[k - 1]))) --k;
        return std::make_pair(n.substr(0, k), n.substr(k));
    };
    std::vector<std::string> out;
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
        if (j - i >= min_run && j - i >= 2) {
            out.push_back(prefix + "[" + digits + "-" + split(names[j - 1]).second + "]");
        } else {
            j = i + 1;
            out.push_back(names[i]);
        }
        i = j;
    }
    return out;
}

struct LinkKey {
    NodeId n;
    int p;
    bool operator<(const LinkKey& o) const { return std::tie(n, p) < std::tie(o.n, o.p); }
};

using RateKey = std::pair<int, int>;
RateKey key_of(const Rate& r) { return {static_cast<int>(r.width), static_cast<int>(r.speed)}; }
Rate rate_at(const RateKey& k) { return Rate{static_cast<Width>(k.first), static_cast<Speed>(k.second)}; }

// A compact tier pair: the lower tier's uplink ports, the upper tier's down ports, cables per
// switch pair, the uplink rate and the uplinks that run at another rate.
struct Pair {
    std::vector<int> up, down;
    int c = 0;
    std::optional<Rate> rate;
    std::vector<std::pair<LinkKey, Rate>> overrides;
};

// What the steps of infer_plan() share.
struct Infer {
    const Fabric& f;
    const Analysis& a;
    int levels = 0;
    std::vector<std::string> pname, phca;              // the names a plan can carry, by NodeId
    std::vector<std::vector<NodeId>> members, others;  // by tier; others: the "<tier>_other" switches
    std::vector<bool> declared, ordered;               // by tier: written under switches:, order fixed
    std::vector<int> pods_of;
    std::set<LinkKey> covered;                         // links written compactly, by either end
    std::map<int, Pair> pairs;                         // lower tier -> compact uplinks
    std::set<NodeId> grouped;                          // hosts in host groups
    std::map<NodeId, std::set<int>> host_ports;        // per leaf, ports used by host groups
    std::optional<Rate> plan_rate;                     // the plan-wide (majority) rate
    InferredPlan out;

    int tier(NodeId x) const { return x < a.tier_of.size() ? a.tier_of[x] : 0; }
    bool is_sw(NodeId x) const { return f.node(x).type == NodeType::Switch; }
};

// ---- names a plan can carry ----

void name_switches(Infer& s, std::set<std::string>& used) {
    for (NodeId x = 0; x < s.f.size(); ++x) {
        if (!s.is_sw(x)) continue;
        // The display name (ibf/names.h) wherever a plan can carry it, a chassis card's
        // "dir1/L12/U1" too, so check, analyze and the plan name a node alike.
        std::string c = display_name(s.f, s.a, x);
        if (!safe(c) || used.count(c)) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "%04llx", static_cast<unsigned long long>(s.f.node(x).guid & 0xffff));
            c = (s.tier(x) ? tier_name(s.tier(x)) : std::string("switch")) + "-" + buf;
        }
        if (used.count(c)) c = "switch-" + hexg(s.f.node(x).guid);
        used.insert(c);
        s.pname[x] = c;
    }
}

void name_hosts(Infer& s, std::set<std::string>& used) {
    const Fabric& f = s.f;
    std::map<std::string, int> key_count;
    for (NodeId x = 0; x < f.size(); ++x)
        if (f.node(x).type == NodeType::CA) ++key_count[f.node(x).name + ":" + derive_hca(NodeType::CA, f.node(x).description)];
    for (NodeId x = 0; x < f.size(); ++x) {
        const Node& node = f.node(x);
        if (node.type != NodeType::CA) continue;
        std::string name = node.name, hca = derive_hca(NodeType::CA, node.description);
        // A SHARP aggregation node's description is the vendor's ("Mellanox Technologies Aggregation
        // Node"): its first words are no host name and HCA, so it takes its display name ("sharp-b208").
        bool ok = !is_aggregation_node(node) && safe(name) && (hca.empty() || (safe(hca) && hca.find('/') == std::string::npos)) &&
                  key_count[name + ":" + hca] == 1 && !used.count(name);
        if (!ok) {  // the display name (ibf/names.h) when a plan can carry it
            std::string d = display_name(f, s.a, x);
            name = safe(d) && !used.count(d) ? d : "host-" + hexg(node.guid);
            hca.clear();
        }
        s.pname[x] = name;
        s.phca[x] = hca;
    }
    for (NodeId x = 0; x < f.size(); ++x)
        if (f.node(x).type == NodeType::CA) used.insert(s.pname[x]);
    for (NodeId x = 0; x < f.size(); ++x)
        if (s.pname[x].empty()) s.pname[x] = (f.node(x).type == NodeType::Router ? "router-" : "node-") + hexg(f.node(x).guid);
}

// ---- rates, MTU ----

Rate rate_of(const Fabric& f, const Link& l) { return f.node(l.a).ports[l.pa].rate(); }

// The most frequent known rate; on a tie the faster one.
std::optional<Rate> majority_rate(const Fabric& f, const std::vector<Link>& links) {
    std::map<RateKey, int> rate_count;
    for (const Link& l : links) {
        Rate r = rate_of(f, l);
        if (r.known()) ++rate_count[key_of(r)];
    }
    std::optional<Rate> plan_rate;
    int best = 0;
    for (auto& [k, c] : rate_count) {
        Rate r = rate_at(k);
        if (c > best || (c == best && plan_rate && r.gbps() > plan_rate->gbps())) best = c, plan_rate = r;
    }
    return plan_rate;
}

// The MTU every link reports, else 0.
int common_mtu(const Fabric& f, const std::vector<Link>& links) {
    int mtu = -1;
    for (const Link& l : links) {
        int ma = f.node(l.a).ports[l.pa].mtu_active, mb = f.node(l.b).ports[l.pb].mtu_active;
        int m = ma && mb ? std::min(ma, mb) : 0;
        if (m == 0 || (mtu != -1 && m != mtu)) return 0;
        mtu = m;
    }
    return mtu > 0 ? mtu : 0;
}

// A rate to write: none when unknown or the plan-wide one.
std::optional<Rate> unless_plan_rate(const Infer& s, const Rate& r) {
    if (!r.known() || (s.plan_rate && r == *s.plan_rate)) return std::nullopt;
    return r;
}

// ---- tiers ----

// (upper port, lower port) of every cable from `lo` to `up`, by upper port.
std::vector<std::pair<int, int>> port_to(const Fabric& f, NodeId lo, NodeId up) {
    std::vector<std::pair<int, int>> v;
    for (int p = 1; p <= f.node(lo).num_ports(); ++p) {
        const Port& pt = f.node(lo).ports[p];
        if (pt.valid && pt.peer == up) v.emplace_back(pt.peer_port, p);
    }
    std::sort(v.begin(), v.end());
    return v;
}

int min_port_to(const Fabric& f, NodeId lo, NodeId up) { return port_to(f, lo, up)[0].second; }

void cover(Infer& s, NodeId x, int p) {
    const Port& pt = s.f.node(x).ports[p];
    s.covered.insert({x, p});
    s.covered.insert({pt.peer, pt.peer_port});
}

void init_tiers(Infer& s) {
    const int levels = s.levels;
    s.members.assign(levels + 1, {});
    s.others.assign(levels + 1, {});
    for (const SwitchInfo& si : s.a.switches)
        if (si.tier > 0) s.members[si.tier].push_back(si.node);
    s.declared.assign(levels + 1, false);
    for (int t = 1; t <= levels; ++t) {
        auto& m = s.members[t];
        std::sort(m.begin(), m.end(), [&](NodeId x, NodeId y) { return s.pname[x] < s.pname[y]; });
        s.declared[t] = !m.empty() && std::all_of(m.begin(), m.end(), [&](NodeId x) { return s.f.node(x).num_ports() == s.f.node(m[0]).num_ports(); });
    }
    s.ordered.assign(levels + 2, false);
    s.pods_of.assign(levels + 2, 1);
}

// Records a compact pair: tier orders, covered cables, the uplink rate and its exceptions.
void finish(Infer& s, int t, const std::vector<NodeId>& lowers, const std::vector<NodeId>& upper_order, Pair pr) {
    s.members[t] = lowers;
    s.members[t + 1] = upper_order;
    s.ordered[t] = s.ordered[t + 1] = true;
    std::map<RateKey, int> rc;
    for (NodeId lo : lowers)
        for (int p : pr.up) ++rc[key_of(s.f.node(lo).ports[p].rate())];
    int best = 0;
    for (auto& [k, cnt] : rc)
        if (cnt > best) best = cnt, pr.rate = rate_at(k);
    for (NodeId lo : lowers)
        for (int p : pr.up) {
            cover(s, lo, p);
            Rate r = s.f.node(lo).ports[p].rate();
            if (r.known() && pr.rate && !(r == *pr.rate)) pr.overrides.push_back({{lo, p}, r});
        }
    s.out.compact_switches += static_cast<int>(lowers.size());
    s.pairs[t] = std::move(pr);
}

// The most frequent uplink bundle size of tier t (on a tie the larger), 0 when none.
int common_bundle(const Infer& s, int t) {
    std::map<int, int> cnt;
    for (NodeId lo : s.members[t])
        if (const SwitchInfo* si = s.a.info(lo))
            for (const Bundle& b : si->up_bundles) ++cnt[b.cables];
    int best = 0, c = 0;
    for (auto& [x, k] : cnt)
        if (k >= best) best = k, c = x;
    return c;
}

// `lo` has `bundles` uplink bundles of c cables each, and no skip or intra-tier links.
bool fits(const Infer& s, NodeId lo, size_t bundles, int c) {
    const SwitchInfo* si = s.a.info(lo);
    return si && si->up_bundles.size() == bundles && !si->skip_links && !si->intra_links &&
           std::all_of(si->up_bundles.begin(), si->up_bundles.end(), [&](const Bundle& b) { return b.cables == c; });
}

// Pods: the components of tier t's lower-upper bundle graph.
struct Pods {
    std::unordered_map<NodeId, int> comp;
    int n = 0;
};

Pods find_pods(const Infer& s, int t) {
    Pods pods;
    std::unordered_map<NodeId, std::vector<NodeId>> adj;
    for (NodeId lo : s.members[t])
        if (const SwitchInfo* si = s.a.info(lo))
            for (const Bundle& b : si->up_bundles) adj[lo].push_back(b.peer), adj[b.peer].push_back(lo);
    for (NodeId lo : s.members[t]) {
        if (pods.comp.count(lo)) continue;
        std::vector<NodeId> stack{lo};
        pods.comp[lo] = pods.n;
        while (!stack.empty()) {
            NodeId x = stack.back();
            stack.pop_back();
            for (NodeId y : adj[x])
                if (!pods.comp.count(y)) pods.comp[y] = pods.n, stack.push_back(y);
        }
        ++pods.n;
    }
    return pods;
}

// The uplink ports of template switch `tl` towards `uppers` in order, c per upper switch, matched
// to the down ports `down[first..first+c)`; false when a cable is not there.
bool uplinks_of(const Fabric& f, NodeId tl, const std::vector<NodeId>& uppers, const std::vector<int>& down, size_t first,
                int c, std::vector<int>& up) {
    for (NodeId u : uppers) {
        auto v = port_to(f, tl, u);
        for (int j = 0; j < c; ++j) {
            auto it = std::find_if(v.begin(), v.end(), [&](auto& e) { return e.first == down[first + static_cast<size_t>(j)]; });
            if (it == v.end()) return false;
            up.push_back(it->second);
        }
    }
    return true;
}

// Pod-local uplinks with several pods (tier t not ordered yet): every pod's lower switches reach
// every upper switch of the pod alike, the same ports in every pod. A plan's pods are equal, so
// pods of another size (a partial last pod: 5 leaves where the others have 18), fewer than half of
// them, move with their upper switches to "<tier>_other" (explicit cables) and the rest stays
// compact; else all pods or none.
void compact_pods(Infer& s, int t, int c, const Pods& pods) {
    const Fabric& f = s.f;
    const int ncomp = pods.n;
    auto by_name = [&](NodeId u, NodeId v) { return s.pname[u] < s.pname[v]; };
    std::vector<std::vector<NodeId>> L(ncomp), S(ncomp);
    for (NodeId lo : s.members[t]) L[pods.comp.at(lo)].push_back(lo);
    bool ok = true;
    for (NodeId up : s.members[t + 1]) {
        if (!pods.comp.count(up)) { ok = false; break; }
        S[pods.comp.at(up)].push_back(up);
    }
    // The pods' usual shape (lower, upper switches; on a tie the larger), and the others.
    std::map<std::pair<size_t, size_t>, int> shapes;
    for (int p = 0; p < ncomp; ++p) ++shapes[{L[p].size(), S[p].size()}];
    std::pair<size_t, size_t> shape{0, 0};
    int most = 0;
    for (auto& [sh, n] : shapes)
        if (n >= most) most = n, shape = sh;
    std::vector<int> order, odd;
    for (int p = 0; p < ncomp; ++p)
        (std::make_pair(L[p].size(), S[p].size()) == shape ? order : odd).push_back(p);
    ok = ok && odd.size() * 2 < static_cast<size_t>(ncomp) && order.size() >= 2;
    for (int p : order)
        ok = ok && !S[p].empty() &&
             std::all_of(L[p].begin(), L[p].end(), [&](NodeId lo) { return fits(s, lo, S[p].size(), c); });
    if (ok) {
        std::sort(order.begin(), order.end(), [&](int x, int y) {
            return s.pname[*std::min_element(L[x].begin(), L[x].end(), by_name)] < s.pname[*std::min_element(L[y].begin(), L[y].end(), by_name)];
        });
    }
    Pair pr0;
    pr0.c = c;
    std::vector<NodeId> all_l, all_s;
    for (size_t oi = 0; oi < order.size() && ok; ++oi) {
        auto& lp = L[order[oi]];
        auto& sp = S[order[oi]];
        NodeId s0 = *std::min_element(sp.begin(), sp.end());
        std::sort(lp.begin(), lp.end(), [&](NodeId x, NodeId y) { return port_to(f, x, s0)[0].first < port_to(f, y, s0)[0].first; });
        std::vector<int> down, up;
        for (NodeId lo : lp)
            for (auto& e : port_to(f, lo, s0)) down.push_back(e.first);
        NodeId tl = lp[0];
        std::sort(sp.begin(), sp.end(), [&](NodeId x, NodeId y) { return min_port_to(f, tl, x) < min_port_to(f, tl, y); });
        if (!(ok = uplinks_of(f, tl, sp, down, 0, c, up))) break;
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
        for (int p : odd) {
            s.others[t].insert(s.others[t].end(), L[p].begin(), L[p].end());
            s.others[t + 1].insert(s.others[t + 1].end(), S[p].begin(), S[p].end());
        }
        s.pods_of[t] = s.pods_of[t + 1] = static_cast<int>(order.size());
        finish(s, t, all_l, all_s, std::move(pr0));
    }
}

// The upper switches of each plane: plane j is what position j of every pod reaches; empty when
// the pods disagree or an upper switch is in two planes.
std::vector<std::vector<NodeId>> find_planes(const Infer& s, int t, int c) {
    const int P = s.pods_of[t];
    const auto& lowers = s.members[t];
    const size_t nper = lowers.size() / static_cast<size_t>(P);
    bool ok = nper > 0 && s.members[t + 1].size() % nper == 0;
    const size_t g = ok ? s.members[t + 1].size() / nper : 0;
    for (NodeId lo : lowers) ok = ok && fits(s, lo, g, c);
    auto lower_at = [&](int p, size_t j) { return lowers[static_cast<size_t>(p) * nper + j]; };
    std::vector<std::vector<NodeId>> planes(nper);
    std::set<NodeId> seen;
    for (size_t j = 0; j < nper && ok; ++j) {
        for (const Bundle& b : s.a.info(lower_at(0, j))->up_bundles) planes[j].push_back(b.peer);
        std::sort(planes[j].begin(), planes[j].end());
        for (int p = 1; p < P && ok; ++p) {
            std::vector<NodeId> mine;
            for (const Bundle& b : s.a.info(lower_at(p, j))->up_bundles) mine.push_back(b.peer);
            std::sort(mine.begin(), mine.end());
            ok = mine == planes[j];
        }
        for (NodeId u : planes[j]) ok = ok && seen.insert(u).second;
    }
    return ok ? planes : std::vector<std::vector<NodeId>>{};
}

// Planes (tier t ordered in several pods): position j of every pod -> plane j of the upper tier.
void compact_planes(Infer& s, int t, int c) {
    const Fabric& f = s.f;
    std::vector<std::vector<NodeId>> planes = find_planes(s, t, c);
    if (planes.empty()) return;
    const int P = s.pods_of[t];
    const auto& lowers = s.members[t];
    const size_t nper = planes.size();
    auto lower_at = [&](int p, size_t j) { return lowers[static_cast<size_t>(p) * nper + j]; };
    Pair pr;
    pr.c = c;
    NodeId tl = lower_at(0, 0);
    std::sort(planes[0].begin(), planes[0].end(), [&](NodeId x, NodeId y) { return min_port_to(f, tl, x) < min_port_to(f, tl, y); });
    NodeId core0 = planes[0][0];
    for (int p = 0; p < P; ++p)
        for (auto& e : port_to(f, lower_at(p, 0), core0)) pr.down.push_back(e.first);
    bool ok = uplinks_of(f, tl, planes[0], pr.down, 0, c, pr.up);
    for (size_t j = 1; j < nper && ok; ++j) {
        NodeId lj = lower_at(0, j);
        auto index_of = [&](NodeId u) { return std::find(pr.up.begin(), pr.up.end(), min_port_to(f, lj, u)) - pr.up.begin(); };
        std::sort(planes[j].begin(), planes[j].end(), [&](NodeId x, NodeId y) { return index_of(x) < index_of(y); });
    }
    for (int p = 0; p < P && ok; ++p)
        for (size_t j = 0; j < nper && ok; ++j)
            for (size_t k = 0; k < pr.up.size() && ok; ++k) {
                const Port& pt = f.node(lower_at(p, j)).ports[pr.up[k]];
                ok = pt.valid && pt.peer == planes[j][k / c] && pt.peer_port == pr.down[static_cast<size_t>(p) * c + k % c];
            }
    if (!ok) return;
    std::vector<NodeId> all_s;
    for (auto& pl : planes) all_s.insert(all_s.end(), pl.begin(), pl.end());
    std::vector<NodeId> all_l = lowers;
    finish(s, t, all_l, all_s, std::move(pr));
}

// One pod: every lower switch that fits reaches every upper switch alike. Up to three template
// switches are tried; lower switches that break the rule (fewer than half) move to "<tier>_other".
void compact_single(Infer& s, int t, int c) {
    const Fabric& f = s.f;
    const auto& uppers = s.members[t + 1];
    std::vector<NodeId> cand;
    for (NodeId lo : s.members[t])
        if (fits(s, lo, uppers.size(), c)) cand.push_back(lo);
    if (s.ordered[t] && cand.size() != s.members[t].size()) return;  // its order is fixed by the pair below
    NodeId s0 = uppers[0];
    std::optional<Pair> found;
    std::vector<NodeId> upper_order;
    for (size_t attempt = 0; attempt < 3 && !cand.empty() && !found;) {
        if (!s.ordered[t])
            std::sort(cand.begin(), cand.end(), [&](NodeId x, NodeId y) { return port_to(f, x, s0)[0].first < port_to(f, y, s0)[0].first; });
        size_t tr = std::min(attempt, cand.size() - 1);  // template rank
        Pair pr;
        pr.c = c;
        for (NodeId lo : cand)
            for (auto& e : port_to(f, lo, s0)) pr.down.push_back(e.first);
        NodeId tl = cand[tr];
        upper_order = uppers;
        std::sort(upper_order.begin(), upper_order.end(), [&](NodeId x, NodeId y) { return port_to(f, tl, x)[0].second < port_to(f, tl, y)[0].second; });
        const bool ok = uplinks_of(f, tl, upper_order, pr.down, tr * static_cast<size_t>(c), c, pr.up);
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
        } else if (ok && !s.ordered[t] && failing.size() * 2 < cand.size()) {
            for (NodeId x : failing) cand.erase(std::find(cand.begin(), cand.end(), x));
        } else {
            ++attempt;
        }
    }
    if (!found) return;
    for (NodeId lo : s.members[t])
        if (std::find(cand.begin(), cand.end(), lo) == cand.end()) s.others[t].push_back(lo);
    finish(s, t, cand, upper_order, std::move(*found));
}

// Each pair of declared tiers, bottom up: compact uplinks where the cabling follows the rule.
void infer_tiers(Infer& s) {
    init_tiers(s);
    for (int t = 1; t + 1 <= s.levels; ++t) {
        if (!s.declared[t] || !s.declared[t + 1]) continue;
        const int c = common_bundle(s, t);
        if (c <= 0) continue;
        const Pods pods = find_pods(s, t);
        if (!s.ordered[t] && pods.n > 1) compact_pods(s, t, c, pods);
        else if (s.ordered[t] && s.pods_of[t] > 1) compact_planes(s, t, c);
        else compact_single(s, t, c);
    }
    for (int t = 1; t <= s.levels; ++t)
        std::sort(s.others[t].begin(), s.others[t].end(), [&](NodeId x, NodeId y) { return s.pname[x] < s.pname[y]; });
}

// Switches written under switches: (their tier's, or "<tier>_other" with the same port count).
std::vector<bool> declared_nodes(const Infer& s) {
    std::vector<bool> in_declared(s.f.size(), false);
    for (int t = 1; t <= s.levels; ++t) {
        if (s.declared[t])
            for (NodeId x : s.members[t]) in_declared[x] = true;
        for (NodeId x : s.others[t]) in_declared[x] = true;
    }
    return in_declared;
}

// ---- host groups: per leaf, HCA, HCA port and rate ----

struct HostGroup {
    std::vector<NodeId> sws;  // leaves, a numbered run
    std::string hca;
    int hport = 1;
    Rate rate;
    std::vector<int> ports;
    std::vector<std::string> names;
};

std::vector<std::string> names_of(const Infer& s, const std::vector<NodeId>& xs) {
    std::vector<std::string> v;
    for (NodeId x : xs) v.push_back(s.pname[x]);
    return v;
}

// The host groups of one leaf; a group with the previous leaf's layout joins its group when the
// leaves stay one numbered run.
void group_leaf(Infer& s, NodeId leaf, std::vector<HostGroup>& hgroups) {
    const Fabric& f = s.f;
    std::map<std::tuple<std::string, int, int, int>, std::vector<std::pair<int, NodeId>>> groups;
    for (int p = 1; p <= f.node(leaf).num_ports(); ++p) {
        const Port& pt = f.node(leaf).ports[p];
        if (!pt.valid || !pt.linked() || f.node(pt.peer).type != NodeType::CA) continue;
        if (is_aggregation_node(f.node(pt.peer)) || s.grouped.count(pt.peer)) continue;
        Rate r = pt.rate();
        groups[{s.phca[pt.peer], pt.peer_port, static_cast<int>(r.width), static_cast<int>(r.speed)}].push_back({p, pt.peer});
        s.grouped.insert(pt.peer);
    }
    for (auto& [key, v] : groups) {
        auto& [hca, hport, w, sp] = key;
        std::sort(v.begin(), v.end());
        HostGroup g{{leaf}, hca, hport, rate_at({w, sp}), {}, {}};
        for (auto& [p, h] : v) g.names.push_back(s.pname[h]), g.ports.push_back(p), s.host_ports[leaf].insert(p), cover(s, leaf, p);
        s.out.compact_hosts += static_cast<int>(v.size());
        if (!hgroups.empty()) {
            HostGroup& prev = hgroups.back();
            if (prev.hca == g.hca && prev.hport == g.hport && prev.rate == g.rate && prev.ports == g.ports) {
                std::vector<std::string> sws = names_of(s, prev.sws);
                sws.push_back(s.pname[leaf]);
                if (name_list(sws, 2).size() == 1) {
                    prev.sws.push_back(leaf);
                    prev.names.insert(prev.names.end(), g.names.begin(), g.names.end());
                    continue;
                }
            }
        }
        hgroups.push_back(std::move(g));
    }
}

std::vector<HostGroup> host_groups(Infer& s) {
    std::vector<HostGroup> hgroups;
    if (s.levels >= 1 && s.declared[1]) {
        std::vector<NodeId> leaves = s.members[1];
        leaves.insert(leaves.end(), s.others[1].begin(), s.others[1].end());
        for (NodeId leaf : leaves) group_leaf(s, leaf, hgroups);
    }
    return hgroups;
}

// ---- the document ----

// Ports of these switches that host groups use, ascending.
std::string host_down(const Infer& s, const std::vector<NodeId>& sws) {
    std::set<int> d;
    for (NodeId x : sws)
        if (auto it = s.host_ports.find(x); it != s.host_ports.end()) d.insert(it->second.begin(), it->second.end());
    return port_list(std::vector<int>(d.begin(), d.end()));
}

void doc_tier(Infer& s, int t, PlanDocument& d) {
    const std::string tn = tier_name(t);
    if (!s.others[t].empty()) {
        PlanDocument::Tier o;
        o.key = tn + "_other";
        o.comment = tn + " switches whose uplinks do not follow the rule: explicit cables";
        o.names = name_list(names_of(s, s.others[t]));
        o.ports = s.f.node(s.others[t][0]).num_ports();
        o.down = host_down(s, s.others[t]);
        d.switches.push_back(std::move(o));
    }
    s.out.tier_switches += static_cast<int>(s.members[t].size() + s.others[t].size());
    PlanDocument::Tier m;
    m.key = tn;
    m.names = name_list(names_of(s, s.members[t]));
    m.ports = s.f.node(s.members[t][0]).num_ports();
    if (s.pods_of[t] > 1) m.pods = s.pods_of[t];
    if (auto below = s.pairs.find(t - 1); below != s.pairs.end()) m.down = port_list(below->second.down);
    else if (t == 1) m.down = host_down(s, s.members[1]);
    if (auto it = s.pairs.find(t); it != s.pairs.end()) {
        const Pair& pr = it->second;
        m.up = port_list(pr.up);
        m.up_to = tier_name(t + 1);
        if (pr.c != 1) m.cables_per_pair = pr.c;
        if (pr.rate && !(s.plan_rate && *pr.rate == *s.plan_rate)) m.rate = pr.rate;
    }
    d.switches.push_back(std::move(m));
}

void doc_hosts(const Infer& s, const std::vector<HostGroup>& hgroups, PlanDocument& d) {
    for (const HostGroup& g : hgroups) {
        PlanDocument::HostGroup h;
        h.names = name_list(g.names);
        h.hca = g.hca;
        h.port = g.hport;
        h.attach = name_list(names_of(s, g.sws), 2).front();  // one pattern: the leaves are one run
        h.ports = port_list(g.ports);
        h.per_switch = static_cast<int>(g.ports.size());
        h.rate = unless_plan_rate(s, g.rate);
        d.hosts.push_back(std::move(h));
    }
}

// Every link not written compactly, and the compact uplinks at another rate.
void doc_cables(Infer& s, const std::vector<Link>& links, PlanDocument& d) {
    auto end = [&](NodeId x, int p) { return PlanDocument::End{s.pname[x], s.phca[x], p}; };
    for (const Link& l : links) {
        if (s.covered.count({l.a, l.pa})) continue;
        d.cables.push_back({end(l.a, l.pa), end(l.b, l.pb), unless_plan_rate(s, rate_of(s.f, l))});
        ++s.out.explicit_cables;
    }
    for (auto& [t, pr] : s.pairs)
        for (auto& [k, r] : pr.overrides) d.overrides.push_back({s.pname[k.n] + "/" + std::to_string(k.p), r});
}

void doc_nodes(const Infer& s, const std::vector<bool>& in_declared, const InferOptions& opt, PlanDocument& d) {
    for (NodeId x = 0; x < s.f.size(); ++x) {
        const Node& node = s.f.node(x);
        if (node.type != NodeType::Switch && node.type != NodeType::CA) {
            d.nodes.push_back({s.pname[x], "router", node.num_ports(), node.guid});
            continue;
        }
        std::string key = s.pname[x] + (s.phca[x].empty() ? "" : ":" + s.phca[x]);
        const bool own_name = s.pname[x] == node.name && s.phca[x] == (s.is_sw(x) ? std::string() : derive_hca(NodeType::CA, node.description));
        const bool pin = opt.pin_all_guids || !own_name;
        std::optional<Guid> guid;
        if (pin) guid = node.guid;
        if (in_declared[x] || s.grouped.count(x)) {
            if (pin) d.nodes.push_back({key, "", 0, guid});
        } else {
            d.nodes.push_back({key, s.is_sw(x) ? "switch" : "ca", node.num_ports(), guid});
        }
    }
}

}  // namespace

InferredPlan infer_plan(const Fabric& f, const Analysis& a, const std::string& source, const InferOptions& opt) {
    Infer s{f, a};
    s.levels = a.levels();
    s.pname.assign(f.size(), "");
    s.phca.assign(f.size(), "");
    std::set<std::string> used;
    name_switches(s, used);
    name_hosts(s, used);
    const std::vector<Link> links = f.links();
    s.plan_rate = majority_rate(f, links);
    infer_tiers(s);
    const std::vector<bool> in_declared = declared_nodes(s);
    const std::vector<HostGroup> hgroups = host_groups(s);

    PlanDocument& d = s.out.doc;
    d.comments = {"Plan inferred by `ibfabric plan from-dump` from " + source,
                  std::to_string(f.count(NodeType::Switch)) + " switches, " + std::to_string(f.count(NodeType::CA)) + " CAs, " +
                      std::to_string(links.size()) + " links. " +
                      (opt.pin_all_guids ? "Every node is pinned by GUID under nodes:."
                                         : "Nodes are matched by name; those with generated names are pinned by GUID under nodes:.")};
    d.name = "from-dump";
    d.rate = s.plan_rate;
    d.mtu = common_mtu(f, links);
    for (int t = 1; t <= s.levels; ++t)
        if (s.declared[t]) doc_tier(s, t, d);
    doc_hosts(s, hgroups, d);
    doc_cables(s, links, d);
    doc_nodes(s, in_declared, opt, d);
    return std::move(s.out);
}

}  // namespace ibf
