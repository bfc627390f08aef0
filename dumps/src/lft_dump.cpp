// parse_lft_dump (lft_dump.h): ibroute / dump_lfts, opensm-lfts.dump and opensm.fdbs tables.
#include "ibf/lft_dump.h"

#include <charconv>
#include <set>
#include <utility>
#include <vector>

#include "text.h"

namespace ibf {

namespace {

constexpr uint32_t kMaxUnicastLid = 0xBFFF;

// The hex GUID after `key` in the line, or 0.
Guid guid_after(std::string_view line, std::string_view key) {
    const size_t at = line.find(key);
    if (at == std::string_view::npos) return 0;
    std::string_view rest = detail::trim(line.substr(at + key.size()));
    if (detail::starts_with(rest, "0x") || detail::starts_with(rest, "0X")) rest.remove_prefix(2);
    Guid g = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), g, 16);
    return ec == std::errc() && p != rest.data() ? g : 0;
}

// "0x0001 001 ..." or "0x0001 : 001 ...": (LID, port) or false when the line is no entry.
bool parse_entry(std::string_view line, const std::string& file, int lineno, uint32_t& lid, uint32_t& port) {
    std::string_view s = detail::trim(line);
    if (!detail::starts_with(s, "0x") && !detail::starts_with(s, "0X")) return false;
    const char* b = s.data() + 2;
    const char* e = s.data() + s.size();
    auto [p1, ec1] = std::from_chars(b, e, lid, 16);
    if (ec1 != std::errc() || p1 == b) return false;
    const char* q = p1;
    while (q < e && (detail::is_space(*q) || *q == ':')) ++q;
    auto [p2, ec2] = std::from_chars(q, e, port, 10);
    const int col = static_cast<int>(line.size() - s.size()) + 1;
    if (ec2 != std::errc() || p2 == q)
        throw InputError(file, lineno, static_cast<int>(q - s.data()) + col, "expected the egress port after the LID");
    if (lid > kMaxUnicastLid)
        throw InputError(file, lineno, col, "LID 0x" + std::string(b, p1) + " is outside the unicast range (1..0xBFFF)");
    if (port > 254)
        throw InputError(file, lineno, static_cast<int>(q - s.data()) + col,
                         "port " + std::to_string(port) + " is not a switch port (0..254)");
    return true;
}

}  // namespace

std::vector<SwitchLft> parse_lft_dump(std::string_view text, const std::string& file) {
    std::vector<std::pair<Guid, std::vector<uint8_t>>> tables;
    std::set<Guid> seen;
    detail::Lines lines(text);
    std::string_view line;
    int n = 0;
    bool in_switch = false;
    while (lines.next(line, n)) {
        const bool ibroute = line.find("Unicast lids [") != std::string_view::npos;
        const bool fdbs = line.find("dump_ucast_routes: Switch ") != std::string_view::npos;
        if (ibroute || fdbs) {
            const Guid g = ibroute ? guid_after(line, " guid ") : guid_after(line, "Switch ");
            if (g == 0) throw InputError(file, n, 1, "switch header without a GUID: " + printable(line));
            if (!seen.insert(g).second) throw InputError(file, n, 1, "switch " + guid_hex(g) + " is listed twice");
            tables.emplace_back(g, std::vector<uint8_t>());
            in_switch = true;
            continue;
        }
        uint32_t lid = 0, port = 0;
        if (!parse_entry(line, file, n, lid, port)) continue;  // headings, "8 valid lids dumped", prompts
        if (!in_switch) throw InputError(file, n, 1, "a forwarding entry before any switch header");
        std::vector<uint8_t>& t = tables.back().second;
        if (t.size() <= lid) t.resize(lid + 1, kLftNoPath);
        t[lid] = static_cast<uint8_t>(port);
    }
    std::vector<SwitchLft> out;
    out.reserve(tables.size());
    for (auto& [g, t] : tables) out.emplace_back(g, std::move(t));
    return out;
}

}  // namespace ibf
