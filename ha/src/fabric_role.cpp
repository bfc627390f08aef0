// Which daemon of an HA pair publishes the fabric as `active` (fabric_role.h has the rules).
#include "ibf/fabric_role.h"

#include "ibf/ha_engine.h"

namespace ibf::ha {

std::string_view to_string(FabricRole r) { return r == FabricRole::active ? "active" : "standby"; }

RoleDecision fabric_role(const RoleView& v) {
    constexpr auto active = FabricRole::active, standby = FabricRole::standby;
    if (!v.ha) return {active, "not in an HA pair (no ha: section)"};
    if (v.local_is_master && !v.local_suspect) return {active, "this node's SM is the live master"};
    if (v.master && *v.master != v.local_sm) return {standby, "another SM is the master"};
    if (v.master) {
        if (v.successor && *v.successor != v.local_sm) return {standby, "this node's master SM is failing; its successor takes over"};
        return {active, "this node's master SM is failing and no standby can succeed it"};
    }
    if (!v.successor) return {active, "no live SM: every daemon publishes"};
    if (*v.successor == v.local_sm) return {active, "no master: this node's SM is the designated successor"};
    return {standby, "no master: another SM is the designated successor"};
}

RoleView role_view(const HaEngine& e, int64_t now_ms) {
    RoleView v;
    v.ha = true;
    v.local_sm = e.local_sm();
    v.local_is_master = e.local_is_master(now_ms);
    v.local_suspect = v.local_sm && e.suspect(v.local_sm, now_ms);
    v.master = e.master();
    v.successor = e.successor(now_ms);
    return v;
}

}  // namespace ibf::ha
