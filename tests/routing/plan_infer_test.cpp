// `plan from-dump`: the inferred YAML plan parses and checks clean against the fabric it came
// from; regular tiers come out compact; the captures give the text of the old writer (tests/data/plans/).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibf/analysis.h"
#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"
#include "ibf/plan_yaml.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

Fabric load(const std::string& name) {
    std::ifstream in(std::string(IBF_TEST_DATA) + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_dump(ss.str(), name);
}

std::string dump_findings(const std::vector<Finding>& fs) {
    std::string s;
    for (size_t i = 0; i < fs.size() && i < 20; ++i) s += std::string(to_string(fs[i].kind)) + ": " + fs[i].message + "\n";
    return s;
}

// The inferred plan and its YAML text.
struct Written : InferredPlan {
    std::string yaml;
};

// Infers the plan, writes it, parses it back, checks the fabric against it: must be clean.
Written round_trip(const Fabric& f, bool pin_all = false) {
    InferOptions opt;
    opt.pin_all_guids = pin_all;
    Written p{infer_plan(f, analyze(f), "test", opt), ""};
    p.yaml = plan_yaml_text(p.doc);
    Plan plan;
    try {
        plan = parse_plan_yaml(p.yaml, "inferred.yaml");
    } catch (const std::exception& e) {
        ADD_FAILURE() << e.what() << "\n" << p.yaml.substr(0, 3000);
        return p;
    }
    std::vector<Finding> fs = check(plan, f);
    EXPECT_TRUE(fs.empty()) << fs.size() << " findings\n" << dump_findings(fs) << p.yaml.substr(0, 3000);
    return p;
}

TEST(PlanInfer, SyntheticTwoLevelTreeIsFullyCompact) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    Written p = round_trip(f);
    EXPECT_EQ(p.explicit_cables, 0) << p.yaml;
    EXPECT_EQ(p.compact_switches, 8);
    EXPECT_EQ(p.compact_hosts, 32);
    EXPECT_NE(p.yaml.find("\"leaf[0001-0008]\""), std::string::npos) << p.yaml;
    EXPECT_NE(p.yaml.find("up_to: spine"), std::string::npos);
    // one host group for the whole run of leaves
    EXPECT_NE(p.yaml.find("{names: [\"node[00001-00032]\"], hca: \"mlx5_0\", port: 1, attach: \"leaf[0001-0008]\", ports: \"1-4\", per_switch: 4}"),
              std::string::npos)
        << p.yaml;
}

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Node by node and cable by cable (identity, type, ports, tier; ends, label, rate, MTU).
void expect_same_plan(const Plan& x, const Plan& y) {
    ASSERT_EQ(x.nodes.size(), y.nodes.size());
    for (size_t i = 0; i < x.nodes.size(); ++i) {
        const PlannedNode &a = x.nodes[i], &b = y.nodes[i];
        EXPECT_TRUE(a.name == b.name && a.hca == b.hca && a.guid == b.guid && a.type == b.type && a.num_ports == b.num_ports &&
                    a.tier == b.tier)
            << "node " << i << ": " << a.name << " vs " << b.name;
    }
    ASSERT_EQ(x.links.size(), y.links.size());
    for (size_t i = 0; i < x.links.size(); ++i) {
        const PlannedLink &a = x.links[i], &b = y.links[i];
        EXPECT_TRUE(a.a.node == b.a.node && a.a.port == b.a.port && a.b.node == b.b.node && a.b.port == b.b.port &&
                    a.label == b.label && a.rate == b.rate && a.mtu == b.mtu)
            << "link " << i;
    }
}

// tests/data/plans/ holds what the writer gave before it went through yaml-cpp (string
// concatenation, issue 22) for these captures: the same text now, and parsed, the same Plan.
TEST(PlanInfer, WriterGivesTheTextAndPlanOfTheOldWriter) {
    const std::vector<std::pair<std::string, bool>> kept = {
        {"iblinkinfo-qdr-1sw-5ca-infiniscale4-36port.txt", false}, {"iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt", false},
        {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", false},   {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", true},
        {"ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt", false},
        {"ha/fat324.ibnetdiscover", false},                        {"ha/fat324.ibnetdiscover", true},
        {"synthetic-ibnetdiscover-hdr-sharp.txt", false},          {"ibsim-2sw2sp-4ca-ibnetdiscover.txt", false},
        {"synthetic-ibdiagnet2-2sw-3ca.net", false}};
    for (const auto& [path, pin] : kept) {
        const std::string name = path.substr(path.rfind('/') + 1);  // the source named in the top comment
        const std::string golden_path = std::string(IBF_TEST_DATA) + "/plans/" + name + (pin ? ".pin" : "") + ".yaml";
        SCOPED_TRACE(golden_path);
        const std::string golden = read(golden_path);
        ASSERT_FALSE(golden.empty());
        const Fabric f = load(path);
        InferOptions opt;
        opt.pin_all_guids = pin;
        const std::string yaml = plan_yaml_text(infer_plan(f, analyze(f), name, opt).doc);
        EXPECT_EQ(yaml, golden);
        expect_same_plan(parse_plan_yaml(yaml, "new.yaml"), parse_plan_yaml(golden, "old.yaml"));
    }
}

TEST(PlanInfer, EveryCaptureRoundTripsWithAllGuidsPinned) {
    for (const char* name : {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt",
                             "synthetic-ibnetdiscover-hdr-sharp.txt", "iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt"}) {
        SCOPED_TRACE(name);
        Written p = round_trip(load(name), true);
        EXPECT_NE(p.yaml.find("Every node is pinned by GUID"), std::string::npos);
    }
}

TEST(PlanInfer, OwnNamesAreNotPinnedGeneratedOnesAre) {
    Fabric f = load("ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt");
    Written p = round_trip(f);
    EXPECT_EQ(p.yaml.find("0xf452140300115da0"), std::string::npos);  // ib1: by name
    Fabric x5 = load("ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt");
    Written q = round_trip(x5);
    EXPECT_NE(q.yaml.find("\"spine-8098\": 0x0008f10500108098"), std::string::npos);  // generated: pinned
}

TEST(PlanInfer, Sx6036CaptureRoundTrips) {
    // ib1 lacks one cable to ib8: the other five leaves follow the rule (compact), ib1 goes to a
    // tier of its own with its 7 uplinks explicit; hosts are grouped per leaf; the storage hosts
    // on ib7 are explicit cables.
    Fabric f = load("ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt");
    Written p = round_trip(f);
    EXPECT_EQ(p.compact_switches, 5);
    EXPECT_EQ(p.compact_hosts, 142);
    EXPECT_EQ(p.explicit_cables, 7 + 3);
    EXPECT_NE(p.yaml.find("leaf_other:"), std::string::npos);
    EXPECT_NE(p.yaml.find("names: [\"ib1\"]"), std::string::npos) << p.yaml.substr(0, 1500);
}

TEST(PlanInfer, RegularSx6036RoundTripsCompact) {
    // With the missing ib1-ib8 cable in place (ib1/25 - ib8/6) the uplinks fit the rule.
    Fabric f = load("ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt");
    NodeId ib1 = f.find_by_name("ib1").at(0), ib8 = f.find_by_name("ib8").at(0);
    f.connect(ib1, 25, ib8, 6);
    f.node(ib1).ports[25].width_active = f.node(ib8).ports[6].width_active = Width::X4;
    f.node(ib1).ports[25].speed_active = f.node(ib8).ports[6].speed_active = Speed::FDR10;
    Written p = round_trip(f);
    EXPECT_EQ(p.compact_switches, 6) << p.yaml;
    EXPECT_EQ(p.explicit_cables, 3);  // tank1 x2, tank2 on ib7
}

TEST(PlanInfer, X5CaptureRoundTrips) {
    Fabric f = load("ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt");
    Written p = round_trip(f);
    EXPECT_EQ(p.compact_hosts, 89);
}

TEST(PlanInfer, SharpDumpRoundTrips) {
    Fabric f = load("synthetic-ibnetdiscover-hdr-sharp.txt");
    Written p = round_trip(f);
    EXPECT_EQ(p.explicit_cables, 2);  // the aggregation nodes
    // Named as every output names them, not {node: "Mellanox", hca: "Technologies"} from the
    // vendor's default description (issue 20 item 9).
    EXPECT_NE(p.yaml.find("sharp-b208"), std::string::npos) << p.yaml;
    EXPECT_NE(p.yaml.find("sharp-b308"), std::string::npos) << p.yaml;
    EXPECT_EQ(p.yaml.find("Technologies"), std::string::npos) << p.yaml;
    const Analysis a = analyze(f);
    EXPECT_EQ(a.names[*f.find(0xb8cef60300a1b208)], "sharp-b208");
}

// The case was an iblinkinfo capture, where the aggregation node is only a far end:
// tests/data/synthetic-iblinkinfo-sharp.txt (sw-ib01 port 5 to "Mellanox Technologies Aggregation Node").
TEST(PlanInfer, SharpNodeOfAnIblinkinfoCaptureIsNamedAsEverywhere) {
    Fabric f = load("synthetic-iblinkinfo-sharp.txt");
    Written p = round_trip(f);
    EXPECT_NE(p.yaml.find("{a: {node: \"sw-ib01\", port: 5}, b: {node: \"sharp-b208\", port: 1}}"), std::string::npos)
        << p.yaml;
    EXPECT_EQ(p.yaml.find("Technologies"), std::string::npos) << p.yaml;
}

TEST(PlanInfer, FullThreeLevelTreesAreCompactWithPodsAndPlanes) {
    for (int radix : {4, 8}) {
        Fabric f = synth_fat_tree({.levels = 3, .radix = radix});
        Written p = round_trip(f);
        FatTreeShape shape = fat_tree_shape({.levels = 3, .radix = radix});
        EXPECT_EQ(p.explicit_cables, 0) << radix << "\n" << p.yaml.substr(0, 2000);
        EXPECT_EQ(p.compact_switches, shape.leaves + shape.spines);
        EXPECT_NE(p.yaml.find("pods: " + std::to_string(radix)), std::string::npos);
    }
}

TEST(PlanInfer, PartialThreeLevelTreeRoundTrips) {
    // 10 leaves in pods of 4, 4 and 2: a plan's pods are equal, so the partial pod (2 leaves and
    // its 4 spines) is explicit cables and the two full pods stay compact.
    Fabric f = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 40});
    Written p = round_trip(f);
    EXPECT_EQ(p.compact_hosts, 40);
    EXPECT_EQ(p.compact_switches, 8 + 8) << p.yaml.substr(0, 2000);  // leaves, spines of the full pods
    EXPECT_EQ(p.explicit_cables, 2 * 4 + 4 * 4) << p.yaml.substr(0, 2000);  // the partial pod's uplinks
}

TEST(PlanInfer, APartialLastPodLeavesTheFullPodsCompact) {
    // The "1973 explicit cables and 0 with compact uplinks": 3000 hosts on 36-port switches
    // are 9 pods of 18 leaves and a tenth of 5; one odd pod made every leaf uplink explicit (3006
    // cables). Now only the tenth pod's cables are: 5 leaves x 18 uplinks and its 18 spines x 18.
    Fabric f = synth_fat_tree({.levels = 3, .radix = 36, .hosts = 3000});
    Written p = round_trip(f);  // checks clean against the fabric it came from
    EXPECT_EQ(p.compact_hosts, 3000);
    EXPECT_EQ(p.compact_switches, 162 + 162);
    EXPECT_EQ(p.explicit_cables, 5 * 18 + 18 * 18);
    EXPECT_NE(p.yaml.find("  leaf_other:   # leaf switches whose uplinks do not follow the rule: explicit cables\n"
                          "    names: [\"leaf[0163-0167]\"]\n"),
              std::string::npos)
        << p.yaml.substr(0, 2000);
    EXPECT_NE(p.yaml.find("  leaf:\n    names: [\"leaf[0001-0162]\"]\n    ports: 36\n    pods: 9\n"), std::string::npos)
        << p.yaml.substr(0, 2000);
    EXPECT_NE(p.yaml.find("    names: [\"spine[0163-0180]\"]\n"), std::string::npos) << p.yaml.substr(0, 2000);
    // Two pods of different sizes have no majority: the leaf uplinks stay explicit, as before (the
    // spines' uplinks to the cores are still compact), and the plan still checks clean.
    Fabric two = synth_fat_tree({.levels = 3, .radix = 8, .hosts = 24});  // pods of 4 and 2 leaves
    Written q = round_trip(two);
    EXPECT_EQ(q.compact_switches, 8) << q.yaml.substr(0, 2000);
    EXPECT_NE(q.yaml.find("  leaf:\n    names: [\"leaf[0001-0006]\"]\n    ports: 8\n    down: \"1-4\"\n  spine:\n"),
              std::string::npos)
        << q.yaml.substr(0, 2000);
}

}  // namespace
}  // namespace ibf

namespace ibf {
// A NodeDescription with control characters: the plan gets a generated name for that node (pinned
// by GUID), so no raw control byte reaches the YAML that `plan from-dump` prints; it still checks
// clean against the fabric.
TEST(PlanInfer, ControlCharactersInNamesNeverReachTheYaml) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8});
    const std::string evil = "leaf0001\x07\x1b" "c";
    for (NodeId id = 0; id < f.size(); ++id)
        if (f.node(id).name == "leaf0001") {
            f.node(id).description = "MF0;" + evil + ":SX6036/U1";
            f.node(id).name.clear();  // derived again by finalize()
        }
    f.finalize();
    ASSERT_EQ(f.find_by_name(evil).size(), 1u);
    Written p = round_trip(f);
    EXPECT_NE(p.yaml.find("names: [\"leaf-0001\", \"leaf[0002-0008]\"]"), std::string::npos) << p.yaml.substr(0, 2000);
    for (char c : p.yaml) EXPECT_FALSE(c != '\n' && static_cast<unsigned char>(c) < 0x20) << "raw control byte";
}
}  // namespace ibf
