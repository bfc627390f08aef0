// Text for a terminal: names and messages that came from the fabric (a NodeDescription is 64
// bytes any switch or host owner chooses) are escaped before a text report prints them, so an
// escape sequence in a NodeDescription cannot recolour, retitle or rewrite the terminal.
// JSON output needs none of this (the JSON writer escapes control characters itself).
// And join(), the one way a message lists names ("expected one of: a, b, c"), and trim().
//
//   terminal_safe("leaf01\x1b]0;pwned\x07")  -> "leaf01\x1b]0;pwned\x07" written out as the
//                                               literal characters \ x 1 b ... \ x 0 7
//   terminal_safe("Grüße")                   -> "Grüße" (valid UTF-8 other than C1 controls stays)
//   join({"a", "b", "c"})                    -> "a, b, c"
//   trim(" \tleaf01 \r")                     -> "leaf01"
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ibf {

// Control bytes (0x00-0x1f, 0x7f), C1 controls (U+0080-U+009F) and bytes that are not valid
// UTF-8 become \xNN (one per byte); everything else is copied.
std::string terminal_safe(std::string_view s);

// The strings of `v` in order with `sep` between them ("" for none).
std::string join(const std::vector<std::string>& v, std::string_view sep = ", ");

// `s` without leading and trailing ASCII white space (space, \t, \n, \v, \f, \r), whatever the
// locale; a view into `s`.
std::string_view trim(std::string_view s);

}  // namespace ibf
