// Fat-tree analysis without a plan: tiers and findings on the real captures and on synthetic trees
// with injected faults (one fault -> exactly the expected findings).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

const char* kSx6036 = "ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
const char* kX5 = "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt";

Fabric load(const std::string& name) {
    std::string path = std::string(IBF_TEST_DATA) + "/" + name;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_dump(ss.str(), path);
}

std::set<std::string> names_in_tier(const Fabric& f, const Analysis& a, int tier) {
    std::set<std::string> s;
    for (const SwitchInfo& si : a.switches)
        if (si.tier == tier) s.insert(display_name(f, a, si.node));
    return s;
}

std::string dump_findings(const Analysis& a) {
    std::string s;
    for (const Finding& f : a.findings) s += std::string(to_string(f.kind)) + ": " + f.message + "\n";
    return s;
}

NodeId node(const Fabric& f, const std::string& name) {
    NodeId n = synth_node(f, name);
    if (n == kNoNode) throw std::runtime_error("no node " + name);
    return n;
}

// ---- the SX6036 capture: 6 leaves, 2 spines, ib1 misses one cable to ib8, storage on ib7 ----

TEST(AnalysisSx6036, TiersAreSixLeavesAndTwoSpines) {
    Fabric f = load(kSx6036);
    Analysis a = analyze(f);
    ASSERT_EQ(a.levels(), 2);
    EXPECT_EQ(names_in_tier(f, a, 1), (std::set<std::string>{"ib1", "ib2", "ib3", "ib4", "ib5", "ib6"}));
    EXPECT_EQ(names_in_tier(f, a, 2), (std::set<std::string>{"ib7", "ib8"}));
    EXPECT_EQ(a.tiers[0].switches, 6);
    EXPECT_EQ(a.tiers[1].switches, 2);
    EXPECT_EQ(a.compute_hosts.size(), 144u);
    EXPECT_EQ(a.tiers[0].up_links, 47);
    EXPECT_EQ(a.tiers[1].hosts, 3);  // tank1 (two ports) and tank2 on ib7
    EXPECT_EQ(a.tiers[0].bundle_sizes, (std::map<int, int>{{3, 1}, {4, 11}}));
}

TEST(AnalysisSx6036, OversubscriptionUsesActualRates) {
    Fabric f = load(kSx6036);
    Analysis a = analyze(f);
    const SwitchInfo* ib1 = a.info(f.find_by_name("ib1").at(0));
    ASSERT_NE(ib1, nullptr);
    EXPECT_EQ(ib1->hosts, 24);
    EXPECT_EQ(ib1->up_links, 7);
    EXPECT_DOUBLE_EQ(ib1->down_gbps, 24 * 32.0);  // 4xQDR hosts
    EXPECT_DOUBLE_EQ(ib1->up_gbps, 7 * 40.0);     // 4xFDR10 uplinks
    EXPECT_NEAR(ib1->oversubscription, 768.0 / 280.0, 1e-9);
    const SwitchInfo* ib2 = a.info(f.find_by_name("ib2").at(0));
    EXPECT_NEAR(ib2->oversubscription, 768.0 / 320.0, 1e-9);
    EXPECT_DOUBLE_EQ(a.bisection_gbps, 47 * 40.0 / 2);
}

TEST(AnalysisSx6036, ReportsExactlyTheMissingUplinkAndTheStorageOnTheSpine) {
    Fabric f = load(kSx6036);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 4u) << dump_findings(a);
    const Finding& m = a.findings[0];
    EXPECT_EQ(m.kind, FindingKind::missing_uplink);
    EXPECT_EQ(m.a.name, "ib1");
    EXPECT_EQ(m.a.port, 25);  // the port every other leaf uses towards ib8
    EXPECT_EQ(m.b.name, "ib8");
    EXPECT_EQ(m.b.port, 6);   // the free port amid ib8's ports for ib1 (2, 4, 8)
    EXPECT_EQ(m.b.guid, 0xf4521403007ea570ULL);
    EXPECT_EQ(m.expected, "4 cables");
    EXPECT_EQ(m.actual, "3 cables");
    std::set<std::string> misplaced;
    for (size_t i = 1; i < a.findings.size(); ++i) {
        EXPECT_EQ(a.findings[i].kind, FindingKind::host_misplaced);
        EXPECT_EQ(a.findings[i].a.name, "ib7");
        EXPECT_EQ(a.findings[i].actual, "spine");
        misplaced.insert(a.findings[i].b.name + "/" + std::to_string(a.findings[i].b.port) + "@" +
                         std::to_string(a.findings[i].a.port));
    }
    EXPECT_EQ(misplaced, (std::set<std::string>{"tank1/1@12", "tank1/2@9", "tank2/2@11"}));
}

// ---- the X5 capture: irregular but consistent ----

TEST(AnalysisX5, TiersIncludeTheHostlessLeaf) {
    Fabric f = load(kX5);
    Analysis a = analyze(f);
    ASSERT_EQ(a.levels(), 2);
    EXPECT_EQ(a.tiers[0].switches, 7);
    EXPECT_EQ(a.tiers[1].switches, 4);
    EXPECT_EQ(a.compute_hosts.size(), 89u);
    EXPECT_EQ(a.tiers[0].bundle_sizes, (std::map<int, int>{{1, 4}, {3, 18}, {6, 2}}));
    // 4036-86A2 has no hosts and only reaches two spines: a host-less leaf, not a core.
    NodeId sw86 = *f.find(0x0008f105001086a2ULL);
    EXPECT_EQ(a.tier_of[sw86], 1);
    EXPECT_EQ(a.info(sw86)->hosts, 0);
    for (Guid spine : {0x0008f10500108098ULL, 0x0008f10500108c5cULL, 0x0008f10500108530ULL, 0x0008f1050010851eULL})
        EXPECT_EQ(a.tier_of[*f.find(spine)], 2) << guid_hex(spine);
}

TEST(AnalysisX5, NoFindingsForConsistentIrregularity) {
    // Bundles of 6, 3 and 1 are each uniform per leaf; the 23 4xDDR hosts are all ConnectX DDR
    // adapters (device 0x6732) and every one of them runs 4xDDR: consistent, not an outlier.
    Fabric f = load(kX5);
    Analysis a = analyze(f);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
}

TEST(AnalysisX5, WithoutAdapterModelsOnlyTheMixedLeafIsAnOutlier) {
    // Without device ids hosts are compared fabric-wide (QDR majority); leaf 0b50 runs all its
    // 21 hosts at DDR (consistent), 4036-8BBA has 2 DDR hosts among 4 QDR: those two are reported.
    Fabric f = load(kX5);
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::CA) f.node(n).device_id = 0;
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 2u) << dump_findings(a);
    std::set<int> ports;
    for (const Finding& x : a.findings) {
        EXPECT_EQ(x.kind, FindingKind::rate_outlier);
        EXPECT_EQ(x.a.guid, 0x0008f10500108bbaULL);
        EXPECT_EQ(x.expected, "4xQDR");
        EXPECT_EQ(x.actual, "4xDDR");
        ports.insert(x.a.port);
    }
    EXPECT_EQ(ports, (std::set<int>{11, 29}));
}

// ---- synthetic trees ----

TEST(AnalysisSynth, CleanTwoLevelTreeHasNoFindings) {
    FatTreeSpec spec{.levels = 2, .radix = 8};
    Fabric f = synth_fat_tree(spec);
    Analysis a = analyze(f);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
    ASSERT_EQ(a.levels(), 2);
    EXPECT_EQ(a.tiers[0].switches, 8);
    EXPECT_EQ(a.tiers[1].switches, 4);
    EXPECT_EQ(a.tiers[0].bundle_sizes, (std::map<int, int>{{1, 32}}));
    EXPECT_DOUBLE_EQ(a.tiers[0].oversub_min, 1.0);
    EXPECT_DOUBLE_EQ(a.tiers[0].oversub_max, 1.0);
    EXPECT_DOUBLE_EQ(a.bisection_gbps, 32 * 200.0 / 2);
}

TEST(AnalysisSynth, CleanThreeLevelTreesHaveNoFindings) {
    for (int hosts : {0, 40, 100}) {
        FatTreeSpec spec{.levels = 3, .radix = 8, .hosts = hosts};
        FatTreeShape shape = fat_tree_shape(spec);
        Fabric f = synth_fat_tree(spec);
        Analysis a = analyze(f);
        EXPECT_TRUE(a.findings.empty()) << hosts << "\n" << dump_findings(a);
        ASSERT_EQ(a.levels(), 3) << hosts;
        EXPECT_EQ(a.tiers[0].switches, shape.leaves);
        EXPECT_EQ(a.tiers[1].switches, shape.spines);
        int cores_used = 0;
        for (const SwitchInfo& s : a.switches) cores_used += s.tier == 3;
        EXPECT_EQ(a.tiers[2].switches, cores_used);
        EXPECT_EQ(static_cast<int>(a.compute_hosts.size()), shape.hosts);
    }
}

TEST(AnalysisSynth, RemovedLeafUplinkIsOneMissingUplink) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    NodeId leaf = node(f, "leaf0003");
    remove_cable(f, leaf, 6);  // -> spine0002, port 4
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    const Finding& m = a.findings[0];
    EXPECT_EQ(m.kind, FindingKind::missing_uplink);
    EXPECT_EQ(m.a.name, "leaf0003");
    EXPECT_EQ(m.a.port, 6);
    EXPECT_EQ(m.b.name, "spine0002");
    EXPECT_EQ(m.expected, "1 cable");
    EXPECT_EQ(m.actual, "0 cables");
}

TEST(AnalysisSynth, RemovedSpineToCoreCableIsOneMissingUplink) {
    Fabric f = synth_fat_tree({.levels = 3, .radix = 8});
    NodeId spine = node(f, "spine0006");  // pod 2, spine 2
    remove_cable(f, spine, 7);            // -> core (2-1)*4+3 = core0007
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::missing_uplink);
    EXPECT_EQ(a.findings[0].a.name, "spine0006");
    EXPECT_EQ(a.findings[0].a.port, 7);
    EXPECT_EQ(a.findings[0].b.name, "core0007");
}

TEST(AnalysisSynth, HalfTheLeavesWithFewerUplinksIsADesign) {
    // leaves 5..8 reach only spines 1 and 2: four alike switches, not four missing-cable faults.
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    for (const char* leaf : {"leaf0005", "leaf0006", "leaf0007", "leaf0008"})
        for (int p : {7, 8}) remove_cable(f, node(f, leaf), p);
    Analysis a = analyze(f);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
    EXPECT_EQ(a.tiers[0].bundle_sizes, (std::map<int, int>{{1, 24}}));
}

TEST(AnalysisSynth, TwoLeavesEachMissingACableAreTwoFindings) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    remove_cable(f, node(f, "leaf0002"), 5);
    remove_cable(f, node(f, "leaf0006"), 8);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 2u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::missing_uplink);
    EXPECT_EQ(a.findings[0].a.name, "leaf0002");
    EXPECT_EQ(a.findings[0].b.name, "spine0001");
    EXPECT_EQ(a.findings[1].a.name, "leaf0006");
    EXPECT_EQ(a.findings[1].b.name, "spine0004");
}

// Two of three leaves each missing one uplink are two faults, not a design: a design group needs at
// least 3 switches with the same uplink count.
TEST(AnalysisSynth, TwoOfThreeLeavesMissingACableAreTwoFindings) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 12});  // 3 leaves, 4 spines
    remove_cable(f, node(f, "leaf0001"), 5);
    remove_cable(f, node(f, "leaf0002"), 6);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 2u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::missing_uplink);
    EXPECT_EQ(a.findings[0].a.name, "leaf0001");
    EXPECT_EQ(a.findings[0].b.name, "spine0001");
    EXPECT_EQ(a.findings[1].kind, FindingKind::missing_uplink);
    EXPECT_EQ(a.findings[1].a.name, "leaf0002");
    EXPECT_EQ(a.findings[1].b.name, "spine0002");
}

TEST(AnalysisSynth, FindingsAreInNaturalOrder) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 24, .hosts = 120});  // leaf0001..leaf0010, 12 spines
    for (NodeId n = 0; n < f.size(); ++n)  // drop the zero padding: leaf1 .. leaf10
        if (f.node(n).type == NodeType::Switch && f.node(n).name.rfind("leaf", 0) == 0)
            f.node(n).description = "MF0;leaf" + std::to_string(std::stoi(f.node(n).name.substr(4))) + ":QM8700/U1", f.node(n).name.clear();
    f.finalize();
    remove_cable(f, node(f, "leaf10"), 13);
    remove_cable(f, node(f, "leaf2"), 13);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 2u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].a.name, "leaf2");
    EXPECT_EQ(a.findings[1].a.name, "leaf10");
}

TEST(AnalysisSynth, SlowIslIsOneRateOutlier) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    NodeId leaf = node(f, "leaf0005");
    set_link_rate(f, leaf, 7, {Width::X4, Speed::DDR});
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::rate_outlier);
    EXPECT_EQ(a.findings[0].a.name, "leaf0005");
    EXPECT_EQ(a.findings[0].a.port, 7);
    EXPECT_EQ(a.findings[0].b.name, "spine0003");
    EXPECT_EQ(a.findings[0].expected, "4xHDR");
    EXPECT_EQ(a.findings[0].actual, "4xDDR");
}

TEST(AnalysisSynth, LeafWithAllUplinksSlowIsConsistent) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    NodeId leaf = node(f, "leaf0005");
    for (int p = 5; p <= 8; ++p) set_link_rate(f, leaf, p, {Width::X4, Speed::EDR});
    Analysis a = analyze(f);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
}

TEST(AnalysisSynth, SlowHostLinkIsOneRateOutlier) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    NodeId host = node(f, "node00010");
    set_link_rate(f, host, 1, {Width::X1, Speed::HDR});
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::rate_outlier);
    EXPECT_EQ(a.findings[0].b.name, "node00010");
    EXPECT_EQ(a.findings[0].a.name, "leaf0003");
    EXPECT_EQ(a.findings[0].actual, "1xHDR");
}

TEST(AnalysisSynth, StorageHostOnSpineIsMisplacedAndSpineStaysSpine) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 24});  // 6 leaves: spines have free ports 7, 8
    NodeId spine = node(f, "spine0001");
    NodeId st = add_host(f, "storage01 mlx5_0", 0x0c42a10400000010ULL, spine, 7);
    f.finalize();
    Analysis a = analyze(f);
    EXPECT_EQ(a.tier_of[spine], 2);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::host_misplaced);
    EXPECT_EQ(a.findings[0].a.name, "spine0001");
    EXPECT_EQ(a.findings[0].a.port, 7);
    EXPECT_EQ(a.findings[0].b.guid, f.node(st).guid);
}

TEST(AnalysisSynth, AggregationNodeIsNotAHost) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 24});
    NodeId spine = node(f, "spine0002");
    add_host(f, "Mellanox Technologies Aggregation Node", 0x0c42a10400000020ULL, spine, 8);
    f.finalize();
    Analysis a = analyze(f);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
    EXPECT_EQ(a.aggregation_nodes.size(), 1u);
    EXPECT_EQ(a.compute_hosts.size(), 24u);
    EXPECT_EQ(a.info(spine)->other_cas, 1);
}

TEST(AnalysisSynth, HostOnUplinkPortIsReported) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    NodeId leaf = node(f, "leaf0002");
    cross_cables(f, leaf, 2, 6);  // host from port 2 to uplink port 6, spine cable to port 2
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::host_on_uplink_port);
    EXPECT_EQ(a.findings[0].a.name, "leaf0002");
    EXPECT_EQ(a.findings[0].a.port, 6);
    EXPECT_EQ(a.findings[0].b.name, "node00006");
}

TEST(AnalysisSynth, CableMovedToAnotherSpineIsOneUnevenBundle) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 24});  // spines have free ports 7, 8
    NodeId leaf = node(f, "leaf0004");
    NodeId spine1 = node(f, "spine0001");
    // leaf0004 port 6 went to spine0002; plug it into spine0001 instead.
    f.disconnect(leaf, 6);
    f.connect(leaf, 6, spine1, 7);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::uneven_bundle);
    EXPECT_EQ(a.findings[0].a.name, "leaf0004");
    EXPECT_EQ(a.findings[0].b.name, "spine0001");
    EXPECT_EQ(a.findings[0].expected, "1 cable");
    EXPECT_EQ(a.findings[0].actual, "2 cables");
    EXPECT_NE(a.findings[0].message.find("spine0002"), std::string::npos);
}

TEST(AnalysisSynth, LeafToLeafCableIsIntraTier) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 30});  // leaf0008 has free host ports 3, 4
    NodeId l8 = node(f, "leaf0008");
    NodeId l1 = node(f, "leaf0001");
    remove_cable(f, l1, 4);  // free a host port on leaf0001 (node00004 goes away from the fabric)
    f.connect(l1, 4, l8, 3);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::intra_tier_link);
    EXPECT_EQ(a.tier_of[l1], 1);
    EXPECT_EQ(a.tier_of[l8], 1);
}

TEST(AnalysisSynth, LeafToCoreCableIsTierSkip) {
    Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});  // 10 leaves, 3 pods: cores have free ports
    NodeId leaf = node(f, "leaf0010");  // pod 3, leaf 2: host ports 1..4 hold nothing? (hosts 37..40 on leaf 10)
    NodeId core = node(f, "core0001");
    remove_cable(f, leaf, 4);
    f.connect(leaf, 4, core, 8);
    Analysis a = analyze(f);
    EXPECT_EQ(a.tier_of[core], 3);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    EXPECT_EQ(a.findings[0].kind, FindingKind::tier_skip);
    EXPECT_EQ(a.findings[0].a.name, "leaf0010");
    EXPECT_EQ(a.findings[0].b.name, "core0001");
}

TEST(AnalysisSynth, HostlessLeafStaysALeaf) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 28});  // leaf0007 holds hosts 25..28
    NodeId leaf = node(f, "leaf0007");
    for (int p = 1; p <= 4; ++p) remove_cable(f, leaf, p);
    Analysis a = analyze(f);
    EXPECT_EQ(a.tier_of[leaf], 1);
    EXPECT_EQ(a.levels(), 2);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
}

TEST(AnalysisSharp, AggregationNodesAreNotHostsAndTheDegradedHostIsAnOutlier) {
    Fabric f = load("synthetic-ibnetdiscover-hdr-sharp.txt");
    Analysis a = analyze(f);
    EXPECT_EQ(a.aggregation_nodes.size(), 2u);
    EXPECT_EQ(a.compute_hosts.size(), 3u);
    ASSERT_EQ(a.levels(), 2);
    EXPECT_EQ(a.tier_of[f.find_by_name("spine01").at(0)], 2);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    // two ConnectX6 (device 0x101b): one at 4xHDR, one at 4xEDR; the 2xNDR host is another model.
    EXPECT_EQ(a.findings[0].kind, FindingKind::rate_outlier);
    EXPECT_EQ(a.findings[0].a.name, "leaf01");
    EXPECT_EQ(a.findings[0].a.port, 2);
    EXPECT_EQ(a.findings[0].expected, "4xHDR");
    EXPECT_EQ(a.findings[0].actual, "4xEDR");
}

// A director: 4 line-card ASICs (hosts on three of them) and 2 spine ASICs in one chassis.
Fabric director() {
    Fabric f;
    std::vector<NodeId> line, spine;
    for (int i = 1; i <= 4; ++i) {
        char d[64];
        std::snprintf(d, sizeof d, "MF0;dir01:CS7500/L%02d/U1", i);
        line.push_back(f.add_node({.type = NodeType::Switch, .guid = 0x100u + i, .system_guid = 0x1000, .description = d}, 8));
    }
    for (int i = 1; i <= 2; ++i) {
        char d[64];
        std::snprintf(d, sizeof d, "MF0;dir01:CS7500/S%02d/U1", i);
        spine.push_back(f.add_node({.type = NodeType::Switch, .guid = 0x200u + i, .system_guid = 0x1000, .description = d}, 8));
    }
    int hostno = 0;
    for (int l = 0; l < 4; ++l) {
        for (int s = 0; s < 2; ++s)
            for (int c = 0; c < 2; ++c) f.connect(line[l], 5 + s * 2 + c, spine[s], 1 + l * 2 + c);
        if (l == 3) continue;
        for (int p = 1; p <= 4; ++p) {
            ++hostno;
            NodeId h = f.add_node({.type = NodeType::CA, .guid = 0x5000u + hostno, .description = "cn" + std::to_string(hostno) + " mlx5_0"}, 1);
            f.connect(line[l], p, h, 1);
        }
    }
    for (NodeId n = 0; n < f.size(); ++n)
        for (Port& p : f.node(n).ports)
            if (p.linked()) p.width_active = Width::X4, p.speed_active = Speed::HDR;
    f.finalize();
    return f;
}

TEST(AnalysisChassis, LineCardWithoutHostsStaysALeafAndAsicsGetChassisNames) {
    Fabric f = director();
    Analysis a = analyze(f);
    EXPECT_EQ(a.levels(), 2);
    NodeId l4 = *f.find(0x104);
    EXPECT_EQ(a.tier_of[l4], 1);
    EXPECT_EQ(a.tier_of[*f.find(0x201)], 2);
    EXPECT_EQ(a.info(l4)->chassis, "0x0000000000001000");
    EXPECT_EQ(display_name(f, a, l4), "dir01/L04/U1");
    EXPECT_EQ(a.tiers[0].bundle_sizes, (std::map<int, int>{{2, 8}}));
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
}

// Half the uplinks gone, as a whole bundle: L01 keeps its 2 cables to S01 and loses both to S02. Half
// is not "less than half the usual uplinks" (a design), so it is one missing_uplink for the bundle.
TEST(AnalysisChassis, LeafLosingExactlyHalfItsUplinksAsABundleIsOneMissingUplink) {
    Fabric f = director();
    NodeId l1 = *f.find(0x101);
    remove_cable(f, l1, 7);
    remove_cable(f, l1, 8);
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << dump_findings(a);
    const Finding& m = a.findings[0];
    EXPECT_EQ(m.kind, FindingKind::missing_uplink);
    EXPECT_EQ(m.a.guid, 0x101u);
    EXPECT_EQ(m.a.port, 0);  // two cables missing, two free ports: no single port to name
    EXPECT_EQ(m.b.guid, 0x202u);
    EXPECT_EQ(m.b.port, 0);
    EXPECT_EQ(m.expected, "2 cables");
    EXPECT_EQ(m.actual, "0 cables");
    EXPECT_NE(m.message.find("(2 uplinks instead of 4): 2 cables are likely missing"), std::string::npos) << m.message;
}

// Tier refinement moves a switch up only when strictly more of its switch links stay in its tier than
// go down: 3 leaves below and 3 cables to the other spine is a tie (both stay spines, the cables are
// intra-tier); 4 cables to the other spine make spine0001 the upper tier.
TEST(AnalysisSynth, TierRefinementTieKeepsTheTier) {
    for (int cross : {3, 4}) {
        SCOPED_TRACE(std::to_string(cross) + " spine-to-spine cables");
        Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 12});  // 3 leaves: spine ports 1..3
        NodeId s1 = node(f, "spine0001"), s2 = node(f, "spine0002");
        for (int k = 0; k < cross; ++k) f.connect(s1, 4 + k, s2, 4 + k);
        f.finalize();
        Analysis a = analyze(f);
        EXPECT_EQ(a.tier_of[node(f, "leaf0001")], 1);
        EXPECT_EQ(a.tier_of[s2], 2);
        EXPECT_EQ(a.tier_of[s1], cross == 3 ? 2 : 3);
        EXPECT_EQ(a.levels(), cross == 3 ? 2 : 3);
        if (cross == 3) {  // each spine-to-spine cable is one intra-tier link
            int intra = 0;
            for (const Finding& x : a.findings) intra += x.kind == FindingKind::intra_tier_link;
            EXPECT_EQ(intra, 3) << dump_findings(a);
        }
    }
}

TEST(AnalysisSynth, HostlessLeafInAThreeLevelTreeIsNotACore) {
    Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 100});  // 25 leaves in 7 pods
    NodeId leaf = node(f, "leaf0006");                                     // pod 2, hosts 21..24
    for (int p = 1; p <= 4; ++p) remove_cable(f, leaf, p);
    Analysis a = analyze(f);
    EXPECT_EQ(a.tier_of[leaf], 1);
    EXPECT_EQ(a.tier_of[node(f, "core0001")], 3);
    EXPECT_EQ(a.levels(), 3);
    EXPECT_TRUE(a.findings.empty()) << dump_findings(a);
}

TEST(AnalysisJson, HasTiersAndSwitches) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 4});
    Analysis a = analyze(f);
    nlohmann::json j = analysis_to_json(f, a);
    EXPECT_EQ(j["levels"], 2);
    ASSERT_EQ(j["tiers"].size(), 2u);
    EXPECT_EQ(j["tiers"][0]["name"], "leaf");
    EXPECT_EQ(j["tiers"][0]["bundle_sizes"]["1"], 8);
    EXPECT_EQ(j["switches"].size(), 6u);
    EXPECT_EQ(j["switches"][0]["guid"].get<std::string>().substr(0, 2), "0x");
    EXPECT_NE(render_tier_table(f, a).find("leaf"), std::string::npos);
}

}  // namespace
}  // namespace ibf
