// The port states of a fabric and the changes from a base (ibf/port_states.h).
#include "ibf/port_states.h"

#include <algorithm>
#include <cstddef>
#include <tuple>

namespace ibf {

namespace {

bool key_less(const PortStates::Entry& a, const PortStates::Entry& b) {
    return std::tie(a.guid, a.port) < std::tie(b.guid, b.port);
}

// Nodes present in both lists (sorted by GUID) have the same name in both.
bool common_names_equal(const std::vector<std::pair<Guid, std::string>>& a,
                        const std::vector<std::pair<Guid, std::string>>& b) {
    auto j = b.begin();
    for (const auto& [g, name] : a) {
        while (j != b.end() && j->first < g) ++j;
        if (j == b.end()) break;
        if (j->first == g && j->second != name) return false;
    }
    return true;
}

}  // namespace

const PortStates::Entry* PortStates::find(Guid g, int port) const {
    if (port < 0 || port > 255) return nullptr;
    const Entry key{.guid = g, .port = static_cast<uint8_t>(port)};
    auto it = std::lower_bound(entries.begin(), entries.end(), key, key_less);
    return it != entries.end() && it->guid == g && it->port == port ? &*it : nullptr;
}

bool PortStates::diff_from(const std::shared_ptr<const PortStates>& prev) const {
    if (!has_changes_from_base || !prev) return false;
    // Owner equality: the weak_ptr keeps the control block, so no other digest can share it.
    return !base.owner_before(prev) && !prev.owner_before(base);
}

PortStates port_states(const Fabric& f, const std::shared_ptr<const PortStates>& base) {
    PortStates d;
    const auto n_nodes = static_cast<NodeId>(f.size());
    // The nodes by GUID (their ports are in port order already): the entries come out sorted
    // without sorting the ports.
    std::vector<NodeId> by_guid(n_nodes);
    for (NodeId id = 0; id < n_nodes; ++id) by_guid[id] = id;
    std::sort(by_guid.begin(), by_guid.end(), [&f](NodeId a, NodeId b) {
        const Guid x = f.node(a).guid, y = f.node(b).guid;
        return x != y ? x < y : a < b;
    });
    std::vector<uint32_t> first(n_nodes);  // each node's first entry
    d.entries.reserve(f.size() * 4);
    d.names.reserve(n_nodes);
    for (size_t i = 0; i < by_guid.size(); ++i) {
        const NodeId id = by_guid[i];
        const Node& n = f.node(id);
        if (n.guid == 0 || (i > 0 && f.node(by_guid[i - 1]).guid == n.guid)) d.unique = false;
        d.names.emplace_back(n.guid, n.name);
        first[id] = static_cast<uint32_t>(d.entries.size());
        for (int pn = 0; pn <= n.num_ports(); ++pn) {
            const Port* p = n.port(pn);
            if (!p) continue;
            PortStates::Entry e{.guid = n.guid, .node = id, .port = static_cast<uint8_t>(pn)};
            if (pn > 0 && p->linked() && p->state != PortState::Down) {
                e.up = true;
                e.peer = f.node(p->peer).guid;
                e.peer_port = p->peer_port;
            }
            d.entries.push_back(e);
        }
    }
    // (With duplicated GUIDs the names are not sorted by name within a GUID: unique is false and
    // nothing reads them.)
    for (NodeId id = 0; id < n_nodes; ++id)
        if (const Node& n = f.node(id); n.type == NodeType::Switch && n.lid) d.switch_lids.emplace_back(n.lid, n.guid);
    // Stable: of switches sharing a LID the last in node order ends the run; keep that one.
    std::stable_sort(d.switch_lids.begin(), d.switch_lids.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<uint16_t, Guid>> lids;
    lids.reserve(d.switch_lids.size());
    for (const auto& x : d.switch_lids) {
        if (!lids.empty() && lids.back().first == x.first) lids.back() = x;
        else lids.push_back(x);
    }
    d.switch_lids = std::move(lids);

    if (!base || !d.unique || !base->unique) return d;
    d.base = base;
    d.has_changes_from_base = true;
    d.same_names = common_names_equal(d.names, base->names);
    // One merge of the two sorted lists: what each entry is to the base, and the vanished ones.
    using Kind = PortStates::Change::Kind;
    constexpr uint8_t kSame = 0, kState = 1, kAppeared = 2;
    std::vector<uint8_t> kind(d.entries.size(), kAppeared);
    std::vector<PortStates::Change> vanished;
    size_t j = 0;
    const std::vector<PortStates::Entry>& b = base->entries;
    for (size_t i = 0; i < d.entries.size(); ++i) {
        const PortStates::Entry& e = d.entries[i];
        while (j < b.size() && key_less(b[j], e)) vanished.push_back({Kind::vanished, static_cast<uint32_t>(j++)});
        if (j < b.size() && b[j].guid == e.guid && b[j].port == e.port) {
            const PortStates::Entry& was = b[j++];
            const bool differs = was.up != e.up || (e.up && (was.peer != e.peer || was.peer_port != e.peer_port));
            kind[i] = e.port > 0 && differs ? kState : kSame;
        }
    }
    while (j < b.size()) vanished.push_back({Kind::vanished, static_cast<uint32_t>(j++)});
    // The changes in node and port order (each node's entries are consecutive, in port order).
    for (NodeId id = 0; id < n_nodes; ++id) {
        const size_t end = first[id] + static_cast<size_t>(std::count_if(f.node(id).ports.begin(), f.node(id).ports.end(),
                                                                          [](const Port& p) { return p.valid; }));
        for (size_t i = first[id]; i < end; ++i)
            if (kind[i] != kSame) d.changes.push_back({kind[i] == kState ? Kind::state : Kind::appeared, static_cast<uint32_t>(i)});
    }
    d.changes.insert(d.changes.end(), vanished.begin(), vanished.end());
    return d;
}

}  // namespace ibf
