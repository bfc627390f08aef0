// PortCounterTracker: perfmgr sums fed with explicit times -> exact totals, baselines, resets and
// growth over the thresholds within the window.
#include <gtest/gtest.h>

#include "ibf/counter_rows.h"
#include "ibf/daemon_config.h"
#include "ibf/port_counters.h"

using namespace ibf;
using C = wire::PortCounter;

namespace {

constexpr int64_t T0 = 1764468000000;  // 2025-11-30T02:00:00Z
constexpr int64_t S = 1000, H = 3600 * S;
constexpr Guid kSm = 0x100, kOtherSm = 0x200, kLeaf = 0x7cfe900301000001;

size_t idx(C c) { return static_cast<size_t>(c); }

wire::PortCounterRow row(Guid g, int port, std::initializer_list<std::pair<C, uint64_t>> vals) {
    return test::counter_row(g, port, vals);
}

PortErrorOptions symbol_errors_only(uint64_t max, int64_t window_ms) {
    PortErrorOptions o;
    o.window_ms = window_ms;
    o.max_per_window.fill(std::nullopt);
    o.max_per_window[idx(C::symbol_errors)] = max;
    return o;
}

}  // namespace

TEST(PortCounters, TheFirstRowIsABaselineNotGrowth) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 5000}, {C::xmit_data, 77}}), T0);
    EXPECT_TRUE(t.over_threshold(T0).empty());
    const PortCounterState* s = t.find(kLeaf, 5);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->total[idx(C::symbol_errors)], 5000u);  // /metrics starts at the counter's value
    EXPECT_EQ(s->total[idx(C::xmit_data)], 77u);
    EXPECT_EQ(t.baselines_total(), 1u);
    EXPECT_EQ(t.find(kLeaf, 6), nullptr);
}

TEST(PortCounters, GrowthAboveTheThresholdWithinTheWindowIsReportedUntilItLeavesTheWindow) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 100}}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 106}}), T0 + 10 * S);   // +6
    EXPECT_TRUE(t.over_threshold(T0 + 10 * S).empty());
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 110}}), T0 + 20 * S);   // +4: 10 in the window, not above
    EXPECT_TRUE(t.over_threshold(T0 + 20 * S).empty());
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 111}}), T0 + 30 * S);   // +1: 11 > 10
    auto g = t.over_threshold(T0 + 30 * S);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].guid, kLeaf);
    EXPECT_EQ(g[0].port, 5);
    EXPECT_EQ(g[0].counter, C::symbol_errors);
    EXPECT_EQ(g[0].increase, 11u);
    EXPECT_EQ(g[0].threshold, 10u);
    EXPECT_EQ(g[0].first_ms, T0 + 10 * S);
    EXPECT_EQ(g[0].last_ms, T0 + 30 * S);
    EXPECT_EQ(t.find(kLeaf, 5)->total[idx(C::symbol_errors)], 111u);
    // The +6 leaves the window one hour after it was seen: 5 left, below the threshold.
    EXPECT_EQ(t.over_threshold(T0 + 10 * S + H - 1).size(), 1u);
    EXPECT_TRUE(t.over_threshold(T0 + 10 * S + H).empty());
}

TEST(PortCounters, ACounterThatGoesDownIsAResetAndANewBaselineNeverANegativeDelta) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 100}, {C::link_downed, 3}}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 105}, {C::link_downed, 3}}), T0 + S);  // +5
    // OpenSM restarted: its plugin sums from zero again (the hardware counter was cleared).
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 2}, {C::link_downed, 0}}), T0 + 2 * S);
    EXPECT_EQ(t.resets_total(), 2u);
    EXPECT_EQ(t.find(kLeaf, 5)->total[idx(C::symbol_errors)], 105u);  // unchanged by the reset
    EXPECT_TRUE(t.over_threshold(T0 + 2 * S).empty());
    // Growth from the new baseline counts again: +8, 13 in the window with the +5.
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 10}}), T0 + 3 * S);
    EXPECT_EQ(t.find(kLeaf, 5)->total[idx(C::symbol_errors)], 113u);
    auto g = t.over_threshold(T0 + 3 * S);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0].increase, 13u);
}

TEST(PortCounters, WrapOfThe64BitSumIsAResetToo) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, UINT64_MAX - 1}}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 3}}), T0 + S);
    EXPECT_EQ(t.resets_total(), 1u);
    EXPECT_TRUE(t.over_threshold(T0 + S).empty());
    EXPECT_EQ(t.find(kLeaf, 5)->total[idx(C::symbol_errors)], UINT64_MAX - 1);
}

TEST(PortCounters, ARowFromAnotherSmIsABaselineAndKeepsTheTotal) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 100}}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 104}}), T0 + S);
    // Failover: the new master's plugin summed from its own start (200 > 104 is not growth).
    t.on_row(kOtherSm, row(kLeaf, 5, {{C::symbol_errors, 200}}), T0 + 2 * S);
    EXPECT_TRUE(t.over_threshold(T0 + 2 * S).empty());
    EXPECT_EQ(t.find(kLeaf, 5)->total[idx(C::symbol_errors)], 104u);
    EXPECT_EQ(t.baselines_total(), 2u);
    EXPECT_EQ(t.resets_total(), 0u);
    t.on_row(kOtherSm, row(kLeaf, 5, {{C::symbol_errors, 220}}), T0 + 3 * S);
    EXPECT_EQ(t.find(kLeaf, 5)->total[idx(C::symbol_errors)], 124u);
    ASSERT_EQ(t.over_threshold(T0 + 3 * S).size(), 1u);
    EXPECT_EQ(t.over_threshold(T0 + 3 * S)[0].increase, 24u);  // +4 and +20
}

TEST(PortCounters, DefaultsWatchAnyLinkDownedButNotXmitWaitOrData) {
    PortCounterTracker t;  // defaults
    EXPECT_EQ(t.options().window_ms, H);
    t.on_row(kSm, row(kLeaf, 5, {}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::link_downed, 1}, {C::xmit_wait, 1'000'000}, {C::xmit_data, 1u << 30},
                                 {C::symbol_errors, 10}, {C::rcv_remote_phys_errors, 101}}),
             T0 + S);
    auto g = t.over_threshold(T0 + S);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0].counter, C::link_downed);  // sorted by counter
    EXPECT_EQ(g[0].threshold, 0u);
    EXPECT_EQ(g[1].counter, C::rcv_remote_phys_errors);
    EXPECT_EQ(g[1].increase, 101u);
    EXPECT_EQ(t.find(kLeaf, 5)->recent.size(), 3u);  // growth of PortXmitWait and the data counters is not kept
}

TEST(PortCounters, DaemonConfigSetsTheWindowAndPerCounterThresholds) {
    DaemonConfig c = parse_daemon_config("counters:\n  window_s: 600\n  symbol_errors: 3\n  link_downed: off\n"
                                         "  xmit_wait: 1000000\n",
                                         "d.yaml");
    EXPECT_EQ(c.port_errors.window_ms, 600 * S);
    EXPECT_EQ(c.port_errors.max_per_window[idx(C::symbol_errors)], 3u);
    EXPECT_FALSE(c.port_errors.max_per_window[idx(C::link_downed)].has_value());
    EXPECT_EQ(c.port_errors.max_per_window[idx(C::xmit_wait)], 1000000u);
    EXPECT_EQ(c.port_errors.max_per_window[idx(C::rcv_errors)], 10u);  // untouched: the default
    try {
        parse_daemon_config("counters:\n  symbol_error: 3\n", "d.yaml");
        FAIL() << "accepted an unknown counter";
    } catch (const std::exception& e) {
        EXPECT_EQ(std::string(e.what()),
                  "d.yaml:2:3: unknown key 'counters.symbol_error'; did you mean 'symbol_errors'? (expected one of: "
                  "window_s, symbol_errors, link_error_recovery, link_downed, rcv_errors, rcv_remote_phys_errors, "
                  "rcv_switch_relay_errors, xmit_discards, xmit_constraint_errors, rcv_constraint_errors, "
                  "link_integrity_errors, excessive_buffer_overruns, vl15_dropped, xmit_wait, xmit_data, rcv_data, "
                  "xmit_pkts, rcv_pkts)");
    }
}

// --- the trend (last kTrendSamples readings of the error totals) ---

TEST(PortCounters, ACleanPortKeepsNoTrend) {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 5, {{C::xmit_data, 10}}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::xmit_data, 20}, {C::xmit_wait, 5}}), T0 + S);
    EXPECT_TRUE(t.find(kLeaf, 5)->trend.empty());
}

TEST(PortCounters, TheTrendStartsWithZerosAtTheReadingBeforeTheFirstError) {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 5, {}), T0);
    t.on_row(kSm, row(kLeaf, 5, {}), T0 + S);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 4}, {C::vl15_dropped, 2}}), T0 + 2 * S);
    const auto& tr = t.find(kLeaf, 5)->trend;
    ASSERT_EQ(tr.size(), 2u);
    EXPECT_EQ(tr[0].at_ms, T0 + S);
    EXPECT_EQ(tr[0].total[idx(C::symbol_errors)], 0u);
    EXPECT_EQ(tr[1].at_ms, T0 + 2 * S);
    EXPECT_EQ(tr[1].total[idx(C::symbol_errors)], 4u);
    EXPECT_EQ(tr[1].total[idx(C::vl15_dropped)], 2u);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 4}, {C::vl15_dropped, 2}, {C::xmit_data, 9}}), T0 + 3 * S);
    ASSERT_EQ(tr.size(), 3u);  // every reading once there were errors, even without growth
    EXPECT_EQ(tr[2].total[idx(C::symbol_errors)], 4u);
}

TEST(PortCounters, AFirstRowWithErrorsIsOneSample) {
    PortCounterTracker t;
    t.on_row(kSm, row(kLeaf, 5, {{C::link_downed, 3}}), T0);
    const auto& tr = t.find(kLeaf, 5)->trend;
    ASSERT_EQ(tr.size(), 1u);
    EXPECT_EQ(tr[0].at_ms, T0);
    EXPECT_EQ(tr[0].total[idx(C::link_downed)], 3u);
}

TEST(PortCounters, TheTrendKeepsTheLastSixteenReadings) {
    PortCounterTracker t;
    for (uint64_t i = 0; i < 40; ++i)
        t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, i}}), T0 + static_cast<int64_t>(i) * S);
    const auto& tr = t.find(kLeaf, 5)->trend;
    ASSERT_EQ(tr.size(), kTrendSamples);
    EXPECT_EQ(tr.front().at_ms, T0 + 24 * S);
    EXPECT_EQ(tr.front().total[idx(C::symbol_errors)], 24u);
    EXPECT_EQ(tr.back().at_ms, T0 + 39 * S);
    EXPECT_EQ(tr.back().total[idx(C::symbol_errors)], 39u);
}

TEST(PortCounters, GrowthOfAnUnwatchedErrorCounterIsKeptButNeverOverTheThreshold) {
    PortCounterTracker t(symbol_errors_only(10, H));  // link_downed not watched
    t.on_row(kSm, row(kLeaf, 5, {}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::link_downed, 7}}), T0 + S);
    EXPECT_TRUE(t.over_threshold(T0 + S).empty());
    ASSERT_EQ(t.find(kLeaf, 5)->recent.size(), 1u);
    EXPECT_EQ(t.find(kLeaf, 5)->recent[0].counter, idx(C::link_downed));
    EXPECT_EQ(t.find(kLeaf, 5)->recent[0].amount, 7u);
}

// --- ports that left the fabric ---

namespace {
auto only(Guid g) {
    return [g](Guid x, int) { return x == g; };
}
auto none() {
    return [](Guid, int) { return false; };
}
constexpr Guid kHost = 0x0c42a10300000010;
}  // namespace

TEST(PortCounters, APortOutOfTheFabricIsForgottenAfterTheWindowNotBefore) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 100}}), T0);
    t.on_row(kSm, row(kLeaf, 5, {{C::symbol_errors, 1}}), T0);
    const uint64_t v = t.version();
    t.mark_present(only(kLeaf), T0 + S);  // the host left with this sweep
    EXPECT_EQ(t.find(kHost, 1)->absent_since_ms, T0 + S);
    EXPECT_EQ(t.find(kLeaf, 5)->absent_since_ms, 0);
    t.mark_present(only(kLeaf), T0 + 2 * S);  // still out: the absence keeps its start
    EXPECT_EQ(t.find(kHost, 1)->absent_since_ms, T0 + S);
    EXPECT_EQ(t.forget_absent(T0 + S + H - 1), 0u);
    EXPECT_NE(t.find(kHost, 1), nullptr);
    EXPECT_EQ(t.version(), v);
    EXPECT_EQ(t.forget_absent(T0 + S + H), 1u);
    EXPECT_EQ(t.find(kHost, 1), nullptr);
    EXPECT_NE(t.find(kLeaf, 5), nullptr);  // in the fabric: never forgotten
    EXPECT_EQ(t.ports().size(), 1u);
    EXPECT_EQ(t.forgotten_total(), 1u);
    EXPECT_EQ(t.version(), v + 1);  // /metrics renders its counter families again
    EXPECT_EQ(t.forget_absent(T0 + 100 * H), 0u);
}

TEST(PortCounters, APortBackWithinTheWindowKeepsItsBaselineTotalAndGrowth) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 100}}), T0);
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 108}}), T0 + S);  // +8
    t.mark_present(none(), T0 + 2 * S);                                 // the host reboots
    t.mark_present(only(kHost), T0 + 50 * 60 * S);                     // back 50 min later
    EXPECT_EQ(t.find(kHost, 1)->absent_since_ms, 0);
    EXPECT_EQ(t.forget_absent(T0 + 5 * H), 0u);
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 111}}), T0 + 50 * 60 * S);  // +3: 11 > 10 within 1 h
    EXPECT_EQ(t.find(kHost, 1)->total[idx(C::symbol_errors)], 111u);
    EXPECT_EQ(t.baselines_total(), 1u);
    ASSERT_EQ(t.over_threshold(T0 + 50 * 60 * S).size(), 1u);
    EXPECT_EQ(t.over_threshold(T0 + 50 * 60 * S)[0].increase, 11u);
}

TEST(PortCounters, EachFlapStartsItsAbsenceAfresh) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 1}}), T0);
    for (int i = 0; i < 10; ++i) {  // out 50 min, in 1 min, ten times
        const int64_t at = T0 + i * 51 * 60 * S;
        t.mark_present(none(), at);
        EXPECT_EQ(t.forget_absent(at + 50 * 60 * S), 0u) << i;
        t.mark_present(only(kHost), at + 50 * 60 * S);
    }
    ASSERT_NE(t.find(kHost, 1), nullptr);
    EXPECT_EQ(t.find(kHost, 1)->total[idx(C::symbol_errors)], 1u);
}

TEST(PortCounters, ARowWhileOutOfTheFabricRestartsTheGrace) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 1}}), T0);
    t.mark_present(none(), T0 + S);
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 2}}), T0 + 30 * 60 * S);  // the perfmgr still reads it
    EXPECT_EQ(t.forget_absent(T0 + S + H), 0u);
    EXPECT_EQ(t.forget_absent(T0 + 30 * 60 * S + H - 1), 0u);
    EXPECT_EQ(t.forget_absent(T0 + 30 * 60 * S + H), 1u);
}

TEST(PortCounters, AForgottenPortThatComesBackStartsFromANewBaseline) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 100}}), T0);
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 150}}), T0 + S);
    t.mark_present(none(), T0 + 2 * S);
    ASSERT_EQ(t.forget_absent(T0 + 2 * S + H), 1u);
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 170}}), T0 + 3 * H);
    const PortCounterState* s = t.find(kHost, 1);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->total[idx(C::symbol_errors)], 170u);  // the plugin's sum, as for any first row
    EXPECT_TRUE(s->recent.empty());
    EXPECT_EQ(s->absent_since_ms, 0);
    EXPECT_EQ(t.baselines_total(), 2u);
    EXPECT_TRUE(t.over_threshold(T0 + 3 * H).empty());
}

TEST(PortCounters, WithoutMarkPresentNothingIsForgotten) {
    PortCounterTracker t(symbol_errors_only(10, H));
    t.on_row(kSm, row(kHost, 1, {{C::symbol_errors, 1}}), T0);
    EXPECT_EQ(t.forget_absent(T0 + 1000 * H), 0u);  // no snapshot said the port is gone
}

TEST(PortCounters, TheWindowIsTheGrace) {
    PortCounterTracker t(symbol_errors_only(10, 10 * 60 * S));
    t.on_row(kSm, row(kHost, 1, {}), T0);
    t.mark_present(none(), T0);
    EXPECT_EQ(t.forget_absent(T0 + 10 * 60 * S - 1), 0u);
    EXPECT_EQ(t.forget_absent(T0 + 10 * 60 * S), 1u);
}
