// Natural string order for stable, human-friendly sorting of findings: "leaf2" < "leaf10".
// Internal to ibf_checks.
#pragma once

#include <cctype>
#include <cstddef>
#include <string_view>

namespace ibf::detail {

// Natural order: "leaf2" < "leaf10".
inline int natural_compare(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        unsigned char ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[j]);
        if (std::isdigit(ca) && std::isdigit(cb)) {
            size_t i2 = i, j2 = j;
            while (i2 < a.size() && a[i2] == '0') ++i2;
            while (j2 < b.size() && b[j2] == '0') ++j2;
            size_t ie = i2, je = j2;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
            if (ie - i2 != je - j2) return ie - i2 < je - j2 ? -1 : 1;
            if (int c = a.substr(i2, ie - i2).compare(b.substr(j2, je - j2)); c != 0) return c < 0 ? -1 : 1;
            if ((i2 - i) != (j2 - j)) return (i2 - i) < (j2 - j) ? -1 : 1;  // fewer leading zeros first
            i = ie;
            j = je;
        } else {
            if (ca != cb) return ca < cb ? -1 : 1;
            ++i;
            ++j;
        }
    }
    if (i < a.size()) return 1;
    if (j < b.size()) return -1;
    return 0;
}

}  // namespace ibf::detail
