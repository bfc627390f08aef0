// SM ranking is header-only (ha_rank.h); this file keeps the pure part of ibf_ha non-empty until
// the engine lands.
#include "ibf/ha_rank.h"

static_assert(ibf::ha::sm_outranks(14, 0x10, 14, 0x20));
static_assert(!ibf::ha::sm_outranks(1, 0x10, 15, 0x20));
