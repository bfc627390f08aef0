// The HTTP API's routing: ONE table of {method, path, auth, handler}, one bearer check, one
// mapping of errors to statuses (docs/api.md). handle_api() looks the path up, answers 404/405,
// refuses a query on a path that takes none (400), checks the token, runs the handler.
#include <charconv>
#include <functional>
#include <optional>
#include <limits>
#include <map>
#include <string_view>

#include "ibf/fabric_role.h"
#include "ibf/api.h"
#include "ibf/error.h"
#include "ibf/ha_engine.h"
#include "ibf/history_api.h"
#include "ibf/gzip.h"
#include "ibf/metrics.h"
#include "ibf/report.h"
#include "ibf/routing_api.h"
#include "ibf/ui_page.h"

namespace ibf {
namespace {

using nlohmann::json;

// Who may call a route: anybody (/healthz), readers (the token only with token_for_reads), or
// holders of the token (every POST).
enum class Auth { open, read, token };

using Handler = ApiResponse (*)(const ApiRequest& req, const std::string& query, const ApiContext& ctx);

struct Route {
    const char* method;
    std::string_view path;
    Auth auth;
    Handler handler;
    bool takes_query = false;   // false: any query parameter is 400 (docs/api.md)
    int input_error_status = 400;          // an InputError from the handler
    const char* input_error_prefix = "";   // ... with this before its message
};

ApiResponse ok_json(const json& j) {
    ApiResponse r;
    r.body = json_text(j, 2);
    r.body += '\n';
    return r;
}

ApiResponse text(std::string content_type, std::string body) {
    ApiResponse r;
    r.content_type = std::move(content_type);
    r.body = std::move(body);
    return r;
}

// Parses an integer query value in [lo, hi]; nullopt when it is not one.
std::optional<int64_t> int_param(const std::string& v, int64_t lo, int64_t hi) {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || n < lo || n > hi) return std::nullopt;
    return n;
}

ApiResponse healthz(const ApiRequest&, const std::string&, const ApiContext&) { return text("text/plain", "ok\n"); }

ApiResponse metrics(const ApiRequest& req, const std::string&, const ApiContext& ctx) {
    if (ctx.metrics_scrape) {
        ApiResponse r;
        r.later = [scrape = ctx.metrics_scrape, gz = req.accept_gzip](std::function<void(ApiResponse)> reply) {
            scrape(gz, std::move(reply));
        };
        return r;
    }
    MetricsCache* c = ctx.metrics_cache;
    const uint64_t stamp = c ? metrics_stamp(ctx) : 0;
    if (!c || !c->text || c->stamp != stamp || ctx.now_ms - c->made_ms >= c->max_age_ms || ctx.now_ms < c->made_ms) {
        std::string body = metrics_render(metrics_job_of(ctx));
        if (!c) {
            ApiResponse r = text("text/plain; version=0.0.4", std::move(body));
            if (req.accept_gzip) {
                r.body = gzip(r.body);
                r.content_encoding = "gzip";
            }
            return r;
        }
        c->text = std::make_shared<const std::string>(std::move(body));
        c->gzip.reset();
        c->made_ms = ctx.now_ms;
        c->stamp = stamp;
        ++c->renders;
    }
    return metrics_response(*c, req.accept_gzip);
}

constexpr const char* kDrawing = "the picture of this sweep is being drawn: reload in a few seconds";

ApiResponse page(const ApiRequest&, const std::string&, const ApiContext& ctx) {  // ui_page.h
    if (ctx.ui_picture) {
        const std::shared_ptr<const std::string> pic = ctx.ui_picture();
        const std::string none;
        return text("text/html; charset=utf-8",
                    ui_page_html(*ctx.state, ctx.now_ms, !ctx.topology.empty(),
                                 pic ? pic.get() : &none, kDrawing));
    }
    return text("text/html; charset=utf-8", ui_page_html(*ctx.state, ctx.now_ms, !ctx.topology.empty()));
}

ApiResponse page_svg(const ApiRequest&, const std::string&, const ApiContext& ctx) {
    if (!ctx.state->current()) return api_error(404, "no fabric yet: no Subnet Manager has sent a snapshot");
    if (ctx.ui_picture) {
        std::shared_ptr<const std::string> pic = ctx.ui_picture();
        if (!pic) return api_error(503, kDrawing);
        ApiResponse r;
        r.content_type = "image/svg+xml";
        r.shared_body = std::move(pic);
        return r;
    }
    std::string svg = ui_fabric_svg(*ctx.state, ctx.now_ms);
    return text("image/svg+xml", std::move(svg));
}

ApiResponse fabric(const ApiRequest&, const std::string&, const ApiContext& ctx) { return ok_json(fabric_json(ctx)); }

ApiResponse findings(const ApiRequest&, const std::string&, const ApiContext& ctx) {
    return ok_json(findings_response_json(*ctx.state, ctx.now_ms, !ctx.topology.empty()));
}

// GET /api/v1/analysis[?switches=0|1]
ApiResponse analysis(const ApiRequest&, const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"switches"}, q)) return *bad;
    bool per_switch = false;
    if (q.count("switches")) {
        const std::string& v = q["switches"];
        if (v == "1" || v == "true" || v.empty()) per_switch = true;
        else if (v != "0" && v != "false") return api_error(400, "switches must be 0 or 1");
    }
    return ok_json(analysis_response_json(*ctx.state, per_switch, ctx.now_ms));
}

ApiResponse sms(const ApiRequest&, const std::string&, const ApiContext& ctx) {
    json j = sm_json(*ctx.state);
    const auto& cur = ctx.state->current();
    j["ha"] = ctx.ha ? ha_json(*ctx.ha, ctx.now_ms, ctx.ha_agents, cur ? &cur->fabric : nullptr, ctx.ha_role) : json(nullptr);
    if (ctx.ha && ctx.switchover_status) j["ha"]["switchover"] = ctx.switchover_status();
    return ok_json(j);
}

ApiResponse ha_history(const ApiRequest&, const std::string&, const ApiContext& ctx) {
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

// POST /api/v1/sm/priority and /api/v1/sm/state: a JSON body handed to the daemon's function.
ApiResponse sm_call(const std::function<json(const json&)>& run, const std::string& body, const char* expected) {
    if (!run) return api_error(404, "SM high availability is off (no 'ha:' section in the config)");
    json j;
    try {
        j = json::parse(body);
    } catch (const json::exception&) {
        return api_error(400, std::string("the body must be JSON: ") + expected);
    }
    try {
        return ok_json(run(j));
    } catch (const ApiFailure& e) {
        return api_error(e.status, e.what());
    }
}

// The answer to an SM call's exception, as handle_api() maps a handler's.
ApiResponse sm_call_error(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const ApiFailure& x) {
        return api_error(x.status, x.what());
    } catch (const InputError& x) {
        return api_error(400, x.what());
    } catch (const std::exception& x) {
        return api_error(500, x.what());
    }
}

// Answered when the daemon's job calls back (the helper may take seconds: never on the io thread).
ApiResponse sm_priority(const ApiRequest& req, const std::string&, const ApiContext& ctx) {
    if (!ctx.sm_priority) return api_error(404, "SM high availability is off (no 'ha:' section in the config)");
    json body;
    try {
        body = json::parse(req.body);
    } catch (const json::exception&) {
        return api_error(400, "the body must be JSON: {\"priority\": 0..15}");
    }
    ApiResponse r;
    r.later = [run = ctx.sm_priority, body = std::move(body)](std::function<void(ApiResponse)> reply) {
        auto done = [reply](json answer, std::exception_ptr e) { reply(e ? sm_call_error(e) : ok_json(answer)); };
        try {
            run(body, done);
        } catch (...) {
            done(nullptr, std::current_exception());
        }
    };
    return r;
}

ApiResponse sm_process_gone(const ApiRequest& req, const std::string&, const ApiContext& ctx) {
    return sm_call(ctx.sm_process_gone, req.body, "{\"sm\": \"0x...\", \"pid\": N}");
}

ApiResponse sm_state(const ApiRequest& req, const std::string&, const ApiContext& ctx) {
    return sm_call(ctx.sm_state, req.body, "{\"set\": \"disable\"}");
}

ApiResponse sm_switchover(const ApiRequest& req, const std::string&, const ApiContext& ctx) {
    return sm_call(ctx.switchover, req.body.empty() ? "{}" : req.body, "{\"to\": GUID}");
}

ApiResponse sm_switchover_abort(const ApiRequest&, const std::string&, const ApiContext& ctx) {
    return sm_call(ctx.switchover_abort, "{}", "{}");
}

// GET /api/v1/history?limit=N&before=ID: one bounded page, rows spliced in as stored text.
ApiResponse history(const ApiRequest&, const std::string& query, const ApiContext& ctx) {
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
    if (ctx.history_store) {  // a full disk: the newest row above is old, and says nothing of it
        const HistoryWriteStatus w = ctx.history_store->write_status();
        head["writable"] = w.writable;
        head["last_error"] = w.last_error.empty() ? json(nullptr) : json(w.last_error);
        head["failed_writes"] = w.failed_writes;
    }
    ApiResponse r;
    r.body = json_text(head);
    r.body.pop_back();  // '}'
    r.body.reserve(r.body.size() + page.rows.size() + 16);
    r.body += ",\"history\":";
    r.body += page.rows;
    r.body += "}\n";
    return r;
}

ApiResponse history_changes(const ApiRequest&, const std::string& query, const ApiContext& ctx) {
    return history_changes_response(query, ctx);
}

ApiResponse history_diff(const ApiRequest&, const std::string& query, const ApiContext& ctx) {
    return history_diff_response(query, ctx);
}

ApiResponse accept(const ApiRequest& req, const std::string&, const ApiContext& ctx) {
    return accept_response(req, ctx);
}

// GET /api/v1/route?src=&dst= and /api/v1/impact?node=[&port=] (routing_api.h).
ApiResponse route(const ApiRequest&, const std::string& query, const ApiContext& ctx) { return route_response(query, ctx); }
ApiResponse impact(const ApiRequest&, const std::string& query, const ApiContext& ctx) { return impact_response(query, ctx); }
// GET /api/v1/hosts?nodes=HOSTLIST (routing_api.h).
ApiResponse hosts(const ApiRequest&, const std::string& query, const ApiContext& ctx) { return hosts_response(query, ctx); }
// GET /api/v1/topology/slurm[?block=1] (routing_api.h).
ApiResponse topology_slurm(const ApiRequest&, const std::string& query, const ApiContext& ctx) {
    return slurm_topology_response(query, ctx);
}

ApiResponse reload(const ApiRequest&, const std::string&, const ApiContext& ctx) {
    if (!ctx.reload) return api_error(500, "reload is not available");
    return ok_json(ctx.reload());
}

// Every route (docs/api.md). A path is listed once: its one method, who may call it, its handler.
const Route kRoutes[] = {
    {"GET", "/healthz", Auth::open, healthz},
    {"GET", "/metrics", Auth::read, metrics},
    {"GET", "/", Auth::read, page},
    {"GET", "/ui", Auth::read, page},
    {"GET", "/ui/fabric.svg", Auth::read, page_svg},
    {"GET", "/api/v1/fabric", Auth::read, fabric},
    {"GET", "/api/v1/findings", Auth::read, findings},
    {"GET", "/api/v1/analysis", Auth::read, analysis, true},
    {"GET", "/api/v1/route", Auth::read, route, true},
    {"GET", "/api/v1/impact", Auth::read, impact, true},
    {"GET", "/api/v1/hosts", Auth::read, hosts, true},
    {"GET", "/api/v1/topology/slurm", Auth::read, topology_slurm, true},
    {"GET", "/api/v1/sm", Auth::read, sms},
    {"GET", "/api/v1/ha/history", Auth::read, ha_history},
    {"POST", "/api/v1/sm/priority", Auth::token, sm_priority},
    {"POST", "/api/v1/sm/state", Auth::token, sm_state},
    {"POST", "/api/v1/sm/process-gone", Auth::token, sm_process_gone},
    {"POST", "/api/v1/sm/switchover", Auth::token, sm_switchover},
    {"POST", "/api/v1/sm/switchover/abort", Auth::token, sm_switchover_abort},
    {"GET", "/api/v1/history", Auth::read, history, true},
    {"GET", "/api/v1/history/changes", Auth::read, history_changes, true},
    {"GET", "/api/v1/history/diff", Auth::read, history_diff, true},
    {"POST", "/api/v1/accept", Auth::token, accept},
    {"POST", "/api/v1/reload", Auth::token, reload, false, 422, "not reloaded (the previous configuration and topology stay): "},
};

const Route* find_route(std::string_view path) {
    for (const Route& r : kRoutes)
        if (r.path == path) return &r;
    return nullptr;
}

// The one bearer check: nullopt when `req` may go on. With token_for_reads every route but an
// open one needs the token on a read; a token route always needs it.
std::optional<ApiResponse> refused(const ApiRequest& req, const ApiContext& ctx, bool mutating) {
    const char* no_token = mutating ? "mutating calls are disabled: no token_file is configured"
                                    : "reads need a token but no token_file is configured";
    if (!ctx.token) return api_error(403, no_token);
    if (!bearer_matches(req.authorization, *ctx.token)) return api_error(401, "missing or wrong bearer token");
    return std::nullopt;
}

// Everything before the handler: token for reads, 404, 405, a query where none is taken, the token.
std::optional<ApiResponse> admit(const Route* route, const std::string& path, const std::string& query,
                                 const ApiRequest& req, const ApiContext& ctx) {
    const bool open = route && route->auth == Auth::open;
    if (!open && ctx.token_for_reads && req.method != "POST")
        if (auto r = refused(req, ctx, false)) return r;
    if (!route) return api_error(404, "no such path: " + path);
    if (req.method != route->method) {
        ApiResponse r = api_error(405, "method " + req.method + " not allowed on " + path + "; use " + route->method);
        r.allow = route->method;
        return r;
    }
    if (!route->takes_query) {
        std::map<std::string, std::string> q;
        if (auto bad = parse_query(query, {}, q)) return bad;
    }
    if (route->auth == Auth::token) return refused(req, ctx, true);
    return std::nullopt;
}

}  // namespace

uint64_t metrics_stamp(const ApiContext& ctx) {
    const ControllerState& st = *ctx.state;
    uint64_t h = st.checks_run() * 1000003u + st.routes_published() * 524287u + st.port_counters().version() * 7919u +
                 st.port_counter_rows_ignored() +
                 static_cast<uint64_t>(st.last_reload_ok_ms()) * 31u + st.sms_forgotten_total() * 131u +
                 st.ingest().connections_total * 257u + (st.last_reload_ok() ? 1 : 0);
    for (uint64_t m : st.ingest().messages) h = h * 1099511628211u + m;
    if (ctx.history_store) h = h * 3u + (ctx.history_store->write_status().writable ? 1 : 0);
    if (ctx.ha_role) h = h * 5u + 1u + static_cast<uint64_t>(ctx.ha_role->role);  // the role label
    return h;
}

MetricsJob metrics_job_of(const ApiContext& ctx) {
    std::optional<HistoryWriteStatus> hist;
    if (ctx.history_store) hist = ctx.history_store->write_status();
    return metrics_job({.state = ctx.state, .now_ms = ctx.now_ms, .ha = ctx.ha, .role = ctx.ha_role,
                        .history = hist ? &*hist : nullptr, .all_links = ctx.metrics_all_links});
}

ApiResponse metrics_response(MetricsCache& c, bool gz) {
    ApiResponse r;
    r.content_type = "text/plain; version=0.0.4";
    if (gz) {
        if (!c.gzip) c.gzip = std::make_shared<const std::string>(gzip(*c.text));
        r.shared_body = c.gzip;
        r.content_encoding = "gzip";
    } else {
        r.shared_body = c.text;
    }
    return r;
}

ApiResponse handle_api(const ApiRequest& req, const ApiContext& ctx) {
    std::string path = req.target, query;
    if (auto q = path.find('?'); q != std::string::npos) {
        query = path.substr(q + 1);
        path.resize(q);
    }
    const Route* route = find_route(path);
    try {
        if (auto r = admit(route, path, query, req, ctx)) return *r;
        try {
            return route->handler(req, query, ctx);
        } catch (const InputError& e) {
            return api_error(route->input_error_status, route->input_error_prefix + std::string(e.what()));
        }
    } catch (const std::exception& e) {
        return api_error(500, e.what());
    }
}

}  // namespace ibf
