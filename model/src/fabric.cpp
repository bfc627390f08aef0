#include "ibf/fabric.h"

#include "ibf/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace ibf {

std::string_view to_string(NodeType t) {
    switch (t) {
        case NodeType::CA: return "CA";
        case NodeType::Switch: return "Switch";
        case NodeType::Router: return "Router";
        default: return "Unknown";
    }
}

std::string_view to_string(PortState s) {
    switch (s) {
        case PortState::Down: return "Down";
        case PortState::Init: return "Init";
        case PortState::Armed: return "Armed";
        case PortState::Active: return "Active";
        default: return "Unknown";
    }
}

std::string_view to_string(PhysState s) {
    switch (s) {
        case PhysState::Sleep: return "Sleep";
        case PhysState::Polling: return "Polling";
        case PhysState::Disabled: return "Disabled";
        case PhysState::Training: return "PortConfigurationTraining";
        case PhysState::LinkUp: return "LinkUp";
        case PhysState::ErrorRecovery: return "LinkErrorRecovery";
        case PhysState::PhyTest: return "PhyTest";
        default: return "Unknown";
    }
}

std::string derive_name(NodeType type, std::string_view d) {
    d = trim(d);
    if (d.empty()) return {};
    if (d.size() > 4 && d.substr(0, 4) == "MF0;") {
        auto rest = d.substr(4);
        auto colon = rest.find(':');
        auto name = trim(rest.substr(0, colon));
        if (!name.empty()) return std::string(name);
    }
    if (type == NodeType::Switch) return std::string(d);
    auto sp = d.find_first_of(" \t");
    return std::string(d.substr(0, sp));
}

std::string derive_hca(NodeType type, std::string_view d) {
    if (type != NodeType::CA) return {};
    d = trim(d);
    auto sp = d.find_first_of(" \t");
    if (sp == std::string_view::npos) return {};
    auto rest = trim(d.substr(sp));
    auto sp2 = rest.find_first_of(" \t");
    return std::string(rest.substr(0, sp2));
}

NodeId Fabric::add_node(Node n, int num_ports) {
    if (num_ports < 0) num_ports = 0;
    if (num_ports > 255) num_ports = 255;
    n.ports.assign(static_cast<size_t>(num_ports) + 1, Port{});
    for (int i = 0; i <= num_ports; ++i) {
        n.ports[i].num = static_cast<uint8_t>(i);
        n.ports[i].valid = i > 0 || n.type == NodeType::Switch;
    }
    NodeId id = static_cast<NodeId>(nodes_.size());
    by_guid_.emplace(n.guid, id);
    nodes_.push_back(std::move(n));
    return id;
}

void Fabric::disconnect(NodeId a, int pa) {
    Port* p = nodes_[a].port(pa);
    if (!p || !p->linked()) return;
    Port* q = nodes_[p->peer].port(p->peer_port);
    if (q && q->peer == a && q->peer_port == pa) {
        q->peer = kNoNode;
        q->peer_port = 0;
    }
    p->peer = kNoNode;
    p->peer_port = 0;
}

void Fabric::connect(NodeId a, int pa, NodeId b, int pb) {
    disconnect(a, pa);
    disconnect(b, pb);
    Port* p = nodes_[a].port(pa);
    Port* q = nodes_[b].port(pb);
    if (!p || !q) return;
    p->peer = b;
    p->peer_port = static_cast<uint8_t>(pb);
    q->peer = a;
    q->peer_port = static_cast<uint8_t>(pa);
}

void Fabric::finalize() {
    by_name_.clear();
    by_name_.reserve(nodes_.size());
    for (NodeId i = 0; i < nodes_.size(); ++i) {
        Node& n = nodes_[i];
        if (n.name.empty()) n.name = derive_name(n.type, n.description);
        by_name_.emplace(n.name, i);
    }
}

std::optional<NodeId> Fabric::find(Guid g) const {
    auto it = by_guid_.find(g);
    if (it == by_guid_.end()) return std::nullopt;
    return it->second;
}

std::vector<NodeId> Fabric::find_by_name(std::string_view name) const {
    std::vector<NodeId> out;
    auto [b, e] = by_name_.equal_range(std::string(name));
    for (auto it = b; it != e; ++it) out.push_back(it->second);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<Link> Fabric::links() const {
    std::vector<Link> out;
    for (NodeId i = 0; i < nodes_.size(); ++i) {
        const auto& ports = nodes_[i].ports;
        for (size_t p = 0; p < ports.size(); ++p) {
            const Port& pt = ports[p];
            if (!pt.valid || !pt.linked()) continue;
            if (std::pair(i, static_cast<int>(p)) < std::pair(pt.peer, static_cast<int>(pt.peer_port)))
                out.push_back({i, static_cast<uint8_t>(p), pt.peer, pt.peer_port});
        }
    }
    return out;
}

size_t Fabric::link_count() const {
    size_t n = 0;
    for (NodeId i = 0; i < nodes_.size(); ++i)
        for (size_t p = 0; p < nodes_[i].ports.size(); ++p) {
            const Port& pt = nodes_[i].ports[p];
            if (pt.valid && pt.linked() &&
                std::pair(i, static_cast<int>(p)) < std::pair(pt.peer, static_cast<int>(pt.peer_port)))
                ++n;
        }
    return n;
}

size_t Fabric::count(NodeType t) const {
    return static_cast<size_t>(std::count_if(nodes_.begin(), nodes_.end(), [t](const Node& n) { return n.type == t; }));
}

std::string guid_hex(Guid g) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(g));
    return buf;
}

std::optional<Guid> parse_guid(std::string_view s) {
    s = trim(s);
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
    if (s.empty() || s.size() > 16) return std::nullopt;
    Guid g = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), g, 16);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return g;
}

std::string port_label(const Fabric& f, NodeId n, int port) {
    const Node& node = f.node(n);
    bool unique = !node.name.empty() && f.find_by_name(node.name).size() == 1;
    std::string base = unique ? node.name : guid_hex(node.guid);
    return base + "/" + std::to_string(port);
}

}  // namespace ibf
