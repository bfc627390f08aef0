// Ingest admission of ibfabricd that needs no sockets (docs/daemon.md, "Ingest limits and
// authentication"): which plugin connection gives way, or whether a newcomer is refused. Pure:
// times are passed in (milliseconds of one steady clock). How often a refusal is logged: log_limit.h.
//
// Each transport (the Unix socket, TCP) has two budgets of its own:
//  - connections that said Hello: `max_connections` (limits.max_plugin_connections); when all are
//    live (none silent for `stale_ms`), a newcomer is refused at once; a stale one gives way only to
//    a connection whose Hello was accepted, never to one that has not spoken;
//  - connections that have not said Hello yet: a pool of `max_pre_hello` (the same number), at most
//    `max_pre_hello_per_source` of them from one source (an address, a uid). A newcomer always gets
//    a place there: the oldest one of its own source gives way when that source is at its limit,
//    else, when the pool is full, the oldest one of the source holding most. So silent connections
//    only ever push out silent connections, and an authenticated Hello gets in whatever they do.
//
//   ibf::Admission a = ibf::admit_connection(open, "10.0.0.5", limits, now_ms);
//   if (a.refuse) close(newcomer); else { if (a.evict) close(*a.evict); keep(newcomer); }
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibf {

struct IngestSlot {
    uint64_t id = 0;
    bool said_hello = false;
    int64_t opened_ms = 0;   // accepted at
    int64_t last_rx_ms = 0;  // last byte received (opened_ms when none yet)
    std::string source;      // for the per-source limit: "10.0.0.5", "uid 0"
    bool speaking = false;   // bytes received or waiting to be read (a Hello on its way): not silent
};

struct IngestLimits {
    size_t max_connections = 16;          // said Hello (limits.max_plugin_connections)
    size_t max_pre_hello = 16;            // not yet: their own pool
    size_t max_pre_hello_per_source = 8;  // limits.max_pre_hello_per_source
    int64_t stale_ms = 30000;             // limits.stale_connection_ms
};

struct Admission {
    bool refuse = false;             // close the newcomer (every Hello slot is held by a live plugin)
    std::optional<uint64_t> evict;   // else: close this connection first
    std::string why;                 // for the log line: why refused, or why `evict` gave way
};

// A new connection from `source`; `open` holds the open connections of its transport. Only a
// silent connection (nothing received, nothing waiting) gives way; when the pool holds none, the
// newcomer is refused instead (a Hello already sent is never pushed out by a later connect).
Admission admit_connection(const std::vector<IngestSlot>& open, const std::string& source,
                           const IngestLimits& lim, int64_t now_ms);

// A connection's Hello was accepted; `open` holds the other open connections of its transport.
// Refused when every Hello slot is live; else `evict` is the stale one that makes room, if needed.
Admission admit_hello(const std::vector<IngestSlot>& open, const IngestLimits& lim, int64_t now_ms);

// Of the connections that said Hello, the one silent longest, if silent for at least `stale_ms`.
std::optional<uint64_t> stale_victim(const std::vector<IngestSlot>& open, int64_t now_ms, int64_t stale_ms);

// True when every Hello slot is held by a live plugin: no connection that has not said Hello can
// get one, so they are closed rather than left waiting (and newcomers refused at once).
bool hello_slots_all_live(const std::vector<IngestSlot>& open, const IngestLimits& lim, int64_t now_ms);

}  // namespace ibf
