// LogLimit: rate-limits one kind of repeated log line (a refused connection, a full queue), so a
// burst of 1000 refusals writes `burst` lines per interval, and the next line written says how
// many were held back. Pure: the caller passes the time (steady milliseconds); one LogLimit per
// kind of line.
//
//   LogLimit refused;                                   // at most one line per 10 s (LogLimit(10000, 5): five)
//   if (auto held = refused.allow(now_ms))
//       spdlog::warn("http: refusing a connection{}", LogLimit::suffix(*held));
//   // -> "http: refusing a connection (37 more like this since the last one were not logged)"
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ibf {

class LogLimit {
public:
    explicit LogLimit(int64_t interval_ms = 10000, uint64_t burst = 1) : interval_ms_(interval_ms), burst_(burst) {}

    // nullopt: hold this line back (counted). Otherwise write it; the value is how many lines
    // were held back since the last one written. A window of `interval_ms` opens with the first
    // line written after the previous window ended and lets `burst` lines through.
    std::optional<uint64_t> allow(int64_t now_ms) {
        if (!written_ || now_ms - window_ms_ >= interval_ms_) {
            written_ = true;
            window_ms_ = now_ms;
            in_window_ = 0;
        }
        if (in_window_ >= burst_) {
            ++held_;
            return std::nullopt;
        }
        ++in_window_;
        const uint64_t held = held_;
        held_ = 0;
        return held;
    }
    uint64_t held() const { return held_; }

    // "" for 0, else " (N more like this since the last one were not logged)".
    static std::string suffix(uint64_t held) {
        if (held == 0) return "";
        return " (" + std::to_string(held) + " more like this since the last one " + (held == 1 ? "was" : "were") +
               " not logged)";
    }

private:
    int64_t interval_ms_;
    uint64_t burst_;
    int64_t window_ms_ = 0;
    uint64_t in_window_ = 0;
    bool written_ = false;
    uint64_t held_ = 0;
};

}  // namespace ibf
