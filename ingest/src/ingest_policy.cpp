// Which ingest connection gives way, or whether a newcomer is refused (ibf/ingest_policy.h).
#include "ibf/ingest_policy.h"

#include <algorithm>
#include <map>

namespace ibf {
namespace {

size_t said_hello(const std::vector<IngestSlot>& open) {
    return static_cast<size_t>(std::count_if(open.begin(), open.end(), [](const IngestSlot& s) { return s.said_hello; }));
}

bool older(const IngestSlot& a, const IngestSlot& b) {
    return a.opened_ms < b.opened_ms || (a.opened_ms == b.opened_ms && a.id < b.id);
}

// The oldest silent connection without Hello from `source` (null: none is silent).
const IngestSlot* oldest_pre_hello(const std::vector<IngestSlot>& open, const std::string& source) {
    const IngestSlot* best = nullptr;
    for (const IngestSlot& s : open)
        if (!s.said_hello && !s.speaking && s.source == source && (!best || older(s, *best))) best = &s;
    return best;
}

}  // namespace

std::optional<uint64_t> stale_victim(const std::vector<IngestSlot>& open, int64_t now_ms, int64_t stale_ms) {
    const IngestSlot* stale = nullptr;
    for (const IngestSlot& s : open)
        if (s.said_hello && now_ms - s.last_rx_ms >= stale_ms && (!stale || s.last_rx_ms < stale->last_rx_ms))
            stale = &s;
    if (stale) return stale->id;
    return std::nullopt;
}

bool hello_slots_all_live(const std::vector<IngestSlot>& open, const IngestLimits& lim, int64_t now_ms) {
    return said_hello(open) >= lim.max_connections && !stale_victim(open, now_ms, lim.stale_ms);
}

Admission admit_connection(const std::vector<IngestSlot>& open, const std::string& source, const IngestLimits& lim,
                           int64_t now_ms) {
    Admission a;
    if (hello_slots_all_live(open, lim, now_ms)) {
        a.refuse = true;
        a.why = std::to_string(said_hello(open)) + " plugin connections open, all live (limits.max_plugin_connections)";
        return a;
    }
    std::map<std::string, size_t> per_source;  // connections without Hello, by source
    size_t pre_hello = 0;
    for (const IngestSlot& s : open)
        if (!s.said_hello) ++per_source[s.source], ++pre_hello;
    const size_t per_source_max = std::max<size_t>(1, lim.max_pre_hello_per_source);
    if (per_source[source] >= per_source_max) {
        a.why = std::to_string(per_source[source]) + " connections from " + source +
                " without Hello (limits.max_pre_hello_per_source)";
        if (const IngestSlot* v = oldest_pre_hello(open, source)) a.evict = v->id;
        else a.refuse = true, a.why += ", each sending";
        return a;
    }
    if (pre_hello < std::max<size_t>(1, lim.max_pre_hello)) return a;
    // The pool is full: the source holding most gives up its oldest (a tie: the one whose oldest is older).
    const IngestSlot* victim = nullptr;
    size_t most = 0;
    for (const auto& [src, n] : per_source) {
        const IngestSlot* o = oldest_pre_hello(open, src);
        if (n == 0 || !o) continue;  // none of its connections is silent
        if (n > most || (n == most && older(*o, *victim))) most = n, victim = o;
    }
    a.why = std::to_string(pre_hello) + " connections without Hello (limits.max_plugin_connections)";
    if (victim) a.evict = victim->id;
    else a.refuse = true, a.why += ", each sending";
    return a;
}

Admission admit_hello(const std::vector<IngestSlot>& open, const IngestLimits& lim, int64_t now_ms) {
    Admission a;
    const size_t n = said_hello(open);
    if (n < lim.max_connections) return a;
    a.evict = stale_victim(open, now_ms, lim.stale_ms);
    if (!a.evict) {
        a.refuse = true;
        a.why = std::to_string(n) + " plugin connections said Hello, all live (limits.max_plugin_connections)";
    }
    return a;
}

}  // namespace ibf
