// The HTTP API's JSON: ControllerState rendered for /api/v1/fabric, /sm, /findings and /analysis,
// and the helpers every route uses (bearer check, query parsing, errors). Routing: routes.cpp;
// /metrics: metrics.cpp.
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
#include "ibf/waivers.h"
#include "ibf/ui_page.h"
#include "ibf/wire.h"

namespace ibf {
namespace {

using nlohmann::json;

json time_or_null(int64_t ms) { return ms ? json(iso_time(ms)) : json(nullptr); }
json ms_or_null(int64_t ms) { return ms ? json(ms) : json(nullptr); }

// data_state, data_message, data_as_of, stale_after_s (docs/api.md, "No data").
void add_data_status(json& j, const ControllerState& st, int64_t now_ms) {
    const DataStatus d = st.data_status(now_ms);
    j["data_state"] = std::string(to_string(d.state));
    j["data_message"] = d.message.empty() ? json(nullptr) : json(d.message);
    j["data_as_of"] = time_or_null(d.as_of_ms);
    j["stale_after_s"] = st.health().stale_after_ms / 1000.0;
}

}  // namespace

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
        std::string value = eq == std::string::npos ? std::string() : kv.substr(eq + 1);
        // Percent-decoded as clients escape it (`ibfabric diff '#1'` sends from=%231).
        std::string decoded;
        for (size_t i = 0; i < value.size(); ++i) {
            if (value[i] != '%') {
                decoded += value[i];
                continue;
            }
            auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
            if (i + 2 >= value.size() || !hex(value[i + 1]) || !hex(value[i + 2]))
                return api_error(400, "query parameter '" + key + "' has a bad %-escape");
            decoded += static_cast<char>(std::stoi(value.substr(i + 1, 2), nullptr, 16));
            i += 2;
        }
        out[key] = std::move(decoded);
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
        // What the SM said, else (a standby that never swept) its port's LID in the master's sweep,
        // so `ibfabric status` and `sm status` show the same LID.
        s["lid"] = st.sm_lid(guid);
        const SmInfo info = st.sm_info(guid);
        s["priority"] = info.priority;
        s["state"] = std::string(to_string(info.state));
        s["act_count"] = info.act_count;
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
    if (st.flaps().flapping(now_ms).empty() && st.ha_findings().empty() && st.port_counters().over_threshold(now_ms).empty() &&
        !st.have_waivers()) {
        j = st.findings_json();
        if (!j.is_object() || j.empty()) j = json{{"summary", json::object()}, {"findings", json::array()}};
    } else {
        j = findings_to_json(st.findings_at(now_ms));  // the check's findings plus link_flapping, port_errors and the SMs' own
    }
    if (st.have_waivers()) j["waived"] = waived_to_json(st.waived_at(now_ms));  // what the waiver file covers (docs/daemon.md)
    j["sweep_seq"] = st.have_findings() ? json(st.findings_sweep_seq()) : json(nullptr);
    j["generated_at"] = time_or_null(st.findings_ms());
    j["checked"] = st.have_findings() ? st.checked() : topology_configured;  // false: no topology, and only then
    // "validating": the route findings are the last validation's until this sweep's is published.
    const json& rv = st.routes_json();
    j["route_validation"] = rv.is_object() && rv.contains("state") ? rv["state"] : json(nullptr);
    add_data_status(j, st, now_ms);
    return j;
}

json routing_lft_json(const ControllerState& st) {
    const auto& la = st.analysis();
    if (!la || !la->summary_json.contains("routing")) return nullptr;
    const json& r = la->summary_json["routing"];
    if (!r.is_object() || !r.contains("lft") || !r["lft"].is_object()) return nullptr;
    json lft = r["lft"];
    const json& rv = st.routes_json();
    if (!lft.contains("routes") && rv.is_object() && rv.contains("switch_routes")) lft.update(rv["switch_routes"]);
    return lft;
}

json analysis_response_json(const ControllerState& st, bool per_switch, int64_t now_ms) {
    const auto& la = st.analysis();
    json j;
    if (la) {
        j = la->summary_json;
        if (j.contains("routing") && j["routing"].is_object()) j["routing"]["lft"] = routing_lft_json(st);
        if (per_switch) j["switches"] = la->switches_json();
        if (st.have_waivers()) {
            const json fj = findings_to_json(st.analysis_findings_at(now_ms));
            j["summary"] = fj.at("summary");
            j["findings"] = fj.at("findings");
            j["waived"] = waived_to_json(st.analysis_waived_at(now_ms));
        }
    } else {
        j = json{{"summary", json::object()}, {"findings", json::array()}, {"routing", nullptr}};
    }
    j["route_validation"] = st.routes_json();  // null: no LFTs validated (pipeline/live_routes.h)
    j["analyzed"] = la != nullptr;
    j["sweep_seq"] = la ? json(st.analysis_sweep_seq()) : json(nullptr);
    j["generated_at"] = time_or_null(st.analysis_ms());
    j["analyze_ms"] = la ? json(std::round(st.last_analyze_ms() * 100) / 100) : json(nullptr);
    return j;
}


}  // namespace ibf
