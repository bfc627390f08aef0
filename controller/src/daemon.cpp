// ibfabricd's I/O: Asio/Beast ingest listeners, HTTP server, signals, and the check worker.
// All Asio/Beast server code is in this one translation unit (it compiles slowly).
// Threads (docs/threading.md): one io_context thread owns ControllerState and every socket; one
// check worker thread runs ibf::check and writes history rows.
#include "ibf/daemon.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <chrono>
#include <array>
#include <csignal>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/declared_links.h"
#include "ibf/identity.h"
#include "ibf/check_queue.h"
#include "ibf/controller_state.h"
#include "ibf/error.h"
#include "ibf/guid2lid.h"
#include "ibf/ha_agent.h"
#include "ibf/ha_findings.h"
#include "ibf/fabric_diff.h"
#include "ibf/history.h"
#include "ibf/history_api.h"
#include "ibf/ingest_policy.h"
#include "ibf/inputs.h"
#include "ibf/plan_accept.h"
#include "ibf/log_limit.h"
#include "ibf/report.h"
#include "ibf/wire.h"
#include "ibf/wire_auth.h"

namespace ibf {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using unix_proto = asio::local::stream_protocol;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
constexpr int64_t kHelloGraceMs = 1000;  // a connection this young is not pushed out for lacking a Hello

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Milliseconds of the steady clock, for the ingest policy (ibf/ingest_policy.h).
int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now().time_since_epoch()).count();
}

double ms_since(steady::time_point t) {
    return std::chrono::duration<double, std::milli>(steady::now() - t).count();
}

std::string endpoint_string(const tcp::endpoint& e) {
    boost::system::error_code ec;
    std::string a = e.address().to_string(ec);
    if (e.address().is_v6()) a = "[" + a + "]";
    return a + ":" + std::to_string(e.port());
}

HealthOptions health_options(const DaemonConfig& c) {
    HealthOptions h;
    h.stale_after_ms = int64_t{c.stale_after_s} * 1000;
    h.flap = {static_cast<int>(c.flap_threshold), int64_t{c.flap_window_s} * 1000, int64_t{c.flap_quiet_s} * 1000};
    h.port_errors = c.port_errors;
    return h;
}

// Something the shutdown path must close.
struct Closable {
    virtual ~Closable() = default;
    virtual void close() = 0;
};

// A plugin connection as the slot policy sees it (IngestConn<unix or tcp socket>).
struct IngestBase : Closable {
    virtual IngestSlot slot() const = 0;
    virtual void evict(const std::string& why) = 0;  // closes it now, with one (rate-limited) log line
};

}  // namespace

struct Daemon::Impl {
    explicit Impl(DaemonOptions o);
    ~Impl();

    // --- owned by the io thread (everything below `io` except the worker section) ---
    DaemonOptions opt;
    asio::io_context io{1};
    asio::signal_set signals{io};
    unix_proto::acceptor unix_acc{io};
    tcp::acceptor tcp_acc{io};
    tcp::acceptor http_acc{io};
    ino_t socket_ino = 0;
    uint16_t http_port = 0, tcp_port = 0;  // as bound
    bool socket_created = false;

    // Wire decoding runs here, off the io thread (a 2.6k-node snapshot takes ~45 ms to decode).
    // Declared after `io` so it is destroyed first: its handlers hold connections whose sockets
    // belong to `io`.
    asio::io_context decode_io{1};
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> decode_guard;
    std::thread decode_thread;

    ControllerState state;
    Topology topo;
    std::optional<std::string> token;
    std::unique_ptr<HistoryStore> history;  // thread-safe; written by the worker
    // SM high availability (docs/ha.md): the engine is the io thread's; the agent has its own thread.
    std::optional<ha::HaEngine> ha;
    std::unique_ptr<HaAgent> ha_agent;
    asio::steady_timer ha_timer{io};
    std::vector<HaTarget> ha_targets;        // as last given to the agent
    std::string ha_track;                    // track_file content last written
    uint64_t ha_persisted = 0;               // engine records already handed to the history database
    // What the agent last wrote into the local guid2lid (touched only by its producers, which run
    // one at a time on the agent thread).
    std::shared_ptr<ha::Guid2Lid> guid2lid_written = std::make_shared<ha::Guid2Lid>();
    uint64_t next_id = 1;
    std::map<uint64_t, std::weak_ptr<Closable>> open;  // ingest connections and HTTP sessions
    size_t ingest_open = 0, http_open = 0;              // how many of `open` are which (limits.max_*)
    std::map<uint64_t, std::weak_ptr<IngestBase>> ingest_conns;  // the ingest part of `open`
    std::string tcp_key;              // tcp_key_file's key; "" = TCP Hellos need no MAC
    wire::NonceWindow nonces;         // authenticated Hellos seen within the window (replays)
    LogLimit refusal_log{10000, 5};   // ingest refusals and drops: a few lines, then a count
    // HTTP sessions waiting for (the headers of) a request, and since when: the oldest gives way
    // when every session is taken, so /healthz always gets one.
    std::map<uint64_t, steady::time_point> http_idle;
    LogLimit http_refused_log, http_evicted_log, queue_full_log;
    bool stopping = false;
    bool ran = false;

    // --- the check worker: a queue of jobs under `mu`, one thread ---
    struct WorkItem {
        CheckJob job;
        std::shared_ptr<const Plan> plan;
        std::shared_ptr<const NodeNameMap> names;
        CheckOptions options;
        steady::time_point received;
        double decode_ms = 0;
        steady::time_point submitted = steady::now();
    };
    static constexpr size_t kMaxQueued = 8;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<WorkItem> queue;
    bool worker_stop = false;
    uint64_t jobs_dropped = 0;
    std::thread worker;

    // io-thread functions
    void bind_unix();
    void accept_unix();
    void accept_tcp();
    void accept_http();
    bool evict_idle_http();
    void wait_signal();
    void shutdown();
    // `arrived`: when the chunk that completed the message was read from the socket.
    bool dispatch(ConnId id, wire::Message&& m, double decode_ms, steady::time_point arrived);
    void submit(CheckJob job, steady::time_point received, double decode_ms);
    void on_result(CheckResult r, steady::time_point received, double wait_ms, double decode_ms);
    nlohmann::json reload();
    nlohmann::json accept(const nlohmann::json& body);  // POST /api/v1/accept (docs/api.md)
    ApiContext api_context();
    void remove_socket_file();
    // HA (io thread)
    void ha_start();
    void ha_wait();
    void ha_step();
    void ha_apply(HaBatch b);
    void ha_plugin(ConnId id, const SmInfo& sm);
    void ha_snapshot(ConnId id, const Snapshot& s);
    void ha_closed(Guid sm);
    nlohmann::json set_local_priority(const nlohmann::json& body);
    nlohmann::json set_local_sm_state(const nlohmann::json& body);
    template <class Sock>
    void start_ingest(Sock sock, std::string peer);
    bool make_room(const std::string& peer);
    std::string check_hello(bool tcp, const wire::Hello& h);  // "" = accepted, else why not
    void refusal(const std::string& line);                      // rate-limited warning
    void open_tcp_ingest();

    // worker thread
    void worker_loop();
};

namespace {

// One plugin connection: its own Decoder; malformed input closes only this connection. Until its
// Hello: frames are limited to 64 KiB, a timer closes it after limits.hello_timeout_ms, and on TCP
// with a tcp_key_file the Hello must carry a valid MAC (docs/daemon.md, "Ingest limits and
// authentication").
template <class Sock>
class IngestConn : public IngestBase, public std::enable_shared_from_this<IngestConn<Sock>> {
public:
    static constexpr bool kTcp = std::is_same_v<Sock, tcp::socket>;

    IngestConn(Daemon::Impl* d, Sock s, ConnId id, std::string peer)
        : d_(d), sock_(std::move(s)), id_(id), peer_(std::move(peer)),
          dec_(d->opt.config.max_message_bytes, wire::kMaxSmallPayload), hello_timer_(d->io),
          opened_ms_(steady_ms()), last_rx_ms_(opened_ms_) {}

    void start() {
        d_->state.on_connect(id_, peer_, now_ms());
        spdlog::debug("ingest: connection {} from {}", id_, peer_);
        hello_timer_.expires_after(std::chrono::milliseconds(d_->opt.config.hello_timeout_ms));
        hello_timer_.async_wait([self = this->shared_from_this()](const boost::system::error_code& ec) {
            if (ec || self->hello_ || self->done_) return;
            self->refuse("no Hello within " + std::to_string(self->d_->opt.config.hello_timeout_ms) +
                         " ms (limits.hello_timeout_ms)");
        });
        read();
    }
    void close() override {
        boost::system::error_code ec;
        sock_.close(ec);
    }
    IngestSlot slot() const override { return {id_, hello_, opened_ms_, last_rx_ms_}; }
    void evict(const std::string& why) override { refuse(why); }

private:
    void read() {
        sock_.async_read_some(asio::buffer(buf_), [self = this->shared_from_this()](
                                                      const boost::system::error_code& ec, size_t n) {
            self->on_read(ec, n);
        });
    }

    void on_read(const boost::system::error_code& ec, size_t n) {
        if (done_) return;
        if (ec) {
            if (ec != asio::error::operation_aborted && !d_->stopping)
                spdlog::info("ingest: connection {} ({}) closed{}", id_, peer_,
                             ec == asio::error::eof ? "" : ": " + ec.message());
            finish();
            return;
        }
        last_rx_ms_ = steady_ms();
        // buf_ is not read into again until deliver() has run: one chunk in flight per connection.
        asio::post(d_->decode_io, [self = this->shared_from_this(), n, arrived = steady::now()] {
            self->decode(n, arrived);
        });
    }

    // Decode thread: feed the chunk, decode every complete frame, hand the messages to the io thread.
    void decode(size_t n, steady::time_point arrived) {
        std::vector<std::pair<wire::Message, double>> msgs;
        std::string error;
        try {
            dec_.feed(buf_.data(), n);
            for (;;) {
                const auto t0 = steady::now();
                auto m = dec_.next();
                if (!m) break;
                msgs.emplace_back(std::move(*m), ms_since(t0));
            }
        } catch (const std::exception& e) {
            error = e.what();
            if (error.empty()) error = "malformed input";
        }
        if (const uint64_t k = dec_.skipped(); k > skipped_seen_) {  // a newer plugin's message types
            if (skipped_seen_ == 0)
                spdlog::warn("ingest: connection {} ({}) sent message type {}, which this ibfabricd does not know: "
                             "skipped, as every later one of this connection (a newer plugin? upgrade ibfabricd; "
                             "docs/wire.md \"Versioning\")",
                             id_, peer_, dec_.last_skipped_type());
            skipped_seen_ = k;
        }
        asio::post(d_->io, [self = this->shared_from_this(), msgs = std::move(msgs), error = std::move(error),
                            arrived]() mutable { self->deliver(std::move(msgs), std::move(error), arrived); });
    }

    // io thread: apply the messages in order; a malformed frame or a refused Hello drops this
    // connection only.
    void deliver(std::vector<std::pair<wire::Message, double>> msgs, std::string error, steady::time_point arrived) {
        if (done_) return;
        for (auto& [m, decode_ms] : msgs) {
            const auto type = wire::type_of(m);
            if (type == wire::MsgType::Hello && !hello_) {
                const auto& h = std::get<wire::Hello>(m);
                if (std::string why = d_->check_hello(kTcp, h); !why.empty()) {
                    refuse(why + " (SM " + guid_hex(h.sm.port_guid) + ")");
                    return;
                }
                hello_ = true;
                hello_timer_.cancel();
            }
            if (!d_->dispatch(id_, std::move(m), decode_ms, arrived)) {
                error = std::string(wire::to_string(type)) + " before Hello";
                break;
            }
        }
        if (!error.empty()) {
            refuse(error);
            return;
        }
        read();
    }

    // Drops the connection with one rate-limited warning naming the peer and why; counted in
    // ibfabric_ingest_errors_total.
    void refuse(const std::string& why) {
        if (done_) return;
        d_->refusal("ingest: " + std::string(kTcp ? "tcp" : "unix") + " connection " + std::to_string(id_) + " (" +
                    peer_ + ") dropped: " + why);
        d_->state.on_ingest_error(id_);
        finish();
    }

    void finish() {
        if (done_) return;
        done_ = true;
        hello_timer_.cancel();
        close();
        const auto sm = d_->state.sm_of_conn(id_);
        d_->state.on_disconnect(id_, now_ms());
        d_->open.erase(id_);
        d_->ingest_conns.erase(id_);
        --d_->ingest_open;
        if (sm) d_->ha_closed(*sm);
    }

    Daemon::Impl* d_;
    Sock sock_;
    ConnId id_;
    std::string peer_;
    wire::Decoder dec_;
    uint64_t skipped_seen_ = 0;  // decode thread: frames of unknown types skipped so far (logged once)
    asio::steady_timer hello_timer_;
    int64_t opened_ms_, last_rx_ms_;  // steady_ms()
    bool hello_ = false;              // a Hello was accepted on this connection
    std::array<char, 64 * 1024> buf_;
    bool done_ = false;
};

// One HTTP client connection (keep-alive), requests answered by handle_api().
class HttpSession : public Closable, public std::enable_shared_from_this<HttpSession> {
public:
    HttpSession(Daemon::Impl* d, tcp::socket s, uint64_t id) : d_(d), stream_(std::move(s)), id_(id) {}
    void start() { read(); }
    void close() override {
        boost::system::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream_.close();
    }

private:
    // Headers within limits.http_header_timeout_ms (idle keep-alive time included), then the body
    // within 30 s; while waiting for the headers the session is idle and may be evicted.
    void read() {
        parser_.emplace();
        parser_->body_limit(d_->opt.config.max_request_bytes);
        parser_->header_limit(static_cast<uint32_t>(std::min<size_t>(d_->opt.config.max_request_bytes, 64 * 1024)));
        d_->http_idle[id_] = steady::now();
        stream_.expires_after(std::chrono::milliseconds(d_->opt.config.http_header_timeout_ms));
        http::async_read_header(stream_, buf_, *parser_, [self = shared_from_this()](const boost::system::error_code& ec,
                                                                                      size_t) { self->on_header(ec); });
    }

    void on_header(const boost::system::error_code& ec) {
        d_->http_idle.erase(id_);
        if (ec || parser_->is_done()) {
            on_read(ec);
            return;
        }
        stream_.expires_after(std::chrono::seconds(30));
        http::async_read(stream_, buf_, *parser_,
                         [self = shared_from_this()](const boost::system::error_code& ec, size_t) { self->on_read(ec); });
    }

    void on_read(const boost::system::error_code& ec) {
        if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::operation_aborted ||
            ec == beast::error::timeout || ec == asio::error::connection_reset) {
            finish();
            return;
        }
        if (ec) {
            // Malformed or oversized request: answer 400 and close.
            ApiResponse r = api_error(400, "bad request: " + ec.message());
            write(r, false, 11);
            return;
        }
        const auto& req = parser_->get();
        ApiRequest ar;
        ar.method = std::string(req.method_string());
        ar.target = std::string(req.target());
        if (auto it = req.find(http::field::authorization); it != req.end()) ar.authorization = std::string(it->value());
        ar.body = req.body();
        ApiResponse r = handle_api(ar, d_->api_context());
        spdlog::debug("http: {} {} -> {}", ar.method, ar.target, r.status);
        write(r, req.keep_alive(), req.version());
    }

    void write(const ApiResponse& r, bool keep_alive, unsigned version) {
        res_ = {};
        res_.version(version);
        res_.result(static_cast<http::status>(r.status));
        res_.set(http::field::server, "ibfabricd");
        res_.set(http::field::content_type, r.content_type);
        if (!r.allow.empty()) res_.set(http::field::allow, r.allow);
        res_.body() = r.body;
        res_.keep_alive(keep_alive);
        res_.prepare_payload();
        stream_.expires_after(std::chrono::seconds(30));
        http::async_write(stream_, res_, [self = shared_from_this(), keep_alive](const boost::system::error_code& ec, size_t) {
            if (ec || !keep_alive || self->d_->stopping) {
                self->close();
                self->finish();
                return;
            }
            self->read();
        });
    }

    void finish() {
        if (done_) return;
        done_ = true;
        d_->http_idle.erase(id_);
        d_->open.erase(id_);
        --d_->http_open;
    }

    Daemon::Impl* d_;
    beast::tcp_stream stream_;
    uint64_t id_;
    beast::flat_buffer buf_{8192};
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
    bool done_ = false;
};

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
        history->prune(now_ms());
        spdlog::info("history: {} ({} rows, schema {})", c.history_db, history->count(), history->schema_version());
    }

    // HTTP API
    {
        boost::system::error_code ec;
        auto addr = asio::ip::make_address(c.http_bind, ec);
        if (ec) throw InputError(c.source, 0, 0, "http bind address '" + c.http_bind + "' is not an IP address");
        tcp::endpoint ep(addr, c.http_port);
        http_acc.open(ep.protocol());
        http_acc.set_option(asio::socket_base::reuse_address(true));
        http_acc.bind(ep, ec);
        if (ec) throw std::runtime_error("cannot bind HTTP " + endpoint_string(ep) + ": " + ec.message());
        http_acc.listen();
        http_port = http_acc.local_endpoint().port();
        spdlog::info("http: listening on {}", endpoint_string(http_acc.local_endpoint()));
    }
    if (!c.tcp_bind.empty()) open_tcp_ingest();
    bind_unix();

    if (!opt.port_file.empty()) {
        const std::string tmp = opt.port_file + ".tmp";
        {
            std::ofstream pf(tmp, std::ios::trunc);
            pf << http_port << "\n";
            if (!pf) throw std::runtime_error(opt.port_file + ": cannot write the port file");
        }
        std::filesystem::rename(tmp, opt.port_file);
    }
    worker = std::thread([this] { worker_loop(); });
    if (c.ha.mode != ha::Mode::off) ha_start();
    decode_guard.emplace(decode_io.get_executor());
    decode_thread = std::thread([this] { decode_io.run(); });
}

Daemon::Impl::~Impl() {
    if (ha_agent) ha_agent->stop();  // its hooks post to io, which outlives it
    {
        std::lock_guard lk(mu);
        worker_stop = true;
    }
    cv.notify_all();
    if (worker.joinable()) worker.join();
    decode_guard.reset();
    decode_io.stop();
    if (decode_thread.joinable()) decode_thread.join();
    remove_socket_file();
}

// Optional TCP ingest. Beyond loopback it needs tcp_key_file: every peer then proves the key in
// its Hello (ibf/wire_auth.h); without one, anybody who reaches the port could feed a fabric.
void Daemon::Impl::open_tcp_ingest() {
    const DaemonConfig& c = opt.config;
    const std::string where = c.source.empty() ? "ibfabricd" : c.source;
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(c.tcp_bind, ec);
    if (ec) throw InputError(c.source, 0, 0, "tcp bind address '" + c.tcp_bind + "' is not an IP address");
    if (!c.tcp_key_file.empty()) {
        wire::KeyCheck k = wire::read_key_file(c.tcp_key_file);
        if (!k.error.empty()) throw InputError(where, 0, 0, "tcp_key_file " + k.error);
        tcp_key = std::move(k.key);
    } else if (!addr.is_loopback()) {
        throw InputError(where, 0, 0, "tcp ingest on " + c.tcp_bind +
                                          " (not loopback) needs tcp_key_file: refusing unauthenticated ingest "
                                          "from the network (docs/daemon.md)");
    }
    tcp::endpoint ep(addr, c.tcp_port);
    tcp_acc.open(ep.protocol());
    tcp_acc.set_option(asio::socket_base::reuse_address(true));
    tcp_acc.bind(ep, ec);
    if (ec) throw std::runtime_error("cannot bind TCP ingest " + endpoint_string(ep) + ": " + ec.message());
    tcp_acc.listen();
    tcp_port = tcp_acc.local_endpoint().port();
    spdlog::info("ingest: listening on tcp {} ({})", endpoint_string(tcp_acc.local_endpoint()),
                 tcp_key.empty() ? "no authentication: loopback only" : "Hello MAC required, key " + c.tcp_key_file);
}

void Daemon::Impl::bind_unix() {
    const DaemonConfig& c = opt.config;
    const std::string& path = c.socket_path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            throw std::runtime_error(path + ": exists and is not a socket; refusing to replace it");
        unix_proto::socket probe(io);
        boost::system::error_code ec;
        probe.connect(unix_proto::endpoint(path), ec);
        if (!ec) throw std::runtime_error(path + ": another daemon is listening on this socket");
        if (::unlink(path.c_str()) != 0)
            throw std::runtime_error(path + ": cannot remove the stale socket: " + std::strerror(errno));
        spdlog::info("ingest: removed stale socket {}", path);
    }
    boost::system::error_code ec;
    unix_proto::endpoint ep(path);
    unix_acc.open(ep.protocol());
    const mode_t old = ::umask(static_cast<mode_t>(0777 & ~c.socket_mode));
    unix_acc.bind(ep, ec);
    ::umask(old);
    if (ec) throw std::runtime_error(path + ": cannot bind the ingest socket: " + ec.message());
    socket_created = true;
    if (::chmod(path.c_str(), static_cast<mode_t>(c.socket_mode)) != 0)
        throw std::runtime_error(path + ": cannot chmod: " + std::strerror(errno));
    if (::lstat(path.c_str(), &st) == 0) socket_ino = st.st_ino;
    unix_acc.listen();
    spdlog::info("ingest: listening on unix {} (mode {:04o})", path, c.socket_mode);
}

void Daemon::Impl::remove_socket_file() {
    if (!socket_created) return;
    socket_created = false;
    struct stat st {};
    const std::string& path = opt.config.socket_path;
    // Only our own socket: another daemon may have replaced it meanwhile.
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == socket_ino) ::unlink(path.c_str());
}

template <class Sock>
void Daemon::Impl::start_ingest(Sock sock, std::string peer) {
    if (ingest_open >= opt.config.max_plugin_connections && !make_room(peer)) {
        refusal("ingest: refusing a connection from " + peer + ": " + std::to_string(ingest_open) +
                " plugin connections open, all live (limits.max_plugin_connections)");
        boost::system::error_code ec;
        sock.close(ec);
        return;
    }
    ++ingest_open;
    const uint64_t id = next_id++;
    auto conn = std::make_shared<IngestConn<Sock>>(this, std::move(sock), id, std::move(peer));
    open[id] = conn;
    ingest_conns[id] = conn;
    conn->start();
}

// Every slot is taken: a connection that has not said Hello (open over a second), or one silent for
// limits.stale_connection_ms, gives way to the newcomer (ingest_victim). False: all are live.
bool Daemon::Impl::make_room(const std::string& peer) {
    std::vector<IngestSlot> slots;
    for (auto& [id, w] : ingest_conns)
        if (auto c = w.lock()) slots.push_back(c->slot());
    const int64_t now = steady_ms();
    const auto victim = ingest_victim(slots, now, opt.config.stale_connection_ms, kHelloGraceMs);
    if (!victim) return false;
    auto c = ingest_conns[*victim].lock();
    if (!c) return false;
    const IngestSlot s = c->slot();
    c->evict(s.said_hello ? "silent for " + std::to_string(now - s.last_rx_ms) + " ms, its slot goes to " + peer
                          : "no Hello after " + std::to_string(now - s.opened_ms) + " ms, its slot goes to " + peer);
    return true;
}

std::string Daemon::Impl::check_hello(bool is_tcp, const wire::Hello& h) {
    if (!is_tcp || tcp_key.empty()) return "";  // Unix sockets: the file mode is the access control
    wire::AuthVerdict v = wire::verify_hello(h, tcp_key, now_ms(), nonces);
    return v.ok ? "" : "unauthenticated: " + v.reason;
}

void Daemon::Impl::refusal(const std::string& line) {
    if (auto held = refusal_log.allow(steady_ms())) spdlog::warn("{}{}", line, LogLimit::suffix(*held));
}

void Daemon::Impl::accept_unix() {
    unix_acc.async_accept([this](const boost::system::error_code& ec, unix_proto::socket s) {
        if (ec == asio::error::operation_aborted || stopping) return;
        if (!ec) start_ingest(std::move(s), "unix");
        else spdlog::warn("ingest: accept failed: {}", ec.message());
        accept_unix();
    });
}

void Daemon::Impl::accept_tcp() {
    tcp_acc.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || stopping) return;
        if (!ec) {
            boost::system::error_code e2;
            auto ep = s.remote_endpoint(e2);
            start_ingest(std::move(s), e2 ? std::string("tcp") : endpoint_string(ep));
        } else {
            spdlog::warn("ingest: tcp accept failed: {}", ec.message());
        }
        accept_tcp();
    });
}

void Daemon::Impl::accept_http() {
    http_acc.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || stopping) return;
        if (!ec && http_open >= opt.config.max_http_connections && !evict_idle_http()) {
            if (auto held = http_refused_log.allow(steady_ms()))
                spdlog::warn("http: refusing a connection: {} sessions open and busy (limits.max_http_connections){}",
                             http_open, LogLimit::suffix(*held));
            boost::system::error_code e2;
            s.close(e2);
        } else if (!ec) {
            ++http_open;
            const uint64_t id = next_id++;
            auto sess = std::make_shared<HttpSession>(this, std::move(s), id);
            open[id] = sess;
            sess->start();
        } else {
            spdlog::warn("http: accept failed: {}", ec.message());
        }
        accept_http();
    });
}

// Closes the session that has waited longest for a request; false when every session is busy.
// Its slot frees when its aborted read completes (http_open may pass the limit until then).
bool Daemon::Impl::evict_idle_http() {
    auto oldest = http_idle.end();
    for (auto it = http_idle.begin(); it != http_idle.end(); ++it)
        if (oldest == http_idle.end() || it->second < oldest->second) oldest = it;
    if (oldest == http_idle.end()) return false;
    const uint64_t id = oldest->first;
    const double idle_ms = ms_since(oldest->second);
    http_idle.erase(oldest);
    if (auto it = open.find(id); it != open.end())
        if (auto p = it->second.lock()) p->close();
    if (auto held = http_evicted_log.allow(steady_ms()))
        spdlog::info("http: all {} sessions taken: closed the one idle longest ({:.0f} ms) for a new connection{}",
                     http_open, idle_ms, LogLimit::suffix(*held));
    return true;
}

void Daemon::Impl::wait_signal() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (sig == SIGHUP) {
            spdlog::info("SIGHUP: reloading the topology");
            try {
                reload();
            } catch (const std::exception& e) {
                spdlog::error("reload failed, the previous topology stays: {}", e.what());
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
    unix_acc.close(ec);
    tcp_acc.close(ec);
    http_acc.close(ec);
    ha_timer.cancel();
    for (auto& [id, w] : open)
        if (auto p = w.lock()) p->close();
    remove_socket_file();
    io.stop();
}

bool Daemon::Impl::dispatch(ConnId id, wire::Message&& m, double decode_ms, steady::time_point arrived) {
    const int64_t now = now_ms();
    return std::visit(
        [&](auto&& msg) -> bool {
            using T = std::decay_t<decltype(msg)>;
            if constexpr (std::is_same_v<T, wire::Hello>) {
                if (!state.on_hello(id, msg, now)) return false;
                ha_plugin(id, msg.sm);
                if (ha && msg.conf) ha->on_conf(msg.sm.port_guid, *msg.conf, now);
                spdlog::info("ingest: connection {}: SM {} (LID {}, priority {}, {}) says hello: {}, plugin {}, pid {}",
                             id, guid_hex(msg.sm.port_guid), msg.sm.lid, msg.sm.priority, to_string(msg.sm.state),
                             msg.osm_version, msg.plugin_version, msg.pid);
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
                state.note_decode_ms(decode_ms);
                ha_snapshot(id, msg);
                auto job = state.on_snapshot(id, std::move(msg), now, &proto_err);
                if (proto_err) return false;
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
    WorkItem w{std::move(job), topo.plan, topo.names, CheckOptions{opt.config.check_rate_below_capability}, received,
               decode_ms};
    {
        std::lock_guard lk(mu);
        if (auto old = push_dropping_oldest(queue, std::move(w), kMaxQueued)) {
            ++jobs_dropped;
            if (auto held = queue_full_log.allow(steady_ms()))
                spdlog::warn("check: queue full, dropping the check of sweep {}{}", old->job.snapshot->sweep_seq,
                             LogLimit::suffix(*held));
        }
    }
    cv.notify_one();
}

void Daemon::Impl::worker_loop() {
    for (;;) {
        WorkItem w;
        {
            std::unique_lock lk(mu);
            cv.wait(lk, [&] { return worker_stop || !queue.empty(); });
            if (worker_stop) return;
            w = std::move(queue.front());
            queue.pop_front();
        }
        const double wait_ms = ms_since(w.submitted);
        CheckResult r;
        r.generation = w.job.generation;
        r.snapshot = w.job.snapshot;
        std::optional<Fabric> mapped;  // the map applies to a copy: snapshots stay as sent
        std::vector<LinkMatch> matches;  // planned links cabled as planned: planned rates and labels for /metrics
        std::vector<std::string> plan_node_names;  // per NodeId: the plan's name ("" = none)
        try {
            if (w.names && !w.names->empty()) {
                mapped = w.job.snapshot->fabric;
                apply_node_name_map(*mapped, *w.names);
            }
            const Fabric& f = mapped ? *mapped : w.job.snapshot->fabric;
            // One naming for the check, the analysis and the link table (ibf::NameBook): the plan's
            // names first, tiers from the analysis.
            std::vector<Link> declared;  // cabled as the plan says: no analysis anomaly (a host it puts on a spine)
            if (w.plan) {
                const NodeMatch nm = match_nodes(*w.plan, f);
                plan_node_names = plan_names(*w.plan, nm, f.size());
                declared = declared_links(*w.plan, f, nm);
            }
            const auto t1 = steady::now();
            try {
                r.analysis = std::make_shared<const LiveAnalysis>(
                    analyze_live(*w.job.snapshot, f, plan_node_names, declared));
            } catch (const std::exception& e) {
                spdlog::error("analysis of sweep {} failed: {}", w.job.snapshot->sweep_seq, e.what());
            }
            r.analyze_ms = ms_since(t1);
            const auto t0 = steady::now();
            if (w.plan) {
                CheckOptions opt = w.options;
                if (r.analysis) opt.tier_of = r.analysis->tier_of;
                r.findings = check(*w.plan, f, opt, &matches);
                r.checked = true;
            }
            r.findings_json = findings_to_json(r.findings);
            r.check_ms = ms_since(t0);
        } catch (const std::exception& e) {
            spdlog::error("check of sweep {} failed: {}", w.job.snapshot->sweep_seq, e.what());
            continue;
        }
        r.links = std::make_shared<const LinkTable>(link_table(mapped ? *mapped : w.job.snapshot->fabric,
                                                               r.analysis ? r.analysis->tier_of : std::vector<int>{},
                                                               w.plan.get(), matches,
                                                               r.analysis ? r.analysis->names : std::vector<std::string>{}));
        HistoryRow row;
        const bool record = history && w.job.new_sweep;
        FabricState fabric_now;  // what the history compares with the previous sweep
        std::vector<Finding> findings_now;
        if (record) {
            const Snapshot& s = *w.job.snapshot;
            fabric_now = fabric_state(mapped ? *mapped : s.fabric, s.self, s.other_sms);
            findings_now = r.findings;
        }
        mapped.reset();
        if (record) {
            const Snapshot& s = *w.job.snapshot;
            row.sweep_seq = s.sweep_seq;
            row.taken_unix_ms = s.taken_unix_ms ? s.taken_unix_ms : w.job.received_ms;
            row.published_unix_ms = now_ms();
            row.sm_guid = s.self.port_guid;
            row.nodes = s.fabric.size();
            row.switches = s.fabric.count(NodeType::Switch);
            row.cas = s.fabric.count(NodeType::CA);
            row.links = s.fabric.link_count();
            row.findings = r.findings.size();
            row.checked = r.checked;
            row.check_ms = r.check_ms;
            row.findings_json = json_text(r.findings_json);
        }
        asio::post(io, [this, r = std::move(r), received = w.received, wait_ms, decode_ms = w.decode_ms]() mutable {
            on_result(std::move(r), received, wait_ms, decode_ms);
        });
        if (record) {
            try {
                if (!history->record(row, fabric_now, findings_now))
                    spdlog::debug("history: sweep {} of SM {} is already recorded (resent after a restart)",
                                  row.sweep_seq, guid_hex(row.sm_guid));
            } catch (const std::exception& e) {
                spdlog::error("history: {}", e.what());
            }
        }
    }
}

void Daemon::Impl::on_result(CheckResult r, steady::time_point received, double wait_ms, double decode_ms) {
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
    if (!state.publish(std::move(r), now_ms())) return;
    const double lag = ms_since(received);
    state.note_publish_lag(lag);
    spdlog::info("sweep {} from SM {}: {}; {}; decode {:.2f} ms, check {:.2f} ms, analysis {:.2f} ms, queue wait "
                 "{:.2f} ms, snapshot received -> findings published {:.2f} ms",
                 seq, guid_hex(sm),
                 checked ? (n ? std::to_string(n) + " findings (" + summary + ")" : std::string("no findings"))
                         : std::string("not checked (no topology)"),
                 analysis_summary, decode_ms, check_ms, analyze_ms, wait_ms, lag);
}

nlohmann::json Daemon::Impl::reload() {
    Topology t;
    std::optional<std::string> new_token;
    try {
        t = load_topology(opt.config);  // throws: the old topology stays
        new_token = load_token(opt.config);
    } catch (...) {
        state.note_reload(false, now_ms());
        throw;
    }
    state.note_reload(true, now_ms());
    topo = std::move(t);
    state.set_waivers(topo.waivers);
    token = std::move(new_token);
    spdlog::info("topology reloaded: {} planned nodes, {} planned links, {} waivers",
                 topo.plan ? topo.plan->nodes.size() : 0, topo.plan ? topo.plan->links.size() : 0,
                 topo.waivers ? topo.waivers->waivers.size() : 0);
    auto job = state.recheck(now_ms());
    if (job) submit(std::move(*job), steady::now(), 0);
    return nlohmann::json{{"reloaded", true},
                          {"topology", opt.config.topology.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.config.topology)},
                          {"plan_nodes", topo.plan ? topo.plan->nodes.size() : 0},
                          {"plan_links", topo.plan ? topo.plan->links.size() : 0},
                          {"rechecking", job.has_value()}};
}

// POST /api/v1/accept: the current fabric (node-name-map applied) becomes the plan; the previous
// plan file is kept as plan.yaml.N; then the topology is reloaded. io thread.
nlohmann::json Daemon::Impl::accept(const nlohmann::json& body) {
    std::vector<std::string> scope;
    if (body.contains("scope")) {
        const nlohmann::json& sj = body["scope"];
        for (const nlohmann::json& e : sj.is_array() ? sj : nlohmann::json::array({sj})) {
            if (!e.is_string() || e.get<std::string>().empty())
                throw ApiFailure(400, "scope: expected node names (\"leaf03\", \"leaf2*\"), got " + e.dump());
            scope.push_back(e.get<std::string>());
        }
    }
    const std::string& path = opt.config.topology;
    if (path.empty()) throw ApiFailure(409, "no topology configured: accept writes into the 'topology' plan (docs/daemon.md)");
    if (detect_dump_format(read_text_file(path, "plan")))
        throw ApiFailure(409, path + " is a dump used as the plan; accept writes YAML plans: point 'topology' at one "
                                     "(`ibfabric plan from-dump` makes it)");
    const std::shared_ptr<const Snapshot> snap = state.current();
    if (!snap) throw ApiFailure(409, "no fabric yet: nothing to accept before the first snapshot");
    Fabric f = snap->fabric;
    if (topo.names && !topo.names->empty()) apply_node_name_map(f, *topo.names);
    size_t differences = 0;
    if (topo.plan) {
        const std::vector<Finding> fs = check(*topo.plan, f, CheckOptions{opt.config.check_rate_below_capability});
        differences = fs.size();
        if (!scope.empty()) {
            const std::vector<Finding> outside = findings_outside_scope(fs, scope);
            if (!outside.empty()) {
                std::string list;
                for (size_t i = 0; i < outside.size() && i < 3; ++i) list += (i ? "; " : "") + outside[i].message;
                throw ApiFailure(409, std::to_string(outside.size()) + " differences from the plan are outside the scope (" + list +
                                          "): fix them, or widen the scope");
            }
        }
    }
    const std::string source = "ibfabricd: sweep " + std::to_string(snap->sweep_seq) + " of SM " + guid_hex(snap->self.port_guid);
    const AcceptWrite w = write_accepted_plan(path, f, source);
    spdlog::info("accept: {} written from {} ({} differences from the previous plan); previous plan kept as {}", path,
                 source, differences, w.backup);
    nlohmann::json out{{"accepted", true}, {"topology", path}, {"backup", w.backup}, {"sweep_seq", snap->sweep_seq},
                       {"sm_guid", guid_hex(snap->self.port_guid)}, {"scope", scope}, {"differences", differences},
                       {"compact_switches", w.compact_switches}, {"compact_hosts", w.compact_hosts},
                       {"explicit_cables", w.explicit_cables}};
    out["reload"] = reload();
    return out;
}

ApiContext Daemon::Impl::api_context() {
    ApiContext c;
    c.state = &state;
    c.now_ms = now_ms();
    c.token = token;
    c.token_for_reads = opt.config.token_for_reads;
    c.topology = opt.config.topology;
    c.plan_nodes = topo.plan ? topo.plan->nodes.size() : 0;
    c.plan_links = topo.plan ? topo.plan->links.size() : 0;
    if (history)
        c.history = [h = history.get(), max = opt.config.max_history_bytes](int limit, int64_t before) {
            return h->page(limit, before, max);
        };
    if (ha) {
        c.ha = &*ha;
        c.ha_agents = opt.config.ha_agents;
        c.sm_priority = [this](const nlohmann::json& body) { return set_local_priority(body); };
        c.sm_state = [this](const nlohmann::json& body) { return set_local_sm_state(body); };
        if (history) c.ha_history = [h = history.get()](int limit) { return h->recent_ha_events(limit); };
    }
    c.reload = [this] { return reload(); };
    c.history_store = history.get();
    c.accept = [this](const nlohmann::json& body) { return accept(body); };
    return c;
}

// --- SM high availability (docs/ha.md). io thread, except the agent's hooks (agent thread),
// which only post here.

void Daemon::Impl::ha_start() {
    const ha::HaConfig& hc = opt.config.ha;
    ha.emplace(hc);
    HaAgentHooks h;
    h.open_port = [hc] { return ha::open_smp_port({hc.mad_ca, hc.mad_port, hc.mad_timeout_ms, 0}); };
    h.on_batch = [this](HaBatch b) { asio::post(io, [this, b = std::move(b)]() mutable { ha_apply(std::move(b)); }); };
    h.on_fence_done = [this](bool ok, std::string detail) {
        asio::post(io, [this, ok, detail = std::move(detail)] {
            if (ok) spdlog::info("ha: fence command succeeded");
            else spdlog::error("ha: fence command failed: {}", detail);
            ha->on_fence_done(ok, detail, now_ms());
            ha_step();
        });
    };
    h.on_promote_sent = [this](ha::SmInfoReply r) {
        asio::post(io, [this, r = std::move(r)] {
            spdlog::info("ha: SubnSet(SMInfo) answered: {}{} ({:.1f} ms)", ha::to_string(r.status),
                         r.error.empty() ? "" : ": " + r.error, r.rtt_ms);
            ha->on_promote_sent(r, now_ms());
            ha_step();
        });
    };
    h.log_warn = [](const std::string& m) { spdlog::warn("{}", m); };
    h.now_ms = [] { return now_ms(); };
    ha_agent = std::make_unique<HaAgent>(hc, std::move(h));
    ha_agent->start();
    spdlog::info("ha: {} mode, local SM {}, SMInfo every {} ms (timeout {} ms), failover after {} failures with the "
                 "plugin gone or {} failures over {} ms alone, promotion by {}{}",
                 ha::to_string(hc.mode), hc.local_sm ? guid_hex(hc.local_sm) : std::string("auto (the Unix socket's)"),
                 hc.poll_ms, hc.mad_timeout_ms, hc.fast_failures, hc.slow_failures, hc.slow_min_ms,
                 hc.promote_with == ha::kSmInfoDiscover   ? "DISCOVER"
                 : hc.promote_with == ha::kSmInfoHandover ? "HANDOVER"
                                                          : "HANDOVER (fast path) / DISCOVER (slow path)",
                 hc.fence.empty() ? "" : ", fence " + hc.fence[0]);
}

void Daemon::Impl::ha_wait() {
    ha_timer.expires_after(std::chrono::milliseconds(opt.config.ha.poll_ms));
    ha_timer.async_wait([this](const boost::system::error_code& ec) {
        if (ec || stopping) return;
        ha_step();
        ha_wait();
    });
}

void Daemon::Impl::ha_apply(HaBatch b) {
    if (!ha || stopping) return;
    for (const HaProbe& p : b.probes) ha->on_probe(p.guid, p.lid, p.reply, p.at_ms);
    if (b.local) ha->on_local_port(*b.local, now_ms());
    ha_step();
}

void Daemon::Impl::ha_plugin(ConnId id, const SmInfo& sm) {
    if (ha) ha->on_plugin(sm, state.peer_of(id) == "unix", now_ms());
}

void Daemon::Impl::ha_snapshot(ConnId id, const Snapshot& s) {
    if (!ha || !state.sm_of_conn(id)) return;
    const int64_t now = now_ms();
    ha->on_plugin(s.self, state.peer_of(id) == "unix", now);
    ha->on_snapshot(s, now);
    // Keep the local standby's guid2lid current from the master's sweeps (never while the local
    // SM is master: then OpenSM writes its own file).
    const std::string& file = opt.config.ha.guid2lid_file;
    const Guid local = ha->local_sm();
    auto lv = ha->sms().find(local);
    if (!file.empty() && s.self.state == SmState::Master && !s.initialization_error && s.self.port_guid != local &&
        lv != ha->sms().end() && lv->second.info.state == SmState::Standby &&
        ha->group_of(s.self.port_guid) == ha->group_of(local)) {
        // Made on the agent thread (proportional to the fabric): the master's LIDs merged into what
        // was written before, so a host that is down keeps its LID reserved (docs/ha-facts.md 4).
        auto copy = std::make_shared<const Fabric>(s.fabric);
        ha_agent->write_file(file, [copy, prev = guid2lid_written]() -> std::optional<std::string> {
            ha::Guid2Lid m = ha::guid2lid_map(*copy);
            if (m.empty()) return std::nullopt;  // never an empty map over a good file
            ha::Guid2Lid merged = ha::merge_guid2lid(*prev, m);
            if (merged == *prev) return std::nullopt;
            *prev = std::move(merged);
            return ha::guid2lid_text(*prev);
        });
    }
    ha_step();
}

void Daemon::Impl::ha_closed(Guid sm) {
    if (!ha) return;
    auto it = state.sms().find(sm);
    if (it != state.sms().end() && it->second.connected()) return;  // another connection still open
    ha->on_plugin_closed(sm, now_ms());
    ha_step();
}

void Daemon::Impl::ha_step() {
    if (!ha || stopping) return;
    const int64_t now = now_ms();
    std::vector<ha::Action> actions = ha->tick(now);
    if (history && ha->records_total() > ha_persisted) {  // new records: into SQLite, off the io thread
        const auto& h = ha->history();
        const size_t fresh = std::min<uint64_t>(ha->records_total() - ha_persisted, h.size());
        for (size_t i = h.size() - fresh; i < h.size(); ++i) {
            const int64_t at = h[i].decided_ms;
            ha_agent->run_task([store = history.get(), at, text = json_text(ha_record_json(h[i]))] {
                store->append_ha_event(at, text);
            });
        }
        ha_persisted = ha->records_total();
    }
    for (ha::Action& a : actions) {
        if (a.kind == ha::Action::Kind::log) {
            spdlog::info("ha: {}", a.text);
            continue;
        }
        spdlog::warn("ha: {}", a.kind == ha::Action::Kind::fence ? "running the fence command " + a.argv[0] : a.text);
        ha_agent->run_action(a);
    }
    // Only the master in question is probed back to back while suspect; an SM that stopped
    // answering long ago (a dead old master) once a second, not every poll_ms.
    std::vector<HaTarget> targets;
    const auto master = ha->master();
    for (const auto& [g, v] : ha->sms()) {
        if (!v.info.lid) continue;
        const bool gone = v.probe_failures >= opt.config.ha.slow_failures && master != g;
        if (gone && now - v.probe_ms < 1000) continue;
        targets.push_back({g, v.info.lid, master == g && ha->suspect(g, now)});
    }
    auto same = [](const HaTarget& x, const HaTarget& y) { return x.guid == y.guid && x.lid == y.lid && x.urgent == y.urgent; };
    if (!std::equal(targets.begin(), targets.end(), ha_targets.begin(), ha_targets.end(), same)) {
        ha_targets = targets;
        ha_agent->set_targets(std::move(targets));
    }
    if (!opt.config.ha.track_file.empty()) {
        std::string t = ha::track_file_text(ha->local_is_master(now));
        if (t != ha_track) {
            ha_track = t;
            ha_agent->write_file(opt.config.ha.track_file, [t]() -> std::optional<std::string> { return t; });
        }
    }
    state.set_ha_findings(ha::ha_findings(*ha, state.current().get(), now));
}

// POST /api/v1/sm/priority: rewrites `sm_priority` in the local opensm.conf and sends the local
// opensm SIGHUP, which makes it re-read the option (and, if it now outranks the master, ask for
// the mastership: trap 144, handover). The switchover command uses it on two nodes.
nlohmann::json Daemon::Impl::set_local_priority(const nlohmann::json& body) {
    const ha::HaConfig& hc = opt.config.ha;
    if (!body.is_object() || !body.contains("priority") || !body["priority"].is_number_unsigned() ||
        body["priority"].get<uint64_t>() > 15)
        throw InputError("", 0, 0, "the body must be {\"priority\": 0..15}");
    const int prio = body["priority"].get<int>();
    if (hc.opensm_conf.empty()) throw InputError("", 0, 0, "ha.opensm_conf is not configured on this node");
    const Guid local = ha->local_sm();
    auto rec = state.sms().find(local);
    if (!local || rec == state.sms().end() || !rec->second.connected() || rec->second.pid == 0)
        throw InputError("", 0, 0, "this node's OpenSM is not connected: its pid is unknown");
    const int pid = static_cast<int>(rec->second.pid);
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (ec || exe.filename() != "opensm")
        throw InputError("", 0, 0, "pid " + std::to_string(pid) + " is not an opensm process");
    std::ifstream in(hc.opensm_conf);
    if (!in) throw std::runtime_error(hc.opensm_conf + ": cannot read");
    std::string text, line;
    bool replaced = false;
    int before = -1;
    while (std::getline(in, line)) {
        if (line.rfind("sm_priority", 0) == 0 && (line.size() == 11 || line[11] == ' ' || line[11] == '\t')) {
            before = std::atoi(line.c_str() + 11);
            line = "sm_priority " + std::to_string(prio);
            replaced = true;
        }
        text += line + "\n";
    }
    if (!replaced) text += "sm_priority " + std::to_string(prio) + "\n";
    write_file_atomic(hc.opensm_conf, text);
    if (::kill(pid, SIGHUP) != 0) throw std::runtime_error("cannot signal opensm (pid " + std::to_string(pid) + ")");
    spdlog::warn("ha: sm_priority of this node's SM {} set {} -> {} in {}; opensm (pid {}) re-reads it on SIGHUP",
                 guid_hex(local), before, prio, hc.opensm_conf, pid);
    return nlohmann::json{{"sm", guid_hex(local)},
                          {"priority_before", before < 0 ? nlohmann::json(nullptr) : nlohmann::json(before)},
                          {"priority", prio},
                          {"opensm_pid", pid},
                          {"opensm_conf", hc.opensm_conf}};
}

// POST /api/v1/sm/state: {"set": "disable"} or {"set": "standby", "master": GUID}: the HA thread
// sends this node's SM SubnSet(SMInfo) DISABLE (STANDBY -> NOT_ACTIVE) or STANDBY (NOT_ACTIVE ->
// STANDBY, polling `master`). Answers at once; the result is logged, and the caller watches the
// SM's state in GET /api/v1/sm (docs/ha.md "Graceful switchover").
nlohmann::json Daemon::Impl::set_local_sm_state(const nlohmann::json& body) {
    const std::string set = body.is_object() && body.contains("set") && body["set"].is_string() ? body["set"].get<std::string>() : "";
    const bool standby = set == "standby";
    std::optional<Guid> master;
    if (standby && body.contains("master") && body["master"].is_string()) master = parse_guid(body["master"].get<std::string>());
    if (!(set == "disable" || (standby && master)))
        throw InputError("", 0, 0, "the body must be {\"set\": \"disable\"} or {\"set\": \"standby\", \"master\": GUID}");
    const Guid local = ha->local_sm();
    auto v = ha->sms().find(local);
    if (!local || v == ha->sms().end() || v->second.info.lid == 0)
        throw InputError("", 0, 0, "this node's SM and its LID are not known yet");
    const uint16_t lid = v->second.info.lid;
    const uint32_t mod = standby ? ha::kSmInfoStandby : ha::kSmInfoDisable;
    ha_agent->run_with_port([lid, mod, set, m = master.value_or(0)](ha::SmpPort* port) {
        if (!port) return spdlog::warn("ha: SubnSet(SMInfo) {} to this node's SM not sent: no MAD port", set);
        const ha::SmInfoReply r = port->set_sminfo_as(lid, mod, SmState::Master, m);
        if (r.status == ha::SmpStatus::ok)
            spdlog::warn("ha: SubnSet(SMInfo) {} to this node's SM (LID {}) accepted in {:.1f} ms", set, lid, r.rtt_ms);
        else
            spdlog::warn("ha: SubnSet(SMInfo) {} to this node's SM (LID {}) failed: {}", set, lid, r.error);
    });
    return nlohmann::json{{"sm", guid_hex(local)}, {"lid", lid}, {"set", set},
                          {"master", master ? nlohmann::json(guid_hex(*master)) : nlohmann::json(nullptr)}, {"queued", true}};
}

Daemon::Daemon(DaemonOptions opt) : impl_(std::make_unique<Impl>(std::move(opt))) {}
Daemon::~Daemon() = default;

void Daemon::run() {
    Impl& d = *impl_;
    if (d.ran) throw std::logic_error("Daemon::run() called twice");
    d.ran = true;
    d.accept_unix();
    if (d.tcp_acc.is_open()) d.accept_tcp();
    d.accept_http();
    if (d.ha) d.ha_wait();
    if (d.opt.handle_signals) {
        d.signals.add(SIGTERM);
        d.signals.add(SIGINT);
        d.signals.add(SIGHUP);
        d.wait_signal();
    }
    d.io.run();
    d.remove_socket_file();
    spdlog::info("stopped");
}

void Daemon::stop() {
    asio::post(impl_->io, [d = impl_.get()] { d->shutdown(); });
}

uint16_t Daemon::http_port() const { return impl_->http_port; }
uint16_t Daemon::tcp_port() const { return impl_->tcp_port; }
const std::string& Daemon::socket_path() const { return impl_->opt.config.socket_path; }

}  // namespace ibf
