// Which daemon of an HA pair publishes the fabric's findings as `active` on /metrics; the others
// mirror the same series as `standby` (the `role` label, docs/metrics.md "One copy per HA pair"),
// so the shipped alert rules fire once per fault however many SM nodes run ibfabricd. Pure: what
// the HA engine knows at `now`, no clocks, no I/O.
//
//   RoleDecision d = fabric_role(role_view(engine, now));   // without `ha:`: fabric_role({})
//   out += d.role == FabricRole::active ? "active" : "standby";   // d.why says which rule
//
// The rules, in order (each has a test in tests/ha/fabric_role_test.cpp named after it):
// 1. a daemon without `ha:` is not one of a pair: active (one SM, or a central daemon);
// 2. this node's SM is the live MASTER and no witness suspects it: active;
// 3. another SM is the master: standby (its node's daemon is the active one);
// 4. this node's SM is the master but suspect (its plugin, on this host, gone or silent; an SMInfo
//    probe failed) or no longer alive, and a live STANDBY will succeed it: standby at once, so the
//    successor's daemon, which turns active only when its engine has proved the master dead
//    (rule 5: the plugin gone and at least two failed probes), never overlaps with it (on ibsim
//    this node's own probe of its killed SM may still be answered: the plugin decides); with no
//    live STANDBY: active (nobody else would);
// 5. no master at all: the designated successor's daemon is active, the others standby; with no
//    live SM at all, every daemon is active (a duplicate, never no copy: the data_fresh gauge
//    tells that the copy is stale).
// So a kill of the master gives no two active copies, and no active copy only between the old
// master's daemon seeing its SM fail and the successor's daemon proving it dead (11-117 ms on one
// host in the lab; across nodes `flap_window_ms`, the failover's own wait); the shipped rules
// bridge that gap with the standby copies.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ibf/fabric.h"

namespace ibf::ha {

class HaEngine;

enum class FabricRole : uint8_t { active, standby };
std::string_view to_string(FabricRole r);  // "active", "standby"

// What the decision needs, from HaEngine (role_view) or written by hand in tests.
struct RoleView {
    bool ha = false;                 // the daemon has an `ha:` section
    Guid local_sm = 0;               // this node's SM (0: its plugin not seen yet)
    bool local_is_master = false;    // HaEngine::local_is_master(): MASTER and alive
    bool local_suspect = false;      // HaEngine::suspect() of the local SM: plugin gone or SMInfo failing
    std::optional<Guid> master;      // HaEngine::master(): MASTER and not dead by the evidence
    std::optional<Guid> successor;   // HaEngine::successor(): the live STANDBY that takes over
};

struct RoleDecision {
    FabricRole role = FabricRole::active;
    std::string_view why;            // the rule that decided, for logs and tests
};

RoleDecision fabric_role(const RoleView& v);
RoleView role_view(const HaEngine& e, int64_t now_ms);

// Hysteresis over fabric_role(), stepped by the daemon (io thread) with the time: what /metrics,
// GET /api/v1/sm and the role-change log line show. While a master is suspect its probes fail and
// answer in turn, and fabric_role() follows them (active, standby, active... every 300 ms in a TCP
// cut). RoleHold publishes:
// - standby at once (two active copies are what the rules must never see);
// - active at once when this node's SM became the live master and was not the master when the
//   daemon went standby, or another SM has been master since (a takeover: its daemon must not wait);
// - any other return to active (the same master recovered, "no master" while a probe fails) only
//   once fabric_role() has said active for `hold_ms` without a break.
// A daemon without `ha:` is active from the first step. Meanwhile no daemon may be active: the
// shipped rules fall back to the standby copies (docs/metrics.md, "One copy per HA pair").
//
//   RoleHold hold(cfg.flap_window_ms);
//   const RoleDecision& d = hold.step(role_view(engine, now), now);   // every HA step
class RoleHold {
public:
    explicit RoleHold(int64_t hold_ms) : hold_ms_(hold_ms) {}
    // The role to publish at `now` (non-decreasing). The first step publishes what fabric_role() says.
    const RoleDecision& step(const RoleView& v, int64_t now_ms);
    // What the last step published (nullopt before the first).
    const std::optional<RoleDecision>& published() const { return published_; }
    // Since when fabric_role() has said active while standby is published (nullopt: it has not).
    std::optional<int64_t> pending_since() const { return pending_since_; }

private:
    int64_t hold_ms_;
    std::optional<RoleDecision> published_;
    std::optional<int64_t> pending_since_;
    bool local_was_master_ = false;  // this node's SM was the master while standby was published
};

}  // namespace ibf::ha
