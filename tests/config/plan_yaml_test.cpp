// YAML plans: patterns, compact fat-tree expansion (the port rule of docs/plan.md), explicit
// cables, mixed plans, rates/MTUs/labels, node identities, and the example files.
#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <ctime>
#include <set>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"
#include "plan_test_util.h"

using namespace ibf;
using namespace ibf::test;

TEST(NamePattern, ZeroPaddedRange) {
    auto v = expand_name_pattern("leaf[01-18]");
    ASSERT_EQ(v.size(), 18u);
    EXPECT_EQ(v.front(), "leaf01");
    EXPECT_EQ(v[8], "leaf09");
    EXPECT_EQ(v.back(), "leaf18");
    auto w = expand_name_pattern("node[001-324]");
    ASSERT_EQ(w.size(), 324u);
    EXPECT_EQ(w[0], "node001");
    EXPECT_EQ(w[99], "node100");
}

TEST(NamePattern, UnpaddedListsProductsAndPlainNames) {
    EXPECT_EQ(expand_name_pattern("sw[8-11]"), (std::vector<std::string>{"sw8", "sw9", "sw10", "sw11"}));
    EXPECT_EQ(expand_name_pattern("sw[1-2,5]"), (std::vector<std::string>{"sw1", "sw2", "sw5"}));
    EXPECT_EQ(expand_name_pattern("r[1-2]n[01-02]-ib"),
              (std::vector<std::string>{"r1n01-ib", "r1n02-ib", "r2n01-ib", "r2n02-ib"}));
    EXPECT_EQ(expand_name_pattern("mgmt01"), (std::vector<std::string>{"mgmt01"}));
}

TEST(NamePattern, ErrorsNamePositionInsideThePattern) {
    try {
        expand_name_pattern("leaf[01-1x]", "p.yaml", 3, 12);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 3);
        EXPECT_EQ(e.column(), 17);  // the range inside the brackets
        EXPECT_NE(e.message().find("bad range"), std::string::npos) << e.what();
    }
    EXPECT_THROW(expand_name_pattern("leaf[18-01]"), InputError);
    EXPECT_THROW(expand_name_pattern("leaf[01-18"), InputError);
    EXPECT_THROW(expand_name_pattern("leaf]"), InputError);
    EXPECT_THROW(expand_name_pattern("leaf[]"), InputError);
    EXPECT_THROW(expand_name_pattern(""), InputError);
    EXPECT_THROW(expand_name_pattern("n[1-999999999]"), InputError);  // beyond the size limit
}

TEST(Example324, CountsRatesAndMtu) {
    const std::string path = example_path("fat-tree-2tier-324.yaml");
    Plan p = load_plan(read_file(path), path);
    EXPECT_EQ(p.source, path);
    EXPECT_EQ(count_type(p, NodeType::CA), 324u);
    EXPECT_EQ(count_type(p, NodeType::Switch), 27u);
    size_t leaves = 0, spines = 0;
    for (const auto& n : p.nodes) {
        leaves += n.tier == "leaf";
        spines += n.tier == "spine";
        EXPECT_LE(n.name.size(), 20u);
        if (n.type == NodeType::Switch) { EXPECT_EQ(n.num_ports, 36); }
        if (n.type == NodeType::CA) { EXPECT_EQ(n.hca, "mlx5_0"); }
    }
    EXPECT_EQ(leaves, 18u);
    EXPECT_EQ(spines, 9u);
    ASSERT_EQ(p.links.size(), 324u + 18u * 18u);
    for (const auto& l : p.links) {
        ASSERT_TRUE(l.rate.has_value());
        EXPECT_EQ(to_string(*l.rate), "4xEDR");
        EXPECT_EQ(l.mtu, 4096);
    }
}

TEST(Example324, CablesFollowTheDocumentedRule) {
    const std::string path = example_path("fat-tree-2tier-324.yaml");
    auto m = peer_map(parse_plan_yaml(read_file(path), path));
    // leaf L (0-based) up port 19+k -> spine k/2, spine port 2L + k%2 + 1.
    EXPECT_EQ(m.at("leaf01/19"), "spine01/1");
    EXPECT_EQ(m.at("leaf01/20"), "spine01/2");
    EXPECT_EQ(m.at("leaf01/21"), "spine02/1");
    EXPECT_EQ(m.at("leaf01/36"), "spine09/2");
    EXPECT_EQ(m.at("leaf03/19"), "spine01/5");
    EXPECT_EQ(m.at("leaf03/24"), "spine03/6");
    EXPECT_EQ(m.at("leaf18/35"), "spine09/35");
    EXPECT_EQ(m.at("leaf18/36"), "spine09/36");
    EXPECT_EQ(m.at("node001:mlx5_0/1"), "leaf01/1");
    EXPECT_EQ(m.at("node018:mlx5_0/1"), "leaf01/18");
    EXPECT_EQ(m.at("node019:mlx5_0/1"), "leaf02/1");
    EXPECT_EQ(m.at("node324:mlx5_0/1"), "leaf18/18");
    // Every spine port used exactly once.
    for (int s = 1; s <= 9; ++s)
        for (int port = 1; port <= 36; ++port) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "spine%02d/%d", s, port);
            EXPECT_TRUE(m.count(buf)) << buf;
        }
}

TEST(SmallExample, BothFormsLabelsAndOverrides) {
    const std::string path = example_path("small-plan.yaml");
    Plan p = load_plan(read_file(path), path);
    EXPECT_EQ(count_type(p, NodeType::Switch), 6u);
    EXPECT_EQ(count_type(p, NodeType::CA), 10u);  // node01..08 + storage01 (two HCAs)
    EXPECT_EQ(p.links.size(), 4u * 4u + 8u + 2u);
    auto m = peer_map(p);
    EXPECT_EQ(m.at("leaf02/19"), "spine01/3");
    EXPECT_EQ(m.at("leaf02/20"), "spine01/4");
    EXPECT_EQ(m.at("leaf03/19"), "spine01/5");
    EXPECT_EQ(m.at("leaf04/21"), "spine02/7");
    EXPECT_EQ(m.at("leaf01/22"), "spine02/2");
    EXPECT_EQ(m.at("node08:mlx5_0/1"), "leaf04/2");
    EXPECT_EQ(m.at("spine01/35"), "storage01:mlx5_0/1");
    EXPECT_EQ(m.at("spine02/35"), "storage01:mlx5_1/1");
    EXPECT_EQ(link_at(p, "spine01/35")->label, "STOR-A");
    EXPECT_EQ(link_at(p, "spine02/35")->label, "STOR-B");
    EXPECT_EQ(link_at(p, "leaf04/22")->label, "L04-S02-B");
    EXPECT_EQ(link_at(p, "leaf04/21")->label, "");
    // The explicit cables carry the plan-wide defaults and point at their lines.
    EXPECT_EQ(to_string(*link_at(p, "spine02/35")->rate), "4xEDR");
    EXPECT_EQ(link_at(p, "spine02/35")->mtu, 4096);
    EXPECT_EQ(link_at(p, "spine01/35")->where.line, 29);
    EXPECT_EQ(link_at(p, "spine02/35")->where.line, 30);
}

TEST(Compact, SourceLocationsPointIntoTheFile) {
    const std::string path = example_path("fat-tree-2tier-324.yaml");
    Plan p = parse_plan_yaml(read_file(path), "p.yaml");
    // Switches: their tier's `names:` value; uplinks: the `up:` value; hosts: the group's `names:`.
    const PlannedNode& leaf = p.nodes[0];
    EXPECT_EQ(leaf.name, "leaf01");
    EXPECT_EQ(leaf.where.file, "p.yaml");
    EXPECT_EQ(leaf.where.line, 11);
    EXPECT_EQ(leaf.where.column, 12);
    EXPECT_EQ(link_at(p, "leaf05/20")->where.line, 14);
    EXPECT_EQ(link_at(p, "leaf05/20")->where.column, 9);
    EXPECT_EQ(link_at(p, "leaf05/2")->where.line, 23);
    EXPECT_EQ(p.nodes.back().where.line, 23);
    EXPECT_EQ(p.nodes.back().tier, "hosts");
    EXPECT_EQ(p.nodes[20].tier, "spine");
}

TEST(Compact, ThreeTiersWithPods) {
    // 2 pods of 2 leaves + 2 mids; 4 cores in 2 planes of 2. 2 hosts per leaf.
    const char* y = R"(version: 1
switches:
  leaf:
    names: leaf[1-4]
    ports: 8
    pods: 2
    down: 1-2
    up: 3-4
    up_to: mid
  mid:
    names: mid[1-4]
    ports: 8
    pods: 2
    down: 1-2
    up: 3-4
    up_to: core
  core:
    names: core[1-4]
    ports: 8
    down: 1-2
hosts:
  names: h[1-8]
)";
    Plan p = parse_plan_yaml(y, "3t.yaml");
    EXPECT_EQ(p.nodes.size(), 12u + 8u);
    EXPECT_EQ(p.links.size(), 8u + 8u + 8u);
    auto m = peer_map(p);
    // pod-local: leaf at pod position i, up port k -> mid k of its pod, mid port i+1.
    EXPECT_EQ(m.at("leaf1/3"), "mid1/1");
    EXPECT_EQ(m.at("leaf1/4"), "mid2/1");
    EXPECT_EQ(m.at("leaf2/3"), "mid1/2");
    EXPECT_EQ(m.at("leaf3/3"), "mid3/1");
    EXPECT_EQ(m.at("leaf4/4"), "mid4/2");
    // planes: mid at pod p, position j -> cores of plane j (core1-2 for j=0, core3-4 for j=1), core port p+1.
    EXPECT_EQ(m.at("mid1/3"), "core1/1");
    EXPECT_EQ(m.at("mid1/4"), "core2/1");
    EXPECT_EQ(m.at("mid2/3"), "core3/1");
    EXPECT_EQ(m.at("mid3/3"), "core1/2");
    EXPECT_EQ(m.at("mid4/4"), "core4/2");
    EXPECT_EQ(m.at("h1/1"), "leaf1/1");
    EXPECT_EQ(m.at("h8/1"), "leaf4/2");
}

TEST(Example3Tier, CountsAndPlanes) {
    const std::string path = example_path("fat-tree-3tier-1296.yaml");
    Plan p = load_plan(read_file(path), path);
    EXPECT_EQ(count_type(p, NodeType::CA), 1296u);
    EXPECT_EQ(count_type(p, NodeType::Switch), 72u + 72u + 36u);
    EXPECT_EQ(p.links.size(), 1296u + 72u * 18u + 72u * 18u);
    auto m = peer_map(p);
    EXPECT_EQ(m.at("leaf001/19"), "mid001/1");
    EXPECT_EQ(m.at("leaf020/36"), "mid036/2");   // pod 2 position 1, up k=17 -> mid 18 of pod 2
    EXPECT_EQ(m.at("mid001/19"), "core01/1");
    EXPECT_EQ(m.at("mid001/28"), "core02/1");   // k=9 -> second core of plane 0
    EXPECT_EQ(m.at("mid019/19"), "core01/10");  // pod 2 (rank 1): core ports 10..18
    EXPECT_EQ(m.at("mid072/36"), "core36/36");
    EXPECT_EQ(m.at("node1296:mlx5_0/1"), "leaf072/18");
}

// The 8k-host example the live path is measured on (issue 18: 640 switches, 24,576 links).
TEST(Example3Tier, TheEightThousandHostExampleHasTheMeasuredSize) {
    const std::string path = example_path("fat-tree-3tier-8192.yaml");
    Plan p = load_plan(read_file(path), path);
    EXPECT_EQ(count_type(p, NodeType::CA), 8192u);
    EXPECT_EQ(count_type(p, NodeType::Switch), 256u + 256u + 128u);
    EXPECT_EQ(p.links.size(), 8192u + 256u * 32u + 256u * 32u);
    auto m = peer_map(p);
    EXPECT_EQ(m.at("leaf001/33"), "mid001/1");
    EXPECT_EQ(m.at("leaf033/33"), "mid033/1");  // pod 2
    EXPECT_EQ(m.at("mid001/33"), "core001/1");
    EXPECT_EQ(m.at("mid001/41"), "core002/1");  // k=8 -> second core of plane 0
    EXPECT_EQ(m.at("mid001/64"), "core004/8");
    EXPECT_EQ(m.at("mid033/33"), "core001/9");  // pod 2 (rank 1): core ports 9..16
    EXPECT_EQ(m.at("mid256/64"), "core128/64");
    EXPECT_EQ(m.at("node8192:mlx5_0/1"), "leaf256/32");
}

TEST(Compact, RatesAndMtusPerTierHostGroupCableAndOverride) {
    const char* y = R"(version: 1
rate: 4xHDR
mtu: 4096
switches:
  leaf: {names: "leaf[1-2]", ports: 8, down: 1-4, up: 5-6, up_to: spine, rate: 4xNDR, mtu: 2048}
  spine: {names: "spine[1-2]", ports: 8, down: 1-2}
hosts:
  - {names: "n[1-4]", attach: leaf, per_switch: 2, rate: 2xNDR}
  - {names: "old[1-2]", attach: "leaf[1-2]", ports: 3, per_switch: 1, rate: 4xEDR, mtu: 1024}
cables:
  - {a: mgmt/1, b: spine1/8, rate: 1xSDR, mtu: 256, label: MGMT}
  - {a: spine1/7, b: spine2/7}
overrides:
  - {port: leaf2/6, rate: 4xHDR}
  - {port: n4/1, mtu: 512, label: "N4 rack B"}
)";
    Plan p = parse_plan_yaml(y, "r.yaml");
    auto rate_at = [&](const char* e) { return to_string(*link_at(p, e)->rate); };
    auto mtu_at = [&](const char* e) { return *link_at(p, e)->mtu; };
    EXPECT_EQ(rate_at("leaf1/5"), "4xNDR");
    EXPECT_EQ(mtu_at("leaf1/5"), 2048);
    EXPECT_EQ(rate_at("leaf2/6"), "4xHDR");  // override
    EXPECT_EQ(mtu_at("leaf2/6"), 2048);
    EXPECT_EQ(rate_at("n1/1"), "2xNDR");
    EXPECT_EQ(mtu_at("n1/1"), 4096);
    EXPECT_EQ(mtu_at("n4/1"), 512);
    EXPECT_EQ(link_at(p, "n4/1")->label, "N4 rack B");
    EXPECT_EQ(rate_at("old2/1"), "4xEDR");
    EXPECT_EQ(mtu_at("old2/1"), 1024);
    EXPECT_EQ(peer_map(p).at("old2/1"), "leaf2/3");
    EXPECT_EQ(peer_map(p).at("n3/1"), "leaf2/1");
    EXPECT_EQ(rate_at("mgmt/1"), "1xSDR");
    EXPECT_EQ(mtu_at("mgmt/1"), 256);
    EXPECT_EQ(link_at(p, "mgmt/1")->label, "MGMT");
    EXPECT_EQ(rate_at("spine2/7"), "4xHDR");  // plan default
    EXPECT_EQ(mtu_at("spine2/7"), 4096);
}

TEST(Compact, NoRateOrMtuDeclaredMeansNone) {
    Plan p = parse_plan_yaml("version: 1\ncables:\n  - {a: a/1, b: b/1}\n  - {a: a/2, b: b/2, rate: 4x}\n", "x");
    ASSERT_EQ(p.links.size(), 2u);
    EXPECT_FALSE(p.links[0].rate.has_value());
    EXPECT_FALSE(p.links[0].mtu.has_value());
    EXPECT_EQ(p.links[1].rate->width, Width::X4);  // width only
    EXPECT_EQ(p.links[1].rate->speed, Speed::Unknown);
}

TEST(Cables, OnlyExplicitCablesHostsWithSeveralHcas) {
    const char* y = R"(version: 1
nodes:
  sw1: {type: switch, ports: 36, guid: 0x7cfe900300a00001}
  "gpu01:mlx5_1": 0x98039b0300000011
cables:
  - {a: sw1/1, b: "gpu01:mlx5_0/1", label: G1-0}
  - {a: sw1/2, b: "gpu01:mlx5_1/1"}
  - a: {node: gpu02, port: 1}
    b: {node: sw1, port: 3}
)";
    Plan p = parse_plan_yaml(y, "c.yaml");
    ASSERT_EQ(p.nodes.size(), 4u);
    EXPECT_EQ(p.nodes[0].name, "sw1");
    EXPECT_EQ(p.nodes[0].type, NodeType::Switch);
    EXPECT_EQ(p.nodes[0].num_ports, 36);
    EXPECT_EQ(p.nodes[0].guid, 0x7cfe900300a00001ull);
    EXPECT_EQ(p.nodes[1].name, "gpu01");
    EXPECT_EQ(p.nodes[1].hca, "mlx5_0");
    EXPECT_EQ(p.nodes[1].type, NodeType::CA);
    EXPECT_FALSE(p.nodes[1].guid.has_value());
    EXPECT_EQ(p.nodes[2].hca, "mlx5_1");
    EXPECT_EQ(p.nodes[2].guid, 0x98039b0300000011ull);
    EXPECT_EQ(p.nodes[3].name, "gpu02");
    EXPECT_EQ(p.nodes[3].hca, "");
    auto m = peer_map(p);
    EXPECT_EQ(m.at("sw1/3"), "gpu02/1");
    EXPECT_EQ(p.links[0].label, "G1-0");
    EXPECT_EQ(p.links[2].where.line, 8);
    EXPECT_EQ(p.links[2].where.column, 5);
}

TEST(Mixed, CablesAddToTheCompactFormAndShareNodes) {
    const char* y = R"(version: 1
node_name_map: /etc/opensm/ib-node-name-map
switches:
  leaf: {names: "leaf[1-2]", ports: 8, down: 1-2, up: 7-8, up_to: spine, cables_per_pair: 2}
  spine: {names: spine1, ports: 8, down: 1-4}
hosts: {names: "n[1-4]", hca: mlx5_0}
cables:
  - {a: leaf1/5, b: leaf2/5, label: ISL}
  - {a: "n1:mlx5_1/1", b: spine1/8}
nodes:
  leaf1: 0x1
  n1:mlx5_0: 0x11
)";
    Plan p = parse_plan_yaml(y, "m.yaml");
    EXPECT_EQ(p.node_name_map, "/etc/opensm/ib-node-name-map");
    EXPECT_EQ(p.nodes.size(), 3u + 4u + 1u);
    EXPECT_EQ(p.links.size(), 4u + 4u + 2u);
    auto m = peer_map(p);
    EXPECT_EQ(m.at("leaf1/8"), "spine1/2");
    EXPECT_EQ(m.at("leaf2/7"), "spine1/3");
    EXPECT_EQ(m.at("leaf1/5"), "leaf2/5");
    EXPECT_EQ(m.at("n1:mlx5_1/1"), "spine1/8");
    EXPECT_EQ(p.nodes[0].guid, 1u);
    for (const auto& n : p.nodes)
        if (n.name == "n1" && n.hca == "mlx5_0") { EXPECT_EQ(n.guid, 0x11u); }
    // Every cabled port exactly once.
    std::set<std::string> ends;
    for (const auto& l : p.links) {
        EXPECT_TRUE(ends.insert(end_name(p, l.a)).second);
        EXPECT_TRUE(ends.insert(end_name(p, l.b)).second);
    }
}

TEST(Nodes, NodeWithoutCablesNeedsAType) {
    Plan p = parse_plan_yaml("version: 1\nnodes:\n  spare: {type: switch, ports: 36}\n", "n.yaml");
    ASSERT_EQ(p.nodes.size(), 1u);
    EXPECT_EQ(p.nodes[0].type, NodeType::Switch);
    EXPECT_TRUE(p.links.empty());
}

// Builds a 3-tier plan of ~32k hosts: 64-port switches, 32 pods x (32 leaves + 32 mids), 512 cores.
static std::string big_plan() {
    return R"(version: 1
rate: 4xNDR
mtu: 4096
switches:
  leaf: {names: "leaf[0001-1024]", ports: 64, pods: 32, down: 1-32, up: 33-64, up_to: mid}
  mid:  {names: "mid[0001-1024]", ports: 64, pods: 32, down: 1-32, up: 33-64, up_to: core, cables_per_pair: 2}
  core: {names: "core[001-512]", ports: 64, down: 1-64}
hosts: {names: "n[00001-32768]", hca: mlx5_0, per_switch: 32}
)";
}

TEST(Speed, ThirtyTwoThousandHostThreeTierPlan) {
    const std::string y = big_plan();
    // The parse's own time, warm: glibc gives each round's ~25 MB back to the kernel when it is freed
    // (mmap'ed blocks, heap trimming) and the next round faults it in again, ~6,600 page faults a
    // round. On this machine's VM a fault costs ~4 us, which made the best round 79-106 ms of CPU
    // instead of 16-17 ms (2026-12-06, perf: a quarter of the samples in the fault handler);
    // on bare metal a fault is ~0.2 us. Keep freed memory in the process for this measurement.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    Plan p;
    double ms = 1e9, cpu_ms = 1e9;  // best of 3, wall and process CPU time (CPU is steadier when shared)
    for (int i = 0; i < 3; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        std::clock_t c0 = std::clock();
        p = parse_plan_yaml(y, "big.yaml");
        cpu_ms = std::min(cpu_ms, 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC);
        ms = std::min(ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    EXPECT_EQ(count_type(p, NodeType::CA), 32768u);
    EXPECT_EQ(count_type(p, NodeType::Switch), 1024u + 1024u + 512u);
    EXPECT_EQ(p.links.size(), 32768u * 3);
    auto m = peer_map(p);
    // mid0033 is pod 1 position 0: plane 0 = core001..core016, 2 cables each; core port 2*1 + k%2 + 1.
    EXPECT_EQ(m.at("mid0033/33"), "core001/3");
    EXPECT_EQ(m.at("mid0033/34"), "core001/4");
    EXPECT_EQ(m.at("mid0034/35"), "core018/3");
    RecordProperty("expand_ms", std::to_string(ms));
    RecordProperty("expand_cpu_ms", std::to_string(cpu_ms));
    std::printf("32k-host 3-tier plan expanded in %.1f ms wall, %.1f ms CPU\n", ms, cpu_ms);
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    // Goal: well under 0.1 s (docs/plan.md). CPU time, because wall time on this shared 2-core
    // machine was 400-550 ms at load 18 while CPU time was 44-45 ms (20 ms quiet, docs/plan.md).
    EXPECT_LT(cpu_ms, 100.0);
#endif
}
