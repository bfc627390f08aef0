#include "ibf/fabric.h"

#include <gtest/gtest.h>

using namespace ibf;

TEST(DeriveName, AdministratorsNames) {
    EXPECT_EQ(derive_name(NodeType::Switch, "MF0;leaf03:MSB7800/U1"), "leaf03");
    EXPECT_EQ(derive_name(NodeType::Switch, "MF0;ib5:SX6036/U1"), "ib5");
    EXPECT_EQ(derive_name(NodeType::CA, "node018 HCA-1"), "node018");
    EXPECT_EQ(derive_name(NodeType::CA, "gpu01 mlx5_0"), "gpu01");
    EXPECT_EQ(derive_name(NodeType::Switch, "Infiniscale-IV Mellanox Technologies"),
              "Infiniscale-IV Mellanox Technologies");
    EXPECT_EQ(derive_name(NodeType::CA, ""), "");
    EXPECT_EQ(derive_hca(NodeType::CA, "gpu01 mlx5_1"), "mlx5_1");
    EXPECT_EQ(derive_hca(NodeType::CA, "gpu01"), "");
    EXPECT_EQ(derive_hca(NodeType::Switch, "sw1 x"), "");
}

TEST(Fabric, ConnectIsSymmetricAndReplacesOldLinks) {
    Fabric f;
    NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x10, .description = "MF0;leaf01:SX/U1"}, 4);
    NodeId a = f.add_node({.type = NodeType::CA, .guid = 0x20, .description = "n1 HCA-1"}, 1);
    NodeId b = f.add_node({.type = NodeType::CA, .guid = 0x30, .description = "n2 HCA-1"}, 2);
    f.connect(sw, 1, a, 1);
    f.connect(sw, 2, b, 2);
    f.finalize();
    EXPECT_EQ(f.link_count(), 2u);
    EXPECT_EQ(f.node(a).port(1)->peer, sw);
    EXPECT_EQ(f.node(sw).port(2)->peer_port, 2);
    EXPECT_TRUE(f.node(sw).port(0) != nullptr);
    EXPECT_TRUE(f.node(a).port(0) == nullptr);
    f.connect(sw, 1, b, 2);  // moves the cable at n2/2 from leaf01/2 to leaf01/1
    EXPECT_FALSE(f.node(a).port(1)->linked());
    EXPECT_FALSE(f.node(sw).port(2)->linked());
    EXPECT_EQ(f.link_count(), 1u);
    auto ls = f.links();
    ASSERT_EQ(ls.size(), 1u);
    EXPECT_EQ(ls[0].a, sw);
    EXPECT_EQ(ls[0].pa, 1);
    EXPECT_EQ(f.count(NodeType::CA), 2u);
    EXPECT_EQ(*f.find(0x30), b);
    EXPECT_EQ(f.find_by_name("leaf01"), std::vector<NodeId>{sw});
    EXPECT_EQ(port_label(f, sw, 3), "leaf01/3");
}

TEST(Fabric, SharedNamesFallBackToGuid) {
    Fabric f;
    f.add_node({.type = NodeType::CA, .guid = 0x2c90300001, .description = "MT25408 ConnectX"}, 1);
    f.add_node({.type = NodeType::CA, .guid = 0x2c90300002, .description = "MT25408 ConnectX"}, 1);
    f.finalize();
    EXPECT_EQ(f.find_by_name("MT25408").size(), 2u);
    EXPECT_EQ(port_label(f, 1, 1), "0x0000002c90300002/1");
}

TEST(Guid, ParseAndPrint) {
    EXPECT_EQ(guid_hex(0x2c903000d7aad), "0x0002c903000d7aad");
    EXPECT_EQ(parse_guid("0x0002c903000d7aad"), 0x2c903000d7aadull);
    EXPECT_EQ(parse_guid("f4521403001165a0"), 0xf4521403001165a0ull);
    EXPECT_FALSE(parse_guid("0x"));
    EXPECT_FALSE(parse_guid("xyz"));
    EXPECT_FALSE(parse_guid("0x11112222333344445"));
}
