// state_to_json / change_to_json and their readers; changes_as_findings.
#include "ibf/change_json.h"

#include <stdexcept>

namespace ibf {
namespace {

using nlohmann::json;

Guid guid_from(const json& j) {
    if (j.is_number_unsigned()) return j.get<Guid>();
    if (j.is_string())
        if (auto g = parse_guid(j.get<std::string>())) return *g;
    throw std::invalid_argument("bad GUID " + j.dump());
}

json end_json(const std::string& name, PortRef p) { return {{"name", name}, {"guid", guid_hex(p.node)}, {"port", p.port}}; }

PortRef end_from(const json& j) { return {guid_from(j.at("guid")), j.at("port").get<int>()}; }

json link_attrs_json(const std::optional<LinkRec>& l) {
    if (!l) return nullptr;
    return {{"rate", to_string(l->rate)}, {"mtu", l->mtu}, {"w", static_cast<int>(l->rate.width)},
            {"s", static_cast<int>(l->rate.speed)}};
}

std::optional<LinkRec> link_from(const json& attrs, PortRef a, PortRef b) {
    if (attrs.is_null()) return std::nullopt;
    LinkRec l{a, b, {static_cast<Width>(attrs.at("w").get<int>()), static_cast<Speed>(attrs.at("s").get<int>())},
              attrs.at("mtu").get<int>()};
    return l;
}

json sm_attrs_json(const std::optional<SmRec>& s) {
    if (!s) return nullptr;
    return {{"state", to_string(s->state)}, {"priority", s->priority}, {"lid", s->lid}};
}

std::optional<SmRec> sm_from(const json& attrs, Guid g) {
    if (attrs.is_null()) return std::nullopt;
    const std::string st = attrs.at("state").get<std::string>();
    SmState state = SmState::NotActive;
    for (SmState s : {SmState::NotActive, SmState::Discovering, SmState::Standby, SmState::Master})
        if (to_string(s) == st) state = s;
    return SmRec{g, attrs.at("lid").get<uint16_t>(), attrs.at("priority").get<uint8_t>(), state};
}

Endpoint endpoint(const std::string& name, PortRef p) { return {name, p.node, p.port}; }

}  // namespace

json state_to_json(const FabricState& s) {
    json nodes = json::array(), links = json::array(), lids = json::array(), sms = json::array();
    for (const auto& [g, n] : s.nodes) nodes.push_back({g, static_cast<int>(n.type), n.name, n.ports});
    for (const auto& [k, l] : s.links)
        links.push_back({l.a.node, l.a.port, l.b.node, l.b.port, static_cast<int>(l.rate.width),
                         static_cast<int>(l.rate.speed), l.mtu});
    for (const auto& [p, lid] : s.lids) lids.push_back({p.node, p.port, lid});
    for (const auto& [g, m] : s.sms) sms.push_back({g, m.lid, m.priority, static_cast<int>(m.state)});
    return {{"nodes", nodes}, {"links", links}, {"lids", lids}, {"sms", sms}};
}

FabricState state_from_json(const json& j) {
    try {
        FabricState s;
        for (const json& n : j.at("nodes"))
            s.nodes[n.at(0).get<Guid>()] = {n.at(0).get<Guid>(), static_cast<NodeType>(n.at(1).get<int>()),
                                            n.at(2).get<std::string>(), n.at(3).get<int>()};
        for (const json& l : j.at("links")) {
            PortRef a{l.at(0).get<Guid>(), l.at(1).get<int>()}, b{l.at(2).get<Guid>(), l.at(3).get<int>()};
            s.links[{a, b}] = {a, b, {static_cast<Width>(l.at(4).get<int>()), static_cast<Speed>(l.at(5).get<int>())},
                               l.at(6).get<int>()};
        }
        for (const json& l : j.at("lids")) s.lids[{l.at(0).get<Guid>(), l.at(1).get<int>()}] = l.at(2).get<uint16_t>();
        for (const json& m : j.at("sms"))
            s.sms[m.at(0).get<Guid>()] = {m.at(0).get<Guid>(), m.at(1).get<uint16_t>(), m.at(2).get<uint8_t>(),
                                          static_cast<SmState>(m.at(3).get<int>())};
        return s;
    } catch (const json::exception& e) {
        throw std::invalid_argument(std::string("fabric state: ") + e.what());
    }
}

json change_to_json(const Change& c) {
    json j{{"kind", to_string(c.kind)}};
    switch (c.kind) {
    case ChangeKind::node_added:
    case ChangeKind::node_removed: {
        const NodeRec& n = c.node_after ? *c.node_after : *c.node_before;
        j["node"] = {{"name", n.name}, {"guid", guid_hex(n.guid)}, {"type", to_string(n.type)}, {"ports", n.ports}};
        break;
    }
    case ChangeKind::link_added:
    case ChangeKind::link_removed:
    case ChangeKind::link_changed: {
        const LinkRec& l = c.link_after ? *c.link_after : *c.link_before;
        j["a"] = end_json(c.a_name, l.a);
        j["b"] = end_json(c.b_name, l.b);
        j["before"] = link_attrs_json(c.link_before);
        j["after"] = link_attrs_json(c.link_after);
        break;
    }
    case ChangeKind::lid_changed:
        j["a"] = end_json(c.a_name, c.port);
        j["before"] = c.lid_before;
        j["after"] = c.lid_after;
        break;
    case ChangeKind::sm_added:
    case ChangeKind::sm_removed:
    case ChangeKind::sm_changed:
        j["sm"] = c.a_name;
        j["before"] = sm_attrs_json(c.sm_before);
        j["after"] = sm_attrs_json(c.sm_after);
        break;
    }
    j["text"] = describe(c);
    return j;
}

json changes_to_json(const std::vector<Change>& cs) {
    json a = json::array();
    for (const Change& c : cs) a.push_back(change_to_json(c));
    return a;
}

Change change_from_json(const json& j) {
    try {
        auto kind = parse_change_kind(j.at("kind").get<std::string>());
        if (!kind) throw std::invalid_argument("unknown change kind " + j.at("kind").dump());
        Change c{.kind = *kind};
        switch (c.kind) {
        case ChangeKind::node_added:
        case ChangeKind::node_removed: {
            const json& n = j.at("node");
            NodeType t = NodeType::Unknown;
            for (NodeType x : {NodeType::CA, NodeType::Switch, NodeType::Router})
                if (to_string(x) == n.at("type").get<std::string>()) t = x;
            NodeRec r{guid_from(n.at("guid")), t, n.at("name").get<std::string>(), n.at("ports").get<int>()};
            (c.kind == ChangeKind::node_added ? c.node_after : c.node_before) = r;
            c.a_name = r.name.empty() ? guid_hex(r.guid) : r.name;
            break;
        }
        case ChangeKind::link_added:
        case ChangeKind::link_removed:
        case ChangeKind::link_changed: {
            const PortRef a = end_from(j.at("a")), b = end_from(j.at("b"));
            c.link_before = link_from(j.at("before"), a, b);
            c.link_after = link_from(j.at("after"), a, b);
            c.a_name = j.at("a").at("name").get<std::string>();
            c.b_name = j.at("b").at("name").get<std::string>();
            break;
        }
        case ChangeKind::lid_changed:
            c.port = end_from(j.at("a"));
            c.a_name = j.at("a").at("name").get<std::string>();
            c.lid_before = j.at("before").get<uint16_t>();
            c.lid_after = j.at("after").get<uint16_t>();
            break;
        case ChangeKind::sm_added:
        case ChangeKind::sm_removed:
        case ChangeKind::sm_changed: {
            const Guid g = guid_from(j.at("sm"));
            c.sm_before = sm_from(j.at("before"), g);
            c.sm_after = sm_from(j.at("after"), g);
            c.a_name = guid_hex(g);
            break;
        }
        }
        return c;
    } catch (const json::exception& e) {
        throw std::invalid_argument(std::string("change: ") + e.what());
    }
}

std::vector<Change> changes_from_json(const json& j) {
    if (!j.is_array()) throw std::invalid_argument("changes: not an array");
    std::vector<Change> out;
    for (const json& c : j) out.push_back(change_from_json(c));
    return out;
}

bool restored(const Change& c, const PlannedCableFn& planned) {
    return planned && c.kind == ChangeKind::link_added && c.link_after &&
           planned(c.a_name, c.link_after->a.port, c.b_name, c.link_after->b.port);
}

std::vector<Finding> changes_as_findings(const std::vector<Change>& cs, const PlannedCableFn& planned) {
    std::vector<Finding> out;
    for (const Change& c : cs) {
        if (restored(c, planned)) continue;  // as the plan says again: nothing to do
        Finding f;
        const LinkRec* l = c.link_after ? &*c.link_after : c.link_before ? &*c.link_before : nullptr;
        if (l) f.a = endpoint(c.a_name, l->a), f.b = endpoint(c.b_name, l->b);
        const std::string ends = l ? c.a_name + "/" + std::to_string(l->a.port) + " -- " + c.b_name + "/" +
                                         std::to_string(l->b.port)
                                   : "";
        switch (c.kind) {
        case ChangeKind::link_removed:
            f.kind = FindingKind::missing_link;
            f.expected = to_string(l->rate);
            f.message = ends + " is gone; reconnect the cable, or `ibfabric accept` if it was removed on purpose";
            break;
        case ChangeKind::link_added:
            f.kind = FindingKind::unexpected_link;
            f.severity = Severity::warning;
            f.actual = to_string(l->rate);
            f.message = ends + " is new; `ibfabric accept` adopts it into the plan";
            break;
        case ChangeKind::link_changed: {
            const LinkRec& b = *c.link_before;
            const LinkRec& a = *c.link_after;
            const bool rate = !(b.rate == a.rate);
            f.kind = rate ? FindingKind::rate_mismatch : FindingKind::mtu_mismatch;
            f.expected = rate ? to_string(b.rate) : std::to_string(b.mtu);
            f.actual = rate ? to_string(a.rate) : std::to_string(a.mtu);
            const bool slower = rate ? a.rate.gbps() < b.rate.gbps() : a.mtu < b.mtu;
            f.severity = slower ? Severity::error : Severity::info;
            f.message = ends + (rate ? " runs at " : " has MTU ") + f.actual + ", was " + f.expected +
                        (slower ? "; reseat or replace the cable" : "");
            break;
        }
        case ChangeKind::node_added:
        case ChangeKind::node_removed: {
            const NodeRec& n = c.node_after ? *c.node_after : *c.node_before;
            f.kind = c.kind == ChangeKind::node_added ? FindingKind::unexpected_node : FindingKind::missing_node;
            f.severity = c.kind == ChangeKind::node_added ? Severity::warning : Severity::error;
            f.a = {c.a_name, n.guid, 0};
            f.message = describe(c);
            break;
        }
        case ChangeKind::lid_changed:
            f.kind = FindingKind::lid_changed;
            f.severity = default_severity(FindingKind::lid_changed);
            f.a = endpoint(c.a_name, c.port);
            f.expected = c.lid_before ? std::to_string(c.lid_before) : "";
            f.actual = c.lid_after ? std::to_string(c.lid_after) : "";
            f.message = describe(c);
            break;
        default:
            continue;  // SM changes: no finding kind
        }
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace ibf
