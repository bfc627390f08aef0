// "Did you mean": one rule for every reader of configuration (plans, daemon config) that names a
// word it does not know. Pure.
//
//   did_you_mean("retention_day", {"path", "retention_days"})  -> "; did you mean 'retention_days'?"
//   did_you_mean("colour", {"path"})                            -> ""   (nothing close enough)
//   unknown_key("history.", "retension_days", {"path", "retention_days", "max_sweeps"})
//     -> "unknown key 'history.retension_days' (expected path, retention_days, max_sweeps); did you mean
//        'retention_days'?"
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

// The message for a key a mapping does not know: its full dotted name, the keys it takes, and a
// suggestion when one is close. `prefix` is "" for the top level, else "section." .
std::string unknown_key(std::string_view prefix, std::string_view key, const std::vector<std::string>& expected);

}  // namespace ibf
