// SwitchoverRun (ha_switchover.h): the daemon's switchover against a small model of two OpenSMs
// (a Set takes effect when the SM answers; the master hands over when a STANDBY outranks it), fed
// the sequences of issue 16's scenario 3: a target SIGSTOPped, a client killed 30 ms in, a step
// that never takes effect before and after the handover.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "ibf/ha_rank.h"
#include "ibf/ha_switchover.h"

namespace ibf::ha {
namespace {

constexpr Guid kM = 0x0002c90300000001, kT = 0x0002c90300000002;
using Kind = SwitchoverStep::Kind;
using Views = std::map<Guid, SwitchoverSm>;

Views pair_15_14() { return {{kM, {kM, 15, SmState::Master, true}}, {kT, {kT, 14, SmState::Standby, true}}}; }

// Applies what OpenSM would do with `s` (a frozen SM applies nothing; its Sets queue up).
struct Fabric {
    Views v = pair_15_14();
    std::map<Guid, std::vector<SwitchoverStep>> queued;
    std::set<Guid> frozen;
    bool no_handover = false;  // the master's sweep never finds the target (it never hands over)
    void apply(const SwitchoverStep& s) {
        if (frozen.count(s.sm)) {
            queued[s.sm].push_back(s);
            return;
        }
        SwitchoverSm& x = v[s.sm];
        if (s.kind == Kind::disable && x.state == SmState::Standby) x.state = SmState::NotActive;
        if (s.kind == Kind::standby && x.state == SmState::NotActive) x.state = SmState::Standby;
        if (s.kind == Kind::set_priority) x.priority = s.priority;
        arbitrate();
    }
    void arbitrate() {  // the master's sweep finds a STANDBY that outranks it: it hands over
        SwitchoverSm& m = v[kM].state == SmState::Master ? v[kM] : v[kT];
        SwitchoverSm& o = &m == &v[kM] ? v[kT] : v[kM];
        if (!no_handover && m.state == SmState::Master && o.state == SmState::Standby && o.alive &&
            sm_outranks(uint8_t(o.priority), o.sm, uint8_t(m.priority), m.sm))
            std::swap(m.state, o.state);
    }
    void freeze(Guid g) { frozen.insert(g); }  // its probes fail a little later: stop_answering()
    void stop_answering(Guid g) { v[g].alive = false; }
    void thaw(Guid g) {
        frozen.erase(g);
        v[g].alive = true;
        for (const auto& s : queued[g]) apply(s);
        queued[g].clear();
    }
    int masters() const {
        int n = 0;
        for (const auto& [g, x] : v) n += x.state == SmState::Master;
        return n;
    }
};

SwitchoverRun start(const Views& v, SwitchoverTiming t = {}) {
    auto r = SwitchoverRun::start(kM, kT, v, t, 0);
    if (auto* why = std::get_if<std::string>(&r)) ADD_FAILURE() << *why;
    return std::get<SwitchoverRun>(std::move(r));
}

// Runs the switchover every 10 ms until it finishes (or `until`); `at` hooks faults in.
std::vector<SwitchoverStep> drive(SwitchoverRun& run, Fabric& f, int64_t until,
                                  const std::function<void(int64_t)>& at = [](int64_t) {}) {
    std::vector<SwitchoverStep> sent;
    for (int64_t t = 10; t <= until && !run.finished(); t += 10) {
        at(t);
        auto todo = run.next(f.v, t);
        if (todo.send) {
            sent.push_back(*todo.send);
            f.apply(*todo.send);
        }
    }
    return sent;
}

bool one_master_other_standby(const Views& v) {
    int masters = 0, standbys = 0;
    for (const auto& [g, x] : v) masters += x.state == SmState::Master, standbys += x.state == SmState::Standby;
    return masters == 1 && standbys == 1;
}

TEST(HaSwitchover, ATargetThatDoesNotAnswerIsRefusedBeforeAnyChange) {
    Views v = pair_15_14();
    v[kT].alive = false;  // SIGSTOPped: its SMInfo probes time out
    auto r = SwitchoverRun::start(kM, kT, v, {}, 0);
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_EQ(std::get<std::string>(r), "the target 0x0002c90300000002 is not a live STANDBY (it is STANDBY, not answering)");
    EXPECT_TRUE(std::holds_alternative<std::string>(SwitchoverRun::start(kM, 0x99, pair_15_14(), {}, 0)));
}

// The three-SM soak: master 15, a STANDBY 14, the target 13. Lowering the master below the target
// makes the 14 the highest SM, and OpenSM hands over to the highest: the run rolled back (3 of 3).
// Refused before any change, naming the SM to switch over to; a third SM below the target, or one
// NOT_ACTIVE or not answering, is no obstacle.
TEST(HaSwitchover, AThirdSmThatOutranksTheTargetIsRefusedBeforeAnyChange) {
    constexpr Guid kThird = 0x0002c90300000003;
    Views v = {{kM, {kM, 15, SmState::Master, true}},
               {kThird, {kThird, 14, SmState::Standby, true}},
               {kT, {kT, 13, SmState::Standby, true}}};
    auto r = SwitchoverRun::start(kM, kT, v, {}, 0);
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_EQ(std::get<std::string>(r),
              "0x0002c90300000003 (priority 14, STANDBY) outranks the target 0x0002c90300000002 (priority 13): the "
              "master would hand over to it, not to the target; switch over to 0x0002c90300000003 instead, or lower "
              "its sm_priority below 13 first");
    v[kThird].priority = 13;  // same priority, higher GUID than the target: the target outranks it
    EXPECT_TRUE(std::holds_alternative<SwitchoverRun>(SwitchoverRun::start(kM, kT, v, {}, 0)));
    v[kThird].priority = 14;
    v[kThird].state = SmState::NotActive;  // the master's handover skips NOT_ACTIVE SMs
    EXPECT_TRUE(std::holds_alternative<SwitchoverRun>(SwitchoverRun::start(kM, kT, v, {}, 0)));
    v[kThird].state = SmState::Standby;
    v[kThird].alive = false;  // dead: its port's IsSM is gone, the master no longer knows it
    EXPECT_TRUE(std::holds_alternative<SwitchoverRun>(SwitchoverRun::start(kM, kT, v, {}, 0)));
    EXPECT_TRUE(std::holds_alternative<SwitchoverRun>(SwitchoverRun::start(kM, kThird, [&] {
        Views w = v;
        w[kThird].alive = true;
        return w;
    }(), {}, 0))) << "to the 14 itself: the target 13 is below it";
}

TEST(HaSwitchover, ACleanRunSendsEachStepOnceAndEndsWithOneMaster) {
    Fabric f;
    SwitchoverRun run = start(f.v);
    auto sent = drive(run, f, 60000);
    EXPECT_EQ(run.state(), SwitchoverRun::State::done) << run.outcome();
    EXPECT_EQ(sent.size(), run.plan().steps.size() - 1) << "every step but the await, once";
    EXPECT_EQ(f.v[kT].state, SmState::Master);
    EXPECT_EQ(f.v[kM].state, SmState::Standby);
    EXPECT_EQ(f.v[kT].priority, 15);
    EXPECT_EQ(f.v[kM].priority, 14);
}

// Scenario 3: the client that asked is killed 30 ms in. The run lives in the daemon, which has no
// notion of the client: it carries on to the end, and the pair is never stranded.
TEST(HaSwitchover, TheClientKilled30MsInStrandsNothing) {
    Fabric f;
    SwitchoverRun run = start(f.v);
    bool client_alive = true;
    auto sent = drive(run, f, 60000, [&](int64_t t) {
        if (t == 30) client_alive = false;
    });
    EXPECT_FALSE(client_alive);
    EXPECT_EQ(run.state(), SwitchoverRun::State::done);
    EXPECT_TRUE(one_master_other_standby(f.v));
}

// Scenario 3: the target is SIGSTOPped right after the run starts: its DISABLE queues in the frozen
// process. The run rolls back (the target stopped answering); once thawed, the queued DISABLE
// applies and the rollback's STANDBY (sent again until it shows) brings it back to polling.
TEST(HaSwitchover, ATargetFrozenMidRunIsBroughtBackToStandby) {
    Fabric f;
    SwitchoverRun run = start(f.v);
    auto sent = drive(run, f, 60000, [&](int64_t t) {
        if (t == 10) f.freeze(kT);  // the DISABLE sent now queues in the stopped process
        if (t == 300) f.stop_answering(kT);
        if (t == 12000) f.thaw(kT);
    });
    EXPECT_EQ(run.state(), SwitchoverRun::State::rolled_back) << run.outcome();
    EXPECT_NE(run.outcome().find("0x0002c90300000002 stopped answering"), std::string::npos) << run.outcome();
    EXPECT_EQ(f.v[kM].state, SmState::Master);
    EXPECT_EQ(f.v[kM].priority, 15);
    EXPECT_EQ(f.v[kT].state, SmState::Standby) << "polling again, not NOT_ACTIVE";
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent.back().kind, Kind::standby);
    EXPECT_EQ(sent.back().other, kM);
}

// As seen on ibsim: the thawed target first answers the SMInfo probes queued while it was stopped
// (STANDBY), and its queued DISABLE applies only ~20 ms later. The rollback must not end on that
// first answer: "one MASTER, the other STANDBY" must hold for settle_ms.
TEST(HaSwitchover, AThawedTargetsQueuedDisableDoesNotSlipPastTheRollback) {
    Fabric f;
    SwitchoverRun run = start(f.v);
    std::vector<SwitchoverStep> late;  // the queued Sets, applied 20 ms after the thaw
    auto sent = drive(run, f, 60000, [&](int64_t t) {
        if (t == 10) f.freeze(kT);
        if (t == 300) f.stop_answering(kT);
        if (t == 5000) {  // thawed: it answers at once, its queue is worked off later
            late = f.queued[kT];
            f.queued[kT].clear();
            f.frozen.erase(kT);
            f.v[kT].alive = true;
        }
        if (t == 5020)
            for (const auto& s : late) f.apply(s);
    });
    EXPECT_EQ(run.state(), SwitchoverRun::State::rolled_back) << run.outcome();
    EXPECT_EQ(f.v[kT].state, SmState::Standby) << "the late DISABLE was undone, not left NOT_ACTIVE";
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent.back().kind, Kind::standby);
}

// The master's sweep never hands over (the await step times out) and the target has meanwhile
// gone NOT_ACTIVE: the rollback gives the master its priority back FIRST (a STANDBY outranking the
// master it polls would send trap 144), then tells the target STANDBY.
TEST(HaSwitchover, NoHandoverInTimeRollsBackTheMastersPriorityFirst) {
    Fabric f;
    f.no_handover = true;
    SwitchoverTiming t;
    t.step_timeout_ms = 3000;
    SwitchoverRun run = start(f.v, t);
    auto sent = drive(run, f, 60000, [&](int64_t now) {
        if (now == 3000) f.v[kT].state = SmState::NotActive;
    });
    EXPECT_EQ(run.state(), SwitchoverRun::State::rolled_back) << run.outcome();
    EXPECT_NE(run.outcome().find("await"), std::string::npos) << run.outcome();
    ASSERT_GE(sent.size(), 2u);
    const SwitchoverStep& a = sent[sent.size() - 2];
    const SwitchoverStep& b = sent.back();
    EXPECT_EQ(a.kind, Kind::set_priority);
    EXPECT_EQ(a.sm, kM);
    EXPECT_EQ(a.priority, 15);
    EXPECT_EQ(b.kind, Kind::standby);
    EXPECT_EQ(b.sm, kT);
    EXPECT_EQ(b.other, kM);
    EXPECT_EQ(f.v[kM].state, SmState::Master);
    EXPECT_EQ(f.v[kM].priority, 15);
    EXPECT_TRUE(one_master_other_standby(f.v));
}

// A step not in effect is sent again every resend_ms, not every tick, until it shows.
TEST(HaSwitchover, AStepIsResentEveryResendMsUntilItShows) {
    Fabric f;
    f.freeze(kT);  // alive by SMInfo for now, but applies nothing
    SwitchoverTiming t;
    t.step_timeout_ms = 3500;
    SwitchoverRun run = start(f.v, t);
    auto sent = drive(run, f, 3400);
    ASSERT_EQ(sent.size(), 4u) << "at 10, 1010, 2010, 3010";
    for (const auto& s : sent) EXPECT_EQ(s.kind, Kind::disable);
    EXPECT_EQ(run.state(), SwitchoverRun::State::running);
}

// After the handover the old master's STANDBY never shows in time (it stays NOT_ACTIVE, e.g. the
// Set is lost): the rollback keeps the new master and sends the old one STANDBY until it polls.
TEST(HaSwitchover, AfterTheHandoverTheOldMasterIsNeverLeftNotActive) {
    Fabric f;
    SwitchoverTiming t;
    t.step_timeout_ms = 2000;
    SwitchoverRun run = start(f.v, t);
    bool lose = true;
    std::vector<SwitchoverStep> sent;
    for (int64_t now = 10; now <= 60000 && !run.finished(); now += 10) {
        auto todo = run.next(f.v, now);
        if (!todo.send) continue;
        sent.push_back(*todo.send);
        const bool standby_of_old = todo.send->kind == Kind::standby && todo.send->sm == kM;
        if (standby_of_old && lose && run.state() == SwitchoverRun::State::running) continue;  // lost
        if (run.state() == SwitchoverRun::State::rolling_back) lose = false;
        f.apply(*todo.send);
    }
    EXPECT_EQ(run.state(), SwitchoverRun::State::rolled_back) << run.outcome();
    EXPECT_NE(run.outcome().find("did not take effect within 2000 ms"), std::string::npos) << run.outcome();
    EXPECT_EQ(f.v[kT].state, SmState::Master);
    EXPECT_EQ(f.v[kM].state, SmState::Standby);
    EXPECT_EQ(f.masters(), 1);
}

// Resumable: a step found in effect is passed over without a Set (e.g. the run restarted after
// the target was already DISABLEd and told STANDBY).
TEST(HaSwitchover, StepsAlreadyInEffectAreNotSentAgain) {
    Fabric f;
    SwitchoverRun run = start(f.v);
    f.v[kT].state = SmState::NotActive;
    auto todo = run.next(f.v, 10);
    ASSERT_TRUE(todo.send.has_value());
    EXPECT_EQ(todo.send->kind, Kind::standby) << "DISABLE is in effect: straight to STANDBY";
    EXPECT_EQ(run.step(), 1u);
}

// Neither SM can be made master (the master died mid-run): the rollback leaves the target STANDBY
// (so a failover can pick it) and fails after rollback_timeout_ms, naming every SM's state.
TEST(HaSwitchover, ARollbackThatCannotSettleFailsWithTheStates) {
    Fabric f;
    SwitchoverTiming t;
    t.rollback_timeout_ms = 5000;
    SwitchoverRun run = start(f.v, t);
    drive(run, f, 60000, [&](int64_t now) {
        if (now == 30) f.v[kM].alive = false, f.v[kM].state = SmState::NotActive;  // before the handover
    });
    EXPECT_EQ(run.state(), SwitchoverRun::State::failed);
    EXPECT_NE(run.outcome().find("the rollback did not settle within 5000 ms"), std::string::npos) << run.outcome();
    EXPECT_EQ(f.v[kT].state, SmState::Standby);
    run.abort("late", 70000);
    EXPECT_EQ(run.state(), SwitchoverRun::State::failed) << "a finished run stays finished";
}

// Scenario 3's aftermath: a DISABLE applied after its run ended (the target was frozen, or the
// daemon running the run died) leaves the SM NOT_ACTIVE, which polls nobody. Its own agent tells
// it STANDBY again, only after `after_ms` from the later of the DISABLE asked and first seen so,
// never while a run is active here, never without a live master that is another SM.
TEST(HaSwitchover, AStrandedNotActiveSmIsToldStandbyAfterTheDelay) {
    StrandedSm s;
    s.local = {kT, 14, SmState::NotActive, true};
    s.not_active_since_ms = 1000;
    s.last_disable_ms = 5000;
    s.master = SwitchoverSm{kM, 15, SmState::Master, true};
    EXPECT_EQ(stranded_standby_master(s, 5000 + 29999, 30000), std::nullopt) << "counted from the later DISABLE";
    EXPECT_EQ(stranded_standby_master(s, 5000 + 30000, 30000), std::optional<Guid>(kM));
    StrandedSm running = s;
    running.run_active = true;
    EXPECT_EQ(stranded_standby_master(running, 90000, 30000), std::nullopt) << "a run of this daemon owns it";
    StrandedSm no_master = s;
    no_master.master.reset();
    EXPECT_EQ(stranded_standby_master(no_master, 90000, 30000), std::nullopt);
    StrandedSm dead_master = s;
    dead_master.master->alive = false;
    EXPECT_EQ(stranded_standby_master(dead_master, 90000, 30000), std::nullopt);
    StrandedSm self = s;
    self.master = SwitchoverSm{kT, 14, SmState::Master, true};
    EXPECT_EQ(stranded_standby_master(self, 90000, 30000), std::nullopt);
    StrandedSm standby = s;
    standby.local.state = SmState::Standby;
    EXPECT_EQ(stranded_standby_master(standby, 90000, 30000), std::nullopt) << "not stranded";
    StrandedSm silent = s;
    silent.local.alive = false;
    EXPECT_EQ(stranded_standby_master(silent, 90000, 30000), std::nullopt) << "a frozen SM would queue it";
}

}  // namespace
}  // namespace ibf::ha
