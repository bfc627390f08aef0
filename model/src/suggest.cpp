#include "ibf/suggest.h"

#include <algorithm>
#include <cstdint>

#include "ibf/error.h"
#include "ibf/text.h"

namespace ibf {

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    const std::string* best = nullptr;
    size_t best_d = SIZE_MAX;
    for (const auto& c : candidates) {
        const size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = &c;
        }
    }
    if (!best || best->empty()) return "";
    const size_t len = std::max(word.size(), best->size());
    const size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    if (best_d > limit) return "";
    return "; did you mean '" + *best + "'?";
}

std::string unknown_key(std::string_view prefix, std::string_view key, const std::vector<std::string>& expected,
                        std::string_view where) {
    std::string s = "unknown key '" + std::string(prefix) + printable(key) + "'";
    if (!where.empty()) s += " in " + std::string(where);
    return s + did_you_mean(key, expected) + " (expected one of: " + join(expected) + ")";
}

}  // namespace ibf
