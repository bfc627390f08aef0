// The clocks of the programs (ibfabricd, the CLI): pure code never reads them, it is passed
// their values. Milliseconds throughout.
//
//   int64_t t = ibf::wall_clock_ms();            // unix ms: timestamps, history rows, Hello MACs
//   int64_t s = ibf::steady_clock_ms();          // monotonic: ages, timeouts, rate limits
//   double d = ibf::ms_since(start);             // a duration for a log line
#pragma once

#include <chrono>
#include <cstdint>

namespace ibf {

inline int64_t wall_clock_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline int64_t steady_clock_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Monotonic milliseconds as a double (for timing steps: ibf::StepClock).
inline double steady_clock_ms_f() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace ibf
