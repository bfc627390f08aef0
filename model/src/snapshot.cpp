// Snapshot helpers (ibf/snapshot.h).
#include "ibf/snapshot.h"

#include <functional>
#include <string_view>

namespace ibf {

uint64_t lft_hash(const std::vector<uint8_t>& port_by_lid) {
    std::string_view bytes(reinterpret_cast<const char*>(port_by_lid.data()), port_by_lid.size());
    return std::hash<std::string_view>{}(bytes) ^ (port_by_lid.size() * 0x9E3779B97F4A7C15ULL);
}

}  // namespace ibf
