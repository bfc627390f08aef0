// ibf/ingest_policy.h: admission of plugin connections (Hello slots, the pre-Hello pool); log limiting.
#include "ibf/ingest_policy.h"
#include "ibf/log_limit.h"

#include <gtest/gtest.h>

using namespace ibf;

namespace {

IngestSlot hello_slot(uint64_t id, int64_t last_rx_ms, std::string source = "10.0.0.1") {
    return {.id = id, .said_hello = true, .opened_ms = 0, .last_rx_ms = last_rx_ms, .source = std::move(source)};
}
IngestSlot pre_hello(uint64_t id, int64_t opened_ms, std::string source = "10.0.0.9") {
    return {.id = id, .said_hello = false, .opened_ms = opened_ms, .last_rx_ms = opened_ms, .source = std::move(source)};
}
const IngestLimits kLim{.max_connections = 2, .max_pre_hello = 4, .max_pre_hello_per_source = 3, .stale_ms = 30000};

}  // namespace

TEST(IngestAdmission, ThereIsRoomUntilAPoolIsFull) {
    const Admission a = admit_connection({hello_slot(1, 99000), pre_hello(2, 99500)}, "10.0.0.9", kLim, 100000);
    EXPECT_FALSE(a.refuse);
    EXPECT_EQ(a.evict, std::nullopt);
    EXPECT_EQ(admit_hello({hello_slot(1, 99000)}, kLim, 100000).evict, std::nullopt);
    EXPECT_FALSE(admit_hello({hello_slot(1, 99000)}, kLim, 100000).refuse);
}

// Issue 19 item 2: connections that have not said Hello never hold a Hello slot; however many and
// however young, a newcomer gets a place in their pool, so an authenticated Hello gets in.
TEST(IngestAdmission, SilentConnectionsGiveWayToANewcomerWhateverTheirAge) {
    const std::vector<IngestSlot> open = {pre_hello(1, 99990, "10.0.0.9"), pre_hello(2, 99980, "10.0.0.8"),
                                          pre_hello(3, 99995, "10.0.0.9"), pre_hello(4, 99999, "10.0.0.7")};
    const Admission a = admit_connection(open, "10.0.0.1", kLim, 100000);  // all of them younger than 20 ms
    EXPECT_FALSE(a.refuse);
    EXPECT_EQ(a.evict, 1u);  // the oldest of the source holding most (10.0.0.9: 2), not the oldest overall
    EXPECT_NE(a.why.find("4 connections without Hello"), std::string::npos) << a.why;
}

// A connection whose Hello is on its way (bytes read, or waiting in the socket, not yet decoded)
// is not silent: a later connect never pushes it out. On main after the merges,
// ControllerDaemon.ConnectionsOverTheLimitsAreClosedAtOnce saw "connection 1 dropped: no Hello
// after 0 ms" for a plugin that had sent its Hello: the third connect took its place.
TEST(IngestAdmission, AConnectionWhoseHelloIsOnItsWayIsNeverPushedOut) {
    IngestSlot one = pre_hello(1, 99990, "uid 0"), two = pre_hello(2, 99991, "uid 0");
    one.speaking = two.speaking = true;
    const IngestLimits lim{.max_connections = 2, .max_pre_hello = 2, .max_pre_hello_per_source = 8, .stale_ms = 30000};
    Admission a = admit_connection({one, two}, "uid 0", lim, 100000);
    EXPECT_TRUE(a.refuse) << "the newcomer, not a speaker";
    EXPECT_EQ(a.evict, std::nullopt);
    EXPECT_NE(a.why.find("each sending"), std::string::npos) << a.why;
    two.speaking = false;  // one silent connection: that one gives way
    a = admit_connection({one, two}, "uid 0", lim, 100000);
    EXPECT_FALSE(a.refuse);
    EXPECT_EQ(a.evict, std::optional<uint64_t>(2));
    const IngestLimits per_source{.max_connections = 2, .max_pre_hello = 16, .max_pre_hello_per_source = 2, .stale_ms = 30000};
    two.speaking = true;
    a = admit_connection({one, two}, "uid 0", per_source, 100000);
    EXPECT_TRUE(a.refuse) << "the per-source limit, every one of them sending";
}

TEST(IngestAdmission, OneSourceOnlyPushesOutItsOwnConnections) {
    std::vector<IngestSlot> open = {pre_hello(1, 10, "10.0.0.1"), pre_hello(2, 20, "10.0.0.9"),
                                    pre_hello(3, 30, "10.0.0.9"), pre_hello(4, 40, "10.0.0.9")};
    // 10.0.0.9 is at its limit of 3: its own oldest goes, the plugin at 10.0.0.1 (older) stays.
    Admission a = admit_connection(open, "10.0.0.9", kLim, 100);
    EXPECT_EQ(a.evict, 2u);
    EXPECT_NE(a.why.find("3 connections from 10.0.0.9 without Hello (limits.max_pre_hello_per_source)"),
              std::string::npos)
        << a.why;
    // A tie in count: the source whose oldest is older gives way.
    open = {pre_hello(1, 50, "a"), pre_hello(2, 10, "b"), pre_hello(3, 60, "a"), pre_hello(4, 20, "b")};
    EXPECT_EQ(admit_connection(open, "c", kLim, 100).evict, 2u);
    // A per-source limit of 0 counts as 1.
    IngestLimits one = kLim;
    one.max_pre_hello_per_source = 0;
    EXPECT_EQ(admit_connection({pre_hello(7, 10, "a")}, "a", one, 100).evict, 7u);
}

TEST(IngestAdmission, LivePluginsAreNeverPushedOut) {
    // Every Hello slot live: the newcomer is refused at once, whatever waits in the pre-Hello pool...
    const std::vector<IngestSlot> full = {hello_slot(1, 99000), hello_slot(2, 99900), pre_hello(3, 10)};
    Admission a = admit_connection(full, "10.0.0.1", kLim, 100000);
    EXPECT_TRUE(a.refuse);
    EXPECT_EQ(a.evict, std::nullopt);
    EXPECT_NE(a.why.find("2 plugin connections open, all live"), std::string::npos) << a.why;
    EXPECT_TRUE(hello_slots_all_live(full, kLim, 100000));
    // ...and so is a Hello.
    a = admit_hello({hello_slot(1, 99000), hello_slot(2, 99900)}, kLim, 100000);
    EXPECT_TRUE(a.refuse);
    EXPECT_NE(a.why.find("2 plugin connections said Hello, all live"), std::string::npos) << a.why;
}

TEST(IngestAdmission, AStaleSlotGoesToAHelloNotToASilentNewcomer) {
    const std::vector<IngestSlot> open = {hello_slot(1, 60000), hello_slot(2, 50000)};
    const Admission c = admit_connection(open, "10.0.0.1", kLim, 100000);
    EXPECT_FALSE(c.refuse);
    EXPECT_EQ(c.evict, std::nullopt);  // it may wait for its Hello; nobody gives way yet
    EXPECT_FALSE(hello_slots_all_live(open, kLim, 100000));
    const Admission h = admit_hello(open, kLim, 100000);
    EXPECT_FALSE(h.refuse);
    EXPECT_EQ(h.evict, 2u);  // its Hello: the one silent longest makes room
}

TEST(IngestAdmission, StaleVictimIsTheLongestSilentAmongThoseThatSaidHello) {
    const std::vector<IngestSlot> open = {hello_slot(1, 60000), hello_slot(2, 50000), hello_slot(3, 99000),
                                          pre_hello(4, 0)};
    EXPECT_EQ(stale_victim(open, 100000, 30000), 2u);
    EXPECT_EQ(stale_victim(open, 100000, 50000), 2u);             // exactly stale_ms silent counts as stale
    EXPECT_EQ(stale_victim(open, 100000, 50001), std::nullopt);   // everyone live (the pre-Hello one is not a candidate)
    EXPECT_EQ(stale_victim({}, 100000, 30000), std::nullopt);
}

TEST(LogLimit, BurstThenCountThenReportTheCount) {
    LogLimit lim(1000, 2);
    EXPECT_EQ(lim.allow(0), 0u);
    EXPECT_EQ(lim.allow(10), 0u);
    for (int i = 0; i < 500; ++i) EXPECT_EQ(lim.allow(20 + i), std::nullopt);
    EXPECT_EQ(lim.held(), 500u);
    EXPECT_EQ(lim.allow(999), std::nullopt);
    EXPECT_EQ(lim.allow(1000), 501u);  // a new window
    EXPECT_EQ(lim.held(), 0u);
    EXPECT_EQ(lim.allow(1001), 0u);
}
