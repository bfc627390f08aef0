// Natural string order (natural.h).
#include "ibf/natural.h"

#include <cstddef>

namespace ibf {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

int natural_compare(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            size_t i2 = i, j2 = j;
            while (i2 < a.size() && a[i2] == '0') ++i2;
            while (j2 < b.size() && b[j2] == '0') ++j2;
            size_t ie = i2, je = j2;
            while (ie < a.size() && digit(a[ie])) ++ie;
            while (je < b.size() && digit(b[je])) ++je;
            if (ie - i2 != je - j2) return ie - i2 < je - j2 ? -1 : 1;
            if (int c = a.substr(i2, ie - i2).compare(b.substr(j2, je - j2)); c != 0) return c < 0 ? -1 : 1;
            if (i2 - i != j2 - j) return i2 - i < j2 - j ? -1 : 1;  // fewer leading zeros first
            i = ie;
            j = je;
        } else {
            const auto ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[j]);
            if (ca != cb) return ca < cb ? -1 : 1;
            ++i;
            ++j;
        }
    }
    if (i < a.size()) return 1;
    if (j < b.size()) return -1;
    return 0;
}

}  // namespace ibf
