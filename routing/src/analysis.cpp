#include "ibf/analysis.h"
#include "ibf/capability.h"
#include "ibf/declared.h"

#include "ibf/names.h"
#include "ibf/natural.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

namespace ibf {
namespace {

// Most frequent value; ties go to the larger value. `fallback` for an empty input.
template <class T>
T mode_of(const std::vector<T>& v, T fallback) {
    if (v.empty()) return fallback;
    std::vector<T> s = v;
    std::sort(s.begin(), s.end());
    T best = s[0];
    size_t best_n = 0;
    for (size_t i = 0; i < s.size();) {
        size_t j = i;
        while (j < s.size() && s[j] == s[i]) ++j;
        if (j - i >= best_n) best = s[i], best_n = j - i;
        i = j;
    }
    return best;
}

// "MF0;sw01:CS7500/L05/U1" -> 'L' (line card ASIC), "/S03/U1" -> 'S' (spine ASIC), else 0.
char chassis_role(std::string_view d) {
    for (size_t i = 0; i + 2 < d.size(); ++i) {
        if (d[i] != '/' || (d[i + 1] != 'L' && d[i + 1] != 'S')) continue;
        size_t j = i + 2;
        while (j < d.size() && std::isdigit(static_cast<unsigned char>(d[j]))) ++j;
        if (j > i + 2 && j < d.size() && d[j] == '/') return d[i + 1];
    }
    return 0;
}

struct Dsu {
    std::vector<NodeId> p;
    explicit Dsu(size_t n) : p(n) { std::iota(p.begin(), p.end(), 0); }
    NodeId find(NodeId x) {
        while (p[x] != x) x = p[x] = p[p[x]];
        return x;
    }
    void unite(NodeId a, NodeId b) { p[find(a)] = find(b); }
};

std::string ports_text(const std::vector<int>& ports) {
    std::string s;
    for (int p : ports) s += (s.empty() ? "" : ",") + std::to_string(p);
    return s;
}

std::string cables(int n) { return std::to_string(n) + (n == 1 ? " cable" : " cables"); }

class Analyzer {
public:
    Analyzer(const Fabric& f, const AnalyzeOptions& opt) : f_(f), opt_(opt), n_(f.size()) {}

    Analysis run() {
        classify_nodes();
        pick_leaves();
        assign_tiers();
        refine_by_majority();
        demote_hostless_leaves();
        a_.tier_of = tier_;
        a_.names = NameBook(f_, tier_, opt_.preferred_names).all();
        build_switch_info();
        build_tiers();
        find_bundle_problems();
        find_tier_problems();
        find_uplink_port_hosts();
        find_rate_outliers();
        std::sort(a_.findings.begin(), a_.findings.end(), [](const Finding& x, const Finding& y) {
            if (x.kind != y.kind) return x.kind < y.kind;
            if (int c = natural_compare(x.a.name, y.a.name)) return c < 0;
            if (x.a.port != y.a.port) return x.a.port < y.a.port;
            if (int c = natural_compare(x.b.name, y.b.name)) return c < 0;
            return x.b.port < y.b.port;
        });
        return std::move(a_);
    }

private:
    const Fabric& f_;
    AnalyzeOptions opt_;
    size_t n_;
    Analysis a_;
    std::vector<uint8_t> is_sw_, is_host_, in_leaf_;
    std::vector<int> tier_, host_links_;

    bool sw(NodeId x) const { return is_sw_[x] != 0; }

    template <class Fn>
    void for_links(NodeId s, Fn fn) const {
        const Node& node = f_.node(s);
        for (int p = 1; p < static_cast<int>(node.ports.size()); ++p) {
            const Port& pt = node.ports[p];
            if (pt.valid && pt.peer != kNoNode && pt.peer < n_) fn(p, pt);
        }
    }

    void classify_nodes() {
        is_sw_.assign(n_, 0);
        is_host_.assign(n_, 0);
        tier_.assign(n_, 0);
        host_links_.assign(n_, 0);
        a_.switches.clear();
        for (NodeId i = 0; i < n_; ++i) {
            const Node& node = f_.node(i);
            if (node.type == NodeType::Switch) {
                is_sw_[i] = 1;
            } else if (node.type == NodeType::CA) {
                if (is_aggregation_node(node)) {
                    a_.aggregation_nodes.push_back(i);
                } else {
                    is_host_[i] = 1;
                    a_.compute_hosts.push_back(i);
                }
            }
        }
        for (NodeId s = 0; s < n_; ++s)
            if (sw(s)) for_links(s, [&](int, const Port& pt) { host_links_[s] += is_host_[pt.peer]; });
    }

    // Leaves: switches with compute hosts, except those whose links mostly go to other such
    // switches, at least two of them (a spine with a storage or management host), removed
    // most-obvious first. Two switches cabled to each other stay two leaves.
    void pick_leaves() {
        in_leaf_.assign(n_, 0);
        std::vector<NodeId> leaves;
        for (NodeId s = 0; s < n_; ++s)
            if (sw(s) && host_links_[s] > 0) in_leaf_[s] = 1, leaves.push_back(s);
        std::vector<int> leafnbr(n_, 0);
        for (NodeId s : leaves)
            for_links(s, [&](int, const Port& pt) { leafnbr[s] += sw(pt.peer) && in_leaf_[pt.peer]; });
        for (;;) {
            NodeId best = kNoNode;
            int best_score = 0;
            for (NodeId s : leaves) {
                if (!in_leaf_[s]) continue;
                int score = leafnbr[s] - host_links_[s];
                if (score > best_score && looks_like_spine(s)) best = s, best_score = score;
            }
            if (best == kNoNode) break;
            in_leaf_[best] = 0;
            for_links(best, [&](int, const Port& pt) {
                if (sw(pt.peer)) --leafnbr[pt.peer];
            });
        }
    }

    // Above two or more leaves that carry clearly more hosts (median at least twice its own).
    bool looks_like_spine(NodeId s) const {
        std::vector<NodeId> seen;
        for_links(s, [&](int, const Port& pt) {
            if (sw(pt.peer) && in_leaf_[pt.peer] && std::find(seen.begin(), seen.end(), pt.peer) == seen.end()) seen.push_back(pt.peer);
        });
        if (seen.size() < 2) return false;
        std::vector<int> h;
        for (NodeId q : seen) h.push_back(host_links_[q]);
        std::nth_element(h.begin(), h.begin() + h.size() / 2, h.end());
        return host_links_[s] * 2 <= h[h.size() / 2];
    }

    void assign_tiers() {
        std::queue<NodeId> q;
        for (NodeId s = 0; s < n_; ++s)
            if (sw(s) && in_leaf_[s]) tier_[s] = 1, q.push(s);
        while (!q.empty()) {
            NodeId s = q.front();
            q.pop();
            for_links(s, [&](int, const Port& pt) {
                if (sw(pt.peer) && tier_[pt.peer] == 0) tier_[pt.peer] = tier_[s] + 1, q.push(pt.peer);
            });
        }
    }

    // A switch above the leaves whose links mostly stay in its own tier belongs one tier up
    // (e.g. a core with one stray cable to a leaf is still a core).
    void refine_by_majority() {
        for (int round = 0; round < 8; ++round) {
            bool changed = false;
            for (NodeId s = 0; s < n_; ++s) {
                if (!sw(s) || tier_[s] < 2) continue;
                int down = 0, same = 0;
                for_links(s, [&](int, const Port& pt) {
                    if (!sw(pt.peer)) return;
                    down += tier_[pt.peer] == tier_[s] - 1;
                    same += tier_[pt.peer] == tier_[s];
                });
                if (same > down) ++tier_[s], changed = true;
            }
            if (!changed) break;
        }
    }

    // A host-less switch at tier 3 that only reaches spines of one pod is a leaf without hosts,
    // not a core, unless the fabric really has a core tier (several pods, or a quarter of the
    // spines' links going up) and the switch is not a chassis line-card ASIC.
    void demote_hostless_leaves() {
        Dsu pods(n_);
        for (NodeId s = 0; s < n_; ++s) {
            if (!sw(s) || tier_[s] != 1) continue;
            NodeId first = kNoNode;
            for_links(s, [&](int, const Port& pt) {
                if (!sw(pt.peer) || tier_[pt.peer] != 2) return;
                if (first == kNoNode) first = pt.peer; else pods.unite(first, pt.peer);
            });
        }
        std::set<NodeId> pod_ids;
        long spine_links = 0, spine_up = 0;
        for (NodeId s = 0; s < n_; ++s) {
            if (!sw(s) || tier_[s] != 2) continue;
            bool has_leaf = false;
            for_links(s, [&](int, const Port& pt) {
                if (!sw(pt.peer)) return;
                ++spine_links;
                spine_up += tier_[pt.peer] == 3;
                has_leaf |= tier_[pt.peer] == 1;
            });
            if (has_leaf) pod_ids.insert(pods.find(s));
        }
        bool small_share = spine_links == 0 || spine_up * 4 < spine_links;
        std::vector<NodeId> demote;
        for (NodeId c = 0; c < n_; ++c) {
            if (!sw(c) || tier_[c] != 3) continue;
            std::set<NodeId> mine;
            bool above = false;
            for_links(c, [&](int, const Port& pt) {
                if (!sw(pt.peer)) return;
                if (tier_[pt.peer] == 2) mine.insert(pods.find(pt.peer));
                above |= tier_[pt.peer] == 4;
            });
            if (above || mine.size() > 1) continue;
            bool line_card = chassis_role(f_.node(c).description) == 'L';
            if (pod_ids.size() >= 2 || small_share || line_card) demote.push_back(c);
        }
        for (NodeId c : demote) tier_[c] = 1;
    }

    void build_switch_info() {
        std::unordered_map<Guid, int> sys_count;
        for (NodeId s = 0; s < n_; ++s)
            if (sw(s) && f_.node(s).system_guid != 0) ++sys_count[f_.node(s).system_guid];
        for (NodeId s = 0; s < n_; ++s) {
            if (!sw(s)) continue;
            SwitchInfo si;
            si.node = s;
            si.tier = tier_[s];
            const Node& node = f_.node(s);
            if (node.system_guid != 0 && sys_count[node.system_guid] > 1) si.chassis = guid_hex(node.system_guid);
            else if (chassis_role(node.description) != 0) si.chassis = node.name;
            std::vector<Bundle> bundles;
            for_links(s, [&](int p, const Port& pt) {
                double g = pt.rate().gbps();
                if (!sw(pt.peer)) {
                    if (is_host_[pt.peer]) {
                        ++si.hosts, ++si.down_links, si.down_gbps += g;
                    } else {
                        ++si.other_cas;
                    }
                    return;
                }
                int tq = tier_[pt.peer];
                if (si.tier == 0 || tq == 0) {
                    ++si.skip_links;
                } else if (tq == si.tier - 1) {
                    ++si.down_links, si.down_gbps += g;
                } else if (tq == si.tier + 1) {
                    ++si.up_links, si.up_gbps += g;
                    auto it = std::find_if(bundles.begin(), bundles.end(), [&](const Bundle& b) { return b.peer == pt.peer; });
                    if (it == bundles.end()) it = bundles.insert(bundles.end(), Bundle{pt.peer, 0, {}, {}});
                    ++it->cables;
                    it->ports.push_back(p);
                    it->peer_ports.push_back(pt.peer_port);
                } else if (tq == si.tier) {
                    ++si.intra_links;
                } else {
                    ++si.skip_links;
                }
            });
            std::sort(bundles.begin(), bundles.end(), [](const Bundle& x, const Bundle& y) { return x.peer < y.peer; });
            si.up_bundles = std::move(bundles);
            si.oversubscription = si.up_gbps > 0 ? si.down_gbps / si.up_gbps : 0;
            a_.switches.push_back(std::move(si));
        }
        for (NodeId h : a_.compute_hosts)
            for_links(h, [&](int, const Port& pt) {
                if (sw(pt.peer)) ++a_.host_links, a_.host_gbps += pt.rate().gbps();
            });
    }

    void build_tiers() {
        int top = 0;
        for (const SwitchInfo& si : a_.switches) top = std::max(top, si.tier);
        a_.tiers.assign(top, TierInfo{});
        for (int l = 1; l <= top; ++l) a_.tiers[l - 1].level = l, a_.tiers[l - 1].name = tier_name(l);
        std::vector<bool> seen(top, false);
        for (const SwitchInfo& si : a_.switches) {
            if (si.tier == 0) continue;
            TierInfo& t = a_.tiers[si.tier - 1];
            ++t.switches;
            t.hosts += si.hosts;
            t.down_links += si.down_links;
            t.up_links += si.up_links;
            t.intra_links += si.intra_links;
            t.down_gbps += si.down_gbps;
            t.up_gbps += si.up_gbps;
            for (const Bundle& b : si.up_bundles) ++t.bundle_sizes[b.cables];
            if (si.up_gbps > 0 && si.down_gbps > 0) {
                if (!seen[si.tier - 1]) t.oversub_min = t.oversub_max = si.oversubscription, seen[si.tier - 1] = true;
                t.oversub_min = std::min(t.oversub_min, si.oversubscription);
                t.oversub_max = std::max(t.oversub_max, si.oversubscription);
            }
        }
        for (TierInfo& t : a_.tiers) t.intra_links /= 2;  // counted from both ends
        double limit = a_.host_gbps;
        for (const TierInfo& t : a_.tiers)
            if (t.up_gbps > 0) limit = std::min(limit, t.up_gbps);
        a_.bisection_gbps = limit / 2;
    }

    Endpoint ep(NodeId n, int port) const {
        Endpoint e;
        e.name = display_name(f_, a_, n);
        e.guid = f_.node(n).guid;
        e.port = port;
        return e;
    }

    std::string label(NodeId n, int port) const {
        std::string s = display_name(f_, a_, n);
        return port > 0 ? s + "/" + std::to_string(port) : s;
    }

    void add(FindingKind k, Endpoint a, Endpoint b, std::string expected, std::string actual, std::string message) {
        Finding fd;
        fd.kind = k;
        fd.severity = default_severity(k);
        fd.a = std::move(a);
        fd.b = std::move(b);
        fd.expected = std::move(expected);
        fd.actual = std::move(actual);
        fd.message = std::move(message);
        a_.findings.push_back(std::move(fd));
    }

    const SwitchInfo& si(NodeId s) const { return *a_.info(s); }

    static int bundle_to(const SwitchInfo& s, NodeId u) {
        for (const Bundle& b : s.up_bundles)
            if (b.peer == u) return b.cables;
        return 0;
    }
    static const Bundle* bundle_ptr(const SwitchInfo& s, NodeId u) {
        for (const Bundle& b : s.up_bundles)
            if (b.peer == u) return &b;
        return nullptr;
    }

    // missing_uplink and uneven_bundle, judged against the switch's peers: the switches of its
    // tier that share an upper neighbour with it (its pod, in a 3-level tree).
    void find_bundle_problems() {
        // lower switches reaching each upper switch
        std::unordered_map<NodeId, std::vector<NodeId>> below;
        for (const SwitchInfo& s : a_.switches)
            for (const Bundle& b : s.up_bundles) below[b.peer].push_back(s.node);
        for (const SwitchInfo& s : a_.switches) {
            if (s.tier == 0 || s.up_bundles.empty()) continue;
            std::set<NodeId> peers;
            for (const Bundle& b : s.up_bundles)
                for (NodeId q : below[b.peer])
                    if (q != s.node) peers.insert(q);
            if (peers.empty()) continue;
            std::vector<int> totals;
            std::unordered_map<NodeId, int> cover;
            std::unordered_map<NodeId, std::vector<int>> sizes;
            for (NodeId q : peers) {
                const SwitchInfo& qi = si(q);
                totals.push_back(qi.up_links);
                for (const Bundle& b : qi.up_bundles) ++cover[b.peer], sizes[b.peer].push_back(b.cables);
            }
            int expected_total = mode_of(totals, 0);
            std::vector<int> own;
            for (const Bundle& b : s.up_bundles) own.push_back(b.cables);
            bool uniform = std::all_of(own.begin(), own.end(), [&](int c) { return c == own[0]; });
            int own_mode = mode_of(own, 0);

            struct Dev { NodeId u; int expected, actual; };
            std::vector<Dev> surplus, deficit;
            std::vector<NodeId> uppers;
            for (auto& [u, c] : cover)
                if (c * 2 > static_cast<int>(peers.size()) || bundle_to(s, u) > 0) uppers.push_back(u);
            for (const Bundle& b : s.up_bundles)
                if (!cover.count(b.peer)) uppers.push_back(b.peer);
            std::sort(uppers.begin(), uppers.end());
            uppers.erase(std::unique(uppers.begin(), uppers.end()), uppers.end());
            for (NodeId u : uppers) {
                int c = bundle_to(s, u);
                int expect;
                if (uniform || !sizes.count(u)) expect = own_mode;
                else expect = mode_of(sizes[u], own_mode);
                if (c > expect) surplus.push_back({u, expect, c});
                else if (c < expect) deficit.push_back({u, expect, c});
            }
            // One cable too many here and one too few there: probably the same cable.
            size_t di = 0;
            for (Dev& sp : surplus) {
                while (sp.actual > sp.expected && di < deficit.size()) {
                    Dev& d = deficit[di];
                    if (d.actual >= d.expected) { ++di; continue; }
                    add(FindingKind::uneven_bundle, ep(s.node, 0), ep(sp.u, 0), cables(sp.expected), cables(sp.actual),
                        label(s.node, 0) + " has " + cables(sp.actual) + " to " + label(sp.u, 0) + " and " +
                            cables(d.actual) + " to " + label(d.u, 0) + " where " + std::to_string(d.expected) +
                            " each is the pattern: one cable to " + label(sp.u, 0) + " probably belongs to " +
                            label(d.u, 0));
                    --sp.actual;
                    ++d.actual;
                }
            }
            for (const Dev& sp : surplus)
                if (sp.actual > sp.expected)
                    add(FindingKind::uneven_bundle, ep(s.node, 0), ep(sp.u, 0), cables(sp.expected), cables(sp.actual),
                        label(s.node, 0) + " has " + cables(sp.actual) + " to " + label(sp.u, 0) + " where its other bundles have " +
                            std::to_string(sp.expected) + ": an extra or misrouted cable");
            // Not a missing cable but a design: a host-less leaf, a switch with less than half the
            // usual uplinks, or one of a group (at least 3, and a third of the peers) with the same count.
            int same_count = 1;
            for (int x : totals) same_count += x == s.up_links;
            bool design_group = same_count >= 3 && same_count * 3 >= static_cast<int>(peers.size()) + 1;
            bool gated = s.up_links * 2 < expected_total || (s.tier == 1 && s.hosts == 0) || design_group;
            for (const Dev& d : deficit) {
                if (d.actual >= d.expected) continue;
                if (s.up_links >= expected_total) {
                    if (d.actual == 0) continue;  // fewer, larger bundles: a design, not a fault
                    add(FindingKind::uneven_bundle, ep(s.node, 0), ep(d.u, 0), cables(d.expected), cables(d.actual),
                        label(s.node, 0) + " has " + cables(d.actual) + " to " + label(d.u, 0) + " where its other bundles have " +
                            std::to_string(d.expected));
                    continue;
                }
                if (gated) continue;
                report_missing(s, d.u, d.expected, d.actual, expected_total, below[d.u]);
            }
        }
    }

    void report_missing(const SwitchInfo& s, NodeId u, int expected, int actual, int expected_total,
                        const std::vector<NodeId>& reaching_u) {
        int missing = expected - actual;
        const Node& lower = f_.node(s.node);
        // Ports the peers use towards u that are free here.
        std::unordered_map<int, int> use;
        int npeers = 0;
        for (NodeId q : reaching_u) {
            if (q == s.node) continue;
            const Bundle* b = bundle_ptr(si(q), u);
            if (!b) continue;
            ++npeers;
            for (int p : b->ports) ++use[p];
        }
        std::vector<int> free_low;
        for (auto& [p, c] : use) {
            const Port* pt = lower.port(p);
            if (c * 2 >= npeers && pt && !pt->linked()) free_low.push_back(p);
        }
        std::sort(free_low.begin(), free_low.end());
        // Free ports on u amid the ports it uses for this switch.
        std::vector<int> free_up;
        if (const Bundle* b = bundle_ptr(s, u)) {
            auto [lo, hi] = std::minmax_element(b->peer_ports.begin(), b->peer_ports.end());
            const Node& upper = f_.node(u);
            for (int p = *lo; p <= *hi; ++p) {
                const Port* pt = upper.port(p);
                if (pt && !pt->linked()) free_up.push_back(p);
            }
        }
        int pa = free_low.size() == 1 && missing == 1 ? free_low[0] : 0;
        int pb = free_up.size() == 1 && missing == 1 ? free_up[0] : 0;
        std::string msg = label(s.node, 0) + " has " + cables(actual) + " to " + label(u, 0) + " where its peers have " +
                          std::to_string(expected) + " (" + std::to_string(s.up_links) + " uplinks instead of " +
                          std::to_string(expected_total) + "): " + (missing == 1 ? "a cable is" : std::to_string(missing) + " cables are") +
                          " likely missing";
        if (!free_low.empty() && free_low.size() <= static_cast<size_t>(2 * missing))
            msg += "; free port" + std::string(free_low.size() > 1 ? "s " : " ") + label(s.node, 0) + "/" + ports_text(free_low);
        if (!free_up.empty() && free_up.size() <= static_cast<size_t>(2 * missing))
            msg += (free_low.empty() ? "; free port" : " and") + std::string(free_up.size() > 1 ? "s " : " ") + label(u, 0) + "/" +
                   ports_text(free_up);
        add(FindingKind::missing_uplink, ep(s.node, pa), ep(u, pb), cables(expected), cables(actual), msg);
    }

    void find_tier_problems() {
        bool have_leaves = false;
        for (const SwitchInfo& s : a_.switches) have_leaves |= s.tier == 1;
        for (const Link& l : f_.links()) {
            if (l.a >= n_ || l.b >= n_) continue;
            NodeId x = l.a, y = l.b;
            int px = l.pa, py = l.pb;
            if (sw(x) && sw(y)) {
                int tx = tier_[x], ty = tier_[y];
                if (tx == 0 || ty == 0) continue;
                if (tx > ty) std::swap(x, y), std::swap(px, py), std::swap(tx, ty);
                if (tx == ty) {
                    add(FindingKind::intra_tier_link, ep(x, px), ep(y, py), "link to another tier", tier_name(tx) + " to " + tier_name(ty),
                        "link " + label(x, px) + " - " + label(y, py) + " connects two " + tier_name(tx) +
                            " switches; in a fat tree every cable goes one tier up or down");
                } else if (ty - tx >= 2) {
                    add(FindingKind::tier_skip, ep(x, px), ep(y, py), tier_name(tx) + " to " + tier_name(tx + 1),
                        tier_name(tx) + " to " + tier_name(ty),
                        "link " + label(x, px) + " - " + label(y, py) + " goes from a " + tier_name(tx) + " straight to a " +
                            tier_name(ty) + ", skipping the " + tier_name(tx + 1) + " tier");
                }
                continue;
            }
            NodeId h = sw(x) ? y : x, s = sw(x) ? x : y;
            int ph = sw(x) ? py : px, ps = sw(x) ? px : py;
            if (!sw(s) || !is_host_[h] || !have_leaves || tier_[s] < 2) continue;
            add(FindingKind::host_misplaced, ep(s, ps), ep(h, ph), "leaf", tier_name(tier_[s]),
                "host " + label(h, ph) + " is cabled to " + tier_name(tier_[s]) + " " + label(s, ps) +
                    " while compute hosts sit on leaves; move it to a leaf unless it is a deliberate storage/management attachment");
        }
    }

    // Hosts on ports that (at least two thirds of) the leaves of the same model use as uplinks.
    void find_uplink_port_hosts() {
        std::map<std::tuple<int, uint16_t, uint16_t>, std::vector<const SwitchInfo*>> by_model;
        for (const SwitchInfo& s : a_.switches) {
            const Node& n = f_.node(s.node);
            if (s.tier == 1) by_model[{n.num_ports(), n.vendor_id, n.device_id}].push_back(&s);
        }
        for (auto& kv : by_model) {  // not a structured binding: clang 14 (fuzz build) cannot capture one
            const auto& model = kv.first;
            auto& group = kv.second;
            int np = std::get<0>(model);
            if (group.size() < 3) continue;
            std::vector<int> up_use(np + 1, 0);
            for (const SwitchInfo* s : group)
                for (const Bundle& b : s->up_bundles)
                    for (int p : b.ports) ++up_use[p];
            for (const SwitchInfo* s : group)
                for_links(s->node, [&](int p, const Port& pt) {
                    if (!is_host_[pt.peer] || p > np) return;
                    if (up_use[p] * 3 < static_cast<int>(group.size()) * 2) return;
                    add(FindingKind::host_on_uplink_port, ep(s->node, p), ep(pt.peer, pt.peer_port), "uplink",
                        "host " + label(pt.peer, pt.peer_port),
                        "host " + label(pt.peer, pt.peer_port) + " is on " + label(s->node, p) + ", a port " +
                            std::to_string(up_use[p]) + " of " + std::to_string(group.size()) +
                            " leaves use as an uplink; move the host to a downlink port");
                });
        }
    }

    static double ref_gbps(const std::vector<double>& rates) { return mode_of(rates, 0.0); }

    void find_rate_outliers() {
        // Host links: grouped by adapter model (vendor:device) when known, else all together.
        std::map<uint32_t, std::vector<double>> host_groups;
        std::unordered_map<NodeId, std::vector<double>> leaf_rates;
        auto key_of = [&](NodeId h) -> uint32_t {
            const Node& n = f_.node(h);
            return n.vendor_id && n.device_id ? (static_cast<uint32_t>(n.vendor_id) << 16) | n.device_id : 0;
        };
        for (NodeId h : a_.compute_hosts)
            for_links(h, [&](int, const Port& pt) {
                double g = pt.rate().gbps();
                if (!sw(pt.peer) || g <= 0) return;
                host_groups[key_of(h)].push_back(g);
                leaf_rates[pt.peer].push_back(g);
            });
        std::map<uint32_t, double> host_ref;
        for (auto& [k, v] : host_groups) host_ref[k] = ref_gbps(v);
        std::map<double, Rate> rate_of;  // a Rate for each gbps value seen, for messages
        for (NodeId h : a_.compute_hosts)
            for_links(h, [&](int hp, const Port& pt) {
                double g = pt.rate().gbps();
                if (!sw(pt.peer) || g <= 0) return;
                double ref = host_ref[key_of(h)];
                if (!(g < ref * opt_.rate_outlier_fraction)) return;
                const auto& on_leaf = leaf_rates[pt.peer];
                if (std::all_of(on_leaf.begin(), on_leaf.end(), [&](double x) { return x == g; })) return;  // consistent leaf
                Rate expected = majority_rate(h, ref);
                add(FindingKind::rate_outlier, ep(pt.peer, pt.peer_port), ep(h, hp), to_string(expected), to_string(pt.rate()),
                    "host link " + label(pt.peer, pt.peer_port) + " - " + label(h, hp) + " runs at " + to_string(pt.rate()) +
                        " where hosts like it run at " + to_string(expected) + "; reseat or replace the cable, check the HCA");
            });
        // ISLs: per tier pair, against the majority rate; a switch whose uplinks all run at the same
        // slower rate is consistent (an older switch), not an outlier.
        std::map<int, std::vector<double>> isl;
        for (const SwitchInfo& s : a_.switches)
            for (const Bundle& b : s.up_bundles)
                for (int p : b.ports) {
                    double g = f_.node(s.node).ports[p].rate().gbps();
                    if (g > 0) isl[s.tier].push_back(g);
                }
        std::map<int, double> isl_ref;
        for (auto& [t, v] : isl) isl_ref[t] = ref_gbps(v);
        for (const SwitchInfo& s : a_.switches) {
            if (s.up_bundles.empty()) continue;
            double ref = isl_ref[s.tier];
            std::vector<double> mine;
            for (const Bundle& b : s.up_bundles)
                for (int p : b.ports) mine.push_back(f_.node(s.node).ports[p].rate().gbps());
            for (const Bundle& b : s.up_bundles)
                for (size_t i = 0; i < b.ports.size(); ++i) {
                    const Port& pt = f_.node(s.node).ports[b.ports[i]];
                    double g = pt.rate().gbps();
                    if (g <= 0 || !(g < ref * opt_.rate_outlier_fraction)) continue;
                    if (std::all_of(mine.begin(), mine.end(), [&](double x) { return x == g; })) continue;
                    Rate expected = isl_rate(s.tier, ref);
                    add(FindingKind::rate_outlier, ep(s.node, b.ports[i]), ep(b.peer, b.peer_ports[i]), to_string(expected),
                        to_string(pt.rate()),
                        "link " + label(s.node, b.ports[i]) + " - " + label(b.peer, b.peer_ports[i]) + " runs at " +
                            to_string(pt.rate()) + " where the other " + tier_name(s.tier) + "-" + tier_name(s.tier + 1) +
                            " links run at " + to_string(expected) + "; reseat or replace the cable");
                }
        }
    }

    Rate majority_rate(NodeId h, double ref) const {
        (void)h;
        for (NodeId x : a_.compute_hosts) {
            Rate r;
            bool found = false;
            for_links(x, [&](int, const Port& pt) {
                if (!found && pt.rate().gbps() == ref) r = pt.rate(), found = true;
            });
            if (found) return r;
        }
        return {};
    }
    Rate isl_rate(int tier, double ref) const {
        for (const SwitchInfo& s : a_.switches) {
            if (s.tier != tier) continue;
            for (const Bundle& b : s.up_bundles)
                for (int p : b.ports)
                    if (f_.node(s.node).ports[p].rate().gbps() == ref) return f_.node(s.node).ports[p].rate();
        }
        return {};
    }
};

}  // namespace

std::string tier_name(int level) {
    switch (level) {
        case 0: return "unknown";
        case 1: return "leaf";
        case 2: return "spine";
        case 3: return "core";
        default: return "tier" + std::to_string(level);
    }
}

const SwitchInfo* Analysis::info(NodeId n) const {
    auto it = std::lower_bound(switches.begin(), switches.end(), n, [](const SwitchInfo& s, NodeId x) { return s.node < x; });
    return it != switches.end() && it->node == n ? &*it : nullptr;
}

std::vector<std::string> display_names(const Fabric& f, const std::vector<int>& tier_of) {
    return NameBook(f, tier_of).all();
}

std::string display_name(const Fabric& f, const Analysis& a, NodeId n) {
    if (a.names.size() == f.size() && n < a.names.size()) return a.names[n];
    return NameBook(f, a.tier_of).name(n);
}

Analysis analyze(const Fabric& f, const AnalyzeOptions& opt) {
    Analysis a = Analyzer(f, opt).run();
    if (opt.capability) {
        // Links below what both ends can do (capability.h): before the fat-tree kinds, as the kinds are ordered.
        std::vector<Finding> slow = capability_findings(f, a.names);
        // A link below its own ends' capability says more than "slower than its peers": one finding, not two.
        std::erase_if(a.findings, [&](const Finding& x) {
            if (x.kind != FindingKind::rate_outlier) return false;
            auto n = f.find(x.a.guid);
            const Port* p = n ? f.node(*n).port(x.a.port) : nullptr;
            if (!p || !p->linked()) return false;
            const Port& q = f.node(p->peer).ports[p->peer_port];
            return q.rate() == p->rate() && best_common_rate(*p, q).gbps() > p->rate().gbps() + 1e-9;
        });
        a.findings.insert(a.findings.begin(), std::make_move_iterator(slow.begin()), std::make_move_iterator(slow.end()));
        std::stable_sort(a.findings.begin(), a.findings.end(), [](const Finding& x, const Finding& y) { return x.kind < y.kind; });
    }
    a.findings = group_mirrored(drop_declared(std::move(a.findings), f, opt.declared), f);
    return a;
}

}  // namespace ibf
