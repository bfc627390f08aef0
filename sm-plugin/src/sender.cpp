#include "ibf/osm_sender.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "ibf/wire_auth.h"

namespace ibf::osm {

namespace {
constexpr int kSliceMs = 100;  // longest the sender thread waits without checking stop_
constexpr int kStableConnectionMs = 2000;  // a connection that lived this long resets the backoff
}

Sender::Sender(Options opts, SenderHooks hooks, size_t endpoint)
    : opts_(std::move(opts)), hooks_(std::move(hooks)), ep_(opts_.endpoints.at(endpoint)) {}

Sender::~Sender() { stop(); }

void Sender::request_stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
}

void Sender::start() {
    std::lock_guard lk(mu_);
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this] { run(); });
}

void Sender::stop() {
    request_stop();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Sender::submit_snapshot(std::shared_ptr<const Snapshot> s, uint64_t copy_us) {
    std::shared_ptr<const Snapshot> old;  // freed after the mutex is released
    {
        std::lock_guard lk(mu_);
        if (latest_ && picked_gen_ != latest_gen_) ++c_.snapshots_superseded;
        old = std::move(latest_);
        latest_ = std::move(s);
        ++latest_gen_;
        latest_at_ = Clock::now();
        ++c_.snapshots_taken;
        c_.last_copy_us = copy_us;
    }
    cv_.notify_one();
}

void Sender::submit_event(wire::Event e) {
    {
        std::lock_guard lk(mu_);
        if (events_.size() >= opts_.queue) {
            ++c_.events_dropped;
            return;
        }
        events_.push_back(std::move(e));
    }
    cv_.notify_one();
}

void Sender::submit_counters(const CounterEvent& e) {
    bool wake = false;
    {
        std::lock_guard lk(mu_);
        ++c_.port_counter_events;
        if (pc_in_.size() >= opts_.counter_queue) {
            ++c_.port_counter_events_dropped;
            return;
        }
        pc_in_.push_back(e);
        wake = pc_in_.size() == std::max<size_t>(1, opts_.counter_queue / 2);  // no wake-up per event: the heartbeat collects them
    }
    if (wake) cv_.notify_one();
}

// Sums the queued perfmgr deltas per port (sender thread; the swap is the only work under mu_).
void Sender::fold_counters() {
    std::vector<CounterEvent>& in = pc_spare_;
    in.clear();
    {
        std::lock_guard lk(mu_);
        if (pc_in_.empty()) return;
        in.swap(pc_in_);  // pc_in_ gets the spare's capacity back
    }
    for (const CounterEvent& e : in) {
        auto [it, fresh] = pc_sums_.try_emplace(PortKey{e.node_guid, e.port});
        PortSums& s = it->second;
        if (fresh) {
            s.row.node_guid = e.node_guid;
            s.row.port = e.port;
        }
        if (e.data)
            for (size_t i = 0; i < 4; ++i) s.row.v[wire::kPortErrorCounterCount + i] += e.d[i];
        else
            for (size_t i = 0; i < wire::kPortErrorCounterCount; ++i) s.row.v[i] += e.d[i];
        if (!s.dirty) {
            s.dirty = true;
            pc_dirty_.push_back(it->first);
        }
    }
}

// Sends the ports whose sums changed (all: every port, after a reconnect) in batches of
// kMaxPortCounterRows. Returns false when a write failed.
bool Sender::send_port_counters(int fd, bool all) {
    if (all) {
        pc_dirty_.clear();
        for (auto& [k, s] : pc_sums_) {
            s.dirty = true;
            pc_dirty_.push_back(k);
        }
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    size_t i = 0;
    while (i < pc_dirty_.size()) {
        wire::PortCounters batch;
        batch.unix_ms = now;
        for (; i < pc_dirty_.size() && batch.ports.size() < wire::kMaxPortCounterRows; ++i) {
            PortSums& s = pc_sums_.at(pc_dirty_[i]);
            s.dirty = false;
            batch.ports.push_back(s.row);
        }
        if (!send_msg(fd, batch)) {
            for (size_t j = 0; j < i; ++j) pc_sums_.at(pc_dirty_[j]).dirty = true;  // resent after reconnect anyway
            return false;
        }
    }
    pc_dirty_.clear();
    return true;
}

wire::Counters Sender::counters() const {
    std::lock_guard lk(mu_);
    wire::Counters c = c_;
    c.queue_depth = events_.size() + (latest_ && picked_gen_ != latest_gen_ ? 1 : 0);
    return c;
}

bool Sender::connected() const {
    std::lock_guard lk(mu_);
    return connected_;
}

void Sender::log(LogLevel l, const std::string& msg) const {
    if (l <= opts_.log && hooks_.log) hooks_.log(l, msg);
}

// One non-blocking connect attempt, bounded by send_timeout_ms and by stop_.
int Sender::connect_once(std::string& err) {
    int fd = -1;
    int rc;
    if (ep_.tcp()) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(ep_.tcp_port);
        std::string host = ep_.tcp_host == "localhost" ? "127.0.0.1" : ep_.tcp_host;
        if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
            err = "not an IPv4 address: " + ep_.tcp_host;
            return -1;
        }
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) { err = std::strerror(errno); return -1; }
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, ep_.socket_path.c_str(), sizeof a.sun_path - 1);
        fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) { err = std::strerror(errno); return -1; }
        rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc == 0) return fd;
    if (errno != EINPROGRESS && errno != EAGAIN) {
        err = std::strerror(errno);
        ::close(fd);
        return -1;
    }
    auto deadline = Clock::now() + std::chrono::milliseconds(opts_.send_timeout_ms);
    while (Clock::now() < deadline) {
        {
            std::lock_guard lk(mu_);
            if (stop_) break;
        }
        pollfd p{fd, POLLOUT, 0};
        int n = ::poll(&p, 1, kSliceMs);
        if (n > 0) {
            int so = 0;
            socklen_t len = sizeof so;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len);
            if (so == 0) return fd;
            err = std::strerror(so);
            ::close(fd);
            return -1;
        }
    }
    err = "connect timed out";
    ::close(fd);
    return -1;
}

// Writes all bytes. Never blocks longer than a slice without checking stop_; gives up when the
// peer accepted nothing for send_timeout_ms (alive but not reading) or on any socket error.
bool Sender::send_all(int fd, const std::string& bytes) {
    size_t off = 0;
    auto last_progress = Clock::now();
    while (off < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            off += static_cast<size_t>(n);
            last_progress = Clock::now();
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            log(flapping_ ? LogLevel::debug : LogLevel::warn, std::string("send to ") + ep_.name() + " failed: " + std::strerror(errno));
            return false;
        }
        {
            std::lock_guard lk(mu_);
            if (stop_) return false;
        }
        if (Clock::now() - last_progress > std::chrono::milliseconds(opts_.send_timeout_ms)) {
            log(LogLevel::warn, "controller at " + ep_.name() + " accepted nothing for " +
                                    std::to_string(opts_.send_timeout_ms) + " ms; dropping the connection");
            return false;
        }
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, kSliceMs);
    }
    return true;
}

bool Sender::send_msg(int fd, const wire::Message& m) {
    std::string bytes;
    try {
        bytes = wire::encode(m);
    } catch (const std::exception& e) {
        {
            std::lock_guard lk(mu_);
            ++c_.send_errors;  // not sent: counted like any other failure (encode_errors counts snapshots)
        }
        log(LogLevel::error, std::string("cannot encode ") + std::string(wire::to_string(wire::type_of(m))) + ": " + e.what() +
                                 "; not sent (counted in send_errors)");
        return true;  // skip that message, keep the connection
    }
    return send_bytes(fd, bytes);
}

// Encoded here, on the sender thread, never under OpenSM's lock. A snapshot the encoder refuses
// (checked before any byte is written) is counted in encode_errors and send_errors, logged, and
// never counted as sent; the connection stays up for the next one.
Sender::SnapSend Sender::send_snapshot(int fd, const Snapshot& s, wire::LftHashes& delivered) {
    std::optional<wire::SnapshotWriter> w;
    std::string bytes;
    try {
        if (opts_.wire == 1) bytes = wire::encode(s);
        else w.emplace(s, delivered);
    } catch (const std::exception& e) {
        {
            std::lock_guard lk(mu_);
            ++c_.encode_errors;
            ++c_.send_errors;
        }
        log(LogLevel::error, "cannot encode snapshot " + std::to_string(s.sweep_seq) + " (" + std::to_string(s.fabric.size()) +
                                 " nodes): " + e.what() + "; not sent (counted in send_errors and encode_errors)");
        return SnapSend::not_encodable;
    }
    if (!w) return send_bytes(fd, bytes) ? SnapSend::sent : SnapSend::failed;
    while (w->next(bytes))  // one part of at most wire::kMaxPartPayload at a time
        if (!send_bytes(fd, bytes)) return SnapSend::failed;
    delivered = w->take_delivered();
    return SnapSend::sent;
}

bool Sender::send_bytes(int fd, const std::string& bytes) {
    if (send_all(fd, bytes)) return true;
    std::lock_guard lk(mu_);
    if (!stop_) ++c_.send_errors;  // a frame abandoned at shutdown is not an error
    return false;
}

// The Hello for a new connection; signed on TCP endpoints when a key is configured (a fresh nonce
// and the wall clock per connection: the daemon refuses replays and stale times).
wire::Hello Sender::make_hello() const {
    wire::Hello h = hooks_.hello ? hooks_.hello() : wire::Hello{};
    h.wire_version = static_cast<uint16_t>(opts_.wire);  // "wv": how the snapshots on this connection come
    if (!ep_.tcp() || opts_.key.empty()) return h;
    unsigned char rnd[16];
    size_t got = 0;
    while (got < sizeof rnd) {
        ssize_t n = ::getrandom(rnd + got, sizeof rnd - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
        got += static_cast<size_t>(n);
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    wire::sign_hello(h, opts_.key, now, wire::nonce_hex_of(rnd));
    return h;
}

// The thread body. Nothing may escape it: an exception leaving a std::thread calls std::terminate,
// which would take OpenSM down. On an unexpected error (e.g. bad_alloc) log, wait, start over.
void Sender::run() {
    for (;;) {
        try {
            run_connections();
            return;
        } catch (const std::exception& e) {
            log(LogLevel::error, std::string("sender thread: ") + e.what() + "; restarting in 1 s");
        } catch (...) {
            log(LogLevel::error, "sender thread: unknown error; restarting in 1 s");
        }
        std::unique_lock lk(mu_);
        connected_ = false;
        if (cv_.wait_for(lk, std::chrono::seconds(1), [this] { return stop_; })) return;
    }
}

// One connection: Hello, then the kept snapshot, events, newer snapshots and heartbeats, until a
// write fails or stop() is called.
void Sender::serve(int fd) {
    const auto hb_period = std::chrono::milliseconds(opts_.heartbeat_ms);
    uint64_t sent_gen = 0;  // snapshot generation sent on this connection
    auto hello_gen = [this] { return hooks_.hello_generation ? hooks_.hello_generation() : 0; };
    uint64_t sent_hello = hello_gen();
    wire::LftHashes delivered;  // the LFTs this connection's daemon holds: none yet (full resync)
    bool ok = send_msg(fd, make_hello());
    auto next_hb = Clock::now();
    bool resync = true;  // right after Hello: the kept snapshot goes before any queued event
    while (ok) {
        std::deque<wire::Event> evs;
        std::shared_ptr<const Snapshot> snap;
        uint64_t gen = 0;
        Clock::time_point at{};
        {
            std::unique_lock lk(mu_);
            cv_.wait_until(lk, next_hb, [&] {
                return stop_ || !events_.empty() || (latest_ && latest_gen_ != sent_gen) ||
                       (!pc_in_.empty() && pc_in_.size() >= opts_.counter_queue / 2);
            });
            if (stop_) break;
            evs.swap(events_);
            if (latest_ && latest_gen_ != sent_gen) {
                snap = latest_;
                gen = latest_gen_;
                at = latest_at_;
                picked_gen_ = gen;
            }
        }
        auto send_snap = [&] {
            if (!ok || !snap) return;
            const SnapSend r = send_snapshot(fd, *snap, delivered);
            ok = r != SnapSend::failed;
            if (r == SnapSend::not_encodable) sent_gen = gen;  // not retried: the next sweep's may encode
            if (r == SnapSend::sent) {
                sent_gen = gen;
                std::lock_guard lk(mu_);
                ++c_.snapshots_sent;
                c_.last_send_lag_ms = static_cast<uint64_t>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - at).count());
            }
        };
        // Steady state: events first (a trap precedes the sweep whose snapshot follows it).
        if (resync) send_snap();
        for (auto& e : evs) {
            if (!ok) break;
            ok = send_msg(fd, std::move(e));
        }
        if (!resync) send_snap();
        const bool hb_due = Clock::now() >= next_hb;
        fold_counters();
        if (ok && (resync || hb_due || pc_dirty_.size() >= wire::kMaxPortCounterRows)) ok = send_port_counters(fd, resync);
        resync = false;
        if (ok && hb_due) {
            if (const uint64_t g = hello_gen(); g != sent_hello) {  // the daemon takes a second Hello
                sent_hello = g;
                ok = send_msg(fd, make_hello());
            }
            if (ok) ok = send_msg(fd, hooks_.heartbeat ? hooks_.heartbeat() : wire::Heartbeat{});
            if (ok) ok = send_msg(fd, counters());
            next_hb = Clock::now() + hb_period;
        }
    }
}

void Sender::run_connections() {
    auto backoff = std::chrono::milliseconds(50);
    const auto backoff_max = std::chrono::milliseconds(opts_.backoff_max_ms);
    bool ever_connected = false;
    bool failure_logged = false;
    for (;;) {
        {
            std::lock_guard lk(mu_);
            if (stop_) return;
        }
        std::string err;
        int fd = connect_once(err);
        if (fd < 0) {
            if (!failure_logged) {
                log(LogLevel::warn, "cannot connect to " + ep_.name() + ": " + err +
                                        " (retrying with backoff up to " + std::to_string(opts_.backoff_max_ms) + " ms)");
                failure_logged = true;
            } else {
                log(LogLevel::debug, "cannot connect to " + ep_.name() + ": " + err);
            }
            {
                std::unique_lock lk(mu_);
                cv_.wait_for(lk, backoff, [this] { return stop_; });
            }
            fold_counters();  // keep summing while no daemon listens: the queue stays short
            backoff = std::min(backoff * 2, backoff_max);
            continue;
        }
        struct FdCloser {
            int fd;
            ~FdCloser() { ::close(fd); }
        } closer{fd};  // closed on every way out, exceptions included
        failure_logged = false;
        const auto connected_at = Clock::now();
        {
            std::lock_guard lk(mu_);
            connected_ = true;
            if (ever_connected) ++c_.reconnects;
        }
        ever_connected = true;
        log(flapping_ ? LogLevel::debug : LogLevel::info, "connected to " + ep_.name());
        serve(fd);
        {
            std::lock_guard lk(mu_);
            connected_ = false;
            if (stop_) return;
        }
        // A connection the daemon closes at once (e.g. it refuses our Hello: wrong key) must not
        // become a reconnect loop: back off as for a failed connect, and log it once.
        const auto lived = Clock::now() - connected_at;
        if (lived >= std::chrono::milliseconds(kStableConnectionMs)) {
            flapping_ = false;
            backoff = std::chrono::milliseconds(50);
            log(LogLevel::warn, "lost connection to " + ep_.name() + "; reconnecting");
            continue;
        }
        log(flapping_ ? LogLevel::debug : LogLevel::warn,
            "connection to " + ep_.name() + " closed after " +
                std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(lived).count()) +
                " ms (refused by the daemon? see its log); retrying with backoff up to " +
                std::to_string(opts_.backoff_max_ms) + " ms");
        flapping_ = true;
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, backoff, [this] { return stop_; });
        backoff = std::min(backoff * 2, backoff_max);
    }
}

Fanout::Fanout(const Options& opts, const SenderHooks& hooks) {
    for (size_t i = 0; i < opts.endpoints.size(); ++i) senders_.push_back(std::make_unique<Sender>(opts, hooks, i));
}

void Fanout::start() {
    for (auto& s : senders_) s->start();
}

void Fanout::stop() {
    for (auto& s : senders_) s->request_stop();  // all threads wind down in parallel
    for (auto& s : senders_) s->stop();
}

void Fanout::submit_snapshot(std::shared_ptr<const Snapshot> s, uint64_t copy_us) {
    for (auto& x : senders_) x->submit_snapshot(s, copy_us);  // shares one immutable snapshot
}

void Fanout::submit_event(const wire::Event& e) {
    for (auto& x : senders_) x->submit_event(e);
}

void Fanout::submit_counters(const CounterEvent& e) {
    for (auto& x : senders_) x->submit_counters(e);
}

wire::Counters Fanout::total() const {
    wire::Counters t;
    for (const auto& x : senders_) {
        const wire::Counters c = x->counters();
#define IBF_SUM(f) t.f += c.f;
        IBF_SUM(snapshots_sent) IBF_SUM(snapshots_superseded) IBF_SUM(events_dropped)
        IBF_SUM(send_errors) IBF_SUM(reconnects) IBF_SUM(port_counter_events_dropped) IBF_SUM(encode_errors)
#undef IBF_SUM
        t.snapshots_taken = std::max(t.snapshots_taken, c.snapshots_taken);  // the same copies for all
        t.port_counter_events = std::max(t.port_counter_events, c.port_counter_events);  // the same events for all
        t.last_copy_us = std::max(t.last_copy_us, c.last_copy_us);
        t.last_send_lag_ms = std::max(t.last_send_lag_ms, c.last_send_lag_ms);
        t.queue_depth = std::max(t.queue_depth, c.queue_depth);
    }
    return t;
}

}  // namespace ibf::osm
