// ibfabricd's plugin ingest, the Asio half: the Unix socket (and the optional TCP listener), one
// connection object per plugin with its own wire::Decoder, the decode thread, admission (each
// transport's Hello slots and pre-Hello pool: ingest_policy.h), the Hello deadline, on TCP with a
// tcp_key_file the Hello MAC, and on the Unix socket the peer's uid (SO_PEERCRED against
// socket_users) (docs/daemon.md "Ingest limits and authentication"). It decides
// nothing about SMs: every decoded message goes to the daemon through IngestHooks, on the io
// thread (docs/threading.md).
//
//   ibf::IngestServer in(io, cfg, {.on_open = ..., .on_message = ..., .on_error = ..., .on_close = ...});
//   in.start();     // accepting (io thread from now on)
//   in.close();     // listeners and connections closed, the socket file removed
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <thread>
#include <vector>

#include <sys/types.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange
#include <boost/asio.hpp>

#include "ibf/daemon_config.h"
#include "ibf/ingest_policy.h"
#include "ibf/log_limit.h"
#include "ibf/wire.h"
#include "ibf/wire_auth.h"

namespace ibf {

// "10.0.0.1:8639", "[::1]:8639".
std::string endpoint_string(const boost::asio::ip::tcp::endpoint& e);

// The daemon's side of each connection; every hook runs on the io thread.
struct IngestHooks {
    std::function<uint64_t()> next_id;                                   // a fresh connection id
    std::function<void(uint64_t id, const std::string& peer)> on_open;   // accepted
    // One decoded message in order; false: a protocol error (a message before Hello): dropped.
    std::function<bool(uint64_t id, wire::Message&& m, double decode_ms,
                       std::chrono::steady_clock::time_point arrived)> on_message;
    std::function<void(uint64_t id)> on_error;   // dropped for its input or its Hello (then on_close)
    std::function<void(uint64_t id)> on_close;   // gone, for whatever reason
    // A connection closed at accept, before it had an id: "peer_uid" (a Unix peer not in
    // socket_users) or "slots_full" (every Hello slot held by a live plugin).
    std::function<void(const std::string& reason)> on_refused;
};

// The uids that may connect to the Unix socket: each of `users` (a user name, or a number),
// looked up in the user database; with none, root and this process's effective uid. InputError
// (naming `file`) for a user that does not exist.
std::vector<uid_t> resolve_socket_users(const std::vector<std::string>& users, const std::string& file);

class IngestServer {
public:
    // Binds the TCP listener (when c.tcp_bind is set) and the Unix socket; throws InputError for a
    // bad address or key file, std::runtime_error for a socket that cannot be bound. Starts the
    // decode thread.
    IngestServer(boost::asio::io_context& io, const DaemonConfig& c, IngestHooks hooks);
    ~IngestServer();  // joins the decode thread, removes the socket file
    IngestServer(const IngestServer&) = delete;
    IngestServer& operator=(const IngestServer&) = delete;

    void start();   // io thread: accept on every listener
    void close();   // io thread: listeners and connections closed, the socket file removed
    void remove_socket_file();  // only ours (same inode); idempotent
    uint16_t tcp_port() const { return tcp_port_; }  // 0: no TCP listener

    // A plugin connection (ingest_server.cpp), as the server's admission sees it.
    struct ConnBase {
        virtual ~ConnBase() = default;
        virtual void close() = 0;
        virtual IngestSlot slot() const = 0;
        virtual bool is_tcp() const = 0;
        virtual void evict(const std::string& why) = 0;  // closes it now, with one (rate-limited) log line
    };
    template <class Sock>
    class Conn;

private:
    void open_tcp();
    void bind_unix();
    void accept_unix();
    void accept_tcp();
    template <class Sock>
    void start_conn(Sock sock, std::string peer, std::string source);
    std::vector<IngestSlot> slots(bool tcp, uint64_t except = 0) const;  // open connections of one transport
    std::string admit_hello(bool tcp, uint64_t id, const std::string& peer);  // "" = a Hello slot is its
    void close_pre_hello_if_no_room(bool tcp);
    bool unix_peer_allowed(const boost::asio::local::stream_protocol::socket& s);
    std::string check_hello(bool tcp, const wire::Hello& h);  // "" = accepted, else why not
    void refusal(const std::string& line);                      // rate-limited warning

    boost::asio::io_context& io_;
    DaemonConfig cfg_;
    IngestHooks hooks_;
    boost::asio::local::stream_protocol::acceptor unix_acc_;
    boost::asio::ip::tcp::acceptor tcp_acc_;
    uint16_t tcp_port_ = 0;
    ino_t socket_ino_ = 0;
    bool socket_created_ = false;
    bool stopping_ = false;
    IngestLimits limits_;          // from cfg_ (per transport)
    std::vector<uid_t> unix_uids_;  // socket_users, resolved at start
    std::string tcp_key_;          // tcp_key_file's key; "" = TCP Hellos need no MAC
    wire::NonceWindow nonces_;     // authenticated Hellos seen within the window (replays)
    LogLimit refusal_log_{10000, 5};  // refusals and drops: a few lines, then a count
    std::map<uint64_t, std::weak_ptr<ConnBase>> conns_;  // open connections
    // Decoding runs here, off the io thread (a 2.6k-node snapshot takes ~45 ms to decode).
    boost::asio::io_context decode_io_{1};
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> decode_guard_;
    std::thread decode_thread_;
};

}  // namespace ibf
