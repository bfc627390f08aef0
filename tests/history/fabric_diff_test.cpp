// diff_states / apply_changes / summarize / the JSON round trips, on small synthetic trees.
#include <gtest/gtest.h>

#include "ibf/change_json.h"
#include "ibf/fabric_diff.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

Fabric tree() { return synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8}); }

FabricState state(const Fabric& f, SmState st = SmState::Master) {
    return fabric_state(f, SmInfo{.port_guid = 0x100, .lid = 1, .priority = 15, .state = st}, {});
}

TEST(FabricDiff, SameFabricHasNoChanges) {
    const Fabric f = tree();
    EXPECT_TRUE(diff_states(state(f), state(f)).empty());
    EXPECT_EQ(summarize({}), "no changes");
}

TEST(FabricDiff, UnlinkedCableIsOneLinkRemoved) {
    const Fabric f = tree();
    Fabric g = f;
    remove_cable(g, synth_node(g, "leaf0001"), 5);  // leaf 1 port h+1 -> spine 1
    const auto cs = diff_states(state(f), state(g));
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0].kind, ChangeKind::link_removed);
    EXPECT_EQ(describe(cs[0]), "leaf0001/5 -- spine0001/1 removed (was 4xHDR MTU 4096)");
    EXPECT_EQ(summarize(cs), "1 link removed: leaf0001/5 -- spine0001/1 removed (was 4xHDR MTU 4096)");
}

TEST(FabricDiff, DegradedWidthAndMtuAreOneLinkChanged) {
    const Fabric f = tree();
    Fabric g = f;
    const NodeId leaf = synth_node(g, "leaf0002");
    set_link_rate(g, leaf, 6, {Width::X1, Speed::HDR});
    set_link_mtu(g, leaf, 6, 2048);
    const auto cs = diff_states(state(f), state(g));
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0].kind, ChangeKind::link_changed);
    EXPECT_EQ(describe(cs[0]), "leaf0002/6 -- spine0002/2: 4xHDR MTU 4096 -> 1xHDR MTU 2048");
}

TEST(FabricDiff, MovedCableIsRemovedPlusAdded) {
    const Fabric f = tree();
    Fabric g = f;
    cross_cables(g, synth_node(g, "leaf0001"), 5, 6);
    const auto cs = diff_states(state(f), state(g));
    ASSERT_EQ(cs.size(), 4u);
    EXPECT_EQ(summarize(cs), "2 links added, 2 links removed");
}

TEST(FabricDiff, NewHostIsNodeLinkAndLidAddedRemovedHostIsNodeAndLink) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 7});
    Fabric g = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8});
    const auto cs = diff_states(state(f), state(g));
    EXPECT_EQ(summarize(cs), "1 node added, 1 link added, 1 LID changed");
    EXPECT_EQ(describe(cs[2]), "LID of node00008/1: none -> 14");  // 6 switches, then hosts from LID 7
    EXPECT_EQ(apply_changes(state(f), cs), state(g));
    const auto back = diff_states(state(g), state(f));
    EXPECT_EQ(summarize(back), "1 node removed, 1 link removed");
    EXPECT_EQ(apply_changes(state(g), back), state(f));
}

TEST(FabricDiff, LidAndSmStateChanges) {
    const Fabric f = tree();
    Fabric g = f;
    const NodeId host = synth_node(g, "node00003");
    g.node(host).ports[1].lid = 99;
    const auto cs = diff_states(state(f), state(g, SmState::Standby));
    ASSERT_EQ(cs.size(), 2u);
    EXPECT_EQ(cs[0].kind, ChangeKind::lid_changed);
    EXPECT_EQ(describe(cs[0]), "LID of node00003/1: " + std::to_string(f.node(host).ports[1].lid) + " -> 99");
    EXPECT_EQ(describe(cs[1]), "SM 0x0000000000000100: MASTER -> STANDBY");
    EXPECT_EQ(summarize(cs), "1 LID changed, 1 SM changed");
}

TEST(FabricDiff, ApplyIsTheInverseOfDiffAndJsonRoundTrips) {
    const Fabric f = tree();
    Fabric g = f;
    cross_cables(g, synth_node(g, "leaf0001"), 5, 6);
    set_link_rate(g, synth_node(g, "leaf0002"), 6, {Width::X4, Speed::EDR});
    g.node(synth_node(g, "node00001")).ports[1].lid = 200;
    const FabricState a = state(f), b = fabric_state(g, SmInfo{.port_guid = 0x100, .lid = 2, .state = SmState::Master},
                                                      {SmInfo{.port_guid = 0x200, .state = SmState::Standby}});
    const auto cs = diff_states(a, b);
    EXPECT_EQ(apply_changes(a, cs), b);
    EXPECT_EQ(changes_from_json(nlohmann::json::parse(changes_to_json(cs).dump())), cs);
    EXPECT_EQ(state_from_json(nlohmann::json::parse(state_to_json(b).dump())), b);
    EXPECT_THROW(change_from_json(nlohmann::json{{"kind", "link_exploded"}}), std::invalid_argument);
    EXPECT_THROW(state_from_json(nlohmann::json{{"nodes", 3}}), std::invalid_argument);
}

TEST(FabricDiff, ChangesAsFindings) {
    const Fabric f = tree();
    Fabric g = f;
    remove_cable(g, synth_node(g, "leaf0001"), 5);
    set_link_rate(g, synth_node(g, "leaf0002"), 6, {Width::X1, Speed::HDR});
    const auto fs = changes_as_findings(diff_states(state(f), state(g, SmState::Standby)));
    ASSERT_EQ(fs.size(), 2u);  // the SM change has no finding kind
    EXPECT_EQ(fs[0].kind, FindingKind::missing_link);
    EXPECT_EQ(fs[0].severity, Severity::error);
    EXPECT_EQ(fs[0].a.name, "leaf0001");
    EXPECT_EQ(fs[0].a.port, 5);
    EXPECT_EQ(fs[0].b.name, "spine0001");
    EXPECT_EQ(fs[1].kind, FindingKind::rate_mismatch);
    EXPECT_EQ(fs[1].expected, "4xHDR");
    EXPECT_EQ(fs[1].actual, "1xHDR");
    EXPECT_EQ(fs[1].message, "leaf0002/6 -- spine0002/2 runs at 1xHDR, was 4xHDR; reseat or replace the cable");
}

}  // namespace
}  // namespace ibf
