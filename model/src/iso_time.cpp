// iso_time(): unix ms -> ISO 8601 UTC (ibf/iso_time.h).
#include "ibf/iso_time.h"

#include <cstdio>
#include <ctime>

namespace ibf {

std::string iso_time(int64_t unix_ms) {
    if (unix_ms == 0) return "";
    std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
    int ms = static_cast<int>(unix_ms % 1000);
    if (ms < 0) {
        ms += 1000;
        --secs;
    }
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    return buf;
}

}  // namespace ibf
