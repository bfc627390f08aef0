// HaEngine: the pure SM failover decisions (ha_engine.h). No I/O, no clocks.
#include "ibf/ha_engine.h"

#include <algorithm>

namespace ibf::ha {

std::string_view to_string(Mode m) {
    switch (m) {
        case Mode::monitor: return "monitor";
        case Mode::act: return "act";
        default: return "off";
    }
}

std::string_view to_string(Phase p) {
    switch (p) {
        case Phase::suspecting: return "suspecting";
        case Phase::fencing: return "fencing";
        case Phase::promoting: return "promoting";
        case Phase::cooldown: return "cooldown";
        default: return "watching";
    }
}

std::string track_file_text(bool local_is_master) { return local_is_master ? "0\n" : "1\n"; }

HaEngine::HaEngine(HaConfig cfg, SmTable* sms) : cfg_(std::move(cfg)), local_(cfg_.local_sm), shared_(sms) {}

SmView& HaEngine::view(Guid g, int64_t now_ms) { return table().view(g, now_ms, local_); }

void HaEngine::forget_failures(SmView& v) {
    v.probe_failures = 0;
    v.first_failure_ms = v.last_failure_ms = 0;
}

// New information says `v` is up: a dead SM that comes back MASTER is a new mastership (its old
// master_since_ms would rank it wrongly against the one that took over meanwhile).
void HaEngine::relearn(SmView& v, SmState new_state, int64_t now_ms) {
    if (new_state != SmState::Master || evidence(v, now_ms).dead) return;  // still dead (a heartbeat alone)
    v.master_since_ms = now_ms;
    pending_.push_back(Action::log("SM " + guid_hex(v.info.port_guid) + " was dead and is back as MASTER"));
}

bool HaEngine::forgettable(const SmView& v, int64_t now_ms) const {
    const Guid g = v.info.port_guid;
    if (g == local_ || alive(v, now_ms)) return false;
    return !(phase_ != Phase::watching && watched_master_ == g);  // the evidence of an attempt stays
}

bool HaEngine::plugin_gone(const SmView& v, int64_t now_ms) const {
    return v.plugin_seen && (!v.plugin_connected || now_ms - v.plugin_ms > cfg_.heartbeat_timeout_ms);
}

void HaEngine::on_plugin(const SmInfo& sm, bool local, int64_t now_ms) {
    if (sm.port_guid == 0) return;
    seen(now_ms);
    if (local && local_ == 0) local_ = sm.port_guid;
    SmView& v = view(sm.port_guid, now_ms);
    const bool was_dead = evidence(v, now_ms).dead;
    // Heartbeats that resume on a connection that stayed open: the process was frozen (SIGSTOP, a
    // hang), and so were its SMInfo answers. The failures counted meanwhile are no evidence now.
    if (v.plugin_seen && v.plugin_connected && now_ms - v.plugin_ms > cfg_.heartbeat_timeout_ms) forget_failures(v);
    v.process_gone_ms = 0;
    // An SM whose port was in the last master sweep is of that master's subnet; a STANDBY's plugin
    // reports LID 0, the sweep has its port's LID.
    if (const PortLids::Entry* e = last_lids_ ? last_lids_->find(sm.port_guid) : nullptr; e && e->lid) {
        if (last_lids_from_) unite(last_lids_from_, sm.port_guid);
        if (!sm.lid && !v.info.lid) v.info.lid = e->lid;
    }
    SmTable::note_plugin(v, sm, now_ms);
    if (was_dead) relearn(v, sm.state, now_ms);
}

void HaEngine::on_process_gone(Guid sm, int64_t now_ms) {
    seen(now_ms);
    if (auto it = views().find(sm); it != views().end()) it->second.process_gone_ms = now_ms;
}

void HaEngine::on_sweep(Guid sm, SweepEvent e, int64_t now_ms) {
    seen(now_ms);
    auto it = views().find(sm);
    if (it == views().end()) return;
    SmView& v = it->second;
    if (e == SweepEvent::subnet_up) {
        v.subnet_up_ms = now_ms;
        v.sweep_owed_ms = 0;
        v.sweep_owed_why.clear();
        v.forced_sweeps = 0;
        return;
    }
    // Only an SM that sweeps owes one (a STANDBY's plugin may still relay a trap).
    if (v.sweep_owed_ms || (v.info.state != SmState::Master && v.info.state != SmState::Discovering)) return;
    v.sweep_owed_ms = now_ms;
    v.sweep_owed_why = e == SweepEvent::heavy_start ? "heavy sweep started" : "a trap reported a fabric change";
}

void HaEngine::on_conf(Guid sm, const SmConf& c, int64_t now_ms) {
    seen(now_ms);
    if (sm) view(sm, now_ms).conf = c;
}

void HaEngine::on_plugin_closed(Guid sm, int64_t now_ms) {
    seen(now_ms);
    table().on_plugin_closed(sm, now_ms);
}

Guid find_root(std::map<Guid, Guid>& parent, Guid g) {
    auto it = parent.find(g);
    if (it == parent.end()) return g;
    Guid r = find_root(parent, it->second);
    it->second = r;
    return r;
}

void HaEngine::unite(Guid a, Guid b) {
    Guid ra = find_root(parent_, a), rb = find_root(parent_, b);
    if (ra != rb) parent_[std::max(ra, rb)] = std::min(ra, rb);
}

int HaEngine::group_of(Guid sm) const {
    Guid g = sm;
    for (auto it = parent_.find(g); it != parent_.end() && it->second != g; it = parent_.find(g)) g = it->second;
    // A small stable number per group: the index of its root among the known SMs.
    int i = 0;
    for (const auto& [guid, v] : views()) {
        if (guid == g) return i;
        ++i;
    }
    return i + static_cast<int>(g % 1000003);
}

void HaEngine::on_snapshot(const Snapshot& s, int64_t now_ms) {
    seen(now_ms);
    const Guid self = s.self.port_guid;
    if (self == 0) return;
    for (const SmInfo& o : s.other_sms)
        if (o.port_guid) unite(self, o.port_guid);
    // The fabric's port LIDs: the decode thread's (wire::Decoder), or made here for a snapshot
    // built without them (tests, tools; never the daemon's, docs/threading.md).
    std::shared_ptr<const PortLids> lids = s.port_lids;
    if (!lids) lids = std::make_shared<const PortLids>(port_lids(s.fabric));
    // Any known SM whose port is part of this fabric belongs to this subnet (and a view without a
    // LID takes its port's): a binary search per known SM, not a pass over the fabric.
    for (auto& [g, v] : views())
        if (const PortLids::Entry* e = lids->find(g)) {
            unite(self, g);
            if (!v.info.lid && e->first_lid) v.info.lid = e->first_lid;
        }
    // A snapshot is what its plugin copies at SUBNET UP: that SM's sweep completed.
    if (views().count(self)) on_sweep(self, SweepEvent::subnet_up, now_ms);
    if (s.self.state == SmState::Master) {
        // The first sweep of a new master is compared with the last one of the old master: one
        // merge of two sorted lists, once per master change.
        if (pending_lid_compare_ && self == *last_master_) {
            lid_changes_.clear();
            if (lids_before_)
                for (const PortLidMove& m : lid_moves(*lids_before_, *lids))
                    lid_changes_.push_back({m.guid, m.before, m.after, now_ms});
            pending_lid_compare_ = false;
        }
        last_lids_ = std::move(lids);
        last_lids_from_ = self;
    }
}

void HaEngine::on_probe(Guid guid, uint16_t lid, const SmInfoReply& r, int64_t now_ms) {
    const bool answered = r.status == SmpStatus::ok || r.status == SmpStatus::refused;
    if (answered && r.status == SmpStatus::ok && r.info.port_guid && r.info.port_guid != guid) {
        // Another SM answers at that LID now: the queried one is not there (a failure for it).
        SmInfoReply moved = r;
        moved.info.lid = lid;
        on_probe(r.info.port_guid, lid, moved, now_ms);
        SmInfoReply gone;
        gone.status = SmpStatus::error;
        gone.error = "LID " + std::to_string(lid) + " now answers as " + guid_hex(r.info.port_guid);
        on_probe(guid, lid, gone, now_ms);
        return;
    }
    seen(now_ms);
    SmView& v = view(guid, now_ms);
    const bool was_dead = evidence(v, now_ms).dead;
    v.probe_ms = now_ms;
    v.probe = r.status;
    if (answered) {
        forget_failures(v);
        v.answer_ms = now_ms;
        if (r.status == SmpStatus::ok) {
            // It answered over InfiniBand from this node's port: the local SM's subnet.
            if (local_ && guid != local_) unite(local_, guid);
            v.answered_state = r.info.state;
            if (r.sm_key) v.sm_key = r.sm_key;
            if (lid) v.info.lid = lid;
            v.info.priority = r.info.priority;
            SmTable::note_act_count(v, r.info.act_count, now_ms);
            SmTable::set_state(v, r.info.state, now_ms);
            if (was_dead) relearn(v, r.info.state, now_ms);
            v.source = Source::probe;
        }
    } else if (local_port_known_ && (!local_port_.ok || local_port_.state != 4)) {
        // This node's own port is not Active: the failure says nothing about the SM probed.
    } else {
        if (v.probe_failures && now_ms - v.last_failure_ms > probe_window()) forget_failures(v);  // expired
        if (v.probe_failures++ == 0) v.first_failure_ms = now_ms;
        v.last_failure_ms = now_ms;
    }
}

void HaEngine::on_local_port(const LocalPort& p, int64_t now_ms) {
    seen(now_ms);
    // Across a change of this node's own port (Active <-> not), every failure counted may be ours:
    // they are discarded, and none is counted while it is not Active (on_probe).
    const bool was_active = local_port_known_ && local_port_.ok && local_port_.state == 4;
    if (local_port_known_ && was_active != (p.ok && p.state == 4))
        for (auto& [g, v] : views()) forget_failures(v);
    local_port_ = p;
    local_port_known_ = true;
    // A STANDBY's plugin may report LID 0 (OpenSM fills sm_base_lid when it masters): the local
    // SM's LID is its port's.
    if (local_ && p.ok && p.lid && p.port_guid == local_) {
        SmView& v = view(local_, now_ms);
        if (v.info.lid == 0) v.info.lid = p.lid;
    }
}

bool HaEngine::alive(const SmView& v, int64_t now_ms) const {
    const bool plugin = v.plugin_connected && now_ms - v.plugin_ms <= cfg_.heartbeat_timeout_ms;
    const bool probe = v.answer_ms && v.probe_failures == 0 && now_ms - v.answer_ms <= probe_window();
    return plugin || probe;
}

std::optional<Guid> HaEngine::master() const {
    const SmView* best = nullptr;
    for (const auto& [g, v] : views()) {
        if (v.info.state != SmState::Master || evidence(v, now_).dead) continue;
        if (!best || v.master_since_ms > best->master_since_ms) best = &v;
    }
    return best ? std::optional<Guid>(best->info.port_guid) : std::nullopt;
}

std::optional<Guid> HaEngine::successor(int64_t now_ms) const {
    auto m = master();
    const int group = m ? group_of(*m) : (local_ ? group_of(local_) : -1);
    const SmView* best = nullptr;
    for (const auto& [g, v] : views()) {
        if ((m && g == *m) || v.info.state != SmState::Standby || !alive(v, now_ms)) continue;
        if (group >= 0 && group_of(g) != group) continue;
        if (!best || sm_outranks(v.info.priority, g, best->info.priority, best->info.port_guid)) best = &v;
    }
    return best ? std::optional<Guid>(best->info.port_guid) : std::nullopt;
}

bool HaEngine::local_is_master(int64_t now_ms) const {
    auto it = views().find(local_);
    return it != views().end() && it->second.info.state == SmState::Master && alive(it->second, now_ms);
}

void HaEngine::record(FailoverRecord r) {
    ++records_total_;
    if (history_.size() >= kMaxHistory) history_.erase(history_.begin());
    history_.push_back(std::move(r));
}

}  // namespace ibf::ha
