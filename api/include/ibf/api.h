// The HTTP API of ibfabricd (docs/api.md), as a function from a request to a response, so it can
// be tested without sockets. The Beast server (http_server.h) parses requests, calls handle_api()
// on the io_context thread, and writes the response.
//
//   ApiContext ctx{.state = &st, .now_ms = now, .token = token, .history = ..., .reload = ...};
//   ApiResponse r = handle_api({.method = "GET", .target = "/api/v1/findings"}, ctx);
//
// Routes: GET /api/v1/fabric, /api/v1/findings, /api/v1/analysis[?switches=1], /api/v1/sm,
// /api/v1/history?limit=N[&before=ID], /api/v1/history/changes, /api/v1/history/diff (history_api.h),
// /healthz, /metrics, the page / and /ui (HTML) and /ui/fabric.svg (ui_page.h); POST /api/v1/reload
// and /api/v1/accept (Authorization:
// Bearer <token>; with token_for_reads every path but /healthz needs it). Unknown path 404, wrong
// method 405, bad or unknown query parameter 400, missing/wrong token 401, no token configured 403.
// Errors are {"error": "..."}.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ibf/controller_state.h"
#include "ibf/history.h"
#include "ibf/plan.h"
#include "ibf/iso_time.h"  // iso_time(), used by every JSON renderer here

namespace ibf {
namespace ha {
class HaEngine;
struct FailoverRecord;
struct RoleDecision;
}

struct ApiRequest {
    std::string method;          // "GET", "POST", ...
    std::string target;          // path and query: "/api/v1/history?limit=5"
    std::string authorization;   // the Authorization header, "" when absent
    std::string body;
    bool accept_gzip = false;    // Accept-Encoding names gzip (GET /metrics answers gzip then)
};

struct ApiResponse {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::string allow;           // the Allow header for 405
    // When set, the body (instead of `body`): an immutable buffer shared by every session that
    // writes it (a cached /metrics), so slow readers hold a reference, never a copy.
    std::shared_ptr<const std::string> shared_body;
    std::string content_encoding;  // "gzip" or ""
    // When set, the answer comes later (GET /metrics while its text is rendered off the io thread):
    // the server calls later(reply) instead of writing this response, and `reply` writes the one it
    // is given; both on the io thread, reply at most once (never, if the daemon stops first).
    std::function<void(std::function<void(ApiResponse)> reply)> later;
    const std::string& bytes() const { return shared_body ? *shared_body : body; }
};

// GET /metrics' last answer, kept for max_age_ms while the state it was rendered from is
// unchanged (`stamp`), shared by the scrapes of that time; its gzip made at the first scrape
// that asks for it (handle_api()), or with the text (ibfabricd's render thread). Owned by the io
// thread (ApiContext::metrics_cache: null, no cache).
struct MetricsCache {
    int64_t max_age_ms = 1000;
    int64_t made_ms = 0;
    uint64_t stamp = 0;
    std::shared_ptr<const std::string> text, gzip;
    uint64_t renders = 0;  // for tests and benchmarks
};

// How a call that finishes off the io thread answers (POST /api/v1/sm/priority): on the io thread,
// once, with its JSON or the exception it threw (mapped as a handler's: ApiFailure -> its status,
// InputError -> 400, anything else -> 500).
using SmCallDone = std::function<void(nlohmann::json answer, std::exception_ptr error)>;

struct ApiContext {
    const ControllerState* state = nullptr;
    int64_t now_ms = 0;
    std::optional<std::string> token;  // nullopt: mutating calls refused (403)
    bool token_for_reads = false;      // GETs (but /healthz) need the token too
    std::string topology;              // configured topology path, for /api/v1/fabric
    size_t plan_nodes = 0, plan_links = 0;
    std::shared_ptr<const Plan> plan;  // the topology's plan (null: none): history diffs tell restored cables
    // The configured node-name-map (null: none; the type of dumps.h): /api/v1/topology/slurm
    // names the hosts as the check does.
    std::shared_ptr<const std::unordered_map<Guid, std::string>> names;
    // A page of at most `limit` rows older than row `before` (0: the newest), newest first, within
    // the daemon's byte limit; nullptr when history is off (404). May throw std::exception (500).
    std::function<HistoryPage(int limit, int64_t before)> history;
    // Re-reads the topology and re-checks; returns a JSON summary; throws InputError (400) on a
    // bad topology file, std::exception (500) otherwise.
    std::function<nlohmann::json()> reload;
    // SM high availability (null / empty when `ha:` is off): GET /api/v1/sm gains "ha",
    // GET /api/v1/ha/history, POST /api/v1/sm/priority (token) runs `sm_priority` and answers
    // when it calls `done` (ApiResponse::later: the io thread serves other requests meanwhile; it
    // may also throw at once), POST /api/v1/sm/state (token) runs `sm_state` (a switchover's
    // SubnSet(SMInfo) to this node's SM).
    const ha::HaEngine* ha = nullptr;
    // The role this daemon publishes (the daemon's ha::RoleHold); null: decided from `ha` at once.
    const ha::RoleDecision* ha_role = nullptr;
    std::vector<std::string> ha_agents;
    std::function<void(const nlohmann::json& body, SmCallDone done)> sm_priority;
    std::function<nlohmann::json(const nlohmann::json& body)> sm_state;
    // POST /api/v1/sm/process-gone (token) runs `sm_process_gone`: a peer agent saw the opensm of
    // an SM on its node exit (the process-gone witness, relayed across SM nodes; docs/ha.md).
    std::function<nlohmann::json(const nlohmann::json& body)> sm_process_gone;
    // POST /api/v1/sm/switchover (token) runs `switchover` (the daemon runs the whole switchover and
    // its rollback; throws ApiFailure 409 when refused), POST /api/v1/sm/switchover/abort
    // `switchover_abort`; GET /api/v1/sm shows `switchover_status()` as ha.switchover.
    std::function<nlohmann::json(const nlohmann::json& body)> switchover;
    std::function<nlohmann::json(const nlohmann::json& body)> switchover_abort;
    std::function<nlohmann::json()> switchover_status;
    // The durable failover history (the history database), newest first; null = the engine's.
    std::function<nlohmann::json(int limit)> ha_history;
    // GET /api/v1/history/changes and /diff (history_api.h); null when history is off (404).
    const HistoryStore* history_store = nullptr;
    // POST /api/v1/accept (token): edits what the fabric adds into the plan; body {"scope", "accept_kind", "dry_run"}.
    // Throws ApiFailure (its status) or InputError (400).
    std::function<nlohmann::json(const nlohmann::json& body)> accept;
    bool metrics_all_links = false;       // metrics.per_link: all
    // The page's picture as drawn off the io thread for the current check (ibfabricd's cache,
    // docs/threading.md); null: GET /ui draws it in the handler. Returns null while the first
    // drawing of this fabric is under way (the page says so; /ui/fabric.svg answers 503).
    std::function<std::shared_ptr<const std::string>()> ui_picture;
    MetricsCache* metrics_cache = nullptr;  // null: every scrape renders
    // GET /metrics answered off the io thread (ibfabricd, docs/threading.md "Metrics"): when set,
    // the route answers through ApiResponse::later and this is called with the scrape's gzip wish
    // and the reply; the cache above is then unused.
    std::function<void(bool gzip, std::function<void(ApiResponse)> reply)> metrics_scrape;
};

// What GET /metrics' text is rendered from: changes with every message, check, counter row,
// reload and HA record (the time-dependent gauges follow within MetricsCache::max_age_ms).
uint64_t metrics_stamp(const ApiContext& ctx);
// The io thread's half of a rendering of `ctx` (metrics.h metrics_job()).
struct MetricsJob;
MetricsJob metrics_job_of(const ApiContext& ctx);
// The answer from a cache entry: its text, or its gzip when asked (made here if missing).
ApiResponse metrics_response(MetricsCache& c, bool gzip);

ApiResponse handle_api(const ApiRequest& req, const ApiContext& ctx);

// A JSON error response.
ApiResponse api_error(int status, const std::string& message);

// Parts of the API exposed for tests and the CLI.
nlohmann::json fabric_json(const ApiContext& ctx);
nlohmann::json sm_json(const ControllerState& st);
// GET /api/v1/findings: the check's findings plus link_flapping at `now_ms` ("waived": what the
// waiver file covers, listed apart), and whether there is
// data at all (data_state, data_message: docs/api.md). `checked` is false when no topology is
// configured, and only then (before the first check it says whether one is).
nlohmann::json findings_response_json(const ControllerState& st, int64_t now_ms, bool topology_configured);
// GET /api/v1/analysis: the live fat-tree analysis summary (+ "switches" when per_switch), its
// findings without the waived ones at `now_ms` ("waived": those).
nlohmann::json analysis_response_json(const ControllerState& st, bool per_switch, int64_t now_ms);
// Its routing.lft: the live analysis' figures of the tables, and where they lead (max_hops,
// hop_histogram, routes, routes_unrouted, routes_broken) from the route validation when the
// analysis left that to it (ibf::analyze_live follow_tables=false: the daemon), i.e. from the
// validation that `route_validation` describes (the last one while "validating"); those members
// are absent until one is done. null: no analysis, or no tables.
nlohmann::json routing_lft_json(const ControllerState& st);
// HA parts (api/src/ha_api.cpp, docs/api.md "SM high availability").
// `fabric` (the current sweep, may be null) names each SM's node: "description" per SM; `role`
// is the role the daemon publishes (its ha::RoleHold), else fabric_role() of `e` at `now_ms`.
nlohmann::json ha_json(const ha::HaEngine& e, int64_t now_ms, const std::vector<std::string>& agents,
                       const Fabric* fabric = nullptr, const ha::RoleDecision* role = nullptr);
nlohmann::json ha_history_json(const ha::HaEngine& e);
nlohmann::json ha_record_json(const ha::FailoverRecord& r);
// Constant-time comparison of an Authorization header with "Bearer <token>" (the scheme in any
// case, RFC 7235).
bool bearer_matches(const std::string& authorization, const std::string& token);
// Splits "a=1&b" into `out`; a 400 response for a key not in `allowed` or given twice.
std::optional<ApiResponse> parse_query(const std::string& query, std::initializer_list<std::string_view> allowed,
                                       std::map<std::string, std::string>& out);

}  // namespace ibf
