// check() on real captures (tests/data): every capture is clean against itself, and each synthetic
// mutation of the SX6036 capture (8 switches, 144 hosts, FDR10 ISLs, QDR hosts) gives exactly the
// expected findings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"
#include "ibf/synth.h"

using namespace ibf;

namespace {

const std::string kSx6036 = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string dump(const std::vector<Finding>& fs) {
    std::string s;
    for (const auto& f : fs)
        s += std::string(to_string(f.kind)) + " " + f.a.name + "/" + std::to_string(f.a.port) + " " + f.b.name + "/" +
             std::to_string(f.b.port) + " exp=" + f.expected + " act=" + f.actual + " | " + f.message + "\n";
    return s;
}

class Sx6036 : public ::testing::Test {
protected:
    void SetUp() override {
        fabric = parse_dump(slurp(kSx6036), kSx6036);
        plan = plan_from_fabric(fabric, kSx6036);
        ASSERT_EQ(fabric.count(NodeType::Switch), 8u);
        ASSERT_EQ(fabric.count(NodeType::CA), 144u);
        ASSERT_TRUE(check(plan, fabric).empty());
    }
    NodeId id(const std::string& name) {
        auto ids = fabric.find_by_name(name);
        EXPECT_EQ(ids.size(), 1u) << name;
        return ids.empty() ? kNoNode : ids[0];
    }
    void expect_end(const Endpoint& e, const std::string& name, int port) {
        EXPECT_EQ(e.name, name);
        EXPECT_EQ(e.port, port);
        EXPECT_EQ(e.guid, fabric.node(id(name)).guid) << name;
    }
    // The cabling as the capture has it (asserted, so a changed capture fails loudly).
    void expect_cable(const std::string& a, int pa, const std::string& b, int pb) {
        const Port* p = fabric.node(id(a)).port(pa);
        ASSERT_TRUE(p && p->linked()) << a << "/" << pa;
        EXPECT_EQ(fabric.node(p->peer).name, b);
        EXPECT_EQ(p->peer_port, pb);
    }
    Fabric fabric;
    Plan plan;
};

}  // namespace

TEST(RealDumps, EveryCaptureIsCleanAgainstItself) {
    int checked = 0;
    for (const auto& e : std::filesystem::directory_iterator(IBF_TEST_DATA)) {
        const std::string path = e.path().string();
        const std::string text = slurp(path);
        if (!detect_dump_format(text)) continue;
        Fabric f = parse_dump(text, path);
        auto fs = check(plan_from_fabric(f, path), f);
        EXPECT_TRUE(fs.empty()) << path << "\n" << dump(fs);
        fs = check(load_plan(text, path), f);
        EXPECT_TRUE(fs.empty()) << path << "\n" << dump(fs);
        ++checked;
    }
    EXPECT_GE(checked, 4);
}

TEST_F(Sx6036, RemovedCableIsExactlyOneMissingLink) {
    expect_cable("ib5", 1, "stage114", 1);
    remove_cable(fabric, id("ib5"), 1);
    auto fs = check(plan, fabric);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::missing_link);
    expect_end(fs[0].a, "ib5", 1);
    expect_end(fs[0].b, "stage114", 1);
    EXPECT_EQ(fs[0].expected, "stage114/1");
    EXPECT_EQ(fs[0].actual, "");
}

TEST_F(Sx6036, CableMovedToAFreePortIsExactlyOneMiswired) {
    ASSERT_FALSE(fabric.node(id("ib5")).port(17)->linked());
    move_far_end(fabric, id("stage114"), 1, 17);  // ib5/1 -> ib5/17
    auto fs = check(plan, fabric);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::miswired);
    expect_end(fs[0].a, "stage114", 1);
    expect_end(fs[0].b, "ib5", 17);
    EXPECT_EQ(fs[0].expected, "ib5/1");
    EXPECT_EQ(fs[0].actual, "ib5/17");
    EXPECT_NE(fs[0].message.find("move the cable at ib5/17 to ib5/1"), std::string::npos) << fs[0].message;
}

TEST_F(Sx6036, CrossedParallelPairIsExactlyOneSwap) {
    expect_cable("ib5", 21, "ib8", 26);
    expect_cable("ib5", 23, "ib8", 28);
    cross_cables(fabric, id("ib5"), 21, 23);
    auto fs = check(plan, fabric);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::miswired);
    expect_end(fs[0].a, "ib5", 21);
    expect_end(fs[0].b, "ib8", 28);
    EXPECT_EQ(fs[0].expected, "ib8/26");
    EXPECT_EQ(fs[0].actual, "ib8/28");
    EXPECT_EQ(fs[0].message,
              "cables at ib5/21 and ib5/23 are crossed: ib5/21 goes to ib8/28 and ib5/23 to ib8/26, plan says the "
              "other way round; swap the cables at ib8/26 and ib8/28");
}

TEST_F(Sx6036, DegradedRateIsExactlyOneRateMismatch) {
    ASSERT_EQ(to_string(fabric.node(id("ib5")).port(21)->rate()), "4xFDR10");
    set_link_rate(fabric, id("ib8"), 26, {Width::X4, Speed::QDR});  // 32 < 40 Gb/s
    auto fs = check(plan, fabric);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::rate_mismatch);
    // As ibstat prints rates: both 40 Gb/s signalling, but QDR carries 32 Gb/s of data.
    EXPECT_EQ(fs[0].message,
              "ib5/21 -- ib8/26 runs at 4xQDR (40 Gb/s signalling, 32 Gb/s data), plan says 4xFDR10 (40 Gb/s); speed "
              "degraded: check the cable type and both ports' enabled speeds, then reseat or replace the cable");
    expect_end(fs[0].a, "ib5", 21);
    expect_end(fs[0].b, "ib8", 26);
    EXPECT_EQ(fs[0].expected, "4xFDR10");
    EXPECT_EQ(fs[0].actual, "4xQDR");
}

TEST_F(Sx6036, MtuBelowPlanIsExactlyOneMtuMismatch) {
    // ibnetdiscover carries no MTU: give the plan one for ib5/1 and the fabric a smaller one there.
    NodeId ib5 = id("ib5");
    int found = 0;
    for (auto& l : plan.links)
        if ((l.a.node == ib5 && l.a.port == 1) || (l.b.node == ib5 && l.b.port == 1)) {
            l.mtu = 4096;
            ++found;
        }
    ASSERT_EQ(found, 1);
    set_link_mtu(fabric, ib5, 1, 2048);
    auto fs = check(plan, fabric);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::mtu_mismatch);
    expect_end(fs[0].a, "ib5", 1);
    expect_end(fs[0].b, "stage114", 1);
    EXPECT_EQ(fs[0].expected, "4096");
    EXPECT_EQ(fs[0].actual, "2048");
}

TEST_F(Sx6036, RemovedSwitchIsExactlyOneMissingNode) {
    NodeId ib8 = id("ib8");
    int cables = 0;
    for (const Port& p : fabric.node(ib8).ports) cables += p.valid && p.linked();
    ASSERT_GT(cables, 10);
    Guid guid = fabric.node(ib8).guid;
    Fabric without = without_node(fabric, ib8);
    auto fs = check(plan, without);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::missing_node);
    EXPECT_EQ(fs[0].a.name, "ib8");
    EXPECT_EQ(fs[0].a.guid, guid);
    EXPECT_EQ(fs[0].a.port, 0);
    EXPECT_NE(fs[0].message.find("should have " + std::to_string(cables) + " links"), std::string::npos)
        << fs[0].message;
}

TEST_F(Sx6036, AddedHostIsExactlyOneUnexpectedNode) {
    add_host(fabric, "newcomer mlx5_0", 0x0c42a1030000beef, id("ib5"), 17, {Width::X4, Speed::QDR});
    auto fs = check(plan, fabric);
    ASSERT_EQ(fs.size(), 1u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::unexpected_node);
    EXPECT_EQ(fs[0].a.name, "newcomer");
    EXPECT_EQ(fs[0].a.guid, 0x0c42a1030000beefu);
    expect_end(fs[0].b, "ib5", 17);
}

TEST_F(Sx6036, FaultsSurviveTheDumpWriterAndJson) {
    remove_cable(fabric, id("ib5"), 1);
    cross_cables(fabric, id("ib5"), 21, 23);
    set_link_rate(fabric, id("ib5"), 25, {Width::X1, Speed::FDR10});
    auto direct = check(plan, fabric);
    ASSERT_EQ(direct.size(), 3u) << dump(direct);  // missing_link, one swap, rate_mismatch
    // What `ibfabric check` sees: the mutated fabric as an ibnetdiscover dump.
    Fabric reread = parse_dump(write_ibnetdiscover(fabric), "mutated.txt");
    auto via_dump = check(plan, reread);
    // Same findings; only the messages may differ (a dump does not list unplugged ports' states).
    auto without_messages = [](std::vector<Finding> fs) {
        for (auto& f : fs) f.message.clear();
        return findings_to_json(fs);
    };
    EXPECT_EQ(without_messages(via_dump), without_messages(direct)) << dump(via_dump);
    auto j = findings_to_json(direct);
    EXPECT_EQ(j["summary"], nlohmann::json::parse(R"({"missing_link": 1, "miswired": 1, "rate_mismatch": 1})"));
    EXPECT_EQ(findings_to_json(findings_from_json(nlohmann::json::parse(j.dump()))), j);
}

TEST(RealDumps, GoldenIbnetdiscoverAgainstIblinkinfoOfTheSameFabric) {
    // ibsim's iblinkinfo of the SX6036 and X5 captures: CAs are known by port GUID there.
    const std::pair<const char*, const char*> pairs[] = {
        {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", "ibsim-sx6036-iblinkinfo.txt"},
        {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", "ibsim-sx6036-iblinkinfo-l.txt"},
        {"ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt", "ibsim-x5-iblinkinfo.txt"},
        {"ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt", "ibsim-x5-iblinkinfo-l.txt"},
    };
    for (auto [g, a] : pairs) {
        const std::string gp = std::string(IBF_TEST_DATA) + "/" + g, ap = std::string(IBF_TEST_DATA) + "/" + a;
        Fabric golden = parse_dump(slurp(gp), gp);
        Fabric actual = parse_dump(slurp(ap), ap);
        const size_t cas = golden.count(NodeType::CA);
        Plan plan = plan_from_fabric(golden, gp);
        // Unaligned, every CA looks replaced. On the SX6036 (hosts named stageNNN) the name finds it: one
        // identity_changed each, and as they all follow one rule (new GUIDs), one grouped finding with
        // them as members; on the X5 (every CA "MT25408 ConnectX") no name tells them apart: a
        // missing_node and an unexpected_node each.
        auto unaligned = check(plan, actual);
        const bool named = std::string(g).find("sx6036") != std::string::npos;
        EXPECT_EQ(unaligned.size(), named ? 1 : 2 * cas) << a;
        if (named) {
            ASSERT_EQ(unaligned.size(), 1u) << a;
            EXPECT_EQ(unaligned[0].kind, FindingKind::identity_changed) << a;
            EXPECT_EQ(unaligned[0].actual, "replaced: new GUIDs") << a;
            EXPECT_EQ(unaligned[0].members.size(), cas) << a;
            for (const Finding& m : unaligned[0].members) EXPECT_EQ(m.kind, FindingKind::identity_changed) << a;
        } else {
            for (const Finding& fd : unaligned)
                EXPECT_TRUE(fd.kind == FindingKind::missing_node || fd.kind == FindingKind::unexpected_node) << a;
        }
        EXPECT_EQ(align_golden_guids(plan, golden, actual), cas) << a;
        auto fs = check(plan, actual);
        EXPECT_TRUE(fs.empty()) << a << "\n" << dump(fs);
        EXPECT_EQ(align_golden_guids(plan, golden, actual), 0u) << "idempotent";

        // And the other way round: an iblinkinfo dump as the plan, ibnetdiscover as the fabric.
        Plan reverse = plan_from_fabric(actual, ap);
        EXPECT_EQ(align_golden_guids(reverse, actual, golden), cas) << a;
        fs = check(reverse, golden);
        EXPECT_TRUE(fs.empty()) << a << " reversed\n" << dump(fs);
    }
}

TEST(RealDumps, AlignedPlansStillFindFaultsAndReplacedHosts) {
    const std::string gp = kSx6036, ap = std::string(IBF_TEST_DATA) + "/ibsim-sx6036-iblinkinfo-l.txt";
    Fabric golden = parse_dump(slurp(gp), gp);
    Fabric actual = parse_dump(slurp(ap), ap);
    NodeId ib5 = actual.find_by_name("ib5").at(0);
    cross_cables(actual, ib5, 1, 2);  // stage114 and stage112 swap switch ports
    // stage110 replaced by a new HCA: same name, unknown GUIDs, same cable.
    NodeId old = actual.find_by_name("stage110").at(0);
    const Port& op = *actual.node(old).port(1);
    NodeId sw = op.peer;
    int swp = op.peer_port;
    actual = without_node(actual, old);
    if (sw > old) --sw;
    add_host(actual, "stage110 mlx4_0", 0x0002c903deadbee0, sw, swp, {Width::X4, Speed::QDR});

    Plan plan = plan_from_fabric(golden, gp);
    EXPECT_EQ(align_golden_guids(plan, golden, actual), golden.count(NodeType::CA) - 1);
    auto fs = check(plan, actual);
    ASSERT_EQ(fs.size(), 2u) << dump(fs);
    EXPECT_EQ(fs[0].kind, FindingKind::miswired);  // the crossed hosts: one swap
    EXPECT_EQ(fs[0].a.name, "stage112");
    EXPECT_EQ(fs[0].b.name, "ib5");
    EXPECT_EQ(fs[0].b.port, 1);
    EXPECT_EQ(fs[0].expected, "ib5/2");
    EXPECT_EQ(fs[0].message,
              "cables at stage112/1 and stage114/1 are crossed: stage112/1 goes to ib5/1 and stage114/1 to ib5/2, plan "
              "says the other way round; swap the cables at ib5/1 and ib5/2");
    EXPECT_EQ(fs[1].kind, FindingKind::identity_changed);  // the new HCA, matched by its name
    EXPECT_EQ(fs[1].a.name, "stage110");
    EXPECT_EQ(fs[1].a.guid, 0x0002c903deadbee0u);
    EXPECT_EQ(fs[1].actual, "replaced: new GUID 0x0002c903deadbee0");
}
