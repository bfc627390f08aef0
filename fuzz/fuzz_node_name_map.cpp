// libFuzzer target: the node-name-map reader (and the format-detecting dump reader on the same
// bytes). Any input either parses or is an ibf::InputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibf/dumps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)ibf::parse_node_name_map(text, "fuzz.map");
    } catch (const ibf::InputError&) {
    }
    try {
        (void)ibf::parse_dump(text, "fuzz.txt");
    } catch (const ibf::InputError&) {
    }
    return 0;
}
