// ibf_synth: shapes, layout, names, GUIDs, determinism, and the fault helpers.
#include "ibf/synth.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

using namespace ibf;

namespace {
const Port& port(const Fabric& f, const std::string& name, int p) {
    NodeId n = synth_node(f, name);
    EXPECT_NE(n, kNoNode) << name;
    return *f.node(n).port(p);
}
std::string peer(const Fabric& f, const std::string& name, int p) {
    const Port& q = port(f, name, p);
    if (!q.linked()) return "-";
    return f.node(q.peer).name + "/" + std::to_string(q.peer_port);
}
}  // namespace

TEST(Synth, TwoLevelShapeAndLayout) {
    FatTreeSpec spec{.levels = 2, .radix = 8, .hosts = 6};
    FatTreeShape s = fat_tree_shape(spec);
    EXPECT_EQ(s.leaves, 2);
    EXPECT_EQ(s.spines, 4);
    EXPECT_EQ(s.cores, 0);
    EXPECT_EQ(s.hosts, 6);
    EXPECT_EQ(s.links, 6u + 2u * 4u);
    Fabric f = synth_fat_tree(spec);
    EXPECT_EQ(f.size(), 12u);
    EXPECT_EQ(f.link_count(), s.links);
    EXPECT_EQ(f.count(NodeType::CA), 6u);
    EXPECT_EQ(peer(f, "leaf0001", 1), "node00001/1");
    EXPECT_EQ(peer(f, "leaf0002", 2), "node00006/1");
    EXPECT_EQ(peer(f, "leaf0002", 3), "-");
    EXPECT_EQ(peer(f, "leaf0001", 5), "spine0001/1");
    EXPECT_EQ(peer(f, "leaf0002", 8), "spine0004/2");
    const Node& leaf = f.node(synth_node(f, "leaf0001"));
    EXPECT_EQ(leaf.description, "MF0;leaf0001:QM8700/U1");
    EXPECT_EQ(leaf.guid, 0x7cfe900301000001u);
    EXPECT_EQ(leaf.num_ports(), 8);
    const Node& host = f.node(synth_node(f, "node00006"));
    EXPECT_EQ(host.description, "node00006 mlx5_0");
    EXPECT_EQ(host.guid, 0x0c42a10300000060u);
    EXPECT_EQ(host.ports[1].guid, host.guid + 1);
    const Port& p = port(f, "leaf0001", 5);
    EXPECT_EQ(p.rate(), (Rate{Width::X4, Speed::HDR}));
    EXPECT_EQ(p.state, PortState::Active);
    EXPECT_EQ(p.mtu_active, 4096);
    EXPECT_EQ(port(f, "leaf0002", 3).state, PortState::Down);
    // LIDs: switches first, then hosts, all distinct.
    std::set<uint16_t> lids;
    for (const Node& n : f.nodes()) EXPECT_TRUE(lids.insert(n.lid).second) << n.name;
    EXPECT_EQ(leaf.lid, 1);
    EXPECT_EQ(host.lid, 12);
}

TEST(Synth, ThreeLevelShapeAndLayout) {
    FatTreeSpec spec{.levels = 3, .radix = 4, .hosts = 0};  // full tree: 16 hosts
    FatTreeShape s = fat_tree_shape(spec);
    EXPECT_EQ(s.hosts, 16);
    EXPECT_EQ(s.leaves, 8);
    EXPECT_EQ(s.spines, 8);
    EXPECT_EQ(s.cores, 4);
    EXPECT_EQ(s.links, 16u + 16u + 16u);
    Fabric f = synth_fat_tree(spec);
    EXPECT_EQ(f.link_count(), s.links);
    // leaf0003 is leaf 1 (0-based) of pod 1 -> spines 3, 4 at port 2; spine0004 (j=1 of pod 1) -> cores 3, 4 at port 2.
    EXPECT_EQ(peer(f, "leaf0003", 3), "spine0003/1");
    EXPECT_EQ(peer(f, "leaf0004", 4), "spine0004/2");
    EXPECT_EQ(peer(f, "spine0004", 3), "core0003/2");
    EXPECT_EQ(peer(f, "spine0004", 4), "core0004/2");
    EXPECT_EQ(peer(f, "spine0001", 3), "core0001/1");
    for (int c = 1; c <= 4; ++c)
        for (int p = 1; p <= 4; ++p) EXPECT_NE(peer(f, "core000" + std::to_string(c), p), "-");

    FatTreeShape big = fat_tree_shape({.levels = 3, .radix = 64, .hosts = 32768});
    EXPECT_EQ(big.leaves, 1024);
    EXPECT_EQ(big.spines, 1024);
    EXPECT_EQ(big.cores, 1024);
    EXPECT_EQ(big.links, 98304u);
}

TEST(Synth, DeterministicAndValidated) {
    FatTreeSpec spec{.levels = 2, .radix = 16, .hosts = 50, .rate = {Width::X4, Speed::NDR}};
    Fabric a = synth_fat_tree(spec), b = synth_fat_tree(spec);
    ASSERT_EQ(a.size(), b.size());
    for (NodeId i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a.node(i).guid, b.node(i).guid);
        EXPECT_EQ(a.node(i).description, b.node(i).description);
    }
    EXPECT_EQ(to_string(a.node(synth_node(a, "node00050")).ports[1].rate()), "4xNDR");
    EXPECT_THROW(fat_tree_shape({.levels = 4}), std::invalid_argument);
    EXPECT_THROW(fat_tree_shape({.levels = 2, .radix = 7}), std::invalid_argument);
    EXPECT_THROW(fat_tree_shape({.levels = 2, .radix = 8, .hosts = 33}), std::invalid_argument);
    EXPECT_THROW(synth_fat_tree({.levels = 3, .radix = 4, .hosts = 17}), std::invalid_argument);
    EXPECT_EQ(synth_node(a, "nobody"), kNoNode);
}

TEST(Synth, Faults) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 6});
    NodeId leaf2 = synth_node(f, "leaf0002");
    remove_cable(f, leaf2, 5);
    EXPECT_EQ(peer(f, "leaf0002", 5), "-");
    EXPECT_EQ(peer(f, "spine0001", 2), "-");
    EXPECT_EQ(port(f, "spine0001", 2).phys, PhysState::Polling);

    move_far_end(f, synth_node(f, "node00005"), 1, 4);
    EXPECT_EQ(peer(f, "node00005", 1), "leaf0002/4");
    EXPECT_EQ(peer(f, "leaf0002", 1), "-");
    EXPECT_EQ(port(f, "leaf0002", 4).rate(), (Rate{Width::X4, Speed::HDR}));
    EXPECT_THROW(move_far_end(f, synth_node(f, "node00006"), 1, 4), std::invalid_argument);  // in use

    cross_cables(f, synth_node(f, "leaf0001"), 5, 6);
    EXPECT_EQ(peer(f, "leaf0001", 5), "spine0002/1");
    EXPECT_EQ(peer(f, "leaf0001", 6), "spine0001/1");

    set_link_rate(f, synth_node(f, "spine0003"), 1, {Width::X1, Speed::EDR});
    EXPECT_EQ(to_string(port(f, "leaf0001", 7).rate()), "1xEDR");
    set_link_mtu(f, synth_node(f, "leaf0001"), 7, 1024);
    EXPECT_EQ(port(f, "spine0003", 1).mtu_active, 1024);

    NodeId h = add_host(f, "extra mlx5_1", 0x1230, leaf2, 3);
    EXPECT_EQ(f.node(h).name, "extra");
    EXPECT_EQ(peer(f, "extra", 1), "leaf0002/3");
    EXPECT_THROW(add_host(f, "dup x", 0x1230, leaf2, 1), std::invalid_argument);

    size_t links = f.link_count();
    Fabric g = without_node(f, synth_node(f, "spine0004"));
    EXPECT_EQ(g.size(), f.size() - 1);
    EXPECT_EQ(synth_node(g, "spine0004"), kNoNode);
    EXPECT_EQ(g.link_count(), links - 2);
    EXPECT_EQ(peer(g, "leaf0001", 8), "-");
    EXPECT_EQ(peer(g, "extra", 1), "leaf0002/3");  // ids above the removed node were remapped
    EXPECT_TRUE(g.find(0x1230).has_value());
}
