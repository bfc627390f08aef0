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

const RoleDecision& RoleHold::step(const RoleView& v, int64_t now_ms) {
    const RoleDecision d = fabric_role(v);
    const bool local_master = v.local_sm && (v.local_is_master || (v.master && *v.master == v.local_sm));
    const bool other_master = v.master && *v.master != v.local_sm;
    const bool was_active = published_ && published_->role == FabricRole::active;
    if (!published_ || !v.ha || (was_active && d.role == FabricRole::active)) {
        published_ = d;  // the first step, no HA, or still active (its reason may change)
        pending_since_.reset();
        local_was_master_ = d.role == FabricRole::standby && local_master;
        return *published_;
    }
    if (d.role == FabricRole::standby) {  // at once
        if (was_active) local_was_master_ = local_master;
        else if (other_master) local_was_master_ = false;  // a later local master is a takeover
        else local_was_master_ = local_was_master_ || local_master;
        published_ = d;
        pending_since_.reset();
        return *published_;
    }
    // Standby published, active decided: at once for a takeover, else once it has held.
    const bool takeover = v.local_is_master && !v.local_suspect && !local_was_master_;
    if (!pending_since_) pending_since_ = now_ms;
    if (takeover || now_ms - *pending_since_ >= hold_ms_) {
        published_ = d;
        pending_since_.reset();
    }
    return *published_;
}

}  // namespace ibf::ha
