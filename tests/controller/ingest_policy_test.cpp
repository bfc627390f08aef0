// ibf/ingest_policy.h: which connection gives way when the plugin slots are full; log limiting.
#include "ibf/ingest_policy.h"
#include "ibf/log_limit.h"

#include <gtest/gtest.h>

using namespace ibf;

TEST(IngestVictim, OldestWithoutHelloGivesWayFirst) {
    const std::vector<IngestSlot> open = {
        {.id = 1, .said_hello = true, .opened_ms = 0, .last_rx_ms = 0},        // silent 100 s, but...
        {.id = 2, .said_hello = false, .opened_ms = 500, .last_rx_ms = 500},
        {.id = 3, .said_hello = false, .opened_ms = 200, .last_rx_ms = 99000},  // oldest pre-Hello
        {.id = 4, .said_hello = true, .opened_ms = 10, .last_rx_ms = 99999},
    };
    EXPECT_EQ(ingest_victim(open, 100000, 30000), 3u);  // ...a connection without Hello goes first
}

TEST(IngestVictim, AYoungConnectionWithoutHelloIsNotPushedOut) {
    // Its Hello may be on the way: within grace_ms it is left alone (then a stale one goes, or nobody).
    const std::vector<IngestSlot> open = {
        {.id = 1, .said_hello = false, .opened_ms = 99500, .last_rx_ms = 99500},
        {.id = 2, .said_hello = true, .opened_ms = 0, .last_rx_ms = 99900},
    };
    EXPECT_EQ(ingest_victim(open, 100000, 30000, 1000), std::nullopt);
    EXPECT_EQ(ingest_victim(open, 100500, 30000, 1000), 1u);
    EXPECT_EQ(ingest_victim(open, 100000, 100, 1000), 2u);
}

TEST(IngestVictim, ThenTheLongestSilentIfStale) {
    std::vector<IngestSlot> open = {
        {.id = 1, .said_hello = true, .opened_ms = 0, .last_rx_ms = 60000},
        {.id = 2, .said_hello = true, .opened_ms = 0, .last_rx_ms = 50000},
        {.id = 3, .said_hello = true, .opened_ms = 0, .last_rx_ms = 99000},
    };
    EXPECT_EQ(ingest_victim(open, 100000, 30000), 2u);
    EXPECT_EQ(ingest_victim(open, 100000, 50000), 2u);  // exactly stale_ms silent counts as stale
    EXPECT_EQ(ingest_victim(open, 100000, 50001), std::nullopt);  // everyone live: refuse the newcomer
    EXPECT_EQ(ingest_victim({}, 100000, 30000), std::nullopt);
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
