// Link width, lane speed and link rate as InfiniBand people write them.
//
//   Rate r = parse_rate("4xHDR").value();      // also "4X HDR", "2xNDR", "4X 53.125 Gbps",
//   r.gbps();                                  // "200 Gb/sec (4X HDR)", "4X 10.0 Gbps FDR10"
//   to_string(r) == "4xHDR";
//
// Rates compare by their effective data rate in Gb/s (encoding overhead removed), so
// 4xFDR10 (40 Gb/s) is faster than 4xQDR (32 Gb/s) and 1xHDR (50) slower than 4xEDR (100).
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ibf {

// Values are the PortInfo LinkWidth bits (IBA 14.2.5.6), so masks combine them directly.
enum class Width : uint8_t { Unknown = 0, X1 = 1, X4 = 2, X8 = 4, X12 = 8, X2 = 16 };

// One value per generation. Order is by lane speed, so `<` means slower.
enum class Speed : uint8_t { Unknown = 0, SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR };

// Bit masks over the enums above: width masks use the Width values, speed masks use
// (1u << static_cast<int>(Speed)).
using WidthMask = uint8_t;
using SpeedMask = uint16_t;

constexpr SpeedMask speed_bit(Speed s) { return static_cast<SpeedMask>(1u << static_cast<int>(s)); }
constexpr WidthMask width_bit(Width w) { return static_cast<WidthMask>(w); }

int lanes(Width w);                       // 1, 2, 4, 8, 12; 0 for Unknown
double lane_data_gbps(Speed s);           // effective data rate per lane (2, 4, 8, 10, 13.636, 25, 50, 100, 200)
double lane_signal_gbps(Speed s);         // what iblinkinfo prints (2.5, 5.0, 10.0, 10.3125, 14.0625, ...)
std::string_view to_string(Width w);      // "4x"; "?" for Unknown
std::string_view to_string(Speed s);      // "HDR"; "?" for Unknown

std::optional<Width> parse_width(std::string_view s);  // "4x", "4X", "12x"
std::optional<Speed> parse_speed(std::string_view s);  // "HDR", "hdr", "FDR10", or a lane rate "53.125"

// Widest / fastest member of a mask; Unknown for an empty mask.
Width max_width(WidthMask m);
Speed max_speed(SpeedMask m);

struct Rate {
    Width width = Width::Unknown;
    Speed speed = Speed::Unknown;

    bool known() const { return width != Width::Unknown && speed != Speed::Unknown; }
    // Effective data rate in Gb/s; 0 when width or speed is unknown.
    double gbps() const { return lanes(width) * lane_data_gbps(speed); }
    friend bool operator==(const Rate&, const Rate&) = default;
};

// "4xHDR"; "4x" or "HDR" when only one half is known; "?" when neither.
std::string to_string(const Rate& r);

// The rate `ibstat` prints ("Rate: 40" for 4xQDR and 4xFDR10, 56 for 4xFDR, 100 for 4xEDR): lanes x
// the nominal lane rate (2.5, 5, 10, 10, 14, 25, 50, 100, 200 Gb/s); 0 when a half is unknown.
double ibstat_gbps(const Rate& r);
// How reports print a rate's speed: ibstat's figure, with the data rate where it differs:
//   rate_gbps_text(4xEDR) == "100 Gb/s"; rate_gbps_text(4xQDR) == "40 Gb/s signalling, 32 Gb/s data";
//   rate_gbps_text(4xFDR) == "56 Gb/s signalling, 54.5 Gb/s data"; "" when a half is unknown.
std::string rate_gbps_text(const Rate& r);

// Accepts every spelling listed at the top of this file; nullopt for anything else.
std::optional<Rate> parse_rate(std::string_view s);

// MTU: 256, 512, 1024, 2048, 4096 bytes; 0 = unknown. PortInfo encodes it as 1..5.
int mtu_from_code(int code);  // 1 -> 256 ... 5 -> 4096; 0 otherwise
int mtu_to_code(int bytes);   // inverse; 0 when not a valid MTU
std::optional<int> parse_mtu(std::string_view s);  // "4096", "2048", "IBV_MTU_4096"

}  // namespace ibf
