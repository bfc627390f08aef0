// The check engine. Linear in the size of plan + fabric (plus sorting the findings):
//   1. resolve planned nodes to actual nodes (GUID first, then name [+ HCA] among the rest);
//   2. exact matches: a planned link whose two ends are cabled to each other;
//   3. miswired: an unmatched planned link and an unmatched actual cable that share one end;
//   4. what is left: missing links (or one missing_node per absent node, host_absent for a host), unexpected links
//      between planned nodes, one unexpected_node per node the plan does not know;
//   5. rate and MTU of the matched links.
#include "ibf/check.h"

#include "ibf/absent_group.h"

#include "ibf/identity.h"
#include "ibf/names.h"

#include "ibf/natural.h"
#include "scope.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ibf {
namespace {



int compare_endpoint(const Endpoint& x, const Endpoint& y) {
    if (int c = natural_compare(x.name, y.name); c != 0) return c;
    if (x.port != y.port) return x.port < y.port ? -1 : 1;
    if (x.guid != y.guid) return x.guid < y.guid ? -1 : 1;
    return 0;
}

bool finding_less(const Finding& x, const Finding& y) {
    if (x.kind != y.kind) return report_rank(x.kind) < report_rank(y.kind);
    if (int c = compare_endpoint(x.a, y.a); c != 0) return c < 0;
    if (int c = compare_endpoint(x.b, y.b); c != 0) return c < 0;
    if (x.expected != y.expected) return x.expected < y.expected;
    return x.actual < y.actual;
}

// " (40 Gb/s signalling, 32 Gb/s data)", " (100 Gb/s)": as ibstat prints rates (ibf/rate.h).
std::string gbps_text(const Rate& r) {
    std::string t = rate_gbps_text(r);
    return t.empty() ? "" : " (" + t + ")";
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

// ---- grouped identity: one rule across many nodes is one finding ----

struct IdentityChange {
    Finding finding;          // the node's own identity_changed finding
    std::string from, to;     // the plan's name, the fabric's name
    bool new_guid = false, renamed = false;
};

constexpr size_t kIdentityGroupMin = 3;  // this many nodes changed by one rule are one finding

// The rule a change follows: "prefix \"dc1-\"", "suffix \"-old\"", "prefix \"a\" and suffix \"b\"" when
// the new name wraps the plan's; "new names" for other renames; "new GUIDs" for replacements.
std::string identity_rule(const IdentityChange& c) {
    if (c.new_guid) return "new GUIDs";
    const size_t at = c.from.empty() ? std::string::npos : c.to.find(c.from);
    if (at == std::string::npos) return "new names";
    const std::string pre = c.to.substr(0, at), suf = c.to.substr(at + c.from.size());
    if (pre.empty()) return "suffix \"" + suf + "\"";
    if (suf.empty()) return "prefix \"" + pre + "\"";
    return "prefix \"" + pre + "\" and suffix \"" + suf + "\"";
}

Finding identity_group(const std::string& rule, std::vector<IdentityChange>& g) {
    std::sort(g.begin(), g.end(), [](const IdentityChange& x, const IdentityChange& y) {
        return natural_compare(x.from, y.from) < 0;
    });
    Finding fd;
    fd.kind = FindingKind::identity_changed;
    fd.severity = default_severity(fd.kind);
    fd.a = g.front().finding.a;
    fd.expected = std::to_string(g.size()) + " nodes under the plan's names";
    const bool replaced = g.front().new_guid;
    fd.actual = (replaced ? "replaced: " : "renamed: ") + rule;
    std::string list;
    for (size_t k = 0; k < g.size() && k < 4; ++k)
        list += (k ? ", " : "") + g[k].from + (replaced ? "" : " -> " + g[k].to);
    if (g.size() > 4) list += ", ...";
    fd.message = std::to_string(g.size()) + " nodes " + (replaced ? "have " + rule : "are renamed by one rule, " + rule) +
                 " (" + list + "); found by their " + (replaced ? "names or cabling" : "cabling") +
                 ", their cables are checked under the plan's names; " +
                 (replaced ? "update the plan's guids" : "use one set of names in the plan and the node-name-map");
    for (IdentityChange& c : g) fd.members.push_back(std::move(c.finding));
    return fd;
}

// Changes that follow one rule (the same prefix or suffix, new names, new GUIDs) at least
// kIdentityGroupMin times become one finding listing them (members); the rest stay single.
std::vector<Finding> group_identity(std::vector<IdentityChange> changes) {
    std::map<std::string, std::vector<IdentityChange>> by_rule;
    for (IdentityChange& c : changes) by_rule[identity_rule(c)].push_back(std::move(c));
    std::vector<Finding> out;
    for (auto& [rule, g] : by_rule) {
        if (g.size() >= kIdentityGroupMin) {
            out.push_back(identity_group(rule, g));
            continue;
        }
        for (IdentityChange& c : g) out.push_back(std::move(c.finding));
    }
    return out;
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
        merge_crossed_pairs();
        report_missing();
        report_unexpected();
        out_ = group_absent_hosts(std::move(out_));  // a rack powered off: one finding per switch
        std::sort(out_.begin(), out_.end(), finding_less);
        return std::move(out_);
    }

private:
    const Plan& plan_;
    const Fabric& f_;
    const CheckOptions& opt_;
    std::vector<LinkMatch>* matches_;

    NodeMatch match_;                          // planned <-> actual nodes (identity.h)
    NameBook names_;                           // every node's display name (names.h)
    std::vector<size_t> base_;                 // per actual node: first slot of its ports
    std::vector<uint8_t> used_;                // per actual port slot: its cable is accounted for
    std::vector<uint8_t> link_done_;           // per planned link: matched or miswired
    std::vector<Finding> out_;
    struct Miswire {
        size_t finding;   // index into out_
        NodeId sn; int sp;  // the shared end
        NodeId an; int ap;  // where its cable goes
        NodeId fn; int fp;  // where the plan says it goes
    };
    std::vector<Miswire> miswired_;
    static constexpr uint32_t kUnclaimed = NodeMatch::kUnclaimed;
    static constexpr uint32_t kAmbiguous = NodeMatch::kAmbiguous;

    // ---- naming ----
    bool resolved(size_t pn) const { return match_.resolved[pn] != kNoNode; }
    NodeId resolved_node(size_t pn) const { return match_.resolved[pn]; }
    uint32_t claimed(NodeId n) const { return match_.claimed[n]; }

    std::string actual_label(NodeId n, int port) const { return names_.port(n, port); }

    // A planned end as a finding's endpoint: the actual node's name when it is resolved, else the plan's.
    Endpoint planned_end(const PlannedEnd& e) const {
        if (resolved(e.node)) return actual_end(resolved_node(e.node), e.port);
        const PlannedNode& pn = plan_.nodes[e.node];
        return {pn.name.empty() && pn.guid ? guid_hex(*pn.guid) : pn.name, pn.guid.value_or(0), e.port};
    }

    std::string planned_label(const PlannedEnd& e) const { return end_text(planned_end(e)); }

    static std::string end_text(const Endpoint& e) { return e.name + "/" + std::to_string(e.port); }

    Endpoint actual_end(NodeId n, int port) const { return names_.endpoint(f_, n, port); }

    // The slower end's rate of a cable ("4xEDR"), "" when neither end knows it.
    static std::string cable_rate(const Port& x, const Port& y) {
        const Rate rx = x.rate(), ry = y.rate();
        auto unknown = [](const Rate& r) { return r.width == Width::Unknown && r.speed == Speed::Unknown; };
        if (unknown(rx)) return unknown(ry) ? std::string() : to_string(ry);
        if (unknown(ry)) return to_string(rx);
        return to_string(below(ry, rx) ? ry : rx);
    }

    // The cable at actual port (n, port), seen from there: b where it goes (empty: nothing cabled).
    FindingLink cable_at(NodeId n, int port, Endpoint planned, const std::string& label) const {
        FindingLink l{actual_end(n, port), {}, std::move(planned), label, ""};
        if (const Port* p = f_.node(n).port(port); p && p->linked()) {
            l.b = actual_end(p->peer, p->peer_port);
            if (const Port* q = f_.node(p->peer).port(p->peer_port)) l.rate = cable_rate(*p, *q);
        }
        return l;
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
        link_done_.assign(plan_.links.size(), 0);
    }

    size_t slot(NodeId n, int port) const { return base_[n] + static_cast<size_t>(port); }

    void resolve_nodes() {
        match_ = match_nodes(plan_, f_);
        names_ = NameBook(f_, opt_.tier_of, plan_names(plan_, match_, f_.size()));
        report_identity();
    }

    // A planned node found by its cabling (renamed, or replaced under a new GUID), or by its name
    // under a new GUID: one identity_changed finding; its cables are checked as the plan's node.
    // Many nodes changed by one rule are one finding (group_identity).
    void report_identity() {
        std::vector<IdentityChange> changes;
        for (size_t i = 0; i < plan_.nodes.size(); ++i) {
            const PlannedNode& pn = plan_.nodes[i];
            const MatchHow how = match_.how[i];
            if (!resolved(i) || how == MatchHow::guid || how == MatchHow::port_guid) continue;
            const Node& node = f_.node(resolved_node(i));
            const bool new_guid = pn.guid && *pn.guid != node.guid;
            const bool renamed = how == MatchHow::position && node.name != pn.name;
            if (!new_guid && !renamed) continue;
            changes.push_back({identity_finding(i, new_guid, renamed), pn.name, node.name, new_guid, renamed});
        }
        for (Finding& fd : group_identity(std::move(changes))) out_.push_back(std::move(fd));
    }

    Finding identity_finding(size_t i, bool new_guid, bool renamed) const {
        const PlannedNode& pn = plan_.nodes[i];
        const MatchHow how = match_.how[i];
        const Node& node = f_.node(resolved_node(i));
        Finding fd = make(FindingKind::identity_changed);
        fd.a = actual_end(resolved_node(i), 0);
        std::string who = pn.name.empty() ? guid_hex(pn.guid.value_or(0)) : pn.name;
        fd.expected = who + (pn.guid ? " (" + guid_hex(*pn.guid) + ")" : std::string());
        const std::string calls = node.name.empty() ? std::string() : " \"" + node.name + "\"";
        if (new_guid) {
            fd.actual = "replaced: new GUID " + guid_hex(node.guid) + (renamed ? ", renamed" + calls : "");
            fd.message = who + " was replaced: the " + std::string(node.type == NodeType::Switch ? "switch" : "node") +
                         (how == MatchHow::position ? " cabled where the plan puts it" : " named " + pn.name) +
                         " has GUID " + guid_hex(node.guid) + ", plan says " + guid_hex(*pn.guid) +
                         (renamed ? " (it calls itself" + calls + ")" : std::string()) +
                         "; its cables are checked as " + who + "'s; update the plan's guid";
        } else {
            fd.actual = "renamed:" + calls + " (" + guid_hex(node.guid) + ")";
            fd.message = who + " is called" + calls + " in the fabric (" + guid_hex(node.guid) +
                         "), found by its cabling; its cables are checked as " + who +
                         "'s; use one name in the plan and the node-name-map";
        }
        return fd;
    }

    bool both_resolved(const PlannedLink& l) const { return resolved(l.a.node) && resolved(l.b.node); }

    void match_exact() {
        for (size_t i = 0; i < plan_.links.size(); ++i) {
            const PlannedLink& l = plan_.links[i];
            if (!both_resolved(l)) continue;
            NodeId na = match_.resolved[l.a.node], nb = match_.resolved[l.b.node];
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
        const FindingLink cable{ea, eb, eb, l.label, cable_rate(first, second)};

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
            fd.links = {cable};
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
            fd.links = {cable};
            out_.push_back(std::move(fd));
            rate_bad = true;
        }
        // A link that runs at the rate the plan asks for is what the administrator declared (and what a
        // golden dump recorded), so only links without a complete planned rate get the capability warning.
        const bool plan_rate_met = l.rate && l.rate->known();
        if (!rate_bad && !plan_rate_met && opt_.rate_below_capability) check_capability(first, second, cable, where);

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
            fd.links = {cable};
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
            fd.links = {cable};
            out_.push_back(std::move(fd));
        }
    }

    void check_capability(const Port& pa, const Port& pb, const FindingLink& cable, const std::string& where) {
        const std::string& label = cable.label;
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
        fd.a = cable.a;
        fd.b = cable.b;
        fd.expected = to_string(best);
        fd.actual = to_string(act);
        fd.label = label;
        fd.message = where + cable_text(label) + " runs at " + fd.actual + gbps_text(act) + " but both ends can do " +
                     fd.expected + gbps_text(best) + "; check the cable's rating, then reseat or replace it";
        fd.links = {cable};
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
                NodeId ra = match_.resolved[l.a.node], rb = match_.resolved[l.b.node];
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
        NodeId n = match_.resolved[shared.node];
        const Port* p = f_.node(n).port(shared.port);
        if (!p || !p->linked() || used_[slot(n, shared.port)]) return false;
        NodeId m = p->peer;
        int mp = p->peer_port;
        if (match_.claimed[m] >= plan_.nodes.size()) return false;  // the far node is not planned: unexpected_node
        used_[slot(n, shared.port)] = used_[slot(m, mp)] = 1;
        link_done_[i] = 1;
        Finding fd = make(FindingKind::miswired);
        fd.a = actual_end(n, shared.port);
        fd.b = actual_end(m, mp);
        fd.expected = planned_label(far);
        fd.actual = actual_label(m, mp);
        fd.label = l.label;
        fd.links = {cable_at(n, shared.port, planned_end(far), l.label)};
        fd.message = "cable at " + actual_label(n, shared.port) + cable_text(l.label) + " goes to " + fd.actual +
                     ", plan says " + fd.expected + "; move the cable at " + fd.actual + " to " + fd.expected;
        const NodeId fn = match_.resolved[far.node];
        miswired_.push_back({out_.size(), n, shared.port, m, mp, fn, far.port});
        out_.push_back(std::move(fd));
        return true;
    }

    // Two miswired cables whose far ends are swapped (the cable at S1 goes where S2's should, and the
    // other way round) are one crossed pair: one finding, "swap the cables at A1 and A2".
    void merge_crossed_pairs() {
        std::map<std::pair<NodeId, int>, size_t> by_planned_far;
        for (size_t k = 0; k < miswired_.size(); ++k)
            by_planned_far.emplace(std::pair(miswired_[k].fn, miswired_[k].fp), k);
        std::vector<uint8_t> drop(out_.size(), 0);
        std::vector<uint8_t> merged(miswired_.size(), 0);
        for (size_t k = 0; k < miswired_.size(); ++k) {
            const Miswire& x = miswired_[k];
            auto it = by_planned_far.find({x.an, x.ap});
            if (merged[k] || it == by_planned_far.end() || it->second == k || merged[it->second]) continue;
            const Miswire& y = miswired_[it->second];
            if (y.an != x.fn || y.ap != x.fp) continue;
            merged[k] = merged[it->second] = 1;
            const bool x_first = compare_endpoint(out_[x.finding].a, out_[y.finding].a) <= 0;
            const Miswire& p = x_first ? x : y;
            const Miswire& q = x_first ? y : x;
            drop[q.finding] = 1;
            Finding& fd = out_[p.finding];
            fd.links.push_back(out_[q.finding].links.front());
            fd.message = crossed_pair_text(fd.links[0], fd.links[1]);
        }
        size_t w = 0;
        for (size_t r = 0; r < out_.size(); ++r) {
            if (drop[r]) continue;
            if (w != r) out_[w] = std::move(out_[r]);
            ++w;
        }
        out_.resize(w);
        miswired_.clear();
    }

    // The message of a crossed pair, from its two cables (each seen from the end it should stay on).
    static std::string crossed_pair_text(const FindingLink& p, const FindingLink& q) {
        std::string a1 = end_text(p.b), a2 = end_text(q.b);
        if (natural_compare(a2, a1) < 0) std::swap(a1, a2);
        const std::string cables = p.label.empty() && q.label.empty() ? std::string()
                                   : " (cables " + (p.label.empty() ? "?" : p.label) + " and " +
                                         (q.label.empty() ? "?" : q.label) + ")";
        return "cables at " + end_text(p.a) + " and " + end_text(q.a) + cables + " are crossed: " + end_text(p.a) +
               " goes to " + end_text(p.b) + " and " + end_text(q.a) + " to " + end_text(q.b) +
               ", plan says the other way round; swap the cables at " + a1 + " and " + a2;
    }

    void report_missing() {
        const size_t np = plan_.nodes.size();
        std::vector<std::vector<FindingLink>> planned_of(np);  // per absent planned node: its planned cables
        for (size_t i = 0; i < plan_.links.size(); ++i) {
            const PlannedLink& l = plan_.links[i];
            for (int side = 0; side < 2; ++side) {
                const PlannedEnd& e = side == 0 ? l.a : l.b;
                const PlannedEnd& o = side == 0 ? l.b : l.a;
                if (e.node >= np || resolved(e.node)) continue;
                planned_of[e.node].push_back({planned_end(e), {}, planned_end(o), l.label, ""});
            }
            if (link_done_[i] || !both_resolved(l)) continue;
            report_missing_link(l);
        }
        std::unordered_map<std::string, bool> name_present;  // a planned name with one of its HCAs in the fabric
        for (size_t i = 0; i < np; ++i) name_present[plan_.nodes[i].name] |= resolved(i);
        for (size_t i = 0; i < np; ++i)
            if (!resolved(i)) report_missing_node(i, std::move(planned_of[i]), name_present[plan_.nodes[i].name]);
    }

    // "3 links (leaf01/5, leaf02/5, spine01/1)", "5 links (a/1, b/1, c/1, ...)": a missing node's cables.
    static std::string planned_links_text(const std::vector<FindingLink>& links) {
        std::string t = std::to_string(links.size()) + (links.size() == 1 ? " link" : " links");
        if (links.empty()) return t;
        t += " (";
        for (size_t k = 0; k < links.size() && k < 3; ++k) t += (k ? ", " : "") + end_text(links[k].planned);
        return t + (links.size() > 3 ? ", ...)" : ")");
    }

    // A planned host none of whose HCAs is in the fabric, with no other node under its name (no
    // replacement), is host_absent (powered off, drained: a warning, and maintenance covers it); a
    // switch, an HCA of a present host, an ambiguous name or a replacement stay missing_node (error).
    void report_missing_node(size_t i, std::vector<FindingLink> links, bool name_present) {
        const PlannedNode& pn = plan_.nodes[i];
        if (pn.type == NodeType::CA && !name_present && !pn.name.empty() && match_.ambiguous[i].empty() &&
            !unclaimed_named(pn.name)) {
            report_host_absent(pn, std::move(links));
            return;
        }
        Finding fd = make(FindingKind::missing_node);
        fd.a = {pn.name, pn.guid.value_or(0), 0};
        std::string who = pn.name.empty() ? std::string("node") : pn.name;
        if (!pn.hca.empty()) who += " " + pn.hca;
        fd.expected = who;
        if (pn.guid) fd.expected += " (" + guid_hex(*pn.guid) + ")";
        const std::string what = planned_links_text(links);
        fd.links = std::move(links);
        if (!match_.ambiguous[i].empty()) {
            fd.actual = "ambiguous: " + std::to_string(match_.ambiguous[i].size()) + " nodes";
            std::string gs;
            for (size_t k = 0; k < match_.ambiguous[i].size() && k < 4; ++k)
                gs += (k ? ", " : "") + guid_hex(f_.node(match_.ambiguous[i][k]).guid);
            if (match_.ambiguous[i].size() > 4) gs += ", ...";
            fd.message = "plan node " + who + " matches " + std::to_string(match_.ambiguous[i].size()) +
                         " nodes in the fabric (" + gs + "), so its " + what +
                         " were not checked; give its guid (or hca) in the plan";
        } else {
            fd.message = who + (pn.guid ? " (" + guid_hex(*pn.guid) + ")" : std::string()) +
                         " is not in the fabric; it should have " + what + "; check that it is powered on and cabled";
            if (pn.guid && !pn.name.empty()) {
                for (NodeId id : f_.find_by_name(pn.name)) {
                    if (match_.claimed[id] != kUnclaimed) continue;
                    fd.actual = guid_hex(f_.node(id).guid);
                    fd.message += "; a node named " + pn.name + " has GUID " + fd.actual +
                                  ": if its hardware was replaced, update the plan's guid";
                    break;
                }
            }
        }
        out_.push_back(std::move(fd));
    }

    bool unclaimed_named(const std::string& name) const {
        for (NodeId id : f_.find_by_name(name))
            if (match_.claimed[id] == kUnclaimed) return true;
        return false;
    }

    void report_host_absent(const PlannedNode& pn, std::vector<FindingLink> links) {
        Finding fd = make(FindingKind::host_absent);
        fd.a = {pn.name, pn.guid.value_or(0), 0};
        std::string who = pn.name;
        if (!pn.hca.empty()) who += " " + pn.hca;
        fd.expected = who;
        if (pn.guid) fd.expected += " (" + guid_hex(*pn.guid) + ")";
        const std::string what = planned_links_text(links);
        fd.links = std::move(links);
        fd.message = "host " + who + " is absent (powered off or drained?); it should have " + what +
                     "; if it is in maintenance: ibfabric maintenance add " + pn.name +
                     " --until DATE --reason TEXT, else power it on and check its cables";
        out_.push_back(std::move(fd));
    }

    void report_missing_link(const PlannedLink& l) {
        NodeId na = match_.resolved[l.a.node], nb = match_.resolved[l.b.node];
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
        fd.links = {cable_at(first, fp, eb, l.label), cable_at(second, sp, ea, l.label)};
        std::string why;
        for (int side = 0; side < 2; ++side) {
            NodeId n = side == 0 ? first : second;
            int p = side == 0 ? fp : sp;
            const std::string& lab = side == 0 ? la : lb;
            const Port* port = f_.node(n).port(p);
            if (!port) {
                why += "; " + names_.name(n) + " has no port " + std::to_string(p);
                continue;
            }
            if (port->linked()) {
                std::string other = actual_label(port->peer, port->peer_port);
                if (side == 0) fd.actual = other;
                why += "; " + lab + " is cabled to " + other +
                       (match_.claimed[port->peer] == kUnclaimed ? " (not in the plan)" : "");
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
            if (match_.claimed[n] == kUnclaimed) {
                Finding fd = make(FindingKind::unexpected_node);
                fd.a = actual_end(n, 0);
                fd.actual = names_.name(n) + " (" + guid_hex(node.guid) + ")";
                int cables = 0;
                std::string first;
                for (size_t pi = 0; pi < node.ports.size(); ++pi) {
                    const Port& p = node.ports[pi];
                    if (!p.valid || !p.linked()) continue;
                    fd.links.push_back(cable_at(n, static_cast<int>(pi), {}, ""));
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
            if (match_.claimed[n] == kAmbiguous) continue;
            for (size_t p = 0; p < node.ports.size(); ++p) {
                const Port& port = node.ports[p];
                if (!port.valid || !port.linked() || used_[slot(n, static_cast<int>(p))]) continue;
                NodeId m = port.peer;
                int mp = port.peer_port;
                if (std::pair(n, static_cast<int>(p)) > std::pair(m, mp)) continue;  // once per cable
                if (match_.claimed[m] >= plan_.nodes.size()) continue;                  // unexpected_node covers it
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
                const Port* far = f_.node(m).port(mp);
                fd.links = {FindingLink{ea, eb, {}, "", far ? cable_rate(port, *far) : std::string()}};
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

std::vector<std::string> unchecked_fields(const Plan& plan, const Fabric& actual) {
    bool plan_rate = false, plan_mtu = false;
    for (const PlannedLink& l : plan.links) {
        plan_rate |= l.rate.has_value() && (l.rate->width != Width::Unknown || l.rate->speed != Speed::Unknown);
        plan_mtu |= l.mtu.has_value() && *l.mtu > 0;
    }
    bool seen_rate = false, seen_mtu = false, cabled = false;
    for (const Node& n : actual.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || !p.linked()) continue;
            cabled = true;
            seen_rate |= p.width_active != Width::Unknown || p.speed_active != Speed::Unknown;
            seen_mtu |= p.mtu_active > 0;
        }
    std::vector<std::string> out;
    if (!cabled) return out;  // nothing cabled: every planned link is missing, nothing went unchecked
    if (plan_rate && !seen_rate) out.push_back("rate");
    if (plan_mtu && !seen_mtu) out.push_back("mtu");
    return out;
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
