// The plan's scope: (docs/plan.md): a plan without hosts, and named nodes left out, on the SX6036 capture.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/plan_yaml.h"

using namespace ibf;

namespace {

Fabric sx6036() {
    const std::string path = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_dump(ss.str(), path);
}

// The golden plan of `f` with only its switches and the cables between them.
Plan switches_only(const Fabric& f) {
    Plan all = plan_from_fabric(f, "golden");
    Plan p;
    p.source = all.source;
    std::vector<size_t> index(all.nodes.size(), SIZE_MAX);
    for (size_t i = 0; i < all.nodes.size(); ++i)
        if (all.nodes[i].type == NodeType::Switch) index[i] = p.nodes.size(), p.nodes.push_back(all.nodes[i]);
    for (PlannedLink l : all.links) {
        if (index[l.a.node] == SIZE_MAX || index[l.b.node] == SIZE_MAX) continue;
        l.a.node = index[l.a.node];
        l.b.node = index[l.b.node];
        p.links.push_back(l);
    }
    return p;
}

size_t count(const std::vector<Finding>& fs, FindingKind k) {
    return static_cast<size_t>(std::count_if(fs.begin(), fs.end(), [&](const Finding& f) { return f.kind == k; }));
}

TEST(PlanScope, APlanWithoutHostsIgnoresThem) {
    const Fabric f = sx6036();
    Plan p = switches_only(f);
    ASSERT_EQ(p.nodes.size(), 8u);
    std::vector<Finding> fs = check(p, f);
    EXPECT_EQ(fs.size(), 144u);  // today's complaint: one unexpected_node per host
    EXPECT_EQ(count(fs, FindingKind::unexpected_node), 144u);
    p.scope.ignore_hosts = true;
    EXPECT_TRUE(check(p, f).empty());
}

TEST(PlanScope, HostsIgnoredStillChecksTheSwitches) {
    Fabric f = sx6036();
    Plan p = switches_only(f);
    p.scope.ignore_hosts = true;
    const NodeId ib1 = f.find_by_name("ib1").at(0);
    const Port& up = f.node(ib1).ports[21];  // to ib8/2
    ASSERT_TRUE(up.linked());
    f.disconnect(ib1, 21);
    const std::vector<Finding> fs = check(p, f);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].kind, FindingKind::missing_link);
}

TEST(PlanScope, IgnorePatternsLeaveNodesOut) {
    const Fabric f = sx6036();
    Plan p = switches_only(f);
    p.scope.ignore = {"stage*", "tank?", "cl[0-9]*", "*"};
    EXPECT_TRUE(check(p, f).empty());
    p.scope.ignore = {"tank*"};
    const std::vector<Finding> fs = check(p, f);
    EXPECT_EQ(count(fs, FindingKind::unexpected_node), 142u);  // the two tank hosts are left out
    for (const Finding& x : fs) EXPECT_NE(x.a.name.rfind("tank", 0), 0u) << x.message;
}

TEST(PlanScope, YamlScope) {
    const Plan p = parse_plan_yaml(
        "version: 1\nscope:\n  hosts: ignore\n  ignore: [\"tank*\", mgmt01]\ncables:\n  - {a: leaf01/1, b: spine01/1}\n", "p.yaml");
    EXPECT_TRUE(p.scope.ignore_hosts);
    EXPECT_EQ(p.scope.ignore, (std::vector<std::string>{"tank*", "mgmt01"}));
    try {
        parse_plan_yaml("version: 1\nscope:\n  hosts: skip\n", "p.yaml");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "p.yaml:3:10: expected 'check' or 'ignore' for scope.hosts, got 'skip'");
    }
    try {
        parse_plan_yaml("version: 1\nscope:\n  host: ignore\n", "p.yaml");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "p.yaml:3:3: unknown key 'host' in scope; did you mean 'hosts'? (expected one of: hosts, ignore)");
    }
}

}  // namespace
