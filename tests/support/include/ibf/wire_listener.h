// A stand-in for ibfabricd in plugin tests: listens on a Unix socket path, accepts one
// connection at a time and decodes the plugin's wire frames.
//
//   ibf::test_support::WireListener l(fx.tmp / "s.sock");
//   ASSERT_TRUE(l.accept(10s));
//   auto snap = l.next_of<ibf::Snapshot>(10s);   // skips other messages
//   l.drop();                                     // a controller restart: the plugin reconnects
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#include "ibf/wire.h"

namespace ibf::test_support {

// Listens on a Unix socket path; accepts one connection at a time and decodes wire frames.
class WireListener {
public:
    explicit WireListener(const std::string& path) : path_(path) {
        ::unlink(path.c_str());
        lfd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        if (::bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd_, 4) != 0)
            throw std::runtime_error("cannot listen on " + path + ": " + std::strerror(errno));
    }
    WireListener(const WireListener&) = delete;
    WireListener& operator=(const WireListener&) = delete;
    ~WireListener() {
        drop();
        ::close(lfd_);
        ::unlink(path_.c_str());
    }
    bool accept(std::chrono::milliseconds timeout) {
        pollfd p{lfd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
        drop();
        cfd_ = ::accept4(lfd_, nullptr, nullptr, SOCK_CLOEXEC);
        dec_ = wire::Decoder();
        return cfd_ >= 0;
    }
    void drop() {
        if (cfd_ >= 0) ::close(cfd_);
        cfd_ = -1;
    }
    int fd() const { return cfd_; }
    // Next message on the current connection, or nullopt on timeout / EOF.
    std::optional<wire::Message> next(std::chrono::milliseconds timeout) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            if (auto m = dec_.next()) return m;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
            if (left <= 0 || cfd_ < 0) return std::nullopt;
            pollfd p{cfd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
            char buf[65536];
            ssize_t n = ::read(cfd_, buf, sizeof buf);
            if (n <= 0) return std::nullopt;
            dec_.feed(buf, static_cast<size_t>(n));
        }
    }
    // Skips other messages until one of type T arrives.
    template <class T>
    std::optional<T> next_of(std::chrono::milliseconds timeout) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            auto m = next(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
            if (!m) return std::nullopt;
            if (auto* t = std::get_if<T>(&*m)) return std::move(*t);
        }
        return std::nullopt;
    }

private:
    std::string path_;
    int lfd_ = -1, cfd_ = -1;
    wire::Decoder dec_;
};

}  // namespace ibf::test_support
