// PortCounterTracker: perfmgr sums fed with explicit times -> exact totals, baselines, resets and
// growth over the thresholds within the window.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
    EXPECT_EQ(t.port_count(), 1u);
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

// Copy-on-write in parts (port_counters.h, docs/threading.md): a copy held by a reader (a /metrics
// render's) stays as it was while the original takes rows, marks and drops; the original ends as
// if no copy had been made; and only the shards written to are copied.
namespace {

// Everything a reader can see of a tracker at `now_ms`, as text (ports sorted by key).
std::string view(const PortCounterTracker& t, int64_t now_ms, uint64_t since) {
    std::map<PortCounterTracker::PortKey, std::string> ports;
    t.for_each_port([&](const PortCounterTracker::PortKey& k, const PortCounterState& s) {
        std::ostringstream o;
        o << s.sm << " u" << s.updated_ms << " a" << s.absent_since_ms << " last";
        for (uint64_t v : s.last) o << ' ' << v;
        o << " total";
        for (uint64_t v : s.total) o << ' ' << v;
        o << " recent";
        for (const auto& g : s.recent) o << ' ' << g.at_ms << ':' << int(g.counter) << ':' << g.amount;
        o << " trend";
        for (const auto& x : s.trend) o << ' ' << x.at_ms << ':' << x.total[0];
        EXPECT_EQ(t.find(k.first, k.second), &s);
        ports[k] = o.str();
    });
    std::ostringstream o;
    o << "ports " << t.port_count() << '/' << ports.size() << " version " << t.version() << " rows " << t.rows_total()
      << " resets " << t.resets_total() << " baselines " << t.baselines_total() << " forgotten " << t.forgotten_total()
      << '\n';
    for (const auto& [k, s] : ports) o << k.first << '/' << k.second << ": " << s << '\n';
    int64_t changes_at = 0;
    for (const PortErrorGrowth& g : t.over_threshold(now_ms, &changes_at))
        o << "over " << g.guid << '/' << g.port << ' ' << int(g.counter) << " +" << g.increase << '\n';
    o << "changes_at " << changes_at << '\n';
    std::vector<PortCounterTracker::PortKey> changed;
    o << "changed_since " << t.changed_since(since, changed) << ':';
    for (const auto& k : changed) o << ' ' << k.first << '/' << k.second;
    return o.str();
}

constexpr Guid kNode0 = 0x7cfe900301100000;

// 3000 nodes with 2 ports each; every 7th port's symbol errors grow with each row.
void feed(PortCounterTracker& t, int round, int64_t now_ms, size_t first_node, size_t nodes) {
    for (size_t n = first_node; n < first_node + nodes; ++n)
        for (int p = 1; p <= 2; ++p) {
            const uint64_t grows = (n * 2 + static_cast<size_t>(p)) % 7 == 0 ? 1 : 0;
            t.on_row(kSm, row(kNode0 + n, p, {{C::symbol_errors, grows * static_cast<uint64_t>(round)},
                                             {C::xmit_data, 1000 * static_cast<uint64_t>(round)}}),
                     now_ms);
        }
}

PortCounterTracker fabric_of_3000_nodes() {
    PortCounterTracker t(symbol_errors_only(0, H));
    for (int round = 0; round < 3; ++round) feed(t, round, T0 + round * S, 0, 3000);
    // Every 10th node out of the fabric (its absence starts).
    t.mark_present([](Guid g, int) { return (g - kNode0) % 10 != 0; }, T0 + 3 * S);
    return t;
}

}  // namespace

TEST(PortCounters, ABatchWhileAReaderHoldsTheStateLeavesTheReadersViewAndCopiesOnlyTheShardsWritten) {
    PortCounterTracker t = fabric_of_3000_nodes(), alone = fabric_of_3000_nodes();
    const int64_t now = T0 + 4 * S;
    const uint64_t since = t.version() - 10;
    ASSERT_EQ(view(t, now, since), view(alone, now, since));
    size_t erring = 0;  // every 7th port's symbol errors grew (threshold 0): found in whichever shard
    for (size_t n = 0; n < 3000; ++n)
        for (size_t p = 1; p <= 2; ++p) erring += (n * 2 + p) % 7 == 0 ? 1 : 0;
    ASSERT_EQ(t.over_threshold(now).size(), erring);

    const PortCounterTracker reader = t;  // a render's (shares every shard)
    const std::string before = view(reader, now, since);
    for (size_t i = 0; i < PortCounterTracker::kShards; ++i) ASSERT_EQ(reader.shard_address(i), t.shard_address(i));

    // One batch of 128 rows (64 nodes, one of them new), as ControllerState::on_port_counters applies it.
    std::set<size_t> written;
    for (PortCounterTracker* x : {&t, &alone}) {
        feed(*x, 3, now, 2960, 64);
        x->forget_absent(now);
    }
    for (size_t n = 2960; n < 2960 + 64; ++n) written.insert(PortCounterTracker::shard_of(kNode0 + n));

    EXPECT_EQ(view(reader, now, since), before);  // the reader's view: unchanged
    EXPECT_EQ(view(t, now, since), view(alone, now, since));
    EXPECT_NE(view(t, now, since), before);
    size_t copied = 0;
    for (size_t i = 0; i < PortCounterTracker::kShards; ++i) {
        if (written.count(i)) {
            EXPECT_NE(reader.shard_address(i), t.shard_address(i)) << "shard " << i;
            ++copied;
        } else {
            EXPECT_EQ(reader.shard_address(i), t.shard_address(i)) << "shard " << i;  // still shared
        }
    }
    EXPECT_GE(copied, 1u);
    EXPECT_LE(copied, 64u);

    // Without a reader a write copies nothing: the shards stay where they are.
    std::vector<const void*> at(PortCounterTracker::kShards);
    for (size_t i = 0; i < at.size(); ++i) at[i] = t.shard_address(i);
    feed(t, 4, now + S, 2960, 64);
    for (size_t i = 0; i < at.size(); ++i) ASSERT_EQ(at[i], t.shard_address(i)) << "shard " << i;
}

TEST(PortCounters, DropsAndALongLogWhileAReaderHoldsTheStateLeaveItsView) {
    PortCounterTracker t = fabric_of_3000_nodes(), alone = fabric_of_3000_nodes();
    const uint64_t since = t.version() - 100;
    const PortCounterTracker reader = t;
    const std::string before = view(reader, T0 + 4 * S, since);

    // The nodes out of the fabric are dropped once the window passed (a copy of their shards
    // only), and enough rows follow that the change log is trimmed several times.
    const int64_t later = T0 + 3 * S + H;
    for (PortCounterTracker* x : {&t, &alone}) {
        EXPECT_EQ(x->forget_absent(later), 600u);
        for (int round = 4; round < 12; ++round) feed(*x, round, later + round * S, 0, 3000);
    }
    EXPECT_EQ(view(reader, T0 + 4 * S, since), before);
    const uint64_t recent = t.version() - 5000;
    EXPECT_EQ(view(t, later + 12 * S, recent), view(alone, later + 12 * S, recent));
    std::vector<PortCounterTracker::PortKey> out;
    EXPECT_FALSE(t.changed_since(since, out)) << "the log no longer reaches back that far";
    EXPECT_TRUE(reader.changed_since(since, out));
    EXPECT_EQ(out.size(), 100u);
}

TEST(PortCounters, MarkingPresenceWhileAReaderHoldsTheStateCopiesOnlyTheShardsWhosePortsChange) {
    PortCounterTracker t = fabric_of_3000_nodes();
    const PortCounterTracker reader = t;
    const std::string before = view(reader, T0 + 4 * S, 0);
    // The same presence again: nothing changes, nothing is copied.
    t.mark_present([](Guid g, int) { return (g - kNode0) % 10 != 0; }, T0 + 4 * S);
    for (size_t i = 0; i < PortCounterTracker::kShards; ++i) ASSERT_EQ(reader.shard_address(i), t.shard_address(i));
    // One node comes back.
    t.mark_present([](Guid g, int) { return (g - kNode0) % 10 != 0 || g == kNode0 + 20; }, T0 + 5 * S);
    for (size_t i = 0; i < PortCounterTracker::kShards; ++i)
        EXPECT_EQ(reader.shard_address(i) == t.shard_address(i), i != PortCounterTracker::shard_of(kNode0 + 20)) << i;
    EXPECT_EQ(t.find(kNode0 + 20, 1)->absent_since_ms, 0);
    EXPECT_EQ(reader.find(kNode0 + 20, 1)->absent_since_ms, T0 + 3 * S);
    EXPECT_EQ(view(reader, T0 + 4 * S, 0), before);
}
