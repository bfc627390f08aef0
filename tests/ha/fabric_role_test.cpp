// Which daemon of an HA pair publishes the fabric as `active` (ha/fabric_role.h): each rule, then a
// kill of the master fed to the two nodes' engines at explicit times, checking the pair's copies.
#include <gtest/gtest.h>

#include "ibf/fabric_role.h"
#include "ibf/ha_engine.h"
#include "ha_events.h"

namespace ibf::ha {
namespace {
using namespace ibf::ha::test;

constexpr Guid kA = 0x0002c90300000001, kB = 0x0002c90300000002;

FabricRole role(RoleView v) { return fabric_role(v).role; }

TEST(FabricRole, ADaemonWithoutHaIsAlwaysActive) {
    EXPECT_EQ(role({}), FabricRole::active);
    RoleView v;  // whatever else it would know
    v.local_sm = kB;
    v.master = kA;
    EXPECT_EQ(role(v), FabricRole::active);
    EXPECT_EQ(fabric_role(v).why, "not in an HA pair (no ha: section)");
}

TEST(FabricRole, TheLiveMastersNodeIsActiveTheOthersStandby) {
    EXPECT_EQ(role({.ha = true, .local_sm = kA, .local_is_master = true, .master = kA, .successor = kB}),
              FabricRole::active);
    EXPECT_EQ(role({.ha = true, .local_sm = kB, .master = kA}), FabricRole::standby);
    // This node's SM not seen yet (its opensm not running): another is master.
    EXPECT_EQ(role({.ha = true, .local_sm = 0, .master = kA}), FabricRole::standby);
}

TEST(FabricRole, AFailingMasterHandsItsCopyToTheSuccessorOnlyWhenThereIsOne) {
    // Master by the evidence (not proved dead) but no longer alive: a live standby will take over.
    EXPECT_EQ(role({.ha = true, .local_sm = kA, .master = kA, .successor = kB}), FabricRole::standby);
    // Still answering SMInfo (alive) but its plugin on this host is gone: suspect, the same.
    EXPECT_EQ(role({.ha = true, .local_sm = kA, .local_is_master = true, .local_suspect = true, .master = kA,
                    .successor = kB}),
              FabricRole::standby);
    EXPECT_EQ(role({.ha = true, .local_sm = kA, .local_is_master = true, .local_suspect = true, .master = kA}),
              FabricRole::active);
    // Nobody would: keep the copy (findings never vanish from every daemon).
    EXPECT_EQ(role({.ha = true, .local_sm = kA, .master = kA}), FabricRole::active);
}

TEST(FabricRole, NoMasterTheSuccessorsNodeIsActive) {
    EXPECT_EQ(role({.ha = true, .local_sm = kB, .successor = kB}), FabricRole::active);
    EXPECT_EQ(role({.ha = true, .local_sm = kA, .successor = kB}), FabricRole::standby);
}

TEST(FabricRole, NoLiveSmAtAllEveryDaemonIsActive) {
    EXPECT_EQ(role({.ha = true, .local_sm = kA}), FabricRole::active);
    EXPECT_EQ(role({.ha = true, .local_sm = kB}), FabricRole::active);
    EXPECT_EQ(role({.ha = true}), FabricRole::active) << "a daemon that knows no SM yet: no data is not health";
}

// One SM node's engine: A (master, priority 15, LID 1) or B (standby, 14, LID 2).
HaEngine node(Guid local) {
    HaConfig c;
    c.mode = Mode::act;
    c.local_sm = local;
    HaEngine e(c);
    LocalPort p;
    p.ok = true;
    p.state = 4;
    p.port_guid = local;
    p.lid = local == kA ? 1 : 2;
    e.on_local_port(p, 0);
    Snapshot s;  // the master's sweep knows the standby: one subnet
    s.self = sm(kA, 1, 15, SmState::Master, 100);
    s.other_sms = {sm(kB, 2, 14, SmState::Standby, 100)};
    e.on_snapshot(s, 0);
    return e;
}

struct TwoNodes {
    HaEngine a = node(kA), b = node(kB);
    // Both plugins heartbeat to both daemons (A's own over its Unix socket).
    void heartbeat(Guid g, SmState st, int64_t t) {
        const uint8_t prio = g == kA ? 15 : 14;
        a.on_plugin(sm(g, 0, prio, st, uint32_t(100 + t)), g == kA, t);
        b.on_plugin(sm(g, 0, prio, st, uint32_t(100 + t)), g == kB, t);
    }
    void probe_a(const SmInfoReply& r, int64_t t) {
        a.on_probe(kA, 1, r, t);
        b.on_probe(kA, 1, r, t);
    }
    int active(int64_t t) {
        a.tick(t);
        b.tick(t);
        return (fabric_role(role_view(a, t)).role == FabricRole::active) +
               (fabric_role(role_view(b, t)).role == FabricRole::active);
    }
    FabricRole of(HaEngine& e, int64_t t) { return fabric_role(role_view(e, t)).role; }
};

TEST(FabricRole, AKillOfTheMasterNeverGivesTwoActiveCopiesAndNoneOnlyUntilTheSuccessorProvesItDead) {
    TwoNodes n;
    for (int64_t t = 0; t <= 1000; t += 100) {
        n.heartbeat(kA, SmState::Master, t);
        n.heartbeat(kB, SmState::Standby, t);
        n.probe_a(answer(kA, 15, SmState::Master, uint32_t(100 + t)), t);
        ASSERT_EQ(n.active(t), 1) << "at " << t;
        ASSERT_EQ(n.of(n.a, t), FabricRole::active);
    }
    // opensm on A killed: its plugin's connections close, its process is gone (one host, as in the lab).
    for (HaEngine* e : {&n.a, &n.b}) {
        e->on_plugin_closed(kA, 1010);
        e->on_process_gone(kA, 1010);
    }
    n.heartbeat(kB, SmState::Standby, 1010);
    // A's plugin is gone: A's daemon hands over at once; B's has no proof yet (SMInfo answered).
    EXPECT_EQ(n.active(1010), 0);
    EXPECT_EQ(n.of(n.a, 1010), FabricRole::standby);
    n.probe_a(lost(), 1100);
    n.heartbeat(kB, SmState::Standby, 1100);
    EXPECT_EQ(n.active(1100), 0);
    EXPECT_EQ(n.of(n.a, 1100), FabricRole::standby);
    // The second: B's engine proves A dead and promotes; B's daemon publishes before its SM is MASTER.
    n.probe_a(lost(), 1200);
    n.heartbeat(kB, SmState::Standby, 1200);
    EXPECT_EQ(n.active(1200), 1);
    EXPECT_EQ(n.of(n.b, 1200), FabricRole::active);
    n.b.on_promote_sent(answer(kB, 14, SmState::Standby, 1300), 1201);
    for (int64_t t = 1290; t <= 3000; t += 100) {
        n.heartbeat(kB, SmState::Master, t);
        n.probe_a(lost(), t);
        ASSERT_EQ(n.active(t), 1) << "at " << t;
        ASSERT_EQ(n.of(n.b, t), FabricRole::active) << "at " << t;
    }
}

// On ibsim the agent on the killed SM's node may still get SMInfo answers from its own port: its
// plugin's connection, on this host, decides; the successor still needs its own proof.
TEST(FabricRole, AKilledMastersNodeHandsOverOnItsPluginEvenWhileItsOwnProbesAnswer) {
    TwoNodes n;
    for (int64_t t = 0; t <= 1000; t += 100) {
        n.heartbeat(kA, SmState::Master, t);
        n.heartbeat(kB, SmState::Standby, t);
        n.probe_a(answer(kA, 15, SmState::Master, uint32_t(100 + t)), t);
    }
    for (HaEngine* e : {&n.a, &n.b}) {
        e->on_plugin_closed(kA, 1010);
        e->on_process_gone(kA, 1010);
    }
    for (int64_t t = 1010; t <= 1210; t += 100) {
        n.a.on_probe(kA, 1, answer(kA, 15, SmState::Master, 1200), t);  // A's node: still answered
        n.b.on_probe(kA, 1, lost(), t);                                  // B's node: failing
        n.heartbeat(kB, SmState::Standby, t);
        EXPECT_LE(n.active(t), 1) << "at " << t;
        EXPECT_EQ(n.of(n.a, t), FabricRole::standby) << "at " << t;
    }
    EXPECT_EQ(n.of(n.b, 1210), FabricRole::active) << "B's engine proved A dead (plugin gone, 2+ failures)";
}


// --- RoleHold: what the daemon publishes (fabric_role.h) ---

constexpr int64_t kHold = 1500;
const RoleView kStandbyNodeMasterA{.ha = true, .local_sm = kB, .master = kA, .successor = kB};
const RoleView kStandbyNodeNoMaster{.ha = true, .local_sm = kB, .successor = kB};  // A's probes failing
const RoleView kMasterNodeLive{.ha = true, .local_sm = kA, .local_is_master = true, .master = kA, .successor = kB};
const RoleView kMasterNodeSuspect{.ha = true, .local_sm = kA, .local_is_master = true, .local_suspect = true,
                                  .master = kA, .successor = kB};

TEST(RoleHold, WithoutHaItIsActiveFromTheFirstStep) {
    RoleHold h(kHold);
    EXPECT_FALSE(h.published());
    EXPECT_EQ(h.step({}, 0).role, FabricRole::active);
    EXPECT_EQ(h.step({}, 10).role, FabricRole::active);
}

// The issue-16 TCP cut: the standby's engine lost and re-learnt the master every 300 ms, and its
// daemon switched between active and standby as often (one log line each).
TEST(RoleHold, ASuspectMasterSeenAliveAgainEvery300MsDoesNotFlapTheStandbysRole) {
    RoleHold h(kHold);
    EXPECT_EQ(h.step(kStandbyNodeMasterA, 0).role, FabricRole::standby);
    int changes = 0;
    FabricRole last = FabricRole::standby;
    for (int64_t t = 100; t <= 10000; t += 100) {
        const bool lost = (t / 300) % 2 == 1;
        const RoleView& v = lost ? kStandbyNodeNoMaster : kStandbyNodeMasterA;
        ASSERT_EQ(fabric_role(v).role, lost ? FabricRole::active : FabricRole::standby) << "the raw rule flaps";
        const FabricRole r = h.step(v, t).role;
        changes += r != last;
        last = r;
    }
    EXPECT_EQ(changes, 0);
    EXPECT_EQ(last, FabricRole::standby);
}

TEST(RoleHold, NoMasterForTheWholeHoldMakesTheSuccessorsDaemonActive) {
    RoleHold h(kHold);
    h.step(kStandbyNodeMasterA, 0);
    EXPECT_EQ(h.step(kStandbyNodeNoMaster, 100).role, FabricRole::standby);
    EXPECT_EQ(h.pending_since(), std::optional<int64_t>(100));
    EXPECT_EQ(h.step(kStandbyNodeNoMaster, 1599).role, FabricRole::standby);
    EXPECT_EQ(h.step(kStandbyNodeNoMaster, 1600).role, FabricRole::active);
    EXPECT_EQ(h.published()->why, "no master: this node's SM is the designated successor");
    EXPECT_FALSE(h.pending_since());
}

TEST(RoleHold, TheMastersNodeTurnsStandbyAtOnceAndActiveAgainOnlyAfterAnUnbrokenHold) {
    RoleHold h(kHold);
    EXPECT_EQ(h.step(kMasterNodeLive, 0).role, FabricRole::active);
    EXPECT_EQ(h.step(kMasterNodeSuspect, 100).role, FabricRole::standby) << "never two active copies";
    EXPECT_EQ(h.step(kMasterNodeLive, 200).role, FabricRole::standby) << "the same master recovered: held";
    EXPECT_EQ(h.step(kMasterNodeSuspect, 1000).role, FabricRole::standby);
    EXPECT_EQ(h.step(kMasterNodeLive, 1100).role, FabricRole::standby) << "the break restarted the hold";
    EXPECT_EQ(h.step(kMasterNodeLive, 2599).role, FabricRole::standby);
    EXPECT_EQ(h.step(kMasterNodeLive, 2600).role, FabricRole::active);
    EXPECT_EQ(h.published()->why, "this node's SM is the live master");
}

TEST(RoleHold, ATakeoverByThisNodesSmIsPublishedAtOnce) {
    RoleHold h(kHold);
    h.step(kStandbyNodeMasterA, 0);
    h.step(kStandbyNodeNoMaster, 100);  // A proved dead: B's daemon waits
    const RoleView promoted{.ha = true, .local_sm = kB, .local_is_master = true, .master = kB};
    EXPECT_EQ(h.step(promoted, 120).role, FabricRole::active);
}

// A switchover to B and back: each node's SM becomes master after another SM was: a takeover each time.
TEST(RoleHold, ASwitchoverBackIsATakeoverEvenAfterTheNodeWasOnceSuspect) {
    RoleHold h(kHold);
    h.step(kMasterNodeLive, 0);
    h.step(kMasterNodeSuspect, 100);  // standby, as the master's node
    const RoleView b_master{.ha = true, .local_sm = kA, .master = kB, .successor = kA};
    EXPECT_EQ(h.step(b_master, 200).role, FabricRole::standby);
    EXPECT_EQ(h.step(kMasterNodeLive, 300).role, FabricRole::active) << "another SM was master meanwhile";
}

// The kill of issue 17's lab test through both nodes' holds: never two active copies, and the
// successor's daemon publishes at the first step its SM is MASTER (no hold on a takeover).
TEST(RoleHold, AKillOfTheMasterThroughBothHoldsGivesOneActiveCopyFromTheTakeoverOn) {
    TwoNodes n;
    RoleHold ha(kHold), hb(kHold);
    auto active = [&](int64_t t) {
        n.a.tick(t);
        n.b.tick(t);
        return (ha.step(role_view(n.a, t), t).role == FabricRole::active) +
               (hb.step(role_view(n.b, t), t).role == FabricRole::active);
    };
    for (int64_t t = 0; t <= 1000; t += 100) {
        n.heartbeat(kA, SmState::Master, t);
        n.heartbeat(kB, SmState::Standby, t);
        n.probe_a(answer(kA, 15, SmState::Master, uint32_t(100 + t)), t);
        ASSERT_EQ(active(t), 1) << "at " << t;
    }
    for (HaEngine* e : {&n.a, &n.b}) {
        e->on_plugin_closed(kA, 1010);
        e->on_process_gone(kA, 1010);
    }
    n.heartbeat(kB, SmState::Standby, 1010);
    EXPECT_EQ(active(1010), 0);
    for (int64_t t : {1100, 1200}) {
        n.probe_a(lost(), t);
        n.heartbeat(kB, SmState::Standby, t);
        EXPECT_EQ(active(t), 0) << "at " << t << ": B's SM is not MASTER yet, its daemon holds";
    }
    n.b.on_promote_sent(answer(kB, 14, SmState::Standby, 1300), 1201);
    n.heartbeat(kB, SmState::Master, 1230);
    EXPECT_EQ(active(1230), 1);
    EXPECT_EQ(hb.published()->role, FabricRole::active);
    for (int64_t t = 1300; t <= 4000; t += 100) {
        n.heartbeat(kB, SmState::Master, t);
        n.probe_a(lost(), t);
        ASSERT_EQ(active(t), 1) << "at " << t;
        ASSERT_EQ(hb.published()->role, FabricRole::active) << "at " << t;
    }
}

}  // namespace
}  // namespace ibf::ha
