// Ingest decisions of ibfabricd that need no sockets (docs/daemon.md, "Ingest limits and
// authentication"): which open plugin connection gives way when every slot is taken, and how
// often a refusal may be logged. Pure: times are passed in (milliseconds of one steady clock).
//
//   std::optional<uint64_t> v = ibf::ingest_victim(slots, now_ms, cfg.stale_connection_ms, 1000);
//   if (v) close(*v); else refuse(newcomer);
//   ibf::LogLimiter lim;                         // one per kind of line
//   uint64_t skipped = 0;
//   if (lim.allow(now_ms, &skipped)) log("... ({} similar not logged)", skipped);
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

// At most `burst` lines per `window_ms`; lines beyond that are counted and the count is handed to
// the next line that is allowed (so nothing is lost, and a flood makes a few lines, not thousands).
class LogLimiter {
public:
    explicit LogLimiter(uint64_t burst = 5, int64_t window_ms = 10000) : burst_(burst), window_ms_(window_ms) {}
    // True: write this line, mentioning *skipped (lines not written since the last one written).
    bool allow(int64_t now_ms, uint64_t* skipped);
    uint64_t suppressed() const { return suppressed_; }

private:
    uint64_t burst_;
    int64_t window_ms_;
    int64_t window_start_ = 0;
    bool started_ = false;
    uint64_t in_window_ = 0;
    uint64_t suppressed_ = 0;
};

}  // namespace ibf
