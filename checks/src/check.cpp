// The check engine. Linear in the size of plan + fabric (plus sorting the findings):
//   1. resolve planned nodes to actual nodes (GUID first, then name [+ HCA] among the rest);
//   2. exact matches: a planned link whose two ends are cabled to each other;
//   3. miswired: an unmatched planned link and an unmatched actual cable that share one end;
//   4. what is left: missing links (or one missing_node per absent node), unexpected links
//      between planned nodes, one unexpected_node per node the plan does not know;
//   5. rate and MTU of the matched links.
#include "ibf/check.h"

#include "natural.h"
#include "scope.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ibf {
namespace {

using detail::natural_compare;

constexpr uint32_t kUnclaimed = UINT32_MAX;
constexpr uint32_t kAmbiguous = UINT32_MAX - 1;

int compare_endpoint(const Endpoint& x, const Endpoint& y) {
    if (int c = natural_compare(x.name, y.name); c != 0) return c;
    if (x.port != y.port) return x.port < y.port ? -1 : 1;
    if (x.guid != y.guid) return x.guid < y.guid ? -1 : 1;
    return 0;
}

bool finding_less(const Finding& x, const Finding& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    if (int c = compare_endpoint(x.a, y.a); c != 0) return c < 0;
    if (int c = compare_endpoint(x.b, y.b); c != 0) return c < 0;
    if (x.expected != y.expected) return x.expected < y.expected;
    return x.actual < y.actual;
}

std::string gbps_text(const Rate& r) {
    double g = r.gbps();
    if (g <= 0) return "";
    char buf[32];
    if (g == static_cast<double>(static_cast<long long>(g)))
        std::snprintf(buf, sizeof buf, " (%lld Gb/s)", static_cast<long long>(g));
    else
        std::snprintf(buf, sizeof buf, " (%.1f Gb/s)", g);
    return buf;
}

// Is `act` below `plan`? Compares the data rate when both are complete, else the halves both know.
bool below(const Rate& act, const Rate& plan) {
    if (plan.known() && act.known()) return act.gbps() + 1e-9 < plan.gbps();
    if (plan.width != Width::Unknown && act.width != Width::Unknown && lanes(act.width) < lanes(plan.width))
        return true;
    if (plan.speed != Speed::Unknown && act.speed != Speed::Unknown && act.speed < plan.speed) return true;
    return false;
}

bool disagree(const Rate& x, const Rate& y) {
    if (x.width != Width::Unknown && y.width != Width::Unknown && x.width != y.width) return true;
    if (x.speed != Speed::Unknown && y.speed != Speed::Unknown && x.speed != y.speed) return true;
    return false;
}

class Checker {
public:
    Checker(const Plan& plan, const Fabric& f, const CheckOptions& opt, std::vector<LinkMatch>* matches)
        : plan_(plan), f_(f), opt_(opt), matches_(matches) {}

    std::vector<Finding> run() {
        index_fabric();
        resolve_nodes();
        match_exact();
        match_miswired();
        report_missing();
        report_unexpected();
        std::sort(out_.begin(), out_.end(), finding_less);
        return std::move(out_);
    }

private:
    const Plan& plan_;
    const Fabric& f_;
    const CheckOptions& opt_;
    std::vector<LinkMatch>* matches_;

    std::vector<NodeId> resolved_;             // per planned node: actual node or kNoNode
    std::vector<std::vector<NodeId>> ambiguous_;  // per planned node: candidates when the name is ambiguous
    std::vector<uint32_t> claimed_;            // per actual node: planned node, kUnclaimed or kAmbiguous
    std::vector<size_t> base_;                 // per actual node: first slot of its ports
    std::vector<uint8_t> used_;                // per actual port slot: its cable is accounted for
    std::vector<uint8_t> link_done_;           // per planned link: matched or miswired
    std::unordered_map<std::string, int> plan_name_count_;
    std::vector<Finding> out_;

    // ---- naming ----
    bool resolved(size_t pn) const { return resolved_[pn] != kNoNode; }

    std::string actual_label(NodeId n, int port) const {
        uint32_t pn = claimed_[n];
        if (pn < plan_.nodes.size()) {
            const std::string& name = plan_.nodes[pn].name;
            auto it = plan_name_count_.find(name);
            if (!name.empty() && it != plan_name_count_.end() && it->second == 1)
                return name + "/" + std::to_string(port);
        }
        return port_label(f_, n, port);
    }

    std::string planned_label(const PlannedEnd& e) const {
        if (resolved(e.node)) return actual_label(resolved_[e.node], e.port);
        const PlannedNode& pn = plan_.nodes[e.node];
        std::string base = pn.name.empty() && pn.guid ? guid_hex(*pn.guid) : pn.name;
        return base + "/" + std::to_string(e.port);
    }

    Endpoint actual_end(NodeId n, int port) const {
        const Node& node = f_.node(n);
        uint32_t pn = claimed_[n];
        std::string name = pn < plan_.nodes.size() && !plan_.nodes[pn].name.empty() ? plan_.nodes[pn].name : node.name;
        return {std::move(name), node.guid, port};
    }

    static bool is_switch_end(const Fabric& f, NodeId n) { return f.node(n).type == NodeType::Switch; }

    // Should the two ends of a link swap places in a finding? A switch comes before a host, else natural order.
    static bool needs_swap(const Endpoint& a, const Endpoint& b, bool a_switch, bool b_switch) {
        return (!a_switch && b_switch) || (a_switch == b_switch && compare_endpoint(b, a) < 0);
    }

    std::string port_state_text(NodeId n, int port) const {
        const Port* p = f_.node(n).port(port);
        if (!p) return "";
        if (p->state == PortState::Unknown && p->phys == PhysState::Unknown) return "";
        std::string s(to_string(p->state));
        if (p->phys != PhysState::Unknown) s += "/" + std::string(to_string(p->phys));
        return s;
    }

    Finding make(FindingKind k) const {
        Finding fd;
        fd.kind = k;
        fd.severity = default_severity(k);
        return fd;
    }

    static std::string cable_text(const std::string& label) { return label.empty() ? "" : " (cable " + label + ")"; }

    // ---- steps ----
    void index_fabric() {
        base_.resize(f_.size() + 1);
        size_t slots = 0;
        for (NodeId i = 0; i < f_.size(); ++i) {
            base_[i] = slots;
            slots += f_.node(i).ports.size();
        }
        base_[f_.size()] = slots;
        used_.assign(slots, 0);
        claimed_.assign(f_.size(), kUnclaimed);
        link_done_.assign(plan_.links.size(), 0);
    }

    size_t slot(NodeId n, int port) const { return base_[n] + static_cast<size_t>(port); }

    void resolve_nodes() {
        const size_t np = plan_.nodes.size();
        resolved_.assign(np, kNoNode);
        ambiguous_.assign(np, {});
        for (const PlannedNode& pn : plan_.nodes) ++plan_name_count_[pn.name];
        // GUID identity first, so name matching only considers nodes no GUID claimed.
        std::vector<size_t> by_port_guid;
        for (size_t i = 0; i < np; ++i) {
            const PlannedNode& pn = plan_.nodes[i];
            if (!pn.guid) continue;
            if (auto id = f_.find(*pn.guid); id && claimed_[*id] == kUnclaimed) {
                resolved_[i] = *id;
                claimed_[*id] = static_cast<uint32_t>(i);
            } else if (!id) {
                by_port_guid.push_back(i);
            }
        }
        // A planned GUID that is no node's GUID may be a port GUID (what `ibstat` shows for an HCA):
        // a port GUID belongs to exactly one node, so it identifies that node too.
        if (!by_port_guid.empty()) {
            std::unordered_map<Guid, NodeId> port_guids;
            for (NodeId n = 0; n < f_.size(); ++n)
                for (const Port& p : f_.node(n).ports)
                    if (p.valid && p.guid && p.guid != f_.node(n).guid) port_guids.emplace(p.guid, n);
            for (size_t i : by_port_guid) {
                auto it = port_guids.find(*plan_.nodes[i].guid);
                if (it == port_guids.end() || claimed_[it->second] != kUnclaimed) continue;
                resolved_[i] = it->second;
                claimed_[it->second] = static_cast<uint32_t>(i);
            }
        }
        // Then names: nodes the plan pins to an HCA first, so a bare name only competes for the rest.
        std::vector<size_t> order;
        for (size_t i = 0; i < np; ++i)
            if (!plan_.nodes[i].guid && !plan_.nodes[i].name.empty() && !plan_.nodes[i].hca.empty()) order.push_back(i);
        for (size_t i = 0; i < np; ++i)
            if (!plan_.nodes[i].guid && !plan_.nodes[i].name.empty() && plan_.nodes[i].hca.empty()) order.push_back(i);
        for (size_t i : order) {
            const PlannedNode& pn = plan_.nodes[i];
            // The name is the identity. The HCA narrows it (a node whose description names no HCA, e.g.
            // after a node-name-map, still fits); the planned type only breaks ties, because plans that
            // list bare cables may not know which end is a switch.
            std::vector<NodeId> cands, with_hca, hca_unknown;
            for (NodeId id : f_.find_by_name(pn.name)) {
                if (claimed_[id] != kUnclaimed && claimed_[id] != kAmbiguous) continue;
                cands.push_back(id);
                if (pn.hca.empty()) continue;
                const Node& n = f_.node(id);
                std::string hca = derive_hca(n.type, n.description);
                if (hca == pn.hca) with_hca.push_back(id);
                else if (hca.empty()) hca_unknown.push_back(id);
            }
            if (!pn.hca.empty()) cands = !with_hca.empty() ? std::move(with_hca) : std::move(hca_unknown);
            if (cands.size() > 1 && pn.type != NodeType::Unknown) {
                std::vector<NodeId> typed;
                for (NodeId id : cands)
                    if (f_.node(id).type == pn.type) typed.push_back(id);
                if (!typed.empty()) cands = std::move(typed);
            }
            if (cands.size() == 1 && claimed_[cands[0]] == kUnclaimed) {
                resolved_[i] = cands[0];
                claimed_[cands[0]] = static_cast<uint32_t>(i);
            } else if (!cands.empty()) {  // several nodes, or one another plan node already found ambiguous
                for (NodeId id : cands) claimed_[id] = kAmbiguous;
                ambiguous_[i] = std::move(cands);
            }
        }
    }

    bool both_resolved(const PlannedLink& l) const { return resolved(l.a.node) && resolved(l.b.node); }

    void match_exact() {
        for (size_t i = 0; i < plan_.links.size(); ++i) {
            const PlannedLink& l = plan_.links[i];
            if (!both_resolved(l)) continue;
            NodeId na = resolved_[l.a.node], nb = resolved_[l.b.node];
            const Port* pa = f_.node(na).port(l.a.port);
            const Port* pb = f_.node(nb).port(l.b.port);
            if (!pa || !pb || pa->peer != nb || pa->peer_port != l.b.port) continue;
            if (used_[slot(na, l.a.port)]) continue;  // the plan lists this cable twice
            used_[slot(na, l.a.port)] = used_[slot(nb, l.b.port)] = 1;
            link_done_[i] = 1;
            if (matches_) matches_->push_back({i, na, nb, l.a.port, l.b.port});
            check_rate_mtu(l, na, nb, *pa, *pb);
        }
    }

    void check_rate_mtu(const PlannedLink& l, NodeId na, NodeId nb, const Port& pa, const Port& pb) {
        Endpoint ea = actual_end(na, l.a.port), eb = actual_end(nb, l.b.port);
        std::string la = actual_label(na, l.a.port), lb = actual_label(nb, l.b.port);
        const bool swapped = needs_swap(ea, eb, is_switch_end(f_, na), is_switch_end(f_, nb));
        const Port& first = swapped ? pb : pa;
        const Port& second = swapped ? pa : pb;
        if (swapped) {
            std::swap(ea, eb);
            std::swap(la, lb);
        }
        const std::string where = la + " -- " + lb;

        Rate ra = first.rate(), rb = second.rate();
        bool rate_bad = false;
        if (l.rate && (below(ra, *l.rate) || below(rb, *l.rate))) {
            Rate act = below(ra, *l.rate) ? ra : rb;
            Finding fd = make(FindingKind::rate_mismatch);
            fd.a = ea;
            fd.b = eb;
            fd.expected = to_string(*l.rate);
            fd.actual = to_string(act);
            fd.label = l.label;
            bool width_low = l.rate->width != Width::Unknown && act.width != Width::Unknown &&
                             lanes(act.width) < lanes(l.rate->width);
            fd.message = where + cable_text(l.label) + " runs at " + fd.actual + gbps_text(act) + ", plan says " +
                         fd.expected + gbps_text(*l.rate) + "; " +
                         (width_low ? "width degraded: reseat or replace the cable"
                                    : "speed degraded: check the cable type and both ports' enabled speeds, "
                                      "then reseat or replace the cable");
            out_.push_back(std::move(fd));
            rate_bad = true;
        } else if (disagree(ra, rb)) {
            Finding fd = make(FindingKind::rate_mismatch);
            fd.a = ea;
            fd.b = eb;
            bool a_slower = below(ra, rb);
            fd.expected = to_string(a_slower ? rb : ra);
            fd.actual = to_string(a_slower ? ra : rb);
            fd.label = l.label;
            fd.message = where + cable_text(l.label) + ": the ends disagree (" + la + " " + to_string(ra) + ", " +
                         lb + " " + to_string(rb) + "); reseat the cable and let the SM retrain the link";
            out_.push_back(std::move(fd));
            rate_bad = true;
        }
        // A link that runs at the rate the plan asks for is what the administrator declared (and what a
        // golden dump recorded), so only links without a complete planned rate get the capability warning.
        const bool plan_rate_met = l.rate && l.rate->known();
        if (!rate_bad && !plan_rate_met && opt_.rate_below_capability) check_capability(first, second, ea, eb, where, l.label);

        int ma = first.mtu_active, mb = second.mtu_active;
        if (l.mtu && *l.mtu > 0 && ((ma && ma < *l.mtu) || (mb && mb < *l.mtu))) {
            Finding fd = make(FindingKind::mtu_mismatch);
            fd.a = ea;
            fd.b = eb;
            fd.expected = std::to_string(*l.mtu);
            int act = ma && ma < *l.mtu ? ma : mb;
            fd.actual = std::to_string(act);
            fd.label = l.label;
            fd.message = where + cable_text(l.label) + " has MTU " + fd.actual + ", plan says " + fd.expected +
                         "; check both ports' MTU cap and the SM's MTU settings (partitions.conf mtu=)";
            out_.push_back(std::move(fd));
        } else if (ma && mb && ma != mb) {
            Finding fd = make(FindingKind::mtu_mismatch);
            fd.a = ea;
            fd.b = eb;
            fd.expected = std::to_string(std::max(ma, mb));
            fd.actual = std::to_string(std::min(ma, mb));
            fd.label = l.label;
            fd.message = where + cable_text(l.label) + ": the ends disagree on MTU (" + la + " " +
                         std::to_string(ma) + ", " + lb + " " + std::to_string(mb) +
                         "); check both ports' MTU cap and the SM's MTU settings";
            out_.push_back(std::move(fd));
        }
    }

    void check_capability(const Port& pa, const Port& pb, const Endpoint& ea, const Endpoint& eb,
                          const std::string& where, const std::string& label) {
        Rate act = pa.rate();
        if (!act.known() || pb.rate() != act) return;
        Rate best = act;
        if (pa.width_supported && pb.width_supported) {
            WidthMask m = pa.width_supported & pb.width_supported;
            if (pa.width_enabled) m &= pa.width_enabled;
            if (pb.width_enabled) m &= pb.width_enabled;
            if (Width w = max_width(m); w != Width::Unknown) best.width = w;
        }
        if (pa.speed_supported && pb.speed_supported) {
            SpeedMask m = pa.speed_supported & pb.speed_supported;
            if (pa.speed_enabled) m &= pa.speed_enabled;
            if (pb.speed_enabled) m &= pb.speed_enabled;
            if (Speed s = max_speed(m); s != Speed::Unknown) best.speed = s;
        }
        if (best.gbps() <= act.gbps() + 1e-9) return;
        Finding fd = make(FindingKind::rate_below_capability);
        fd.a = ea;
        fd.b = eb;
        fd.expected = to_string(best);
        fd.actual = to_string(act);
        fd.label = label;
        fd.message = where + cable_text(label) + " runs at " + fd.actual + gbps_text(act) + " but both ends can do " +
                     fd.expected + gbps_text(best) + "; check the cable's rating, then reseat or replace it";
        out_.push_back(std::move(fd));
    }

    // A planned link and an actual cable that share exactly one end, both unmatched: one miswired finding.
    // Round 1 pairs only through host ends (a host's cable that went to the wrong switch port moves at
    // the switch), round 2 through any end. Within a link, the host end is tried first, else the end
    // that sorts first, so findings do not depend on how the plan orders a link's ends.
    void match_miswired() {
        for (int round = 0; round < 2; ++round) {
            for (size_t i = 0; i < plan_.links.size(); ++i) {
                if (link_done_[i]) continue;
                const PlannedLink& l = plan_.links[i];
                if (!both_resolved(l)) continue;
                NodeId ra = resolved_[l.a.node], rb = resolved_[l.b.node];
                bool a_sw = is_switch_end(f_, ra), b_sw = is_switch_end(f_, rb);
                bool b_first = (a_sw && !b_sw) || (a_sw == b_sw && compare_endpoint(actual_end(rb, l.b.port),
                                                                                    actual_end(ra, l.a.port)) < 0);
                for (int side = 0; side < 2; ++side) {
                    const bool use_a = (side == 0) != b_first;
                    if (round == 0 && (use_a ? a_sw : b_sw)) continue;
                    if (try_miswired(i, use_a ? l.a : l.b, use_a ? l.b : l.a)) break;
                }
            }
        }
    }

    // Pairs planned link `i` with the unmatched actual cable at its end `shared`, if there is one.
    bool try_miswired(size_t i, const PlannedEnd& shared, const PlannedEnd& far) {
        const PlannedLink& l = plan_.links[i];
        NodeId n = resolved_[shared.node];
        const Port* p = f_.node(n).port(shared.port);
        if (!p || !p->linked() || used_[slot(n, shared.port)]) return false;
        NodeId m = p->peer;
        int mp = p->peer_port;
        if (claimed_[m] >= plan_.nodes.size()) return false;  // the far node is not planned: unexpected_node
        used_[slot(n, shared.port)] = used_[slot(m, mp)] = 1;
        link_done_[i] = 1;
        Finding fd = make(FindingKind::miswired);
        fd.a = actual_end(n, shared.port);
        fd.b = actual_end(m, mp);
        fd.expected = planned_label(far);
        fd.actual = actual_label(m, mp);
        fd.label = l.label;
        fd.message = "cable at " + actual_label(n, shared.port) + cable_text(l.label) + " goes to " + fd.actual +
                     ", plan says " + fd.expected + "; move the cable at " + fd.actual + " to " + fd.expected;
        out_.push_back(std::move(fd));
        return true;
    }

    void report_missing() {
        const size_t np = plan_.nodes.size();
        std::vector<int> links_of(np, 0);
        std::vector<std::vector<std::string>> peers_of(np);
        for (size_t i = 0; i < plan_.links.size(); ++i) {
            const PlannedLink& l = plan_.links[i];
            for (int side = 0; side < 2; ++side) {
                const PlannedEnd& e = side == 0 ? l.a : l.b;
                const PlannedEnd& o = side == 0 ? l.b : l.a;
                if (e.node >= np || resolved(e.node)) continue;
                ++links_of[e.node];
                if (peers_of[e.node].size() < 3) peers_of[e.node].push_back(planned_label(o));
            }
            if (link_done_[i] || !both_resolved(l)) continue;
            report_missing_link(l);
        }
        for (size_t i = 0; i < np; ++i) {
            if (resolved(i)) continue;
            const PlannedNode& pn = plan_.nodes[i];
            Finding fd = make(FindingKind::missing_node);
            fd.a = {pn.name, pn.guid.value_or(0), 0};
            std::string who = pn.name.empty() ? std::string("node") : pn.name;
            if (!pn.hca.empty()) who += " " + pn.hca;
            fd.expected = who;
            if (pn.guid) fd.expected += " (" + guid_hex(*pn.guid) + ")";
            std::string links = std::to_string(links_of[i]) + (links_of[i] == 1 ? " link" : " links");
            if (!peers_of[i].empty()) {
                links += " (";
                for (size_t k = 0; k < peers_of[i].size(); ++k) links += (k ? ", " : "") + peers_of[i][k];
                if (links_of[i] > static_cast<int>(peers_of[i].size())) links += ", ...";
                links += ")";
            }
            if (!ambiguous_[i].empty()) {
                fd.actual = "ambiguous: " + std::to_string(ambiguous_[i].size()) + " nodes";
                std::string gs;
                for (size_t k = 0; k < ambiguous_[i].size() && k < 4; ++k)
                    gs += (k ? ", " : "") + guid_hex(f_.node(ambiguous_[i][k]).guid);
                if (ambiguous_[i].size() > 4) gs += ", ...";
                fd.message = "plan node " + who + " matches " + std::to_string(ambiguous_[i].size()) +
                             " nodes in the fabric (" + gs + "), so its " + links +
                             " were not checked; give its guid (or hca) in the plan";
            } else {
                fd.message = who + (pn.guid ? " (" + guid_hex(*pn.guid) + ")" : std::string()) +
                             " is not in the fabric; it should have " + links +
                             "; check that it is powered on and cabled";
                if (pn.guid && !pn.name.empty()) {
                    for (NodeId id : f_.find_by_name(pn.name)) {
                        if (claimed_[id] != kUnclaimed) continue;
                        fd.actual = guid_hex(f_.node(id).guid);
                        fd.message += "; a node named " + pn.name + " has GUID " + fd.actual +
                                      ": if its hardware was replaced, update the plan's guid";
                        break;
                    }
                }
            }
            out_.push_back(std::move(fd));
        }
    }

    void report_missing_link(const PlannedLink& l) {
        NodeId na = resolved_[l.a.node], nb = resolved_[l.b.node];
        Finding fd = make(FindingKind::missing_link);
        Endpoint ea = actual_end(na, l.a.port), eb = actual_end(nb, l.b.port);
        std::string la = planned_label(l.a), lb = planned_label(l.b);
        NodeId first = na, second = nb;
        int fp = l.a.port, sp = l.b.port;
        bool a_sw = is_switch_end(f_, na), b_sw = is_switch_end(f_, nb);
        if (needs_swap(ea, eb, a_sw, b_sw)) {
            std::swap(ea, eb);
            std::swap(la, lb);
            std::swap(first, second);
            std::swap(fp, sp);
        }
        fd.a = ea;
        fd.b = eb;
        fd.expected = lb;
        fd.label = l.label;
        std::string why;
        for (int side = 0; side < 2; ++side) {
            NodeId n = side == 0 ? first : second;
            int p = side == 0 ? fp : sp;
            const std::string& lab = side == 0 ? la : lb;
            const Port* port = f_.node(n).port(p);
            if (!port) {
                why += "; " + f_.node(n).name + " has no port " + std::to_string(p);
                continue;
            }
            if (port->linked()) {
                std::string other = actual_label(port->peer, port->peer_port);
                if (side == 0) fd.actual = other;
                why += "; " + lab + " is cabled to " + other +
                       (claimed_[port->peer] == kUnclaimed ? " (not in the plan)" : "");
            } else if (std::string st = port_state_text(n, p); !st.empty()) {
                why += "; " + lab + " is " + st;
            }
        }
        fd.message = "no cable between " + la + " and " + lb + cable_text(l.label) + why + "; connect " + la +
                     " to " + lb + " (if it is plugged in, reseat or replace the cable)";
        out_.push_back(std::move(fd));
    }

    void report_unexpected() {
        for (NodeId n = 0; n < f_.size(); ++n) {
            const Node& node = f_.node(n);
            if (claimed_[n] == kUnclaimed) {
                Finding fd = make(FindingKind::unexpected_node);
                fd.a = {node.name, node.guid, 0};
                fd.actual = node.name.empty() ? guid_hex(node.guid) : node.name + " (" + guid_hex(node.guid) + ")";
                int cables = 0;
                std::string first;
                for (const Port& p : node.ports) {
                    if (!p.valid || !p.linked()) continue;
                    if (cables++ == 0) {
                        fd.b = actual_end(p.peer, p.peer_port);
                        first = actual_label(p.peer, p.peer_port);
                    }
                }
                std::string kind = node.type == NodeType::Switch ? "switch" : node.type == NodeType::CA ? "host" : "node";
                fd.message = kind + " " + fd.actual + " is not in the plan";
                if (cables)
                    fd.message += "; it is cabled to " + first +
                                  (cables > 1 ? " and " + std::to_string(cables - 1) + " more port" +
                                                    (cables > 2 ? "s" : "")
                                              : std::string());
                fd.message += "; add it to the plan or unplug it";
                out_.push_back(std::move(fd));
                continue;
            }
            if (claimed_[n] == kAmbiguous) continue;
            for (size_t p = 0; p < node.ports.size(); ++p) {
                const Port& port = node.ports[p];
                if (!port.valid || !port.linked() || used_[slot(n, static_cast<int>(p))]) continue;
                NodeId m = port.peer;
                int mp = port.peer_port;
                if (std::pair(n, static_cast<int>(p)) > std::pair(m, mp)) continue;  // once per cable
                if (claimed_[m] >= plan_.nodes.size()) continue;                  // unexpected_node covers it
                Finding fd = make(FindingKind::unexpected_link);
                Endpoint ea = actual_end(n, static_cast<int>(p)), eb = actual_end(m, mp);
                std::string la = actual_label(n, static_cast<int>(p)), lb = actual_label(m, mp);
                bool a_sw = is_switch_end(f_, n), b_sw = is_switch_end(f_, m);
                if (needs_swap(ea, eb, a_sw, b_sw)) {
                    std::swap(ea, eb);
                    std::swap(la, lb);
                }
                fd.a = ea;
                fd.b = eb;
                fd.actual = lb;
                fd.message = "cable " + la + " -- " + lb + " is not in the plan; unplug it or add it to the plan";
                out_.push_back(std::move(fd));
            }
        }
    }
};

}  // namespace

size_t align_golden_guids(Plan& plan, const Fabric& golden, const Fabric& actual) {
    // Every GUID an actual node answers to: its node GUID and its ports' GUIDs.
    std::unordered_map<Guid, NodeId> actual_by_any;
    actual_by_any.reserve(actual.size() * 2);
    for (NodeId i = 0; i < actual.size(); ++i) {
        const Node& n = actual.node(i);
        actual_by_any.emplace(n.guid, i);
        for (const Port& p : n.ports)
            if (p.valid && p.guid) actual_by_any.emplace(p.guid, i);
    }
    std::unordered_map<Guid, size_t> planned;
    planned.reserve(plan.nodes.size());
    for (size_t i = 0; i < plan.nodes.size(); ++i)
        if (plan.nodes[i].guid) planned.emplace(*plan.nodes[i].guid, i);

    size_t changed = 0;
    for (PlannedNode& pn : plan.nodes) {
        if (!pn.guid || actual.find(*pn.guid)) continue;
        auto g = golden.find(*pn.guid);
        if (!g) continue;
        const Node& gn = golden.node(*g);
        std::optional<Guid> to;
        auto consider = [&](Guid guid) {
            if (to || !guid) return;
            auto it = actual_by_any.find(guid);
            if (it == actual_by_any.end()) return;
            Guid cand = actual.node(it->second).guid;
            if (planned.count(cand)) return;  // that actual node is planned under its own GUID
            to = cand;
        };
        consider(gn.guid);
        for (const Port& p : gn.ports)
            if (p.valid) consider(p.guid);
        if (!to) continue;
        planned.erase(*pn.guid);
        planned.emplace(*to, 0);
        pn.guid = *to;
        ++changed;
    }
    return changed;
}

std::vector<Finding> check(const Plan& plan, const Fabric& actual, const CheckOptions& opt) {
    return check(plan, actual, opt, nullptr);
}

std::vector<Finding> check(const Plan& plan, const Fabric& actual, const CheckOptions& opt,
                           std::vector<LinkMatch>* matches) {
    for (const PlannedLink& l : plan.links)
        if (l.a.node >= plan.nodes.size() || l.b.node >= plan.nodes.size())
            throw std::invalid_argument("check: plan link refers to node index out of range");
    if (matches) matches->clear();
    return detail::apply_plan_scope(plan, actual, Checker(plan, actual, opt, matches).run());
}

}  // namespace ibf
