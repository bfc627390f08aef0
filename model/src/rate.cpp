#include "ibf/rate.h"

#include "ibf/text.h"

#include <cstdio>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace ibf {
namespace {

struct SpeedInfo {
    Speed speed;
    std::string_view name;
    double data;    // effective Gb/s per lane
    double signal;  // signalling rate per lane as iblinkinfo prints it
};

constexpr std::array<SpeedInfo, 9> kSpeeds{{
    {Speed::SDR, "SDR", 2.0, 2.5},
    {Speed::DDR, "DDR", 4.0, 5.0},
    {Speed::QDR, "QDR", 8.0, 10.0},
    {Speed::FDR10, "FDR10", 10.0, 10.3125},
    {Speed::FDR, "FDR", 14.0625 * 64 / 66, 14.0625},  // 13.636..: 4x is 54.5 Gb/s of data
    {Speed::EDR, "EDR", 25.0, 25.78125},
    {Speed::HDR, "HDR", 50.0, 53.125},
    {Speed::NDR, "NDR", 100.0, 106.25},
    {Speed::XDR, "XDR", 200.0, 212.5},
}};

const SpeedInfo* info(Speed s) {
    for (const auto& i : kSpeeds)
        if (i.speed == s) return &i;
    return nullptr;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::optional<double> parse_double(std::string_view s) {
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// Split on spaces, parentheses and commas.
std::vector<std::string_view> tokens(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (std::isspace(static_cast<unsigned char>(s[i])) || s[i] == '(' || s[i] == ')' || s[i] == ','))
            ++i;
        size_t j = i;
        while (j < s.size() && !(std::isspace(static_cast<unsigned char>(s[j])) || s[j] == '(' || s[j] == ')' || s[j] == ','))
            ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

}  // namespace

int lanes(Width w) {
    switch (w) {
        case Width::X1: return 1;
        case Width::X2: return 2;
        case Width::X4: return 4;
        case Width::X8: return 8;
        case Width::X12: return 12;
        default: return 0;
    }
}

double lane_data_gbps(Speed s) {
    const auto* i = info(s);
    return i ? i->data : 0.0;
}

namespace {
double nominal_lane_gbps(Speed s) {
    switch (s) {
        case Speed::SDR: return 2.5;
        case Speed::DDR: return 5;
        case Speed::QDR: return 10;
        case Speed::FDR10: return 10;
        case Speed::FDR: return 14;
        case Speed::EDR: return 25;
        case Speed::HDR: return 50;
        case Speed::NDR: return 100;
        case Speed::XDR: return 200;
        default: return 0;
    }
}

std::string gbps_number(double g) {
    char buf[32];
    if (g == static_cast<double>(static_cast<long long>(g))) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(g));
    else std::snprintf(buf, sizeof buf, "%.1f", g);
    return buf;
}
}  // namespace

double ibstat_gbps(const Rate& r) { return r.known() ? lanes(r.width) * nominal_lane_gbps(r.speed) : 0.0; }

std::string rate_gbps_text(const Rate& r) {
    if (!r.known()) return "";
    const std::string sig = gbps_number(ibstat_gbps(r)), data = gbps_number(r.gbps());
    if (sig == data) return sig + " Gb/s";
    return sig + " Gb/s signalling, " + data + " Gb/s data";
}

double lane_signal_gbps(Speed s) {
    const auto* i = info(s);
    return i ? i->signal : 0.0;
}

std::string_view to_string(Width w) {
    switch (w) {
        case Width::X1: return "1x";
        case Width::X2: return "2x";
        case Width::X4: return "4x";
        case Width::X8: return "8x";
        case Width::X12: return "12x";
        default: return "?";
    }
}

std::string_view to_string(Speed s) {
    const auto* i = info(s);
    return i ? i->name : std::string_view("?");
}

std::optional<Width> parse_width(std::string_view s) {
    s = trim(s);
    if (s.size() < 2 || (s.back() != 'x' && s.back() != 'X')) return std::nullopt;
    auto n = s.substr(0, s.size() - 1);
    if (n == "1") return Width::X1;
    if (n == "2") return Width::X2;
    if (n == "4") return Width::X4;
    if (n == "8") return Width::X8;
    if (n == "12") return Width::X12;
    return std::nullopt;
}

std::optional<Speed> parse_speed(std::string_view s) {
    s = trim(s);
    for (const auto& i : kSpeeds)
        if (iequals(s, i.name)) return i.speed;
    if (auto v = parse_double(s)) {
        for (const auto& i : kSpeeds)
            if (std::fabs(*v - i.signal) < 1e-3) return i.speed;
    }
    return std::nullopt;
}

Width max_width(WidthMask m) {
    Width best = Width::Unknown;
    for (Width w : {Width::X1, Width::X2, Width::X4, Width::X8, Width::X12})
        if (m & width_bit(w)) best = w;
    return best;
}

Speed max_speed(SpeedMask m) {
    Speed best = Speed::Unknown;
    for (const auto& i : kSpeeds)
        if (m & speed_bit(i.speed)) best = i.speed;
    return best;
}

std::string to_string(const Rate& r) {
    if (r.width == Width::Unknown && r.speed == Speed::Unknown) return "?";
    if (r.speed == Speed::Unknown) return std::string(to_string(r.width));
    if (r.width == Width::Unknown) return std::string(to_string(r.speed));
    return std::string(to_string(r.width)) + std::string(to_string(r.speed));
}

std::optional<Rate> parse_rate(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    Rate r;
    std::optional<double> lane_signal;  // "53.125 Gbps" after a width: a lane rate
    std::optional<double> total;        // "200 Gb/sec": a link rate
    auto toks = tokens(s);
    for (size_t k = 0; k < toks.size(); ++k) {
        std::string_view t = toks[k];
        // "4xHDR" / "4XHDR" / "12xEDR": width glued to speed
        size_t x = t.find_first_of("xX");
        if (x != std::string_view::npos && x > 0 && x + 1 < t.size()) {
            auto w = parse_width(t.substr(0, x + 1));
            auto sp = parse_speed(t.substr(x + 1));
            if (w && sp) {
                r.width = *w;
                r.speed = *sp;
                continue;
            }
        }
        if (auto w = parse_width(t)) {
            r.width = *w;
            continue;
        }
        if (auto sp = parse_speed(t); sp && !parse_double(t)) {
            r.speed = *sp;
            continue;
        }
        if (auto v = parse_double(t)) {
            std::string_view unit = k + 1 < toks.size() ? toks[k + 1] : std::string_view();
            bool gbps = iequals(unit, "Gbps") || iequals(unit, "Gb/s") || iequals(unit, "Gb/sec");
            if (!gbps && !unit.empty()) return std::nullopt;
            if (r.width != Width::Unknown && !total) lane_signal = *v;
            else total = *v;
            if (gbps) ++k;
            continue;
        }
        return std::nullopt;
    }
    if (r.speed == Speed::Unknown && lane_signal) {
        for (const auto& i : kSpeeds)
            if (std::fabs(*lane_signal - i.signal) < 1e-3) r.speed = i.speed;
        if (r.speed == Speed::Unknown) return std::nullopt;
    }
    if (r.speed == Speed::Unknown && total && r.width != Width::Unknown) {
        // "40 Gb/sec (4X)": nominal link rate = lanes x nominal lane rate (2.5, 5, 10, 14, 25, 50, 100, 200)
        double lane = *total / lanes(r.width);
        const std::array<std::pair<double, Speed>, 8> nominal{{{2.5, Speed::SDR}, {5, Speed::DDR}, {10, Speed::QDR},
            {14, Speed::FDR}, {25, Speed::EDR}, {50, Speed::HDR}, {100, Speed::NDR}, {200, Speed::XDR}}};
        for (auto [v, sp] : nominal)
            if (std::fabs(lane - v) < 1e-3) r.speed = sp;
        if (r.speed == Speed::Unknown) return std::nullopt;
    }
    if (r.width == Width::Unknown && r.speed == Speed::Unknown) return std::nullopt;
    return r;
}

int mtu_from_code(int code) { return code >= 1 && code <= 5 ? 128 << code : 0; }

int mtu_to_code(int bytes) {
    for (int c = 1; c <= 5; ++c)
        if ((128 << c) == bytes) return c;
    return 0;
}

std::optional<int> parse_mtu(std::string_view s) {
    s = trim(s);
    if (s.size() > 8 && iequals(s.substr(0, 8), "IBV_MTU_")) s.remove_prefix(8);
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || mtu_to_code(v) == 0) return std::nullopt;
    return v;
}

}  // namespace ibf
