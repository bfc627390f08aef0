// The HA parts of the HTTP API and /metrics (api.h, docs/api.md "SM high availability"): what the
// HA engine knows, as JSON and as Prometheus samples. Pure functions of the engine and the time.
#include <cstdio>

#include "ibf/api.h"
#include "ibf/fabric_role.h"
#include "ibf/ha_engine.h"

namespace ibf {
namespace {

using json = nlohmann::json;

json when(int64_t ms) { return ms ? json(iso_time(ms)) : json(nullptr); }

}  // namespace

json ha_record_json(const ha::FailoverRecord& r) {
    return json{{"from", guid_hex(r.from)},
                {"to", guid_hex(r.to)},
                {"cause", r.cause},
                {"evidence", r.evidence},
                {"outcome", r.outcome},
                {"by_this_node", r.by_this_node},
                {"detected", when(r.detected_ms)},
                {"decided", when(r.decided_ms)},
                {"promoted", when(r.promoted_ms)},
                {"master", when(r.master_ms)},
                {"detected_unix_ms", r.detected_ms ? json(r.detected_ms) : json(nullptr)},
                {"master_unix_ms", r.master_ms ? json(r.master_ms) : json(nullptr)},
                {"duration_ms", r.master_ms && r.detected_ms ? json(r.duration_ms()) : json(nullptr)}};
}

namespace {

// The NodeDescription of the node whose port has `port_guid` ("node001 mlx5_0"), null if unknown.
json description(const Fabric* f, Guid port_guid) {
    if (!f) return nullptr;
    for (NodeId i = 0; i < f->size(); ++i)
        for (const Port& p : f->node(i).ports)
            if (p.valid && p.guid == port_guid) return f->node(i).description;
    return nullptr;
}

json sm_view_json(const ha::HaEngine& e, const ha::SmView& v, int64_t now, const Fabric* f) {
    std::string why;
    const bool not_sweeping = e.not_sweeping(v, now, &why);
    return json{{"port_guid", guid_hex(v.info.port_guid)},
                {"description", description(f, v.info.port_guid)},
                {"lid", v.info.lid},
                {"priority", v.info.priority},
                {"state", std::string(to_string(v.info.state))},
                {"alive", e.alive(v, now)},
                {"local", v.info.port_guid == e.local_sm()},
                {"group", e.group_of(v.info.port_guid)},
                {"act_count", v.info.act_count},
                {"act_count_changed", when(v.act_count_changed_ms)},
                {"plugin_connected", v.plugin_connected},
                {"last_plugin_message", when(v.plugin_ms)},
                {"sminfo", v.probe_ms ? json(std::string(ha::to_string(v.probe))) : json(nullptr)},
                {"sminfo_failures", v.probe_failures},
                {"last_sminfo_answer", when(v.answer_ms)},
                {"last_subnet_up", when(v.subnet_up_ms)},
                {"not_sweeping", not_sweeping ? json(why) : json(nullptr)}};
}

json split_brain_json(const std::optional<ha::SplitBrain>& sb) {
    if (!sb) return nullptr;
    return json{{"sms", {guid_hex(sb->a), guid_hex(sb->b)}}, {"attempts", sb->attempts}, {"tried", sb->tried},
                {"first", when(sb->first_ms)}, {"last", when(sb->last_ms)}};
}

}  // namespace

json ha_json(const ha::HaEngine& e, int64_t now_ms, const std::vector<std::string>& agents, const Fabric* fabric,
             const ha::RoleDecision* published) {
    json sms = json::array();
    for (const auto& [g, v] : e.sms()) sms.push_back(sm_view_json(e, v, now_ms, fabric));
    const auto m = e.master();
    const auto s = e.successor(now_ms);
    const auto& h = e.history();
    json last = json(nullptr);
    for (auto it = h.rbegin(); it != h.rend(); ++it)
        if (it->from && it->to) {
            last = ha_record_json(*it);
            break;
        }
    const ha::HaConfig& c = e.config();
    const ha::RoleDecision role = published ? *published : ha::fabric_role(ha::role_view(e, now_ms));
    return json{{"mode", std::string(ha::to_string(c.mode))},
                {"role", std::string(ha::to_string(role.role))},
                {"role_why", std::string(role.why)},
                {"local_sm", e.local_sm() ? json(guid_hex(e.local_sm())) : json(nullptr)},
                {"local_is_master", e.local_is_master(now_ms)},
                {"phase", std::string(ha::to_string(e.phase()))},
                {"master", m ? json(guid_hex(*m)) : json(nullptr)},
                {"designated_successor", s ? json(guid_hex(*s)) : json(nullptr)},
                {"last_failover", last},
                {"split_brain_escalated", split_brain_json(e.split_brain())},
                {"master_changes", e.master_changes()},
                {"failovers_by_this_node", e.failovers_by_this_node()},
                {"agents", agents},
                {"thresholds",
                 {{"poll_ms", c.poll_ms},
                  {"mad_timeout_ms", c.mad_timeout_ms},
                  {"heartbeat_timeout_ms", c.heartbeat_timeout_ms},
                  {"fast_failures", c.fast_failures},
                  {"slow_failures", c.slow_failures},
                  {"slow_min_ms", c.slow_min_ms},
                  {"flap_window_ms", c.flap_window_ms},
                  {"sweep_timeout_ms", c.sweep_timeout_ms},
                  {"heal_attempts", c.heal_attempts}}},
                {"sms", sms}};
}

json ha_history_json(const ha::HaEngine& e) {
    json arr = json::array();
    const auto& h = e.history();
    for (auto it = h.rbegin(); it != h.rend(); ++it) arr.push_back(ha_record_json(*it));  // newest first
    return json{{"history", arr}, {"master_changes", e.master_changes()},
                {"failovers_by_this_node", e.failovers_by_this_node()}};
}

}  // namespace ibf
