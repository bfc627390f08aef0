// Shared helpers for the daemon's tests (tests/state, api, pipeline, daemon, history, doctor): temp
// dirs, synthetic snapshots, a raw Unix-socket plugin stand-in, polling.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "ibf/snapshot.h"
#include "ibf/synth.h"
#include "ibf/wire.h"

namespace ibf::test {

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        char tmpl[] = "/tmp/ibfctl-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::string write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
    return path;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A 2-level fat-tree: 2 leaves (4 hosts each), 4 spines.
inline Fabric small_fabric() { return synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8}); }

inline constexpr Guid kMasterGuid = 0x0002c90300000001ULL;
inline constexpr Guid kStandbyGuid = 0x0002c90300000002ULL;

inline wire::Hello hello(Guid g, SmState st, uint16_t lid = 1, uint8_t prio = 15) {
    wire::Hello h;
    h.osm_version = "OpenSM 3.3.23";
    h.plugin_version = "0.1.0";
    h.sm = SmInfo{.port_guid = g, .lid = lid, .priority = prio, .state = st, .act_count = 7};
    h.pid = 4242;
    return h;
}

inline Snapshot snapshot(const Fabric& f, Guid g, SmState st, uint64_t seq, uint16_t lid = 1) {
    Snapshot s;
    s.osm_version = "OpenSM 3.3.23";
    s.self = SmInfo{.port_guid = g, .lid = lid, .priority = 15, .state = st, .act_count = 7};
    s.master_lid = st == SmState::Master ? lid : 0;
    s.sweep_seq = seq;
    s.taken_unix_ms = 1764468000000 + static_cast<int64_t>(seq) * 1000;
    s.routing_engine = "ftree";
    s.fabric = f;
    return s;
}

// Polls `pred` every 10 ms until it holds or `timeout` passes.
inline bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
}

// A plugin stand-in: a blocking client that writes frames (UnixClient, TcpClient).
class RawClient {
public:
    ~RawClient() { close(); }
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;

    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    // False when the peer has closed (EPIPE / reset).
    bool send(const std::string& bytes) {
        size_t off = 0;
        while (off < bytes.size()) {
            ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
            if (n <= 0) return false;
            off += static_cast<size_t>(n);
        }
        return true;
    }
    bool send(const wire::Message& m) { return send(wire::encode(m)); }
    // True when the daemon closed this connection within `timeout` (it never writes).
    bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
        char c;
        return ::recv(fd_, &c, 1, MSG_DONTWAIT) <= 0;
    }

protected:
    RawClient() = default;
    int fd_ = -1;
};

class UnixClient : public RawClient {
public:
    explicit UnixClient(const std::string& path) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        path.copy(a.sun_path, sizeof a.sun_path - 1);
        if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("cannot connect to " + path);
    }
};

// To 127.0.0.1:port.
class TcpClient : public RawClient {
public:
    explicit TcpClient(uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
    }
};

}  // namespace ibf::test
