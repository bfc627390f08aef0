// The daemon's HA threads: the I/O half of SM high availability. The prober thread owns this
// node's SmpPort and only sends MADs: SubnGet(SMInfo) probes to every known SM, the promotion
// SubnSet, a switchover's Sets to this node's SM. Everything slow that is not a MAD (the guid2lid
// text proportional to the fabric, its write or the root helper's call, the keepalived
// track_file, history rows) runs in order on a second thread of its own, so a promotion never
// waits behind file I/O; the fence command runs on a short-lived thread. It decides nothing: the
// io thread's HaEngine (ha/include/ibf/ha_engine.h) does, and these threads report back through
// hooks. No Asio here; the daemon's hooks post to its io_context. docs/threading.md ("ha threads").
//
//   ibf::HaAgent a(cfg, {.open_port = ..., .on_batch = post_to_io, ...});
//   a.start();
//   a.set_targets({{master_guid, 1, /*urgent=*/true, /*burst=*/true}});  // probed back to back while urgent
//   a.run_action(promote);                                 // SubnSet(SMInfo) at once (prober)
//   a.write_file("/var/cache/opensm/guid2lid", [snap] { return text_of(*snap); });  // made and
//                                                          // written on the file thread (tmp + rename)
//   a.run_with_port([](ha::SmpPort* p) { if (p) p->set_sminfo_as(lid, ha::kSmInfoDisable, SmState::Master, 0); });
//   a.stop();                                              // joins within ~mad_timeout_ms (and the
//                                                          // file job under way)
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ibf/ha_engine.h"
#include "ibf/serial_tasks.h"
#include "ibf/smp.h"
#include "ibf/thread_owner.h"

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
    bool urgent = false;      // a suspect master: probed again at once, not after poll_ms
    // Probed by a burst of overlapped probes (SmpPort::get_sminfo_burst), not one probe: the
    // master, urgent or not. Costs one MAD while it answers within kUrgentSpacingMs.
    bool burst = false;
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
    // A suspect master is probed again this soon after its last probe (the floor between rounds,
    // and between the overlapped probes of a burst), not after poll_ms.
    static constexpr int kUrgentSpacingMs = 10;

    HaAgent(ha::HaConfig cfg, HaAgentHooks hooks);
    ~HaAgent();
    HaAgent(const HaAgent&) = delete;
    HaAgent& operator=(const HaAgent&) = delete;

    void start();  // once: a stopped agent is not restarted
    void stop();   // idempotent

    // Thread-safe; all return at once.
    void set_targets(std::vector<HaTarget> t);
    void run_action(const ha::Action& a);  // fence or promote (log actions are the caller's)
    // File thread. The newest producer per path wins (one waiting per path: a newer one replaces
    // it); producers run one at a time, in the order their paths were first queued; nullopt =
    // leave the file. With ha.sm_helper the guid2lid text goes to the root helper instead.
    using FileText = std::function<std::optional<std::string>()>;
    void write_file(std::string path, FileText make);
    // Any other slow work (a history row): run on the file thread, in order with the files.
    void run_task(std::function<void()> task);
    // Work that needs the MAD port (a switchover's SubnSet(SMInfo) to this node's SM): run on the
    // prober thread with the open port, or nullptr when none could be opened.
    void run_with_port(std::function<void(ha::SmpPort*)> task);

private:
    void run();
    void probe_round(ha::SmpPort& port, const std::vector<HaTarget>& targets);
    void do_jobs(ha::SmpPort* port);
    void fence(std::vector<std::string> argv);
    void write_pending(const std::string& path);  // file thread

    ha::HaConfig cfg_;
    HaAgentHooks hooks_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::vector<HaTarget> targets_;
    std::deque<ha::Action> actions_;
    std::deque<std::function<void(ha::SmpPort*)>> port_tasks_;
    std::map<std::string, FileText> files_;  // the producer waiting per path (under mu_)
    std::thread thread_;
    // Checked in debug and sanitizer builds (ibf/thread_owner.h): MADs only on the prober, files
    // only on the file thread.
    ThreadOwner prober_owner_{"ha prober"};
    ThreadOwner file_owner_{"ha file"};
    // The fence commands, one at a time in order, never waited for by the prober (a fence runs up
    // to fence_timeout_ms; a second one asked meanwhile queues behind it).
    SerialTasks fences_;
    SerialTasks slow_;  // the file thread; declared last: stopped (joined) first
};

// Runs `argv` (never a shell) with a timeout; true when it exited 0. `detail`: exit status or
// reason, and the first line of its output.
bool run_fence_command(const std::vector<std::string>& argv, int timeout_ms, std::string& detail);


}  // namespace ibf
