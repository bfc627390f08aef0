// ibfabricd's side of the HTTP API: the context handle_api() reads (api.h), and the two calls
// that change the daemon, POST /api/v1/reload and /api/v1/accept. io thread.
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "daemon_impl.h"
#include "ibf/ui_page.h"
#include "ibf/check.h"
#include "ibf/clock.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/history_api.h"
#include "ibf/gzip.h"
#include "ibf/inputs.h"
#include "ibf/metrics.h"
#include "ibf/plan_accept.h"
#include "ibf/plan_yaml.h"

namespace ibf {

// Re-reads the configuration (opt.reread_config) and every file it names; all of it or nothing:
// a bad config, topology, waiver or token file leaves the running ones (InputError: 422).
nlohmann::json Daemon::Impl::reload() {
    DaemonConfig next = opt.config;
    Topology t;
    std::optional<std::string> new_token;
    try {
        if (opt.reread_config) next = opt.reread_config();
        t = load_topology(next);
        new_token = load_token(next);
    } catch (const std::exception& e) {
        state.note_reload(false, wall_clock_ms());
        spdlog::error("reload refused, the previous configuration and topology stay: {}", e.what());
        throw;
    }
    state.note_reload(true, wall_clock_ms());
    const std::vector<std::string> restart = apply_config(std::move(next));
    topo = std::move(t);
    state.set_waivers(topo.waivers);
    token = std::move(new_token);
    spdlog::info("topology reloaded: {} planned nodes, {} planned links, {} waivers",
                 topo.plan ? topo.plan->nodes.size() : 0, topo.plan ? topo.plan->links.size() : 0,
                 topo.waivers ? topo.waivers->waivers.size() : 0);
    if (!restart.empty())
        spdlog::warn("reload: {} changed in {} but take effect only at the next start (restart ibfabricd)",
                     fmt::join(restart, ", "), opt.config.source);
    auto job = state.recheck(wall_clock_ms());
    if (job) submit(std::move(*job), steady::now(), 0);
    return nlohmann::json{{"reloaded", true},
                          {"config", opt.config.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.config.source)},
                          {"needs_restart", restart},
                          {"topology", opt.config.topology.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.config.topology)},
                          {"plan_nodes", topo.plan ? topo.plan->nodes.size() : 0},
                          {"plan_links", topo.plan ? topo.plan->links.size() : 0},
                          {"rechecking", job.has_value()}};
}

// Takes from `next` what applies at run time (the files a reload re-reads, the token's reach, the
// log level, check options); returns the changed keys that need a restart (they keep their value).
std::vector<std::string> Daemon::Impl::apply_config(DaemonConfig next) {
    std::vector<std::string> restart = keys_needing_restart(opt.config, next);
    DaemonConfig& c = opt.config;
    c.source = next.source;
    c.topology = next.topology;
    c.node_name_map = next.node_name_map;
    c.waivers = next.waivers;
    c.token_file = next.token_file;
    c.token_for_reads = next.token_for_reads;
    c.check_rate_below_capability = next.check_rate_below_capability;
    if (c.log_level != next.log_level) {
        c.log_level = next.log_level;
        spdlog::set_level(spdlog::level::from_str(c.log_level));
    }
    return restart;
}

// POST /api/v1/accept: what the current fabric (node-name-map applied) adds or changes in the
// scope is edited into the plan file (checks/plan_accept.h, the same edit as the CLI's offline
// accept); the previous file is kept as plan.yaml.N; then the topology is reloaded. With
// "dry_run": true only the diff is answered. io thread.
nlohmann::json Daemon::Impl::accept(const nlohmann::json& body) {
    AcceptOptions ao;
    auto strings = [&](const char* key, const char* expected) {
        std::vector<std::string> out;
        if (!body.contains(key)) return out;
        const nlohmann::json& sj = body[key];
        for (const nlohmann::json& e : sj.is_array() ? sj : nlohmann::json::array({sj})) {
            if (!e.is_string() || e.get<std::string>().empty())
                throw ApiFailure(400, std::string(key) + ": expected " + expected + ", got " + e.dump());
            out.push_back(e.get<std::string>());
        }
        return out;
    };
    ao.scope = strings("scope", "node names or patterns (\"leaf03\", \"leaf[19-20]\", \"leaf2*\")");
    const std::vector<std::string> kinds = strings("accept_kind", "finding kinds (\"rate_mismatch\", \"miswired\")");
    for (const std::string& k : kinds) {
        auto kind = parse_finding_kind(k);
        if (!kind) throw ApiFailure(400, "accept_kind: unknown finding kind '" + k + "' (docs/findings.md)");
        ao.accept_kinds.push_back(*kind);
    }
    if (body.contains("dry_run") && !body["dry_run"].is_boolean()) throw ApiFailure(400, "dry_run: expected true or false");
    const bool dry_run = body.value("dry_run", false);
    const std::string& path = opt.config.topology;
    if (path.empty()) throw ApiFailure(409, "no topology configured: accept writes into the 'topology' plan (docs/daemon.md)");
    const std::string text = read_text_file(path, "plan");
    if (detect_dump_format(text))
        throw ApiFailure(409, path + " is a dump used as the plan; accept edits YAML plans: point 'topology' at one "
                                     "(`ibfabric plan from-dump` makes it)");
    const std::shared_ptr<const Snapshot> snap = state.current();
    if (!snap) throw ApiFailure(409, "no fabric yet: nothing to accept before the first snapshot");
    Fabric f = snap->fabric;
    if (topo.names && !topo.names->empty()) apply_node_name_map(f, *topo.names);
    Plan plan;
    try {
        plan = parse_plan_yaml(text, path);  // the text on disk now: the edit's lines are its lines
        (void)AcceptScope(ao.scope);
    } catch (const InputError& e) {
        throw ApiFailure(e.file() == "scope" ? 400 : 422, e.what());
    }
    const CheckOptions co{opt.config.check_rate_below_capability};
    const std::vector<Finding> fs = check(plan, f, co);
    ao.source = "ibfabricd: sweep " + std::to_string(snap->sweep_seq) + " of SM " + guid_hex(snap->self.port_guid);
    AcceptResult r;
    try {
        r = accept_into_plan(text, path, plan, f, fs, ao, [&](const Plan& p) { return check(p, f, co); });
    } catch (const InputError& e) {
        throw ApiFailure(409, e.what());
    }
    nlohmann::json out = accept_result_json(r);
    out["topology"] = path;
    out["sweep_seq"] = snap->sweep_seq;
    out["sm_guid"] = guid_hex(snap->self.port_guid);
    out["scope"] = ao.scope;
    out["accept_kind"] = kinds;
    out["differences"] = fs.size();
    out["dry_run"] = dry_run;
    out["accepted"] = false;
    if (const std::string why = accept_refusal(r); !why.empty()) throw ApiFailure(409, why, out);
    if (r.changes.empty() || dry_run) return out;
    try {  // the daemon's own file system refused (a plan of another user's, a read-only /etc): not the caller's fault
        out["backup"] = write_plan_keeping_previous(path, r.text);
    } catch (const InputError& e) {
        throw ApiFailure(500, e.what());
    }
    out["accepted"] = true;
    spdlog::info("accept: {} edited from {} ({} changes, {} findings before, {} after); previous plan kept as {}", path,
                 ao.source, r.changes.size(), fs.size(), r.findings_after, out["backup"].get<std::string>());
    out["reload"] = reload();
    return out;
}

std::shared_ptr<const std::string> Daemon::Impl::ui_picture() {
    IBF_ASSERT_ON_THREAD(io_owner);
    if (!state.current()) return nullptr;
    // What the picture shows changes with each check, sweep, route publication (findings_ms) and
    // counter batch (port_errors findings come from the perfmgr between sweeps).
    const uint64_t key = state.checks_run() * 1000003u + state.sweeps_ingested() + state.port_counters().version() * 7919u +
                         static_cast<uint64_t>(state.findings_ms()) * 31u + 1;
    if (key != ui_pic.key && ui_pic.drawing == 0) {
        ui_pic.drawing = key;
        ui_draw.post([this, key, job = ui_draw_job(state, wall_clock_ms())] {
            auto svg = std::make_shared<const std::string>(ui_draw_svg(job));
            boost::asio::post(io, [this, key, svg = std::move(svg)] {
                ui_pic.key = key;
                ui_pic.svg = svg;
                ui_pic.drawing = 0;
                if (!stopping) ui_picture();  // a newer check published meanwhile: draw that one too
            });
        });
    }
    return ui_pic.svg;  // the last one drawn (of an earlier check while this one is drawn), null at first
}

// GET /metrics: answered at once from the last text when it was rendered from this state (same
// stamp) less than max_age_ms ago, else queued for the first render begun at or after this call
// (the one under way when it is of this stamp and time), so a scrape never gets a text older than
// the state it found. The render runs on `metrics_draw`, like the page's picture on `ui_draw`.
void Daemon::Impl::metrics_scrape(bool gzip, std::function<void(ApiResponse)> reply) {
    IBF_ASSERT_ON_THREAD(io_owner);
    MetricsRenders& m = metrics;
    const ApiContext ctx = api_context();
    const uint64_t stamp = metrics_stamp(ctx);
    MetricsCache& c = m.cache;
    auto fresh = [&](uint64_t s, int64_t made) { return s == stamp && ctx.now_ms >= made && ctx.now_ms - made < c.max_age_ms; };
    if (c.text && fresh(c.stamp, c.made_ms)) return reply(metrics_response(c, gzip));
    const bool busy = m.started != m.finished;
    m.waiting.push_back({busy && fresh(m.busy_stamp, m.busy_made_ms) ? m.started : m.started + 1, gzip, std::move(reply)});
    if (!busy) metrics_start_render();
}

void Daemon::Impl::metrics_start_render() {
    IBF_ASSERT_ON_THREAD(io_owner);
    MetricsRenders& m = metrics;
    const ApiContext ctx = api_context();
    const uint64_t seq = ++m.started;
    m.busy_stamp = metrics_stamp(ctx);
    m.busy_made_ms = ctx.now_ms;
    auto job = std::make_shared<MetricsJob>(metrics_job_of(ctx));  // small families, findings, shared_ptrs
    metrics_draw.post([this, seq, stamp = m.busy_stamp, made = ctx.now_ms, job = std::move(job)]() mutable {
        const auto t0 = steady::now();
        auto text = std::make_shared<const std::string>(metrics_render(*job));
        auto gz = std::make_shared<const std::string>(ibf::gzip(*text));
        const double ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
        // The job goes back with the result: its counter state is released on the io thread
        // (ControllerState::port_counters_shared()).
        boost::asio::post(io, [this, seq, stamp, made, ms, job = std::move(job), text = std::move(text), gz = std::move(gz)] {
            IBF_ASSERT_ON_THREAD(io_owner);
            MetricsRenders& r = metrics;
            r.finished = seq;
            r.cache.text = text;
            r.cache.gzip = gz;
            r.cache.stamp = stamp;
            r.cache.made_ms = made;
            ++r.cache.renders;
            spdlog::debug("metrics: rendered {} bytes ({} gzip) in {:.0f} ms", text->size(), gz->size(), ms);
            std::vector<MetricsWaiter> answer;
            std::erase_if(r.waiting, [&](MetricsWaiter& w) {
                if (w.needs > seq) return false;
                answer.push_back(std::move(w));
                return true;
            });
            if (!r.waiting.empty() && !stopping) metrics_start_render();  // scrapes that came during this one
            for (MetricsWaiter& w : answer) w.reply(metrics_response(r.cache, w.gzip));
        });
    });
}

ApiContext Daemon::Impl::api_context() {
    IBF_ASSERT_ON_THREAD(io_owner);
    ApiContext c;
    c.state = &state;
    c.now_ms = wall_clock_ms();
    c.token = token;
    c.token_for_reads = opt.config.token_for_reads;
    c.topology = opt.config.topology;
    c.plan_nodes = topo.plan ? topo.plan->nodes.size() : 0;
    c.plan_links = topo.plan ? topo.plan->links.size() : 0;
    c.plan = topo.plan;
    c.names = topo.names;
    if (history)
        c.history = [h = history.get(), max = opt.config.max_history_bytes](int limit, int64_t before) {
            return h->page(limit, before, max);
        };
    if (ha) {
        c.ha = &*ha;
        c.ha_role = ha_role && ha_role->published() ? &*ha_role->published() : nullptr;
        c.ha_agents = opt.config.ha_agents;
        c.sm_priority = [this](const nlohmann::json& body, SmCallDone done) { set_local_priority(body, std::move(done)); };
        c.sm_state = [this](const nlohmann::json& body) { return set_local_sm_state(body); };
        c.sm_process_gone = [this](const nlohmann::json& body) { return relayed_process_gone(body); };
        c.switchover = [this](const nlohmann::json& body) { return start_switchover(body); };
        c.switchover_abort = [this](const nlohmann::json&) { return abort_switchover(); };
        c.switchover_status = [this] { return switchover_json(); };
        if (history) c.ha_history = [h = history.get()](int limit) { return h->recent_ha_events(limit); };
    }
    c.reload = [this] { return reload(); };
    c.history_store = history.get();
    c.accept = [this](const nlohmann::json& body) { return accept(body); };
    c.metrics_all_links = opt.config.metrics_all_links;
    c.metrics_scrape = [this](bool gzip, std::function<void(ApiResponse)> reply) { metrics_scrape(gzip, std::move(reply)); };
    c.ui_picture = [this] { return ui_picture(); };
    return c;
}

}  // namespace ibf
