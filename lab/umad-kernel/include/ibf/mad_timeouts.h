// lab/umad-kernel: what the kernel's MAD layer does for a request and what umad2sim does not.
//
// On hardware, a MAD sent with umad_send(..., timeout_ms, retries) that expects a response is
// resent by the kernel each time timeout_ms passes without one, `retries` times, and is then handed
// back to the reader by umad_recv() with status ETIMEDOUT and the MAD header only (ib_umad's
// send_handler). OpenSM relies on that: umad_receiver() fails the request with IB_TIMEOUT, and a
// sweep with a MAD to a vanished SM still completes. umad2sim ignores timeout_ms and retries: a MAD
// that ibsim drops (a request to an SM that exited with it outstanding) stays outstanding forever and
// the sweeping SM wedges (ha-facts.md section 5). The lab preloads libibf_umad_kernel.so before
// umad2sim into OpenSM; that shim is thin glue around this table.
//
// MadTimeouts is pure (no I/O, no clock: times are passed in) and not thread-safe (the shim locks).
// Requests are matched to responses as OpenSM and the kernel match them: by the low 32 bits of the
// transaction ID and the management class (umad2sim rewrites bits 32-47 to the agent id).
//
//   ibf::MadTimeouts t(/*mad_offset=*/umad_size());
//   t.on_send(fd, umad_bytes, /*timeout_ms=*/200, /*retries=*/3, now);   // before the real send
//   for (auto& r : t.expire(now)) resend(r.fd, r.umad);                   // in the reader's loop
//   if (auto back = t.take_timed_out(fd)) return it with status ETIMEDOUT;
//   if (t.on_recv(mad_bytes) == MadTimeouts::Recv::drop) continue;        // a duplicate response
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace ibf {

// What identifies a request's response: the transaction ID's low 32 bits and the class.
struct MadKey {
    uint32_t tid_low = 0;
    uint8_t mgmt_class = 0;
    auto operator<=>(const MadKey&) const = default;
};

// The key of a MAD (the bytes after the user header); nullopt when shorter than a MAD header.
std::optional<MadKey> mad_key(std::span<const uint8_t> mad);
// Whether a MAD is a response (the method's R bit, or TrapRepress).
bool mad_is_response(std::span<const uint8_t> mad);

class MadTimeouts {
public:
    static constexpr size_t kMadHeader = 24;  // what the kernel hands back of a timed-out send

    struct Stats {
        uint64_t tracked = 0;     // requests that expect a response
        uint64_t resent = 0;      // resends after a timeout
        uint64_t timed_out = 0;   // requests handed back with ETIMEDOUT
        uint64_t untracked = 0;   // requests not tracked: the table was full or the key in use
        uint64_t duplicates = 0;  // responses dropped: their request was already answered or timed out
    };
    // A request to resend now (the whole user MAD as first sent) or to hand back as timed out.
    struct Due {
        int fd = -1;
        std::vector<uint8_t> umad;
    };

    // mad_offset: the size of the user header before the MAD (umad_size()); capacity bounds the
    // requests tracked at once (what is beyond it is sent untracked, as umad2sim would, and counted).
    explicit MadTimeouts(size_t mad_offset, size_t capacity = 4096, size_t remembered = 1024);

    // A request was sent on fd: tracked when timeout_ms > 0 and it is not a response. Returns
    // whether it was tracked. Call it before the real send (a fast response must find it).
    bool on_send(int fd, std::span<const uint8_t> umad, int timeout_ms, int retries, int64_t now_ms);
    // The real send failed: the request is not outstanding.
    void forget(std::span<const uint8_t> umad);

    enum class Recv { deliver, drop };
    // A MAD was read: a response ends its request; a response to a request already answered or
    // timed out is a duplicate (a resend was answered twice) and is dropped, as the kernel drops it.
    Recv on_recv(std::span<const uint8_t> mad);

    // Requests whose timeout passed by now: those with retries left are returned to be resent (and
    // re-armed); the others move to the timed-out queue of their fd.
    std::vector<Due> expire(int64_t now_ms);
    // The oldest timed-out request of fd, header and first kMadHeader bytes of the MAD.
    std::optional<Due> take_timed_out(int fd);
    // When the next request times out (nullopt: none outstanding).
    std::optional<int64_t> next_deadline() const;

    size_t outstanding() const { return pending_.size(); }
    const Stats& stats() const { return stats_; }

private:
    struct Pending {
        int fd = -1;
        std::vector<uint8_t> umad;
        int timeout_ms = 0;
        int retries_left = 0;
        int64_t deadline_ms = 0;
    };
    void remember(MadKey k);

    size_t mad_offset_;
    size_t capacity_;
    size_t remembered_;
    std::map<MadKey, Pending> pending_;
    std::deque<MadKey> done_;  // recently answered or timed out, oldest first (bounded)
    std::deque<Due> timed_out_;
    Stats stats_;
};

}  // namespace ibf
