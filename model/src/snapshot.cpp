// Snapshot helpers (ibf/snapshot.h).
#include "ibf/snapshot.h"

#include <functional>
#include <string_view>

namespace ibf {

SwitchLft::SwitchLft(Guid guid, Bytes port_by_lid, uint64_t h)
    : switch_guid(guid), hash(h), bytes_(std::make_shared<const Bytes>(std::move(port_by_lid))) {}

SwitchLft::SwitchLft(Guid guid, std::shared_ptr<const Bytes> port_by_lid, uint64_t h)
    : switch_guid(guid), hash(h), bytes_(std::move(port_by_lid)) {}

void SwitchLft::set_port_by_lid(Bytes port_by_lid, uint64_t h) {
    bytes_ = std::make_shared<const Bytes>(std::move(port_by_lid));
    hash = h;
}

uint64_t lft_hash(const std::vector<uint8_t>& port_by_lid) {
    std::string_view bytes(reinterpret_cast<const char*>(port_by_lid.data()), port_by_lid.size());
    return std::hash<std::string_view>{}(bytes) ^ (port_by_lid.size() * 0x9E3779B97F4A7C15ULL);
}

}  // namespace ibf
