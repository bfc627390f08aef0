// Rules of ControllerState that decide which fabric is checked, and the check queue's overflow
// policy: two SMs both saying MASTER, a second Hello claiming another SM on one connection, which
// job a full queue drops. Pure: no sockets, times passed in.
#include <gtest/gtest.h>

#include <deque>

#include "ibf/daemon_fixture.h"
#include "ibf/check_queue.h"
#include "ibf/controller_state.h"

using namespace ibf;
using namespace ibf::test;

namespace {

wire::Heartbeat heartbeat(Guid g, SmState st) {
    wire::Heartbeat hb;
    hb.sm = hello(g, st).sm;
    return hb;
}

}  // namespace

// docs/daemon.md: among connected SMs saying MASTER, the latest to become master provides the fabric.
TEST(ControllerRules, TwoMastersTheLatestToBecomeMasterWins) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_connect(2, "unix", 10);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master), 10));
    ASSERT_TRUE(st.on_hello(2, hello(kStandbyGuid, SmState::Standby), 10));
    EXPECT_EQ(st.master(), kMasterGuid);
    // The second SM takes over while the first still says MASTER (split brain, or a stale state).
    ASSERT_TRUE(st.on_heartbeat(2, heartbeat(kStandbyGuid, SmState::Master), 30));
    EXPECT_EQ(st.master(), kStandbyGuid);
    // Repeating MASTER is not becoming master again: the first SM's heartbeat changes nothing.
    ASSERT_TRUE(st.on_heartbeat(1, heartbeat(kMasterGuid, SmState::Master), 40));
    EXPECT_EQ(st.master(), kStandbyGuid);
    EXPECT_EQ(st.sm_view(kMasterGuid)->master_since_ms, 10);

    EXPECT_FALSE(st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 7), 50));
    EXPECT_EQ(st.ingest().snapshots_ignored, 1u);
    auto job = st.on_snapshot(2, snapshot(small_fabric(), kStandbyGuid, SmState::Master, 8), 60);
    ASSERT_TRUE(job);
    EXPECT_EQ(st.current_source(), kStandbyGuid);
    EXPECT_EQ(st.last_sweep_seq(), 8u);

    // The later master goes away: the remaining connected MASTER is the master again.
    st.on_disconnect(2, 70);
    EXPECT_EQ(st.master(), kMasterGuid);
    EXPECT_TRUE(st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 9), 80));
    EXPECT_EQ(st.current_source(), kMasterGuid);
}

// Both became MASTER at the same millisecond: the lower GUID (the first in the SM table) wins, so
// the choice does not flip between calls.
TEST(ControllerRules, TwoMastersAtTheSameTimeLowerGuidWins) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_connect(2, "unix", 10);
    ASSERT_TRUE(st.on_hello(2, hello(kStandbyGuid, SmState::Master), 10));
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master), 10));
    ASSERT_LT(kMasterGuid, kStandbyGuid);
    EXPECT_EQ(st.master(), kMasterGuid);
}

// A connection belongs to the SM of its first Hello. A later Hello claiming another SM GUID is a
// protocol error (the daemon drops the connection); it neither creates the other SM nor moves the
// connection to it. A repeated Hello for the same SM updates it.
TEST(ControllerRules, SecondHelloWithAnotherSmGuidIsRefused) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Standby, 1, 5), 10));
    EXPECT_FALSE(st.on_hello(1, hello(kStandbyGuid, SmState::Master, 2, 15), 20));
    ASSERT_EQ(st.sms().size(), 1u);
    EXPECT_EQ(st.sms().count(kStandbyGuid), 0u);
    const SmRecord& r = st.sms().at(kMasterGuid);
    EXPECT_EQ(r.open_connections, 1);
    EXPECT_EQ(st.sm_info(kMasterGuid).state, SmState::Standby);
    EXPECT_EQ(st.sm_info(kMasterGuid).priority, 5);
    EXPECT_FALSE(st.master());
    EXPECT_EQ(st.ingest().messages[static_cast<size_t>(wire::MsgType::Hello)], 2u);

    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master, 1, 6), 30));
    EXPECT_EQ(st.sms().at(kMasterGuid).open_connections, 1);  // same connection: not counted twice
    EXPECT_EQ(st.sm_info(kMasterGuid).priority, 6);
    EXPECT_EQ(st.master(), kMasterGuid);
    st.on_disconnect(1, 40);
    EXPECT_EQ(st.sms().at(kMasterGuid).open_connections, 0);
}

// The check queue holds 8 jobs; the 9th drops the oldest (its result would be superseded by the
// newer generations), never the new one.
TEST(ControllerRules, FullCheckQueueDropsTheOldestJob) {
    std::deque<CheckJob> q;
    for (uint64_t g = 1; g <= 8; ++g) EXPECT_FALSE(push_dropping_oldest(q, CheckJob{g, nullptr, 0, true}, 8)) << g;
    ASSERT_EQ(q.size(), 8u);
    auto dropped = push_dropping_oldest(q, CheckJob{9, nullptr, 0, true}, 8);
    ASSERT_TRUE(dropped);
    EXPECT_EQ(dropped->generation, 1u);
    ASSERT_EQ(q.size(), 8u);
    EXPECT_EQ(q.front().generation, 2u);
    EXPECT_EQ(q.back().generation, 9u);
    dropped = push_dropping_oldest(q, CheckJob{10, nullptr, 0, false}, 8);
    ASSERT_TRUE(dropped);
    EXPECT_EQ(dropped->generation, 2u);
    EXPECT_EQ(q.back().generation, 10u);
    EXPECT_FALSE(q.back().new_sweep);
}

// A result is published once: the same generation again (a duplicate hand-off) is refused and
// counts no second check.
TEST(ControllerRules, AResultIsPublishedOnce) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master), 10));
    auto job = st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 3), 20);
    ASSERT_TRUE(job);
    CheckResult r;
    r.generation = job->generation;
    r.snapshot = job->snapshot;
    r.checked = true;
    r.check_ms = 1.5;
    EXPECT_TRUE(st.publish(r, 30));
    EXPECT_FALSE(st.publish(r, 40));
    EXPECT_EQ(st.checks_run(), 1u);
    EXPECT_DOUBLE_EQ(st.check_ms_sum(), 1.5);
    EXPECT_EQ(st.findings_ms(), 30);
}

// Issue 18 item 6: SMs that sent a snapshot and left are dropped after health.forget_sm_after_s,
// with their snapshots, and counted; a connected SM, or one gone for less, is kept.
TEST(ControllerRules, SmsGoneForTheBoundAreForgottenWithTheirSnapshots) {
    ControllerState st;
    HealthOptions h;
    h.forget_sm_after_ms = 3'600'000;
    st.configure(h);
    const Fabric f = small_fabric();
    st.on_connect(1, "unix", 0);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master), 0));  // stays connected
    std::vector<std::weak_ptr<const Snapshot>> left;
    for (ConnId c = 100; c < 200; ++c) {
        const Guid g = 0x0002c90300100000ULL + c;
        st.on_connect(c, "10.0.0.9:1", 1000);
        ASSERT_TRUE(st.on_hello(c, hello(g, SmState::Standby), 1000));
        EXPECT_FALSE(st.on_snapshot(c, snapshot(f, g, SmState::Standby, 1), 1000));  // kept: not the master
        left.push_back(st.sms().at(g).latest);
        st.on_disconnect(c, 2000);
    }
    ASSERT_EQ(st.sms().size(), 101u);
    EXPECT_EQ(st.forget_silent_sms(2000 + 3'599'999), 0u);  // not yet
    st.on_connect(7, "unix", 2000 + 3'600'000);               // any later activity drops them
    EXPECT_EQ(st.sms().size(), 1u);
    EXPECT_EQ(st.sms().count(kMasterGuid), 1u);
    EXPECT_EQ(st.sms_forgotten_total(), 100u);
    for (const auto& w : left) EXPECT_TRUE(w.expired());
    // A forgotten SM that comes back starts afresh.
    ASSERT_TRUE(st.on_hello(7, hello(0x0002c90300100000ULL + 100, SmState::Standby), 2000 + 3'600'000));
    EXPECT_EQ(st.sms().size(), 2u);
    EXPECT_EQ(st.sms().at(0x0002c90300100000ULL + 100).snapshots_received, 0u);
}
