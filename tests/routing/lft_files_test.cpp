// LFT balance on synthetic forwarding tables, and the ftree guid files / node-name-map.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/ftree_files.h"
#include "ibf/lft.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// An LFT for `sw` that sends every host below it down and spreads the others over `ports`
// in the given order (round robin).
SwitchLft table_for(const Fabric& f, NodeId sw, const std::vector<int>& ports) {
    std::vector<uint8_t> t(64, 255);
    size_t next = 0;
    for (NodeId n = 0; n < f.size(); ++n) {
        const Node& node = f.node(n);
        if (node.type != NodeType::CA) continue;
        const Port* p = node.port(1);
        if (!p || p->lid == 0) throw std::runtime_error("host without LID");
        if (p->peer == sw) t[p->lid] = p->peer_port;
        else t[p->lid] = static_cast<uint8_t>(ports[next++ % ports.size()]);
    }
    return SwitchLft(f.node(sw).guid, std::move(t));
}

TEST(LftBalance, RoundRobinOverUplinksIsBalanced) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});  // leaves: hosts on 1..4, uplinks 5..8
    Analysis a = analyze(f);
    NodeId leaf = synth_node(f, "leaf0001");
    LftReport r = lft_balance(f, a, {table_for(f, leaf, {5, 6, 7, 8})});
    ASSERT_EQ(r.switches.size(), 1u);
    const LftBalance& b = r.switches[0];
    ASSERT_EQ(b.up_ports.size(), 4u);
    EXPECT_EQ(b.up_ports[0].port, 5);
    EXPECT_EQ(b.up_ports[0].peer, synth_node(f, "spine0001"));
    EXPECT_EQ(b.min_routes, 7);  // 28 hosts elsewhere over 4 uplinks
    EXPECT_EQ(b.max_routes, 7);
    EXPECT_DOUBLE_EQ(b.mean, 7.0);
    EXPECT_FALSE(b.imbalanced);
    EXPECT_TRUE(r.findings.empty());
}

TEST(LftBalance, SkewedTableIsOneFinding) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    Analysis a = analyze(f);
    NodeId leaf = synth_node(f, "leaf0002");
    // port 5 gets 3 of every 4 destinations: 21, 7, 0, 0 routes.
    LftReport r = lft_balance(f, a, {table_for(f, leaf, {5, 5, 5, 6}), table_for(f, synth_node(f, "leaf0003"), {5, 6, 7, 8})});
    ASSERT_EQ(r.switches.size(), 2u);
    EXPECT_TRUE(r.switches[0].imbalanced);
    EXPECT_EQ(r.switches[0].max_routes, 21);
    EXPECT_EQ(r.switches[0].min_routes, 0);
    EXPECT_FALSE(r.switches[1].imbalanced);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].kind, FindingKind::lft_imbalance);
    EXPECT_EQ(r.findings[0].a.name, "leaf0002");
    EXPECT_EQ(r.findings[0].a.port, 5);
    EXPECT_EQ(r.findings[0].b.name, "spine0001");
}

TEST(LftBalance, OffByOneIsBalancedAndUnknownSwitchesAreIgnored) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 30});  // 26 or so hosts elsewhere: 7,7,6,6
    Analysis a = analyze(f);
    NodeId leaf = synth_node(f, "leaf0001");
    SwitchLft stray(0xdeadbeef, std::vector<uint8_t>(10, 1));
    LftReport r = lft_balance(f, a, {table_for(f, leaf, {5, 6, 7, 8}), stray});
    ASSERT_EQ(r.switches.size(), 1u);
    EXPECT_EQ(r.switches[0].max_routes - r.switches[0].min_routes, 1);
    EXPECT_TRUE(r.findings.empty());
}

// The LFT balance, in one report, of every switch in `r` (what the tests compare).
std::string balance_text(const LftReport& r) {
    std::string out;
    for (const LftBalance& b : r.switches) {
        out += std::to_string(b.node) + ":" + std::to_string(b.min_routes) + "-" + std::to_string(b.max_routes) + (b.imbalanced ? "!" : "") + "[";
        for (const PortLoad& pl : b.up_ports) out += std::to_string(pl.port) + "=" + std::to_string(pl.routes) + " ";
        out += "] ";
    }
    for (const Finding& fd : r.findings) out += fd.a.name + "/" + std::to_string(fd.a.port) + " " + fd.message + "\n";
    return out;
}

// Kept between sweeps (the daemon's re-routes): only the changed tables are counted again, and
// the report is lft_balance's, unbalanced leaves and mended ones included.
TEST(LftBalance, AKeptBalanceRecountsOnlyChangedTablesAndGivesTheFullReport) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    Analysis a = analyze(f);
    std::vector<SwitchLft> lfts;
    for (int i = 1; i <= 8; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "leaf%04d", i);
        lfts.push_back(table_for(f, synth_node(f, name), {5, 6, 7, 8}));
    }
    LftBalanceKeep keep;
    EXPECT_EQ(balance_text(lft_balance(f, a, lfts, {}, keep)), balance_text(lft_balance(f, a, lfts)));
    EXPECT_EQ(keep.recounted.size(), lfts.size());
    EXPECT_EQ(balance_text(lft_balance(f, a, lfts, {}, keep)), balance_text(lft_balance(f, a, lfts)));
    EXPECT_TRUE(keep.recounted.empty()) << "nothing changed";

    const SwitchLft balanced = lfts[2];
    lfts[2] = table_for(f, synth_node(f, "leaf0003"), {5, 5, 5, 6});  // unbalanced
    LftReport r = lft_balance(f, a, lfts, {}, keep);
    EXPECT_EQ(keep.recounted, std::vector<size_t>{2});
    EXPECT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(balance_text(r), balance_text(lft_balance(f, a, lfts)));

    lfts[2] = balanced;  // mended; and leaf0006 moves one entry
    lfts[5].edit([](std::vector<uint8_t>& t) { t[1] = t[1] == 5 ? 6 : 5; });
    r = lft_balance(f, a, lfts, {}, keep);
    EXPECT_EQ(keep.recounted, (std::vector<size_t>{2, 5}));
    EXPECT_TRUE(r.findings.empty());
    EXPECT_EQ(balance_text(r), balance_text(lft_balance(f, a, lfts)));
}

TEST(FtreeFiles, TwoLevelRootsAreSpinesAndComputeNodesAreHostPorts) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 4});  // 4 leaves, 2 spines, 8 hosts
    Analysis a = analyze(f);
    FtreeFiles files = ftree_files(f, a);
    EXPECT_EQ(lines(files.root_guids), (std::vector<std::string>{"0x7cfe900302000001", "0x7cfe900302000002"}));
    std::vector<std::string> cn = lines(files.cn_guids);
    ASSERT_EQ(cn.size(), 8u);
    EXPECT_EQ(cn[0], "0x0c42a10300000011");  // host 1: node GUID base | 1 << 4, port GUID + 1
    EXPECT_EQ(cn[7], "0x0c42a10300000081");
    EXPECT_EQ(files.roots, 2);
    EXPECT_EQ(files.compute_ports, 8);
    EXPECT_EQ(files.skipped_ports, 0);
}

TEST(FtreeFiles, ThreeLevelRootsAreCores) {
    Fabric f = synth_fat_tree({.levels = 3, .radix = 4});  // 4 cores
    Analysis a = analyze(f);
    FtreeFiles files = ftree_files(f, a);
    std::vector<std::string> roots = lines(files.root_guids);
    ASSERT_EQ(roots.size(), 4u);
    for (const std::string& r : roots) EXPECT_EQ(r.substr(0, 12), "0x7cfe900303") << r;  // tier 3
}

TEST(FtreeFiles, StorageOnSpineIsNotAComputeNodeAndNameMapParses) {
    std::ifstream in(std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    Fabric f = parse_dump(ss.str(), "sx6036");
    Analysis a = analyze(f);
    FtreeFiles files = ftree_files(f, a);
    EXPECT_EQ(lines(files.root_guids), (std::vector<std::string>{"0xf4521403007ea570", "0xf4521403007eaa70"}));
    EXPECT_EQ(files.compute_ports, 142);  // 145 host links minus tank1 x2 and tank2 on spine ib7
    EXPECT_EQ(files.cn_guids.find("0xf452140300081a21"), std::string::npos);  // tank1 port 1
    EXPECT_NE(files.cn_guids.find("0x24be05ffff985d91"), std::string::npos);  // stage97
    NodeNameMap map = parse_node_name_map(files.node_name_map, "map");
    EXPECT_EQ(map.at(0xf452140300115da0ULL), "ib1");
    EXPECT_EQ(map.at(0x24be05ffff985d90ULL), "stage97 mlx4_0");
}

TEST(FtreeFiles, NonUniqueSwitchNamesGetTierNames) {
    std::ifstream in(std::string(IBF_TEST_DATA) + "/ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    Fabric f = parse_dump(ss.str(), "x5");
    Analysis a = analyze(f);
    NodeNameMap map = parse_node_name_map(ftree_files(f, a).node_name_map, "map");
    EXPECT_EQ(map.at(0x0008f10500108098ULL), "spine-8098");
    EXPECT_EQ(map.at(0x0008f10500200b50ULL), "leaf-0b50");
    EXPECT_EQ(map.size(), 11u);  // the 89 CAs share one description: not named
}

// Complete up/down tables for a synthetic tree: a switch sends a host below it down its own
// port, a host elsewhere up (leaves, round robin over `up`) or down towards the host's leaf.
std::vector<SwitchLft> full_tables(const Fabric& f, const Analysis& a) {
    std::vector<SwitchLft> out;
    for (NodeId sw = 0; sw < f.size(); ++sw) {
        if (f.node(sw).type != NodeType::Switch) continue;
        std::vector<int> up;
        for (const Bundle& b : a.info(sw)->up_bundles) up.insert(up.end(), b.ports.begin(), b.ports.end());
        std::vector<uint8_t> t(64, 255);
        size_t next = 0;
        for (NodeId n = 0; n < f.size(); ++n) {
            const Port* p = f.node(n).type == NodeType::CA ? f.node(n).port(1) : nullptr;
            if (!p || !p->linked()) continue;
            if (p->peer == sw) { t[p->lid] = p->peer_port; continue; }
            int down = 0;
            for (const Port& q : f.node(sw).ports)
                if (q.valid && q.linked() && q.peer == p->peer) { down = q.num; break; }
            t[p->lid] = static_cast<uint8_t>(down ? down : up[next++ % up.size()]);
        }
        out.emplace_back(f.node(sw).guid, std::move(t));
    }
    return out;
}

TEST(LftPaths, UpDownTablesReachEveryHostWithinThreeHops) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    Analysis a = analyze(f);
    auto tables = full_tables(f, a);
    LftPaths p = lft_paths(f, tables);
    const long switches = static_cast<long>(f.count(NodeType::Switch)), hosts = static_cast<long>(a.compute_hosts.size());
    EXPECT_EQ(p.routes, switches * hosts);
    EXPECT_EQ(p.broken, 0);
    EXPECT_EQ(p.unrouted, 0);
    EXPECT_EQ(p.max_hops, 3);  // leaf -> spine -> leaf -> host
    ASSERT_EQ(p.hop_histogram.size(), 4u);
    EXPECT_EQ(p.hop_histogram[1], hosts);  // every host from its own leaf
}

TEST(LftPaths, DeadEndsLoopsAndMissingEntriesAreCounted) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    Analysis a = analyze(f);
    auto tables = full_tables(f, a);
    NodeId h = synth_node(f, "leaf0001");  // a leaf; its first host:
    const Port* hp = nullptr;
    for (const Port& q : f.node(h).ports)
        if (q.valid && q.linked() && f.node(q.peer).type == NodeType::CA) { hp = f.node(q.peer).port(q.peer_port); break; }
    ASSERT_NE(hp, nullptr);
    const uint16_t lid = hp->lid;
    SwitchLft* leaf = nullptr;
    for (SwitchLft& t : tables)
        if (t.switch_guid == f.node(h).guid) leaf = &t;
    ASSERT_NE(leaf, nullptr);
    // The host's own leaf sends it back up: every spine bounces it down again (a loop), and every
    // other leaf reaches it only through that loop.
    const int up_port = a.info(h)->up_bundles[0].ports[0];
    leaf->edit([&](std::vector<uint8_t>& t) { t[lid] = static_cast<uint8_t>(up_port); });
    LftPaths p = lft_paths(f, tables);
    const long switches = static_cast<long>(f.count(NodeType::Switch)), hosts = static_cast<long>(a.compute_hosts.size());
    EXPECT_EQ(p.broken, switches);
    EXPECT_EQ(p.routes, switches * (hosts - 1));
    // No path at the first switch is unrouted, not broken.
    leaf->edit([&](std::vector<uint8_t>& t) { t[lid] = 255; });
    p = lft_paths(f, tables);
    EXPECT_EQ(p.unrouted, 1);
    EXPECT_EQ(p.broken, switches - 1);  // the others lead into the leaf's empty entry
}

}  // namespace
}  // namespace ibf
