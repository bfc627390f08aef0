// analyze(), ftree_files() and infer_plan() on fabrics that are not fat trees at all: no
// crash, and the basic invariants hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "ibf/analysis.h"
#include "ibf/ftree_files.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"

namespace ibf {
namespace {

void invariants(const Fabric& f) {
    Analysis a = analyze(f);
    ASSERT_EQ(a.tier_of.size(), f.size());
    EXPECT_EQ(a.switches.size(), f.count(NodeType::Switch));
    for (const SwitchInfo& s : a.switches) EXPECT_EQ(a.tier_of[s.node], s.tier);
    EXPECT_TRUE(std::is_sorted(a.findings.begin(), a.findings.end(), [](const Finding& x, const Finding& y) { return x.kind < y.kind; }));
    EXPECT_GE(a.bisection_gbps, 0);
    (void)analysis_to_json(f, a).dump();
    (void)render_tier_table(f, a);
    (void)ftree_files(f, a);
    const std::string yaml = plan_yaml_text(infer_plan(f, a, "robustness").doc);
    EXPECT_NE(yaml.find("version: 1"), std::string::npos);
}

TEST(AnalysisRobustness, EmptyAndSwitchOnlyFabrics) {
    Fabric empty;
    empty.finalize();
    invariants(empty);
    Analysis a = analyze(empty);
    EXPECT_EQ(a.levels(), 0);
    EXPECT_TRUE(a.findings.empty());

    Fabric sw;
    NodeId s1 = sw.add_node({.type = NodeType::Switch, .guid = 1, .description = "MF0;a:X/U1"}, 8);
    NodeId s2 = sw.add_node({.type = NodeType::Switch, .guid = 2, .description = "MF0;b:X/U1"}, 8);
    sw.connect(s1, 1, s2, 1);
    sw.finalize();
    invariants(sw);
    a = analyze(sw);
    EXPECT_EQ(a.tier_of[s1], 0);  // no hosts anywhere: tier unknown
    EXPECT_TRUE(a.findings.empty());
}

TEST(AnalysisRobustness, RingOfSwitchesWithHosts) {
    Fabric f;
    const int n = 6;
    for (int i = 0; i < n; ++i) f.add_node({.type = NodeType::Switch, .guid = 0x100u + i, .description = "MF0;r" + std::to_string(i) + ":X/U1"}, 8);
    for (int i = 0; i < n; ++i) f.connect(i, 1, (i + 1) % n, 2);
    for (int i = 0; i < n; ++i) {
        NodeId h = f.add_node({.type = NodeType::CA, .guid = 0x900u + i, .description = "h" + std::to_string(i) + " mlx5_0"}, 1);
        f.connect(i, 5, h, 1);
    }
    f.finalize();
    invariants(f);
    Analysis a = analyze(f);
    EXPECT_EQ(a.levels(), 1);
    EXPECT_EQ(a.findings.size(), static_cast<size_t>(n));  // every ring cable joins two leaves
    for (const Finding& x : a.findings) EXPECT_EQ(x.kind, FindingKind::intra_tier_link);
}

TEST(AnalysisRobustness, RandomGraphsDoNotCrash) {
    uint64_t seed = 42;
    auto next = [&] {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<uint32_t>(seed >> 33);
    };
    for (int round = 0; round < 60; ++round) {
        Fabric f;
        int switches = 1 + static_cast<int>(next() % 12), cas = static_cast<int>(next() % 20), routers = static_cast<int>(next() % 2);
        for (int i = 0; i < switches; ++i)
            f.add_node({.type = NodeType::Switch, .guid = 0x1000u + i, .description = (next() % 3 ? "MF0;s" + std::to_string(i) + ":X/U1" : std::string("same"))}, 12);
        for (int i = 0; i < cas; ++i) {
            Node ca{.type = NodeType::CA, .guid = 0x2000u + i};
            ca.vendor_id = static_cast<uint16_t>(next() % 2 ? 0x2c9 : 0);
            ca.device_id = static_cast<uint16_t>(next() % 3);
            ca.description = next() % 5 ? "c" + std::to_string(i % 7) + " mlx5_" + std::to_string(i % 2) : std::string("Mellanox Aggregation Node");
            f.add_node(std::move(ca), 2);
        }
        for (int i = 0; i < routers; ++i) f.add_node({.type = NodeType::Router, .guid = 0x3000u + i, .description = "rtr"}, 2);
        int edges = static_cast<int>(next() % 40);
        for (int e = 0; e < edges; ++e) {
            NodeId x = next() % f.size(), y = next() % f.size();
            if (x == y) continue;
            int px = 1 + static_cast<int>(next() % f.node(x).num_ports()), py = 1 + static_cast<int>(next() % f.node(y).num_ports());
            if (f.node(x).ports[px].linked() || f.node(y).ports[py].linked()) continue;
            if (f.node(x).type != NodeType::Switch && f.node(y).type != NodeType::Switch && next() % 2) continue;
            f.connect(x, px, y, py);
            Speed sp = static_cast<Speed>(1 + next() % 8);
            for (auto [node, port] : {std::pair{x, px}, std::pair{y, py}}) {
                f.node(node).ports[port].width_active = Width::X4;
                f.node(node).ports[port].speed_active = sp;
            }
        }
        f.finalize();
        SCOPED_TRACE(round);
        invariants(f);
    }
}

}  // namespace
}  // namespace ibf
