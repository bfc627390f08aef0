// Absent hosts of one switch (ibf/absent_group.h): a rack powered off is one host_absent finding
// listing its hosts, under its leaf; fewer than three stay single; maintenance waives a member alone
// and what is left is grouped again.
#include <gtest/gtest.h>

#include <string>

#include "ibf/absent_group.h"
#include "ibf/check.h"
#include "ibf/report.h"
#include "ibf/synth.h"
#include "ibf/waivers.h"
#include "plan_of.h"

using namespace ibf;
using ibf::test::plan_of;

namespace {

// 3 leaves of 4 hosts: node00001-4 on leaf0001, node00005-8 on leaf0002, node00009-12 on leaf0003.
Fabric tree() { return synth_fat_tree({.levels = 2, .radix = 8, .hosts = 12}); }

Fabric without(Fabric f, std::initializer_list<const char*> hosts) {
    for (const char* h : hosts) f = without_node(f, synth_node(f, h));
    return f;
}

std::string dump(const std::vector<Finding>& fs) {
    std::string s;
    for (const Finding& f : fs) s += std::string(to_string(f.kind)) + ": " + f.message + "\n";
    return s;
}

}  // namespace

TEST(AbsentGroup, TheHostsOfOneLeafAreOneFindingListingThem) {
    const Fabric f = tree();
    const Plan p = plan_of(f);
    const auto fs = check(p, without(f, {"node00005", "node00006", "node00007", "node00008", "node00001"}));
    ASSERT_EQ(fs.size(), 2u) << dump(fs);
    const Finding* g = nullptr;
    const Finding* one = nullptr;
    for (const Finding& x : fs) (x.members.empty() ? one : g) = &x;
    ASSERT_TRUE(g && one) << dump(fs);
    EXPECT_EQ(one->kind, FindingKind::host_absent);
    EXPECT_EQ(one->a.name, "node00001");  // alone on its leaf: a single finding, as before
    EXPECT_EQ(g->kind, FindingKind::host_absent);
    EXPECT_EQ(g->severity, Severity::warning);
    EXPECT_EQ(g->a.name, "leaf0002");  // the report lists it under the leaf
    EXPECT_EQ(g->expected, "4 hosts");
    EXPECT_EQ(g->actual, "node[00005-00008]");
    EXPECT_EQ(g->message,
              "4 hosts of leaf0002 are absent (node[00005-00008]; a rack powered off or drained?); if they are in "
              "maintenance: ibfabric maintenance add 'node[00005-00008]' --until DATE --reason TEXT, else power them "
              "on and check their cables");
    ASSERT_EQ(g->members.size(), 4u);
    EXPECT_EQ(g->members[0].a.name, "node00005");
    EXPECT_EQ(g->members[3].a.name, "node00008");
    // Every member's cable is in the group's links, with its planned switch port.
    ASSERT_EQ(g->links.size(), 4u);
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(g->links[k].a.name, "node0000" + std::to_string(5 + k));
        EXPECT_EQ(g->links[k].planned.name, "leaf0002");
        EXPECT_EQ(g->links[k].planned.port, k + 1);
    }
    // JSON carries the members and reads back; the text report has one line for the rack.
    const Finding back = finding_from_json(finding_to_json(*g));
    ASSERT_EQ(back.members.size(), 4u);
    EXPECT_EQ(back.members[2].a.name, "node00007");
    const std::string t = render_text(fs, false);
    EXPECT_NE(t.find("host_absent (2)"), std::string::npos) << t;
}

TEST(AbsentGroup, TwoHostsOfALeafStaySingle) {
    const Fabric f = tree();
    const auto fs = check(plan_of(f), without(f, {"node00005", "node00006"}));
    ASSERT_EQ(fs.size(), 2u) << dump(fs);
    for (const Finding& x : fs) {
        EXPECT_EQ(x.kind, FindingKind::host_absent);
        EXPECT_TRUE(x.members.empty()) << x.message;
    }
}

TEST(AbsentGroup, MaintenanceWaivesOneMemberAndTheRestIsGroupedAgain) {
    const Fabric f = tree();
    const auto fs = check(plan_of(f), without(f, {"node00005", "node00006", "node00007", "node00008"}));
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    ASSERT_EQ(fs[0].members.size(), 4u);
    const int64_t now = 1'790'000'000'000;  // 2026-09
    WaiverSet one = parse_waivers("maintenance:\n  - hosts: node00005\n    until: 2027-01-01\n    reason: DIMM\n", "w.yaml");
    Waived r = apply_waivers(fs, one, now);
    ASSERT_EQ(r.waived.size(), 1u);
    EXPECT_EQ(r.waived[0].finding.a.name, "node00005");
    EXPECT_TRUE(r.waived[0].maintenance);
    ASSERT_EQ(r.active.size(), 1u) << dump(r.active);
    EXPECT_EQ(r.active[0].actual, "node[00006-00008]");
    EXPECT_EQ(r.active[0].members.size(), 3u);
    // Two in maintenance: the two left are single findings.
    WaiverSet two = parse_waivers("maintenance:\n  - hosts: node[00005-00006]\n    until: 2027-01-01\n    reason: DIMM\n", "w.yaml");
    r = apply_waivers(fs, two, now);
    EXPECT_EQ(r.waived.size(), 2u);
    ASSERT_EQ(r.active.size(), 2u) << dump(r.active);
    EXPECT_EQ(r.active[0].a.name, "node00007");
    EXPECT_TRUE(r.active[0].members.empty());
    // The whole rack in maintenance: nothing active.
    WaiverSet all = parse_waivers("maintenance:\n  - hosts: node[00005-00008]\n    until: 2027-01-01\n    reason: DIMM\n", "w.yaml");
    r = apply_waivers(fs, all, now);
    EXPECT_EQ(r.waived.size(), 4u);
    EXPECT_TRUE(r.active.empty()) << dump(r.active);
}

TEST(AbsentGroup, OtherFindingsKeepTheirPlaceAndAGroupIsLeftAsItIs) {
    Finding other;
    other.kind = FindingKind::missing_link;
    other.a = {"leaf0001", 0, 7};
    std::vector<Finding> fs = {other};
    for (const char* h : {"n1", "n2", "n3"}) {
        Finding x;
        x.kind = FindingKind::host_absent;
        x.severity = Severity::warning;
        x.a = {h, 0, 0};
        x.links = {{{h, 0, 1}, {}, {"leaf9", 0, 1}, "", ""}};
        fs.push_back(x);
    }
    const auto once = group_absent_hosts(fs);
    ASSERT_EQ(once.size(), 2u);
    EXPECT_EQ(once[0].kind, FindingKind::missing_link);
    EXPECT_EQ(once[1].actual, "n[1-3]");
    const auto twice = group_absent_hosts(once);
    ASSERT_EQ(twice.size(), 2u);
    EXPECT_EQ(twice[1].members.size(), 3u);
    EXPECT_EQ(ungroup_absent_hosts(twice[1]).size(), 3u);
}
