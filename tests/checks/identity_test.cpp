// Node identity (checks/identity.h) and one naming (model/names.h) on the real captures: a
// node-name-map that renames the switches, an RMA'd leaf and an RMA'd spine still get their
// cabling, rate and MTU checked; a crossed pair is one swap; the same node has the same name in
// check, analyze and plan from-dump.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibf/analysis.h"
#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/identity.h"
#include "ibf/names.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"
#include "ibf/plan_yaml.h"

using namespace ibf;

namespace {

const std::string kSx6036 = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
const std::string kX5 = std::string(IBF_TEST_DATA) + "/ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

std::string dump(const std::vector<Finding>& fs) {
    std::string s;
    for (const auto& f : fs)
        s += std::string(to_string(f.kind)) + " " + f.a.name + "/" + std::to_string(f.a.port) + " " + f.b.name + "/" +
             std::to_string(f.b.port) + " exp=" + f.expected + " act=" + f.actual + " | " + f.message + "\n";
    return s;
}

// `ibfabric plan from-dump` of a capture, parsed back.
Plan plan_from_dump(const Fabric& f, const std::string& path, bool pin_all_guids = false) {
    InferOptions opt;
    opt.pin_all_guids = pin_all_guids;
    return parse_plan_yaml(plan_yaml_text(infer_plan(f, analyze(f), path, opt).doc), "plan.yaml");
}

// The faults of issue 9 on the SX6036 capture: ib3/21 and ib3/23 (to ib8/18 and ib8/20) crossed,
// ib3/25 -- ib8/22 at 1x.
constexpr Guid kIb3 = 0xf4521403007e8af0, kIb8 = 0xf4521403007ea570;

void cross_and_degrade(Fabric& f, Guid g3 = kIb3, Guid g8 = kIb8) {
    ASSERT_TRUE(f.find(g3) && f.find(g8));
    const NodeId ib3 = *f.find(g3), ib8 = *f.find(g8);
    ASSERT_EQ(f.node(ib3).port(21)->peer, ib8);
    ASSERT_EQ(f.node(ib3).port(21)->peer_port, 18);
    ASSERT_EQ(f.node(ib3).port(23)->peer_port, 20);
    ASSERT_EQ(f.node(ib3).port(25)->peer_port, 22);
    f.connect(ib3, 21, ib8, 20);
    f.connect(ib3, 23, ib8, 18);
    f.node(ib3).port(25)->width_active = Width::X1;
    f.node(ib8).port(22)->width_active = Width::X1;
}

const Finding* first_of(const std::vector<Finding>& fs, FindingKind k) {
    for (const Finding& f : fs)
        if (f.kind == k) return &f;
    return nullptr;
}

// The two faults, named by the plan: the crossed pair is one swap, the 1x link a rate_mismatch.
void expect_faults(const std::vector<Finding>& fs) {
    ASSERT_TRUE(first_of(fs, FindingKind::miswired) && first_of(fs, FindingKind::rate_mismatch)) << dump(fs);
    const Finding& sw = *first_of(fs, FindingKind::miswired);
    EXPECT_EQ(sw.kind, FindingKind::miswired);
    EXPECT_EQ(sw.a.name, "ib3");
    EXPECT_EQ(sw.a.port, 21);
    EXPECT_EQ(sw.b.name, "ib8");
    EXPECT_EQ(sw.b.port, 20);
    EXPECT_EQ(sw.expected, "ib8/18");
    EXPECT_EQ(sw.actual, "ib8/20");
    EXPECT_EQ(sw.message,
              "cables at ib3/21 and ib3/23 are crossed: ib3/21 goes to ib8/20 and ib3/23 to ib8/18, plan says the "
              "other way round; swap the cables at ib8/18 and ib8/20");
    const Finding& r = *first_of(fs, FindingKind::rate_mismatch);
    EXPECT_EQ(r.kind, FindingKind::rate_mismatch);
    EXPECT_EQ(r.expected, "4xFDR10");
    EXPECT_EQ(r.actual, "1xFDR10");
    EXPECT_EQ(r.message,
              "ib3/25 -- ib8/22 runs at 1xFDR10 (10 Gb/s), plan says 4xFDR10 (40 Gb/s); width degraded: reseat or "
              "replace the cable");
}

}  // namespace

TEST(Identity, NodeNameMapRenamesKeepTheFaults) {
    Fabric golden = parse_dump(slurp(kSx6036), kSx6036);
    Plan plan = plan_from_dump(golden, kSx6036);
    ASSERT_TRUE(check(plan, golden).empty()) << dump(check(plan, golden));

    Fabric actual = parse_dump(slurp(kSx6036), kSx6036);
    cross_and_degrade(actual);
    auto fs = check(plan, actual);
    ASSERT_EQ(fs.size(), 2u) << dump(fs);
    expect_faults(fs);

    // The node-name-map of issue 9 renames the leaf ib3 (and the spine ib8).
    apply_node_name_map(actual, parse_node_name_map("0xf4521403007e8af0 \"rack03-leaf-ib3\"\n"
                                                    "0xf4521403007ea570 \"rack01-spine-ib8\"\n",
                                                    "map"));
    fs = check(plan, actual);
    ASSERT_EQ(fs.size(), 4u) << dump(fs);
    expect_faults(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::miswired);  // the faults first, then the renames
    EXPECT_EQ(fs[1].kind, FindingKind::rate_mismatch);
    EXPECT_EQ(fs[2].kind, FindingKind::identity_changed);
    EXPECT_EQ(fs[3].kind, FindingKind::identity_changed);
    EXPECT_EQ(fs[2].severity, Severity::warning);
    EXPECT_EQ(fs[2].a.name, "ib3");
    EXPECT_EQ(fs[2].a.guid, kIb3);
    EXPECT_EQ(fs[2].expected, "ib3");
    EXPECT_EQ(fs[2].actual, "renamed: \"rack03-leaf-ib3\" (0xf4521403007e8af0)");
    EXPECT_EQ(fs[2].message,
              "ib3 is called \"rack03-leaf-ib3\" in the fabric (0xf4521403007e8af0), found by its cabling; its cables "
              "are checked as ib3's; use one name in the plan and the node-name-map");
    EXPECT_EQ(fs[3].a.name, "ib8");
    EXPECT_EQ(fs[3].actual, "renamed: \"rack01-spine-ib8\" (0xf4521403007ea570)");

    const NodeMatch m = match_nodes(plan, actual);
    size_t renamed = 0;
    for (MatchHow h : m.how) renamed += h == MatchHow::position;
    EXPECT_EQ(renamed, 2u);
}

TEST(Identity, RenamingEverySwitchIsOneGroupedFindingAfterTheFaults) {
    Fabric golden = parse_dump(slurp(kSx6036), kSx6036);
    Plan plan = plan_from_dump(golden, kSx6036);
    Fabric actual = parse_dump(slurp(kSx6036), kSx6036);
    cross_and_degrade(actual);
    std::string map;
    for (const Node& n : actual.nodes())
        if (n.type == NodeType::Switch) map += guid_hex(n.guid) + " \"rack-" + n.name + "\"\n";
    apply_node_name_map(actual, parse_node_name_map(map, "map"));
    auto fs = check(plan, actual);
    ASSERT_EQ(fs.size(), 3u) << dump(fs);
    expect_faults(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::miswired);
    EXPECT_EQ(fs[1].kind, FindingKind::rate_mismatch);
    const Finding& g = fs[2];
    EXPECT_EQ(g.kind, FindingKind::identity_changed);
    EXPECT_EQ(g.actual, "renamed: prefix \"rack-\"");
    EXPECT_EQ(g.expected, "8 nodes under the plan's names");
    ASSERT_EQ(g.members.size(), 8u);
    for (const Finding& m : g.members) {
        EXPECT_EQ(m.kind, FindingKind::identity_changed);
        EXPECT_EQ(m.actual.rfind("renamed: \"rack-" + m.a.name + "\"", 0), 0u) << m.actual;
    }
}

// An RMA'd switch: new GUID, a factory description, the same cables. The plan pins GUIDs.
class Rma : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(Rma, ReplacedSwitchIsOneFindingAndStillChecked) {
    const auto [old_guid, name] = GetParam();
    Fabric golden = parse_dump(slurp(kSx6036), kSx6036);
    Plan plan = plan_from_dump(golden, kSx6036, /*pin_all_guids=*/true);
    ASSERT_TRUE(check(plan, golden).empty());
    std::string text = replace_all(slurp(kSx6036), old_guid, "f45214030badc0de");
    text = replace_all(text, std::string("MF0;") + name + ":SX6036/U1", "MF0;switch-0badc0de:SX6036/U1");
    Fabric actual = parse_dump(text, "rma.txt");
    const std::string who = name;
    constexpr Guid kNew = 0xf45214030badc0de;
    cross_and_degrade(actual, who == "ib3" ? kNew : kIb3, who == "ib8" ? kNew : kIb8);
    auto fs = check(plan, actual);
    ASSERT_EQ(fs.size(), 3u) << dump(fs);
    expect_faults(fs);
    const Finding& id = fs[2];  // after the faults
    EXPECT_EQ(id.kind, FindingKind::identity_changed);
    EXPECT_EQ(id.a.name, who);
    EXPECT_EQ(id.a.guid, 0xf45214030badc0deu);
    EXPECT_EQ(id.expected, who + " (0x" + old_guid + ")");
    EXPECT_EQ(id.actual, "replaced: new GUID 0xf45214030badc0de, renamed \"switch-0badc0de\"");
    EXPECT_EQ(id.message, who + " was replaced: the switch cabled where the plan puts it has GUID 0xf45214030badc0de, "
                                "plan says 0x" + old_guid + " (it calls itself \"switch-0badc0de\"); its cables are "
                                "checked as " + who + "'s; update the plan's guid");
}

INSTANTIATE_TEST_SUITE_P(LeafAndSpine, Rma,
                         ::testing::Values(std::pair{"f4521403007e8af0", "ib3"},   // leaf, with the faults
                                           std::pair{"f4521403007ea570", "ib8"},   // spine, with the faults
                                           std::pair{"f4521403001165a0", "ib5"}),  // leaf, clean otherwise
                         [](const auto& info) { return std::string(info.param.second); });

// One naming (issue 9 item 2): on the X5 capture, a Voltaire switch that calls itself
// "Voltaire 4036 # 4036-369C" is "4036-369C", and four that share "Voltaire 4036 - 36 QDR ports
// switch" get "<tier>-<short GUID>" — the same in analyze, plan from-dump and check.
TEST(Naming, SameNameInAnalyzeCheckAndPlanFromDump) {
    Fabric f = parse_dump(slurp(kX5), kX5);
    const Analysis a = analyze(f);
    const NodeId named = *f.find(0x0008f1050020369c), shared = *f.find(0x0008f10500200b50);
    EXPECT_EQ(a.names[named], "4036-369C");
    const std::string shared_name = tier_word(a.tier_of[shared]) + "-0b50";
    EXPECT_EQ(a.names[shared], shared_name);
    EXPECT_EQ(a.names, NameBook(f, a.tier_of).all());

    const std::string yaml = plan_yaml_text(infer_plan(f, a, kX5).doc);
    Plan plan = parse_plan_yaml(yaml, "plan.yaml");
    ASSERT_TRUE(check(plan, f).empty());
    for (NodeId sw : {named, shared}) {
        bool found = false;
        for (const PlannedNode& pn : plan.nodes) found |= pn.name == a.names[sw];
        EXPECT_TRUE(found) << a.names[sw] << " not in the plan";
    }
    // A cable pulled at each: the check's findings name the switches as analyze does.
    Fabric pulled = f;
    int pn = 0, ps = 0;
    for (int p = 1; p <= f.node(named).num_ports() && !pn; ++p)
        if (f.node(named).port(p)->linked() && f.node(f.node(named).port(p)->peer).type == NodeType::CA) pn = p;
    for (int p = 1; p <= f.node(shared).num_ports() && !ps; ++p)
        if (f.node(shared).port(p)->linked() && f.node(f.node(shared).port(p)->peer).type == NodeType::CA) ps = p;
    ASSERT_TRUE(pn && ps);
    pulled.disconnect(named, pn);
    pulled.disconnect(shared, ps);
    CheckOptions opt;
    opt.tier_of = analyze(pulled).tier_of;
    auto fs = check(plan, pulled, opt);
    ASSERT_EQ(fs.size(), 2u) << dump(fs);
    for (const Finding& fd : fs) {
        EXPECT_EQ(fd.kind, FindingKind::missing_link);
        EXPECT_EQ(fd.a.name, fd.a.guid == f.node(named).guid ? "4036-369C" : shared_name) << dump(fs);
    }
    // Without a plan the names come from the same book: the names check uses for unplanned nodes.
    EXPECT_EQ(plan_name_book(plan, pulled, opt.tier_of).name(named), "4036-369C");
    EXPECT_EQ(plan_name_book(plan, pulled, opt.tier_of).name(shared), shared_name);
}

TEST(Naming, NameBookRules) {
    Fabric f;
    const NodeId l1 = f.add_node({.type = NodeType::Switch, .guid = 0x1111, .description = "MF0;dir1:CS7500/L12/U1"}, 36);
    const NodeId l2 = f.add_node({.type = NodeType::Switch, .guid = 0x2222, .description = "MF0;dir1:CS7500/L13/U1"}, 36);
    const NodeId s1 = f.add_node({.type = NodeType::Switch, .guid = 0xaaaacfb0, .description = "SwitchIB Mellanox Technologies"}, 36);
    const NodeId s2 = f.add_node({.type = NodeType::Switch, .guid = 0xbbbbcfb0, .description = "SwitchIB Mellanox Technologies"}, 36);
    const NodeId h1 = f.add_node({.type = NodeType::CA, .guid = 0x3333, .description = "gpu01 mlx5_0"}, 1);
    const NodeId h2 = f.add_node({.type = NodeType::CA, .guid = 0x4444, .description = "gpu01 mlx5_1"}, 1);
    const NodeId h3 = f.add_node({.type = NodeType::CA, .guid = 0x5555, .description = "node007 HCA-1"}, 1);
    const NodeId h4 = f.add_node({.type = NodeType::CA, .guid = 0x6666, .description = "localhost HCA-1"}, 1);
    const NodeId h5 = f.add_node({.type = NodeType::CA, .guid = 0x7777, .description = "localhost HCA-1"}, 1);
    f.finalize();
    std::vector<int> tiers(f.size(), 0);
    tiers[s1] = tiers[s2] = 1;
    NameBook b(f, tiers);
    EXPECT_EQ(b.name(l1), "dir1/L12/U1");
    EXPECT_EQ(b.name(l2), "dir1/L13/U1");
    EXPECT_EQ(b.name(s1), "leaf-aaaacfb0");  // "leaf-cfb0" is shared: 8 digits
    EXPECT_EQ(b.name(s2), "leaf-bbbbcfb0");
    EXPECT_EQ(b.name(h1), "gpu01:mlx5_0");
    EXPECT_EQ(b.name(h2), "gpu01:mlx5_1");
    EXPECT_EQ(b.name(h3), "node007");
    EXPECT_EQ(b.name(h4), "host-6666");
    EXPECT_EQ(b.name(h5), "host-7777");
    EXPECT_EQ(b.port(h3, 1), "node007/1");
    // Plan names first; one the plan gives twice gets the short GUID.
    std::vector<std::string> pref(f.size());
    pref[s1] = "leaf01";
    pref[h4] = pref[h5] = "login";
    NameBook p(f, tiers, pref);
    EXPECT_EQ(p.name(s1), "leaf01");
    EXPECT_EQ(p.name(s2), "leaf-cfb0");
    EXPECT_EQ(p.name(h4), "login@6666");
    EXPECT_EQ(p.name(h5), "login@7777");
    EXPECT_EQ(NameBook(f).name(s1), "switch-aaaacfb0");
}

// One name per node (issue 20 item 2): with a known-good dump as the plan (`check --expected
// golden.txt`), check names every GUID as analyze does, on every capture — "leaf-cce0", not
// "SwitchIB Mellanox Technologies@cce0" — and so do its findings.
TEST(Naming, CheckWithAGoldenDumpNamesEveryGuidAsAnalyzeDoesOnTheCaptures) {
    for (const char* file : {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt",
                             "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt",
                             "iblinkinfo-qdr-1sw-5ca-infiniscale4-36port.txt", "iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt",
                             "ibsim-sx6036-iblinkinfo.txt", "ibsim-x5-iblinkinfo.txt"}) {
        SCOPED_TRACE(file);
        const std::string path = std::string(IBF_TEST_DATA) + "/" + file;
        const Fabric golden = parse_dump(slurp(path), path);
        const Plan plan = plan_from_fabric(golden, path);
        Fabric now = golden;
        // A cable pulled at every switch's first host port: findings at every switch.
        for (NodeId n = 0; n < now.size(); ++n) {
            if (now.node(n).type != NodeType::Switch) continue;
            for (int p = 1; p <= now.node(n).num_ports(); ++p) {
                const Port* port = now.node(n).port(p);
                if (port && port->linked() && now.node(port->peer).type == NodeType::CA) {
                    now.disconnect(n, p);
                    break;
                }
            }
        }
        const Analysis a = analyze(now);
        EXPECT_EQ(plan_name_book(plan, now, a.tier_of).all(), a.names);
        const auto fs = check(plan, now, {.tier_of = a.tier_of});
        ASSERT_FALSE(fs.empty());
        for (const Finding& fd : fs)
            for (const Endpoint* e : {&fd.a, &fd.b}) {
                if (e->guid && now.find(e->guid)) {
                    EXPECT_EQ(e->name, a.names[*now.find(e->guid)]) << fd.message;
                }
            }
    }
}

// A director's ASICs all call themselves "dir1": the golden plan keeps their line and spine cards.
TEST(Naming, DirectorAsicsKeepTheirCardWithAGoldenPlan) {
    Fabric f;
    const NodeId l3 = f.add_node({.type = NodeType::Switch, .guid = 0x7ae0, .description = "MF0;dir1:CS7500/L03/U2"}, 36);
    const NodeId l4 = f.add_node({.type = NodeType::Switch, .guid = 0x7af0, .description = "MF0;dir1:CS7500/L04/U2"}, 36);
    const NodeId s1 = f.add_node({.type = NodeType::Switch, .guid = 0x7b00, .description = "MF0;dir1:CS7500/S01/U1"}, 36);
    const NodeId h1 = f.add_node({.type = NodeType::CA, .guid = 0x100, .description = "node001 mlx5_0"}, 1);
    const NodeId h2 = f.add_node({.type = NodeType::CA, .guid = 0x200, .description = "node002 mlx5_0"}, 1);
    f.connect(l3, 19, s1, 1);
    f.connect(l4, 19, s1, 2);
    f.connect(l3, 1, h1, 1);
    f.connect(l4, 1, h2, 1);
    f.finalize();
    const Plan plan = plan_from_fabric(f, "golden");
    Fabric now = f;
    now.disconnect(l3, 19);
    now.finalize();
    const Analysis a = analyze(now);
    const auto fs = check(plan, now, {.tier_of = a.tier_of});
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::missing_link);
    EXPECT_EQ(fs[0].a.name, "dir1/L03/U2");
    EXPECT_EQ(fs[0].b.name, "dir1/S01/U1");
    EXPECT_EQ(fs[0].message.find("dir1@"), std::string::npos) << fs[0].message;
    EXPECT_EQ(a.names[l3], "dir1/L03/U2");
}
