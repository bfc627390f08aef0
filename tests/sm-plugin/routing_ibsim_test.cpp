// Routing, live: real OpenSM 3.3.23 on ibsim with libibfabric_osm.so. A fat tree routed by ftree
// with the guid files `ibfabric routing-files` wrote from a dump of the same fabric: the snapshot
// says ftree (as configured) and carries every switch's LFT, whose host entries lead to the hosts.
// Then a tree ftree refuses (a host on a spine, no guid files): OpenSM falls back and the snapshot
// says so (used engine != configured). Label: integration. Own ibsim (unique IBSIM_SOCKNAME) and
// opensm per test, in a temp dir, killed by pid.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <random>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/lft.h"
#include "ibf/synth.h"
#include "test_proc.h"

using namespace ibf;
using namespace ibf::test;

namespace {

const std::string kUmad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

std::string unique_simname() {
    std::random_device rd;
    return "ibfrt" + std::to_string(::getpid()) + "x" + std::to_string(rd() % 1000000);
}

bool have_tools() {
    return ::access("/usr/bin/ibsim", X_OK) == 0 && ::access("/usr/sbin/opensm", X_OK) == 0 &&
           ::access(kUmad2sim.c_str(), R_OK) == 0 &&
           ::access((std::string(IBF_BIN_DIR) + "/../lib/libibfabric_osm.so").c_str(), R_OK) == 0 &&
           ::access((std::string(IBF_BIN_DIR) + "/ibfabric").c_str(), X_OK) == 0;
}

struct Sim {
    TempDir tmp;
    std::string simname = unique_simname();
    Child ibsim, opensm;
    ~Sim() {
        opensm.kill_now();
        ibsim.kill_now();
    }
    void start_ibsim(const std::string& net, const std::vector<std::string>& extra = {}) {
        write_file(tmp / "net", net);
        std::vector<std::string> argv = {"ibsim", "-s", "-n"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        argv.push_back(tmp / "net");
        ibsim = Child(argv, {"IBSIM_SOCKNAME=" + simname}, tmp.path(), tmp / "ibsim.out");
        ASSERT_TRUE(wait_for_text(tmp / "ibsim.out", "Network simulator ready", 10s)) << read_file(tmp / "ibsim.out");
    }
    void start_opensm(const std::string& host, const std::string& conf, const std::string& plugin_options = "") {
        write_file(tmp / "opensm.conf", "event_plugin_name ibfabric_osm\nevent_plugin_options socket=" + (tmp / "s.sock") +
                                            " log=debug " + plugin_options + "\nforce_log_flush TRUE\n" + conf);
        opensm = Child({"opensm", "-F", tmp / "opensm.conf", "-f", tmp / "osm.log", "-e"},
                       {"IBSIM_SOCKNAME=" + simname, "SIM_HOST=" + host, "OSM_TMP_DIR=" + tmp.path(),
                        "OSM_CACHE_DIR=" + tmp.path(), "LD_LIBRARY_PATH=" + std::string(IBF_BIN_DIR) + "/../lib",
                        "LD_PRELOAD=" + kUmad2sim},
                       tmp.path(), tmp / "opensm.out");
    }
    std::string log() { return read_file(tmp / "osm.log"); }
};

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
                ASSERT_LT(p.lid, t.port_by_lid.size()) << sw.name;
                const int out = t.port_by_lid[p.lid];
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

// A plain ibsim net: 4 spines, 8 leaves with 3 hosts each (leaf ports 1..3 hosts, 5..8 spines),
// plus, when `host_on_spine`, one more host "hx" on spine0 port 9 (ftree: not a fat-tree).
// A 2-level tree of `radix`-port switches, full: radix leaves with radix/2 hosts, radix/2 spines.
std::string full_tree_net(int radix) {
    const int h = radix / 2;
    std::string net;
    for (int s = 0; s < h; ++s) {
        net += "Switch " + std::to_string(radix) + " \"spine" + std::to_string(s) + "\"\n";
        for (int l = 0; l < radix; ++l)
            net += "[" + std::to_string(l + 1) + "] \"leaf" + std::to_string(l) + "\"[" + std::to_string(h + 1 + s) + "]\n";
        net += "\n";
    }
    for (int l = 0; l < radix; ++l) {
        net += "Switch " + std::to_string(radix) + " \"leaf" + std::to_string(l) + "\"\n";
        for (int i = 0; i < h; ++i) net += "[" + std::to_string(i + 1) + "] \"h" + std::to_string(l * h + i) + "\"[1]\n";
        for (int s = 0; s < h; ++s)
            net += "[" + std::to_string(h + 1 + s) + "] \"spine" + std::to_string(s) + "\"[" + std::to_string(l + 1) + "]\n";
        net += "\n";
    }
    for (int i = 0; i < radix * h; ++i)
        net += "Hca 1 \"h" + std::to_string(i) + "\"\n[1] \"leaf" + std::to_string(i / h) + "\"[" + std::to_string(i % h + 1) + "]\n\n";
    return net;
}

std::string plain_net(bool host_on_spine) {
    std::string net;
    for (int s = 0; s < 4; ++s) {
        const bool extra = host_on_spine && s == 0;
        net += "Switch " + std::to_string(extra ? 9 : 8) + " \"spine" + std::to_string(s) + "\"\n";
        for (int l = 0; l < 8; ++l) net += "[" + std::to_string(l + 1) + "] \"leaf" + std::to_string(l) + "\"[" + std::to_string(5 + s) + "]\n";
        if (extra) net += "[9] \"hx\"[1]\n";
        net += "\n";
    }
    for (int l = 0; l < 8; ++l) {
        net += "Switch 8 \"leaf" + std::to_string(l) + "\"\n";
        for (int h = 0; h < 3; ++h) net += "[" + std::to_string(h + 1) + "] \"h" + std::to_string(l * 3 + h) + "\"[1]\n";
        for (int s = 0; s < 4; ++s) net += "[" + std::to_string(5 + s) + "] \"spine" + std::to_string(s) + "\"[" + std::to_string(l + 1) + "]\n";
        net += "\n";
    }
    for (int i = 0; i < 24; ++i) net += "Hca 1 \"h" + std::to_string(i) + "\"\n[1] \"leaf" + std::to_string(i / 3) + "\"[" + std::to_string(i % 3 + 1) + "]\n\n";
    if (host_on_spine) net += "Hca 1 \"hx\"\n[1] \"spine0\"[9]\n\n";
    return net;
}

}  // namespace

TEST(RoutingOnIbsim, FtreeWithGeneratedGuidFilesIsUsedAndItsLftsReachEveryHost) {
    if (!have_tools()) GTEST_SKIP() << "ibsim/opensm/umad2sim, the built plugin or the ibfabric CLI missing";
    Sim sim;
    // The fabric as an ibnetdiscover dump: ibsim simulates it, routing-files reads the same file.
    const Fabric planned = synth_fat_tree({.levels = 2, .radix = 8});  // 8 leaves x 4 hosts, 4 spines
    const std::string dump = write_ibnetdiscover(planned);
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(dump));
    const std::string files = sim.tmp / "ftree";
    const std::string cmd = "timeout 30 " + std::string(IBF_BIN_DIR) + "/ibfabric routing-files " + (sim.tmp / "net") +
                            " --out-dir " + files + " > " + (sim.tmp / "rf.out") + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(sim.tmp / "rf.out");
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
    Listener l(sim.tmp / "s.sock");
    sim.start_opensm(host, "routing_engine ftree\nroot_guid_file " + files + "/root_guid_file\ncn_guid_file " + files +
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
    if (!have_tools()) GTEST_SKIP() << "ibsim/opensm/umad2sim, the built plugin or the ibfabric CLI missing";
    Sim sim;
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(plain_net(true)));
    Listener l(sim.tmp / "s.sock");
    sim.start_opensm("h0", "routing_engine ftree\n");
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
    if (!have_tools()) GTEST_SKIP() << "ibsim/opensm/umad2sim, the built plugin or the ibfabric CLI missing";
    Sim sim;
    ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(plain_net(false)));
    Listener l(sim.tmp / "s.sock");
    sim.start_opensm("h0", "", "lft=0");
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
    if (!have_tools()) GTEST_SKIP() << "ibsim/opensm/umad2sim, the built plugin or the ibfabric CLI missing";
    const std::string net = full_tree_net(64);
    std::vector<uint64_t> with_us, without_us;
    std::optional<Snapshot> full;
    for (int run = 0; run < 4; ++run) {
        const bool lft = run % 2 == 0;
        Sim sim;
        ASSERT_NO_FATAL_FAILURE(sim.start_ibsim(net, {"-N", "4096"}));
        Listener l(sim.tmp / "s.sock");
        sim.start_opensm("h0", "", lft ? "lft=1" : "lft=0");
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
                with.size(), without.size(), with.size() - without.size(), full->lfts[0].port_by_lid.size(),
                decode_ms(with), decode_ms(without));
    EXPECT_LT(with_us[0], 200'000u);  // generous bound for a shared CI box
}
