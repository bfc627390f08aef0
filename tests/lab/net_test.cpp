#include <gtest/gtest.h>

#include "ibf/error.h"
#include "ibf/lab_net.h"
#include "plan_fixture.h"

using namespace ibf;

namespace {

// Parses the port lines of one node out of a generated net file: "[p] "peer"[pp] opts".
std::vector<std::string> port_lines(const std::string& text, const std::string& header) {
    std::vector<std::string> out;
    auto pos = text.find(header);
    if (pos == std::string::npos) return out;
    pos = text.find('\n', pos) + 1;
    while (pos < text.size() && text[pos] == '[') {
        auto eol = text.find('\n', pos);
        out.push_back(text.substr(pos, eol - pos));
        pos = eol + 1;
    }
    return out;
}

}  // namespace

TEST(LabNet, PlanNamesBecomeIdsAndDescriptions) {
    Net net = net_from_plan(test::small_plan());
    ASSERT_EQ(net.nodes.size(), 7u);
    EXPECT_EQ(net.count(NodeType::Switch), 3u);
    EXPECT_EQ(net.count(NodeType::CA), 4u);
    EXPECT_EQ(net.link_count(), 8u);
    auto leaf = net.find("leaf01");
    ASSERT_TRUE(leaf);
    EXPECT_EQ(net.nodes[*leaf].id, "leaf01");
    EXPECT_EQ(derive_name(NodeType::Switch, net.nodes[*leaf].description), "leaf01");
    // A host without an HCA name: id = host, description "<host> HCA-1".
    auto h1 = net.find("node001");
    ASSERT_TRUE(h1);
    EXPECT_EQ(net.nodes[*h1].id, "node001");
    EXPECT_EQ(net.nodes[*h1].description, "node001 HCA-1");
    EXPECT_EQ(derive_name(NodeType::CA, net.nodes[*h1].description), "node001");
    // With an HCA name: id and description "<host> <hca>"; the plan name still finds it.
    auto h2 = net.find("node002");
    ASSERT_TRUE(h2);
    EXPECT_EQ(net.nodes[*h2].id, "node002 mlx5_0");
    EXPECT_EQ(derive_hca(NodeType::CA, net.nodes[*h2].description), "mlx5_0");
    // Undeclared port count: sized by its cables.
    EXPECT_EQ(net.nodes[*net.find("node004")].num_ports, 1);
    ASSERT_TRUE(net.default_sm_host());
    EXPECT_EQ(net.nodes[*net.default_sm_host()].id, "node001");
}

TEST(LabNet, EveryLinkAtBothEndsWithRateMasks) {
    std::string text = write_net(net_from_plan(test::small_plan()));
    auto leaf1 = port_lines(text, "Switch 36 \"leaf01\"");
    ASSERT_EQ(leaf1.size(), 4u);
    EXPECT_EQ(leaf1[0], "[1] \"node001\"[1] w=2 s=4 e=4");
    EXPECT_EQ(leaf1[1], "[2] \"node002 mlx5_0\"[1] w=2 s=4 e=4");
    EXPECT_EQ(leaf1[2], "[19] \"spine01\"[1] w=2 s=4 e=4");
    auto spine = port_lines(text, "Switch 36 \"spine01\"");
    ASSERT_EQ(spine.size(), 4u);
    EXPECT_EQ(spine[0], "[1] \"leaf01\"[19] w=2 s=4 e=4");
    auto h4 = port_lines(text, "Hca 1 \"node004\"");
    ASSERT_EQ(h4.size(), 1u);
    EXPECT_EQ(h4[0], "[1] \"leaf02\"[2] w=2 s=4 e=2");  // 4xEDR
    EXPECT_NE(text.find("Hca 1 \"node002 mlx5_0\"  # \"node002 mlx5_0\""), std::string::npos);
    // defaults before the first node: free ports accept any cable at run time
    EXPECT_LT(text.find("width=31\nspeed=7\nextspeed=7\n"), text.find("Switch"));
    // switches come before CAs
    EXPECT_LT(text.find("Switch 36"), text.find("Hca 1"));
}

TEST(LabNet, RateMasksRoundTrip) {
    for (Speed s : {Speed::SDR, Speed::DDR, Speed::QDR, Speed::FDR, Speed::EDR, Speed::HDR})
        for (Width w : {Width::X1, Width::X2, Width::X4, Width::X8, Width::X12}) {
            Rate r{w, s};
            EXPECT_EQ(rate_for_masks(masks_for_rate(r)), r) << to_string(r);
        }
    NetMasks qdr = masks_for_rate({Width::X4, Speed::QDR});
    EXPECT_EQ(qdr.e, std::optional<uint8_t>(0));  // extended speeds explicitly off
    NetMasks width_only = masks_for_rate({Width::X1, Speed::Unknown});
    EXPECT_FALSE(width_only.s);
    EXPECT_FALSE(width_only.e);
}

TEST(LabNet, NdrIsMappedDownToHdrWithAWarning) {
    std::vector<std::string> warnings;
    NetMasks m = masks_for_rate({Width::X4, Speed::NDR}, &warnings);
    EXPECT_EQ(rate_for_masks(m), (Rate{Width::X4, Speed::HDR}));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("NDR"), std::string::npos);

    Plan p = test::small_plan();
    for (auto& l : p.links) l.rate = Rate{Width::X4, Speed::NDR};
    Net net = net_from_plan(p);
    ASSERT_EQ(net.warnings.size(), 1u);  // once, not once per link
    EXPECT_NE(write_net(net).find("# warning: "), std::string::npos);
}

TEST(LabNet, PlanErrorsPointAtThePlan) {
    Plan p = test::small_plan();
    p.links[1].a.port = 19;  // leaf01/19 used twice
    try {
        net_from_plan(p);
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "small.yaml");
        EXPECT_EQ(e.line(), 41);
        EXPECT_NE(e.message().find("leaf01/19"), std::string::npos);
    }
    Plan q = test::small_plan();
    q.links[0].a.port = 37;  // beyond 36 ports
    EXPECT_THROW(net_from_plan(q), InputError);
    Plan r = test::small_plan();
    r.nodes[3].name = std::string(70, 'x');
    EXPECT_THROW(net_from_plan(r), InputError);
    Plan d = test::small_plan();
    d.nodes[2].name = "leaf01";  // duplicate id
    EXPECT_THROW(net_from_plan(d), InputError);
}

TEST(LabNet, FabricBecomesGuidNamedNet) {
    Fabric f;
    NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x0002c90300001111, .description = "MF0;leaf01:MSB7800/U1"}, 36);
    NodeId ca = f.add_node({.type = NodeType::CA, .guid = 0x0002c90300002222, .description = "node01 mlx5_0"}, 1);
    f.connect(sw, 3, ca, 1);
    f.node(sw).ports[3].width_active = Width::X4;
    f.node(sw).ports[3].speed_active = Speed::NDR;
    f.node(ca).ports[1].width_active = Width::X4;
    f.node(ca).ports[1].speed_active = Speed::NDR;
    f.finalize();
    Net net = net_from_fabric(f, "dump.txt");
    ASSERT_EQ(net.nodes.size(), 2u);
    EXPECT_EQ(net.nodes[0].id, "S-0002c90300001111");
    EXPECT_EQ(net.nodes[1].id, "H-0002c90300002222");
    ASSERT_EQ(net.warnings.size(), 1u);
    std::string text = write_net(net);
    EXPECT_NE(text.find("switchguid=0x0002c90300001111\nSwitch 36 \"S-0002c90300001111\"  # \"MF0;leaf01:MSB7800/U1\""),
              std::string::npos);
    EXPECT_NE(text.find("caguid=0x0002c90300002222\nHca 1 \"H-0002c90300002222\"  # \"node01 mlx5_0\""), std::string::npos);
    EXPECT_NE(text.find("[3] \"H-0002c90300002222\"[1] w=2 s=4 e=4"), std::string::npos);
    EXPECT_NE(text.find("[1] \"S-0002c90300001111\"[3] w=2 s=4 e=4"), std::string::npos);
    EXPECT_EQ(net.find("leaf01"), std::optional<size_t>(0));  // by derived name
}

TEST(LabNet, SimLimitsGrowWithTheNet) {
    Net net = net_from_plan(test::small_plan());
    SimLimits l = sim_limits_for(net);
    EXPECT_EQ(l.nodes, 2048u);
    EXPECT_EQ(l.switches, 256u);
    for (int i = 0; i < 300; ++i) net.nodes.push_back(NetNode{.type = NodeType::Switch, .id = "s" + std::to_string(i), .num_ports = 64});
    l = sim_limits_for(net);
    EXPECT_GE(l.switches, 303u);
    EXPECT_GE(l.ports, 300u * 65u);
}

TEST(LabNet, ParseNetReadsBackWhatWriteNetWrote) {
    Net net = net_from_plan(test::small_plan());
    net.nodes[0].guid = 0x1234;
    std::string text = write_net(net);
    Net back = parse_net(text, "net.txt");
    ASSERT_EQ(back.nodes.size(), net.nodes.size());
    std::string again = write_net(back);
    EXPECT_EQ(again.substr(again.find("\nswitchguid")), text.substr(text.find("\nswitchguid")));
    auto h2 = back.find("node002:mlx5_0");  // the plan's host:hca spelling
    ASSERT_TRUE(h2);
    EXPECT_EQ(back.nodes[*h2].id, "node002 mlx5_0");
    EXPECT_EQ(back.nodes[*back.find("spine01")].guid, std::optional<Guid>(0x1234));
    EXPECT_THROW(parse_net("Switch 4 \"a\"\n[9] \"b\"[1]\n", "bad.txt"), InputError);
    try {
        parse_net("Switch 4 \"a\"\nbogus\n", "bad.txt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 2);
    }
}
