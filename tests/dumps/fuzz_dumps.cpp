// libFuzzer entry point (optional, -DIBF_DUMPS_FUZZ=ON with clang): every reader must return a Fabric
// or throw ibf::InputError; anything else (crash, sanitizer report, other exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ibf/dumps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string file = "fuzz";
    for (auto* parse : {&ibf::parse_ibnetdiscover, &ibf::parse_iblinkinfo, &ibf::parse_ibdiagnet_net, &ibf::parse_dump}) {
        try {
            ibf::Fabric f = parse(text, file);
            // What was read must also write and read back.
            ibf::Fabric g = ibf::parse_ibnetdiscover(ibf::write_ibnetdiscover(f), "written");
            if (g.link_count() != f.link_count()) __builtin_trap();
        } catch (const ibf::InputError&) {
        }
    }
    try {
        (void)ibf::parse_node_name_map(text, file);
    } catch (const ibf::InputError&) {
    }
    return 0;
}
