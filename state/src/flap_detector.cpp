// FlapDetector: link down/up transitions across sweeps and unexplained traps 128 -> flapping links.
#include "ibf/flap_detector.h"

#include <algorithm>
#include <set>

namespace ibf {
namespace {

constexpr size_t kMaxPendingTraps = 4096;  // a trap storm must not grow memory without bound

}  // namespace

void FlapDetector::flap(LinkRecord& r, int64_t now_ms) {
    ++flaps_total_;
    while (!r.recent.empty() && now_ms - r.recent.front() >= opt_.window_ms) r.recent.pop_front();
    r.recent.push_back(now_ms);
    if (r.episode == 0 || now_ms - r.last_ms >= opt_.quiet_ms) {
        r.episode = 0;
        r.first_ms = now_ms;
        r.raised = false;
    }
    ++r.episode;
    r.last_ms = now_ms;
    if (static_cast<int>(r.recent.size()) >= opt_.threshold) r.raised = true;
}

void FlapDetector::port_went_down(const PortKey& k, const PortSeen& was) {
    if (was.peer.first == 0) return;
    const LinkKey lk = link_key(k, was.peer);
    auto [it, fresh] = links_.try_emplace(lk);
    LinkRecord& r = it->second;
    if (fresh) {
        r.a = {lk.first.first, lk.first.second, ""};
        r.b = {lk.second.first, lk.second.second, ""};
    }
    for (FlapEnd* e : {&r.a, &r.b})
        if (auto p = ports_.find({e->guid, e->port}); p != ports_.end() && !p->second.name.empty()) e->name = p->second.name;
    r.down = true;  // the other end going down in the same sweep finds it already down
}

void FlapDetector::port_came_up(const PortKey& k, const PortKey& peer, int64_t now_ms) {
    auto it = links_.find(link_key(k, peer));
    if (it == links_.end() || !it->second.down) return;  // the other end already counted it
    it->second.down = false;
    flap(it->second, now_ms);
}

void FlapDetector::see_port(const PortKey& k, const std::string& name, bool up, const PortKey& peer,
                            std::unordered_map<Guid, bool>& changed, int64_t now_ms) {
    auto [it, fresh] = ports_.try_emplace(k);
    PortSeen& s = it->second;
    s.name = name;
    if (!fresh && (s.up != up || (up && s.peer != peer))) {
        if (s.up) port_went_down(k, s);
        if (up) port_came_up(k, peer, now_ms);
        changed[k.first] = true;
        if (up) changed[peer.first] = true;
        if (s.up) changed[s.peer.first] = true;
    }
    s.up = up;
    if (up) s.peer = peer;
    s.gen = gen_;
}

void FlapDetector::walk(const Fabric& f, std::unordered_map<Guid, bool>& changed, int64_t now_ms) {
    for (const Node& n : f.nodes()) {
        for (int pn = 1; pn <= n.num_ports(); ++pn) {
            const Port* p = n.port(pn);
            if (!p) continue;
            const bool up = p->linked() && p->state != PortState::Down;
            const PortKey peer = up ? PortKey{f.node(p->peer).guid, p->peer_port} : PortKey{0, 0};
            see_port({n.guid, pn}, n.name, up, peer, changed, now_ms);
        }
    }
    // Ports of nodes that vanished went down; forget them (their peers remember the link).
    for (auto it = ports_.begin(); it != ports_.end();) {
        if (it->second.gen == gen_) {
            ++it;
            continue;
        }
        if (it->second.up) {
            port_went_down(it->first, it->second);
            changed[it->second.peer.first] = true;
        }
        it = ports_.erase(it);
    }
}

// What walk() does, for the ports the states say changed: every other port has the state, peer and
// name it had (same_names), so walk() would find nothing to do for it. The changes come in walk()'s
// order (node and port order, then the vanished ports).
void FlapDetector::apply_changes(const Fabric& f, const PortStates& states, const PortStates& base,
                                 std::unordered_map<Guid, bool>& changed, int64_t now_ms) {
    for (const PortStates::Change& c : states.changes) {
        if (c.kind == PortStates::Change::Kind::vanished) {
            const PortStates::Entry& e = base.entries[c.entry];
            if (e.port == 0) continue;
            auto it = ports_.find({e.guid, e.port});
            if (it == ports_.end()) continue;
            if (it->second.up) {
                port_went_down(it->first, it->second);
                changed[it->second.peer.first] = true;
            }
            ports_.erase(it);
            continue;
        }
        const PortStates::Entry& e = states.entries[c.entry];
        if (e.port == 0) continue;
        see_port({e.guid, e.port}, f.node(e.node).name, e.up, e.up ? PortKey{e.peer, e.peer_port} : PortKey{0, 0},
                 changed, now_ms);
    }
}

void FlapDetector::on_sweep(const Fabric& f, int64_t now_ms) { on_sweep(f, nullptr, now_ms); }

void FlapDetector::on_sweep(const Fabric& f, const std::shared_ptr<const PortStates>& states, int64_t now_ms) {
    const bool first = ports_.empty();
    ++gen_;
    std::unordered_map<Guid, bool> changed;  // switches with a port transition in this sweep
    if (states && states_ && states->same_names && states->diff_from(states_)) {
        ++sweeps_from_changes_;
        apply_changes(f, *states, *states_, changed, now_ms);
    } else {
        walk(f, changed, now_ms);
    }
    // The trap issuers' LIDs: from the states when there are (on_trap searches them), else a map.
    switch_by_lid_.clear();
    states_ = states && states->unique ? states : nullptr;
    if (!states_)
        for (const Node& n : f.nodes())
            if (n.type == NodeType::Switch && n.lid) switch_by_lid_[n.lid] = n.guid;
    end_sweep(first, changed, now_ms);
}

void FlapDetector::end_sweep(bool first, const std::unordered_map<Guid, bool>& changed, int64_t now_ms) {
    if (first) traps_.clear();  // nothing to compare the traps with
    resolve_traps(changed, now_ms);
    // Forget links that are up and quiet.
    for (auto it = links_.begin(); it != links_.end();) {
        const LinkRecord& r = it->second;
        const bool quiet = r.episode == 0 || now_ms - r.last_ms >= opt_.quiet_ms;
        it = !r.down && quiet ? links_.erase(it) : std::next(it);
    }
}

void FlapDetector::resolve_traps(const std::unordered_map<Guid, bool>& changed, int64_t now_ms) {
    std::set<Guid> hidden;
    std::vector<PendingTrap> keep;
    for (const PendingTrap& t : traps_) {
        if (!t.sweep_started) {
            keep.push_back(t);
            continue;
        }
        if (!changed.count(t.sw)) hidden.insert(t.sw);
    }
    traps_ = std::move(keep);
    for (Guid sw : hidden) {
        auto [it, fresh] = links_.try_emplace(LinkKey{{sw, 0}, {0, 0}});
        LinkRecord& r = it->second;
        r.a = {sw, 0, r.a.name};
        // The switch's name from any of its ports seen (each carries its node's): a lookup per port
        // number, not a pass over every port of the fabric (this runs on ibfabricd's io thread).
        for (int p = 0; p <= 255; ++p)
            if (auto ps = ports_.find(PortKey{sw, p}); ps != ports_.end() && !ps->second.name.empty()) {
                r.a.name = ps->second.name;
                break;
            }
        ++trap_flaps_total_;
        flap(r, now_ms);
    }
}

void FlapDetector::on_trap(uint16_t trap_num, uint16_t issuer_lid, int64_t) {
    if (trap_num != 128) return;
    Guid sw = 0;
    bool known = false;
    if (states_) {
        const auto& v = states_->switch_lids;
        auto it = std::lower_bound(v.begin(), v.end(), issuer_lid, [](const auto& e, uint16_t l) { return e.first < l; });
        known = it != v.end() && it->first == issuer_lid;
        if (known) sw = it->second;
    } else if (auto it = switch_by_lid_.find(issuer_lid); it != switch_by_lid_.end()) {
        known = true;
        sw = it->second;
    }
    if (!known) return;  // before the first sweep, or not a switch we know
    if (traps_.size() >= kMaxPendingTraps) traps_.erase(traps_.begin());
    traps_.push_back({sw, false});
}

void FlapDetector::on_sweep_start(int64_t) {
    for (PendingTrap& t : traps_) t.sweep_started = true;
}

std::vector<Flapping> FlapDetector::flapping(int64_t now_ms) const {
    std::vector<Flapping> out;
    for (const auto& [k, r] : links_)
        if (r.raised && now_ms - r.last_ms < opt_.quiet_ms) out.push_back({r.a, r.b, r.episode, r.first_ms, r.last_ms});
    return out;
}

}  // namespace ibf
