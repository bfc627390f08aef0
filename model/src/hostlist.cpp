// hostlist.h: Slurm hostlist compression and expansion.
#include "ibf/hostlist.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "ibf/error.h"

namespace ibf {

namespace {

constexpr size_t kMaxNames = 1000000;

std::string padded(unsigned long v, size_t width) {
    std::string s = std::to_string(v);
    return s.size() < width ? std::string(width - s.size(), '0') + s : s;
}

}  // namespace

std::string hostlist_compress(std::vector<std::string> names) {
    // (prefix, fixed width or 0) -> numbers; names without a trailing number stay literal.
    // A number without leading zeros joins the zero-padded group of its own width when there is
    // one: leaf01..leaf18 is "leaf[01-18]", not "leaf[01-09],leaf[10-18]".
    std::map<std::pair<std::string, size_t>, std::set<unsigned long>> groups;
    std::set<std::string> literal;
    std::vector<std::pair<std::pair<std::string, size_t>, unsigned long>> unpadded;  // ((prefix, digits), value)
    for (const std::string& n : names) {
        size_t d = n.size();
        while (d > 0 && n[d - 1] >= '0' && n[d - 1] <= '9') --d;
        const std::string digits = n.substr(d);
        unsigned long v = 0;
        if (digits.empty() || digits.size() > 9 || std::from_chars(digits.data(), digits.data() + digits.size(), v).ec != std::errc()) {
            literal.insert(n);
            continue;
        }
        if (digits.size() > 1 && digits[0] == '0') groups[{n.substr(0, d), digits.size()}].insert(v);
        else unpadded.push_back({{n.substr(0, d), digits.size()}, v});
    }
    for (const auto& [key, v] : unpadded) {
        auto padded_group = groups.find(key);
        if (padded_group != groups.end()) padded_group->second.insert(v);
        else groups[{key.first, 0}].insert(v);
    }
    std::vector<std::pair<std::string, std::string>> parts;  // (sort key, text)
    for (const std::string& l : literal) parts.push_back({l, l});
    for (const auto& [key, nums] : groups) {
        const auto& [prefix, width] = key;
        std::vector<std::string> ranges;
        for (auto it = nums.begin(); it != nums.end();) {
            unsigned long lo = *it, hi = lo;
            while (++it != nums.end() && *it == hi + 1) hi = *it;
            ranges.push_back(lo == hi ? padded(lo, width) : padded(lo, width) + "-" + padded(hi, width));
        }
        std::string text = prefix;
        if (nums.size() == 1) {
            text += ranges[0];
        } else {
            text += "[";
            for (size_t i = 0; i < ranges.size(); ++i) text += (i ? "," : "") + ranges[i];
            text += "]";
        }
        parts.push_back({prefix + padded(*nums.begin(), 12), text});
    }
    std::sort(parts.begin(), parts.end());
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ",") + p.second;
    return out;
}

std::vector<std::string> hostlist_expand(std::string_view list, const std::string& source) {
    std::vector<std::string> out;
    auto fail = [&](size_t at, const std::string& m) -> void { throw InputError(source, 1, static_cast<int>(at) + 1, m); };
    size_t i = 0;
    while (i < list.size()) {
        // One name part: text, optionally one [ranges] and more text, up to a top-level comma.
        size_t start = i, open = std::string_view::npos, close = std::string_view::npos;
        for (; i < list.size() && (list[i] != ',' || (open != std::string_view::npos && close == std::string_view::npos)); ++i) {
            if (list[i] == '[') {
                if (open != std::string_view::npos) fail(i, "only one [...] per name is supported");
                open = i;
            } else if (list[i] == ']') {
                if (open == std::string_view::npos || close != std::string_view::npos) fail(i, "']' without '['");
                close = i;
            }
        }
        if (open != std::string_view::npos && close == std::string_view::npos) fail(open, "'[' without ']'");
        const size_t end = i;
        const std::string_view part = list.substr(start, end - start);
        if (i < list.size()) ++i;  // the comma
        if (part.empty()) continue;
        if (open == std::string_view::npos) {
            out.emplace_back(part);
            continue;
        }
        const std::string prefix(list.substr(start, open - start)), suffix(list.substr(close + 1, end - (close + 1)));
        size_t r = open + 1;
        while (r < close) {
            size_t e = list.find_first_of(",]", r);
            const std::string_view range = list.substr(r, e - r);
            const size_t dash = range.find('-');
            const std::string_view lo_s = range.substr(0, dash), hi_s = dash == std::string_view::npos ? lo_s : range.substr(dash + 1);
            unsigned long lo = 0, hi = 0;
            if (lo_s.empty() || hi_s.empty() ||
                std::from_chars(lo_s.data(), lo_s.data() + lo_s.size(), lo).ptr != lo_s.data() + lo_s.size() ||
                std::from_chars(hi_s.data(), hi_s.data() + hi_s.size(), hi).ptr != hi_s.data() + hi_s.size())
                fail(r, "bad range '" + printable(range) + "' (expected N or N-M)");
            if (hi < lo) fail(r, "range '" + printable(range) + "' runs backwards");
            if (hi - lo >= kMaxNames || out.size() + (hi - lo) >= kMaxNames) fail(r, "more than 1000000 names");
            for (unsigned long v = lo; v <= hi; ++v) out.push_back(prefix + padded(v, lo_s.size()) + suffix);
            r = e + 1;
        }
    }
    return out;
}

}  // namespace ibf
