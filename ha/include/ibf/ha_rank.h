// Which SM should be master: OpenSM's own ranking (osm_sm_is_greater_than() in OpenSM): the higher
// sm_priority wins; on equal priority the lower port GUID wins. Pure.
//
//   ibf::ha::sm_outranks(14, 0x10, 14, 0x20)  // true: same priority, lower GUID
//   ibf::ha::sm_outranks(1, 0x10, 15, 0x20)   // false: priority first
#pragma once

#include <cstdint>

#include "ibf/fabric.h"

namespace ibf::ha {

constexpr bool sm_outranks(uint8_t prio_a, Guid guid_a, uint8_t prio_b, Guid guid_b) {
    if (prio_a != prio_b) return prio_a > prio_b;
    return guid_a < guid_b;
}

}  // namespace ibf::ha
