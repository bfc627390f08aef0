// A sweep named on the command line or in a query: `ibfabric diff 41 2026-12-01T03:00:00Z`,
// `ibfabric history --since -2h`. Pure: the present time is passed in.
//
//   parse_sweep_ref("41", now)                    -> {Kind::id, 41}       (a history row id)
//   parse_sweep_ref("#41", now)                   -> {Kind::id, 41}       (as `ibfabric history` prints it)
//   parse_sweep_ref("latest", now)                -> {Kind::latest}
//   parse_sweep_ref("2026-12-01T03:00:00Z", now)  -> {Kind::time, 1796094000000}
//   parse_sweep_ref("-2h", now)                   -> {Kind::time, now - 7200000}   (s, m, h, d)
//
// Times: ISO 8601 UTC "YYYY-MM-DDTHH:MM[:SS[.mmm]][Z]" (a space instead of the T works too) or
// Unix milliseconds written with a "@" ("@1796094000000"). A time names the newest sweep taken at
// or before it. Refused (nullopt): dates that do not exist (2026-02-30), and times before 1970
// ("0226-12-01T03:00Z", relative times that reach back that far or overflow: "-9223372036854775807d").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ibf {

struct SweepRef {
    enum class Kind { id, time, latest } kind = Kind::latest;
    int64_t value = 0;  // row id, or Unix ms
};

std::optional<SweepRef> parse_sweep_ref(std::string_view s, int64_t now_unix_ms);
// ISO 8601 UTC as above, else nullopt.
std::optional<int64_t> parse_iso_time(std::string_view s);

}  // namespace ibf
