// Small, test-local helpers for the sm-plugin tests: a temp dir, child processes killed by pid,
// waiting on a log line, and a Unix-socket listener that decodes wire frames.
// (lab/ has the full process runner; these stay deliberately tiny.)
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ibf/wire.h"

namespace ibf::test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

class TempDir {
public:
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "ibf-plugin-XXXXXX").string();
        if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
        path_ = t;
    }
    ~TempDir() {
        std::error_code ec;
        if (!std::getenv("IBF_KEEP_TMP")) std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& f) const { return path_ + "/" + f; }

private:
    std::string path_;
};

inline void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A child process, SIGKILLed (by pid) and reaped when destroyed unless already stopped.
class Child {
public:
    Child() = default;
    // stdin_path: "" = /dev/null (a fifo path keeps ibsim's console fed without EOF).
    Child(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& cwd,
          const std::string& out_file, const std::string& stdin_path = "") {
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
            ::setpgid(0, 0);
            if (::chdir(cwd.c_str()) != 0) ::_exit(126);
            int in = ::open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY);
            int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(in, 0);
            ::dup2(out, 1);
            ::dup2(out, 2);
            for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
    }
    Child(Child&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
    Child& operator=(Child&& o) noexcept {
        if (this != &o) {
            kill_now();
            pid_ = o.pid_;
            o.pid_ = -1;
        }
        return *this;
    }
    ~Child() { kill_now(); }

    pid_t pid() const { return pid_; }
    bool running() {
        if (pid_ <= 0) return false;
        int st;
        pid_t r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            status_ = st;
            pid_ = -1;
            return false;
        }
        return true;
    }
    // SIGTERM, wait up to `grace`, then SIGKILL. Returns true when it exited within the grace.
    bool stop(std::chrono::milliseconds grace) {
        if (!running()) return true;
        ::kill(pid_, SIGTERM);
        auto deadline = Clock::now() + grace;
        while (Clock::now() < deadline) {
            if (!running()) return true;
            std::this_thread::sleep_for(10ms);
        }
        kill_now();
        return false;
    }
    void kill_now() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int st;
            ::waitpid(pid_, &st, 0);
            status_ = st;
            pid_ = -1;
        }
    }
    int status() const { return status_; }

private:
    pid_t pid_ = -1;
    int status_ = 0;
};

inline bool wait_for_text(const std::string& file, const std::string& needle, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        if (read_file(file).find(needle) != std::string::npos) return true;
        std::this_thread::sleep_for(20ms);
    }
    return false;
}

// Listens on a Unix socket path; accepts one connection at a time and decodes wire frames.
class Listener {
public:
    explicit Listener(const std::string& path) : path_(path) {
        ::unlink(path.c_str());
        lfd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        if (::bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd_, 4) != 0)
            throw std::runtime_error("cannot listen on " + path + ": " + std::strerror(errno));
    }
    ~Listener() {
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
        auto deadline = Clock::now() + timeout;
        for (;;) {
            if (auto m = dec_.next()) return m;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
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
        auto deadline = Clock::now() + timeout;
        while (Clock::now() < deadline) {
            auto m = next(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
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

}  // namespace ibf::test
