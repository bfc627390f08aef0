// call_sm_helper(): one request, one answer line over the helper's Unix socket
// (ibf/sm_helper_client.h).
#include "ibf/sm_helper_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ibf {
namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
    int fd;
    ~Fd() { ::close(fd); }
};

// Waits for `events` on fd until `deadline`; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

void send_all(int fd, const std::string& data, Clock::time_point deadline, const std::string& who) {
    size_t off = 0;
    while (off < data.size()) {
        if (!wait_for(fd, POLLOUT, deadline)) throw std::runtime_error(who + ": timed out sending the request");
        const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) throw std::runtime_error(who + ": cannot send: " + std::strerror(errno));
        off += static_cast<size_t>(n);
    }
}

std::string read_answer(int fd, Clock::time_point deadline, const std::string& who) {
    std::string answer;
    char buf[512];
    while (answer.size() < 4096) {
        if (!wait_for(fd, POLLIN, deadline)) throw std::runtime_error(who + ": no answer in time");
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) throw std::runtime_error(who + ": cannot read the answer: " + std::strerror(errno));
        if (n == 0) break;
        answer.append(buf, static_cast<size_t>(n));
    }
    const size_t nl = answer.find('\n');
    if (nl == std::string::npos) throw std::runtime_error(who + ": the helper closed without an answer line");
    return answer.substr(0, nl);
}

}  // namespace

std::string call_sm_helper(const std::string& socket_path, const std::string& request, int timeout_ms) {
    const std::string who = "sm helper " + socket_path;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) throw std::runtime_error(who + ": path too long");
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
    if (s.fd < 0) throw std::runtime_error(who + ": socket: " + std::strerror(errno));
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno != EINPROGRESS) throw std::runtime_error(who + ": cannot connect: " + std::strerror(errno));
        if (!wait_for(s.fd, POLLOUT, deadline)) throw std::runtime_error(who + ": timed out connecting");
    }
    send_all(s.fd, request, deadline, who);
    ::shutdown(s.fd, SHUT_WR);
    const std::string line = read_answer(s.fd, deadline, who);
    if (line.rfind("ok", 0) == 0) return line.size() > 3 ? line.substr(3) : "";
    throw std::runtime_error(who + ": " + (line.rfind("error: ", 0) == 0 ? line.substr(7) : "unexpected answer '" + line + "'"));
}

int answer_field(const std::string& answer, const std::string& name) {
    const std::string key = name + "=";
    size_t at = answer.find(key);
    while (at != std::string::npos && at != 0 && answer[at - 1] != ' ') at = answer.find(key, at + 1);
    if (at == std::string::npos) return -1;
    const char* p = answer.c_str() + at + key.size();
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    return end == p || v < 0 || v > 1 << 30 ? -1 : static_cast<int>(v);
}

}  // namespace ibf
