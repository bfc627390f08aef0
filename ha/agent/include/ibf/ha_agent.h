// The daemon's HA thread: the I/O half of SM high availability. It owns this node's SmpPort
// (SubnGet(SMInfo) probes to every known SM, the promotion SubnSet), runs the fence command, and
// writes the guid2lid and keepalived track files. It decides nothing: the io thread's HaEngine
// (ha/include/ibf/ha_engine.h) does, and this thread reports back through hooks. No Asio here;
// the daemon's hooks post to its io_context. docs/threading.md ("ha thread").
//
//   ibf::HaAgent a(cfg, {.open_port = ..., .on_batch = post_to_io, ...});
//   a.start();
//   a.set_targets({{master_guid, 1, /*urgent=*/true}});   // probed back to back while urgent
//   a.run_action(promote);                                 // SubnSet(SMInfo) at once
//   a.write_file("/var/cache/opensm/guid2lid", [snap] { return text_of(*snap); });  // made and
//                                                          // written off the io thread (tmp + rename)
//   a.run_with_port([](ha::SmpPort* p) { if (p) p->set_sminfo_as(lid, ha::kSmInfoDisable, SmState::Master, 0); });
//   a.stop();                                              // joins within ~mad_timeout_ms
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ibf/ha_engine.h"
#include "ibf/smp.h"

namespace ibf {

struct HaProbe {
    Guid guid = 0;
    uint16_t lid = 0;
    ha::SmInfoReply reply;
    int64_t at_ms = 0;        // when the answer (or the timeout) came
};

struct HaBatch {
    std::vector<HaProbe> probes;
    std::optional<ha::LocalPort> local;  // the local port, read each round (nullopt: no port open)
};

struct HaTarget {
    Guid guid = 0;
    uint16_t lid = 0;
    bool urgent = false;      // a suspect master: probe again at once, not after poll_ms
};

struct HaAgentHooks {
    std::function<std::unique_ptr<ha::SmpPort>()> open_port;  // may throw (logged, retried every 5 s)
    std::function<void(HaBatch)> on_batch;                     // agent thread; post to io
    std::function<void(bool ok, std::string detail)> on_fence_done;
    std::function<void(ha::SmInfoReply)> on_promote_sent;
    std::function<void(const std::string&)> log_warn;          // any thread
    std::function<int64_t()> now_ms;                           // the wall clock (Unix ms)
};

class HaAgent {
public:
    HaAgent(ha::HaConfig cfg, HaAgentHooks hooks);
    ~HaAgent();
    HaAgent(const HaAgent&) = delete;
    HaAgent& operator=(const HaAgent&) = delete;

    void start();
    void stop();  // idempotent

    // Thread-safe; all return at once.
    void set_targets(std::vector<HaTarget> t);
    void run_action(const ha::Action& a);  // fence or promote (log actions are the caller's)
    // The newest producer per path wins; it runs on the agent thread; nullopt = leave the file.
    using FileText = std::function<std::optional<std::string>()>;
    void write_file(std::string path, FileText make);
    // Any other slow work (a history row): run on the agent thread, in order.
    void run_task(std::function<void()> task);
    // Work that needs the MAD port (a switchover's SubnSet(SMInfo) to this node's SM): run on the
    // agent thread with the open port, or nullptr when none could be opened.
    void run_with_port(std::function<void(ha::SmpPort*)> task);

private:
    void run();
    void probe_round(ha::SmpPort& port, const std::vector<HaTarget>& targets);
    void do_jobs(ha::SmpPort* port);
    void fence(std::vector<std::string> argv);

    ha::HaConfig cfg_;
    HaAgentHooks hooks_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::vector<HaTarget> targets_;
    std::deque<ha::Action> actions_;
    std::deque<std::pair<std::string, FileText>> files_;
    std::deque<std::function<void()>> tasks_;
    std::deque<std::function<void(ha::SmpPort*)>> port_tasks_;
    std::thread thread_, fence_thread_;
};

// Runs `argv` (never a shell) with a timeout; true when it exited 0. `detail`: exit status or
// reason, and the first line of its output.
bool run_fence_command(const std::vector<std::string>& argv, int timeout_ms, std::string& detail);


}  // namespace ibf
