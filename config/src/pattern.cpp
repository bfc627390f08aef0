// Name patterns: "leaf[01-18]", "r[1-2]n[01-18]", "sw[1-2,5]".
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"

namespace ibf {
namespace {

struct Piece {
    std::string literal;                                     // text before the bracket
    std::vector<std::pair<long long, long long>> ranges;     // inclusive, empty = last literal only
    std::vector<int> widths;                                 // zero-pad width per range (0 = none)
    size_t count = 1;
};

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

std::vector<std::string> expand_name_pattern(std::string_view pattern, const std::string& file, int line,
                                             int column, size_t max_names) {
    auto fail = [&](size_t offset, const std::string& msg) -> void {
        // Point into the pattern when we know where it starts.
        int col = column > 0 ? column + static_cast<int>(offset) : 0;
        throw InputError(file, line, col, msg);
    };
    const std::string quoted = "'" + printable(pattern) + "'";  // bounded: a pattern may be long
    if (pattern.empty()) fail(0, "empty name: expected a name or a pattern such as leaf[01-18]");

    std::vector<Piece> pieces;
    std::string tail;
    size_t i = 0;
    size_t total = 1;
    while (i < pattern.size()) {
        size_t open = pattern.find_first_of("[]", i);
        if (open == std::string_view::npos) {
            tail = std::string(pattern.substr(i));
            break;
        }
        if (pattern[open] == ']')
            fail(open, "bad pattern " + quoted + ": ']' without '[' (expected e.g. leaf[01-18])");
        size_t close = pattern.find(']', open + 1);
        if (close == std::string_view::npos)
            fail(open, "bad pattern " + quoted + ": '[' is never closed (expected e.g. leaf[01-18])");
        Piece p;
        p.literal = std::string(pattern.substr(i, open - i));
        p.count = 0;
        std::string_view body = pattern.substr(open + 1, close - open - 1);
        if (body.empty()) fail(open, "bad pattern " + quoted + ": empty brackets (expected e.g. [01-18])");
        if (body.find('[') != std::string_view::npos)
            fail(open, "bad pattern " + quoted + ": nested '[' (expected e.g. leaf[01-18])");
        size_t pos = 0;
        while (pos <= body.size()) {
            size_t comma = body.find(',', pos);
            if (comma == std::string_view::npos) comma = body.size();
            std::string_view item = body.substr(pos, comma - pos);
            size_t item_off = open + 1 + pos;
            size_t dash = item.find('-');
            std::string_view a = dash == std::string_view::npos ? item : item.substr(0, dash);
            std::string_view b = dash == std::string_view::npos ? item : item.substr(dash + 1);
            if (!all_digits(a) || !all_digits(b) || a.size() > 9 || b.size() > 9)
                fail(item_off, "bad range '" + std::string(item) + "' in pattern " + quoted +
                                   ": expected numbers such as 01-18 or 7");
            long long lo = 0, hi = 0;
            std::from_chars(a.data(), a.data() + a.size(), lo);
            std::from_chars(b.data(), b.data() + b.size(), hi);
            if (lo > hi)
                fail(item_off, "bad range '" + std::string(item) + "' in pattern " + quoted +
                                   ": start is greater than end");
            int width = (a.size() > 1 && a[0] == '0') ? static_cast<int>(a.size()) : 0;
            p.ranges.emplace_back(lo, hi);
            p.widths.push_back(width);
            size_t n = static_cast<size_t>(hi - lo + 1);
            if (n > max_names)
                fail(item_off, "pattern " + quoted + " expands to more than " + std::to_string(max_names) + " names");
            p.count += n;
            if (p.count > max_names)
                fail(open, "pattern " + quoted + " expands to more than " + std::to_string(max_names) + " names");
            pos = comma + 1;
        }
        total *= p.count;
        if (total > max_names)
            fail(0, "pattern " + quoted + " expands to more than " + std::to_string(max_names) + " names");
        pieces.push_back(std::move(p));
        i = close + 1;
    }

    // The longest name, before any is made: "<2000 x A>[1-1000000]" must not cost 2 GB.
    size_t longest = tail.size();
    for (const Piece& p : pieces) {
        size_t digits = 0;
        for (size_t r = 0; r < p.ranges.size(); ++r)
            digits = std::max({digits, std::to_string(p.ranges[r].second).size(), static_cast<size_t>(p.widths[r])});
        longest += p.literal.size() + digits;
    }
    if (longest > kMaxNameBytes)
        fail(0, "pattern " + quoted + " makes names of " + std::to_string(longest) + " bytes; a name has at most " +
                    std::to_string(kMaxNameBytes));

    std::vector<std::string> out;
    out.reserve(total);
    // Odometer over the pieces; the first bracket varies slowest.
    std::vector<size_t> idx(pieces.size(), 0);
    std::vector<std::vector<std::string>> values(pieces.size());
    for (size_t k = 0; k < pieces.size(); ++k) {
        values[k].reserve(pieces[k].count);
        for (size_t r = 0; r < pieces[k].ranges.size(); ++r) {
            auto [lo, hi] = pieces[k].ranges[r];
            for (long long v = lo; v <= hi; ++v) {
                std::string s = std::to_string(v);
                if (static_cast<int>(s.size()) < pieces[k].widths[r])
                    s.insert(0, static_cast<size_t>(pieces[k].widths[r]) - s.size(), '0');
                values[k].push_back(std::move(s));
            }
        }
    }
    for (size_t n = 0; n < total; ++n) {
        std::string name;
        for (size_t k = 0; k < pieces.size(); ++k) {
            name += pieces[k].literal;
            name += values[k][idx[k]];
        }
        name += tail;
        out.push_back(std::move(name));
        for (size_t k = pieces.size(); k-- > 0;) {
            if (++idx[k] < values[k].size()) break;
            idx[k] = 0;
        }
    }
    return out;
}

}  // namespace ibf
