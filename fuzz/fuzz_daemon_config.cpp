// libFuzzer target: ibfabricd's configuration file (docs/daemon.md). Any input either parses or
// is an ibf::InputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibf/daemon_config.h"
#include "ibf/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const ibf::DaemonConfig c = ibf::parse_daemon_config(text, "/etc/ibfabric/fuzz.yaml");
        (void)ibf::http_exposure_warning(c);
    } catch (const ibf::InputError&) {
    }
    return 0;
}
