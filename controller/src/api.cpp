// The HTTP API: routing and JSON/Prometheus rendering of ControllerState.
#include "ibf/api.h"

#include <charconv>
#include <cmath>
#include <ctime>
#include <map>

#include "ibf/error.h"
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

std::string escape_label(const std::string& s) {
    std::string o;
    for (char ch : s) {
        if (ch == '\\' || ch == '"') o += '\\';
        if (ch == '\n') {
            o += "\\n";
            continue;
        }
        o += ch;
    }
    return o;
}

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

struct Metrics {
    std::string out;
    void head(const char* name, const char* type, const char* help) {
        out += "# HELP ";
        out += name;
        out += ' ';
        out += help;
        out += "\n# TYPE ";
        out += name;
        out += ' ';
        out += type;
        out += '\n';
    }
    void sample(const std::string& name, const std::string& labels, const std::string& value) {
        out += name;
        if (!labels.empty()) out += "{" + labels + "}";
        out += ' ';
        out += value;
        out += '\n';
    }
    void sample(const std::string& name, const std::string& labels, uint64_t v) {
        sample(name, labels, std::to_string(v));
    }
};

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
    j["findings"] = st.findings().size();
    j["checked"] = st.checked();
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

json findings_response_json(const ControllerState& st) {
    json j = st.findings_json();
    if (!j.is_object() || j.empty()) j = json{{"summary", json::object()}, {"findings", json::array()}};
    for (const Finding& f : st.ha_findings()) {  // the SMs' own findings (ha/), with the cabling ones
        const std::string k(to_string(f.kind));
        j["summary"][k] = j["summary"].value(k, 0) + 1;
        j["findings"].push_back(finding_to_json(f));
    }
    j["sweep_seq"] = st.have_findings() ? json(st.findings_sweep_seq()) : json(nullptr);
    j["generated_at"] = time_or_null(st.findings_ms());
    j["checked"] = st.checked();
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

std::string metrics_text(const ControllerState& st) {
    Metrics m;
    m.head("ibfabric_findings", "gauge", "Findings of the latest check, by kind and severity.");
    std::map<std::pair<std::string, std::string>, uint64_t> by;
    for (int k = 0; k < kFindingKindCount; ++k) {
        const auto kind = static_cast<FindingKind>(k);
        by[{std::string(to_string(kind)), std::string(to_string(default_severity(kind)))}] = 0;
    }
    for (const Finding& f : st.findings()) ++by[{std::string(to_string(f.kind)), std::string(to_string(f.severity))}];
    for (const Finding& f : st.ha_findings()) ++by[{std::string(to_string(f.kind)), std::string(to_string(f.severity))}];
    for (const auto& [ks, n] : by)
        m.sample("ibfabric_findings", "kind=\"" + ks.first + "\",severity=\"" + ks.second + "\"", n);

    // The live fat-tree analysis (routing/ kinds only: check's kinds never come from it).
    m.head("ibfabric_analysis_findings", "gauge", "Findings of the latest live fat-tree analysis, by kind and severity.");
    std::map<std::pair<std::string, std::string>, uint64_t> aby;
    for (int k = static_cast<int>(FindingKind::missing_uplink); k <= static_cast<int>(FindingKind::lft_imbalance); ++k) {
        const auto kind = static_cast<FindingKind>(k);
        aby[{std::string(to_string(kind)), std::string(to_string(default_severity(kind)))}] = 0;
    }
    const auto& la = st.analysis();
    if (la)
        for (const Finding& f : la->findings) ++aby[{std::string(to_string(f.kind)), std::string(to_string(f.severity))}];
    for (const auto& [ks, n] : aby)
        m.sample("ibfabric_analysis_findings", "kind=\"" + ks.first + "\",severity=\"" + ks.second + "\"", n);
    m.head("ibfabric_routing_fallback", "gauge", "1 when OpenSM routed with another engine than the first configured one.");
    m.sample("ibfabric_routing_fallback", "", la && la->routing_fallback ? 1 : 0);
    m.head("ibfabric_lft_switches", "gauge", "Switches whose LFT came with the latest snapshot (0: not exported).");
    m.sample("ibfabric_lft_switches", "", la ? static_cast<uint64_t>(la->lft_switches) : 0);
    m.head("ibfabric_lft_switches_imbalanced", "gauge", "Switches whose LFT spreads hosts unevenly over the uplinks.");
    m.sample("ibfabric_lft_switches_imbalanced", "", la ? static_cast<uint64_t>(la->lft_imbalanced) : 0);
    const json* lft = nullptr;
    if (la && la->summary_json.contains("routing") && la->summary_json["routing"].is_object() &&
        la->summary_json["routing"].contains("lft") && la->summary_json["routing"]["lft"].is_object())
        lft = &la->summary_json["routing"]["lft"];
    m.head("ibfabric_lft_max_hops", "gauge", "Longest switch-to-host route in the LFTs, in cables.");
    m.sample("ibfabric_lft_max_hops", "", lft ? (*lft)["max_hops"].get<uint64_t>() : 0);
    m.head("ibfabric_lft_routes_broken", "gauge", "Switch-to-host routes that dead-end or loop in the LFTs.");
    m.sample("ibfabric_lft_routes_broken", "", lft ? (*lft)["routes_broken"].get<uint64_t>() : 0);
    m.head("ibfabric_analysis_duration_seconds", "gauge", "Duration of the latest live analysis (analysis, LFTs, JSON).");
    m.sample("ibfabric_analysis_duration_seconds", "", num(st.last_analyze_ms() / 1000.0));

    const auto& cur = st.current();
    m.head("ibfabric_nodes", "gauge", "Nodes in the current fabric, by type.");
    for (NodeType t : {NodeType::Switch, NodeType::CA, NodeType::Router})
        m.sample("ibfabric_nodes", "type=\"" + std::string(to_string(t)) + "\"", cur ? cur->fabric.count(t) : 0);
    m.head("ibfabric_links", "gauge", "Links (cables) in the current fabric.");
    m.sample("ibfabric_links", "", cur ? cur->fabric.link_count() : 0);

    m.head("ibfabric_sweeps_ingested_total", "counter", "Master sweeps (snapshots) taken as the fabric.");
    m.sample("ibfabric_sweeps_ingested_total", "", st.sweeps_ingested());
    m.head("ibfabric_last_sweep_seq", "gauge", "Sweep sequence of the current fabric.");
    m.sample("ibfabric_last_sweep_seq", "", st.last_sweep_seq());
    m.head("ibfabric_snapshots_ignored_total", "counter", "Snapshots from a non-master SM while a master is known.");
    m.sample("ibfabric_snapshots_ignored_total", "", st.ingest().snapshots_ignored);

    m.head("ibfabric_checks_total", "counter", "Checks published.");
    m.sample("ibfabric_checks_total", "", st.checks_run());
    m.head("ibfabric_check_duration_seconds", "gauge", "Duration of the latest check (ibf::check + JSON).");
    m.sample("ibfabric_check_duration_seconds", "", num(st.last_check_ms() / 1000.0));
    m.head("ibfabric_check_duration_seconds_sum", "counter", "Total time spent in checks.");
    m.sample("ibfabric_check_duration_seconds_sum", "", num(st.check_ms_sum() / 1000.0));
    m.head("ibfabric_snapshot_to_findings_seconds", "gauge",
           "Latest time from a snapshot's arrival to its findings being published.");
    m.sample("ibfabric_snapshot_to_findings_seconds", "", num(st.last_publish_lag_ms() / 1000.0));

    m.head("ibfabric_snapshot_decode_seconds", "gauge", "Wire decode time of the latest snapshot (io thread).");
    m.sample("ibfabric_snapshot_decode_seconds", "", num(st.last_decode_ms() / 1000.0));

    const auto& in = st.ingest();
    m.head("ibfabric_ingest_connections", "gauge", "Open plugin connections.");
    m.sample("ibfabric_ingest_connections", "", in.connections_open);
    m.head("ibfabric_ingest_connections_total", "counter", "Plugin connections accepted.");
    m.sample("ibfabric_ingest_connections_total", "", in.connections_total);
    m.head("ibfabric_ingest_errors_total", "counter", "Plugin connections dropped for malformed or oversized input.");
    m.sample("ibfabric_ingest_errors_total", "", in.ingest_errors);
    m.head("ibfabric_ingest_messages_total", "counter", "Wire messages received, by type.");
    for (int t = 1; t <= 5; ++t)
        m.sample("ibfabric_ingest_messages_total",
                 "type=\"" + std::string(wire::to_string(static_cast<wire::MsgType>(t))) + "\"", in.messages[t]);

    m.head("ibfabric_sm_connected", "gauge", "1 while the SM's plugin is connected.");
    for (const auto& [g, r] : st.sms())
        m.sample("ibfabric_sm_connected", "sm=\"" + guid_hex(g) + "\",state=\"" +
                                              escape_label(std::string(to_string(r.info.state))) + "\"",
                 r.connected() ? 1 : 0);
    struct C {
        const char* name;
        const char* type;
        const char* help;
        uint64_t wire::Counters::*field;
    };
    static const C counters[] = {
        {"ibfabric_plugin_snapshots_taken_total", "counter", "Plugin: SUBNET_UP copies made.", &wire::Counters::snapshots_taken},
        {"ibfabric_plugin_snapshots_sent_total", "counter", "Plugin: snapshots sent.", &wire::Counters::snapshots_sent},
        {"ibfabric_plugin_snapshots_superseded_total", "counter", "Plugin: snapshots replaced before sending.", &wire::Counters::snapshots_superseded},
        {"ibfabric_plugin_events_dropped_total", "counter", "Plugin: events dropped (queue full).", &wire::Counters::events_dropped},
        {"ibfabric_plugin_send_errors_total", "counter", "Plugin: send errors.", &wire::Counters::send_errors},
        {"ibfabric_plugin_reconnects_total", "counter", "Plugin: reconnects.", &wire::Counters::reconnects},
        {"ibfabric_plugin_last_copy_microseconds", "gauge", "Plugin: time under the OpenSM lock for the last copy.", &wire::Counters::last_copy_us},
        {"ibfabric_plugin_last_send_lag_milliseconds", "gauge", "Plugin: SUBNET_UP to last byte of that snapshot written.", &wire::Counters::last_send_lag_ms},
        {"ibfabric_plugin_queue_depth", "gauge", "Plugin: messages queued.", &wire::Counters::queue_depth},
    };
    for (const C& c : counters) {
        m.head(c.name, c.type, c.help);
        for (const auto& [g, r] : st.sms())
            if (r.counters) m.sample(c.name, "sm=\"" + guid_hex(g) + "\"", (*r.counters).*(c.field));
    }
    return m.out;
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
            r.body = metrics_text(*ctx.state);
            if (ctx.ha) r.body += ha_metrics_text(*ctx.ha, ctx.now_ms);
            return r;
        }
        if (path == "/api/v1/fabric") return method_is("GET", r) ? ok_json(fabric_json(ctx)) : r;
        if (path == "/api/v1/findings") return method_is("GET", r) ? ok_json(findings_response_json(*ctx.state)) : r;
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
        if (path == "/api/v1/sm") {
            if (!method_is("GET", r)) return r;
            json j = sm_json(*ctx.state);
            j["ha"] = ctx.ha ? ha_json(*ctx.ha, ctx.now_ms, ctx.ha_agents) : json(nullptr);
            return ok_json(j);
        }
        if (path == "/api/v1/ha/history") {
            if (!method_is("GET", r)) return r;
            if (!ctx.ha) return api_error(404, "SM high availability is off (no 'ha:' section in the config)");
            return ok_json(ha_history_json(*ctx.ha));
        }
        if (path == "/api/v1/sm/priority") {
            if (!method_is("POST", r)) return r;
            if (!ctx.token) return api_error(403, "mutating calls are disabled: no token_file is configured");
            if (!bearer_matches(req.authorization, *ctx.token)) return api_error(401, "missing or wrong bearer token");
            if (!ctx.sm_priority) return api_error(404, "SM high availability is off (no 'ha:' section in the config)");
            json body;
            try {
                body = json::parse(req.body);
            } catch (const json::exception&) {
                return api_error(400, "the body must be JSON: {\"priority\": 0..15}");
            }
            return ok_json(ctx.sm_priority(body));
        }
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
