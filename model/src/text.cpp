// terminal_safe(): escaping fabric-supplied text for text reports; join() (model/include/ibf/text.h).
#include "ibf/text.h"

namespace ibf {
namespace {

void hex_byte(std::string& out, unsigned char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
}

// Length of the valid UTF-8 sequence starting at s[i] (2-4), or 0 when there is none.
size_t utf8_sequence(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
        return 0;  // overlong, surrogate or beyond U+10FFFF
    if (c == 0xc2 && c1 <= 0x9f) return 0;  // C1 control (0x9b is a one-byte CSI)
    return n;
}

}  // namespace

std::string terminal_safe(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
            ++i;
        } else if (size_t n = c >= 0x80 ? utf8_sequence(s, i) : 0) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            hex_byte(out, c);
            ++i;
        }
    }
    return out;
}

std::string_view trim(std::string_view s) {
    auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) s += sep;
        s += v[i];
    }
    return s;
}

}  // namespace ibf
