// diff_states / apply_changes / describe: the pure change list between two sweeps.
#include "ibf/fabric_diff.h"

#include <array>

namespace ibf {
namespace {

constexpr std::array<std::string_view, kChangeKindCount> kKindNames = {
    "node_added", "node_removed", "link_added", "link_removed", "link_changed",
    "lid_changed", "sm_added", "sm_removed", "sm_changed"};
// Plural phrases for summarize(), in kind order.
constexpr std::array<std::pair<std::string_view, std::string_view>, kChangeKindCount> kPhrases = {{
    {"node added", "nodes added"}, {"node removed", "nodes removed"}, {"link added", "links added"},
    {"link removed", "links removed"}, {"link changed", "links changed"}, {"LID changed", "LIDs changed"},
    {"SM added", "SMs added"}, {"SM removed", "SMs removed"}, {"SM changed", "SMs changed"}}};

std::string name_of(const FabricState& s, Guid g) {
    auto it = s.nodes.find(g);
    return it != s.nodes.end() && !it->second.name.empty() ? it->second.name : guid_hex(g);
}

// The name from `after`, else from `before` (a removed node is only in `before`).
std::string name_in(const FabricState& before, const FabricState& after, Guid g) {
    return after.nodes.count(g) ? name_of(after, g) : name_of(before, g);
}

SmRec sm_rec(const SmInfo& s) { return {s.port_guid, s.lid, s.priority, s.state}; }

// Calls on_removed / on_added / on_changed for the keys of two sorted maps.
template <class Map, class R, class A, class C>
void merge_walk(const Map& b, const Map& a, R on_removed, A on_added, C on_changed) {
    auto i = b.begin();
    auto j = a.begin();
    while (i != b.end() || j != a.end()) {
        if (j == a.end() || (i != b.end() && i->first < j->first)) on_removed((i++)->second);
        else if (i == b.end() || j->first < i->first) on_added((j++)->second);
        else {
            if (!(i->second == j->second)) on_changed(i->second, j->second);
            ++i, ++j;
        }
    }
}

std::string end_text(const std::string& name, int port) { return name + "/" + std::to_string(port); }

std::string link_attrs(const LinkRec& l) {
    std::string s = to_string(l.rate);
    if (l.mtu) s += " MTU " + std::to_string(l.mtu);
    return s;
}

}  // namespace

std::string_view to_string(ChangeKind k) { return kKindNames[static_cast<size_t>(k)]; }

std::optional<ChangeKind> parse_change_kind(std::string_view s) {
    for (size_t i = 0; i < kKindNames.size(); ++i)
        if (kKindNames[i] == s) return static_cast<ChangeKind>(i);
    return std::nullopt;
}

FabricState fabric_state(const Fabric& f, const SmInfo& self, const std::vector<SmInfo>& others) {
    FabricState s;
    for (const Node& n : f.nodes()) {
        s.nodes[n.guid] = {n.guid, n.type, n.name, n.num_ports()};
        for (const Port& p : n.ports) {
            if (!p.valid || p.lid == 0) continue;
            if (n.type == NodeType::Switch && p.num != 0) continue;  // switch ports share port 0's LID
            s.lids[{n.guid, p.num}] = p.lid;
        }
    }
    for (const Link& l : f.links()) {
        const Node& na = f.node(l.a);
        const Node& nb = f.node(l.b);
        PortRef a{na.guid, l.pa}, b{nb.guid, l.pb};
        if (b < a) std::swap(a, b);
        const Port& pa = na.ports[l.pa];
        int mtu = pa.mtu_active ? pa.mtu_active : nb.ports[l.pb].mtu_active;
        s.links[{a, b}] = {a, b, pa.rate(), mtu};
    }
    for (const SmInfo& o : others)
        if (o.port_guid) s.sms[o.port_guid] = sm_rec(o);
    if (self.port_guid) s.sms[self.port_guid] = sm_rec(self);
    return s;
}

std::vector<Change> diff_states(const FabricState& before, const FabricState& after) {
    std::vector<Change> out;
    auto node_change = [&](ChangeKind k, const NodeRec& n) {
        Change c{.kind = k};
        (k == ChangeKind::node_added ? c.node_after : c.node_before) = n;
        c.a_name = n.name.empty() ? guid_hex(n.guid) : n.name;
        out.push_back(std::move(c));
    };
    merge_walk(before.nodes, after.nodes, [&](const NodeRec& n) { node_change(ChangeKind::node_removed, n); },
               [&](const NodeRec& n) { node_change(ChangeKind::node_added, n); },
               [&](const NodeRec&, const NodeRec&) {});  // a renamed node or new port count is not a change
    auto link_change = [&](ChangeKind k, const LinkRec* b, const LinkRec* a) {
        Change c{.kind = k};
        if (b) c.link_before = *b;
        if (a) c.link_after = *a;
        const LinkRec& l = a ? *a : *b;
        c.a_name = name_in(before, after, l.a.node);
        c.b_name = name_in(before, after, l.b.node);
        out.push_back(std::move(c));
    };
    merge_walk(before.links, after.links, [&](const LinkRec& l) { link_change(ChangeKind::link_removed, &l, nullptr); },
               [&](const LinkRec& l) { link_change(ChangeKind::link_added, nullptr, &l); },
               [&](const LinkRec& b, const LinkRec& a) { link_change(ChangeKind::link_changed, &b, &a); });
    // LIDs: keys are ports; a removed node's LIDs go with it (a new node's LID is a change: none -> N).
    auto lid_change = [&](PortRef p, uint16_t b, uint16_t a) {
        if (a == 0 && !after.nodes.count(p.node)) return;
        Change c{.kind = ChangeKind::lid_changed, .port = p, .lid_before = b, .lid_after = a};
        c.a_name = name_in(before, after, p.node);
        out.push_back(std::move(c));
    };
    auto i = before.lids.begin();
    auto j = after.lids.begin();
    while (i != before.lids.end() || j != after.lids.end()) {
        if (j == after.lids.end() || (i != before.lids.end() && i->first < j->first)) lid_change(i->first, i->second, 0), ++i;
        else if (i == before.lids.end() || j->first < i->first) lid_change(j->first, 0, j->second), ++j;
        else {
            if (i->second != j->second) lid_change(i->first, i->second, j->second);
            ++i, ++j;
        }
    }
    auto sm_change = [&](ChangeKind k, const SmRec* b, const SmRec* a) {
        Change c{.kind = k};
        if (b) c.sm_before = *b;
        if (a) c.sm_after = *a;
        c.a_name = guid_hex(a ? a->guid : b->guid);
        out.push_back(std::move(c));
    };
    merge_walk(before.sms, after.sms, [&](const SmRec& s) { sm_change(ChangeKind::sm_removed, &s, nullptr); },
               [&](const SmRec& s) { sm_change(ChangeKind::sm_added, nullptr, &s); },
               [&](const SmRec& b, const SmRec& a) { sm_change(ChangeKind::sm_changed, &b, &a); });
    return out;
}

FabricState apply_changes(FabricState s, const std::vector<Change>& cs) {
    for (const Change& c : cs) {
        switch (c.kind) {
        case ChangeKind::node_added:
            if (c.node_after) s.nodes[c.node_after->guid] = *c.node_after;
            break;
        case ChangeKind::node_removed:
            if (c.node_before) {
                s.nodes.erase(c.node_before->guid);
                std::erase_if(s.lids, [&](const auto& kv) { return kv.first.node == c.node_before->guid; });
            }
            break;
        case ChangeKind::link_added:
        case ChangeKind::link_changed:
            if (c.link_after) s.links[{c.link_after->a, c.link_after->b}] = *c.link_after;
            break;
        case ChangeKind::link_removed:
            if (c.link_before) s.links.erase({c.link_before->a, c.link_before->b});
            break;
        case ChangeKind::lid_changed:
            if (c.lid_after) s.lids[c.port] = c.lid_after;
            else s.lids.erase(c.port);
            break;
        case ChangeKind::sm_added:
        case ChangeKind::sm_changed:
            if (c.sm_after) s.sms[c.sm_after->guid] = *c.sm_after;
            break;
        case ChangeKind::sm_removed:
            if (c.sm_before) s.sms.erase(c.sm_before->guid);
            break;
        }
    }
    return s;
}

std::string describe(const Change& c) {
    const LinkRec* l = c.link_after ? &*c.link_after : c.link_before ? &*c.link_before : nullptr;
    const std::string ends = l ? end_text(c.a_name, l->a.port) + " -- " + end_text(c.b_name, l->b.port) : "";
    switch (c.kind) {
    case ChangeKind::node_added:
    case ChangeKind::node_removed: {
        const NodeRec& n = c.node_after ? *c.node_after : *c.node_before;
        return std::string(to_string(n.type)) + " " + c.a_name + " (" + guid_hex(n.guid) + ") " +
               (c.kind == ChangeKind::node_added ? "added" : "removed");
    }
    case ChangeKind::link_added: return ends + " added (" + link_attrs(*l) + ")";
    case ChangeKind::link_removed: return ends + " removed (was " + link_attrs(*l) + ")";
    case ChangeKind::link_changed: return ends + ": " + link_attrs(*c.link_before) + " -> " + link_attrs(*c.link_after);
    case ChangeKind::lid_changed: {
        auto lid = [](uint16_t v) { return v ? std::to_string(v) : std::string("none"); };
        return "LID of " + end_text(c.a_name, c.port.port) + ": " + lid(c.lid_before) + " -> " + lid(c.lid_after);
    }
    case ChangeKind::sm_added:
        return "SM " + c.a_name + " appeared (" + std::string(to_string(c.sm_after->state)) + ", priority " +
               std::to_string(c.sm_after->priority) + ")";
    case ChangeKind::sm_removed:
        return "SM " + c.a_name + " gone (was " + std::string(to_string(c.sm_before->state)) + ")";
    case ChangeKind::sm_changed: {
        std::string s = "SM " + c.a_name + ":";
        const SmRec& b = *c.sm_before;
        const SmRec& a = *c.sm_after;
        if (b.state != a.state) s += " " + std::string(to_string(b.state)) + " -> " + std::string(to_string(a.state));
        if (b.priority != a.priority) s += " priority " + std::to_string(b.priority) + " -> " + std::to_string(a.priority);
        if (b.lid != a.lid) s += " LID " + std::to_string(b.lid) + " -> " + std::to_string(a.lid);
        return s;
    }
    }
    return {};
}

std::map<std::string, int> count_by_kind(const std::vector<Change>& cs) {
    std::map<std::string, int> m;
    for (const Change& c : cs) ++m[std::string(to_string(c.kind))];
    return m;
}

std::string summarize(const std::vector<Change>& cs) {
    if (cs.empty()) return "no changes";
    std::array<int, kChangeKindCount> n{};
    for (const Change& c : cs) ++n[static_cast<size_t>(c.kind)];
    std::string s;
    for (size_t k = 0; k < n.size(); ++k) {
        if (!n[k]) continue;
        if (!s.empty()) s += ", ";
        s += std::to_string(n[k]) + " " + std::string(n[k] == 1 ? kPhrases[k].first : kPhrases[k].second);
    }
    if (cs.size() == 1) s += ": " + describe(cs.front());
    return s;
}

}  // namespace ibf
