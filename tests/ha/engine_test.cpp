// The HA engine's decisions, fed explicit times (no clocks, no MADs): each safety rule of
// ha_engine.h has a test here that fails when the rule is broken.
#include <gtest/gtest.h>

#include <functional>

#include "ibf/ha_engine.h"
#include "ha_events.h"

namespace ibf::ha {
namespace {
using namespace ibf::ha::test;

constexpr Guid kMaster = 0x0002c90300000001, kLocal = 0x0002c90300000002, kThird = 0x0002c90300000003;

LocalPort active_port() {
    LocalPort p;
    p.ok = true;
    p.state = 4;
    p.port_guid = kLocal;
    p.lid = 2;
    return p;
}

HaConfig act_config() {
    HaConfig c;
    c.mode = Mode::act;
    c.local_sm = kLocal;
    return c;
}

std::vector<Action> of_kind(const std::vector<Action>& v, Action::Kind k) {
    std::vector<Action> out;
    for (const auto& a : v)
        if (a.kind == k) out.push_back(a);
    return out;
}

// A master (priority 15, LID 1) and this node's standby (priority 14, LID 2), both healthy at t=0..1000.
struct Pair {
    HaEngine e;
    explicit Pair(HaConfig c = act_config()) : e(std::move(c)) {
        e.on_local_port(active_port(), 0);
        Snapshot s;  // the master's sweep knows the standby: one subnet
        s.self = sm(kMaster, 1, 15, SmState::Master);
        s.other_sms = {sm(kLocal, 2, 14, SmState::Standby)};
        e.on_snapshot(s, 0);
        e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 0);
        e.on_plugin(sm(kLocal, 2, 14, SmState::Standby), true, 0);
        for (int64_t t = 0; t <= 1000; t += 100) {
            e.on_plugin(sm(kMaster, 1, 15, SmState::Master, 100 + t), false, t);
            e.on_plugin(sm(kLocal, 2, 14, SmState::Standby, 100 + t), true, t);
            e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master, 100 + t), t);
            EXPECT_TRUE(e.tick(t).size() <= 1);  // at most the "first master seen" log
        }
    }
    // The local SM keeps heartbeating as STANDBY at `t`.
    void local_alive(int64_t t, SmState st = SmState::Standby) { e.on_plugin(sm(kLocal, 2, 14, st, 500 + t), true, t); }
};

TEST(HaRank, OpenSmsRule) {
    EXPECT_TRUE(sm_outranks(15, 0x20, 14, 0x10));   // priority first
    EXPECT_FALSE(sm_outranks(14, 0x10, 15, 0x20));
    EXPECT_TRUE(sm_outranks(7, 0x10, 7, 0x20));     // tie: lower GUID
    EXPECT_FALSE(sm_outranks(7, 0x20, 7, 0x10));
    EXPECT_FALSE(sm_outranks(7, 0x10, 7, 0x10));    // never outranks itself
}

TEST(HaEngine, KillOfTheMasterPromotesTheSuccessorAfterTwoWitnesses) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);  // witness 1: the plugin's connection closed ...
    p.e.on_process_gone(kMaster, 1010);   // ... and its process is gone (a host this daemon sees)
    p.local_alive(1010);
    EXPECT_TRUE(of_kind(p.e.tick(1010), Action::Kind::promote).empty()) << "no MAD failure yet";
    p.e.on_probe(kMaster, 1, lost(), 1100);
    p.local_alive(1100);
    EXPECT_TRUE(of_kind(p.e.tick(1100), Action::Kind::promote).empty()) << "one lost MAD is never a failover";
    p.e.on_probe(kMaster, 1, lost(), 1200);
    p.local_alive(1200);
    auto acts = p.e.tick(1200);
    auto pr = of_kind(acts, Action::Kind::promote);
    ASSERT_EQ(pr.size(), 1u);
    EXPECT_EQ(pr[0].lid, 2);
    EXPECT_EQ(pr[0].attr_mod, kSmInfoHandover);
    EXPECT_EQ(pr[0].target, kLocal);
    EXPECT_EQ(p.e.phase(), Phase::promoting);
    // Not twice for one attempt.
    p.local_alive(1250);
    EXPECT_TRUE(of_kind(p.e.tick(1250), Action::Kind::promote).empty());
    // The local SM says MASTER: the attempt is recorded with its evidence and timing.
    p.e.on_promote_sent(answer(kLocal, 14, SmState::Standby), 1201);
    p.local_alive(1290, SmState::Master);
    p.e.tick(1290);
    ASSERT_EQ(p.e.history().size(), 1u);
    const FailoverRecord& r = p.e.history()[0];
    EXPECT_EQ(r.from, kMaster);
    EXPECT_EQ(r.to, kLocal);
    EXPECT_EQ(r.outcome, "promoted");
    EXPECT_TRUE(r.by_this_node);
    EXPECT_EQ(r.detected_ms, 1010);
    EXPECT_EQ(r.promoted_ms, 1200);
    EXPECT_EQ(r.master_ms, 1290);
    EXPECT_DOUBLE_EQ(r.duration_ms(), 280);
    EXPECT_NE(r.evidence.find("2 consecutive SMInfo failures"), std::string::npos) << r.evidence;
    EXPECT_EQ(p.e.failovers_by_this_node(), 1u);
    EXPECT_EQ(p.e.master(), kLocal);
    EXPECT_TRUE(p.e.local_is_master(1290));
    EXPECT_EQ(p.e.phase(), Phase::watching);
}

// An SMP answered with a non-zero MAD status is an answer (refused), except an SMInfo that no SM
// took: status 0x000C (the D bit of a directed-route SMP aside) is no_sm, a failure.
TEST(HaSmp, AnSmInfoNoAgentTookIsNoSmAndEveryOtherStatusAnAnswer) {
    EXPECT_EQ(answered_status(0, true), SmpStatus::ok);
    EXPECT_EQ(answered_status(0, false), SmpStatus::ok);
    EXPECT_EQ(answered_status(0x000C, true), SmpStatus::no_sm);
    EXPECT_EQ(answered_status(0x800C, true), SmpStatus::no_sm);
    EXPECT_EQ(answered_status(0x000C, false), SmpStatus::refused) << "PortInfo: the SMA said unsupported";
    EXPECT_EQ(answered_status(0x0700, true), SmpStatus::refused) << "OpenSM's illegal transition (ERR 2F04)";
    EXPECT_EQ(answered_status(0x001C, true), SmpStatus::refused) << "invalid attribute value: an SM answered";
    EXPECT_EQ(answered_status(0x0008, true), SmpStatus::refused);
    EXPECT_EQ(to_string(SmpStatus::no_sm), "no_sm");
}

// On hardware a master whose OpenSM was killed on a live node does not time out: its port's
// kernel answers every SMInfo at once with MAD status 0x000C. Those answers are the failures the
// fast path counts (as timeouts are), never a sign of life that resets them.
TEST(HaEngine, AKilledMastersPortAnsweringNoSmIsTakenOverLikeATimeout) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);
    p.e.on_process_gone(kMaster, 1010);
    p.local_alive(1010);
    p.e.on_probe(kMaster, 1, no_sm(), 1020);
    p.local_alive(1020);
    EXPECT_TRUE(of_kind(p.e.tick(1020), Action::Kind::promote).empty()) << "one failure is never a failover";
    p.e.on_probe(kMaster, 1, no_sm(), 1030);
    p.local_alive(1030);
    const auto pr = of_kind(p.e.tick(1030), Action::Kind::promote);
    ASSERT_EQ(pr.size(), 1u);
    EXPECT_EQ(pr[0].target, kLocal);
    EXPECT_EQ(pr[0].attr_mod, kSmInfoHandover);
    // Without the other witnesses, no_sm answers alone take the slow path, as timeouts do: none
    // within the flap window.
    Pair q;
    for (int64_t t = 1010; t <= 1400; t += 10) {
        q.e.on_probe(kMaster, 1, no_sm(), t);
        q.local_alive(t);
        EXPECT_TRUE(of_kind(q.e.tick(t), Action::Kind::promote).empty()) << "at " << t;
    }
}

// What the prober's bursts (SmpPort::get_sminfo_burst) rely on. The first witness of a kill (the
// plugin's connection closed) makes the master suspect at once: the daemon then probes it back to
// back instead of at the next poll. A burst's probes overlap, so its two failures come back 10 ms
// apart in one batch even when an earlier probe was lost on the way (ibsim drops the first MAD to
// reach a killed SM's port: that probe is never reported); with the process seen gone they prove
// the death at the second failure, not a mad_timeout_ms later.
TEST(HaEngine, TwoFailuresOfOneBurstTenMsApartProveAKilledMasterDeadAtTheSecond) {
    Pair p;
    EXPECT_FALSE(p.e.suspect(kMaster, 1005));
    p.e.on_plugin_closed(kMaster, 1010);
    EXPECT_TRUE(p.e.suspect(kMaster, 1010)) << "the first witness asks for a probe now";
    p.e.on_process_gone(kMaster, 1011);
    p.local_alive(1011);
    EXPECT_TRUE(of_kind(p.e.tick(1011), Action::Kind::promote).empty()) << "no MAD failure yet";
    // One batch: the burst began at 1011, its first probe was lost (still outstanding, not
    // reported), the next two failed at 1021 and 1031.
    p.e.on_probe(kMaster, 1, lost(), 1021);
    p.e.on_probe(kMaster, 1, lost(), 1031);
    p.local_alive(1031);
    const auto pr = of_kind(p.e.tick(1031), Action::Kind::promote);
    ASSERT_EQ(pr.size(), 1u);
    EXPECT_EQ(pr[0].attr_mod, kSmInfoHandover);
    EXPECT_EQ(pr[0].target, kLocal);
}

// A burst shortens nothing else: two failures 10 ms apart with the plugin gone but no process
// seen gone are no failover before the flap window; and an answer in a burst after a failure
// (a master slow to answer, its first probe given up) resets the count.
TEST(HaEngine, ABurstsFailuresWithoutTheProcessGoneStillWaitForTheFlapWindow) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);
    p.e.on_probe(kMaster, 1, lost(), 1020);
    p.e.on_probe(kMaster, 1, lost(), 1030);
    p.local_alive(1030);
    EXPECT_TRUE(of_kind(p.e.tick(1030), Action::Kind::promote).empty()) << "span 10 ms < flap_window_ms";
    EXPECT_FALSE(p.e.dead(kMaster, 1030));
    p.e.on_probe(kMaster, 1, lost(), 1130);
    p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master, 2000), 1135);
    p.e.on_process_gone(kMaster, 1136);  // even a late witness needs failures after the answer
    p.local_alive(1136);
    EXPECT_TRUE(of_kind(p.e.tick(1136), Action::Kind::promote).empty()) << "the answer reset the count";
    EXPECT_EQ(p.e.sms().at(kMaster).probe_failures, 0);
}

TEST(HaEngine, NeverPromotesWhileTheMasterAnswersSmInfoAsMaster) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);  // its plugin is gone (e.g. the plugin crashed) ...
    for (int64_t t = 1100; t <= 20000; t += 100) {
        p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master, uint32_t(t)), t);  // ... but it answers
        p.local_alive(t);
        ASSERT_TRUE(of_kind(p.e.tick(t), Action::Kind::promote).empty()) << "at " << t;
    }
    // Failures interleaved with answers never accumulate.
    for (int64_t t = 20100; t <= 40000; t += 200) {
        p.e.on_probe(kMaster, 1, lost(), t);
        p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master, uint32_t(t)), t + 100);
        p.local_alive(t + 100);
        ASSERT_TRUE(of_kind(p.e.tick(t + 100), Action::Kind::promote).empty()) << "at " << t;
    }
    EXPECT_TRUE(p.e.history().empty());
}

TEST(HaEngine, ALateHeartbeatAloneIsNoFailover) {
    Pair p;
    // Heartbeats stop for 5 s (a stalled sender), SMInfo keeps answering.
    for (int64_t t = 1100; t <= 6000; t += 100) {
        p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master, uint32_t(t)), t);
        p.local_alive(t);
        ASSERT_TRUE(of_kind(p.e.tick(t), Action::Kind::promote).empty());
    }
}

TEST(HaEngine, SmInfoAloneTakesTheSlowPath) {
    Pair p;  // the master's plugin keeps heartbeating (an isolated master: Ethernet fine, IB not)
    int64_t promoted_at = 0;
    uint32_t attr = 0;
    for (int64_t t = 1100; t <= 4000 && !promoted_at; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, 1000), false, t);
        p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        auto pr = of_kind(p.e.tick(t), Action::Kind::promote);
        if (!pr.empty()) {
            promoted_at = t;
            attr = pr[0].attr_mod;
        }
    }
    // One witness: the standby is told to DISCOVER (its own election re-checks the master) rather
    // than to take over unconditionally.
    EXPECT_EQ(attr, kSmInfoDiscover);
    // 10 failures (t=1100..2000) are not enough until they span slow_min_ms = 2000 ms: the first
    // failure was at 1100, so the earliest promotion is at 3100.
    EXPECT_EQ(promoted_at, 3100);
    EXPECT_EQ(p.e.history().size(), 0u);  // recorded when it completes or fails
}

TEST(HaEngine, AnIsolatedMasterSweepingItsIslandIsStillTheOneWatched) {
    Pair p;  // cut off, the master's OpenSM re-sweeps an empty island: its plugin says DISCOVERING
    int64_t promoted_at = 0;
    for (int64_t t = 1100; t <= 4000 && !promoted_at; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Discovering, 1000), false, t);
        p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        if (!of_kind(p.e.tick(t), Action::Kind::promote).empty()) promoted_at = t;
    }
    EXPECT_EQ(promoted_at, 3100) << "the slow path, as if it still said MASTER";
}

// Issue 16, a 5.5 s flap of the master's cable on ibsim: its OpenSM left MASTER for DISCOVERING
// (its port down) and its plugin said so; the standby's probes of it failed only now and then
// (each failure expired before the next), so the slow path never counted ten: the subnet had no
// master for 6 s. The master's own word is enough: DISCOVERING for slow_min_ms with no SM MASTER.
TEST(HaEngine, AMasterThatSaysDiscoveringWhileNoSmIsMasterIsTakenOverOnTheSlowPath) {
    Pair p;
    int64_t promoted_at = 0;
    uint32_t attr = 0;
    for (int64_t t = 1100; t <= 5000 && !promoted_at; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Discovering, 1000), false, t);
        if (t % 1000 == 0) p.e.on_probe(kMaster, 1, lost(), t);  // one failure a second: each expires
        p.local_alive(t);
        auto pr = of_kind(p.e.tick(t), Action::Kind::promote);
        if (!pr.empty()) promoted_at = t, attr = pr[0].attr_mod;
    }
    EXPECT_EQ(promoted_at, 3100) << "DISCOVERING since 1100, slow_min_ms 2000";
    EXPECT_EQ(attr, kSmInfoDiscover) << "the slow path: the standby's own election re-checks";
}

TEST(HaEngine, AMasterBackFromAShortDiscoveringIsKept) {
    Pair p;
    for (int64_t t = 1100; t <= 6000; t += 100) {
        const SmState st = t < 2900 ? SmState::Discovering : SmState::Master;  // 1.8 s: its port came back
        p.e.on_plugin(sm(kMaster, 1, 15, st, uint32_t(1000 + t)), false, t);
        if (st == SmState::Master) p.e.on_probe(kMaster, 1, answer(kMaster, 15, st, uint32_t(1000 + t)), t);
        p.local_alive(t);
        ASSERT_TRUE(of_kind(p.e.tick(t), Action::Kind::promote).empty()) << "at " << t;
    }
}

TEST(HaEngine, AnSmDiscoveringBesideAMasterIsNoReasonToPromote) {
    Pair p;
    // The old master restarts (DISCOVERING) after another SM became MASTER: the subnet has one.
    constexpr Guid kThird = 0x0002c90300000009;
    for (int64_t t = 1100; t <= 6000; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Discovering, 1000), false, t);
        p.e.on_plugin(sm(kThird, 9, 13, SmState::Master, uint32_t(1000 + t)), false, t);
        p.e.on_probe(kThird, 9, answer(kThird, 13, SmState::Master, uint32_t(1000 + t)), t);
        p.local_alive(t);
        ASSERT_TRUE(of_kind(p.e.tick(t), Action::Kind::promote).empty()) << "at " << t;
    }
}

TEST(HaEngine, AHealedSplitBrainMakesEachMastersAgentForceASweep) {
    HaConfig c = act_config();
    HaEngine e(c);
    e.on_local_port(active_port(), 0);
    Snapshot s;
    s.self = sm(kMaster, 1, 15, SmState::Master);
    s.other_sms = {sm(kLocal, 2, 14, SmState::Master)};
    e.on_snapshot(s, 0);
    // Both are MASTER.
    e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, 0);
    e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 10);
    e.on_probe(kMaster, 1, lost(), 20);  // still partitioned: nothing to do
    EXPECT_TRUE(of_kind(e.tick(20), Action::Kind::promote).empty());
    e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, 100);
    e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 100);  // the partition healed
    auto pr = of_kind(e.tick(100), Action::Kind::promote);
    ASSERT_EQ(pr.size(), 1u);
    EXPECT_EQ(pr[0].lid, 2) << "its own SM";
    EXPECT_EQ(pr[0].attr_mod, kSmInfoHandover);
    e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, 500);
    e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 500);
    EXPECT_TRUE(of_kind(e.tick(500), Action::Kind::promote).empty()) << "at most once per retry_after_ms";
    e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, 2200);
    e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 2200);
    EXPECT_EQ(of_kind(e.tick(2200), Action::Kind::promote).size(), 1u) << "again while it lasts";

    // The other master's agent does the same for its own SM.
    HaConfig hc = act_config();
    hc.local_sm = kMaster;
    HaEngine h(hc);
    h.on_local_port(active_port(), 0);
    h.on_snapshot(s, 0);
    h.on_plugin(sm(kMaster, 1, 15, SmState::Master), true, 100);
    h.on_plugin(sm(kLocal, 2, 14, SmState::Master), false, 100);
    h.on_probe(kLocal, 2, answer(kLocal, 14, SmState::Master), 100);
    auto hp = of_kind(h.tick(100), Action::Kind::promote);
    ASSERT_EQ(hp.size(), 1u);
    EXPECT_EQ(hp[0].lid, 1);
    // A master whose peer only heartbeats (no SMInfo answer: still partitioned) forces nothing.
    HaEngine q(hc);
    q.on_local_port(active_port(), 0);
    q.on_snapshot(s, 0);
    q.on_plugin(sm(kMaster, 1, 15, SmState::Master), true, 100);
    q.on_plugin(sm(kLocal, 2, 14, SmState::Master), false, 100);
    q.on_probe(kLocal, 2, lost(), 100);
    EXPECT_TRUE(of_kind(q.tick(100), Action::Kind::promote).empty());
}

TEST(HaEngine, SlowPathThresholdsAreConfigurable) {
    HaConfig c = act_config();
    c.slow_failures = 3;
    c.slow_min_ms = 250;
    Pair p(c);
    int64_t promoted_at = 0;
    for (int64_t t = 1100; t <= 2000 && !promoted_at; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, 1000), false, t);
        p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        if (!of_kind(p.e.tick(t), Action::Kind::promote).empty()) promoted_at = t;
    }
    EXPECT_EQ(promoted_at, 1400);  // 4 failures at 1100..1400 span 300 ms >= 250 (3 at 1300 span only 200)
}

TEST(HaEngine, OnlyTheDesignatedSuccessorActs) {
    // Master 15, a remote standby 14 (kThird), this node's standby 13: the remote one is successor.
    HaConfig c = act_config();
    HaEngine e(c);
    e.on_local_port(active_port(), 0);
    auto beat = [&](int64_t t, bool third_alive) {
        e.on_plugin(sm(kLocal, 2, 13, SmState::Standby, uint32_t(t)), true, t);
        if (third_alive) e.on_plugin(sm(kThird, 3, 14, SmState::Standby, uint32_t(t)), false, t);
    };
    e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 0);
    beat(0, true);
    Snapshot s;  // the master's sweep found both standbys: one subnet
    s.self = sm(kMaster, 1, 15, SmState::Master);
    s.other_sms = {sm(kLocal, 2, 13, SmState::Standby), sm(kThird, 3, 14, SmState::Standby)};
    e.on_snapshot(s, 0);
    e.tick(0);
    e.on_plugin_closed(kMaster, 100);
    e.on_process_gone(kMaster, 100);
    for (int64_t t = 200; t <= 1000; t += 100) {
        e.on_probe(kMaster, 1, lost(), t);
        beat(t, true);
        auto acts = e.tick(t);
        ASSERT_TRUE(of_kind(acts, Action::Kind::promote).empty()) << "at " << t;
    }
    EXPECT_EQ(e.successor(1000), kThird);
    // The remote standby dies too: its plugin closes and SMInfo to it fails. Now this node acts.
    e.on_plugin_closed(kThird, 1050);
    e.on_process_gone(kThird, 1050);
    int64_t promoted_at = 0;
    for (int64_t t = 1100; t <= 2000 && !promoted_at; t += 100) {
        e.on_probe(kMaster, 1, lost(), t);
        e.on_probe(kThird, 3, lost(), t);
        beat(t, false);
        if (!of_kind(e.tick(t), Action::Kind::promote).empty()) promoted_at = t;
    }
    // kThird's plugin closed at 1050 and its last SMInfo answer is older than the probe window.
    EXPECT_EQ(promoted_at, 1100);
    EXPECT_EQ(e.successor(1100), kLocal);
}

TEST(HaEngine, AnIsolatedStandbyNeverPromotesItself) {
    Pair p;
    LocalPort down = active_port();
    down.state = 1;  // our own cable is out: SMInfo to the master fails because WE are cut off
    p.e.on_local_port(down, 1000);
    p.e.on_plugin_closed(kMaster, 1010);
    std::vector<Action> all;
    for (int64_t t = 1100; t <= 5000; t += 100) {
        p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        auto acts = p.e.tick(t);
        ASSERT_TRUE(of_kind(acts, Action::Kind::promote).empty());
        all.insert(all.end(), acts.begin(), acts.end());
    }
    auto logs = of_kind(all, Action::Kind::log);
    int port_lines = 0;
    for (const auto& l : logs) port_lines += l.text.find("own port is not Active") != std::string::npos;
    EXPECT_EQ(port_lines, 1) << "said once, not every tick";
}

TEST(HaEngine, TheFenceRunsFirstAndMustSucceed) {
    HaConfig c = act_config();
    c.fence = {"/usr/sbin/fence_ipmilan", "--plug", "{guid}", "--lid={lid}"};
    c.retry_after_ms = 1000;
    Pair p(c);
    p.e.on_plugin_closed(kMaster, 1010);
    p.e.on_process_gone(kMaster, 1010);
    p.e.on_probe(kMaster, 1, lost(), 1100);
    p.e.on_probe(kMaster, 1, lost(), 1200);
    p.local_alive(1200);
    auto acts = p.e.tick(1200);
    ASSERT_TRUE(of_kind(acts, Action::Kind::promote).empty()) << "not before the fence";
    auto fence = of_kind(acts, Action::Kind::fence);
    ASSERT_EQ(fence.size(), 1u);
    EXPECT_EQ(fence[0].argv, (std::vector<std::string>{"/usr/sbin/fence_ipmilan", "--plug", "0x0002c90300000001", "--lid=1"}));
    EXPECT_EQ(p.e.phase(), Phase::fencing);
    // The fence fails: no promotion, the attempt is recorded, and it is retried after retry_after_ms.
    p.e.on_fence_done(false, "exit status 1", 1500);
    p.local_alive(1500);
    EXPECT_TRUE(of_kind(p.e.tick(1500), Action::Kind::promote).empty());
    ASSERT_EQ(p.e.history().size(), 1u);
    EXPECT_EQ(p.e.history()[0].outcome, "failed: fence failed: exit status 1");
    EXPECT_EQ(p.e.phase(), Phase::cooldown);
    p.e.on_probe(kMaster, 1, lost(), 2400);
    p.local_alive(2400);
    EXPECT_TRUE(of_kind(p.e.tick(2400), Action::Kind::fence).empty()) << "still cooling down";
    p.e.on_probe(kMaster, 1, lost(), 2600);
    p.local_alive(2600);
    acts = p.e.tick(2600);
    ASSERT_EQ(of_kind(acts, Action::Kind::fence).size(), 1u) << "retried after the cooldown";
    p.e.on_fence_done(true, "", 2700);
    p.local_alive(2700);
    acts = p.e.tick(2700);
    ASSERT_EQ(of_kind(acts, Action::Kind::promote).size(), 1u);
}

TEST(HaEngine, NoPromotionWhenTheOldMasterAnswersAfterTheFence) {
    HaConfig c = act_config();
    c.fence = {"/bin/true"};
    Pair p(c);
    p.e.on_plugin_closed(kMaster, 1010);
    p.e.on_process_gone(kMaster, 1010);
    p.e.on_probe(kMaster, 1, lost(), 1100);
    p.e.on_probe(kMaster, 1, lost(), 1200);
    p.local_alive(1200);
    ASSERT_EQ(of_kind(p.e.tick(1200), Action::Kind::fence).size(), 1u);
    p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 1300);  // it was only slow
    p.e.on_fence_done(true, "", 1350);
    p.local_alive(1350);
    EXPECT_TRUE(of_kind(p.e.tick(1350), Action::Kind::promote).empty());
    ASSERT_EQ(p.e.history().size(), 1u);
    EXPECT_EQ(p.e.history()[0].outcome, "failed: the old master answers SMInfo as MASTER after the fence");
}

TEST(HaEngine, ARefusedOrUnansweredPromotionIsRecordedAsFailed) {
    // The master killed, two failures: the engine sends its promotion at 1200.
    auto promoting = [](Pair& p) {
        p.e.on_plugin_closed(kMaster, 1010);
        p.e.on_process_gone(kMaster, 1010);
        p.e.on_probe(kMaster, 1, lost(), 1100);
        p.e.on_probe(kMaster, 1, lost(), 1200);
        p.local_alive(1200);
        ASSERT_EQ(of_kind(p.e.tick(1200), Action::Kind::promote).size(), 1u);
    };
    SmInfoReply refused;
    refused.status = SmpStatus::refused;
    refused.mad_status = 7;
    const std::pair<SmInfoReply, std::string> answers[] = {
        {refused, "failed: SubnSet(SMInfo) refused with MAD status 7"},
        // this node's own SM gone when the Set reached its port
        {no_sm(), "failed: SubnSet(SMInfo) found no SM at this node's port (MAD status 12)"}};
    for (const auto& [reply, outcome] : answers) {
        Pair p;
        promoting(p);
        p.e.on_promote_sent(reply, 1210);
        p.local_alive(1250);
        p.e.tick(1250);
        ASSERT_EQ(p.e.history().size(), 1u);
        EXPECT_EQ(p.e.history()[0].outcome, outcome);
    }

    Pair q;
    promoting(q);
    q.e.on_promote_sent(lost(), 1300);  // the answer may be lost: keep waiting ...
    q.local_alive(4000);
    q.e.tick(4000);
    EXPECT_TRUE(q.e.history().empty());
    q.local_alive(4300);
    q.e.tick(4300);  // ... until promote_timeout_ms (3000) has passed
    ASSERT_EQ(q.e.history().size(), 1u);
    EXPECT_EQ(q.e.history()[0].outcome, "failed: the local SM did not become MASTER within 3000 ms");
}

TEST(HaEngine, MonitorModeRecordsMasterChangesButNeverActs) {
    HaConfig c = act_config();
    c.mode = Mode::monitor;
    Pair p(c);
    p.e.on_plugin_closed(kMaster, 1010);
    for (int64_t t = 1100; t <= 5000; t += 100) {
        p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        ASSERT_TRUE(of_kind(p.e.tick(t), Action::Kind::promote).empty());
    }
    // OpenSM's own polling makes the standby master.
    p.local_alive(5100, SmState::Master);
    auto acts = p.e.tick(5100);
    ASSERT_EQ(p.e.history().size(), 1u);
    const FailoverRecord& r = p.e.history()[0];
    EXPECT_EQ(r.outcome, "observed");
    EXPECT_FALSE(r.by_this_node);
    EXPECT_EQ(r.detected_ms, 1010);
    EXPECT_EQ(r.master_ms, 5100);
    EXPECT_NE(r.cause.find("the old master failed"), std::string::npos) << r.cause;
    EXPECT_EQ(p.e.master_changes(), 1u);
    ASSERT_EQ(of_kind(acts, Action::Kind::log).size(), 1u);
}

TEST(HaEngine, AHandoverIsRecordedAsSuch) {
    Pair p(HaConfig{});  // mode off: still tracks
    p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Standby), 1100);
    p.local_alive(1100, SmState::Master);
    p.e.tick(1100);
    ASSERT_EQ(p.e.history().size(), 1u);
    EXPECT_EQ(p.e.history()[0].cause, "handover: the old master is STANDBY and alive");
}

// A switchover lowers the master's priority; its handover can reach the new master before the
// next probe of the old one: a new master that outranks an old one still MASTER at its last
// answer is a handover in progress; one that does not may be split brain.
TEST(HaEngine, ANewMasterSeenBeforeTheOldOnesNextAnswer) {
    Pair p(HaConfig{});
    p.e.on_probe(kMaster, 1, answer(kMaster, 13, SmState::Master), 1100);  // demoted below kLocal (14)
    p.local_alive(1100, SmState::Master);
    p.e.tick(1100);
    ASSERT_EQ(p.e.history().size(), 1u);
    EXPECT_EQ(p.e.history()[0].cause, "handover: the new master outranks the old one, which said MASTER at its last answer");
    Pair q(HaConfig{});
    q.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 1100);
    q.local_alive(1100, SmState::Master);
    q.e.tick(1100);
    ASSERT_EQ(q.e.history().size(), 1u);
    EXPECT_EQ(q.e.history()[0].cause, "a second master appeared while the old one is alive (split brain?)");
}

TEST(HaEngine, SubnetGroupsComeFromSnapshots) {
    HaEngine e(act_config());
    e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 0);
    e.on_plugin(sm(kLocal, 1, 15, SmState::Master), true, 0);  // one opensm per HCA port: two subnets
    EXPECT_NE(e.group_of(kMaster), e.group_of(kLocal));
    Snapshot s;
    s.self = sm(kMaster, 1, 15, SmState::Master);
    s.other_sms = {sm(kLocal, 2, 14, SmState::Standby)};
    e.on_snapshot(s, 10);
    EXPECT_EQ(e.group_of(kMaster), e.group_of(kLocal));
}

TEST(HaEngine, LidChangesAcrossAMasterChange) {
    Pair p;
    auto snap = [](Guid self, uint16_t host_lid) {
        Snapshot s;
        s.self = sm(self, self == kMaster ? 1 : 2, 15, SmState::Master);
        Node n;
        n.type = NodeType::CA;
        n.guid = 0x100;
        n.description = "h1 HCA-1";
        NodeId id = s.fabric.add_node(n, 1);
        Port& port = s.fabric.node(id).ports[1];
        port.guid = 0x101;
        port.lid = host_lid;
        s.fabric.finalize();
        return s;
    };
    p.e.on_snapshot(snap(kMaster, 7), 900);
    p.local_alive(1100, SmState::Master);
    p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Standby), 1100);
    p.e.tick(1100);
    EXPECT_TRUE(p.e.lid_changes().empty());
    p.e.on_snapshot(snap(kLocal, 9), 1200);
    ASSERT_EQ(p.e.lid_changes().size(), 1u);
    EXPECT_EQ(p.e.lid_changes()[0].port_guid, 0x101u);
    EXPECT_EQ(p.e.lid_changes()[0].before, 7);
    EXPECT_EQ(p.e.lid_changes()[0].after, 9);
}

// ---- The failure model's rules, fed the event sequences of issue 16's scenarios (docs/ha.md). ----

size_t promotes(const std::vector<Action>& v) { return of_kind(v, Action::Kind::promote).size(); }

bool said(const std::vector<Action>& all, const std::string& part) {
    for (const auto& a : all)
        if (a.kind == Action::Kind::log && a.text.find(part) != std::string::npos) return true;
    return false;
}

// Scenario 1: every TCP connection to the standby's ingest port is killed every 20 ms (the plugin's
// connection is closed nearly all the time), and at +2 s the master's own cable flaps for 0.5 s or
// 1 s: SMInfo fails for the flap's length. Both witnesses look like death for that long, but the
// closed connection is not independent of a network fault: no promotion.
TEST(HaScenario, TcpCutPlusAFlapOfTheMastersCableIsNoFailover) {
    for (int64_t flap : {500, 1000, 1400}) {
        Pair p;
        std::vector<Action> all;
        for (int64_t t = 1010; t <= 15000; t += 10) {
            if (t % 100 == 10) p.e.on_plugin_closed(kMaster, t);                              // ss -K
            if (t % 300 == 50) p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, t);   // a Hello got through
            if (t % 300 == 60) p.e.on_plugin_closed(kMaster, t);
            if (t % 100 == 0) {
                const bool cable_out = t >= 3000 && t < 3000 + flap;
                p.e.on_probe(kMaster, 1, cable_out ? lost() : answer(kMaster, 15, SmState::Master), t);
                p.local_alive(t);
            }
            auto acts = p.e.tick(t);
            ASSERT_EQ(promotes(acts), 0u) << "flap " << flap << " ms, at " << t;
            all.insert(all.end(), acts.begin(), acts.end());
        }
        EXPECT_TRUE(said(all, "suspect")) << "the master was suspect during the flap";
        EXPECT_EQ(p.e.master(), kMaster);
    }
    // A 3 s cable-out behind the same cut outlasts the flap window, but the Hellos that get through
    // between the cuts (700 ms apart: the plugin's reconnect backoff) prove the process alive
    // after the failures began: the master is isolated on InfiniBand, not dead. So no fast path
    // (no HANDOVER beside a live master); the slow path's DISCOVER, 2 s after the first failure,
    // lets the standby's own election check that no master answers.
    Pair p;
    int64_t promoted_at = 0;
    uint32_t attr = 0;
    for (int64_t t = 1010; t <= 15000 && !promoted_at; t += 10) {
        if (t % 100 == 10) p.e.on_plugin_closed(kMaster, t);
        if (t % 700 == 50) p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, t);
        if (t % 700 == 60) p.e.on_plugin_closed(kMaster, t);
        if (t % 100 == 0) {
            p.e.on_probe(kMaster, 1, t >= 3000 && t < 6000 ? lost() : answer(kMaster, 15, SmState::Master), t);
            p.local_alive(t);
        }
        for (const Action& a : p.e.tick(t))
            if (a.kind == Action::Kind::promote) promoted_at = t, attr = a.attr_mod;
    }
    EXPECT_EQ(promoted_at, 5000);
    EXPECT_EQ(attr, kSmInfoDiscover);
}

// Issue 16, scenario 1 as measured on ibsim: the cut every 20 ms with the plugin reconnecting
// every ~250 ms, and a 1 s flap of the master's cable after which its port stays down until the
// master's next sweep re-activates it (1.5-2 s of SMInfo failures in all). The failures outlast
// the flap window, but a Hello came after they began: the process lives, no HANDOVER.
TEST(HaScenario, AHelloAfterTheFailuresBeganVetoesTheFastPath) {
    Pair p;
    std::vector<Action> all;
    for (int64_t t = 1010; t <= 8000; t += 10) {
        if (t % 20 == 10) p.e.on_plugin_closed(kMaster, t);
        if (t % 250 == 0) p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, t);
        if (t % 250 == 5) p.e.on_plugin_closed(kMaster, t);
        if (t % 100 == 0) {
            const bool failing = t >= 3000 && t < 4900;  // 1 s flap + 0.9 s until the master re-sweeps
            p.e.on_probe(kMaster, 1, failing ? lost() : answer(kMaster, 15, SmState::Master), t);
            p.local_alive(t);
        }
        auto acts = p.e.tick(t);
        ASSERT_EQ(promotes(acts), 0u) << "at " << t;
        all.insert(all.end(), acts.begin(), acts.end());
    }
    EXPECT_TRUE(said(all, "suspect")) << "the master was suspect during the flap";
    EXPECT_EQ(p.e.master(), kMaster);
}

// The same witnesses for longer than the flap window: a master whose process may live on but which
// neither its plugin nor InfiniBand reaches for 1.5 s is taken over (HANDOVER: the fast path).
TEST(HaScenario, PluginGoneAndSmInfoFailingBeyondTheFlapWindowIsAFailover) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);
    int64_t promoted_at = 0;
    uint32_t attr = 0;
    for (int64_t t = 1100; t <= 4000 && !promoted_at; t += 100) {
        p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        auto pr = of_kind(p.e.tick(t), Action::Kind::promote);
        if (!pr.empty()) promoted_at = t, attr = pr[0].attr_mod;
    }
    EXPECT_EQ(promoted_at, 2600) << "first failure at 1100 + flap_window_ms 1500";
    EXPECT_EQ(attr, kSmInfoHandover);
}

// Scenario 2: the master is MASTER (its plugin heartbeats, it answers SMInfo, its ActCount moves
// with every reply to our probes) but never reaches SUBNET UP: sm_not_sweeping, and its own agent
// forces heavy sweeps, at most heal_attempts times, then says so once.
TEST(HaScenario, AMasterThatNeverSweepsIsForcedToSweepByItsOwnAgent) {
    HaConfig c = act_config();
    c.local_sm = kMaster;
    HaEngine e(c);
    LocalPort port = active_port();
    port.port_guid = kMaster;
    port.lid = 1;
    e.on_local_port(port, 0);
    e.on_plugin(sm(kMaster, 1, 15, SmState::Standby), true, 0);
    e.on_plugin(sm(kLocal, 2, 14, SmState::Standby), false, 0);
    std::vector<int64_t> forced;
    std::vector<Action> all;
    for (int64_t t = 100; t <= 40000; t += 100) {
        e.on_plugin(sm(kMaster, 1, 15, SmState::Master, uint32_t(t)), true, t);  // became MASTER at 100
        e.on_plugin(sm(kLocal, 2, 14, SmState::Standby, uint32_t(t)), false, t);
        e.on_probe(kLocal, 2, answer(kLocal, 14, SmState::Standby, uint32_t(t)), t);
        if (t == 500) e.on_sweep(kMaster, SweepEvent::heavy_start, t);
        auto acts = e.tick(t);
        for (const auto& a : of_kind(acts, Action::Kind::promote)) {
            EXPECT_EQ(a.lid, 1) << "its own SM";
            EXPECT_EQ(a.attr_mod, kSmInfoHandover) << "a forced heavy sweep";
            forced.push_back(t);
        }
        all.insert(all.end(), acts.begin(), acts.end());
        EXPECT_EQ(e.not_sweeping(e.sms().at(kMaster), t), t - 100 >= c.sweep_timeout_ms) << "at " << t;
    }
    EXPECT_EQ(forced, (std::vector<int64_t>{20100, 22100, 24100})) << "sweep_timeout_ms after MASTER, retry_after_ms apart";
    EXPECT_TRUE(said(all, "giving up forcing"));
    // SUBNET UP ends it.
    e.on_sweep(kMaster, SweepEvent::subnet_up, 40100);
    EXPECT_FALSE(e.not_sweeping(e.sms().at(kMaster), 40100));
    EXPECT_FALSE(e.not_sweeping(e.sms().at(kMaster), 90000)) << "owes nothing until the next sweep starts";
    // So does its snapshot (the plugin copies the fabric at SUBNET UP).
    e.on_sweep(kMaster, SweepEvent::heavy_start, 90000);
    e.on_plugin(sm(kMaster, 1, 15, SmState::Master), true, 110000);
    ASSERT_TRUE(e.not_sweeping(e.sms().at(kMaster), 110000));
    Snapshot snap;
    snap.self = sm(kMaster, 1, 15, SmState::Master);
    e.on_snapshot(snap, 110000);
    EXPECT_FALSE(e.not_sweeping(e.sms().at(kMaster), 110000));
    EXPECT_EQ(e.sms().at(kMaster).subnet_up_ms, 110000);
}

// Scenario 2, the successor's side: a wedged master answers SMInfo as MASTER, so promoting beside
// it would make two masters. Without a fence the successor only says so; with one it fences after
// the master's own agent had its forced sweeps, and promotes once the master no longer answers.
TEST(HaScenario, TheSuccessorTakesOverAWedgedMasterOnlyThroughTheFence) {
    int64_t fence_t = 0;
    auto run = [&fence_t](HaConfig c, std::vector<Action>& all, int64_t until, bool stop_answering_after_fence) {
        Pair p(c);
        p.e.on_sweep(kMaster, SweepEvent::heavy_start, 1000);  // a host came up: it starts a sweep, never ends it
        bool fenced = false;
        fence_t = 0;
        for (int64_t t = 1100; t <= until; t += 100) {
            p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, uint32_t(t)), false, t);
            if (!(fenced && stop_answering_after_fence))
                p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master, uint32_t(t)), t);
            else
                p.e.on_probe(kMaster, 1, lost(), t);
            p.local_alive(t);
            auto acts = p.e.tick(t);
            if (!of_kind(acts, Action::Kind::fence).empty()) {
                if (!fenced) fence_t = t;
                fenced = true;
                p.e.on_fence_done(true, "", t + 50);
            }
            all.insert(all.end(), acts.begin(), acts.end());
        }
        return p.e.history();
    };
    std::vector<Action> none;
    run(act_config(), none, 60000, true);
    EXPECT_EQ(promotes(none), 0u);
    EXPECT_EQ(of_kind(none, Action::Kind::fence).size(), 0u);
    EXPECT_TRUE(said(none, "without ha.fence it does not take over"));

    HaConfig c = act_config();
    c.fence = {"/bin/true"};
    std::vector<Action> fenced;
    auto hist = run(c, fenced, 33000, true);
    ASSERT_EQ(of_kind(fenced, Action::Kind::fence).size(), 1u);
    ASSERT_EQ(promotes(fenced), 1u);
    // The fence came after sweep_timeout_ms (20 s) + (heal_attempts + 1) x retry_after_ms (8 s).
    EXPECT_EQ(fence_t, 1000 + 20000 + 8000);
    size_t fence_at = 0;
    for (size_t i = 0; i < fenced.size(); ++i)
        if (fenced[i].kind == Action::Kind::fence) fence_at = i;
    EXPECT_TRUE(said(std::vector<Action>(fenced.begin(), fenced.begin() + long(fence_at)), "is not sweeping"));

    std::vector<Action> answers;  // the fence "succeeds" but the master still answers as MASTER
    hist = run(c, answers, 40000, false);
    EXPECT_EQ(promotes(answers), 0u);
    ASSERT_FALSE(hist.empty());
    EXPECT_EQ(hist[0].outcome, "failed: the old master answers SMInfo as MASTER after the fence");
    EXPECT_EQ(hist[0].cause, "master not sweeping (fenced)");
}

TEST(HaScenario, AMasterThatSweepsOrWhosePluginIsSilentIsNotFlaggedAsNotSweeping) {
    Pair p;
    for (int64_t t = 1100; t <= 60000; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, uint32_t(t)), false, t);
        if (t % 5000 == 0) p.e.on_sweep(kMaster, SweepEvent::heavy_start, t);
        if (t % 5000 == 500) p.e.on_sweep(kMaster, SweepEvent::subnet_up, t);
        ASSERT_FALSE(p.e.not_sweeping(p.e.sms().at(kMaster), t)) << "at " << t;
    }
    p.e.on_sweep(kMaster, SweepEvent::fabric_change, 60000);  // a trap owes a sweep
    p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 79900);
    EXPECT_FALSE(p.e.not_sweeping(p.e.sms().at(kMaster), 79900));
    p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 80000);
    EXPECT_TRUE(p.e.not_sweeping(p.e.sms().at(kMaster), 80000));
    // Its plugin silent: nothing is known about its sweeps.
    EXPECT_FALSE(p.e.not_sweeping(p.e.sms().at(kMaster), 80500));
}

// Two masters that stay two after heal_attempts forced sweeps: escalated with both GUIDs and what
// was tried, and no more Sets; a new episode starts from zero once it resolved.
TEST(HaScenario, TwoMastersThatStayTwoAfterHealingAreEscalatedNotRetriedForever) {
    HaEngine e(act_config());
    e.on_local_port(active_port(), 0);
    Snapshot s;
    s.self = sm(kMaster, 1, 15, SmState::Master);
    s.other_sms = {sm(kLocal, 2, 14, SmState::Master)};
    e.on_snapshot(s, 0);
    std::vector<int64_t> sets;
    std::vector<Action> all;
    for (int64_t t = 100; t <= 30000; t += 100) {
        e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, t);
        e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, t);
        e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), t);
        if (t % 1000 == 0) e.on_sweep(kLocal, SweepEvent::subnet_up, t);  // it sweeps (not wedged)
        auto acts = e.tick(t);
        if (promotes(acts)) sets.push_back(t);
        all.insert(all.end(), acts.begin(), acts.end());
    }
    EXPECT_EQ(sets, (std::vector<int64_t>{100, 2100, 4100}));
    ASSERT_TRUE(e.split_brain().has_value());
    EXPECT_EQ(e.split_brain()->a, kLocal);
    EXPECT_EQ(e.split_brain()->b, kMaster);
    EXPECT_EQ(e.split_brain()->attempts, 3);
    EXPECT_TRUE(said(all, "split brain persists"));
    // It resolves (the other one went STANDBY): the escalation ends, a later episode heals again.
    e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Standby), 30100);
    e.on_plugin(sm(kMaster, 1, 15, SmState::Standby), false, 30100);
    e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, 30100);
    e.tick(30100);
    EXPECT_FALSE(e.split_brain().has_value());
    e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 30200);
    e.on_plugin(sm(kMaster, 1, 15, SmState::Master), false, 30200);
    e.on_plugin(sm(kLocal, 2, 14, SmState::Master), true, 30200);
    EXPECT_EQ(promotes(e.tick(30200)), 1u);
}

// Scenario 4: a master frozen 1.4 s (below the flap window) and thawed. During the freeze its
// heartbeats stop and SMInfo times out; after the thaw the probes queued in the frozen process
// still time out for a while. The failures counted during the freeze are no evidence once its
// heartbeats resume on the connection that stayed open: no DISCOVER from a leftover count.
TEST(HaScenario, AThawedMasterIsNotJudgedDeadFromFailuresCountedDuringItsFreeze) {
    Pair p;
    for (int64_t t = 1100; t <= 8000; t += 100) {
        const bool frozen = t < 2450;
        if (!frozen) p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, uint32_t(t)), false, t);
        p.e.on_probe(kMaster, 1, t <= 3200 ? lost() : answer(kMaster, 15, SmState::Master, uint32_t(t)), t);
        p.local_alive(t);
        ASSERT_EQ(promotes(p.e.tick(t)), 0u) << "at " << t;
    }
}

// Scenario 4: a 1.2 s flap of this node's own cable, with the master's plugin connection closed by
// a management-network blip meanwhile: the failures counted while this port was down (or across
// its change) are discarded; the master is never judged dead from them, never dropped as master().
TEST(HaScenario, FailuresCountedWhileThisNodesPortWasDownAreDiscarded) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 990);
    LocalPort down = active_port();
    down.state = 1;
    for (int64_t t = 1000; t <= 6000; t += 50) {
        if (t == 1050) p.e.on_local_port(down, t);           // read a little after the cable went
        if (t == 2250) p.e.on_local_port(active_port(), t);  // back at 2200
        if (t % 100 == 0) p.e.on_probe(kMaster, 1, t <= 3000 ? lost() : answer(kMaster, 15, SmState::Master), t);
        p.local_alive(t);
        ASSERT_EQ(promotes(p.e.tick(t)), 0u) << "at " << t;
        if (t > 1050 && t < 2250) {
            ASSERT_EQ(p.e.master(), kMaster) << "not dead from our own port's failures, at " << t;
            ASSERT_EQ(p.e.sms().at(kMaster).probe_failures, 0) << "none counted while it is down, at " << t;
        }
    }
}

// A flap of this node's port shorter than a probe window, read Down at 1150 and Active at 1250,
// while the master is really unreachable: the count starts after the port came back.
TEST(HaScenario, FailuresAcrossABriefFlapOfThisNodesPortCountFromItsReturn) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 990);
    LocalPort down = active_port();
    down.state = 1;
    int64_t promoted_at = 0;
    for (int64_t t = 1000; t <= 5000 && !promoted_at; t += 50) {
        if (t == 1150) p.e.on_local_port(down, t);
        if (t == 1250) p.e.on_local_port(active_port(), t);
        if (t % 100 == 0) p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        if (promotes(p.e.tick(t))) promoted_at = t;
    }
    EXPECT_EQ(promoted_at, 2800) << "1300 (the first failure after the port's return) + flap_window_ms";
}

// The slow path needs both its count and its span: five failures 500 ms apart span 2 s but are
// not ten.
TEST(HaEngine, SlowPathNeedsTheCountAndTheSpan) {
    Pair p;
    for (int64_t t = 1100; t <= 3100; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, 1000), false, t);
        if ((t - 1100) % 500 == 0) p.e.on_probe(kMaster, 1, lost(), t);
        p.local_alive(t);
        ASSERT_EQ(promotes(p.e.tick(t)), 0u) << "at " << t;
    }
    EXPECT_EQ(p.e.sms().at(kMaster).probe_failures, 5);
}

// A failure count with no failure for a probe window is stale (the prober stalled, the agent was
// frozen): it proves nothing, and the next failure starts a new count.
TEST(HaScenario, FailureCountsExpire) {
    Pair q;  // dead at 1200, but nothing has been probed since: at 2000 that is stale
    q.e.on_plugin_closed(kMaster, 1010);
    q.e.on_process_gone(kMaster, 1010);
    q.e.on_probe(kMaster, 1, lost(), 1100);
    q.e.on_probe(kMaster, 1, lost(), 1200);
    EXPECT_TRUE(q.e.dead(kMaster, 1700));
    EXPECT_FALSE(q.e.dead(kMaster, 1900));
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);
    p.e.on_process_gone(kMaster, 1010);
    p.e.on_probe(kMaster, 1, lost(), 1100);
    p.local_alive(1100);
    p.e.tick(1100);
    EXPECT_FALSE(p.e.dead(kMaster, 1700)) << "one failure";
    p.e.on_probe(kMaster, 1, lost(), 1800);  // 700 ms after the last one: > 5 x 100 + 100
    p.local_alive(1800);
    EXPECT_EQ(promotes(p.e.tick(1800)), 0u) << "a new count of one, not two";
    EXPECT_EQ(p.e.sms().at(kMaster).probe_failures, 1);
    p.e.on_probe(kMaster, 1, lost(), 1900);
    p.local_alive(1900);
    EXPECT_EQ(promotes(p.e.tick(1900)), 1u);
}

// Scenario 4, three SMs: the master that was killed is never master() again, so the third SM's
// agent never takes it for the master (and promotes beside the live one that took over).
TEST(HaScenario, ThreeSmsAKilledMasterIsNeverTheMasterAgain) {
    HaEngine e(act_config());  // this node: kLocal, priority 13
    e.on_local_port(active_port(), 0);
    Snapshot s;
    s.self = sm(kThird, 3, 14, SmState::Master);
    s.other_sms = {sm(kLocal, 2, 13, SmState::Standby), sm(kMaster, 1, 15, SmState::Standby)};
    e.on_snapshot(s, 0);
    // kThird is master since 0; kMaster became MASTER at 500 (a split brain healing) and is killed at 1000.
    for (int64_t t = 0; t <= 900; t += 100) {
        e.on_plugin(sm(kThird, 3, 14, SmState::Master, uint32_t(t)), false, t);
        e.on_plugin(sm(kLocal, 2, 13, SmState::Standby, uint32_t(t)), true, t);
        e.on_plugin(sm(kMaster, 1, 15, t >= 500 ? SmState::Master : SmState::Standby, uint32_t(t)), false, t);
        e.on_probe(kThird, 3, answer(kThird, 14, SmState::Master, uint32_t(t)), t);
        e.tick(t);
    }
    e.on_plugin_closed(kMaster, 1000);
    e.on_process_gone(kMaster, 1000);
    for (int64_t t = 1000; t <= 12000; t += 100) {
        e.on_plugin(sm(kThird, 3, 14, SmState::Master, uint32_t(t)), false, t);
        e.on_plugin(sm(kLocal, 2, 13, SmState::Standby, uint32_t(t)), true, t);
        e.on_probe(kThird, 3, answer(kThird, 14, SmState::Master, uint32_t(t)), t);
        e.on_probe(kMaster, 1, lost(), t);
        ASSERT_EQ(promotes(e.tick(t)), 0u) << "at " << t;
        if (t >= 1200) {
            ASSERT_EQ(e.master(), kThird) << "at " << t;
        }
    }
}

// A dead master that comes back MASTER (thawed, restarted) is learnt afresh: its mastership dates
// from its return, and its failures are gone.
TEST(HaScenario, ADeadMasterThatComesBackIsLearntAfresh) {
    Pair p;
    p.e.on_plugin_closed(kMaster, 1010);
    p.e.on_process_gone(kMaster, 1010);
    p.e.on_probe(kMaster, 1, lost(), 1100);
    p.e.on_probe(kMaster, 1, lost(), 1200);
    ASSERT_TRUE(p.e.dead(kMaster, 1200));
    EXPECT_FALSE(p.e.master().has_value()) << "master() never returns a dead SM";
    p.e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), 1300);
    auto acts = p.e.tick(1300);
    EXPECT_TRUE(said(acts, "was dead and is back as MASTER"));
    EXPECT_EQ(p.e.sms().at(kMaster).master_since_ms, 1300);
    EXPECT_EQ(p.e.master(), kMaster);
    EXPECT_FALSE(p.e.dead(kMaster, 1300));

    // An isolated master, dead by the slow path, whose plugin keeps heartbeating is not "back".
    Pair q;
    std::vector<Action> all;
    for (int64_t t = 1100; t <= 5000; t += 100) {
        q.e.on_plugin(sm(kMaster, 1, 15, SmState::Master, uint32_t(t)), false, t);
        q.e.on_probe(kMaster, 1, lost(), t);
        q.local_alive(t);
        auto acts = q.e.tick(t);
        all.insert(all.end(), acts.begin(), acts.end());
    }
    EXPECT_FALSE(said(all, "is back as MASTER"));
    EXPECT_EQ(q.e.sms().at(kMaster).master_since_ms, 0) << "MASTER since the Pair's start (t=0)";
}

TEST(HaEngine, TrackFileText) {
    EXPECT_EQ(track_file_text(true), "0\n");
    EXPECT_EQ(track_file_text(false), "1\n");
}

// A master whose plugin was never heard (not loaded, or its daemon link never came up) has no
// management-network witness at all: failing SMInfo is one witness, and beyond the flap window it
// is still the slow path (DISCOVER at 2 s), never the fast path's HANDOVER at 1.5 s.
TEST(HaScenario, AMasterWithoutAPluginIsNeverTheFastPath) {
    HaEngine e(act_config());
    e.on_local_port(active_port(), 0);
    for (int64_t t = 0; t <= 1000; t += 100) {
        e.on_plugin(sm(kLocal, 2, 14, SmState::Standby), true, t);
        e.on_probe(kMaster, 1, answer(kMaster, 15, SmState::Master), t);
        e.tick(t);
    }
    int64_t promoted_at = 0;
    uint32_t attr = 0;
    for (int64_t t = 1100; t <= 5000 && !promoted_at; t += 100) {
        e.on_plugin(sm(kLocal, 2, 14, SmState::Standby), true, t);
        e.on_probe(kMaster, 1, lost(), t);
        for (const Action& a : e.tick(t))
            if (a.kind == Action::Kind::promote) promoted_at = t, attr = a.attr_mod;
    }
    EXPECT_EQ(promoted_at, 3100);
    EXPECT_EQ(attr, kSmInfoDiscover);
}

// This node's SM (kLocal, priority 15) the master, the other (kMaster, 14) its standby, both
// plugins heard for a second; `also` runs at each step (a probe, say). Returns the engine.
HaEngine local_master_15_over_14(const std::function<void(HaEngine&, int64_t)>& also = nullptr) {
    HaConfig c = act_config();
    c.opensm_conf = "/etc/opensm/opensm.conf";
    HaEngine e(c);
    e.on_local_port(active_port(), 0);
    Snapshot s;
    s.self = sm(kLocal, 2, 15, SmState::Master);
    s.other_sms = {sm(kMaster, 1, 14, SmState::Standby)};
    e.on_snapshot(s, 0);
    for (int64_t t = 0; t <= 1000; t += 100) {
        e.on_plugin(sm(kLocal, 2, 15, SmState::Master), true, t);
        e.on_plugin(sm(kMaster, 1, 14, SmState::Standby), false, t);
        if (also) also(e, t);
        EXPECT_TRUE(of_kind(e.tick(t), Action::Kind::set_priority).empty()) << "at " << t;
    }
    return e;
}

// Issue 16, scenario 2, from the isolated master's agent: this node's SM (priority 15) is MASTER;
// its cable goes out at 1 s, the other SM (14) takes over at 3 s (the slow path on its side).
// While this node's port is still down, its agent lowers its SM's priority below the new master's
// (it comes back as a STANDBY that does not outrank its master, so no trap 144, no failback).
// The new master is killed at 7 s: this SM takes over, sweeps, and gets 15 back (as MASTER: no
// trap), so the other SM, restarted with 14, does not outrank it.
TEST(HaScenario, AMasterThatLostTheMastershipWhileIsolatedStepsAsideAndReclaimsAsMaster) {
    HaEngine e = local_master_15_over_14(
        [](HaEngine& x, int64_t t) { x.on_probe(kMaster, 1, answer(kMaster, 14, SmState::Standby), t); });
    LocalPort down = active_port();
    down.state = 1;
    int prio = 15;
    std::vector<std::pair<int64_t, int>> sets;
    for (int64_t t = 1100; t <= 6500; t += 100) {
        const bool port_up = t >= 6000;
        e.on_local_port(port_up ? active_port() : down, t);
        e.on_plugin(sm(kLocal, 2, prio, port_up ? SmState::Standby : SmState::Discovering), true, t);
        e.on_plugin(sm(kMaster, 1, 14, t >= 3000 ? SmState::Master : SmState::Standby), false, t);
        if (port_up) e.on_probe(kMaster, 1, answer(kMaster, 14, SmState::Master), t);
        auto acts = e.tick(t);
        ASSERT_EQ(promotes(acts), 0u) << "at " << t;
        for (const Action& a : of_kind(acts, Action::Kind::set_priority)) sets.push_back({t, a.priority}), prio = a.priority;
    }
    ASSERT_EQ(sets.size(), 1u) << "once: the plugin reports the lowered priority";
    // 14: a tie goes to the lower GUID, the new master's (with a higher GUID it would be 13).
    EXPECT_EQ(sets[0], std::make_pair(int64_t{3000}, 14));
    // The new master killed: this SM (13, the only STANDBY) takes over, then sweeps.
    e.on_plugin_closed(kMaster, 7000);
    e.on_process_gone(kMaster, 7000);
    bool promoted = false;
    for (int64_t t = 7000; t <= 9000; t += 10) {
        if (t % 100 == 0) e.on_local_port(active_port(), t);
        e.on_probe(kMaster, 1, lost(), t);
        e.on_plugin(sm(kLocal, 2, prio, promoted ? SmState::Master : SmState::Standby), true, t);
        if (promoted && t == 7200) {
            Snapshot up;
            up.self = sm(kLocal, 2, prio, SmState::Master);
            e.on_snapshot(up, t);
        }
        auto acts = e.tick(t);
        promoted = promoted || promotes(acts) > 0;
        for (const Action& a : of_kind(acts, Action::Kind::set_priority)) sets.push_back({t, a.priority}), prio = a.priority;
    }
    EXPECT_TRUE(promoted);
    ASSERT_EQ(sets.size(), 2u);
    EXPECT_EQ(sets[1], std::make_pair(int64_t{7200}, 15)) << "back to 15 after its first sweep as MASTER";
}

// The soak's kill-then-restart of the master: this node's SM (15, master) is killed at 1 s, the
// other (14) takes over. Restarted with its configured 15 it would outrank the new master, send
// trap 144 on every poll and take the mastership back (a failback: a second change of master; on
// ibsim, which drops every TrapRepress, it wedged the SM that then became master). So, while it is
// not running, its agent writes the priority just below the new master's for its next start (no
// SIGHUP: nothing runs), once; restarted, it is a STANDBY that does not outrank its master.
TEST(HaScenario, AKilledMastersAgentLowersItsPriorityForItsRestartNoFailback) {
    HaEngine e = local_master_15_over_14();
    e.on_plugin_closed(kLocal, 1010);  // kill -9: its plugin's connection closes, its process is gone
    e.on_process_gone(kLocal, 1010);
    std::vector<Action> sets;
    for (int64_t t = 1100; t <= 8000; t += 100) {
        e.on_plugin(sm(kMaster, 1, 14, t >= 1200 ? SmState::Master : SmState::Standby), false, t);
        for (const Action& a : of_kind(e.tick(t), Action::Kind::set_priority)) sets.push_back(a);
    }
    ASSERT_EQ(sets.size(), 1u) << "written once for the next start, not every retry_after_ms";
    EXPECT_EQ(sets[0].priority, 14) << "a tie goes to the new master's lower GUID";
    EXPECT_FALSE(sets[0].running) << "nothing to SIGHUP";
    // Restarted: its plugin says STANDBY at 14; nothing more is written while the other is master.
    for (int64_t t = 8100; t <= 10000; t += 100) {
        e.on_plugin(sm(kLocal, 2, 14, SmState::Standby), true, t);
        e.on_plugin(sm(kMaster, 1, 14, SmState::Master), false, t);
        e.on_probe(kMaster, 1, answer(kMaster, 14, SmState::Master), t);
        ASSERT_TRUE(of_kind(e.tick(t), Action::Kind::set_priority).empty()) << "at " << t;
    }
}

// The same loss of mastership while the port is up (a switchover lowers this MASTER's priority, or
// the other SM outranks it by configuration) is no step aside, and a MASTER that never stepped
// aside is never raised.
TEST(HaScenario, OnlyAnSmWhosePortIsDownStepsAside) {
    HaConfig c = act_config();
    c.opensm_conf = "/etc/opensm/opensm.conf";
    Pair p(c);  // kMaster 15 master, kLocal 14 standby, this node's port Active
    for (int64_t t = 1100; t <= 5000; t += 100) {
        p.e.on_plugin(sm(kMaster, 1, 13, SmState::Master), false, t);  // lowered by a switchover
        p.e.on_probe(kMaster, 1, answer(kMaster, 13, SmState::Master), t);
        p.local_alive(t);
        EXPECT_TRUE(of_kind(p.e.tick(t), Action::Kind::set_priority).empty()) << "at " << t;
    }
}

}  // namespace
}  // namespace ibf::ha
