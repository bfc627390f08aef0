// OpenSM's guid2lid file: build, parse, compare (guid2lid.h).
#include "ibf/guid2lid.h"

#include <charconv>
#include <cstdio>

#include "ibf/error.h"

namespace ibf::ha {

namespace {

constexpr uint16_t kMaxUnicastLid = 0xbfff;

void add_port(Guid2Lid& m, const Port& p) {
    if (!p.valid || p.guid == 0 || p.lid == 0) return;
    const unsigned last = p.lid + (1u << (p.lmc & 7)) - 1;
    m[p.guid] = {p.lid, static_cast<uint16_t>(last > kMaxUnicastLid ? kMaxUnicastLid : last)};
}

bool is_key(std::string_view k) {
    if (k.size() != 18 || k.substr(0, 2) != "0x") return false;
    for (char c : k.substr(2))
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

// A LID as OpenSM's unpack_lids reads it (strtoul base 0): 0x-hex, or decimal.
bool parse_lid(std::string_view s, uint16_t& out) {
    unsigned v = 0;
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char* b = s.data() + (hex ? 2 : 0);
    auto [p, ec] = std::from_chars(b, s.data() + s.size(), v, hex ? 16 : 10);
    if (ec != std::errc() || p != s.data() + s.size() || v == 0 || v > kMaxUnicastLid) return false;
    out = static_cast<uint16_t>(v);
    return true;
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> w;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
        if (j > i) w.push_back(line.substr(i, j - i));
        i = j;
    }
    return w;
}

// One entry line "<key> <first> <last>"; throws with the line number.
void parse_entry(std::string_view line, const std::string& file, int n, Guid2Lid& m,
                 std::map<uint16_t, Guid>& owner) {
    const auto w = words(line);
    if (w.size() != 3)
        throw InputError(file, n, 0, "expected \"0x<16 hex digits> <first LID> <last LID>\", got \"" +
                                         printable(line) + "\"");
    if (!is_key(w[0]))
        throw InputError(file, n, 0, "GUID \"" + printable(w[0]) +
                                         "\" is not 0x + 16 lowercase hex digits (OpenSM would ignore it)");
    LidRange r;
    if (!parse_lid(w[1], r.first) || !parse_lid(w[2], r.last) || r.last < r.first)
        throw InputError(file, n, 0, "bad LID range \"" + printable(line.substr(19)) + "\" (unicast 1..0xbfff, first <= last)");
    const Guid g = *parse_guid(w[0]);
    if (!m.emplace(g, r).second) throw InputError(file, n, 0, "GUID " + std::string(w[0]) + " appears twice");
    for (unsigned lid = r.first; lid <= r.last; ++lid) {
        auto [it, fresh] = owner.emplace(static_cast<uint16_t>(lid), g);
        if (!fresh)
            throw InputError(file, n, 0, "LID " + std::to_string(lid) + " of " + std::string(w[0]) +
                                             " is already used by " + guid_hex(it->second));
    }
}

}  // namespace

Guid2Lid guid2lid_map(const Fabric& f) {
    Guid2Lid m;
    for (const Node& n : f.nodes()) {
        if (n.type == NodeType::Switch) {
            if (const Port* p0 = n.port(0)) add_port(m, *p0);
            continue;
        }
        for (int i = 1; i <= n.num_ports(); ++i)
            if (const Port* p = n.port(i)) add_port(m, *p);
    }
    return m;
}

std::string guid2lid_text(const Guid2Lid& m) {
    std::string out;
    out.reserve(m.size() * 36);
    char buf[64];
    for (const auto& [g, r] : m) {
        std::snprintf(buf, sizeof buf, "0x%016llx 0x%04x 0x%04x\n\n", static_cast<unsigned long long>(g),
                      static_cast<unsigned>(r.first), static_cast<unsigned>(r.last));
        out += buf;
    }
    return out;
}

std::string guid2lid_text(const Fabric& f) { return guid2lid_text(guid2lid_map(f)); }

Guid2Lid parse_guid2lid(std::string_view text, const std::string& file) {
    if (text.size() > kMaxGuid2LidBytes)
        throw InputError(file, 0, 0, "larger than " + std::to_string(kMaxGuid2LidBytes) + " bytes");
    Guid2Lid m;
    std::map<uint16_t, Guid> owner;
    int n = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++n;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        if (line[0] == ' ' || line[0] == '\t')
            throw InputError(file, n, 0, "a value continuation line (OpenSM's guid2lid has one line per entry)");
        parse_entry(line, file, n, m, owner);
    }
    return m;
}

Guid2Lid merge_guid2lid(const Guid2Lid& previous, const Guid2Lid& current) {
    Guid2Lid out = current;
    std::vector<bool> used(kMaxUnicastLid + 1u, false);
    auto mark = [&](const LidRange& r) {
        for (unsigned l = r.first; l <= r.last && l <= kMaxUnicastLid; ++l) used[l] = true;
    };
    auto free_range = [&](const LidRange& r) {
        for (unsigned l = r.first; l <= r.last && l <= kMaxUnicastLid; ++l)
            if (used[l]) return false;
        return true;
    };
    for (const auto& [g, r] : current) mark(r);
    for (const auto& [g, r] : previous) {
        if (current.count(g) || r.first == 0 || r.last < r.first || !free_range(r)) continue;
        out.emplace(g, r);
        mark(r);
    }
    return out;
}

std::vector<LidChange> lid_changes(const Guid2Lid& before, const Guid2Lid& after) {
    std::vector<LidChange> out;
    for (const auto& [g, r] : before) {
        auto it = after.find(g);
        if (it != after.end() && !(it->second == r)) out.push_back({g, r, it->second});
    }
    return out;
}

}  // namespace ibf::ha
