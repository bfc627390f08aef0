// The HTTP API: routing and JSON rendering of ControllerState (/metrics: metrics.cpp).
#include "ibf/api.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>

#include "ibf/error.h"
#include "ibf/ha_engine.h"
#include "ibf/history.h"
#include "ibf/history_api.h"
#include "ibf/metrics.h"
#include "ibf/report.h"
#include "ibf/ui_page.h"
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
    // RFC 7235: the scheme is case-insensitive ("bearer", "BEARER"), then one or more spaces.
    static constexpr std::string_view kScheme = "bearer";
    if (token.empty() || authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return false;
    for (size_t i = 0; i < kScheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
    std::string_view given(authorization);
    given.remove_prefix(std::min(given.find_first_not_of(' ', kScheme.size()), given.size()));
    if (given.size() != token.size()) return false;
    unsigned char diff = 0;  // constant time in the token's length
    for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ token[i]);
    return diff == 0;
}

std::optional<ApiResponse> parse_query(const std::string& query, std::initializer_list<std::string_view> allowed,
                                       std::map<std::string, std::string>& out) {
    for (size_t pos = 0; pos < query.size();) {
        size_t amp = query.find('&', pos);
        if (amp == std::string::npos) amp = query.size();
        const std::string kv = query.substr(pos, amp - pos);
        pos = amp + 1;
        if (kv.empty()) continue;
        const size_t eq = kv.find('=');
        const std::string key = kv.substr(0, eq);
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            std::string expected;
            for (std::string_view a : allowed) expected += (expected.empty() ? "" : ", ") + std::string(a);
            return api_error(400, "unknown query parameter '" + printable(key) + "'" +
                                      (expected.empty() ? " (this path takes none)" : " (expected " + expected + ")"));
        }
        if (out.count(key)) return api_error(400, "query parameter '" + key + "' given twice");
        out[key] = eq == std::string::npos ? std::string() : kv.substr(eq + 1);
    }
    return std::nullopt;
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
    if (st.flaps().flapping(now_ms).empty() && st.ha_findings().empty()) {
        j = st.findings_json();
        if (!j.is_object() || j.empty()) j = json{{"summary", json::object()}, {"findings", json::array()}};
    } else {
        j = findings_to_json(st.findings_at(now_ms));  // the check's findings plus link_flapping and the SMs' own
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


namespace {

// Parses an integer query value in [lo, hi]; nullopt when it is not one.
std::optional<int64_t> int_param(const std::string& v, int64_t lo, int64_t hi) {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || n < lo || n > hi) return std::nullopt;
    return n;
}

// GET /api/v1/history?limit=N&before=ID: one bounded page, rows spliced in as stored text.
ApiResponse history_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"limit", "before"}, q)) return *bad;
    int limit = 20;
    int64_t before = 0;
    if (q.count("limit")) {
        auto n = int_param(q["limit"], 1, 1000);
        if (!n) return api_error(400, "limit must be an integer from 1 to 1000");
        limit = static_cast<int>(*n);
    }
    if (q.count("before")) {
        auto n = int_param(q["before"], 1, std::numeric_limits<int64_t>::max());
        if (!n) return api_error(400, "before must be a row id (a positive integer, from \"next_before\")");
        before = *n;
    }
    if (!ctx.history) return api_error(404, "history is not enabled (set 'history:' in the config)");
    const HistoryPage page = ctx.history(limit, before);
    json head{{"limit", limit},
              {"before", before ? json(before) : json(nullptr)},
              {"rows", page.count},
              {"next_before", page.next_before ? json(page.next_before) : json(nullptr)},
              {"next", page.next_before ? json("/api/v1/history?limit=" + std::to_string(limit) +
                                               "&before=" + std::to_string(page.next_before))
                                        : json(nullptr)}};
    ApiResponse r;
    r.body = json_text(head);
    r.body.pop_back();  // '}'
    r.body.reserve(r.body.size() + page.rows.size() + 16);
    r.body += ",\"history\":";
    r.body += page.rows;
    r.body += "}\n";
    return r;
}

// GET /api/v1/analysis[?switches=0|1]
ApiResponse analysis_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"switches"}, q)) return *bad;
    bool per_switch = false;
    if (q.count("switches")) {
        const std::string& v = q["switches"];
        if (v == "1" || v == "true" || v.empty()) per_switch = true;
        else if (v != "0" && v != "false") return api_error(400, "switches must be 0 or 1");
    }
    return ok_json(analysis_response_json(*ctx.state, per_switch));
}

}  // namespace

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
    // Paths without parameters refuse any (docs/api.md: an unknown parameter is 400).
    auto no_query = [&](ApiResponse& out) {
        std::map<std::string, std::string> q;
        if (auto bad = parse_query(query, {}, q)) {
            out = *bad;
            return false;
        }
        return true;
    };
    ApiResponse r;
    try {
        if (path == "/healthz") {
            if (!method_is("GET", r) || !no_query(r)) return r;
            r.content_type = "text/plain";
            r.body = "ok\n";
            return r;
        }
        // token_for_reads: everything but /healthz needs the token (POST /reload always does).
        if (ctx.token_for_reads && req.method != "POST") {
            if (!ctx.token) return api_error(403, "reads need a token but no token_file is configured");
            if (!bearer_matches(req.authorization, *ctx.token)) return api_error(401, "missing or wrong bearer token");
        }
        if (path == "/metrics") {
            if (!method_is("GET", r) || !no_query(r)) return r;
            r.content_type = "text/plain; version=0.0.4";
            r.body = metrics_text({.state = ctx.state, .now_ms = ctx.now_ms});
            if (ctx.ha) r.body += ha_metrics_text(*ctx.ha, ctx.now_ms);
            return r;
        }
        if (path == "/" || path == "/ui" || path == "/ui/fabric.svg") {  // the page (ui_page.h)
            if (!method_is("GET", r) || !no_query(r)) return r;
            if (path == "/ui/fabric.svg") {
                r.body = ui_fabric_svg(*ctx.state, ctx.now_ms);
                if (r.body.empty()) return api_error(404, "no fabric yet: no Subnet Manager has sent a snapshot");
                r.content_type = "image/svg+xml";
                return r;
            }
            r.content_type = "text/html; charset=utf-8";
            r.body = ui_page_html(*ctx.state, ctx.now_ms, !ctx.topology.empty());
            return r;
        }
        if (path == "/api/v1/fabric") return method_is("GET", r) && no_query(r) ? ok_json(fabric_json(ctx)) : r;
        if (path == "/api/v1/findings")
            return method_is("GET", r) && no_query(r) ? ok_json(findings_response_json(*ctx.state, ctx.now_ms, !ctx.topology.empty())) : r;
        if (path == "/api/v1/analysis") return method_is("GET", r) ? analysis_response(query, ctx) : r;
        if (path == "/api/v1/sm") {
            if (!method_is("GET", r) || !no_query(r)) return r;
            json j = sm_json(*ctx.state);
            j["ha"] = ctx.ha ? ha_json(*ctx.ha, ctx.now_ms, ctx.ha_agents) : json(nullptr);
            return ok_json(j);
        }
        if (path == "/api/v1/ha/history") {
            if (!method_is("GET", r) || !no_query(r)) return r;
            if (!ctx.ha) return api_error(404, "SM high availability is off (no 'ha:' section in the config)");
            json j = ha_history_json(*ctx.ha);
            if (ctx.ha_history) {  // durable: survives restarts (the engine keeps this run's only)
                j["history"] = ctx.ha_history(ha::HaEngine::kMaxHistory);
                j["source"] = "history database";
            } else {
                j["source"] = "memory (this run)";
            }
            return ok_json(j);
        }
        if (path == "/api/v1/sm/priority") {
            if (!method_is("POST", r) || !no_query(r)) return r;
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
        if (path == "/api/v1/history") return method_is("GET", r) ? history_response(query, ctx) : r;
        if (path == "/api/v1/history/changes") return method_is("GET", r) ? history_changes_response(query, ctx) : r;
        if (path == "/api/v1/history/diff") return method_is("GET", r) ? history_diff_response(query, ctx) : r;
        if (path == "/api/v1/accept") return method_is("POST", r) && no_query(r) ? accept_response(req, ctx) : r;
        if (path == "/api/v1/reload") {
            if (!method_is("POST", r) || !no_query(r)) return r;
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
