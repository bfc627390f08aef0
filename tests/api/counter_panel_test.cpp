// counter_panel(): which rows the page's counters panel shows, from a PortCounterTracker fed with
// explicit times and a hand-made link table. Exact values, one thing per test.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "ibf/counter_rows.h"
#include "ibf/counter_panel.h"

using namespace ibf;
using C = wire::PortCounter;

namespace {

constexpr int64_t T0 = 1764468000000;  // 2025-11-30T02:00:00Z
constexpr int64_t S = 1000, M = 60 * S, H = 60 * M;
constexpr Guid kSm = 0x100;
constexpr Guid kLeaf = 0xa1, kSpine = 0xb1, kHost = 0xc1, kHost2 = 0xc2;

size_t idx(C c) { return static_cast<size_t>(c); }

wire::PortCounterRow row(Guid g, int port, std::initializer_list<std::pair<C, uint64_t>> vals) {
    return test::counter_row(g, port, vals);
}

LinkRow link(Guid lg, const std::string& ln, int lp, Guid rg, const std::string& rn, int rp, const std::string& label = "") {
    LinkRow r;
    r.local_guid = lg;
    r.local_name = ln;
    r.local_port = lp;
    r.remote_guid = rg;
    r.remote_name = rn;
    r.remote_port = rp;
    r.label = label;
    return r;
}

// leaf01/5 -- spine01/1 (cable C-17) and leaf01/1 -- node001/1.
LinkTable two_links() {
    LinkTable t;
    t.rows.push_back(link(kLeaf, "leaf01", 5, kSpine, "spine01", 1, "C-17"));
    t.rows.push_back(link(kLeaf, "leaf01", 1, kHost, "node001", 1));
    return t;
}

// A baseline of zeros at T0 on the four ports of two_links().
PortCounterTracker zeros() {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 5, {}), T0);
    t.on_row(kSm, row(kSpine, 1, {}), T0);
    t.on_row(kSm, row(kLeaf, 1, {}), T0);
    t.on_row(kSm, row(kHost, 1, {}), T0);
    return t;
}

}  // namespace

TEST(CounterPanel, NoCounterStateIsNoData) {
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(PortCounterTracker{}, &lt, T0);
    EXPECT_EQ(p.ports, 0u);
    EXPECT_EQ(p.links, 0u);
    EXPECT_EQ(p.links_with_errors, 0u);
    EXPECT_TRUE(p.rows.empty());
    EXPECT_EQ(p.more, 0u);
    EXPECT_EQ(p.window_ms, H);
}

TEST(CounterPanel, CleanLinksAreCountedNotShown) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 5, {{C::xmit_data, 1000}, {C::xmit_wait, 77}}), T0 + M);  // traffic, congestion
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    EXPECT_EQ(p.ports, 4u);
    EXPECT_EQ(p.links, 2u);
    EXPECT_EQ(p.links_with_errors, 0u);
    EXPECT_EQ(p.other_ports_with_errors, 0u);
    EXPECT_TRUE(p.rows.empty());
}

TEST(CounterPanel, ALinkWithCountsAtOnlyOneEndIsCounted) {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 1, {}), T0);  // the host's end has no counter state
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0);
    EXPECT_EQ(p.ports, 1u);
    EXPECT_EQ(p.links, 1u);
}

TEST(CounterPanel, OneRowPerLinkAndCounterWithBothEndsAndTheCableLabel) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 55}}), T0 + M);
    t.on_row(kSm, row(kSpine, 1, {{C::symbol_errors, 2}}), T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 1u);
    const CounterPanelRow& r = p.rows[0];
    EXPECT_EQ(r.a, "leaf01/5");
    EXPECT_EQ(r.b, "spine01/1");
    EXPECT_EQ(r.link(), "leaf01/5 -- spine01/1");
    EXPECT_EQ(r.label, "C-17");
    EXPECT_EQ(r.counter, C::symbol_errors);
    EXPECT_EQ(r.total, 57u);
    EXPECT_EQ(r.growth, 57u);
    ASSERT_TRUE(r.threshold.has_value());
    EXPECT_EQ(*r.threshold, 10u);
    EXPECT_TRUE(r.over);
    ASSERT_EQ(r.ends.size(), 2u);
    EXPECT_EQ(r.ends[0].name, "leaf01/5");
    EXPECT_EQ(r.ends[0].total, 55u);
    EXPECT_EQ(r.ends[0].growth, 55u);
    EXPECT_EQ(r.ends[1].name, "spine01/1");
    EXPECT_EQ(r.ends[1].total, 2u);
    EXPECT_EQ(r.ends[1].growth, 2u);
    EXPECT_EQ(p.links, 2u);
    EXPECT_EQ(p.links_with_errors, 1u);
}

TEST(CounterPanel, OnlyTheEndsWithACountAreListed) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kSpine, 1, {{C::rcv_errors, 4}}), T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 1u);
    ASSERT_EQ(p.rows[0].ends.size(), 1u);
    EXPECT_EQ(p.rows[0].ends[0].name, "spine01/1");
    EXPECT_EQ(p.rows[0].a, "leaf01/5");  // the link still reads local end first
    EXPECT_FALSE(p.rows[0].over);        // 4 <= 10
}

TEST(CounterPanel, ABaselineWithErrorsIsATotalWithoutGrowth) {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 5000}}), T0);  // counted before this daemon started
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].total, 5000u);
    EXPECT_EQ(p.rows[0].growth, 0u);
    EXPECT_FALSE(p.rows[0].over);
    ASSERT_EQ(p.rows[0].trend.size(), 1u);
    EXPECT_FALSE(p.rows[0].per_hour.has_value());  // one reading: no rate
}

TEST(CounterPanel, GrowthLeavesTheWindowTheTotalStays) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 55}}), T0 + M);
    const LinkTable lt = two_links();
    EXPECT_EQ(counter_panel(t, &lt, T0 + M + H - 1).rows[0].growth, 55u);
    const CounterPanel p = counter_panel(t, &lt, T0 + M + H);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].growth, 0u);
    EXPECT_EQ(p.rows[0].total, 55u);
    EXPECT_FALSE(p.rows[0].over);
}

TEST(CounterPanel, EveryErrorCounterIsARowNeverXmitWaitOrData) {
    PortCounterTracker t = zeros();
    wire::PortCounterRow r = row(kLeaf, 5, {});
    r.v.fill(3);
    t.on_row(kSm, r, T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), kErrorCounterCount);
    for (const CounterPanelRow& x : p.rows) {
        EXPECT_LT(idx(x.counter), kErrorCounterCount);
        EXPECT_EQ(x.total, 3u);
    }
}

TEST(CounterPanel, AnUnwatchedCounterShowsItsGrowthButIsNeverOver) {
    PortErrorOptions o;
    o.max_per_window[idx(C::link_downed)] = std::nullopt;  // counters.link_downed: off
    PortCounterTracker t(o);
    t.on_row(kSm, row(kLeaf, 5, {}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::link_downed, 9}}), T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].growth, 9u);
    EXPECT_FALSE(p.rows[0].threshold.has_value());
    EXPECT_FALSE(p.rows[0].over);
}

TEST(CounterPanel, LinkDownedIsOverAtTheFirstIncrease) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kHost, 1, {{C::link_downed, 1}}), T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].link(), "leaf01/1 -- node001/1");
    EXPECT_EQ(*p.rows[0].threshold, 0u);
    EXPECT_TRUE(p.rows[0].over);
}

TEST(CounterPanel, OverIsPerEndNotTheSumOfBoth) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 6}}), T0 + M);
    t.on_row(kSm, row(kSpine, 1, {{C::symbol_errors, 6}}), T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].growth, 12u);
    EXPECT_FALSE(p.rows[0].over);  // as the port_errors finding: 6 and 6, neither above 10
}

TEST(CounterPanel, WorstFirstOverThenGrowthThenTotalThenLink) {
    PortCounterTracker t;
    LinkTable lt;
    // Five host links of leaf01: ports 1..5, hosts 0xc1..0xc5.
    for (int p = 1; p <= 5; ++p) {
        lt.rows.push_back(link(kLeaf, "leaf01", p, 0xc0 + p, "node00" + std::to_string(p), 1));
        t.on_row(kSm, row(kLeaf, p, {}), T0 - 3 * H);
    }
    t.on_row(kSm, row(kLeaf, 1, {{C::symbol_errors, 3}}), T0 + M);            // growth 3
    t.on_row(kSm, row(kLeaf, 2, {{C::link_downed, 1}}), T0 + M);              // over (any LinkDowned)
    t.on_row(kSm, row(kLeaf, 3, {{C::symbol_errors, 8}}), T0 + M);            // growth 8
    t.on_row(kSm, row(kLeaf, 4, {{C::symbol_errors, 1}}), T0 - 2 * H);        // old growth, total 1 ...
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 2}}), T0 - 2 * H);        // ... and 2
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 5u);
    EXPECT_EQ(p.rows[0].a, "leaf01/2");
    EXPECT_EQ(p.rows[1].a, "leaf01/3");
    EXPECT_EQ(p.rows[2].a, "leaf01/1");
    EXPECT_EQ(p.rows[3].a, "leaf01/5");
    EXPECT_EQ(p.rows[4].a, "leaf01/4");
}

TEST(CounterPanel, EqualRowsAreOrderedByLinkThenCounter) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 5, {{C::rcv_errors, 2}, {C::symbol_errors, 2}}), T0 + M);
    t.on_row(kSm, row(kLeaf, 1, {{C::rcv_errors, 2}}), T0 + M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    ASSERT_EQ(p.rows.size(), 3u);
    EXPECT_EQ(p.rows[0].link(), "leaf01/1 -- node001/1");
    EXPECT_EQ(p.rows[1].counter, C::symbol_errors);
    EXPECT_EQ(p.rows[1].a, "leaf01/5");
    EXPECT_EQ(p.rows[2].counter, C::rcv_errors);
    EXPECT_EQ(p.rows[2].a, "leaf01/5");
}

TEST(CounterPanel, RowsAreBoundedAndTheRestCounted) {
    PortCounterTracker t;
    LinkTable lt;
    for (int p = 1; p <= 60; ++p) {
        lt.rows.push_back(link(kLeaf, "leaf01", p, 0x1000 + p, "h" + std::to_string(p), 1));
        t.on_row(kSm, row(kLeaf, p, {}), T0);
        t.on_row(kSm, row(kLeaf, p, {{C::symbol_errors, static_cast<uint64_t>(p)}}), T0 + M);
    }
    const CounterPanel p = counter_panel(t, &lt, T0 + M, 50);
    ASSERT_EQ(p.rows.size(), 50u);
    EXPECT_EQ(p.more, 10u);
    EXPECT_EQ(p.links_with_errors, 60u);
    EXPECT_EQ(p.rows.front().a, "leaf01/60");  // over 10 and the most growth
    EXPECT_EQ(p.rows.back().a, "leaf01/11");   // ports 11..60 are over 10: exactly the 50 shown
    EXPECT_EQ(p.rows[49].growth, 11u);
    const CounterPanel q = counter_panel(t, &lt, T0 + M, 55);
    EXPECT_EQ(q.rows[50].a, "leaf01/10");  // then by growth
    EXPECT_FALSE(q.rows[50].over);
    EXPECT_EQ(q.more, 5u);
    EXPECT_EQ(counter_panel(t, &lt, T0 + M, 0).rows.size(), 0u);
    EXPECT_EQ(counter_panel(t, &lt, T0 + M, 0).more, 60u);
    EXPECT_EQ(counter_panel(t, &lt, T0 + M, 1000).more, 0u);
}

TEST(CounterPanel, APortOnNoCurrentLinkIsARowOfItsOwn) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 7, {{C::link_downed, 2}}), T0 + M);  // its cable is down
    t.on_row(kSm, row(kHost2, 1, {}), T0 + M);                    // no errors: counted only
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + M, 50, [](Guid g) { return g == kLeaf ? "leaf01" : ""; });
    EXPECT_EQ(p.ports, 6u);
    EXPECT_EQ(p.other_ports_with_errors, 1u);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].a, "leaf01/7");
    EXPECT_EQ(p.rows[0].b, "");
    EXPECT_EQ(p.rows[0].link(), "leaf01/7");
    EXPECT_EQ(p.rows[0].total, 2u);
    EXPECT_EQ(p.rows[0].growth, 0u);  // its first row: a baseline
}

TEST(CounterPanel, WithoutANameAnEndIsItsGuid) {
    PortCounterTracker t;
    t.on_row(kSm, row(0x7cfe900301000001, 3, {{C::symbol_errors, 1}}), T0);
    const CounterPanel p = counter_panel(t, nullptr, T0);
    ASSERT_EQ(p.rows.size(), 1u);
    EXPECT_EQ(p.rows[0].a, "0x7cfe900301000001/3");
    LinkTable lt;
    lt.rows.push_back(link(0x7cfe900301000001, "", 3, kHost, "", 1));
    EXPECT_EQ(counter_panel(t, &lt, T0).rows[0].link(), "0x7cfe900301000001/3 -- 0x00000000000000c1/1");
}

TEST(CounterPanel, TheTrendAddsBothEndsAtEveryReadingOfEither) {
    PortCounterTracker t = zeros();
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 10}}), T0 + M);
    t.on_row(kSm, row(kSpine, 1, {{C::symbol_errors, 4}}), T0 + 2 * M);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 30}}), T0 + 3 * M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + 3 * M);
    ASSERT_EQ(p.rows.size(), 1u);
    const auto& tr = p.rows[0].trend;
    ASSERT_EQ(tr.size(), 4u);
    EXPECT_EQ(tr[0].at_ms, T0);  // the zeros before the first error (both ends' last clean reading)
    EXPECT_EQ(tr[0].total, 0u);
    EXPECT_EQ(tr[1].at_ms, T0 + M);
    EXPECT_EQ(tr[1].total, 10u);
    EXPECT_EQ(tr[2].at_ms, T0 + 2 * M);
    EXPECT_EQ(tr[2].total, 14u);
    EXPECT_EQ(tr[3].at_ms, T0 + 3 * M);
    EXPECT_EQ(tr[3].total, 34u);
    EXPECT_FALSE(p.rows[0].per_hour.has_value());  // 3 min of readings: too short for a rate (10 min)
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 40}}), T0 + 10 * M);
    const CounterPanel q = counter_panel(t, &lt, T0 + 10 * M);
    ASSERT_TRUE(q.rows[0].per_hour.has_value());
    EXPECT_DOUBLE_EQ(*q.rows[0].per_hour, 44.0 * 6);  // 44 in 10 min
}

TEST(CounterPanel, AnEndWithoutATrendAddsItsTotalFlat) {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 100}}), T0);  // trend: one sample at T0
    t.on_row(kSm, row(kSpine, 1, {}), T0);                          // clean: no trend
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 160}}), T0 + 30 * M);
    const LinkTable lt = two_links();
    const CounterPanel p = counter_panel(t, &lt, T0 + 30 * M);
    ASSERT_EQ(p.rows.size(), 1u);
    ASSERT_EQ(p.rows[0].trend.size(), 2u);
    EXPECT_EQ(p.rows[0].trend[0].total, 100u);
    EXPECT_EQ(p.rows[0].trend[1].total, 160u);
    EXPECT_DOUBLE_EQ(*p.rows[0].per_hour, 120.0);
}

// The page is built at request time on the io thread: a 2k-node fabric's worth of links (3840, both
// ends counted) with every error counter growing at every port is still 50 rows, quickly.
TEST(CounterPanel, ErrorsEverywhereOnA2kNodeFabricAreFiftyRows) {
    PortCounterTracker t;
    LinkTable lt;
    for (int i = 0; i < 3840; ++i) {
        const Guid a = 0x1000 + static_cast<Guid>(i / 32), b = 0x100000 + static_cast<Guid>(i);
        const int pa = 1 + i % 32;
        lt.rows.push_back(link(a, "leaf" + std::to_string(i / 32), pa, b, "node" + std::to_string(i), 1));
        t.on_row(kSm, row(a, pa, {}), T0);
        t.on_row(kSm, row(b, 1, {}), T0);
        wire::PortCounterRow ra = row(a, pa, {}), rb = row(b, 1, {});
        for (size_t c = 0; c < kErrorCounterCount; ++c) ra.v[c] = rb.v[c] = 1 + static_cast<uint64_t>(i % 97);
        t.on_row(kSm, ra, T0 + M);
        t.on_row(kSm, rb, T0 + M);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const CounterPanel p = counter_panel(t, &lt, T0 + M);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%zu ports, %zu links, all with errors: counter_panel %.1f ms\n", p.ports, p.links, ms);
    EXPECT_EQ(p.ports, 7680u);
    EXPECT_EQ(p.links_with_errors, 3840u);
    ASSERT_EQ(p.rows.size(), 50u);
    EXPECT_EQ(p.more, 3840u * kErrorCounterCount - 50);
    EXPECT_EQ(p.rows[0].total, 2u * 97);  // i % 97 == 96 at both ends: the largest
    EXPECT_LT(ms, 500.0);                 // generous for a loaded 2-core machine
}
