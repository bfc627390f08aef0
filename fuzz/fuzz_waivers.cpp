// libFuzzer target: waiver files (checks/waivers.h), aliases and duplicate keys included.
// Any input either loads or is an ibf::InputError; a loaded set stays within the expanded-size
// bound (kMaxWaiverYamlNodes strings at most); anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibf/error.h"
#include "ibf/waivers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const ibf::WaiverSet w = ibf::parse_waivers(text, "fuzz.yaml");
        size_t strings = 0;
        for (const ibf::Waiver& x : w.waivers) strings += x.kinds.size() + x.ends.size() + x.labels.size() + 2;
        if (strings > ibf::kMaxWaiverYamlNodes) std::abort();  // the bound leaked
    } catch (const ibf::InputError&) {
    }
    return 0;
}
