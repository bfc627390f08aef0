// plan_fabric.h: a plan's nodes and cables as a Fabric.
#include "ibf/plan_fabric.h"

#include <algorithm>
#include <unordered_set>

#include "ibf/error.h"

namespace ibf {

namespace {

const std::string& file_of(const Plan& plan, const SourceLoc& where) { return where.file.empty() ? plan.source : where.file; }

[[noreturn]] void bad(const Plan& plan, const SourceLoc& where, const std::string& message) {
    throw InputError(file_of(plan, where), where.line, where.column, message);
}

}  // namespace

Fabric plan_fabric(const Plan& plan) {
    std::vector<int> highest(plan.nodes.size(), 0), cables(plan.nodes.size(), 0);
    for (const PlannedLink& l : plan.links)
        for (const PlannedEnd& e : {l.a, l.b}) {
            if (e.node >= plan.nodes.size()) bad(plan, l.where, "a cable names a node that is not in the plan");
            highest[e.node] = std::max(highest[e.node], e.port);
            ++cables[e.node];
        }
    std::unordered_set<Guid> planned;
    for (const PlannedNode& n : plan.nodes)
        if (n.guid) planned.insert(*n.guid);
    Guid next = 0x0fab000000000001ULL;
    Fabric f;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlannedNode& p = plan.nodes[i];
        if (p.name.empty()) bad(plan, p.where, "a planned node has no name");
        Node n;
        n.type = p.type;
        if (n.type == NodeType::Unknown)
            n.type = !p.hca.empty() || (cables[i] <= 1 && std::max(p.num_ports, highest[i]) <= 1) ? NodeType::CA : NodeType::Switch;
        if (p.guid) {
            n.guid = *p.guid;
        } else {
            while (planned.count(next)) ++next;
            n.guid = next++;
        }
        if (f.find(n.guid)) bad(plan, p.where, "node '" + p.name + "' has the GUID of another planned node");
        n.description = n.type == NodeType::CA && !p.hca.empty() ? p.name + " " + p.hca : p.name;
        const int ports = p.num_ports > 0 ? p.num_ports : std::max(1, highest[i]);
        if (ports > 254) bad(plan, p.where, "node '" + p.name + "' has more than 254 ports");
        f.add_node(std::move(n), ports);
    }
    for (const PlannedLink& l : plan.links) {
        const auto id_a = static_cast<NodeId>(l.a.node), id_b = static_cast<NodeId>(l.b.node);
        for (auto [id, port] : {std::pair{id_a, l.a.port}, std::pair{id_b, l.b.port}}) {
            const Port* p = f.node(id).port(port);
            const std::string at = plan.nodes[id].name + "/" + std::to_string(port);
            if (!p || port < 1) bad(plan, l.where, "port " + at + " does not exist (the node has " + std::to_string(f.node(id).num_ports()) + ")");
            if (p->linked()) bad(plan, l.where, "port " + at + " is cabled twice in the plan");
        }
        if (id_a == id_b && l.a.port == l.b.port) bad(plan, l.where, "a cable connects " + plan.nodes[id_a].name + "/" + std::to_string(l.a.port) + " to itself");
        f.connect(id_a, l.a.port, id_b, l.b.port);
        for (auto [id, port] : {std::pair{id_a, l.a.port}, std::pair{id_b, l.b.port}}) {
            Port& p = *f.node(id).port(port);
            p.state = PortState::Active;
            p.phys = PhysState::LinkUp;
            if (l.rate) {
                p.width_active = l.rate->width;
                p.speed_active = l.rate->speed;
            }
        }
    }
    f.finalize();
    return f;
}

}  // namespace ibf
