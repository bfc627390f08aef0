#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibf/lab_plan.h"
#include "ibf/plan_yaml.h"
#include "plan_fixture.h"

using namespace ibf;

TEST(LabPlan, NothingToAdjustKeepsThePlan) {
    LabExpectation e = lab_expectation(test::small_plan());
    EXPECT_FALSE(e.adjusted);
    EXPECT_TRUE(e.warnings.empty());
}

TEST(LabPlan, Mtu4096AndNdrAreMappedToWhatIbsimCanDo) {
    Plan p = test::small_plan();
    for (auto& l : p.links) l.mtu = 4096;
    p.links[0].rate = Rate{Width::X4, Speed::NDR};
    p.links[0].label = "L01-S01-A";
    p.nodes[0].guid = 0x0002c90300001111;
    LabExpectation e = lab_expectation(p);
    ASSERT_TRUE(e.adjusted);
    EXPECT_EQ(e.warnings.size(), 2u);
    // The adjusted plan reads back as the same nodes and cables with MTU 2048 and HDR.
    Plan q = parse_plan_yaml(e.yaml, "expected-plan.yaml");
    ASSERT_EQ(q.nodes.size(), p.nodes.size());
    ASSERT_EQ(q.links.size(), p.links.size());
    auto find = [&](const std::string& name, const std::string& hca) -> const PlannedNode* {
        for (auto& n : q.nodes)
            if (n.name == name && n.hca == hca) return &n;
        return nullptr;
    };
    for (auto& n : p.nodes) {
        const PlannedNode* m = find(n.name, n.hca);
        ASSERT_NE(m, nullptr) << n.name;
        EXPECT_EQ(m->type, n.type) << n.name;
        if (n.num_ports) {
            EXPECT_EQ(m->num_ports, n.num_ports) << n.name;
        }
        EXPECT_EQ(m->guid, n.guid) << n.name;
    }
    int hdr = 0, labelled = 0;
    for (auto& l : q.links) {
        ASSERT_TRUE(l.mtu);
        EXPECT_EQ(*l.mtu, 2048);
        ASSERT_TRUE(l.rate);
        EXPECT_NE(l.rate->speed, Speed::NDR);
        if (*l.rate == Rate{Width::X4, Speed::HDR}) ++hdr;
        if (l.label == "L01-S01-A") ++labelled;
    }
    EXPECT_EQ(hdr, 7);  // 6 planned HDR + the NDR one
    EXPECT_EQ(labelled, 1);
}

// The 8k-host example (640 switches, 24,576 cables, MTU 4096 everywhere) becomes an explicit plan
// for the lab: it must stay under the plan reader's YAML node limit (it did not, when every cable
// repeated its rate and MTU) and mean the same cabling at MTU 2048.
TEST(LabPlan, TheEightThousandHostExampleStaysUnderTheYamlNodeLimit) {
    const std::string path = std::string(IBF_SOURCE_DIR) + "/config/examples/fat-tree-3tier-8192.yaml";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const Plan p = load_plan(text.str(), path);
    const LabExpectation e = lab_expectation(p);
    ASSERT_TRUE(e.adjusted);
    EXPECT_NE(e.yaml.find("\nrate: 4xHDR\nmtu: 2048\n"), std::string::npos);  // said once, plan-wide
    EXPECT_EQ(e.yaml.find(", mtu: "), std::string::npos);
    const Plan q = load_plan(e.yaml, "expected-plan.yaml");  // the bounded reader the daemon uses
    ASSERT_EQ(q.links.size(), 24576u);
    for (const auto& l : q.links) {
        ASSERT_TRUE(l.mtu && l.rate);
        EXPECT_EQ(*l.mtu, 2048);
        EXPECT_EQ(*l.rate, (Rate{Width::X4, Speed::HDR}));
    }
}
