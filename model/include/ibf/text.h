// Text for a terminal: names and messages that came from the fabric (a NodeDescription is 64
// bytes any switch or host owner chooses) are escaped before a text report prints them, so an
// escape sequence in a NodeDescription cannot recolour, retitle or rewrite the terminal.
// JSON output needs none of this (the JSON writer escapes control characters itself).
//
//   terminal_safe("leaf01\x1b]0;pwned\x07")  -> "leaf01\x1b]0;pwned\x07" written out as the
//                                               literal characters \ x 1 b ... \ x 0 7
//   terminal_safe("Grüße")                   -> "Grüße" (valid UTF-8 other than C1 controls stays)
#pragma once

#include <string>
#include <string_view>

namespace ibf {

// Control bytes (0x00-0x1f, 0x7f), C1 controls (U+0080-U+009F) and bytes that are not valid
// UTF-8 become \xNN (one per byte); everything else is copied.
std::string terminal_safe(std::string_view s);

}  // namespace ibf
