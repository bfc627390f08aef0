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

}  // namespace ibf::ha::test
