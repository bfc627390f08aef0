// Wall-clock times for people and JSON: unix milliseconds as ISO 8601 in UTC. Pure (the time is
// passed in).
//
//   ibf::iso_time(1796114915770)  -> "2026-12-01T08:48:35.770Z"
//   ibf::iso_time(0)              -> ""   (0 means "never" throughout the daemon)
#pragma once

#include <cstdint>
#include <string>

namespace ibf {

// "2026-11-30T02:00:00.123Z"; "" for 0.
std::string iso_time(int64_t unix_ms);

}  // namespace ibf
