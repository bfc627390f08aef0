// route_report.h: the ends of `ibfabric route`, the notes per cable, the route as text and JSON.
#include "ibf/route_report.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace ibf {

namespace {

std::string nm(const Fabric& f, const std::vector<std::string>& names, NodeId n) {
    return n < names.size() && !names[n].empty() ? names[n] : f.node(n).name;
}
std::string end_text(const Fabric& f, const std::vector<std::string>& names, NodeId n, int p) {
    return nm(f, names, n) + "/" + std::to_string(p);
}

struct Cable {
    NodeId a;
    int pa;
    NodeId b;
    int pb;
};

// The cables a trace crosses, in order.
std::vector<Cable> cables_of(const Fabric& f, const RouteTrace& t) {
    std::vector<Cable> out;
    if (!t.hops.empty() && t.hops[0].in_port > 0 && f.node(t.src).type != NodeType::Switch)
        out.push_back({t.src, t.src_port, t.hops[0].node, t.hops[0].in_port});
    else if (t.hops.empty() && t.arrived && t.src_port > 0)
        out.push_back({t.src, t.src_port, t.dst, t.dst_port});  // CA cabled straight to CA
    for (const RouteHop& h : t.hops) {
        const Port* p = h.out_port > 0 && h.out_port != kLftNoPath ? f.node(h.node).port(h.out_port) : nullptr;
        if (p && p->linked()) out.push_back({h.node, h.out_port, p->peer, p->peer_port});
    }
    return out;
}

std::optional<uint64_t> number(std::string_view s, int base) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::optional<RouteEnd> end_of_port(const Fabric& f, NodeId n, int port) {
    const Node& node = f.node(n);
    if (node.type == NodeType::Switch) {
        const Port* p0 = node.port(0);
        return RouteEnd{n, 0, p0 ? p0->lid : 0u};
    }
    for (const Port& p : node.ports)
        if (p.valid && p.num > 0 && (port ? p.num == port : p.linked())) return RouteEnd{n, p.num, p.lid};
    return std::nullopt;
}

}  // namespace

std::optional<RouteEnd> resolve_route_end(const Fabric& f, const std::vector<std::string>& names, std::string_view what,
                                          std::string& error) {
    std::string_view name = what;
    int port = 0;
    if (size_t slash = what.rfind('/'); slash != std::string_view::npos)
        if (auto p = number(what.substr(slash + 1), 10); p && *p > 0 && *p < 255)
            name = what.substr(0, slash), port = static_cast<int>(*p);
    std::optional<RouteEnd> e;
    const bool hex = name.size() > 2 && name[0] == '0' && (name[1] == 'x' || name[1] == 'X');
    if (hex && name.size() > 6) {  // a GUID: node GUID, else port GUID
        if (auto g = parse_guid(name)) {
            if (auto id = f.find(*g)) e = end_of_port(f, *id, port);
            for (NodeId n = 0; n < f.size() && !e; ++n)
                for (const Port& p : f.node(n).ports)
                    if (p.valid && p.guid == *g && f.node(n).type != NodeType::Switch) e = RouteEnd{n, p.num, p.lid};
        }
    } else if (auto lid = hex ? number(name.substr(2), 16) : number(name, 10); lid && *lid > 0 && *lid < 0xC000) {
        for (NodeId n = 0; n < f.size() && !e; ++n)
            for (const Port& p : f.node(n).ports) {
                const uint64_t span = uint64_t{1} << std::min<int>(p.lmc, 7);
                if (p.valid && p.lid && *lid >= p.lid && *lid < p.lid + span && (p.num > 0 || f.node(n).type == NodeType::Switch)) {
                    e = RouteEnd{n, p.num, static_cast<uint32_t>(*lid)};
                    break;
                }
            }
    } else {
        for (NodeId n = 0; n < f.size() && !e; ++n)
            if (nm(f, names, n) == name || f.node(n).name == name) e = end_of_port(f, n, port);
    }
    if (!e) error = "no node, port GUID or LID '" + std::string(what) + "' in the fabric";
    else if (e->lid == 0) error = "'" + std::string(what) + "' has no LID", e.reset();
    return e;
}

LinkNotes link_notes(const Fabric& f, const std::vector<Finding>& findings, const std::vector<PlannedCable>& planned) {
    LinkNotes notes;
    for (const PlannedCable& c : planned) {
        LinkNote n{c.rate, c.label, {}};
        notes[{c.a, c.pa}] = n;
        notes[{c.b, c.pb}] = n;
    }
    for (const Finding& fd : findings) {
        const Endpoint* ends[2] = {&fd.a, &fd.b};
        for (const Endpoint* e : ends) {
            auto id = e->guid ? f.find(e->guid) : std::nullopt;
            const Port* p = id && e->port > 0 ? f.node(*id).port(e->port) : nullptr;
            if (!p || !p->linked()) continue;
            std::string issue = std::string(to_string(fd.kind));
            if (!fd.actual.empty()) issue += ": " + fd.actual + (fd.expected.empty() ? "" : ", expected " + fd.expected);
            notes[{*id, e->port}].issues.push_back(issue);
            notes[{p->peer, p->peer_port}].issues.push_back(issue);
            break;
        }
    }
    return notes;
}

nlohmann::json route_json(const Fabric& f, const std::vector<std::string>& names, const RouteTrace& t, const LinkNotes& notes) {
    nlohmann::json cables = nlohmann::json::array();
    for (const Cable& c : cables_of(f, t)) {
        const Port& p = f.node(c.a).ports[c.pa];
        const auto it = notes.find({c.a, c.pa});
        const LinkNote none;
        const LinkNote& n = it == notes.end() ? none : it->second;
        cables.push_back({{"from", end_text(f, names, c.a, c.pa)},
                          {"to", end_text(f, names, c.b, c.pb)},
                          {"rate", to_string(p.rate())},
                          {"planned_rate", n.planned_rate.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.planned_rate)},
                          {"label", n.label.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.label)},
                          {"issues", n.issues}});
    }
    return {{"from", t.src_port ? end_text(f, names, t.src, t.src_port) : nm(f, names, t.src)},
            {"to", t.dst == kNoNode ? nlohmann::json(nullptr)
                                    : nlohmann::json(t.dst_port ? end_text(f, names, t.dst, t.dst_port) : nm(f, names, t.dst))},
            {"lid", t.lid},
            {"arrived", t.arrived},
            {"why", t.arrived ? nlohmann::json(nullptr) : nlohmann::json(t.why)},
            {"cables", std::move(cables)}};
}

std::string render_route(const Fabric& f, const std::vector<std::string>& names, const RouteTrace& t, const LinkNotes& notes) {
    return render_route_json(route_json(f, names, t, notes));
}

std::string render_route_json(const nlohmann::json& j) {
    std::string out = j.at("from").get<std::string>() + " -> " +
                      (j.at("to").is_null() ? std::string("?") : j["to"].get<std::string>()) + " (LID " +
                      std::to_string(j.at("lid").get<uint32_t>()) + "): ";
    out += j.at("arrived").get<bool>() ? std::to_string(j.at("cables").size()) + " cables\n"
                                       : "does not arrive: " + j.at("why").get<std::string>() + "\n";
    int i = 0;
    for (const auto& c : j.at("cables")) {
        char head[160];
        std::snprintf(head, sizeof head, "  %2d  %-22s -> %-22s %-7s", ++i, c["from"].get<std::string>().c_str(),
                      c["to"].get<std::string>().c_str(), c["rate"].get<std::string>().c_str());
        out += head;
        if (!c["planned_rate"].is_null()) out += " plan " + c["planned_rate"].get<std::string>();
        if (!c["label"].is_null()) out += " cable " + c["label"].get<std::string>();
        for (const auto& is : c["issues"]) out += "  [" + is.get<std::string>() + "]";
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += "\n";
    }
    return out;
}

bool route_clean_json(const nlohmann::json& j) {
    if (!j.at("arrived").get<bool>()) return false;
    for (const auto& c : j.at("cables"))
        if (!c.at("issues").empty()) return false;
    return true;
}

bool route_clean(const Fabric& f, const RouteTrace& t, const LinkNotes& notes) {
    if (!t.arrived) return false;
    for (const Cable& c : cables_of(f, t))
        if (auto it = notes.find({c.a, c.pa}); it != notes.end() && !it->second.issues.empty()) return false;
    return true;
}

}  // namespace ibf
