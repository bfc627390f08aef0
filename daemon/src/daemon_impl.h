// Daemon::Impl, shared by daemon.cpp (construction, signals, ingest dispatch, the check thread),
// daemon_api.cpp (the API's context, reload, accept) and daemon_ha.cpp (SM high availability).
// Private to ibf_daemon. Who owns what: docs/threading.md.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange
#include <boost/asio.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ibf/api.h"
#include "ibf/controller_state.h"
#include "ibf/daemon.h"
#include "ibf/guid2lid.h"
#include "ibf/ha_agent.h"
#include "ibf/history.h"
#include "ibf/http_server.h"
#include "ibf/ingest_server.h"
#include "ibf/log_limit.h"
#include "ibf/fabric_role.h"
#include "ibf/ha_switchover.h"
#include "ibf/pipeline.h"
#include "ibf/thread_owner.h"
#include "ibf/serial_tasks.h"

namespace ibf {

struct Daemon::Impl {
    using steady = std::chrono::steady_clock;
    explicit Impl(DaemonOptions o);
    ~Impl();

    // --- owned by the io thread (everything but the worker section) ---
    DaemonOptions opt;
    boost::asio::io_context io{1};  // declared first: destroyed last (sockets and timers belong to it)
    boost::asio::signal_set signals{io};
    uint16_t http_port = 0;  // as bound

    ControllerState state;
    Topology topo;
    std::optional<std::string> token;
    std::unique_ptr<HistoryStore> history;  // thread-safe; written by the worker
    // SM high availability (docs/ha.md): the engine is the io thread's; the agent has its own thread.
    std::optional<ha::HaEngine> ha;
    std::unique_ptr<HaAgent> ha_agent;
    boost::asio::steady_timer ha_timer{io};
    std::vector<HaTarget> ha_targets;        // as last given to the agent
    std::string ha_track;                    // track_file content last written
    uint64_t ha_persisted = 0;               // engine records already handed to the history database
    // What the agent last wrote into the local guid2lid (touched only by its producers, which run
    // one at a time on the agent thread).
    std::shared_ptr<ha::Guid2Lid> guid2lid_written = std::make_shared<ha::Guid2Lid>();
    // GET /metrics (docs/threading.md "Metrics"): the last text, shared by the scrapes of a second
    // while the state is unchanged; a scrape that finds none for the current state waits (its
    // reply queued, the io thread free) for a render on `metrics_draw` begun after it arrived.
    struct MetricsWaiter {
        uint64_t needs = 0;  // the first render that answers it (MetricsRenders::started numbering)
        bool gzip = false;
        std::function<void(ApiResponse)> reply;
    };
    struct MetricsRenders {
        MetricsCache cache;
        uint64_t started = 0, finished = 0;  // renders begun / posted back; busy while they differ
        uint64_t busy_stamp = 0;             // the stamp and time of the render under way
        int64_t busy_made_ms = 0;
        std::vector<MetricsWaiter> waiting;
    };
    MetricsRenders metrics;
    SerialTasks metrics_draw;
    void metrics_scrape(bool gzip, std::function<void(ApiResponse)> reply);
    void metrics_start_render();
    // The page's picture (/ui, /ui/fabric.svg): drawn on `ui_draw` (its layout grows with the fabric),
    // after each check, the last one served meanwhile (daemon_api.cpp ui_picture()).
    struct UiPicture {
        uint64_t key = 0, drawing = 0;  // the state it shows / being drawn (0: none): checks, sweeps, counters
        std::shared_ptr<const std::string> svg;
    };
    UiPicture ui_pic;
    SerialTasks ui_draw;
    std::shared_ptr<const std::string> ui_picture();
    uint64_t next_id = 1;                    // ingest connections and HTTP sessions
    std::unique_ptr<HttpServer> http;
    std::unique_ptr<IngestServer> ingest;    // owns the decode thread
    LogLimit queue_full_log;
    LogLimit history_error_log;  // worker thread: a full disk fails every sweep's write
    bool stopping = false;
    bool ran = false;
    // Thread ownership (docs/threading.md), checked in debug and sanitizer builds: bound by run()
    // and worker_loop().
    ThreadOwner io_owner{"io"};
    ThreadOwner worker_owner{"check"};

    // --- the check worker: a queue of jobs under `mu`, one thread ---
    struct Queued {
        WorkItem item;
        steady::time_point received;
        double decode_ms = 0;
        steady::time_point submitted = steady::now();
    };
    static constexpr size_t kMaxQueued = 8;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Queued> queue;
    bool worker_stop = false;
    uint64_t jobs_dropped = 0;
    // The route validation kept between sweeps (pipeline/live_routes.h): the worker's alone (the
    // io thread only copies the pointer into each WorkItem).
    std::shared_ptr<LiveRouteCheck> routes = std::make_shared<LiveRouteCheck>();
    // The last sweep's check and analysis, reused by an unchanged sweep (pipeline.h). Like
    // `routes`, made here and touched only by the check thread (through each WorkItem).
    std::shared_ptr<CheckMemo> check_memo = std::make_shared<CheckMemo>();
    std::atomic<bool> checks_cancel{false};  // set by the destructor before it joins the check thread
    std::thread worker;

    // io-thread functions (daemon.cpp)
    void bind_http();
    void start_ingest();
    void wait_signal();
    void shutdown();
    // `arrived`: when the chunk that completed the message was read from the socket.
    bool dispatch(ConnId id, wire::Message&& m, double decode_ms, steady::time_point arrived);
    void submit(CheckJob job, steady::time_point received, double decode_ms);
    void on_result(CheckResult r, steady::time_point received, double wait_ms, double decode_ms);
    // daemon_api.cpp
    nlohmann::json reload();
    std::vector<std::string> apply_config(DaemonConfig next);
    nlohmann::json accept(const nlohmann::json& body);  // POST /api/v1/accept (docs/api.md)
    ApiContext api_context();
    // HA (io thread, daemon_ha.cpp)
    void ha_start();
    void ha_wait();
    void ha_step();
    void ha_set_priority(int prio, bool running);
    void ha_apply(HaBatch b);
    void ha_plugin(ConnId id, const SmInfo& sm);
    void ha_snapshot(ConnId id, const std::shared_ptr<const Snapshot>& snap);
    void ha_closed(Guid sm);
    // The process-gone witness (docs/ha.md "Failure model"): SMs whose opensm runs on this host
    // (its plugin came over the Unix socket or loopback, its Hello's pid seen alive), watched after
    // their last connection closed until the pid is gone, they reconnect, or `ha_gone_until` passes.
    struct GoneWatch {
        uint32_t pid = 0;
        int64_t until_ms = 0;
    };
    std::map<Guid, uint32_t> ha_local_pids;  // SM -> opensm pid seen alive on this host
    std::map<Guid, GoneWatch> ha_gone_watch;
    boost::asio::steady_timer ha_gone_timer{io};
    void ha_watch_gone();
    // Across SM nodes the standby's agent cannot see the master's pid: the agent that does tells
    // every ha.agents peer (POST /api/v1/sm/process-gone on sw_calls), and a peer's word is taken
    // as the same witness (relayed_process_gone, io thread).
    void relay_process_gone(Guid sm, uint32_t pid);
    nlohmann::json relayed_process_gone(const nlohmann::json& body);
    // This node's sm_priority (POST /api/v1/sm/priority, a switchover's local step, the engine's
    // step-aside): checked here (InputError at once), carried out on `local_sm_calls` (opensm.conf
    // and SIGHUP, or the root helper, up to 5 s), `done` called back on the io thread.
    void set_local_priority(const nlohmann::json& body, SmCallDone done);
    std::function<nlohmann::json()> priority_job(int prio, int pid, bool next_start);
    void run_priority_job(std::function<nlohmann::json()> job, SmCallDone done);
    SerialTasks local_sm_calls;              // the priority jobs, in order (never the io thread)
    nlohmann::json set_local_sm_state(const nlohmann::json& body);
    int64_t last_disable_ms = 0;             // last DISABLE asked of this node's SM (the stranded rule)
    int64_t local_not_active_ms = 0;         // this node's SM first seen NOT_ACTIVE (0 = it is not)
    int64_t unstrand_sent_ms = 0;
    std::optional<ha::RoleHold> ha_role;     // what /metrics and GET /api/v1/sm show, stepped with the engine
    void ha_unstrand(int64_t now);

    // A graceful switchover run by this daemon (daemon_switchover.cpp, docs/ha.md "Graceful
    // switchover"): the pure SwitchoverRun stepped on the io thread every 20 ms; its steps for
    // this node's SM run here, those for other SMs go to their agents over HTTP on `sw_calls`.
    struct SwitchoverJob {
        uint64_t id = 0;
        Guid master = 0, target = 0;
        std::optional<ha::SwitchoverRun> run;  // engaged once accepted
        bool resolving = true;                 // the agents are being looked up: nothing sent yet
        std::string refused;                   // refused after acceptance (nothing was changed)
        std::map<Guid, std::string> agent_of;  // SM -> its agent's URL ("" = this daemon)
        int64_t started_ms = 0, finished_ms = 0, step_started_ms = 0;
        size_t step_seen = 0;
        nlohmann::json steps = nlohmann::json::array();  // steps in effect: {step, ms}
        std::deque<nlohmann::json> log;        // {at, text}, the newest kLogLines
        static constexpr size_t kLogLines = 64;
    };
    std::optional<SwitchoverJob> sw;
    uint64_t sw_next_id = 1;
    boost::asio::steady_timer sw_timer{io};
    SerialTasks sw_calls;                    // blocking HTTP to the other agents (never the io thread)
    nlohmann::json start_switchover(const nlohmann::json& body);  // POST /api/v1/sm/switchover
    nlohmann::json abort_switchover();                            // POST /api/v1/sm/switchover/abort
    nlohmann::json switchover_json() const;                       // GET /api/v1/sm: ha.switchover
    void sw_resolved(uint64_t id, std::map<Guid, std::string> agent_of, std::string error);
    void sw_tick();
    void sw_send(const ha::SwitchoverStep& s);
    void sw_log(std::string line);

    // worker thread (daemon.cpp)
    void worker_loop();
    void record_history(HistoryRecord& h);
};

}  // namespace ibf
