// What the HA engine's tests feed it: an SM's SMInfo as its plugin reports it, a SubnGet(SMInfo)
// answer, a lost probe. Shared by tests/ha/*_test.cpp (one definition, one default ActCount).
#pragma once

#include "ibf/smp.h"
#include "ibf/snapshot.h"

namespace ibf::ha::test {

inline SmInfo sm(Guid g, uint16_t lid, uint8_t prio, SmState st, uint32_t ac = 100) { return {g, lid, prio, st, ac}; }

inline SmInfoReply answer(Guid g, uint8_t prio, SmState st, uint32_t ac = 100) {
    SmInfoReply r;
    r.status = SmpStatus::ok;
    r.info = sm(g, 0, prio, st, ac);
    return r;
}

inline SmInfoReply lost() {
    SmInfoReply r;
    r.status = SmpStatus::timeout;
    r.error = "timeout";
    return r;
}

// What a live node whose SM process is gone answers SMInfo with on hardware: the kernel's MAD
// layer, no agent registered, status 0x000C (docs/ha-facts.md).
inline SmInfoReply no_sm() {
    SmInfoReply r;
    r.status = SmpStatus::no_sm;
    r.mad_status = kMadStatusUnsupportedMethodAttr;
    r.error = "MAD status 0x000c (no SM at that port)";
    return r;
}

}  // namespace ibf::ha::test
