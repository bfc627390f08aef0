// libFuzzer target: the YAML plan loader (compact fat-tree + explicit cables, docs/plan.md).
// Any input either loads or is an ibf::InputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)ibf::parse_plan_yaml(text, "fuzz.yaml");
    } catch (const ibf::InputError&) {
    }
    return 0;
}
