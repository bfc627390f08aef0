// ControllerState: pure bookkeeping of SMs, the current fabric and the findings.
#include "ibf/controller_state.h"

namespace ibf {

void ControllerState::on_connect(ConnId c, const std::string& peer, int64_t now_ms) {
    forget_silent_sms(now_ms);
    conn_peer_[c] = peer;
    ++ingest_.connections_total;
    ++ingest_.connections_open;
}

void ControllerState::on_disconnect(ConnId c, int64_t now_ms) {
    if (conn_peer_.erase(c) && ingest_.connections_open > 0) --ingest_.connections_open;
    auto it = conn_sm_.find(c);
    if (it == conn_sm_.end()) return;
    auto sm = sms_.find(it->second);
    if (sm != sms_.end() && sm->second.open_connections > 0 && --sm->second.open_connections == 0) {
        sm->second.disconnected_ms = now_ms;
        if (ha_) ha_->on_plugin_closed(sm->first, now_ms);
        else sm_table_.on_plugin_closed(sm->first, now_ms);
    }
    conn_sm_.erase(it);
}

size_t ControllerState::forget_silent_sms(int64_t now_ms) {
    size_t n = 0;
    for (auto it = sms_.begin(); it != sms_.end();) {
        const SmRecord& r = it->second;
        if (!r.connected() && r.disconnected_ms > 0 && now_ms - r.disconnected_ms >= health_.forget_sm_after_ms) {
            // With an engine, it forgets the entry itself once its own evidence says nothing
            // either (HaEngine::forget_silent, run by the daemon's HA step).
            if (!ha_) sm_table_.erase(it->first);
            it = sms_.erase(it);
            ++n;
        } else {
            ++it;
        }
    }
    sms_forgotten_ += n;
    return n;
}

void ControllerState::on_ingest_error(ConnId) { ++ingest_.ingest_errors; }
void ControllerState::on_ingest_refused(const std::string& reason) {
    ++(reason == "peer_uid" ? ingest_.refused_peer_uid : ingest_.refused_slots_full);
}

std::optional<Guid> ControllerState::sm_of_conn(ConnId c) const {
    auto it = conn_sm_.find(c);
    return it == conn_sm_.end() ? std::nullopt : std::optional<Guid>(it->second);
}

std::string ControllerState::peer_of(ConnId c) const {
    auto it = conn_peer_.find(c);
    return it == conn_peer_.end() ? std::string() : it->second;
}

uint16_t ControllerState::sm_lid(Guid sm) const {
    if (const ha::SmView* v = sm_table_.find(sm); v && v->info.lid) return v->info.lid;
    if (!current_) return 0;
    for (const Node& n : current_->fabric.nodes())
        for (const Port& p : n.ports)
            if (p.valid && p.guid == sm && n.type == NodeType::CA) return p.lid;
    return 0;
}

SmInfo ControllerState::sm_info(Guid sm) const {
    if (const ha::SmView* v = sm_table_.find(sm)) return v->info;
    return SmInfo{.port_guid = sm};
}

SmRecord* ControllerState::sm_of(ConnId c) {
    auto it = conn_sm_.find(c);
    if (it == conn_sm_.end()) return nullptr;
    auto sm = sms_.find(it->second);
    return sm == sms_.end() ? nullptr : &sm->second;
}

void ControllerState::feed_plugin(ConnId c, const SmInfo& sm, int64_t now_ms) {
    if (ha_) ha_->on_plugin(sm, peer_of(c) == "unix", now_ms);
    else sm_table_.on_plugin(sm, now_ms);
}

bool ControllerState::on_hello(ConnId c, const wire::Hello& h, int64_t now_ms) {
    ++ingest_.messages[static_cast<size_t>(wire::MsgType::Hello)];
    if (conn_sm_.count(c)) {
        // A second Hello on the same connection: accept it only for the same SM.
        if (conn_sm_[c] != h.sm.port_guid) return false;
    } else {
        conn_sm_[c] = h.sm.port_guid;
        auto [it, fresh] = sms_.try_emplace(h.sm.port_guid);
        if (fresh) it->second.first_seen_ms = now_ms;
        ++it->second.open_connections;
    }
    SmRecord& r = sms_[h.sm.port_guid];
    feed_plugin(c, h.sm, now_ms);
    if (h.conf) {
        if (ha_) ha_->on_conf(h.sm.port_guid, *h.conf, now_ms);
        else if (ha::SmView* v = sm_table_.find(h.sm.port_guid)) v->conf = *h.conf;
    }
    r.osm_version = h.osm_version;
    r.plugin_version = h.plugin_version;
    r.pid = h.pid;
    if (auto p = conn_peer_.find(c); p != conn_peer_.end()) r.peer = p->second;
    return true;
}

bool ControllerState::on_heartbeat(ConnId c, const wire::Heartbeat& hb, int64_t now_ms) {
    ++ingest_.messages[static_cast<size_t>(wire::MsgType::Heartbeat)];
    forget_silent_sms(now_ms);
    SmRecord* r = sm_of(c);
    if (!r) return false;
    feed_plugin(c, hb.sm, now_ms);  // a STANDBY's LID 0 keeps the LID it said before (sm_lid)
    r->last_heartbeat_ms = now_ms;
    r->heartbeat_sweep_seq = hb.sweep_seq;
    if (current_ && current_source_ == conn_sm_[c] && hb.sweep_seq == current_->sweep_seq) current_confirmed_ms_ = now_ms;
    return true;
}

bool ControllerState::on_counters(ConnId c, const wire::Counters& k, int64_t) {
    ++ingest_.messages[static_cast<size_t>(wire::MsgType::Counters)];
    SmRecord* r = sm_of(c);
    if (!r) return false;
    r->counters = k;
    return true;
}

bool ControllerState::on_event(ConnId c, const wire::Event& e, int64_t now_ms) {
    ++ingest_.messages[static_cast<size_t>(wire::MsgType::Event)];
    SmRecord* r = sm_of(c);
    if (!r) return false;
    ++r->events_received;
    const Guid g = conn_sm_[c];
    if (e.kind == wire::EventKind::StateChange)
        if (ha::SmView* v = sm_table_.find(g)) ha::SmTable::set_state(*v, e.state, now_ms);
    if (ha_ && e.kind == wire::EventKind::SweepStart) ha_->on_sweep(g, ha::SweepEvent::heavy_start, now_ms);
    if (ha_ && e.kind == wire::EventKind::Trap) ha_->on_sweep(g, ha::SweepEvent::fabric_change, now_ms);
    if (e.kind == wire::EventKind::Trap) flaps_.on_trap(e.trap_num, e.lid, now_ms);
    if (e.kind == wire::EventKind::SweepStart) flaps_.on_sweep_start(now_ms);
    return true;
}

std::optional<Guid> ControllerState::master() const { return ha_ ? ha_->master() : sm_table_.plugin_master(); }

std::optional<CheckJob> ControllerState::on_snapshot(ConnId c, Snapshot s, int64_t now_ms, bool* protocol_error) {
    ++ingest_.messages[static_cast<size_t>(wire::MsgType::Snapshot)];
    forget_silent_sms(now_ms);
    if (protocol_error) *protocol_error = false;
    SmRecord* r = sm_of(c);
    if (!r) {
        if (protocol_error) *protocol_error = true;
        return std::nullopt;
    }
    const Guid guid = conn_sm_[c];
    feed_plugin(c, s.self, now_ms);
    r->last_snapshot_ms = now_ms;
    ++r->snapshots_received;
    auto snap = std::make_shared<const Snapshot>(std::move(s));
    r->latest = snap;
    if (ha_) ha_->on_snapshot(*snap, now_ms);  // its subnet, SUBNET UP, LIDs: before the master is asked

    const std::optional<Guid> m = master();
    const bool from_master = m && *m == guid;
    if (m && !from_master) {
        ++ingest_.snapshots_ignored;
        return std::nullopt;
    }
    current_ = snap;
    current_source_ = guid;
    current_confirmed_ms_ = now_ms;
    // With the port states the decode thread made (Snapshot::port_states), both apply only what
    // changed since the last master sweep; without them, or after another SM's sweep, they walk.
    flaps_.on_sweep(snap->fabric, snap->port_states, now_ms);
    note_counter_ports(*snap, now_ms);
    ++sweeps_ingested_;
    last_sweep_seq_ = snap->sweep_seq;
    last_sweep_ms_ = snap->taken_unix_ms ? snap->taken_unix_ms : now_ms;
    return CheckJob{++generation_, snap, now_ms, true};
}

std::optional<CheckJob> ControllerState::recheck(int64_t now_ms) {
    if (!current_) return std::nullopt;
    return CheckJob{++generation_, current_, now_ms, false};
}

bool ControllerState::publish(CheckResult r, int64_t now_ms) {
    if (r.generation <= published_generation_) return false;
    published_generation_ = r.generation;
    ++checks_run_;
    last_check_ms_ = r.check_ms;
    check_ms_sum_ += r.check_ms;
    checked_ = r.checked;
    findings_ = std::move(r.findings);
    findings_json_ = std::move(r.findings_json);
    findings_seq_ = r.snapshot ? r.snapshot->sweep_seq : 0;
    findings_ms_ = now_ms;
    if (r.links) links_ = std::move(r.links);
    routes_json_ = std::move(r.routes_json);
    if (r.analysis) {
        analysis_ = std::move(r.analysis);
        analysis_seq_ = findings_seq_;
        analysis_ms_ = now_ms;
        last_analyze_ms_ = r.analyze_ms;
    }
    return true;
}

bool ControllerState::publish_routes(uint64_t generation, std::vector<Finding> findings, nlohmann::json findings_json,
                                     nlohmann::json routes_json, int64_t now_ms) {
    if (generation != published_generation_) return false;
    findings_ = std::move(findings);
    findings_json_ = std::move(findings_json);
    routes_json_ = std::move(routes_json);
    findings_ms_ = now_ms;
    ++routes_published_;
    return true;
}

}  // namespace ibf
