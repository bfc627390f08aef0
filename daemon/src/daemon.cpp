// ibfabricd's wiring: the HTTP API's acceptor, the plugin ingest, signals, what each decoded
// message does to ControllerState, and the check thread. Sessions and connections are Asio
// classes of their own (api/src/http_server.cpp, ingest/src/ingest_server.cpp); the check itself
// is the pipeline's (ibf/pipeline.h); the API calls and HA are daemon_api.cpp and daemon_ha.cpp.
// Threads (docs/threading.md): one io_context thread owns ControllerState and every socket; one
// check worker thread runs run_check() and writes history rows.
#include "ibf/daemon.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <cassert>
#include <csignal>
#include <thread>

#include "daemon_impl.h"
#include "ibf/atomic_file.h"
#include "ibf/text.h"
#include "ibf/check_queue.h"
#include "ibf/clock.h"
#include "ibf/error.h"
#include "ibf/report.h"

namespace ibf {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

HealthOptions health_options(const DaemonConfig& c) {
    HealthOptions h;
    h.stale_after_ms = int64_t{c.stale_after_s} * 1000;
    h.forget_sm_after_ms = int64_t{c.forget_sm_after_s} * 1000;
    h.flap = {static_cast<int>(c.flap_threshold), int64_t{c.flap_window_s} * 1000, int64_t{c.flap_quiet_s} * 1000};
    h.port_errors = c.port_errors;
    return h;
}

}  // namespace

Daemon::Impl::Impl(DaemonOptions o) : opt(std::move(o)) {
    const DaemonConfig& c = opt.config;
    state.configure(health_options(c));
    validate_socket_mode(c.socket_mode, c.source, 0, 0);
    topo = load_topology(c);
    state.set_waivers(topo.waivers);
    token = load_token(c);
    if (topo.plan)
        spdlog::info("topology {}: {} planned nodes, {} planned links", c.topology, topo.plan->nodes.size(),
                     topo.plan->links.size());
    else
        spdlog::warn("no topology configured: snapshots are ingested but not checked");
    if (!token) spdlog::info("no token_file configured: POST /api/v1/reload is refused (403)");
    if (const std::string w = http_exposure_warning(c); !w.empty()) spdlog::warn("{}", w);
    if (!c.history_db.empty()) {
        history = std::make_unique<HistoryStore>(
            c.history_db, HistoryRetention{c.history_retention_days, c.history_max_sweeps});
        history->prune(wall_clock_ms());
        spdlog::info("history: {} ({} rows, schema {})", c.history_db, history->count(), history->schema_version());
    }

    bind_http();
    start_ingest();

    if (!opt.port_file.empty())  // read by whoever started the daemon (a test, the lab): not secret
        write_file_atomic(opt.port_file, std::to_string(http_port) + "\n", {.mode_if_new = 0644});
    worker = std::thread([this] { worker_loop(); });
    if (c.ha.mode != ha::Mode::off) ha_start();
}

Daemon::Impl::~Impl() {
    ui_draw.stop();                  // its tasks post to io, which outlives it
    metrics_draw.stop();
    sw_calls.stop();                 // its tasks post to io, which outlives it
    local_sm_calls.stop();           // the same (a helper call under way ends within 5 s)
    if (ha_agent) ha_agent->stop();  // its hooks post to io, which outlives it
    {
        std::lock_guard lk(mu);
        worker_stop = true;
    }
    checks_cancel = true;  // a route validation under way stops within 64 LIDs (seconds at 48k LIDs)
    cv.notify_all();
    if (worker.joinable()) worker.join();
    ingest.reset();  // joins the decode thread, removes the socket file
}

// The HTTP API's listener (the sessions are HttpServer's).
void Daemon::Impl::bind_http() {
    const DaemonConfig& c = opt.config;
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(c.http_bind, ec);
    if (ec) throw InputError(c.source, 0, 0, "http bind address '" + c.http_bind + "' is not an IP address");
    tcp::endpoint ep(addr, c.http_port);
    tcp::acceptor acc(io);
    acc.open(ep.protocol());
    acc.set_option(asio::socket_base::reuse_address(true));
    acc.bind(ep, ec);
    if (ec) throw std::runtime_error("cannot bind HTTP " + endpoint_string(ep) + ": " + ec.message());
    acc.listen();
    http_port = acc.local_endpoint().port();
    spdlog::info("http: listening on {}", endpoint_string(acc.local_endpoint()));
    http = std::make_unique<HttpServer>(
        std::move(acc), c, [this](const ApiRequest& r) { return handle_api(r, api_context()); },
        [this] { return next_id++; });
}

// The plugin ingest: what its connections do to the state (every hook runs on the io thread).
void Daemon::Impl::start_ingest() {
    IngestHooks h;
    h.next_id = [this] { return next_id++; };
    h.on_open = [this](uint64_t id, const std::string& peer) { state.on_connect(id, peer, wall_clock_ms()); };
    h.on_message = [this](uint64_t id, wire::Message&& m, double decode_ms, steady::time_point arrived) {
        return dispatch(id, std::move(m), decode_ms, arrived);
    };
    h.on_error = [this](uint64_t id) { state.on_ingest_error(id); };
    h.on_refused = [this](const std::string& reason) { state.on_ingest_refused(reason); };
    h.on_close = [this](uint64_t id) {
        const auto sm = state.sm_of_conn(id);
        state.on_disconnect(id, wall_clock_ms());
        if (sm) ha_closed(*sm);
    };
    ingest = std::make_unique<IngestServer>(io, opt.config, std::move(h));
}

void Daemon::Impl::wait_signal() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (sig == SIGHUP) {
            spdlog::info("SIGHUP: reloading the configuration and the topology");
            try {
                reload();
            } catch (const std::exception&) {  // reload() logged it
            }
            wait_signal();
            return;
        }
        spdlog::info("{}: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        shutdown();
    });
}

void Daemon::Impl::shutdown() {
    if (stopping) return;
    stopping = true;
    boost::system::error_code ec;
    signals.cancel(ec);
    ingest->close();
    http->close();
    ha_timer.cancel();
    ha_gone_timer.cancel();
    sw_timer.cancel();
    io.stop();
}

bool Daemon::Impl::dispatch(ConnId id, wire::Message&& m, double decode_ms, steady::time_point arrived) {
    IBF_ASSERT_ON_THREAD(io_owner);
    const int64_t now = wall_clock_ms();
    return std::visit(
        [&](auto&& msg) -> bool {
            using T = std::decay_t<decltype(msg)>;
            if constexpr (std::is_same_v<T, wire::Hello>) {
                if (!state.on_hello(id, msg, now)) return false;
                ha_plugin(id, msg.sm);
                spdlog::info("ingest: connection {}: SM {} (LID {}, priority {}, {}) says hello: {}, plugin {}, pid {}",
                             id, guid_hex(msg.sm.port_guid), msg.sm.lid, msg.sm.priority, to_string(msg.sm.state),
                             terminal_safe(msg.osm_version), terminal_safe(msg.plugin_version), msg.pid);
                return true;
            } else if constexpr (std::is_same_v<T, wire::Heartbeat>) {
                if (!state.on_heartbeat(id, msg, now)) return false;
                ha_plugin(id, msg.sm);
                return true;
            } else if constexpr (std::is_same_v<T, wire::Counters>) {
                return state.on_counters(id, msg, now);
            } else if constexpr (std::is_same_v<T, wire::Event>) {
                return state.on_event(id, msg, now);
            } else if constexpr (std::is_same_v<T, wire::PortCounters>) {
                return state.on_port_counters(id, msg, now);
            } else {
                const auto received = arrived;
                const uint64_t seq = msg.sweep_seq;
                const size_t nodes = msg.fabric.size();
                bool proto_err = false;
                // Its port LIDs were made on the decode thread (wire::Decoder): the HA engine reads
                // the fabric through them, never walking it here (docs/threading.md).
                assert(msg.port_lids && "wire::Decoder sets Snapshot::port_lids");
                // Likewise its port states: the flap detector and the counter state apply their
                // changes instead of walking the fabric (ControllerState::on_snapshot).
                assert(msg.port_states && "wire::Decoder sets Snapshot::port_states");
                state.note_decode_ms(decode_ms);
                auto job = state.on_snapshot(id, std::move(msg), now, &proto_err);
                if (proto_err) return false;
                // The engine sees the frozen snapshot the state now holds (shared, never copied).
                if (const auto sm = state.sm_of_conn(id)) ha_snapshot(id, state.sms().at(*sm).latest);
                if (job) {
                    spdlog::debug("ingest: snapshot seq {} ({} nodes, decoded in {:.2f} ms) from connection {} "
                                  "becomes the fabric",
                                  seq, nodes, decode_ms, id);
                    submit(std::move(*job), received, decode_ms);
                } else {
                    spdlog::debug("ingest: snapshot seq {} from connection {} kept (not the master)", seq, id);
                }
                return true;
            }
        },
        std::move(m));
}

void Daemon::Impl::submit(CheckJob job, steady::time_point received, double decode_ms) {
    IBF_ASSERT_ON_THREAD(io_owner);
    const bool record = history && job.new_sweep;
    Queued w{WorkItem{std::move(job), topo.plan, topo.names, CheckOptions{opt.config.check_rate_below_capability}, record},
             received, decode_ms};
    w.item.routes = routes;
    w.item.memo = check_memo;
    w.item.cancel = &checks_cancel;
    w.item.route_threads = route_threads_for(opt.config.route_threads, std::thread::hardware_concurrency());
    const int64_t now = wall_clock_ms();  // routes over flapping or erroring links are degraded routes too
    w.item.link_health = state.flapping_findings(now);
    for (Finding& f : state.port_error_findings(now)) w.item.link_health.push_back(std::move(f));
    {
        std::lock_guard lk(mu);
        if (auto old = push_dropping_oldest(queue, std::move(w), kMaxQueued)) {
            ++jobs_dropped;
            if (auto held = queue_full_log.allow(steady_clock_ms()))
                spdlog::warn("check: queue full, dropping the check of sweep {}{}", old->item.job.snapshot->sweep_seq,
                             LogLimit::suffix(*held));
        }
    }
    cv.notify_one();
}

// The check thread: pop a job, run it (ibf/pipeline.h), hand the result to the io thread, then
// store the history row.
void Daemon::Impl::worker_loop() {
    worker_owner.bind();
    for (;;) {
        // The last job's snapshot, check and route validation state are released by now (the io
        // thread holds what it published): hand glibc's free pages back to the system, which it
        // otherwise keeps in every thread's arena. At 48k LIDs with LFTs that is 0.1-0.3 GB of
        // RSS (docs/benchmarks.md, "ibfabricd's memory at 48k LIDs").
        ::malloc_trim(0);
        Queued q;
        {
            std::unique_lock lk(mu);
            cv.wait(lk, [&] { return worker_stop || !queue.empty(); });
            if (worker_stop) return;
            q = std::move(queue.front());
            queue.pop_front();
        }
        const double wait_ms = ms_since(q.submitted);
        CheckRun run = run_check(q.item, steady_clock_ms_f);
        if (!run.analysis_error.empty() && !run.reused) spdlog::error("{}", run.analysis_error);
        if (run.reused) spdlog::debug("sweep {}: the same fabric, tables and plan as the last: check and analysis reused",
                                      q.item.job.snapshot->sweep_seq);
        if (!run.result) {
            spdlog::error("{}", run.error);
            continue;
        }
        if (run.history) run.history->row.published_unix_ms = wall_clock_ms();
        asio::post(io, [this, r = std::move(*run.result), received = q.received, wait_ms, decode_ms = q.decode_ms]() mutable {
            on_result(std::move(r), received, wait_ms, decode_ms);
        });
        // The cabling findings are on their way; the route validation of changed inputs runs now
        // (seconds at 48k LIDs) and replaces the route findings of that result when done.
        std::optional<RoutesDone> done;
        if (run.routes_pending) {
            try {
                done = finish_routes(*run.routes_pending, *q.item.routes, steady_clock_ms_f);
            } catch (const RouteCheckCancelled&) {  // stop(): the history row keeps the findings published
                spdlog::info("sweep {}: route validation stopped (ibfabricd is stopping)", run.routes_pending->snapshot->sweep_seq);
            } catch (const std::exception& e) {
                spdlog::error("sweep {}: route validation failed: {}", run.routes_pending->snapshot->sweep_seq, e.what());
            }
        }
        if (done) {
            RoutesDone& d = *done;
            if (run.history) finish_history(*run.history, d);
            asio::post(io, [this, d = std::move(d), seq = run.routes_pending->snapshot->sweep_seq]() mutable {
                const double ms = d.routes_json.value("validate_ms", 0.0);
                const std::string mode = d.routes_json.value("mode", "full");
                const long lids = d.routes_json.value("revalidated_lids", 0L);
                const size_t n = d.findings.size();
                if (state.publish_routes(d.generation, std::move(d.findings), std::move(d.findings_json),
                                         std::move(d.routes_json), wall_clock_ms()))
                    spdlog::info("sweep {}: routes validated in {:.2f} ms ({}, {} destination LIDs), {} findings now", seq,
                                 ms, mode, lids, n);
                else
                    spdlog::debug("sweep {}: route validation superseded by a newer result", seq);
            });
        }
        if (run.history) record_history(*run.history);
    }
}

void Daemon::Impl::record_history(HistoryRecord& h) {
    IBF_ASSERT_ON_THREAD(worker_owner);
    try {
        if (!history->record(h.row, h.fabric, h.findings))
            spdlog::debug("history: sweep {} of SM {} is already recorded (resent after a restart)", h.row.sweep_seq,
                          guid_hex(h.row.sm_guid));
    } catch (const std::exception& e) {  // GET /api/v1/history and ibfabric_history_writable say so too
        if (auto held = history_error_log.allow(steady_clock_ms()))
            spdlog::error("history: not recorded: {}{}", e.what(), LogLimit::suffix(*held));
    }
}

void Daemon::Impl::on_result(CheckResult r, steady::time_point received, double wait_ms, double decode_ms) {
    IBF_ASSERT_ON_THREAD(io_owner);
    const double check_ms = r.check_ms;
    const size_t n = r.findings.size();
    const uint64_t seq = r.snapshot ? r.snapshot->sweep_seq : 0;
    const Guid sm = r.snapshot ? r.snapshot->self.port_guid : 0;
    const bool checked = r.checked;
    const double analyze_ms = r.analyze_ms;
    std::string analysis_summary = "no analysis";
    if (r.analysis) {
        const LiveAnalysis& la = *r.analysis;
        analysis_summary = std::to_string(la.findings.size()) + " analysis findings";
        if (la.routing_fallback) analysis_summary += ", ROUTING FALLBACK";
        if (la.lft_switches) analysis_summary += ", LFTs of " + std::to_string(la.lft_switches) + " switches (" +
                                                  std::to_string(la.lft_imbalanced) + " imbalanced)";
    }
    std::string summary;
    if (r.findings_json.contains("summary"))
        for (auto& [k, v] : r.findings_json["summary"].items())
            summary += (summary.empty() ? "" : ", ") + v.dump() + " " + k;
    if (!state.publish(std::move(r), wall_clock_ms())) return;
    ui_picture();  // the page's picture of this check, drawn off the io thread
    const double lag = ms_since(received);
    state.note_publish_lag(lag);
    spdlog::info("sweep {} from SM {}: {}; {}; decode {:.2f} ms, check {:.2f} ms, analysis {:.2f} ms, queue wait "
                 "{:.2f} ms, snapshot received -> findings published {:.2f} ms",
                 seq, guid_hex(sm),
                 checked ? (n ? std::to_string(n) + " findings (" + summary + ")" : std::string("no findings"))
                         : std::string("not checked (no topology)"),
                 analysis_summary, decode_ms, check_ms, analyze_ms, wait_ms, lag);
}

Daemon::Daemon(DaemonOptions opt) : impl_(std::make_unique<Impl>(std::move(opt))) {}
Daemon::~Daemon() = default;

void Daemon::run() {
    Impl& d = *impl_;
    if (d.ran) throw std::logic_error("Daemon::run() called twice");
    d.ran = true;
    d.ingest->start();
    d.http->start();
    if (d.ha) d.ha_wait();
    if (d.opt.handle_signals) {
        d.signals.add(SIGTERM);
        d.signals.add(SIGINT);
        d.signals.add(SIGHUP);
        d.wait_signal();
    }
    d.io_owner.bind();
    d.io.run();
    d.io_owner.release();  // the destructor runs on the caller's thread
    d.ingest->remove_socket_file();
    spdlog::info("stopped");
}

void Daemon::stop() {
    asio::post(impl_->io, [d = impl_.get()] { d->shutdown(); });
}

uint16_t Daemon::http_port() const { return impl_->http_port; }
uint16_t Daemon::tcp_port() const { return impl_->ingest->tcp_port(); }
const std::string& Daemon::socket_path() const { return impl_->opt.config.socket_path; }

}  // namespace ibf
