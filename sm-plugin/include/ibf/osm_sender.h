// The plugin's sender: a bounded hand-off from OpenSM's threads to one sender thread per
// endpoint, each owning its socket to one ibfabricd. No OpenSM dependency, so it is tested on its
// own. docs/plugin.md ("Threading model") explains who owns what.
//
//   ibf::osm::Fanout f(opts, {.hello = ..., .heartbeat = ..., .log = ...});  // one Sender per endpoint
//   f.start();                                   // spawns one sender thread per endpoint
//   f.submit_snapshot(std::move(snap), copy_us); // from OpenSM's sweeper: O(endpoints), never waits on I/O
//   f.submit_event(ev);                          // from any OpenSM thread: O(endpoints), drops when full
//   f.submit_counters(ce);                       // perfmgr PORT_ERRORS / PORT_DATA_COUNTERS: O(endpoints), drops when full
//   f.stop();                                    // joins all within ~0.2 s even if peers hang
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ibf/osm_plugin_options.h"
#include "ibf/wire.h"

namespace ibf::osm {

struct SenderHooks {
    std::function<wire::Hello()> hello;          // called by the sender thread at each connect
    // When this number changes (opensm.conf re-read on SIGHUP changed what the Hello says), the
    // next heartbeat slot sends a fresh Hello on the open connection first. May be empty.
    std::function<uint64_t()> hello_generation;
    std::function<wire::Heartbeat()> heartbeat;  // called by the sender thread every heartbeat_ms
    std::function<void(LogLevel, const std::string&)> log;  // any thread; may be empty
};

// One perfmgr event as report() copies it (OpenSM's osm_epi_pe_event_t / osm_epi_dc_event_t): the
// perfmgr's deltas since its previous reading of that port. `data` false: d[0..12] are the 13 error
// counters in wire::PortCounter order; true: d[0..3] are xmit_data, rcv_data, xmit_pkts, rcv_pkts.
struct CounterEvent {
    uint64_t node_guid = 0;  // host byte order
    uint8_t port = 0;
    bool data = false;
    std::array<uint64_t, wire::kPortErrorCounterCount> d{};
};

// One endpoint (opts.endpoints[endpoint]): its own thread, snapshot slot, event queue, counters.
// On a TCP endpoint with opts.key set, every Hello carries "au" (wire/include/ibf/wire_auth.h).
class Sender {
public:
    Sender(Options opts, SenderHooks hooks, size_t endpoint = 0);
    ~Sender();
    Sender(const Sender&) = delete;
    Sender& operator=(const Sender&) = delete;

    void start();
    void request_stop();  // sets the stop flag and returns; stop() then joins
    void stop();  // idempotent; bounded wait (poll slices of 100 ms)
    const Endpoint& endpoint() const { return ep_; }

    // Thread-safe, never blocks on I/O: holds an internal mutex for a pointer swap. The newest
    // snapshot supersedes an unsent older one. `copy_us`: time spent under OpenSM's lock.
    void submit_snapshot(std::shared_ptr<const Snapshot> s, uint64_t copy_us);
    // Thread-safe, O(1): queued up to Options::queue events, then counted as dropped.
    void submit_event(wire::Event e);
    // Thread-safe, O(1): queued up to Options::counter_queue events, then counted as dropped.
    // The sender thread sums them per port and sends the ports that changed (wire PortCounters)
    // with each heartbeat, or sooner when a batch is full.
    void submit_counters(const CounterEvent& e);

    wire::Counters counters() const;
    bool connected() const;

private:
    using Clock = std::chrono::steady_clock;
    void run();
    void run_connections();
    void serve(int fd);
    int connect_once(std::string& err);
    bool send_all(int fd, const std::string& bytes);
    bool send_msg(int fd, const wire::Message& m);
    enum class SnapSend : uint8_t { sent, not_encodable, failed };
    // v2 parts (or one v1 frame with opts_.wire == 1); `delivered`: this connection's LFT hashes.
    SnapSend send_snapshot(int fd, const Snapshot& s, wire::LftHashes& delivered);
    bool send_bytes(int fd, const std::string& bytes);
    void log(LogLevel l, const std::string& msg) const;
    wire::Hello make_hello() const;
    void fold_counters();                        // sender thread: pc_in_ -> pc_sums_
    bool send_port_counters(int fd, bool all);   // sender thread: the dirty ports (all: every port)

    Options opts_;
    SenderHooks hooks_;
    Endpoint ep_;
    bool flapping_ = false;  // sender thread only: the last connection was closed at once (quiet logs)

    mutable std::mutex mu_;  // guards everything below; never held across I/O or encoding
    std::condition_variable cv_;
    bool stop_ = false;
    bool connected_ = false;
    std::shared_ptr<const Snapshot> latest_;
    uint64_t latest_gen_ = 0;   // +1 per submitted snapshot
    uint64_t picked_gen_ = 0;   // last generation the sender thread took (for "superseded")
    Clock::time_point latest_at_{};
    std::deque<wire::Event> events_;
    std::vector<CounterEvent> pc_in_;  // perfmgr events not yet summed (<= opts_.counter_queue)
    wire::Counters c_;

    // Sender thread only: per port, the sums of the perfmgr's deltas since the plugin was loaded.
    struct PortSums {
        wire::PortCounterRow row;
        bool dirty = false;
    };
    using PortKey = std::pair<uint64_t, uint8_t>;  // node GUID, port
    struct PortKeyHash {
        size_t operator()(const PortKey& k) const { return std::hash<uint64_t>()(k.first) * 31 + k.second; }
    };
    std::unordered_map<PortKey, PortSums, PortKeyHash> pc_sums_;
    std::vector<PortKey> pc_dirty_;
    std::vector<CounterEvent> pc_spare_;  // swapped with pc_in_: its capacity is reused, so report() does not allocate

    std::thread thread_;
};

// Every endpoint of the options, each with its own Sender (thread, slot, queue, counters), so a
// dead or slow peer never delays another endpoint. Submits hand the same immutable snapshot to each.
class Fanout {
public:
    Fanout(const Options& opts, const SenderHooks& hooks);
    void start();
    void stop();  // stops all endpoints at once, then joins each
    void submit_snapshot(std::shared_ptr<const Snapshot> s, uint64_t copy_us);
    void submit_event(const wire::Event& e);
    void submit_counters(const CounterEvent& e);
    size_t size() const { return senders_.size(); }
    Sender& at(size_t i) { return *senders_.at(i); }
    wire::Counters total() const;  // summed over the endpoints (snapshots_taken, last_*, queue_depth: max)

private:
    std::vector<std::unique_ptr<Sender>> senders_;
};

}  // namespace ibf::osm
