// Routing, live: real OpenSM 3.3.23 on ibsim with libibfabric_osm.so. A fat tree routed by ftree
// with the guid files `ibfabric routing-files` wrote from a dump of the same fabric: the snapshot
// says ftree (as configured) and carries every switch's LFT, whose host entries lead to the hosts.
// Then a tree ftree refuses (a host on a spine, no guid files): OpenSM falls back and the snapshot
// says so (used engine != configured). Label: integration. Own ibsim (unique IBSIM_SOCKNAME) and
// opensm per test, in a temp dir, killed by pid (tests/support).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/ibsim_fixture.h"
#include "ibf/lab_process.h"
#include "ibf/lft.h"
#include "ibf/lft_dump.h"
#include "ibf/synth.h"
#include "ibf/wire_listener.h"

using namespace ibf;
using namespace ibf::test_support;
using namespace std::chrono_literals;

namespace {

// Every test's OpenSM: the plugin on tmp/s.sock with debug logging, plus `plugin_options`, then
// `conf` lines.
void start_opensm(IbsimFixture& sim, const std::string& host, const std::string& conf,
                  const std::string& plugin_options = "") {
    sim.start_opensm(host, plugin_conf("socket=" + (sim.tmp / "s.sock") + " log=debug " + plugin_options, conf));
}

// Every switch has a table; every host LID's entry in every table is a linked port; following the
// tables from every switch reaches every host (no dead end, no loop).
void expect_tables_route_every_host(const Snapshot& s) {
    const Fabric& f = s.fabric;
    ASSERT_EQ(s.lfts.size(), f.count(NodeType::Switch));
    int checked = 0;
    for (const SwitchLft& t : s.lfts) {
        auto id = f.find(t.switch_guid);
        ASSERT_TRUE(id) << guid_hex(t.switch_guid);
        const Node& sw = f.node(*id);
        for (const Node& n : f.nodes()) {
            if (n.type != NodeType::CA) continue;
            for (const Port& p : n.ports) {
                if (!p.valid || !p.linked() || p.lid == 0) continue;
                ASSERT_LT(p.lid, t.port_by_lid().size()) << sw.name;
                const int out = t.port_by_lid()[p.lid];
                const Port* op = sw.port(out);
                ASSERT_TRUE(op && op->linked()) << sw.name << " routes LID " << p.lid << " to port " << out;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 0);
    const LftPaths paths = lft_paths(f, s.lfts);
    EXPECT_EQ(paths.broken, 0);
    EXPECT_EQ(paths.unrouted, 0);
    EXPECT_EQ(paths.routes, checked);
    EXPECT_EQ(paths.max_hops, 3);  // leaf -> spine -> leaf -> host
}

}  // namespace

TEST(RoutingOnIbsim, FtreeWithGeneratedGuidFilesIsUsedAndItsLftsReachEveryHost) {
    if (auto why = missing_tools({"ibfabric"}); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture sim("ibfrt");
    // The fabric as an ibnetdiscover dump: ibsim simulates it, routing-files reads the same file.
    const Fabric planned = synth_fat_tree({.levels = 2, .radix = 8});  // 8 leaves x 4 hosts, 4 spines
    const std::string dump = write_ibnetdiscover(planned);
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(dump));
    const std::string files = sim.tmp / "ftree";
    std::string rf_out;
    const int rc = lab_detail::run_capture({.argv = {bin_dir() + "/ibfabric", "routing-files", sim.tmp / "net", "--out-dir", files},
                                            .cwd = sim.tmp.path(), .out_path = sim.tmp / "rf.err"},
                                           30, rf_out);
    ASSERT_EQ(rc, 0) << rf_out << read_file(sim.tmp / "rf.err");
    const std::string roots = read_file(files + "/root_guid_file");
    EXPECT_EQ(std::count(roots.begin(), roots.end(), '\n'), 4) << roots;  // the 4 spines

    // OpenSM on the first host: node id "H-<guid>" as in the dump.
    Guid host_guid = 0;
    for (const Node& n : planned.nodes())
        if (n.type == NodeType::CA) {
            host_guid = n.guid;
            break;
        }
    char host[32];
    std::snprintf(host, sizeof host, "H-%016llx", static_cast<unsigned long long>(host_guid));
    WireListener l(sim.tmp / "s.sock");
    start_opensm(sim, host, "routing_engine ftree\nroot_guid_file " + files + "/root_guid_file\ncn_guid_file " + files +
                               "/cn_guid_file\n");
    ASSERT_TRUE(l.accept(15s)) << sim.log();
    auto snap = l.next_of<Snapshot>(20s);
    ASSERT_TRUE(snap) << sim.log();
    EXPECT_FALSE(snap->initialization_error);
    EXPECT_EQ(snap->routing_engine, "ftree") << sim.log();
    EXPECT_EQ(snap->routing_engine_configured, "ftree");
    EXPECT_EQ(snap->fabric.size(), planned.size());
    ASSERT_NO_FATAL_FAILURE(expect_tables_route_every_host(*snap));
    // ftree on an intact tree: every leaf spreads the other leaves' hosts evenly over its uplinks.
    const Analysis a = analyze(snap->fabric);
    const LftReport bal = lft_balance(snap->fabric, a, snap->lfts);
    EXPECT_EQ(bal.switches.size(), 8u);
    EXPECT_TRUE(bal.findings.empty()) << bal.findings[0].message;
    for (const LftBalance& b : bal.switches) EXPECT_LE(b.max_routes - b.min_routes, 1);
    const std::string log = sim.log();
    EXPECT_NE(log.find("LFTs of 12 switches"), std::string::npos) << log;  // the plugin's debug line
    auto pos = log.find("LFTs of 12 switches");
    if (pos != std::string::npos) std::printf("[lft] %s\n", log.substr(log.rfind('\n', pos) + 1, log.find('\n', pos) - log.rfind('\n', pos) - 1).c_str());
    EXPECT_TRUE(sim.opensm.stop(5s));
}

TEST(RoutingOnIbsim, FtreeRefusingTheTreeShowsAsUsedEngineOtherThanConfigured) {
    if (auto why = missing_tools({"ibfabric"}); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture sim("ibfrt");
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(spine_leaf_net(true)));
    WireListener l(sim.tmp / "s.sock");
    start_opensm(sim, "h0", "routing_engine ftree\n");
    ASSERT_TRUE(l.accept(15s)) << sim.log();
    auto snap = l.next_of<Snapshot>(20s);
    ASSERT_TRUE(snap) << sim.log();
    EXPECT_EQ(snap->routing_engine_configured, "ftree");
    EXPECT_NE(snap->routing_engine, "ftree") << sim.log();
    EXPECT_EQ(snap->routing_engine, "minhop");  // OpenSM's default engine
    EXPECT_NE(sim.log().find("not a fat-tree"), std::string::npos);
    // minhop still routes: the tables reach every host, hx on the spine too.
    ASSERT_NO_FATAL_FAILURE(expect_tables_route_every_host(*snap));
    EXPECT_TRUE(sim.opensm.stop(5s));
}

TEST(RoutingOnIbsim, LftOptionOffSendsNoTables) {
    if (auto why = missing_tools({"ibfabric"}); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture sim("ibfrt");
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(spine_leaf_net(false)));
    WireListener l(sim.tmp / "s.sock");
    start_opensm(sim, "h0", "", "lft=0");
    ASSERT_TRUE(l.accept(15s)) << sim.log();
    auto snap = l.next_of<Snapshot>(20s);
    ASSERT_TRUE(snap) << sim.log();
    EXPECT_TRUE(snap->lfts.empty());
    EXPECT_EQ(snap->routing_engine_configured, "");  // nothing configured: OpenSM's default
    EXPECT_EQ(snap->routing_engine, "minhop");
    EXPECT_EQ(snap->fabric.size(), 36u);
    EXPECT_TRUE(sim.opensm.stop(5s));
}

// The figures docs/plugin.md quotes: what exporting the LFTs adds under OpenSM's lock and on the
// wire, on a 2-level tree of 64-port switches (32 spines, 64 leaves, 2048 hosts: 2144 nodes).
// Alternating runs with lft=1 and lft=0 (the shared machine's load drifts), a fresh ibsim each.
TEST(RoutingOnIbsim, LftCopyCostOnA2144NodeFatTree) {
    if (auto why = missing_tools({"ibfabric"}); !why.empty()) GTEST_SKIP() << why;
    const std::string net = full_tree_net(64);
    std::vector<uint64_t> with_us, without_us;
    std::optional<Snapshot> full;
    for (int run = 0; run < 4; ++run) {
        const bool lft = run % 2 == 0;
        IbsimFixture sim("ibfrt");
        ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(net, {.extra_args = {"-N", "4096"}}));
        WireListener l(sim.tmp / "s.sock");
        start_opensm(sim, "h0", "", lft ? "lft=1" : "lft=0");
        ASSERT_TRUE(l.accept(15s)) << sim.log();
        auto snap = l.next_of<Snapshot>(60s);
        ASSERT_TRUE(snap) << sim.log();
        ASSERT_EQ(snap->fabric.size(), 2144u);
        ASSERT_EQ(snap->lfts.size(), lft ? 96u : 0u);
        auto c = l.next_of<wire::Counters>(10s);
        ASSERT_TRUE(c);
        (lft ? with_us : without_us).push_back(c->last_copy_us);
        if (lft) {
            const std::string log = sim.log();
            auto pos = log.find("LFTs of 96 switches");
            ASSERT_NE(pos, std::string::npos) << log;
            const size_t b = log.rfind('\n', pos) + 1;
            std::printf("[lft] %s\n", log.substr(b, log.find('\n', pos) - b).c_str());
            if (!full) full = std::move(*snap);
        }
        EXPECT_TRUE(sim.opensm.stop(5s));
    }
    ASSERT_TRUE(full);
    ASSERT_NO_FATAL_FAILURE(expect_tables_route_every_host(*full));
    // Wire size and decode cost with and without the tables.
    Snapshot bare = *full;
    bare.lfts.clear();
    const std::string with = wire::encode(*full), without = wire::encode(bare);
    auto decode_ms = [](const std::string& frame) {
        double best = 1e9;
        for (int i = 0; i < 5; ++i) {
            auto t0 = Clock::now();
            wire::Decoder d;
            d.feed(frame.data(), frame.size());
            auto m = d.next();
            EXPECT_TRUE(m);
            best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        return best;
    };
    std::printf("[lft] copy under the lock: with LFTs %llu / %llu us, without %llu / %llu us\n",
                static_cast<unsigned long long>(with_us[0]), static_cast<unsigned long long>(with_us[1]),
                static_cast<unsigned long long>(without_us[0]), static_cast<unsigned long long>(without_us[1]));
    std::printf("[lft] snapshot %zu bytes with LFTs, %zu without (+%zu, %zu LIDs per table); decode %.2f ms vs %.2f ms\n",
                with.size(), without.size(), with.size() - without.size(), full->lfts[0].port_by_lid().size(),
                decode_ms(with), decode_ms(without));
    EXPECT_LT(with_us[0], 200'000u);  // generous bound for a shared CI box
}

namespace {

// The forwarding tables the switches hold now, read back over MADs by `dump_lfts` from host
// `host` (ibroute per switch under umad2sim): the ground truth a full copy of OpenSM's
// osm_switch_t::lft must equal once every block was acknowledged.
std::vector<SwitchLft> switch_tables(IbsimFixture& sim, const std::string& host) {
    std::string out;
    const int rc = lab_detail::run_capture({.argv = {"dump_lfts"},
                                            .env = {{"IBSIM_SOCKNAME", sim.sockname}, {"SIM_HOST", host}, {"LD_PRELOAD", kUmad2sim}},
                                            .cwd = sim.tmp.path(),
                                            .out_path = sim.tmp / "dump_lfts.err"},
                                           60, out);
    EXPECT_EQ(rc, 0) << read_file(sim.tmp / "dump_lfts.err");
    return parse_lft_dump(out, "dump_lfts");
}

// Every table of the snapshot equals the switch's own, LID by LID (the dump lists LIDs up to
// the switch's LinearFDBTop; beyond, and where it lists nothing, "no path").
void expect_same_tables(const Snapshot& snap, const std::vector<SwitchLft>& truth) {
    ASSERT_EQ(snap.lfts.size(), truth.size());
    size_t entries = 0;
    for (const SwitchLft& t : snap.lfts) {
        auto it = std::find_if(truth.begin(), truth.end(), [&](const SwitchLft& x) { return x.switch_guid == t.switch_guid; });
        ASSERT_NE(it, truth.end()) << guid_hex(t.switch_guid);
        for (size_t lid = 1; lid < t.port_by_lid().size(); ++lid) {
            const uint8_t want = lid < it->port_by_lid().size() ? it->port_by_lid()[lid] : kLftNoPath;
            EXPECT_EQ(int(t.port_by_lid()[lid]), int(want)) << guid_hex(t.switch_guid) << " LID " << lid;
            entries += want != kLftNoPath;
        }
    }
    EXPECT_GT(entries, 0u);
}

// ibsim on spine_leaf_net(false) (a console when asked), OpenSM with the plugin on h0, and its first
// snapshot into `first` (gtest assertions: wrap in ASSERT_NO_FATAL_FAILURE).
void spine_leaf_up(IbsimFixture& sim, WireListener& l, bool console, std::optional<Snapshot>& first) {
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(spine_leaf_net(false), {.console = console}));
    start_opensm(sim, "h0", "");
    ASSERT_TRUE(l.accept(15s)) << sim.log();
    first = l.next_of<Snapshot>(20s);
    ASSERT_TRUE(first) << sim.log();
}

// The plugin's debug line for snapshot `seq` ("LFTs of N switches (C compared: WHY, K changed)").
std::string lft_line(const std::string& log, uint64_t seq) {
    const std::string key = "snapshot " + std::to_string(seq) + ":";
    const auto pos = log.find(key);
    if (pos == std::string::npos) return "";
    const auto lf = log.find("LFTs of", pos);
    return lf == std::string::npos ? "" : log.substr(lf, log.find('\n', lf) - lf);
}

}  // namespace

// Incremental LFT refresh, live: the first snapshot compares every table (plugin loaded), then a
// cable between a leaf and a spine is pulled, OpenSM re-routes and reports the blocks it set as
// LFT_CHANGE, and the next snapshot reads only the switches those events named. Its tables must
// equal what the switches hold (dump_lfts over MADs), as a full copy would.
TEST(RoutingOnIbsim, MarkedLftsAfterAReRouteEqualTheSwitchesTables) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture sim("ibfrt");
    WireListener l(sim.tmp / "s.sock");
    std::optional<Snapshot> first;
    ASSERT_NO_FATAL_FAILURE(spine_leaf_up(sim, l, true, first));
    ASSERT_EQ(first->lfts.size(), 12u);
    ASSERT_TRUE(wait_for_text(sim.tmp / "osm.log", "snapshot " + std::to_string(first->sweep_seq) + ":", 5s));
    EXPECT_NE(lft_line(sim.log(), first->sweep_seq).find("12 compared: plugin loaded"), std::string::npos)
        << lft_line(sim.log(), first->sweep_seq);
    ASSERT_NO_FATAL_FAILURE(expect_same_tables(*first, switch_tables(sim, "h5")));

    sim.console("Unlink \"leaf0\"[5]");  // leaf0 <-> spine0: routes to and from leaf0's hosts move
    std::optional<Snapshot> after;
    const auto deadline = Clock::now() + 15s;
    while (Clock::now() < deadline && !after) {
        auto s = l.next_of<Snapshot>(1s);
        if (s && s->sweep_seq > first->sweep_seq && s->fabric.link_count() == first->fabric.link_count() - 1) after = std::move(*s);
    }
    ASSERT_TRUE(after) << sim.log();
    ASSERT_TRUE(wait_for_text(sim.tmp / "osm.log", "snapshot " + std::to_string(after->sweep_seq) + ":", 5s));
    const std::string line = lft_line(sim.log(), after->sweep_seq);
    std::printf("[lft] after the re-route: %s\n", line.c_str());
    EXPECT_NE(line.find(" marked, "), std::string::npos) << "the incremental path (marks), not a full compare: " << line;
    EXPECT_EQ(line.find(" 0 changed"), std::string::npos) << line;
    ASSERT_NO_FATAL_FAILURE(expect_same_tables(*after, switch_tables(sim, "h5")));

    // A heavy sweep that changes no route (SIGHUP): no block is sent, no LFT_CHANGE, no table read
    // beyond the audit slot, and the tables are still the switches'.
    ASSERT_EQ(::kill(sim.opensm.pid(), SIGHUP), 0);
    std::optional<Snapshot> quiet;
    const auto deadline2 = Clock::now() + 15s;
    while (Clock::now() < deadline2 && !quiet) {
        auto s = l.next_of<Snapshot>(1s);
        if (s && s->sweep_seq > after->sweep_seq) quiet = std::move(*s);
    }
    ASSERT_TRUE(quiet) << sim.log();
    ASSERT_TRUE(wait_for_text(sim.tmp / "osm.log", "snapshot " + std::to_string(quiet->sweep_seq) + ":", 5s));
    const std::string quiet_line = lft_line(sim.log(), quiet->sweep_seq);
    std::printf("[lft] a sweep without changes: %s\n", quiet_line.c_str());
    EXPECT_NE(quiet_line.find(": 0 marked, 0 changed"), std::string::npos) << quiet_line;
    ASSERT_NO_FATAL_FAILURE(expect_same_tables(*quiet, switch_tables(sim, "h5")));
    EXPECT_TRUE(sim.opensm.stop(5s));
}

// A HANDOVER SubnSet(SMInfo) to the master itself makes OpenSM run a first-time master sweep
// (osm_sm_state_mgr.c: MASTER + HANDOVER -> force_first_time_master_sweep): it re-sends every
// block of every switch and reports no LFT_CHANGE. The plugin must see that sweep's flag and read
// every table, not trust the (empty) marks.
TEST(RoutingOnIbsim, LftsAreAllComparedOnAFirstSweepAsMaster) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture sim("ibfrt");
    WireListener l(sim.tmp / "s.sock");
    std::optional<Snapshot> first;
    ASSERT_NO_FATAL_FAILURE(spine_leaf_up(sim, l, false, first));
    ASSERT_NE(first->self.lid, 0);
    std::string out;
    const int rc = lab_detail::run_capture({.argv = {"sminfo", "-s", "3", std::to_string(first->self.lid), "1"},
                                            .env = {{"IBSIM_SOCKNAME", sim.sockname}, {"SIM_HOST", "h5"}, {"LD_PRELOAD", kUmad2sim}},
                                            .cwd = sim.tmp.path(),
                                            .out_path = sim.tmp / "sminfo.err"},
                                           30, out);
    ASSERT_EQ(rc, 0) << read_file(sim.tmp / "sminfo.err");
    std::optional<Snapshot> next;
    std::string line;
    const auto deadline = Clock::now() + 15s;
    while (Clock::now() < deadline && line.find("first sweep as master") == std::string::npos) {
        auto s = l.next_of<Snapshot>(1s);
        if (!s || s->sweep_seq <= first->sweep_seq) continue;
        ASSERT_TRUE(wait_for_text(sim.tmp / "osm.log", "snapshot " + std::to_string(s->sweep_seq) + ":", 5s));
        line = lft_line(sim.log(), s->sweep_seq);
        next = std::move(*s);
    }
    std::printf("[lft] after a handover to the master: %s\n", line.c_str());
    ASSERT_TRUE(next) << sim.log();
    EXPECT_NE(line.find("12 compared: first sweep as master"), std::string::npos) << line << "\n" << sim.log();
    ASSERT_NO_FATAL_FAILURE(expect_same_tables(*next, switch_tables(sim, "h5")));
    EXPECT_TRUE(sim.opensm.stop(5s));
}
