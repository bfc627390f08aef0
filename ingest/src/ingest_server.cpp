// IngestServer: listeners, one Conn per plugin connection, the decode thread (ibf/ingest_server.h).
#include "ibf/ingest_server.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "ibf/clock.h"
#include "ibf/error.h"

namespace ibf {
namespace {

namespace asio = boost::asio;
using unix_proto = asio::local::stream_protocol;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
constexpr int64_t kHelloGraceMs = 1000;  // a connection this young is not pushed out for lacking a Hello

}  // namespace

std::string endpoint_string(const tcp::endpoint& e) {
    boost::system::error_code ec;
    std::string a = e.address().to_string(ec);
    if (e.address().is_v6()) a = "[" + a + "]";
    return a + ":" + std::to_string(e.port());
}

// One plugin connection: its own Decoder; malformed input closes only this connection. Until its
// Hello: frames are limited to 64 KiB, a timer closes it after limits.hello_timeout_ms, and on TCP
// with a tcp_key_file the Hello must carry a valid MAC (docs/daemon.md, "Ingest limits and
// authentication").
template <class Sock>
class IngestServer::Conn : public IngestServer::ConnBase, public std::enable_shared_from_this<IngestServer::Conn<Sock>> {
public:
    static constexpr bool kTcp = std::is_same_v<Sock, tcp::socket>;

    Conn(IngestServer* d, Sock s, uint64_t id, std::string peer)
        : d_(d), sock_(std::move(s)), id_(id), peer_(std::move(peer)),
          dec_(d->cfg_.max_message_bytes, wire::kMaxSmallPayload), hello_timer_(d->io_),
          opened_ms_(steady_clock_ms()), last_rx_ms_(opened_ms_) {}

    void start() {
        d_->hooks_.on_open(id_, peer_);
        spdlog::debug("ingest: connection {} from {}", id_, peer_);
        hello_timer_.expires_after(std::chrono::milliseconds(d_->cfg_.hello_timeout_ms));
        hello_timer_.async_wait([self = this->shared_from_this()](const boost::system::error_code& ec) {
            if (ec || self->hello_ || self->done_) return;
            self->refuse("no Hello within " + std::to_string(self->d_->cfg_.hello_timeout_ms) +
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
            if (ec != asio::error::operation_aborted && !d_->stopping_)
                spdlog::info("ingest: connection {} ({}) closed{}", id_, peer_,
                             ec == asio::error::eof ? "" : ": " + ec.message());
            finish();
            return;
        }
        last_rx_ms_ = steady_clock_ms();
        // buf_ is not read into again until deliver() has run: one chunk in flight per connection.
        asio::post(d_->decode_io_, [self = this->shared_from_this(), n, arrived = steady::now()] {
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
        note_skipped();
        asio::post(d_->io_, [self = this->shared_from_this(), msgs = std::move(msgs), error = std::move(error),
                             arrived]() mutable { self->deliver(std::move(msgs), std::move(error), arrived); });
    }

    // Decode thread: frames of a newer plugin's message types are skipped; said once per connection.
    void note_skipped() {
        if (const uint64_t k = dec_.skipped(); k > skipped_seen_) {
            if (skipped_seen_ == 0)
                spdlog::warn("ingest: connection {} ({}) sent message type {}, which this ibfabricd does not know: "
                             "skipped, as every later one of this connection (a newer plugin? upgrade ibfabricd; "
                             "docs/wire.md \"Versioning\")",
                             id_, peer_, dec_.last_skipped_type());
            skipped_seen_ = k;
        }
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
            if (!d_->hooks_.on_message(id_, std::move(m), decode_ms, arrived)) {
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
        d_->hooks_.on_error(id_);
        finish();
    }

    void finish() {
        if (done_) return;
        done_ = true;
        hello_timer_.cancel();
        close();
        d_->conns_.erase(id_);
        d_->hooks_.on_close(id_);
    }

    IngestServer* d_;
    Sock sock_;
    uint64_t id_;
    std::string peer_;
    wire::Decoder dec_;
    uint64_t skipped_seen_ = 0;  // decode thread: frames of unknown types skipped so far (logged once)
    asio::steady_timer hello_timer_;
    int64_t opened_ms_, last_rx_ms_;  // steady_clock_ms()
    bool hello_ = false;              // a Hello was accepted on this connection
    std::array<char, 64 * 1024> buf_;
    bool done_ = false;
};

IngestServer::IngestServer(asio::io_context& io, const DaemonConfig& c, IngestHooks hooks)
    : io_(io), cfg_(c), hooks_(std::move(hooks)), unix_acc_(io), tcp_acc_(io) {
    if (!c.tcp_bind.empty()) open_tcp();
    bind_unix();
    decode_guard_.emplace(decode_io_.get_executor());
    decode_thread_ = std::thread([this] { decode_io_.run(); });
}

IngestServer::~IngestServer() {
    decode_guard_.reset();
    decode_io_.stop();
    if (decode_thread_.joinable()) decode_thread_.join();
    remove_socket_file();
}

// Optional TCP ingest. Beyond loopback it needs tcp_key_file: every peer then proves the key in
// its Hello (ibf/wire_auth.h); without one, anybody who reaches the port could feed a fabric.
void IngestServer::open_tcp() {
    const DaemonConfig& c = cfg_;
    const std::string where = c.source.empty() ? "ibfabricd" : c.source;
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(c.tcp_bind, ec);
    if (ec) throw InputError(c.source, 0, 0, "tcp bind address '" + c.tcp_bind + "' is not an IP address");
    if (!c.tcp_key_file.empty()) {
        wire::KeyCheck k = wire::read_key_file(c.tcp_key_file);
        if (!k.error.empty()) throw InputError(where, 0, 0, "tcp_key_file " + k.error);
        tcp_key_ = std::move(k.key);
    } else if (!addr.is_loopback()) {
        throw InputError(where, 0, 0, "tcp ingest on " + c.tcp_bind +
                                          " (not loopback) needs tcp_key_file: refusing unauthenticated ingest "
                                          "from the network (docs/daemon.md)");
    }
    tcp::endpoint ep(addr, c.tcp_port);
    tcp_acc_.open(ep.protocol());
    tcp_acc_.set_option(asio::socket_base::reuse_address(true));
    tcp_acc_.bind(ep, ec);
    if (ec) throw std::runtime_error("cannot bind TCP ingest " + endpoint_string(ep) + ": " + ec.message());
    tcp_acc_.listen();
    tcp_port_ = tcp_acc_.local_endpoint().port();
    spdlog::info("ingest: listening on tcp {} ({})", endpoint_string(tcp_acc_.local_endpoint()),
                 tcp_key_.empty() ? "no authentication: loopback only" : "Hello MAC required, key " + c.tcp_key_file);
}

void IngestServer::bind_unix() {
    const DaemonConfig& c = cfg_;
    const std::string& path = c.socket_path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            throw std::runtime_error(path + ": exists and is not a socket; refusing to replace it");
        unix_proto::socket probe(io_);
        boost::system::error_code ec;
        probe.connect(unix_proto::endpoint(path), ec);
        if (!ec) throw std::runtime_error(path + ": another daemon is listening on this socket");
        if (::unlink(path.c_str()) != 0)
            throw std::runtime_error(path + ": cannot remove the stale socket: " + std::strerror(errno));
        spdlog::info("ingest: removed stale socket {}", path);
    }
    boost::system::error_code ec;
    unix_proto::endpoint ep(path);
    unix_acc_.open(ep.protocol());
    const mode_t old = ::umask(static_cast<mode_t>(0777 & ~c.socket_mode));
    unix_acc_.bind(ep, ec);
    ::umask(old);
    if (ec) throw std::runtime_error(path + ": cannot bind the ingest socket: " + ec.message());
    socket_created_ = true;
    if (::chmod(path.c_str(), static_cast<mode_t>(c.socket_mode)) != 0)
        throw std::runtime_error(path + ": cannot chmod: " + std::strerror(errno));
    if (::lstat(path.c_str(), &st) == 0) socket_ino_ = st.st_ino;
    unix_acc_.listen();
    spdlog::info("ingest: listening on unix {} (mode {:04o})", path, c.socket_mode);
}

void IngestServer::remove_socket_file() {
    if (!socket_created_) return;
    socket_created_ = false;
    struct stat st {};
    const std::string& path = cfg_.socket_path;
    // Only our own socket: another daemon may have replaced it meanwhile.
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == socket_ino_) ::unlink(path.c_str());
}

void IngestServer::start() {
    accept_unix();
    if (tcp_acc_.is_open()) accept_tcp();
}

void IngestServer::close() {
    stopping_ = true;
    boost::system::error_code ec;
    unix_acc_.close(ec);
    tcp_acc_.close(ec);
    for (auto& [id, w] : conns_)
        if (auto p = w.lock()) p->close();
    remove_socket_file();
}

template <class Sock>
void IngestServer::start_conn(Sock sock, std::string peer) {
    if (conns_.size() >= cfg_.max_plugin_connections && !make_room(peer)) {
        refusal("ingest: refusing a connection from " + peer + ": " + std::to_string(conns_.size()) +
                " plugin connections open, all live (limits.max_plugin_connections)");
        boost::system::error_code ec;
        sock.close(ec);
        return;
    }
    const uint64_t id = hooks_.next_id();
    auto conn = std::make_shared<Conn<Sock>>(this, std::move(sock), id, std::move(peer));
    conns_[id] = conn;
    conn->start();
}

// Every slot is taken: a connection that has not said Hello (open over a second), or one silent for
// limits.stale_connection_ms, gives way to the newcomer (ingest_victim). False: all are live.
bool IngestServer::make_room(const std::string& peer) {
    std::vector<IngestSlot> slots;
    for (auto& [id, w] : conns_)
        if (auto c = w.lock()) slots.push_back(c->slot());
    const int64_t now = steady_clock_ms();
    const auto victim = ingest_victim(slots, now, cfg_.stale_connection_ms, kHelloGraceMs);
    if (!victim) return false;
    auto c = conns_[*victim].lock();
    if (!c) return false;
    const IngestSlot s = c->slot();
    c->evict(s.said_hello ? "silent for " + std::to_string(now - s.last_rx_ms) + " ms, its slot goes to " + peer
                          : "no Hello after " + std::to_string(now - s.opened_ms) + " ms, its slot goes to " + peer);
    return true;
}

std::string IngestServer::check_hello(bool is_tcp, const wire::Hello& h) {
    if (!is_tcp || tcp_key_.empty()) return "";  // Unix sockets: the file mode is the access control
    wire::AuthVerdict v = wire::verify_hello(h, tcp_key_, wall_clock_ms(), nonces_);
    return v.ok ? "" : "unauthenticated: " + v.reason;
}

void IngestServer::refusal(const std::string& line) {
    if (auto held = refusal_log_.allow(steady_clock_ms())) spdlog::warn("{}{}", line, LogLimit::suffix(*held));
}

void IngestServer::accept_unix() {
    unix_acc_.async_accept([this](const boost::system::error_code& ec, unix_proto::socket s) {
        if (ec == asio::error::operation_aborted || stopping_) return;
        if (!ec) start_conn(std::move(s), "unix");
        else spdlog::warn("ingest: accept failed: {}", ec.message());
        accept_unix();
    });
}

void IngestServer::accept_tcp() {
    tcp_acc_.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || stopping_) return;
        if (!ec) {
            boost::system::error_code e2;
            auto ep = s.remote_endpoint(e2);
            start_conn(std::move(s), e2 ? std::string("tcp") : endpoint_string(ep));
        } else {
            spdlog::warn("ingest: tcp accept failed: {}", ec.message());
        }
        accept_tcp();
    });
}

}  // namespace ibf
