// The HTTP API: routing and JSON rendering of ControllerState (/metrics: metrics.cpp).
#include "ibf/api.h"

#include <charconv>
#include <cmath>
#include <ctime>
#include <map>

#include "ibf/error.h"
#include "ibf/metrics.h"
#include "ibf/report.h"
#include "ibf/wire.h"

namespace ibf {
namespace {

using nlohmann::json;

json time_or_null(int64_t ms) { return ms ? json(iso_time(ms)) : json(nullptr); }
json ms_or_null(int64_t ms) { return ms ? json(ms) : json(nullptr); }

ApiResponse ok_json(const json& j) {
    ApiResponse r;
    r.body = json_text(j, 2);
    r.body += '\n';
    return r;
}

// data_state, data_message, data_as_of, stale_after_s (docs/api.md, "No data").
void add_data_status(json& j, const ControllerState& st, int64_t now_ms) {
    const DataStatus d = st.data_status(now_ms);
    j["data_state"] = std::string(to_string(d.state));
    j["data_message"] = d.message.empty() ? json(nullptr) : json(d.message);
    j["data_as_of"] = time_or_null(d.as_of_ms);
    j["stale_after_s"] = st.health().stale_after_ms / 1000.0;
}

}  // namespace

std::string iso_time(int64_t unix_ms) {
    if (unix_ms == 0) return "";
    std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
    int ms = static_cast<int>(unix_ms % 1000);
    if (ms < 0) {
        ms += 1000;
        --secs;
    }
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    return buf;
}

bool bearer_matches(const std::string& authorization, const std::string& token) {
    const std::string expected = "Bearer " + token;
    if (token.empty() || authorization.size() != expected.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < expected.size(); ++i)
        diff |= static_cast<unsigned char>(authorization[i] ^ expected[i]);
    return diff == 0;
}

ApiResponse api_error(int status, const std::string& message) {
    ApiResponse r;
    r.status = status;
    r.body = json_text(json{{"error", message}}) + "\n";
    return r;
}

json fabric_json(const ApiContext& ctx) {
    const ControllerState& st = *ctx.state;
    json j;
    const auto& cur = st.current();
    if (cur) {
        const Fabric& f = cur->fabric;
        j["nodes"] = f.size();
        j["switches"] = f.count(NodeType::Switch);
        j["cas"] = f.count(NodeType::CA);
        j["routers"] = f.count(NodeType::Router);
        j["links"] = f.link_count();
        j["source_sm"] = guid_hex(*st.current_source());
        j["osm_version"] = cur->osm_version;
        j["routing_engine"] = cur->routing_engine;
        j["routing_engine_configured"] = cur->routing_engine_configured;
        j["lft_switches"] = cur->lfts.size();
        j["initialization_error"] = cur->initialization_error;
    } else {
        j["nodes"] = j["switches"] = j["cas"] = j["routers"] = j["links"] = 0;
        j["source_sm"] = nullptr;
    }
    auto m = st.master();
    j["master_sm"] = m ? json(guid_hex(*m)) : json(nullptr);
    j["sm_count"] = st.sms().size();
    size_t connected = 0;
    for (const auto& [g, r] : st.sms()) connected += r.connected() ? 1 : 0;
    j["sms_connected"] = connected;
    j["sweeps_ingested"] = st.sweeps_ingested();
    j["last_sweep_seq"] = st.sweeps_ingested() ? json(st.last_sweep_seq()) : json(nullptr);
    j["last_sweep_time"] = time_or_null(st.last_sweep_ms());
    j["last_sweep_unix_ms"] = ms_or_null(st.last_sweep_ms());
    j["last_findings_time"] = time_or_null(st.findings_ms());
    j["last_findings_unix_ms"] = ms_or_null(st.findings_ms());
    j["findings"] = st.findings_at(ctx.now_ms).size();
    j["checked"] = st.have_findings() ? st.checked() : !ctx.topology.empty();
    add_data_status(j, st, ctx.now_ms);
    j["topology"] = ctx.topology.empty() ? json(nullptr) : json(ctx.topology);
    j["plan_nodes"] = ctx.plan_nodes;
    j["plan_links"] = ctx.plan_links;
    j["time"] = iso_time(ctx.now_ms);
    return j;
}

json sm_json(const ControllerState& st) {
    json arr = json::array();
    const auto master = st.master();
    for (const auto& [guid, r] : st.sms()) {
        json s;
        s["port_guid"] = guid_hex(guid);
        s["lid"] = r.info.lid;
        s["priority"] = r.info.priority;
        s["state"] = std::string(to_string(r.info.state));
        s["act_count"] = r.info.act_count;
        s["master"] = master && *master == guid;
        s["source_of_fabric"] = st.current_source() && *st.current_source() == guid;
        s["connected"] = r.connected();
        s["peer"] = r.peer;
        s["osm_version"] = r.osm_version;
        s["plugin_version"] = r.plugin_version;
        s["pid"] = r.pid;
        s["first_seen"] = time_or_null(r.first_seen_ms);
        s["last_heartbeat"] = time_or_null(r.last_heartbeat_ms);
        s["last_heartbeat_unix_ms"] = ms_or_null(r.last_heartbeat_ms);
        s["heartbeat_sweep_seq"] = r.heartbeat_sweep_seq;
        s["last_snapshot"] = time_or_null(r.last_snapshot_ms);
        s["last_snapshot_seq"] = r.latest ? json(r.latest->sweep_seq) : json(nullptr);
        s["snapshots_received"] = r.snapshots_received;
        s["events_received"] = r.events_received;
        if (r.counters) {
            const wire::Counters& k = *r.counters;
            s["counters"] = {{"snapshots_taken", k.snapshots_taken},
                             {"snapshots_sent", k.snapshots_sent},
                             {"snapshots_superseded", k.snapshots_superseded},
                             {"events_dropped", k.events_dropped},
                             {"send_errors", k.send_errors},
                             {"reconnects", k.reconnects},
                             {"last_copy_us", k.last_copy_us},
                             {"last_send_lag_ms", k.last_send_lag_ms},
                             {"queue_depth", k.queue_depth}};
        } else {
            s["counters"] = nullptr;
        }
        arr.push_back(std::move(s));
    }
    return json{{"sms", std::move(arr)}, {"master", master ? json(guid_hex(*master)) : json(nullptr)}};
}

json findings_response_json(const ControllerState& st, int64_t now_ms, bool topology_configured) {
    json j;
    if (st.flaps().flapping(now_ms).empty()) {
        j = st.findings_json();
        if (!j.is_object() || j.empty()) j = json{{"summary", json::object()}, {"findings", json::array()}};
    } else {
        j = findings_to_json(st.findings_at(now_ms));  // the check's findings plus link_flapping
    }
    j["sweep_seq"] = st.have_findings() ? json(st.findings_sweep_seq()) : json(nullptr);
    j["generated_at"] = time_or_null(st.findings_ms());
    j["checked"] = st.have_findings() ? st.checked() : topology_configured;  // false: no topology, and only then
    add_data_status(j, st, now_ms);
    return j;
}

json analysis_response_json(const ControllerState& st, bool per_switch) {
    const auto& la = st.analysis();
    json j;
    if (la) {
        j = la->summary_json;
        if (per_switch) j["switches"] = la->switches_json;
    } else {
        j = json{{"summary", json::object()}, {"findings", json::array()}, {"routing", nullptr}};
    }
    j["analyzed"] = la != nullptr;
    j["sweep_seq"] = la ? json(st.analysis_sweep_seq()) : json(nullptr);
    j["generated_at"] = time_or_null(st.analysis_ms());
    j["analyze_ms"] = la ? json(std::round(st.last_analyze_ms() * 100) / 100) : json(nullptr);
    return j;
}

ApiResponse handle_api(const ApiRequest& req, const ApiContext& ctx) {
    std::string path = req.target, query;
    if (auto q = path.find('?'); q != std::string::npos) {
        query = path.substr(q + 1);
        path.resize(q);
    }
    auto method_is = [&](const char* m, ApiResponse& out) {
        if (req.method == m) return true;
        out = api_error(405, "method " + req.method + " not allowed on " + path + "; use " + m);
        out.allow = m;
        return false;
    };
    ApiResponse r;
    try {
        if (path == "/healthz") {
            if (!method_is("GET", r)) return r;
            r.content_type = "text/plain";
            r.body = "ok\n";
            return r;
        }
        if (path == "/metrics") {
            if (!method_is("GET", r)) return r;
            r.content_type = "text/plain; version=0.0.4";
            r.body = metrics_text({.state = ctx.state, .now_ms = ctx.now_ms});
            return r;
        }
        if (path == "/api/v1/fabric") return method_is("GET", r) ? ok_json(fabric_json(ctx)) : r;
        if (path == "/api/v1/findings") return method_is("GET", r) ? ok_json(findings_response_json(*ctx.state, ctx.now_ms, !ctx.topology.empty())) : r;
        if (path == "/api/v1/analysis") {
            if (!method_is("GET", r)) return r;
            bool per_switch = false;
            for (size_t pos = 0; pos <= query.size() && !query.empty();) {
                size_t amp = query.find('&', pos);
                if (amp == std::string::npos) amp = query.size();
                std::string kv = query.substr(pos, amp - pos);
                pos = amp + 1;
                if (kv == "switches=1" || kv == "switches=true" || kv == "switches") per_switch = true;
                else if (kv == "switches=0" || kv == "switches=false") per_switch = false;
                else if (kv.rfind("switches=", 0) == 0) return api_error(400, "switches must be 0 or 1");
                else if (!kv.empty()) return api_error(400, "unknown query parameter '" + kv.substr(0, kv.find('=')) + "'");
            }
            return ok_json(analysis_response_json(*ctx.state, per_switch));
        }
        if (path == "/api/v1/sm") return method_is("GET", r) ? ok_json(sm_json(*ctx.state)) : r;
        if (path == "/api/v1/history") {
            if (!method_is("GET", r)) return r;
            int limit = 20;
            for (size_t pos = 0; pos <= query.size() && !query.empty();) {
                size_t amp = query.find('&', pos);
                if (amp == std::string::npos) amp = query.size();
                std::string kv = query.substr(pos, amp - pos);
                pos = amp + 1;
                if (kv.rfind("limit=", 0) == 0) {
                    std::string v = kv.substr(6);
                    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
                    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || limit < 1 || limit > 1000)
                        return api_error(400, "limit must be an integer from 1 to 1000");
                } else if (!kv.empty()) {
                    return api_error(400, "unknown query parameter '" + kv.substr(0, kv.find('=')) + "'");
                }
            }
            if (!ctx.history) return api_error(404, "history is not enabled (set 'history:' in the config)");
            return ok_json(json{{"history", ctx.history(limit)}, {"limit", limit}});
        }
        if (path == "/api/v1/reload") {
            if (!method_is("POST", r)) return r;
            if (!ctx.token) return api_error(403, "mutating calls are disabled: no token_file is configured");
            if (!bearer_matches(req.authorization, *ctx.token)) {
                r = api_error(401, "missing or wrong bearer token");
                return r;
            }
            if (!ctx.reload) return api_error(500, "reload is not available");
            try {
                return ok_json(ctx.reload());
            } catch (const InputError& e) {
                return api_error(422, std::string("topology not reloaded (the previous one stays): ") + e.what());
            }
        }
        return api_error(404, "no such path: " + path);
    } catch (const InputError& e) {
        return api_error(400, e.what());
    } catch (const std::exception& e) {
        return api_error(500, e.what());
    }
}

}  // namespace ibf
