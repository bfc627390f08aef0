// Routing validation from LFTs (route_check.h): each fault kind on small fabrics, the counts
// against a brute-force trace of every pair, and lft_paths on the shared walk.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>

#include "ibf/analysis.h"
#include "ibf/lft.h"
#include "ibf/route_check.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

// Brute force: every (source CA port, destination LID) pair walked hop by hop, no memo (every
// LID of a port with LMC > 0).
struct Brute {
    long pairs = 0, routed = 0, broken = 0;
    std::map<std::pair<NodeId, int>, long> crossings;  // (switch, egress port) -> routed pairs
};
Brute brute(const Fabric& f, const std::vector<SwitchLft>& lfts) {
    std::map<NodeId, const SwitchLft*> table;
    for (const SwitchLft& t : lfts) table[*f.find(t.switch_guid)] = &t;
    Brute b;
    for (NodeId s = 0; s < f.size(); ++s) {
        const Port* sp = f.node(s).type == NodeType::CA ? f.node(s).port(1) : nullptr;
        if (!sp || !sp->linked()) continue;
        for (NodeId d = 0; d < f.size(); ++d) {
            const Port* dp = f.node(d).type == NodeType::CA ? f.node(d).port(1) : nullptr;
            if (d == s || !dp || !dp->linked()) continue;
            for (uint32_t lid = dp->lid; lid < dp->lid + (1u << dp->lmc); ++lid) {
                ++b.pairs;
                std::vector<std::pair<NodeId, int>> hops;
                NodeId cur = sp->peer;
                bool ok = false;
                for (int n = 0; n < 64 && table.count(cur); ++n) {
                    const int p = lid < table[cur]->port_by_lid().size() ? table[cur]->port_by_lid()[lid] : 255;
                    const Port* q = f.node(cur).port(p);
                    if (p == 255 || p == 0 || !q || !q->linked()) break;
                    hops.push_back({cur, p});
                    if (q->peer == d) { ok = q->peer_port == 1; break; }
                    if (f.node(q->peer).type != NodeType::Switch) break;
                    cur = q->peer;
                }
                if (!ok) { ++b.broken; continue; }
                ++b.routed;
                for (auto& h : hops) ++b.crossings[h];
            }
        }
    }
    return b;
}

// The validation's counts and per-port pairs against the brute force (tables with no switch
// missing: every broken pair is unreachable or looping).
void expect_brute(const Fabric& f, const std::vector<SwitchLft>& lfts, const RouteCheck& rc) {
    const RouteGraph g(f, lfts);
    const Brute b = brute(f, lfts);
    EXPECT_EQ(rc.pairs, b.pairs);
    EXPECT_EQ(rc.routed, b.routed);
    EXPECT_EQ(rc.unreachable + rc.looping, b.broken);
    long crossed = 0;
    for (auto& [hop, n] : b.crossings) {
        EXPECT_EQ(rc.port_pairs[g.channel(g.sw_of(hop.first), hop.second)], n) << f.node(hop.first).name << "/" << hop.second;
        crossed += n;
    }
    long counted = 0;
    for (long n : rc.port_pairs) counted += n;
    EXPECT_EQ(counted, crossed);  // and no pairs on ports the brute force never crossed
}

std::vector<const Finding*> of_kind(const RouteCheck& rc, FindingKind k) {
    std::vector<const Finding*> out;
    for (const Finding& f : rc.findings)
        if (f.kind == k) out.push_back(&f);
    return out;
}

SwitchLft& table_of(std::vector<SwitchLft>& lfts, const Fabric& f, NodeId sw) {
    for (SwitchLft& t : lfts)
        if (t.switch_guid == f.node(sw).guid) return t;
    throw std::runtime_error("no table");
}

// The table's entry for `lid` set to `port` (new bytes: the table's hash becomes 0).
void set_entry(SwitchLft& t, uint32_t lid, uint8_t port) {
    t.edit([&](std::vector<uint8_t>& b) { b[lid] = port; });
}

uint16_t host_lid(const Fabric& f, const std::string& name) { return f.node(synth_node(f, name)).port(1)->lid; }

TEST(RouteCheck, MinHopTablesOnAFatTreeAreCleanAndEveryPairArrives) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    const auto lfts = synth_lfts(f);
    const RouteGraph g(f, lfts);
    const RouteCheck rc = check_routes(g, analyze(f));
    const long hosts = static_cast<long>(f.count(NodeType::CA));
    EXPECT_EQ(rc.pairs, hosts * (hosts - 1));
    EXPECT_EQ(rc.routed, rc.pairs);
    EXPECT_EQ(rc.unreachable + rc.looping + rc.unverified + rc.non_minimal, 0);
    EXPECT_EQ(rc.max_hops, 4);  // CA - leaf - spine - leaf - CA
    EXPECT_EQ(rc.credit_loops, 0);
    EXPECT_TRUE(rc.findings.empty()) << rc.findings[0].message;
    // Per-port pair counts equal the brute-force trace.
    const Brute b = brute(f, lfts);
    EXPECT_EQ(b.routed, rc.routed);
    for (auto& [hop, n] : b.crossings) EXPECT_EQ(rc.port_pairs[g.channel(g.sw_of(hop.first), hop.second)], n);
}

TEST(RouteCheck, AMissingEntryIsOneBlackHoleFindingAtThatSwitchWithItsPairCount) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);
    const uint16_t lid = host_lid(f, "node00001");
    set_entry(table_of(lfts, f, synth_node(f, "spine0002")), lid, kLftNoPath);
    const RouteCheck rc = check_routes(RouteGraph(f, lfts), analyze(f));
    const Brute b = brute(f, lfts);
    ASSERT_GT(b.broken, 0);
    EXPECT_EQ(rc.unreachable, b.broken);
    EXPECT_EQ(rc.routed, b.routed);
    auto u = of_kind(rc, FindingKind::route_unreachable);
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0]->a.name, "spine0002");
    EXPECT_EQ(u[0]->b.name, "node00001");
    EXPECT_EQ(u[0]->actual, "no LFT entry (255)");
    EXPECT_NE(u[0]->message.find("1 CA LID, " + std::to_string(b.broken) + " CA->CA pairs"), std::string::npos) << u[0]->message;
    EXPECT_EQ(u[0]->severity, Severity::error);
}

TEST(RouteCheck, AnEntryBackUpIsAForwardingLoopNamedByItsSwitches) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);
    const Analysis a = analyze(f);
    const NodeId leaf = synth_node(f, "leaf0001");
    const uint16_t lid = host_lid(f, "node00001");  // on leaf0001
    const int up = a.info(leaf)->up_bundles[0].ports[0];
    set_entry(table_of(lfts, f, leaf), lid, static_cast<uint8_t>(up));
    const RouteCheck rc = check_routes(RouteGraph(f, lfts), a);
    const Brute b = brute(f, lfts);
    EXPECT_EQ(rc.looping, b.broken);
    EXPECT_EQ(rc.looping, f.count(NodeType::CA) - 1);  // nobody reaches node00001
    auto l = of_kind(rc, FindingKind::route_loop);
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0]->actual, "loop leaf0001 -> " + a.names[f.node(leaf).ports[up].peer] + " -> leaf0001");
}

// Three switches in a ring, one host each: s1/2 -> s2/3, s2/2 -> s3/3, s3/2 -> s1/3.
Fabric ring() {
    Fabric f;
    NodeId s[3], h[3];
    for (int i = 0; i < 3; ++i) {
        s[i] = f.add_node({.type = NodeType::Switch, .guid = 0x100u + i, .description = "MF0;ring0" + std::to_string(i + 1) + ":X/U1"}, 3);
        h[i] = f.add_node({.type = NodeType::CA, .guid = 0x200u + i, .description = "host0" + std::to_string(i + 1) + " mlx5_0"}, 1);
        f.node(s[i]).ports[0].lid = static_cast<uint16_t>(1 + i);
        f.node(h[i]).ports[1].lid = static_cast<uint16_t>(10 + i);
        f.connect(s[i], 1, h[i], 1);
    }
    for (int i = 0; i < 3; ++i) f.connect(s[i], 2, s[(i + 1) % 3], 3);
    f.finalize();
    return f;
}

// Routes on the ring: local host down port 1, others clockwise (port 2) or the shortest way.
std::vector<SwitchLft> ring_tables(const Fabric& f, bool clockwise) {
    std::vector<SwitchLft> out;
    for (int i = 0; i < 3; ++i) {
        std::vector<uint8_t> t(16, kLftNoPath);
        for (int j = 0; j < 3; ++j) t[10 + j] = i == j ? 1 : clockwise || (i + 1) % 3 == j ? 2 : 3;
        out.emplace_back(0x100u + i, std::move(t));
    }
    (void)f;
    return out;
}

TEST(RouteCheck, ClockwiseRoutesOnARingAreACreditLoopAndADetour) {
    const Fabric f = ring();
    const RouteCheck rc = check_routes(RouteGraph(f, ring_tables(f, true)), analyze(f));
    EXPECT_EQ(rc.routed, 6);
    EXPECT_EQ(rc.credit_loops, 1);
    auto c = of_kind(rc, FindingKind::credit_loop);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0]->actual, "a cycle of 3 channels (3 channels depend on each other)");
    EXPECT_NE(c[0]->message.find("ring01/2 -> ring02/2 -> ring03/2 -> ring01/2"), std::string::npos) << c[0]->message;
    EXPECT_NE(c[0]->message.find("VL0 only: SL2VL tables are not exported"), std::string::npos);
    // Each switch sends one host the long way round (2 switch hops where 1 would do).
    EXPECT_EQ(rc.non_minimal, 3);
    auto d = of_kind(rc, FindingKind::route_non_minimal);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0]->expected, "3 cables");
    EXPECT_EQ(d[0]->actual, "4 cables");
}

TEST(RouteCheck, ShortestRoutesOnTheSameRingHaveNoCreditLoop) {
    const Fabric f = ring();
    const RouteCheck rc = check_routes(RouteGraph(f, ring_tables(f, false)), analyze(f));
    EXPECT_EQ(rc.routed, 6);
    EXPECT_EQ(rc.credit_loops, 0);
    EXPECT_EQ(rc.non_minimal, 0);
    EXPECT_TRUE(rc.findings.empty());
}

TEST(RouteCheck, PairsOverADegradedUplinkAreCountedOnceForTheLink) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    const NodeId leaf = synth_node(f, "leaf0002");
    set_link_rate(f, leaf, 5, {Width::X1, Speed::HDR});  // leaf0002/5 -- spine0001
    const auto lfts = synth_lfts(f);
    const Analysis a = analyze(f);
    RouteCheckOptions opt;
    opt.degraded = degraded_links(f, a.findings);
    ASSERT_EQ(opt.degraded.size(), 1u);
    const RouteGraph g(f, lfts);
    const RouteCheck rc = check_routes(g, a, opt);
    auto v = of_kind(rc, FindingKind::route_via_degraded_link);
    ASSERT_EQ(v.size(), 1u);
    const Brute b = brute(f, lfts);
    const Port& p = f.node(leaf).ports[5];
    const long want = b.crossings.at({leaf, 5}) + b.crossings.at({p.peer, p.peer_port});
    EXPECT_EQ(v[0]->actual, std::to_string(want) + " CA->CA pairs");
    EXPECT_EQ(v[0]->a.name, "leaf0002");
    EXPECT_NE(v[0]->message.find("rate_outlier"), std::string::npos) << v[0]->message;
    EXPECT_NE(v[0]->message.find(", e.g. node0"), std::string::npos) << v[0]->message;
}

TEST(RouteCheck, ADegradedHostLinkCountsWhatTheHostSendsAndReceives) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    const NodeId h = synth_node(f, "node00003");
    const auto lfts = synth_lfts(f);
    RouteCheckOptions opt;
    opt.degraded = {{h, 1, "flapping"}};
    const RouteCheck rc = check_routes(RouteGraph(f, lfts), analyze(f), opt);
    auto v = of_kind(rc, FindingKind::route_via_degraded_link);
    ASSERT_EQ(v.size(), 1u);
    const long others = static_cast<long>(f.count(NodeType::CA)) - 1;
    EXPECT_EQ(v[0]->actual, std::to_string(2 * others) + " CA->CA pairs");
}

TEST(RouteCheck, RoutesIntoASwitchWithoutATableAreUnverifiedNotFindings) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);
    std::erase_if(lfts, [&](const SwitchLft& t) { return t.switch_guid == f.node(synth_node(f, "spine0001")).guid; });
    const RouteCheck rc = check_routes(RouteGraph(f, lfts), analyze(f));
    EXPECT_GT(rc.unverified, 0);
    EXPECT_EQ(rc.routed + rc.unverified, rc.pairs);
    EXPECT_TRUE(rc.findings.empty());
}

TEST(RouteCheckCache, ASweepWithoutChangesReusesTheResultAndAChangedEntryDoesNot) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);
    const Analysis a = analyze(f);
    RouteCheckCache cache;
    EXPECT_TRUE(cache.check(f, a, lfts).findings.empty());
    EXPECT_FALSE(cache.last_was_cached());
    cache.check(f, a, lfts);
    EXPECT_TRUE(cache.last_was_cached());
    set_entry(table_of(lfts, f, synth_node(f, "spine0002")), host_lid(f, "node00001"), kLftNoPath);
    EXPECT_EQ(of_kind(cache.check(f, a, lfts), FindingKind::route_unreachable).size(), 1u);
    EXPECT_FALSE(cache.last_was_cached());
}

// Everything a RouteCheck says, as text: two results are the same when these are equal.
std::string dump(const RouteCheck& rc) {
    std::string t = std::to_string(rc.pairs) + " " + std::to_string(rc.routed) + " " + std::to_string(rc.unreachable) + " " +
                    std::to_string(rc.looping) + " " + std::to_string(rc.unverified) + " " + std::to_string(rc.non_minimal) +
                    " max " + std::to_string(rc.max_hops) + " credit " + std::to_string(rc.credit_loops) + "\nhops";
    for (long n : rc.hop_histogram) t += " " + std::to_string(n);
    t += "\nports";
    for (size_t ch = 0; ch < rc.port_pairs.size(); ++ch)
        if (rc.port_pairs[ch]) t += " " + std::to_string(ch) + ":" + std::to_string(rc.port_pairs[ch]);
    if (rc.switch_routes) {
        const LftPaths& p = *rc.switch_routes;
        t += "\nswitch routes " + std::to_string(p.routes) + " " + std::to_string(p.unrouted) + " " + std::to_string(p.broken) +
             " max " + std::to_string(p.max_hops) + " hops";
        for (long n : p.hop_histogram) t += " " + std::to_string(n);
    }
    for (const Finding& fd : rc.findings)
        t += "\n" + std::string(to_string(fd.kind)) + " " + std::to_string(static_cast<int>(fd.severity)) + " " + fd.a.name + "/" +
             std::to_string(fd.a.port) + " " + std::to_string(fd.a.guid) + " " + fd.b.name + "/" + std::to_string(fd.b.port) + " " +
             std::to_string(fd.b.guid) + " [" + fd.expected + "] [" + fd.actual + "] " + fd.message;
    return t;
}

// Random entries of random tables set to random ports (dead ends, loops, detours, wrong CAs, 255),
// sometimes a table put back as it was: after each round the cache must say exactly what a full
// validation of the same tables says, and at least `min_incremental` rounds must have been
// incremental (the others: nothing changed, or more than half the destinations did: in full).
std::map<FindingKind, int> randomized_rounds(const Fabric& f, std::vector<SwitchLft> lfts, const RouteCheckOptions& opt, int rounds,
                                       unsigned seed, int min_incremental) {
    const Analysis a = analyze(f);
    const std::vector<SwitchLft> original = lfts;
    for (SwitchLft& t : lfts) t.hash = lft_hash(t.port_by_lid());
    std::vector<uint32_t> ca_lids;
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::CA)
            for (const Port& p : f.node(n).ports)
                if (p.valid && p.lid) ca_lids.push_back(p.lid);
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(std::uniform_int_distribution<size_t>(0, n - 1)(rng)); };
    // The cache runs with opt (its threads for the full validations), the reference on one thread.
    RouteCheckOptions one_thread = opt;
    one_thread.threads = 1;
    RouteCheckCache cache;
    EXPECT_EQ(dump(cache.check(f, a, lfts, opt)), dump(check_routes(RouteGraph(f, lfts), a, one_thread)));
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::full);
    int incremental = 0, unchanged = 0;
    std::map<FindingKind, int> kinds;  // the rounds that found each kind
    for (int round = 0; round < rounds; ++round) {
        const size_t tables = round % 7 == 6 ? 0 : 1 + pick(3);  // every 7th round: nothing changes
        for (size_t k = 0; k < tables; ++k) {
            const size_t ti = pick(lfts.size());
            SwitchLft& t = lfts[ti];
            if (pick(5) == 0) {
                t.set_port_by_lid(original[ti].port_by_lid());  // re-routed back
            } else {
                const int ports = f.node(*f.find(t.switch_guid)).num_ports();
                for (size_t m = 1 + pick(4); m-- > 0;) {
                    const uint32_t lid = pick(3) ? ca_lids[pick(ca_lids.size())] : static_cast<uint32_t>(pick(t.port_by_lid().size()));
                    const size_t choice = pick(static_cast<size_t>(ports) + 2);
                    set_entry(t, lid, choice == static_cast<size_t>(ports) + 1 ? kLftNoPath : static_cast<uint8_t>(choice));
                }
            }
            t.hash = pick(2) ? lft_hash(t.port_by_lid()) : 0;  // the decoder's hash, or none
        }
        const RouteCheck full = check_routes(RouteGraph(f, lfts), a, one_thread);
        EXPECT_EQ(full.switch_routes, lft_paths(f, lfts)) << "round " << round;
        std::set<FindingKind> found;
        for (const Finding& fd : full.findings) found.insert(fd.kind);
        for (FindingKind k : found) ++kinds[k];
        const std::string want = dump(full);
        if (opt.threads > 1) {
            EXPECT_EQ(dump(check_routes(RouteGraph(f, lfts), a, opt)), want) << "round " << round << ", threads";
        }
        const std::string got = dump(cache.check(f, a, lfts, opt));
        EXPECT_EQ(got, want) << "round " << round << " (" << to_string(cache.last_mode()) << ")";
        if (got != want) return kinds;  // the first difference is the one to read
        incremental += cache.last_mode() == RouteCheckCache::Mode::incremental;
        unchanged += cache.last_mode() == RouteCheckCache::Mode::unchanged;
    }
    EXPECT_GE(incremental, min_incremental);
    EXPECT_GT(unchanged, 0);
    return kinds;
}

TEST(RouteCheckCache, IncrementalEqualsAFullValidationOnRandomTableChangesInAThreeLevelTree) {
    const Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});
    const Analysis a = analyze(f);
    RouteCheckOptions opt;
    const NodeId leaf = synth_node(f, "leaf0002"), host = synth_node(f, "node00007");
    opt.degraded = {{leaf, a.info(leaf)->up_bundles[0].ports[0], "1xHDR, expected 4xHDR: rate_mismatch"}, {host, 1, "port_errors"}};
    auto kinds = randomized_rounds(f, synth_lfts(f), opt, 150, 21, 100);
    for (FindingKind k : {FindingKind::route_unreachable, FindingKind::route_loop, FindingKind::route_non_minimal,
                          FindingKind::route_via_degraded_link})
        EXPECT_TRUE(kinds.count(k)) << to_string(k) << " never came up: the rounds do not test it";
}

TEST(RouteCheckCache, IncrementalEqualsAFullValidationOnRandomTableChangesOnARing) {
    const Fabric f = ring();
    RouteCheckOptions opt;
    opt.degraded = {{0, 2, "link_flapping"}};
    // Clockwise tables (a credit loop) changed at random and put back: the loop comes and goes.
    // Three destinations: a round that changes two of them is validated in full.
    const int rounds = 150;
    auto kinds = randomized_rounds(f, ring_tables(f, true), opt, rounds, 7, 30);
    EXPECT_GT(kinds[FindingKind::credit_loop], 0);
    EXPECT_LT(kinds[FindingKind::credit_loop], rounds);
}

// A full validation on several threads (each a run of 64-LID blocks into a State of its own,
// merged) says exactly what one thread says, and the incremental steps after it start from the
// merged State: 2-level radix 16, 128 hosts and 24 switches, LIDs in more than one 64-LID block.
TEST(RouteCheckCache, AFullValidationOnThreeThreadsEqualsOneThreadAndIncrementalStepsFollowIt) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 16});
    const Analysis a = analyze(f);
    const auto tables = synth_lfts(f);
    const RouteGraph g(f, tables);
    ASSERT_GE(g.dests().back().lid / DestWalk::kMaxBlock - g.dests().front().lid / DestWalk::kMaxBlock, 1u);  // 2+ blocks to split
    RouteCheckOptions opt;
    const NodeId leaf = synth_node(f, "leaf0003"), host = synth_node(f, "node00100");
    opt.degraded = {{leaf, a.info(leaf)->up_bundles[0].ports[0], "1xHDR, expected 4xHDR: rate_mismatch"}, {host, 1, "port_errors"}};
    opt.threads = 3;
    opt.min_dests_per_thread = 1;
    auto kinds = randomized_rounds(f, synth_lfts(f), opt, 60, 5, 30);
    for (FindingKind k : {FindingKind::route_unreachable, FindingKind::route_loop, FindingKind::route_via_degraded_link})
        EXPECT_TRUE(kinds.count(k)) << to_string(k) << " never came up: the rounds do not test it";
}

TEST(RouteCheckCache, ThreadsOnARingWithACreditLoopSayWhatOneThreadSays) {
    const Fabric f = ring();
    RouteCheckOptions opt;
    opt.degraded = {{0, 2, "link_flapping"}};
    opt.threads = 2;
    opt.min_dests_per_thread = 1;
    auto kinds = randomized_rounds(f, ring_tables(f, true), opt, 150, 7, 30);  // the rounds of the one-thread test
    EXPECT_GT(kinds[FindingKind::credit_loop], 0);
}

// A stopping daemon sets RouteCheckOptions::cancel: a full (one or more threads) or incremental
// validation stops within 64 destinations with RouteCheckCancelled; the cache keeps nothing of
// it and validates in full next time, as check_routes would.
TEST(RouteCheckCache, ACancelledValidationThrowsKeepsNothingAndTheNextOneIsInFull) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 16});  // 128 CA LIDs
    const Analysis a = analyze(f);
    auto lfts = synth_lfts(f);
    std::atomic<bool> stop{true};
    RouteCheckOptions cancelled;
    cancelled.cancel = &stop;
    EXPECT_THROW(check_routes(RouteGraph(f, lfts), a, cancelled), RouteCheckCancelled);
    cancelled.threads = 2;
    cancelled.min_dests_per_thread = 1;
    EXPECT_THROW(check_routes(RouteGraph(f, lfts), a, cancelled), RouteCheckCancelled);

    RouteCheckCache cache;
    cache.check(f, a, lfts);
    // 64 destinations re-routed (half: still incremental), then cancelled midway.
    std::vector<uint8_t> spine = table_of(lfts, f, synth_node(f, "spine0001")).port_by_lid();
    int changed = 0;
    for (NodeId n = 0; n < f.size() && changed < 64; ++n)
        if (f.node(n).type == NodeType::CA) spine[f.node(n).port(1)->lid] = kLftNoPath, ++changed;
    table_of(lfts, f, synth_node(f, "spine0001")).set_port_by_lid(std::move(spine));
    ASSERT_EQ(changed, 64);
    EXPECT_THROW(cache.check(f, a, lfts, cancelled), RouteCheckCancelled);
    stop = false;
    EXPECT_EQ(dump(cache.check(f, a, lfts)), dump(check_routes(RouteGraph(f, lfts), a)));
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::full);
}

// The switch-to-host figures of the validation's own pass are lft_paths' on broken tables too.
TEST(RouteCheck, SwitchRoutesEqualLftPathsWithDeadEndsAndLoops) {
    const Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});
    auto lfts = synth_lfts(f);
    set_entry(table_of(lfts, f, synth_node(f, "leaf0001")), host_lid(f, "node00030"), kLftNoPath);
    set_entry(table_of(lfts, f, synth_node(f, "leaf0002")), host_lid(f, "node00031"), 0);
    const RouteCheck rc = check_routes(RouteGraph(f, lfts), analyze(f));
    ASSERT_TRUE(rc.switch_routes);
    const LftPaths want = lft_paths(f, lfts);
    EXPECT_EQ(*rc.switch_routes, want);
    EXPECT_EQ(want.unrouted, 1);
    EXPECT_GT(want.broken, 0);
    RouteCheckOptions off;
    off.switch_routes = false;
    EXPECT_FALSE(check_routes(RouteGraph(f, lfts), analyze(f), off).switch_routes);
    EXPECT_EQ(route_check_json(rc)["switch_routes"]["routes_unrouted"], 1);
}

TEST(RouteCheckCache, ACablingOrDegradedLinkChangeValidatesInFull) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);
    const Analysis a = analyze(f);
    RouteCheckCache cache;
    cache.check(f, a, lfts);
    set_entry(table_of(lfts, f, synth_node(f, "spine0002")), host_lid(f, "node00001"), kLftNoPath);
    cache.check(f, a, lfts);
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::incremental);
    EXPECT_EQ(cache.last_revalidated(), 1u);  // node00001's LID
    EXPECT_EQ(cache.last_tables_changed(), 1u);
    RouteCheckOptions opt;
    opt.degraded = {{synth_node(f, "node00003"), 1, "port_errors"}};
    EXPECT_EQ(dump(cache.check(f, a, lfts, opt)), dump(check_routes(RouteGraph(f, lfts), a, opt)));
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::full);
    remove_cable(f, synth_node(f, "node00004"), 1);
    EXPECT_EQ(dump(cache.check(f, a, lfts, opt)), dump(check_routes(RouteGraph(f, lfts), a, opt)));
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::full);
}

// LMC 2: every CA port has 4 LIDs, 4 destinations that the tables spread over different
// uplinks (d-mod-k), in 64-LID blocks of the walk. LIDs renumbered: switches 1.., CA ports at
// multiples of 4 after them.
Fabric with_lmc2(Fabric f) {
    uint32_t next = 1;
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::Switch) f.node(n).ports[0].lid = static_cast<uint16_t>(next++), f.node(n).lid = f.node(n).ports[0].lid;
    next = (next + 3) / 4 * 4;
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::CA) {
            Port& p = f.node(n).ports[1];
            p.lid = static_cast<uint16_t>(next), p.lmc = 2, f.node(n).lid = p.lid;
            next += 4;
        }
    return f;
}

TEST(RouteCheck, LmcLidsOfOnePortRoutedApartWithBrokenEntriesMatchTheBruteForce) {
    const Fabric f = with_lmc2(synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40}));
    const Analysis a = analyze(f);
    auto lfts = synth_lfts(f);
    const uint16_t base = f.node(synth_node(f, "node00005")).port(1)->lid;
    ASSERT_EQ(base % 4, 0);
    // The 4 LIDs of node00005 leave leaf0001 by different uplinks.
    std::set<int> ups;
    for (uint32_t i = 0; i < 4; ++i) ups.insert(table_of(lfts, f, synth_node(f, "leaf0001")).port_by_lid()[base + i]);
    EXPECT_EQ(ups.size(), 4u);
    {
        const RouteCheck clean = check_routes(RouteGraph(f, lfts), a);
        EXPECT_EQ(clean.pairs, 40L * 39 * 4);
        EXPECT_EQ(clean.routed, clean.pairs);
        expect_brute(f, lfts, clean);
    }
    // One LID of the port missing at the spine leaf0001 sends it to, one sent back up by the
    // port's own leaf (a loop), one to port 0 at the spine; the fourth routed as before.
    const NodeId leaf = synth_node(f, "leaf0001"), own = synth_node(f, "leaf0002");
    auto spine_for = [&](uint32_t lid) { return f.node(leaf).ports[table_of(lfts, f, leaf).port_by_lid()[lid]].peer; };
    set_entry(table_of(lfts, f, spine_for(base + 1)), base + 1, kLftNoPath);
    set_entry(table_of(lfts, f, own), base + 2, static_cast<uint8_t>(a.info(own)->up_bundles[0].ports[0]));
    set_entry(table_of(lfts, f, spine_for(base + 3)), base + 3, 0);
    const RouteGraph g(f, lfts);
    const RouteCheck rc = check_routes(g, a);
    EXPECT_GT(rc.unreachable, 0);
    EXPECT_GT(rc.looping, 0);
    expect_brute(f, lfts, rc);
    EXPECT_EQ(rc.switch_routes, lft_paths(f, lfts));
    RouteCheckOptions three;
    three.threads = 3;
    three.min_dests_per_thread = 1;
    EXPECT_EQ(dump(check_routes(g, a, three)), dump(rc));
    // Incremental steps over random changes on this fabric say what a full validation says.
    RouteCheckOptions opt;
    opt.degraded = {{leaf, a.info(leaf)->up_bundles[0].ports[1], "1xHDR, expected 4xHDR: rate_mismatch"}};
    randomized_rounds(f, lfts, opt, 60, 11, 30);
}

// Two CA ports with one LID (a duplicate the SM should not hand out): two destinations on one
// row of the walk's block, each with its own share.
TEST(RouteCheck, TwoPortsWithOneLidAreTwoDestinationsEachCountedOnce) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);  // before the duplicate: the LID's routes go to node00001
    const NodeId one = synth_node(f, "node00001"), two = synth_node(f, "node00010");
    const uint16_t lid = f.node(one).ports[1].lid;
    f.node(two).ports[1].lid = lid;
    f.node(two).lid = lid;
    const Analysis a = analyze(f);
    const RouteGraph g(f, lfts);
    ASSERT_EQ(g.dests().size(), f.count(NodeType::CA));
    // node00001 is the first of the two destinations; the routed one, and the first whose routes
    // cross the degraded uplink: the finding's sample is one of its pairs.
    const NodeId leaf = synth_node(f, "leaf0002");
    RouteCheckOptions opt;
    opt.degraded = {{leaf, table_of(lfts, f, leaf).port_by_lid()[lid], "port_errors"}};
    const RouteCheck rc = check_routes(g, a, opt);
    EXPECT_GT(rc.unreachable, 0);  // node00010's: the routes end at node00001
    expect_brute(f, lfts, rc);
    auto v = of_kind(rc, FindingKind::route_via_degraded_link);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0]->message.find(" -> node00001/1 (LID " + std::to_string(lid) + ")"), std::string::npos) << v[0]->message;
    RouteCheckCache cache;
    EXPECT_EQ(dump(cache.check(f, a, lfts, opt)), dump(rc));
    RouteCheckOptions two_threads = opt;
    two_threads.threads = 2;
    two_threads.min_dests_per_thread = 1;
    EXPECT_EQ(dump(check_routes(g, a, two_threads)), dump(rc));
}

// 65,535 switches (a binary tree of depth 15): more than 16-bit codes can number, so the walk
// asks the graph where each entry leads instead of its 16-bit block. Hosts on four leaves,
// min-hop tables with a dead end, a loop and a missing entry: the brute force's counts, and the
// switch routes counted switch by switch.
TEST(RouteCheck, AGraphTooLargeForSixteenBitHopsGivesTheSameCounts) {
    Fabric f;
    constexpr int kSwitches = 65535;
    std::vector<NodeId> sw(kSwitches);
    for (int i = 0; i < kSwitches; ++i) {
        sw[i] = f.add_node({.type = NodeType::Switch, .guid = 0x100000u + static_cast<Guid>(i),
                            .description = "MF0;bt" + std::to_string(i) + ":X/U1"}, 3);  // no LID: tables of 5 entries
    }
    for (int i = 1; i < kSwitches; ++i) f.connect(sw[(i - 1) / 2], 2 + (i - 1) % 2, sw[i], 1);  // children on ports 2, 3
    const int leaves[4] = {32767, 40000, 50000, 65534};  // at depth 15: port 2 free for a host
    std::vector<NodeId> hosts;
    for (int k = 0; k < 4; ++k) {
        hosts.push_back(f.add_node({.type = NodeType::CA, .guid = 0x900000u + static_cast<Guid>(k),
                                    .description = "h" + std::to_string(k) + " mlx5_0"}, 1));
        f.node(hosts.back()).ports[1].lid = static_cast<uint16_t>(1 + k);
        f.connect(sw[leaves[k]], 2, hosts.back(), 1);
    }
    f.finalize();
    auto lfts = synth_lfts(f);
    // Switch 1 roots the left half (leaves 32767..49150), switch 2 the right one.
    set_entry(lfts[0], 3, 0);                                        // the root: a dead end for h2 (right half)
    set_entry(lfts[1], 2, 1);                                        // switch 1 sends h1 back up: a loop with the root
    set_entry(lfts[static_cast<size_t>(leaves[3])], 1, kLftNoPath);  // no entry for h0 at h3's leaf
    for (SwitchLft& t : lfts) t.hash = 0;
    const RouteGraph g(f, lfts);
    ASSERT_GE(g.switches(), 65534);
    const Analysis a = analyze(f);
    const RouteCheck rc = check_routes(g, a);
    expect_brute(f, lfts, rc);
    EXPECT_GT(rc.unreachable, 0);
    EXPECT_GT(rc.looping, 0);
    // Every switch's route to every host LID, hop by hop.
    LftPaths want;
    for (int s = 0; s < kSwitches; ++s)
        for (int k = 0; k < 4; ++k) {
            const uint32_t lid = 1u + static_cast<uint32_t>(k);
            if (lfts[static_cast<size_t>(s)].port_by_lid()[lid] == kLftNoPath) {
                ++want.unrouted;
                continue;
            }
            int cur = s, hops = 0;
            bool arrived = false;
            for (; hops < 64; ++hops) {
                const int p = lfts[static_cast<size_t>(cur)].port_by_lid()[lid];
                const Port* q = p == kLftNoPath ? nullptr : f.node(sw[cur]).port(p);
                if (!q || p == 0 || !q->linked()) break;
                if (q->peer == hosts[static_cast<size_t>(k)]) {
                    arrived = true;
                    break;
                }
                if (f.node(q->peer).type != NodeType::Switch) break;
                cur = g.sw_of(q->peer);
            }
            if (!arrived) {
                ++want.broken;
                continue;
            }
            ++want.routes;
            if (static_cast<size_t>(hops + 1) >= want.hop_histogram.size()) want.hop_histogram.resize(hops + 2, 0);
            ++want.hop_histogram[hops + 1];
            want.max_hops = std::max(want.max_hops, hops + 1);
        }
    EXPECT_EQ(rc.switch_routes, want);
}

// The switches in breadth-first order from `from` (what the validation settles in).
std::vector<uint16_t> bfs_order(const RouteGraph& g, int from) {
    std::vector<uint16_t> order{static_cast<uint16_t>(from)};
    std::vector<bool> seen(g.switches(), false);
    seen[from] = true;
    for (size_t i = 0; i < order.size(); ++i)
        for (int p = 1; p <= g.ports(order[i]); ++p)
            if (const int32_t t = g.hop(order[i], p); t >= 0 && !seen[t]) seen[t] = true, order.push_back(static_cast<uint16_t>(t));
    return order;
}

// DestWalk::settle gives every switch the verdict and break that walking from it gives, in a
// breadth-first order or any other, and settled() still lists each switch once, after the
// switch its route goes on to: a three-level tree with random entries (dead and CA ports,
// missing entries, loops) and two tables missing. On clean tables the pass alone settles every
// switch. The table routes it counts on the way equal table_route()'s when it settled every
// switch (as it says).
TEST(DestWalk, SettlingInOneOrderOrAnotherGivesTheVerdictsOfTheWalks) {
    const Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});
    auto lfts = synth_lfts(f);
    {
        const RouteGraph clean(f, lfts);
        DestWalk w(clean);
        for (const RouteDest& d : clean.dests()) {
            w.reset(d);
            w.settle(bfs_order(clean, d.sw));
            ASSERT_EQ(w.settled().size(), static_cast<size_t>(clean.switches())) << "LID " << d.lid;
        }
    }
    std::mt19937 rng(11);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    for (int k = 0; k < 400; ++k) {
        SwitchLft& t = lfts[pick(lfts.size())];
        const size_t ports = f.node(*f.find(t.switch_guid)).num_ports(), choice = pick(ports + 2);
        set_entry(t, static_cast<uint32_t>(pick(t.port_by_lid().size())), choice == ports + 1 ? kLftNoPath : static_cast<uint8_t>(choice));
    }
    lfts.erase(lfts.begin() + 3), lfts.erase(lfts.begin() + 17);
    const RouteGraph g(f, lfts);
    const int n = g.switches();
    std::vector<uint16_t> shuffled(static_cast<size_t>(n));
    for (int s = 0; s < n; ++s) shuffled[static_cast<size_t>(s)] = static_cast<uint16_t>(s);
    DestWalk plain(g), by_bfs(g), any(g);
    std::set<int32_t> seen;  // the verdicts that came up (negative) or "routed" (0)
    int complete = 0;        // destinations the pass settled in full (and counted)
    for (const RouteDest& d : g.dests()) {
        plain.reset(d), by_bfs.reset(d), any.reset(d);
        DestWalk::TableRoutes counted;
        by_bfs.settle(bfs_order(g, d.sw), &counted);
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        any.settle(shuffled);
        for (int s = 0; s < n; ++s) {
            const int32_t v = plain.verdict(s);
            seen.insert(std::min(v, 0));
            ASSERT_EQ(by_bfs.verdict(s), v) << "LID " << d.lid << " switch " << s;
            ASSERT_EQ(any.verdict(s), v) << "LID " << d.lid << " switch " << s << ", shuffled";
            ASSERT_EQ(by_bfs.broke_at(s), plain.broke_at(s)) << "LID " << d.lid << " switch " << s;
            ASSERT_EQ(any.broke_at(s), plain.broke_at(s)) << "LID " << d.lid << " switch " << s << ", shuffled";
        }
        if (counted.complete) {  // the pass's table_route() counts, as the walk gives them
            ++complete;
            DestWalk::TableRoutes want;
            for (int s = 0; s < n; ++s) {
                if (!g.has_table(s)) continue;
                int32_t hops = 0;
                switch (table_route(plain, s, hops)) {
                    case TableRoute::unrouted: ++want.unrouted; break;
                    case TableRoute::broken: ++want.broken; break;
                    case TableRoute::unverified: break;
                    case TableRoute::routed: ++want.routed[0][hops]; break;
                }
            }
            for (int32_t h = 0; h < DestWalk::TableRoutes::kHops; ++h)
                EXPECT_EQ(counted.routed_at(h), want.routed_at(h)) << "LID " << d.lid << ", " << h << " cables";
            EXPECT_EQ(counted.unrouted, want.unrouted) << "LID " << d.lid;
            EXPECT_EQ(counted.broken, want.broken) << "LID " << d.lid;
        }
        for (DestWalk* w : {&by_bfs, &any}) {
            std::vector<int> at(static_cast<size_t>(n), -1);
            const std::vector<int32_t>& order = w->settled();
            ASSERT_EQ(order.size(), static_cast<size_t>(n)) << "LID " << d.lid;
            for (size_t i = 0; i < order.size(); ++i) {
                ASSERT_EQ(at[static_cast<size_t>(order[i])], -1) << "switch " << order[i] << " settled twice";
                at[static_cast<size_t>(order[i])] = static_cast<int>(i);
            }
            for (int s = 0; s < n; ++s)
                if (w->verdict(s) >= 2) {
                    EXPECT_LT(at[static_cast<size_t>(w->next(s))], at[static_cast<size_t>(s)]) << "LID " << d.lid;
                }
        }
    }
    for (int32_t v : {0, static_cast<int32_t>(kRouteDeadEnd), static_cast<int32_t>(kRouteLoop), static_cast<int32_t>(kRouteNoTable),
                      static_cast<int32_t>(kRouteNoEntry)})
        EXPECT_TRUE(seen.count(v)) << "verdict " << v << " never came up: the damage does not test it";
    EXPECT_GT(complete, 0) << "no destination settled in full: its counts are not tested";
}

TEST(LftPaths, MinHopTablesOnAThreeLevelTreeReachEveryHostFromEverySwitch) {
    const Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});
    const auto lfts = synth_lfts(f);
    const LftPaths p = lft_paths(f, lfts);
    EXPECT_EQ(p.routes, static_cast<long>(f.count(NodeType::Switch) * f.count(NodeType::CA)));
    EXPECT_EQ(p.broken + p.unrouted, 0);
    EXPECT_EQ(p.max_hops, 5);  // leaf -> spine -> core -> spine -> leaf -> host
}

// The cache keeps the tables it validated by reference (the snapshot's shared bytes), not a copy
// of them (184 MB at 48k LIDs); a re-routed table's new bytes replace the old ones there.
TEST(RouteCheckCache, KeepsTheTablesByReferenceNotACopy) {
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    auto lfts = synth_lfts(f);
    const Analysis a = analyze(f);
    RouteCheckCache cache;
    cache.check(f, a, lfts);
    ASSERT_EQ(cache.last_mode(), RouteCheckCache::Mode::full);
    for (const SwitchLft& t : lfts) EXPECT_EQ(t.shared_port_by_lid().use_count(), 2) << std::hex << t.switch_guid;  // lfts, the cache
    SwitchLft& spine = table_of(lfts, f, synth_node(f, "spine0002"));
    const std::shared_ptr<const std::vector<uint8_t>> old = spine.shared_port_by_lid();
    set_entry(spine, host_lid(f, "node00001"), kLftNoPath);
    EXPECT_EQ(old.use_count(), 2);  // `old` and the cache
    cache.check(f, a, lfts);
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::incremental);
    EXPECT_EQ(old.use_count(), 1);  // the cache let go of the old bytes
    for (const SwitchLft& t : lfts) EXPECT_EQ(t.shared_port_by_lid().use_count(), 2) << std::hex << t.switch_guid;
    // The same tables again: the same buffers, so not even hashed; nothing changed.
    cache.check(f, a, lfts);
    EXPECT_EQ(cache.last_mode(), RouteCheckCache::Mode::unchanged);
    EXPECT_EQ(cache.last_tables_changed(), 0u);
}

}  // namespace
}  // namespace ibf
