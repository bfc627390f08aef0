// match_nodes(): GUID, then name, then position (rules in identity.h).
#include "ibf/identity.h"

#include <algorithm>
#include <unordered_map>

namespace ibf {
namespace {

class Matcher {
public:
    Matcher(const Plan& plan, const Fabric& f) : plan_(plan), f_(f) {}

    NodeMatch run() {
        const size_t np = plan_.nodes.size();
        m_.resolved.assign(np, kNoNode);
        m_.how.assign(np, MatchHow::none);
        m_.ambiguous.assign(np, {});
        m_.claimed.assign(f_.size(), NodeMatch::kUnclaimed);
        by_guid();
        by_name();
        by_position();
        return std::move(m_);
    }

private:
    const Plan& plan_;
    const Fabric& f_;
    NodeMatch m_;

    void claim(size_t pn, NodeId id, MatchHow how) {
        m_.resolved[pn] = id;
        m_.how[pn] = how;
        m_.claimed[id] = static_cast<uint32_t>(pn);
    }

    void by_guid() {
        std::vector<size_t> by_port_guid;
        for (size_t i = 0; i < plan_.nodes.size(); ++i) {
            const PlannedNode& pn = plan_.nodes[i];
            if (!pn.guid) continue;
            if (auto id = f_.find(*pn.guid); id && m_.claimed[*id] == NodeMatch::kUnclaimed) claim(i, *id, MatchHow::guid);
            else if (!id) by_port_guid.push_back(i);
        }
        // A planned GUID that is no node's GUID may be a port GUID (what `ibstat` shows for an HCA):
        // a port GUID belongs to exactly one node, so it identifies that node too.
        if (by_port_guid.empty()) return;
        std::unordered_map<Guid, NodeId> port_guids;
        for (NodeId n = 0; n < f_.size(); ++n)
            for (const Port& p : f_.node(n).ports)
                if (p.valid && p.guid && p.guid != f_.node(n).guid) port_guids.emplace(p.guid, n);
        for (size_t i : by_port_guid) {
            auto it = port_guids.find(*plan_.nodes[i].guid);
            if (it == port_guids.end() || m_.claimed[it->second] != NodeMatch::kUnclaimed) continue;
            claim(i, it->second, MatchHow::port_guid);
        }
    }

    // Nodes the plan pins to an HCA first, so a bare name only competes for the rest; planned nodes
    // whose GUID is absent take part too (hardware replaced under the same name).
    void by_name() {
        std::vector<size_t> order;
        for (int pass = 0; pass < 2; ++pass)
            for (size_t i = 0; i < plan_.nodes.size(); ++i) {
                const PlannedNode& pn = plan_.nodes[i];
                if (m_.resolved[i] != kNoNode || pn.name.empty() || pn.hca.empty() != (pass == 1)) continue;
                order.push_back(i);
            }
        for (size_t i : order) match_name(i);
    }

    void match_name(size_t i) {
        const PlannedNode& pn = plan_.nodes[i];
        // The name is the identity. The HCA narrows it (a node whose description names no HCA, e.g.
        // after a node-name-map, still fits); the planned type only breaks ties, because plans that
        // list bare cables may not know which end is a switch.
        std::vector<NodeId> cands, with_hca, hca_unknown;
        for (NodeId id : f_.find_by_name(pn.name)) {
            uint32_t c = m_.claimed[id];
            if (c != NodeMatch::kUnclaimed && c != NodeMatch::kAmbiguous) continue;
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
        if (cands.size() == 1 && m_.claimed[cands[0]] == NodeMatch::kUnclaimed) {
            claim(i, cands[0], MatchHow::name);
        } else if (!cands.empty() && !pn.guid) {  // several nodes, or one another plan node found ambiguous
            for (NodeId id : cands) m_.claimed[id] = NodeMatch::kAmbiguous;
            m_.ambiguous[i] = std::move(cands);
        }
    }

    // Planned switches by their neighbours, repeated while a round finds one.
    void by_position() {
        const size_t np = plan_.nodes.size();
        std::vector<std::vector<std::pair<PlannedEnd, PlannedEnd>>> adj(np);  // (own end, far end)
        for (const PlannedLink& l : plan_.links) {
            if (l.a.node >= np || l.b.node >= np) continue;
            adj[l.a.node].push_back({l.a, l.b});
            adj[l.b.node].push_back({l.b, l.a});
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t i = 0; i < np; ++i) {
                if (m_.resolved[i] != kNoNode || !m_.ambiguous[i].empty()) continue;
                const NodeType t = plan_.nodes[i].type;
                if (t != NodeType::Switch && t != NodeType::Unknown) continue;
                if (NodeId id = vote(adj[i]); id != kNoNode) {
                    claim(i, id, MatchHow::position);
                    changed = true;
                }
            }
        }
    }

    // The unclaimed switch that most matched neighbours' planned ports lead to, when it has more
    // than half of the votes (and at least two); else kNoNode.
    NodeId vote(const std::vector<std::pair<PlannedEnd, PlannedEnd>>& links) const {
        std::unordered_map<NodeId, int> votes;
        int total = 0;
        for (const auto& [own, far] : links) {
            NodeId x = m_.resolved[far.node];
            if (x == kNoNode) continue;
            ++total;
            const Port* p = f_.node(x).port(far.port);
            if (!p || !p->linked() || m_.claimed[p->peer] != NodeMatch::kUnclaimed) continue;
            if (f_.node(p->peer).type != NodeType::Switch) continue;
            ++votes[p->peer];
        }
        NodeId best = kNoNode;
        int most = 0;
        for (const auto& [id, v] : votes)
            if (v > most || (v == most && id < best)) best = id, most = v;
        return most >= 2 && 2 * most > total ? best : kNoNode;
    }
};

}  // namespace

NodeMatch match_nodes(const Plan& plan, const Fabric& f) { return Matcher(plan, f).run(); }

std::vector<std::string> plan_names(const Plan& plan, const NodeMatch& m, size_t fabric_size) {
    // A name the plan gives several adapters of one host ("gpu01" mlx5_0 and mlx5_1) is
    // "gpu01:mlx5_1", as NameBook names adapters.
    std::unordered_map<std::string, int> count;
    for (const PlannedNode& pn : plan.nodes) ++count[pn.name];
    std::vector<std::string> out(fabric_size);
    for (size_t i = 0; i < m.resolved.size() && i < plan.nodes.size(); ++i) {
        const PlannedNode& pn = plan.nodes[i];
        if (m.resolved[i] == kNoNode || m.resolved[i] >= fabric_size) continue;
        out[m.resolved[i]] = count[pn.name] > 1 && !pn.hca.empty() ? pn.name + ":" + pn.hca : pn.name;
    }
    return out;
}

NameBook plan_name_book(const Plan& plan, const Fabric& f, const NodeMatch& m, const std::vector<int>& tier_of) {
    return NameBook(f, tier_of, plan_names(plan, m, f.size()));
}

NameBook plan_name_book(const Plan& plan, const Fabric& f, const std::vector<int>& tier_of) {
    return plan_name_book(plan, f, match_nodes(plan, f), tier_of);
}

}  // namespace ibf
