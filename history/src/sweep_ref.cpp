// parse_sweep_ref / parse_iso_time.
#include "ibf/sweep_ref.h"

#include <chrono>
#include <charconv>
#include <ctime>

namespace ibf {
namespace {

// Digits only: from_chars would take a sign too ("-026" as a year).
std::optional<int64_t> number(std::string_view s) {
    if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (<chrono> civil calendar; no clock is read);
// nullopt for a date that does not exist (2026-02-30, 2027-02-29).
std::optional<int64_t> days_from_civil(int64_t y, unsigned m, unsigned d) {
    const std::chrono::year_month_day ymd{std::chrono::year{static_cast<int>(y)}, std::chrono::month{m}, std::chrono::day{d}};
    if (!ymd.ok()) return std::nullopt;
    return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

// `now - n * unit` when it fits in int64 and is not before 1970, else nullopt (no signed overflow).
std::optional<int64_t> before_now(int64_t now, int64_t n, int64_t unit) {
    int64_t back = 0, t = 0;
    if (__builtin_mul_overflow(n, unit, &back) || __builtin_sub_overflow(now, back, &t) || t < 0) return std::nullopt;
    return t;
}

}  // namespace

std::optional<int64_t> parse_iso_time(std::string_view s) {
    if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) s.remove_suffix(1);
    // YYYY-MM-DDTHH:MM (16), :SS (19), .mmm (23)
    if (s.size() != 16 && s.size() != 19 && s.size() != 23) return std::nullopt;
    if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ' && s[10] != 't') || s[13] != ':') return std::nullopt;
    if (s.size() >= 19 && s[16] != ':') return std::nullopt;
    if (s.size() == 23 && s[19] != '.') return std::nullopt;
    auto field = [&](size_t at, size_t n) { return number(s.substr(at, n)); };
    auto y = field(0, 4), mo = field(5, 2), d = field(8, 2), h = field(11, 2), mi = field(14, 2);
    auto sec = s.size() >= 19 ? field(17, 2) : std::optional<int64_t>(0);
    auto ms = s.size() == 23 ? field(20, 3) : std::optional<int64_t>(0);
    if (!y || !mo || !d || !h || !mi || !sec || !ms) return std::nullopt;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *sec > 60 || *ms < 0) return std::nullopt;
    const auto days = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
    if (!days) return std::nullopt;
    return ((*days * 24 + *h) * 60 + *mi) * 60000 + *sec * 1000 + *ms;
}

std::optional<SweepRef> parse_sweep_ref(std::string_view s, int64_t now_unix_ms) {
    if (s == "latest" || s == "now") return SweepRef{SweepRef::Kind::latest, 0};
    if (auto id = number(s); id && *id > 0) return SweepRef{SweepRef::Kind::id, *id};
    if (s.size() > 1 && s[0] == '#')  // as `ibfabric history` prints row ids
        if (auto id = number(s.substr(1)); id && *id > 0) return SweepRef{SweepRef::Kind::id, *id};
    if (s.size() > 1 && s[0] == '@')
        if (auto ms = number(s.substr(1)); ms && *ms >= 0) return SweepRef{SweepRef::Kind::time, *ms};
    if (s.size() > 2 && s[0] == '-') {
        int64_t unit = 0;
        switch (s.back()) {
        case 's': unit = 1000; break;
        case 'm': unit = 60000; break;
        case 'h': unit = 3600000; break;
        case 'd': unit = 86400000; break;
        default: return std::nullopt;
        }
        auto n = number(s.substr(1, s.size() - 2));
        if (!n || *n < 0) return std::nullopt;
        auto t = before_now(now_unix_ms, *n, unit);
        if (!t) return std::nullopt;
        return SweepRef{SweepRef::Kind::time, *t};
    }
    if (auto t = parse_iso_time(s); t && *t >= 0) return SweepRef{SweepRef::Kind::time, *t};  // no sweep before 1970
    return std::nullopt;
}

}  // namespace ibf
