// libFuzzer target: the ibnetdiscover reader. Any input either parses (and round-trips) or is an
// ibf::InputError;
// anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibf/dumps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ibf::Fabric f;
    try {
        f = ibf::parse_ibnetdiscover(text, "fuzz.txt");
    } catch (const ibf::InputError&) {
        return 0;
    }
    // What was read must write as ibnetdiscover and read back with the same links (an InputError
    // here escapes: the writer produced what the reader refuses).
    const ibf::Fabric g = ibf::parse_ibnetdiscover(ibf::write_ibnetdiscover(f), "written");
    if (g.link_count() != f.link_count()) std::abort();
    return 0;
}
