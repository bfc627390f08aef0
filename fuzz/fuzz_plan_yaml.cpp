// libFuzzer target: the YAML plan loader (compact fat-tree + explicit cables, docs/plan.md).
// Any input either loads or is an ibf::InputError; a loaded plan stays within the expanded-size
// limits (plan_yaml.h: nodes, cables); anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const ibf::Plan p = ibf::parse_plan_yaml(text, "fuzz.yaml");
        if (p.nodes.size() > ibf::kMaxPlanNodes || p.links.size() > ibf::kMaxPlanLinks) std::abort();
    } catch (const ibf::InputError&) {
    }
    return 0;
}
