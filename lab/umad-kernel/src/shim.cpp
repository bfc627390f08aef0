// libibf_umad_kernel.so: an LD_PRELOAD shim, placed before umad2sim, that gives the lab's OpenSM
// two things the kernel and the HCA do on hardware and umad2sim/ibsim do not (docs/lab.md "What the
// kernel does that umad2sim does not"):
// - MAD timeouts (mad_timeouts.h says why). It interposes libibumad's umad_send() and umad_recv()
//   and forwards to the real ones (dlsym RTLD_NEXT): a request that expects a response is tracked,
//   resent on each timeout while retries are left and then handed back to the reader with status
//   ETIMEDOUT, as ib_umad's send_handler does.
// - IsSM kept while the issm device is open. ibsim's ReLink copies the default PortInfo over both
//   ends, so an SM's port loses IsSM at each flap of its cable although its OpenSM still holds issm
//   open (ha-facts.md section 6); on hardware the bit belongs to the open device. The shim watches
//   open()/close() of the issm path and, while it is open, opens it again every kIssmMs: umad2sim
//   turns each open into ibsim's SIM_CTL_SET_ISSM, which changes nothing while the bit is set and
//   sets it again (with ibsim's trap 144) after a relink took it.
//
// Threads: OpenSM sends from several threads and reads on one (umad_receiver). The state is one per
// process (an LD_PRELOAD shim has no other place for it) behind one mutex; resends and the real
// calls run outside it. The reader waits at most kTickMs at a time, so a request another thread sent
// while it waited times out within kTickMs of its deadline.
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <string>

#include "ibf/mad_timeouts.h"

namespace {

constexpr int64_t kTickMs = 20;
constexpr int64_t kIssmMs = 500;
constexpr const char* kIssmPrefix = "/dev/infiniband/issm";

using SendFn = int (*)(int, int, void*, int, int, int);
using RecvFn = int (*)(int, void*, int*, int);
using OpenFn = int (*)(const char*, int, ...);
using CloseFn = int (*)(int);

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct Shim {
    SendFn send = reinterpret_cast<SendFn>(dlsym(RTLD_NEXT, "umad_send"));
    RecvFn recv = reinterpret_cast<RecvFn>(dlsym(RTLD_NEXT, "umad_recv"));
    OpenFn open = reinterpret_cast<OpenFn>(dlsym(RTLD_NEXT, "open"));    // umad2sim's
    CloseFn close = reinterpret_cast<CloseFn>(dlsym(RTLD_NEXT, "close"));
    std::mutex mu;
    ibf::MadTimeouts table{sizeof(ib_user_mad_t)};
    std::string issm_path;  // while OpenSM holds the issm device open ("" = not open)
    int issm_fd = -1;
    int64_t issm_at_ms = 0;  // when IsSM was last asserted
};

Shim& shim() {
    static Shim s;  // the process's one table (see the file comment)
    return s;
}

std::span<const uint8_t> bytes(const void* p, size_t n) { return {static_cast<const uint8_t*>(p), n}; }

void log_timed_out(const std::vector<uint8_t>& umad) {
    const auto mad = bytes(umad.data(), umad.size()).subspan(sizeof(ib_user_mad_t));
    const auto key = ibf::mad_key(mad);
    if (!key) return;
    std::fprintf(stderr, "ibf-umad-kernel: no response to class 0x%02x method 0x%02x attr 0x%02x%02x tid 0x%08x: "
                 "handed back with ETIMEDOUT\n", key->mgmt_class, mad[3], mad[16], mad[17], key->tid_low);
}

// Copies a timed-out request into the reader's buffer as the kernel returns it.
int hand_back(ibf::MadTimeouts::Due& d, void* umad, int* length) {
    const size_t room = sizeof(ib_user_mad_t) + static_cast<size_t>(std::max(*length, 0));
    const size_t n = std::min(d.umad.size(), room);
    std::memcpy(umad, d.umad.data(), n);
    auto* h = static_cast<ib_user_mad_t*>(umad);
    h->status = ETIMEDOUT;
    h->length = static_cast<uint32_t>(n);
    *length = static_cast<int>(n - sizeof(ib_user_mad_t));
    return static_cast<int>(h->agent_id);
}

// Sets IsSM again when it is due and OpenSM holds the issm device (see the file comment).
void keep_issm(Shim& s, int64_t now) {
    std::string path;
    {
        std::lock_guard lock(s.mu);
        if (s.issm_path.empty() || now - s.issm_at_ms < kIssmMs) return;
        s.issm_at_ms = now;
        path = s.issm_path;
    }
    if (s.open) s.open(path.c_str(), O_RDWR | O_NONBLOCK);  // umad2sim: the same fd, no new one
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
    Shim& s = shim();
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    if (!s.open) {
        errno = ENOSYS;
        return -1;
    }
    const int fd = s.open(path, flags, mode);
    if (fd >= 0 && std::strncmp(path, kIssmPrefix, std::strlen(kIssmPrefix)) == 0) {
        std::lock_guard lock(s.mu);
        s.issm_path = path;
        s.issm_fd = fd;
        s.issm_at_ms = now_ms();
    }
    return fd;
}

extern "C" __attribute__((visibility("default"))) int close(int fd) {
    Shim& s = shim();
    {
        std::lock_guard lock(s.mu);
        if (fd >= 0 && fd == s.issm_fd) {  // OpenSM gives IsSM up (NOT_ACTIVE, exit)
            s.issm_path.clear();
            s.issm_fd = -1;
        }
    }
    if (!s.close) {
        errno = ENOSYS;
        return -1;
    }
    return s.close(fd);
}

extern "C" __attribute__((visibility("default"))) int umad_send(int fd, int agentid, void* umad, int length, int timeout_ms, int retries) {
    Shim& s = shim();
    if (!s.send) return -ENOSYS;
    bool tracked = false;
    if (timeout_ms > 0 && umad && length > 0) {
        // What the real umad_send writes into the header, set on our copy before the send.
        auto* h = static_cast<ib_user_mad_t*>(umad);
        h->agent_id = static_cast<uint32_t>(agentid);
        h->status = 0;
        h->timeout_ms = static_cast<uint32_t>(timeout_ms);
        h->retries = static_cast<uint32_t>(retries);
        h->length = static_cast<uint32_t>(length);
        std::lock_guard lock(s.mu);
        tracked = s.table.on_send(fd, bytes(umad, sizeof(ib_user_mad_t) + length), timeout_ms, retries, now_ms());
    }
    const int r = s.send(fd, agentid, umad, length, timeout_ms, retries);
    if (r < 0 && tracked) {
        std::lock_guard lock(s.mu);
        s.table.forget(bytes(umad, sizeof(ib_user_mad_t) + length));
    }
    return r;
}

extern "C" __attribute__((visibility("default"))) int umad_recv(int fd, void* umad, int* length, int timeout_ms) {
    Shim& s = shim();
    if (!s.recv) return -ENOSYS;
    if (!umad || !length) return s.recv(fd, umad, length, timeout_ms);
    const int want = *length;
    const int64_t until = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
    for (;;) {
        std::vector<ibf::MadTimeouts::Due> resend;
        std::optional<ibf::MadTimeouts::Due> back;
        std::optional<int64_t> next;
        const int64_t now = now_ms();
        keep_issm(s, now);
        {
            std::lock_guard lock(s.mu);
            resend = s.table.expire(now);
            back = s.table.take_timed_out(fd);
            next = s.table.next_deadline();
        }
        for (auto& d : resend) {
            const auto* h = reinterpret_cast<const ib_user_mad_t*>(d.umad.data());
            s.send(d.fd, static_cast<int>(h->agent_id), d.umad.data(),
                   static_cast<int>(d.umad.size() - sizeof(ib_user_mad_t)), 0, 0);
        }
        if (back) {
            log_timed_out(back->umad);
            return hand_back(*back, umad, length);
        }
        int wait = 0;
        if (timeout_ms != 0) {
            if (now >= until) {
                errno = ETIMEDOUT;
                return -ETIMEDOUT;
            }
            int64_t w = std::min(until - now, kTickMs);  // also paces keep_issm()
            if (next) w = std::min(w, std::max<int64_t>(*next - now, 1));
            wait = static_cast<int>(std::max<int64_t>(w, 1));
        }
        *length = want;
        const int r = s.recv(fd, umad, length, wait);
        if (r == -ETIMEDOUT && timeout_ms != 0) continue;  // our tick, not the caller's timeout
        if (r < 0) return r;
        {
            std::lock_guard lock(s.mu);
            const size_t got = static_cast<size_t>(std::max(*length, 0));
            if (s.table.on_recv(bytes(static_cast<uint8_t*>(umad) + sizeof(ib_user_mad_t), got)) ==
                ibf::MadTimeouts::Recv::drop)
                continue;  // the second answer to a resent request: the kernel drops it too
        }
        return r;
    }
}
