// Ingest decisions of ibfabricd that need no sockets (docs/daemon.md, "Ingest limits and
// authentication"): which open plugin connection gives way when every slot is taken. Pure: times
// are passed in (milliseconds of one steady clock). How often a refusal is logged: log_limit.h.
//
//   std::optional<uint64_t> v = ibf::ingest_victim(slots, now_ms, cfg.stale_connection_ms, 1000);
//   if (v) close(*v); else refuse(newcomer);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ibf {

struct IngestSlot {
    uint64_t id = 0;
    bool said_hello = false;
    int64_t opened_ms = 0;   // accepted at
    int64_t last_rx_ms = 0;  // last byte received (opened_ms when none yet)
};

// When a new connection finds every slot taken: the oldest connection that has not said Hello
// and has been open for at least `grace_ms` (its Hello may be in flight); else the one silent
// longest, if silent for at least `stale_ms`; else nullopt (refuse the newcomer: live plugins are
// never pushed out by new connections).
std::optional<uint64_t> ingest_victim(const std::vector<IngestSlot>& open, int64_t now_ms, int64_t stale_ms,
                                      int64_t grace_ms = 1000);


}  // namespace ibf
