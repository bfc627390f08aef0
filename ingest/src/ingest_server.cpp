// IngestServer: listeners, one Conn per plugin connection, the decode thread (ibf/ingest_server.h).
#include "ibf/ingest_server.h"

#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
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

}  // namespace

std::vector<uid_t> resolve_socket_users(const std::vector<std::string>& users, const std::string& file) {
    std::vector<uid_t> out;
    if (users.empty()) {
        out.push_back(0);
        if (::geteuid() != 0) out.push_back(::geteuid());
        return out;
    }
    for (const std::string& u : users) {
        unsigned long n = 0;
        auto [end, ec] = std::from_chars(u.data(), u.data() + u.size(), n);
        if (ec == std::errc() && end == u.data() + u.size() && n < 0xffffffffUL) {
            out.push_back(static_cast<uid_t>(n));
            continue;
        }
        passwd pw{}, *found = nullptr;
        std::array<char, 4096> buf{};
        if (::getpwnam_r(u.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
            throw InputError(file, 0, 0, "socket_users: no user '" + u + "' on this host");
        out.push_back(found->pw_uid);
    }
    return out;
}

std::string endpoint_string(const tcp::endpoint& e) {
    boost::system::error_code ec;
    std::string a = e.address().to_string(ec);
    if (e.address().is_v6()) a = "[" + a + "]";
    return a + ":" + std::to_string(e.port());
}

// One plugin connection: its own Decoder; malformed input closes only this connection. Until its
// Hello: frames are limited to 64 KiB, a timer closes it after limits.hello_timeout_ms, on TCP
// with a tcp_key_file the Hello must carry a valid MAC, and the Hello must find a Hello slot
// (docs/daemon.md, "Ingest limits and authentication").
template <class Sock>
class IngestServer::Conn : public IngestServer::ConnBase, public std::enable_shared_from_this<IngestServer::Conn<Sock>> {
public:
    static constexpr bool kTcp = std::is_same_v<Sock, tcp::socket>;

    Conn(IngestServer* d, Sock s, uint64_t id, std::string peer, std::string source)
        : d_(d), sock_(std::move(s)), id_(id), peer_(std::move(peer)), source_(std::move(source)),
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
    IngestSlot slot() const override {
        boost::system::error_code ec;
        const bool waiting = sock_.available(ec) > 0 && !ec;  // FIONREAD: a Hello not read yet
        return {id_, hello_, opened_ms_, last_rx_ms_, source_, received_ || waiting};
    }
    bool is_tcp() const override { return kTcp; }
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
        received_ = true;
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
                if (std::string why = d_->admit_hello(kTcp, id_, peer_); !why.empty()) {
                    refuse(why + " (SM " + guid_hex(h.sm.port_guid) + ")");
                    return;
                }
                hello_ = true;
                hello_timer_.cancel();
                d_->close_pre_hello_if_no_room(kTcp);
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
    std::string source_;  // the per-source limit's key: the TCP address, "uid N" on the Unix socket
    wire::Decoder dec_;
    uint64_t skipped_seen_ = 0;  // decode thread: frames of unknown types skipped so far (logged once)
    asio::steady_timer hello_timer_;
    int64_t opened_ms_, last_rx_ms_;  // steady_clock_ms()
    bool received_ = false;           // any byte read (a Hello on its way counts as speaking)
    bool hello_ = false;              // a Hello was accepted on this connection
    std::array<char, 64 * 1024> buf_;
    bool done_ = false;
};

IngestServer::IngestServer(asio::io_context& io, const DaemonConfig& c, IngestHooks hooks)
    : io_(io), cfg_(c), hooks_(std::move(hooks)), unix_acc_(io), tcp_acc_(io) {
    limits_ = {.max_connections = c.max_plugin_connections,
               .max_pre_hello = c.max_plugin_connections,
               .max_pre_hello_per_source = c.max_pre_hello_per_source,
               .stale_ms = c.stale_connection_ms};
    unix_uids_ = resolve_socket_users(c.socket_users, c.source.empty() ? "ibfabricd" : c.source);
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
void IngestServer::start_conn(Sock sock, std::string peer, std::string source) {
    constexpr bool is_tcp = std::is_same_v<Sock, tcp::socket>;
    const int64_t now = steady_clock_ms();
    const Admission a = admit_connection(slots(is_tcp), source, limits_, now);
    if (a.refuse) {
        refusal("ingest: refusing a " + std::string(is_tcp ? "tcp" : "unix") + " connection from " + peer + ": " +
                a.why);
        if (hooks_.on_refused) hooks_.on_refused("slots_full");
        boost::system::error_code ec;
        sock.close(ec);
        return;
    }
    if (a.evict) {
        if (auto c = conns_[*a.evict].lock()) {
            const IngestSlot s = c->slot();
            c->evict("no Hello after " + std::to_string(now - s.opened_ms) + " ms, its slot goes to " + peer + ": " +
                     a.why);
        }
    }
    const uint64_t id = hooks_.next_id();
    auto conn = std::make_shared<Conn<Sock>>(this, std::move(sock), id, std::move(peer), std::move(source));
    conns_[id] = conn;
    conn->start();
}

std::vector<IngestSlot> IngestServer::slots(bool is_tcp, uint64_t except) const {
    std::vector<IngestSlot> out;
    for (const auto& [id, w] : conns_)
        if (auto c = w.lock(); c && id != except && c->is_tcp() == is_tcp) out.push_back(c->slot());
    return out;
}

// A Hello was accepted on connection `id`: it needs one of its transport's Hello slots; a stale
// connection gives way (ingest_policy.h). "" = it has one, else why not.
std::string IngestServer::admit_hello(bool is_tcp, uint64_t id, const std::string& peer) {
    const int64_t now = steady_clock_ms();
    const Admission a = ibf::admit_hello(slots(is_tcp, id), limits_, now);
    if (a.refuse) {
        if (hooks_.on_refused) hooks_.on_refused("slots_full");
        return a.why;
    }
    if (a.evict)
        if (auto c = conns_[*a.evict].lock())
            c->evict("silent for " + std::to_string(now - c->slot().last_rx_ms) + " ms, its slot goes to " + peer);
    return "";
}

// Every Hello slot of the transport is held by a live plugin: the connections still without Hello
// could not get one, so they are closed now rather than at their Hello deadline.
void IngestServer::close_pre_hello_if_no_room(bool is_tcp) {
    const std::vector<IngestSlot> open = slots(is_tcp);
    if (!hello_slots_all_live(open, limits_, steady_clock_ms())) return;
    for (const IngestSlot& s : open)
        if (!s.said_hello)
            if (auto c = conns_[s.id].lock())
                c->evict("every Hello slot is held by a live plugin (limits.max_plugin_connections)");
}

std::string IngestServer::check_hello(bool is_tcp, const wire::Hello& h) {
    if (!is_tcp || tcp_key_.empty()) return "";  // Unix sockets: the file mode and the peer's uid (at accept)
    wire::AuthVerdict v = wire::verify_hello(h, tcp_key_, wall_clock_ms(), nonces_);
    return v.ok ? "" : "unauthenticated: " + v.reason;
}

void IngestServer::refusal(const std::string& line) {
    if (auto held = refusal_log_.allow(steady_clock_ms())) spdlog::warn("{}{}", line, LogLimit::suffix(*held));
}

void IngestServer::accept_unix() {
    unix_acc_.async_accept([this](const boost::system::error_code& ec, unix_proto::socket s) {
        if (ec == asio::error::operation_aborted || stopping_) return;
        if (!ec) {
            ucred cr{};
            socklen_t len = sizeof cr;
            const bool known = ::getsockopt(s.native_handle(), SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0;
            if (known && std::find(unix_uids_.begin(), unix_uids_.end(), cr.uid) != unix_uids_.end()) {
                start_conn(std::move(s), "unix", "uid " + std::to_string(cr.uid));
            } else {
                refusal(known ? "ingest: refusing a unix connection from pid " + std::to_string(cr.pid) + " uid " +
                                    std::to_string(cr.uid) + ": not one of socket_users (docs/daemon.md)"
                              : std::string("ingest: refusing a unix connection: its peer's uid is unknown (SO_PEERCRED: ") +
                                    std::strerror(errno) + ")");
                if (hooks_.on_refused) hooks_.on_refused("peer_uid");
                boost::system::error_code e2;
                s.close(e2);
            }
        } else {
            spdlog::warn("ingest: accept failed: {}", ec.message());
        }
        accept_unix();
    });
}

void IngestServer::accept_tcp() {
    tcp_acc_.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || stopping_) return;
        if (!ec) {
            boost::system::error_code e2;
            auto ep = s.remote_endpoint(e2);
            boost::system::error_code e3;
            std::string source = e2 ? std::string("tcp") : ep.address().to_string(e3);
            start_conn(std::move(s), e2 ? std::string("tcp") : endpoint_string(ep), std::move(source));
        } else {
            spdlog::warn("ingest: tcp accept failed: {}", ec.message());
        }
        accept_tcp();
    });
}

}  // namespace ibf
