// "Did you mean": one rule for every reader of configuration (plans, daemon config) that names a
// word it does not know. Pure.
//
//   did_you_mean("retention_day", {"path", "retention_days"})  -> "; did you mean 'retention_days'?"
//   did_you_mean("colour", {"path"})                            -> ""   (nothing close enough)
//   unknown_key("history.", "retension_days", {"path", "retention_days", "max_sweeps"})
//     -> "unknown key 'history.retension_days'; did you mean 'retention_days'? (expected one of: path,
//        retention_days, max_sweeps)"
//   unknown_key("", "cable_per_pair", {"names", "cables_per_pair"}, "tier 'leaf'")
//     -> "unknown key 'cable_per_pair' in tier 'leaf'; did you mean 'cables_per_pair'? (expected one
//        of: names, cables_per_pair)"
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ibf {

// Levenshtein distance (insert, delete, substitute: 1 each).
size_t edit_distance(std::string_view a, std::string_view b);

// "; did you mean 'x'?" for the closest candidate when it is within 1 edit (words of up to 3
// characters), 2 (up to 6) or 3 (longer); "" when none is. Ties go to the first candidate.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// The one wording of every reader (plan, daemon config, waiver file) for a key a mapping does not
// know: "unknown key 'PREFIXKEY'[ in WHERE][; did you mean 'Y'?] (expected one of: A, B, C)".
// `prefix` is "" or "section." (the daemon config names a key by its dotted path); `where` is ""
// or the mapping's name ("tier 'leaf'", "a waiver"). The key is quoted as printable() shows input
// (ibf/error.h); the suggestion only when did_you_mean() finds one close. The caller adds its
// file:line:column.
std::string unknown_key(std::string_view prefix, std::string_view key, const std::vector<std::string>& expected,
                        std::string_view where = {});

}  // namespace ibf
