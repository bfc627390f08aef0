// SmTable: one entry per SM, fed once (sm_table.h). No I/O, no clocks.
#include "ibf/sm_table.h"

namespace ibf::ha {

const SmView* SmTable::find(Guid g) const {
    auto it = sms_.find(g);
    return it == sms_.end() ? nullptr : &it->second;
}

SmView* SmTable::find(Guid g) {
    auto it = sms_.find(g);
    return it == sms_.end() ? nullptr : &it->second;
}

SmView& SmTable::view(Guid g, int64_t now_ms, Guid keep) {
    auto it = sms_.find(g);
    if (it != sms_.end()) return it->second;
    if (sms_.size() >= kMaxSms) {  // the SM heard from least recently gives way
        auto victim = sms_.end();
        for (auto i = sms_.begin(); i != sms_.end(); ++i)
            if (i->first != keep && !i->second.plugin_connected &&
                (victim == sms_.end() || i->second.info_ms < victim->second.info_ms))
                victim = i;
        if (victim != sms_.end()) sms_.erase(victim);
    }
    SmView& v = sms_[g];
    v.info.port_guid = g;
    v.info_ms = now_ms;
    return v;
}

void SmTable::set_state(SmView& v, SmState s, int64_t now_ms) {
    if (s == SmState::Master && v.info.state != SmState::Master) {
        v.master_since_ms = now_ms;
        if (!v.sweep_owed_ms) v.sweep_owed_ms = now_ms, v.sweep_owed_why = "became MASTER";
    }
    if (s != SmState::Master) v.master_since_ms = 0;
    if (s == SmState::Discovering && v.info.state != SmState::Discovering) v.discovering_since_ms = now_ms;
    if (s != SmState::Discovering) v.discovering_since_ms = 0;
    if (s == SmState::Standby || s == SmState::NotActive) v.sweep_owed_ms = 0, v.forced_sweeps = 0;
    v.info.state = s;
    v.info_ms = now_ms;
}

void SmTable::note_act_count(SmView& v, uint32_t ac, int64_t now_ms) {
    if (v.act_count_changed_ms == 0 || ac != v.act_count_seen) v.act_count_changed_ms = now_ms;
    v.act_count_seen = ac;
    v.info.act_count = ac;
}

void SmTable::note_plugin(SmView& v, const SmInfo& sm, int64_t now_ms) {
    v.plugin_seen = v.plugin_connected = true;
    v.plugin_ms = now_ms;
    v.plugin_closed_ms = 0;
    if (sm.lid) v.info.lid = sm.lid;
    v.info.priority = sm.priority;
    note_act_count(v, sm.act_count, now_ms);
    set_state(v, sm.state, now_ms);
    v.source = Source::plugin;
}

void SmTable::on_plugin(const SmInfo& sm, int64_t now_ms) {
    if (sm.port_guid) note_plugin(view(sm.port_guid, now_ms), sm, now_ms);
}

void SmTable::on_plugin_closed(Guid g, int64_t now_ms) {
    if (SmView* v = find(g)) {
        v->plugin_connected = false;
        v->plugin_closed_ms = now_ms;
    }
}

std::optional<Guid> SmTable::plugin_master() const {
    const SmView* best = nullptr;
    for (const auto& [g, v] : sms_) {
        if (v.info.state != SmState::Master || !v.plugin_connected) continue;
        if (!best || v.master_since_ms > best->master_since_ms) best = &v;
    }
    return best ? std::optional<Guid>(best->info.port_guid) : std::nullopt;
}

}  // namespace ibf::ha
