// The pending-request table behind the lab's umad timeout shim (see mad_timeouts.h).
#include "ibf/mad_timeouts.h"

#include <algorithm>

namespace ibf {

std::optional<MadKey> mad_key(std::span<const uint8_t> mad) {
    if (mad.size() < MadTimeouts::kMadHeader) return std::nullopt;
    // MAD header: base version, class, class version, method, status (2), class specific (2),
    // transaction ID (8, big-endian), attribute ID (2), reserved (2), attribute modifier (4).
    const uint32_t low = uint32_t(mad[12]) << 24 | uint32_t(mad[13]) << 16 | uint32_t(mad[14]) << 8 | mad[15];
    return MadKey{low, mad[1]};
}

bool mad_is_response(std::span<const uint8_t> mad) {
    // The R bit, or TrapRepress (0x07), the answer to a Trap: the kernel's ib_response_mad() and
    // OpenSM's ib_mad_is_response() both count it.
    return mad.size() > 3 && ((mad[3] & 0x80) != 0 || mad[3] == 0x07);
}

MadTimeouts::MadTimeouts(size_t mad_offset, size_t capacity, size_t remembered)
    : mad_offset_(mad_offset), capacity_(capacity), remembered_(remembered) {}

bool MadTimeouts::on_send(int fd, std::span<const uint8_t> umad, int timeout_ms, int retries, int64_t now_ms) {
    if (timeout_ms <= 0 || umad.size() < mad_offset_) return false;
    const auto mad = umad.subspan(mad_offset_);
    const auto key = mad_key(mad);
    if (!key || mad_is_response(mad)) return false;
    if (pending_.size() >= capacity_ || pending_.contains(*key)) {
        ++stats_.untracked;
        return false;
    }
    if (auto it = std::find(done_.begin(), done_.end(), *key); it != done_.end()) done_.erase(it);
    pending_.emplace(*key, Pending{fd, {umad.begin(), umad.end()}, timeout_ms, std::max(retries, 0), now_ms + timeout_ms});
    ++stats_.tracked;
    return true;
}

void MadTimeouts::forget(std::span<const uint8_t> umad) {
    if (umad.size() < mad_offset_) return;
    if (const auto key = mad_key(umad.subspan(mad_offset_))) pending_.erase(*key);
}

void MadTimeouts::remember(MadKey k) {
    done_.push_back(k);
    while (done_.size() > remembered_) done_.pop_front();
}

MadTimeouts::Recv MadTimeouts::on_recv(std::span<const uint8_t> mad) {
    if (!mad_is_response(mad)) return Recv::deliver;
    const auto key = mad_key(mad);
    if (!key) return Recv::deliver;
    if (pending_.erase(*key)) {
        remember(*key);
        return Recv::deliver;
    }
    if (std::find(done_.begin(), done_.end(), *key) != done_.end()) {
        ++stats_.duplicates;
        return Recv::drop;
    }
    return Recv::deliver;  // not a request we track: as umad2sim delivers it
}

std::vector<MadTimeouts::Due> MadTimeouts::expire(int64_t now_ms) {
    std::vector<Due> resend;
    for (auto it = pending_.begin(); it != pending_.end();) {
        Pending& p = it->second;
        if (p.deadline_ms > now_ms) {
            ++it;
            continue;
        }
        if (p.retries_left > 0) {
            --p.retries_left;
            p.deadline_ms = now_ms + p.timeout_ms;
            resend.push_back({p.fd, p.umad});
            ++stats_.resent;
            ++it;
            continue;
        }
        p.umad.resize(std::min(p.umad.size(), mad_offset_ + kMadHeader));
        timed_out_.push_back({p.fd, std::move(p.umad)});
        ++stats_.timed_out;
        remember(it->first);
        it = pending_.erase(it);
    }
    return resend;
}

std::optional<MadTimeouts::Due> MadTimeouts::take_timed_out(int fd) {
    const auto it = std::find_if(timed_out_.begin(), timed_out_.end(), [fd](const Due& d) { return d.fd == fd; });
    if (it == timed_out_.end()) return std::nullopt;
    Due d = std::move(*it);
    timed_out_.erase(it);
    return d;
}

std::optional<int64_t> MadTimeouts::next_deadline() const {
    std::optional<int64_t> next;
    for (const auto& [key, p] : pending_)
        if (!next || p.deadline_ms < *next) next = p.deadline_ms;
    return next;
}

}  // namespace ibf
