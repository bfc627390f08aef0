// Internal: memoizes ibf::parse_rate for the handful of distinct rate spellings a dump contains
// (parse_rate allocates; a 230k-line dump repeats the same few strings).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibf/rate.h"

namespace ibf::detail {

class RateCache {
public:
    std::optional<Rate> parse(std::string_view s) {
        for (const auto& [k, v] : cache_)
            if (k == s) return v;
        auto r = parse_rate(s);
        if (cache_.size() < 64) cache_.emplace_back(std::string(s), r);
        return r;
    }

private:
    std::vector<std::pair<std::string, std::optional<Rate>>> cache_;
};

}  // namespace ibf::detail
