// Grouped identity (check.h): many nodes renamed or replaced by one rule are one identity_changed
// finding listing them, after the real faults; a few stay single; the rule is named.
#include <gtest/gtest.h>

#include <string>

#include "ibf/check.h"
#include "ibf/error.h"
#include "ibf/report.h"
#include "ibf/synth.h"
#include "plan_of.h"

using namespace ibf;
using ibf::test::plan_of;

namespace {

Fabric small_tree() { return synth_fat_tree({.levels = 2, .radix = 8, .hosts = 6}); }

// Renames every switch of `f` by `rename` (what a new node-name-map does).
template <class F>
void rename_switches(Fabric& f, F rename) {
    for (NodeId n = 0; n < f.size(); ++n)
        if (f.node(n).type == NodeType::Switch) f.node(n).name = rename(f.node(n).name);
    f.finalize();
}

}  // namespace

TEST(IdentityGroup, APrefixOnEverySwitchIsOneFindingAfterTheRealFault) {
    Fabric f = small_tree();
    const Plan p = plan_of(f, /*by_guid=*/false);
    rename_switches(f, [](const std::string& n) { return "dc1-" + n; });
    set_link_rate(f, synth_node(f, "dc1-leaf0001"), 6, {Width::X1, Speed::HDR});
    const auto fs = check(p, f);
    ASSERT_EQ(fs.size(), 2u);
    EXPECT_EQ(fs[0].kind, FindingKind::rate_mismatch);  // the real fault first
    EXPECT_EQ(fs[0].a.name, "leaf0001");                // named as the plan names it
    const Finding& g = fs[1];
    EXPECT_EQ(g.kind, FindingKind::identity_changed);
    EXPECT_EQ(g.severity, Severity::warning);
    EXPECT_EQ(g.expected, "6 nodes under the plan's names");
    EXPECT_EQ(g.actual, "renamed: prefix \"dc1-\"");
    ASSERT_EQ(g.members.size(), 6u);
    EXPECT_EQ(g.members[0].expected, "leaf0001");
    EXPECT_EQ(g.members[0].actual.rfind("renamed: \"dc1-leaf0001\"", 0), 0u) << g.members[0].actual;
    EXPECT_EQ(g.members[5].expected, "spine0004");
    EXPECT_EQ(g.message,
              "6 nodes are renamed by one rule, prefix \"dc1-\" (leaf0001 -> dc1-leaf0001, leaf0002 -> dc1-leaf0002, "
              "spine0001 -> dc1-spine0001, spine0002 -> dc1-spine0002, ...); found by their cabling, their cables are "
              "checked under the plan's names; use one set of names in the plan and the node-name-map");
    // The text report: one line for the group, the real fault listed first.
    const std::string t = render_text(fs, false);
    EXPECT_LT(t.find("rate_mismatch (1)"), t.find("identity_changed (1)")) << t;
    // JSON carries every member, and reads back.
    const Finding back = finding_from_json(finding_to_json(g));
    ASSERT_EQ(back.members.size(), 6u);
    EXPECT_EQ(back.members[3].a.name, g.members[3].a.name);
}

TEST(IdentityGroup, SuffixesAndUnrelatedNamesAreRulesToo) {
    Fabric f = small_tree();
    const Plan p = plan_of(f, false);
    rename_switches(f, [](const std::string& n) { return n + ".ib"; });
    auto fs = check(p, f);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].actual, "renamed: suffix \".ib\"");

    Fabric g = small_tree();
    int k = 0;
    rename_switches(g, [&k](const std::string&) { return "sw-" + std::to_string(++k * 7); });
    fs = check(p, g);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].actual, "renamed: new names");
    EXPECT_EQ(fs[0].members.size(), 6u);
}

TEST(IdentityGroup, FewerThanThreeStaySingle) {
    Fabric f = small_tree();
    const Plan p = plan_of(f, false);
    for (const char* n : {"spine0001", "spine0002"}) f.node(synth_node(f, n)).name = std::string("dc1-") + n;
    f.finalize();
    const auto fs = check(p, f);
    ASSERT_EQ(fs.size(), 2u);
    for (const Finding& x : fs) {
        EXPECT_EQ(x.kind, FindingKind::identity_changed);
        EXPECT_TRUE(x.members.empty());
    }
    EXPECT_EQ(fs[0].expected, "spine0001");
}

TEST(IdentityGroup, GroupMembersCannotNest) {
    Fabric f = small_tree();
    const Plan p = plan_of(f, false);
    rename_switches(f, [](const std::string& n) { return "dc1-" + n; });
    auto j = finding_to_json(check(p, f).at(0));
    j["members"][0]["members"] = nlohmann::json::array({j["members"][1]});
    EXPECT_THROW(finding_from_json(j), InputError);
}
