// plan_from_fabric on a hand-built Fabric, and load_plan on dumps (YAML vs dump detection).
#include <gtest/gtest.h>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"
#include "plan_test_util.h"

using namespace ibf;
using namespace ibf::test;

TEST(PlanFromFabric, EveryNodeAndLinkWithRateAndMtuWhenKnown) {
    Fabric f;
    NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x10, .description = "MF0;leaf01:MSB7800/U1"}, 36);
    NodeId sp = f.add_node({.type = NodeType::Switch, .guid = 0x20, .description = "MF0;spine01:MSB7800/U1"}, 36);
    NodeId h1 = f.add_node({.type = NodeType::CA, .guid = 0x31, .description = "node01 mlx5_0"}, 1);
    NodeId h2 = f.add_node({.type = NodeType::CA, .guid = 0x32, .description = "gpu01 mlx5_1"}, 2);
    f.connect(sw, 1, h1, 1);
    f.connect(sw, 19, sp, 7);
    f.connect(sp, 36, h2, 2);
    // sw/1 <-> h1: 4xEDR, MTU 4096 on one end only
    f.node(sw).ports[1].width_active = Width::X4;
    f.node(sw).ports[1].speed_active = Speed::EDR;
    f.node(h1).ports[1].mtu_active = 4096;
    // sw/19 <-> sp/7: 1xSDR, MTUs 2048 / 4096 (the smaller one is the link's)
    f.node(sp).ports[7].width_active = Width::X1;
    f.node(sp).ports[7].speed_active = Speed::SDR;
    f.node(sw).ports[19].mtu_active = 4096;
    f.node(sp).ports[7].mtu_active = 2048;
    // sp/36 <-> h2/2: width only: no rate; no MTU
    f.node(h2).ports[2].width_active = Width::X4;
    f.finalize();

    Plan p = plan_from_fabric(f, "golden.txt");
    EXPECT_EQ(p.source, "golden.txt");
    ASSERT_EQ(p.nodes.size(), 4u);
    EXPECT_EQ(p.nodes[0].name, "leaf01");
    EXPECT_EQ(p.nodes[0].guid, 0x10u);
    EXPECT_EQ(p.nodes[0].type, NodeType::Switch);
    EXPECT_EQ(p.nodes[0].num_ports, 36);
    EXPECT_EQ(p.nodes[0].hca, "");
    EXPECT_EQ(p.nodes[3].name, "gpu01");
    EXPECT_EQ(p.nodes[3].hca, "mlx5_1");
    EXPECT_EQ(p.nodes[3].num_ports, 2);
    EXPECT_EQ(p.nodes[3].type, NodeType::CA);
    ASSERT_EQ(p.links.size(), 3u);
    auto m = peer_map(p);
    EXPECT_EQ(m.at("leaf01/1"), "node01:mlx5_0/1");
    EXPECT_EQ(m.at("leaf01/19"), "spine01/7");
    EXPECT_EQ(m.at("spine01/36"), "gpu01:mlx5_1/2");
    const PlannedLink* a = link_at(p, "leaf01/1");
    EXPECT_EQ(to_string(*a->rate), "4xEDR");
    EXPECT_EQ(a->mtu, 4096);
    const PlannedLink* b = link_at(p, "leaf01/19");
    EXPECT_EQ(to_string(*b->rate), "1xSDR");
    EXPECT_EQ(b->mtu, 2048);
    const PlannedLink* c = link_at(p, "spine01/36");
    EXPECT_FALSE(c->rate.has_value());
    EXPECT_FALSE(c->mtu.has_value());
}

TEST(LoadPlan, DetectsYaml) {
    EXPECT_TRUE(looks_like_plan_yaml("# plan\nversion: 1\n"));
    EXPECT_TRUE(looks_like_plan_yaml("\xEF\xBB\xBFversion : 1\n"));
    EXPECT_FALSE(looks_like_plan_yaml("#\n# Topology file\nSwitch\t36 \"S-1\"\n"));
    EXPECT_FALSE(looks_like_plan_yaml("  version: 1\n"));  // not top level
    EXPECT_EQ(load_plan("version: 1\ncables: [{a: a/1, b: b/1}]\n", "p.yaml").links.size(), 1u);
}

TEST(LoadPlan, SmallActualDumpAsPlan) {
    const std::string path = example_path("small-actual.ibnetdiscover");
    Plan p = load_plan(read_file(path), path);
    EXPECT_EQ(count_type(p, NodeType::Switch), 6u);
    EXPECT_EQ(count_type(p, NodeType::CA), 10u);
    EXPECT_EQ(p.links.size(), 4u * 4u + 8u + 2u - 1u);  // one cable missing
    for (const auto& n : p.nodes) EXPECT_TRUE(n.guid.has_value()) << n.name;
    auto m = peer_map(p);
    EXPECT_EQ(m.at("leaf03/19"), "spine01/9");   // moved
    EXPECT_EQ(m.at("leaf02/19"), "spine01/4");   // crossed pair
    EXPECT_EQ(m.at("leaf02/20"), "spine01/3");
    EXPECT_FALSE(m.count("leaf01/22"));          // missing
    EXPECT_EQ(m.at("spine02/35"), "storage01:mlx5_1/1");
    EXPECT_EQ(to_string(*link_at(p, "leaf04/21")->rate), "1xEDR");
    EXPECT_EQ(to_string(*link_at(p, "leaf01/19")->rate), "4xEDR");
    EXPECT_FALSE(link_at(p, "leaf01/19")->mtu.has_value());  // ibnetdiscover has no MTU
}

TEST(LoadPlan, RealCaptureAsPlan) {
    const std::string path = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
    std::string text = read_file(path);
    ASSERT_FALSE(text.empty()) << "cannot read " << path;
    Plan p = load_plan(text, path);
    // The capture has 8 "Switch" and 144 "Ca" sections and 384 port lines, each cable printed at both
    // ends: 192 cables (144 hosts, 47 leaf uplinks, 1 storage host on a spine).
    EXPECT_EQ(count_type(p, NodeType::Switch), 8u);
    EXPECT_EQ(count_type(p, NodeType::CA), 144u);
    EXPECT_EQ(p.nodes.size(), 152u);
    EXPECT_EQ(p.links.size(), 192u);
}

TEST(LoadPlan, NeitherYamlNorDump) {
    try {
        load_plan("hello world\n", "x.txt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(e.message().find("neither a YAML plan"), std::string::npos) << e.what();
    }
}
