// Which ingest connection gives way, and log rate limiting (ibf/ingest_policy.h).
#include "ibf/ingest_policy.h"

namespace ibf {

std::optional<uint64_t> ingest_victim(const std::vector<IngestSlot>& open, int64_t now_ms, int64_t stale_ms,
                                      int64_t grace_ms) {
    const IngestSlot* silent_hello = nullptr;  // oldest without Hello
    const IngestSlot* stale = nullptr;         // silent longest, among those that said Hello
    for (const IngestSlot& s : open) {
        if (!s.said_hello) {
            if (now_ms - s.opened_ms < grace_ms) continue;
            if (!silent_hello || s.opened_ms < silent_hello->opened_ms ||
                (s.opened_ms == silent_hello->opened_ms && s.id < silent_hello->id))
                silent_hello = &s;
        } else if (now_ms - s.last_rx_ms >= stale_ms) {
            if (!stale || s.last_rx_ms < stale->last_rx_ms) stale = &s;
        }
    }
    if (silent_hello) return silent_hello->id;
    if (stale) return stale->id;
    return std::nullopt;
}


}  // namespace ibf
