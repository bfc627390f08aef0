// accept edits the plan's text (ibf/plan_accept.h, issue 20 item 6): what is in the scope changes,
// every other line stays byte-identical (comments, labels, `scope:`), faults are refused unless
// named, compact cables are never moved, absent hosts stay, and the result re-reads as the plan
// intended (its check no longer gives what was adopted, and still gives what was not).
#include "ibf/plan_accept.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/plan_yaml.h"

namespace ibf {
namespace {

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// config/examples/small-plan.yaml plus a `scope:` section and a comment inside `cables:`.
std::string plan_text() {
    std::string t = read(std::string(IBF_SOURCE_DIR) + "/config/examples/small-plan.yaml");
    t += "\nscope:\n  ignore: [\"lab-sw*\"]   # the test bench\n";
    const std::string marker = "  - a: {node: storage01";
    t.insert(t.find(marker), "  # the second rail\n");
    return t;
}

// small-actual.ibnetdiscover (five faults, docs/plan.md) plus, on leaf04 port 5, a new host node09.
Fabric actual_with_new_host() {
    Fabric f = parse_dump(read(std::string(IBF_SOURCE_DIR) + "/config/examples/small-actual.ibnetdiscover"), "small-actual");
    Node h;
    h.type = NodeType::CA;
    h.guid = 0x98039b03000a0990;
    h.description = "node09 mlx5_0";
    const NodeId id = f.add_node(h, 1);
    const NodeId leaf04 = f.find_by_name("leaf04").at(0);
    f.connect(leaf04, 5, id, 1);
    for (Port* p : {f.node(leaf04).port(5), f.node(id).port(1)}) {
        p->width_active = Width::X4;
        p->speed_active = Speed::EDR;
        p->state = PortState::Active;
    }
    f.finalize();
    return f;
}

struct Accepted {
    std::string text;
    Plan plan;
    Fabric fabric;
    std::vector<Finding> before;
    AcceptResult r;
};

Accepted accept(const std::vector<std::string>& scope, const std::vector<FindingKind>& kinds = {},
           const std::function<void(Fabric&)>& change = {}) {
    Accepted x;
    x.text = plan_text();
    x.plan = parse_plan_yaml(x.text, "plan.yaml");
    x.fabric = actual_with_new_host();
    if (change) change(x.fabric);
    x.before = check(x.plan, x.fabric);
    x.r = accept_into_plan(x.text, "plan.yaml", x.plan, x.fabric, x.before, {.scope = scope, .accept_kinds = kinds, .source = "now.txt"},
                           [&](const Plan& p) { return check(p, x.fabric); });
    return x;
}

std::vector<std::string> lines(const std::string& t) {
    std::vector<std::string> out;
    std::stringstream ss(t);
    for (std::string l; std::getline(ss, l);) out.push_back(l);
    return out;
}

// `edited` is `original` with only `added` lines inserted (in order) and `removed` lines dropped.
void expect_only(const std::string& original, const std::string& edited, const std::vector<std::string>& added,
                 const std::vector<std::string>& removed) {
    std::vector<std::string> o = lines(original), e = lines(edited);
    std::vector<std::string> kept_o, kept_e, got_added, got_removed;
    const bool blank_added = std::find(added.begin(), added.end(), "") != added.end();
    for (const std::string& l : o)
        if (std::find(removed.begin(), removed.end(), l) != removed.end()) got_removed.push_back(l);
        else if (!(blank_added && l.empty())) kept_o.push_back(l);
    for (const std::string& l : e)
        if (std::find(added.begin(), added.end(), l) != added.end()) {
            if (!l.empty()) got_added.push_back(l);
        } else {
            kept_e.push_back(l);
        }
    std::vector<std::string> want_added;
    for (const std::string& l : added)
        if (!l.empty()) want_added.push_back(l);
    EXPECT_EQ(kept_o, kept_e) << edited;
    EXPECT_EQ(got_added, want_added) << edited;
    EXPECT_EQ(got_removed, removed) << edited;
}

std::vector<std::string> keys(const std::vector<Finding>& fs) {
    std::vector<std::string> out;
    for (const Finding& f : fs)
        out.push_back(std::string(to_string(f.kind)) + " " + f.a.name + "/" + std::to_string(f.a.port) + " " + f.b.name +
                      "/" + std::to_string(f.b.port));
    std::sort(out.begin(), out.end());
    return out;
}

TEST(PlanAccept, ANewHostInTheScopeIsOneCableAddedAndEveryOtherByteStays) {
    Accepted x = accept({"node09"});
    ASSERT_TRUE(x.r.refused.empty()) << x.r.refused.front().why;
    ASSERT_EQ(x.r.adopted.size(), 1u);
    EXPECT_EQ(x.r.adopted[0].kind, FindingKind::unexpected_node);
    ASSERT_EQ(x.r.changes.size(), 1u);
    EXPECT_EQ(x.r.changes[0].text, "cables: + node09/1 -- leaf04/5");
    expect_only(x.text, x.r.text, {"  # accepted from now.txt", "  - {a: \"node09:mlx5_0/1\", b: \"leaf04/5\"}"}, {});
    // The new lines follow the last entry of cables: (the three-line STOR-B entry), before overrides:.
    EXPECT_NE(x.r.text.find("    label: STOR-B\n  # accepted from now.txt\n  - {a: \"node09:mlx5_0/1\", b: \"leaf04/5\"}\n\noverrides:"),
              std::string::npos)
        << x.r.text;
    // Re-read: the plan now has node09, and the five faults outside the scope are still found.
    const Plan next = parse_plan_yaml(x.r.text, "plan.yaml");
    EXPECT_EQ(next.links.size(), x.plan.links.size() + 1);
    std::vector<Finding> rest;
    for (const Finding& f : x.before)
        if (f.kind != FindingKind::unexpected_node) rest.push_back(f);
    EXPECT_EQ(keys(check(next, x.fabric)), keys(rest));
    EXPECT_EQ(x.r.findings_after, rest.size());
    EXPECT_EQ(x.r.kept.size(), rest.size());
    for (const AcceptItem& k : x.r.kept) EXPECT_EQ(k.why, "outside the scope");
    EXPECT_NE(x.r.text.find("scope:\n  ignore: [\"lab-sw*\"]   # the test bench\n"), std::string::npos);
}

TEST(PlanAccept, ANewSwitchIsANodesEntryAndItsCables) {
    Accepted x = accept({"leaf05"}, {}, [](Fabric& f) {
        Node sw;
        sw.type = NodeType::Switch;
        sw.guid = 0x7cfe9003005a0700;
        sw.description = "MF0;leaf05:MSB7800/U1";
        const NodeId id = f.add_node(sw, 36);
        int k = 0;
        for (const char* spine : {"spine01", "spine02"}) {
            const NodeId s = f.find_by_name(spine).at(0);
            f.connect(id, 19 + k, s, 10);
            for (Port* p : {f.node(id).port(19 + k), f.node(s).port(10)}) {
                p->width_active = Width::X4;
                p->speed_active = Speed::EDR;
            }
            ++k;
        }
        f.finalize();
    });
    ASSERT_TRUE(x.r.refused.empty()) << x.r.refused.front().why;
    ASSERT_EQ(x.r.changes.size(), 3u);
    expect_only(x.text, x.r.text,
                {"  # accepted from now.txt", "  - {a: \"leaf05/19\", b: \"spine01/10\"}", "  - {a: \"leaf05/20\", b: \"spine02/10\"}",
                 "",  // (blank lines are compared as a set: the one before nodes: is checked below)
                 "nodes:", "  # accepted from now.txt", "  \"leaf05\": {type: switch, ports: 36, guid: 0x7cfe9003005a0700}"},
                {});
    EXPECT_TRUE(x.r.text.ends_with("# the test bench\n\nnodes:\n  # accepted from now.txt\n"
                                   "  \"leaf05\": {type: switch, ports: 36, guid: 0x7cfe9003005a0700}\n"))
        << x.r.text;
    const Plan next = parse_plan_yaml(x.r.text, "plan.yaml");
    for (const Finding& f : check(next, x.fabric)) EXPECT_NE(f.a.name, "leaf05") << f.message;
    EXPECT_EQ(next.nodes.size(), x.plan.nodes.size() + 1);
}

TEST(PlanAccept, AFaultInTheScopeIsRefusedNamingAcceptKind) {
    Accepted x = accept({"leaf04"});  // node09 (new) and leaf04/21 at 1xEDR (rate_mismatch, error)
    ASSERT_EQ(x.r.refused.size(), 1u);
    EXPECT_EQ(x.r.refused[0].finding.kind, FindingKind::rate_mismatch);
    EXPECT_NE(x.r.refused[0].why.find("--accept-kind rate_mismatch"), std::string::npos) << x.r.refused[0].why;
    EXPECT_TRUE(x.r.changes.empty());
    EXPECT_TRUE(x.r.diff.empty());
    EXPECT_EQ(x.r.text, x.text);
    EXPECT_NE(accept_refusal(x.r).find("cannot be adopted, so nothing is written"), std::string::npos);
}

TEST(PlanAccept, ANamedRateFaultBecomesAnOverrideBesideTheExistingOnes) {
    Accepted x = accept({"leaf04"}, {FindingKind::rate_mismatch});
    ASSERT_TRUE(x.r.refused.empty()) << x.r.refused.front().why;
    EXPECT_EQ(x.r.adopted.size(), 2u);
    expect_only(x.text, x.r.text,
                {"  # accepted from now.txt", "  - {a: \"node09:mlx5_0/1\", b: \"leaf04/5\"}", "  # accepted from now.txt",
                 "  - {port: \"leaf04/21\", rate: 1xEDR}"},
                {});
    EXPECT_NE(x.r.text.find("  - {port: leaf04/22, label: L04-S02-B}\n  # accepted from now.txt\n  - {port: \"leaf04/21\", rate: 1xEDR}\n"),
              std::string::npos)
        << x.r.text;
    for (const Finding& f : check(parse_plan_yaml(x.r.text, "plan.yaml"), x.fabric))
        EXPECT_NE(f.a.name, "leaf04") << f.message;
}

TEST(PlanAccept, AnExistingOverrideOfTheCableIsEditedInPlace) {
    // leaf04/22 -- spine02/8 (override: label L04-S02-B) runs at 4xFDR.
    Accepted x = accept({"leaf04"}, {FindingKind::rate_mismatch}, [](Fabric& f) {
        const NodeId l = f.find_by_name("spine02").at(0);
        f.node(l).port(8)->speed_active = Speed::FDR;
        f.node(f.find_by_name("leaf04").at(0)).port(22)->speed_active = Speed::FDR;
    });
    // leaf04 also has leaf04/21 (1xEDR) and node09: two overrides, one edited, one new; one cable.
    ASSERT_TRUE(x.r.refused.empty()) << x.r.refused.front().why;
    expect_only(x.text, x.r.text,
                {"  # accepted from now.txt", "  - {a: \"node09:mlx5_0/1\", b: \"leaf04/5\"}",
                 "  - {port: \"leaf04/22\", label: \"L04-S02-B\", rate: 4xFDR}", "  # accepted from now.txt",
                 "  - {port: \"leaf04/21\", rate: 1xEDR}"},
                {"  - {port: leaf04/22, label: L04-S02-B}"});
    const Plan next = parse_plan_yaml(x.r.text, "plan.yaml");
    for (const PlannedLink& l : next.links)
        if (next.nodes[l.a.node].name == "leaf04" && l.a.port == 22) {
            EXPECT_EQ(l.label, "L04-S02-B");
        }
}

TEST(PlanAccept, ALinkWhoseEndsDisagreeIsRefusedNotPlanned) {
    Accepted x = accept({"leaf04"}, {FindingKind::rate_mismatch}, [](Fabric& f) {
        f.node(f.find_by_name("spine02").at(0)).port(8)->speed_active = Speed::FDR;  // leaf04/22 stays EDR
    });
    ASSERT_EQ(x.r.refused.size(), 1u);
    EXPECT_NE(x.r.refused[0].why.find("the two ends disagree"), std::string::npos) << x.r.refused[0].why;
    EXPECT_EQ(x.r.text, x.text);
}

TEST(PlanAccept, AMovedExplicitCableIsMovedAndACompactOneIsRefused) {
    auto move_storage = [](Fabric& f) {
        const NodeId s1 = f.find_by_name("spine01").at(0);
        const Port& p = *f.node(s1).port(35);
        const NodeId host = p.peer;
        f.disconnect(s1, 35);
        f.connect(s1, 36, host, 1);
        for (Port* q : {f.node(s1).port(36), f.node(host).port(1)}) {
            q->width_active = Width::X4;
            q->speed_active = Speed::EDR;
        }
    };
    Accepted x = accept({"storage01"}, {FindingKind::miswired}, move_storage);
    ASSERT_TRUE(x.r.refused.empty()) << x.r.refused.front().why;
    expect_only(x.text, x.r.text, {"  - {a: \"storage01:mlx5_0/1\", b: \"spine01/36\", label: \"STOR-A\"}"},
                {"  - {a: \"storage01:mlx5_0/1\", b: spine01/35, label: STOR-A}"});
    EXPECT_NE(x.r.diff.find("-  - {a: \"storage01:mlx5_0/1\", b: spine01/35, label: STOR-A}\n"
                            "+  - {a: \"storage01:mlx5_0/1\", b: \"spine01/36\", label: \"STOR-A\"}\n"),
              std::string::npos)
        << x.r.diff;
    // leaf03/19 goes to spine01/9 instead of the compact form's spine01/5: not movable.
    Accepted y = accept({"leaf03"}, {FindingKind::miswired});
    ASSERT_EQ(y.r.refused.size(), 1u);
    EXPECT_NE(y.r.refused[0].why.find("made by the compact form (plan.yaml:14:9)"), std::string::npos) << y.r.refused[0].why;
}

TEST(PlanAccept, AMissingExplicitCableIsRemovedWithAllItsLines) {
    Accepted x = accept({"storage01"}, {FindingKind::missing_link}, [](Fabric& f) {
        f.disconnect(f.find_by_name("spine02").at(0), 35);  // the host stays (its other rail is cabled)
    });
    ASSERT_TRUE(x.r.refused.empty()) << x.r.refused.front().why;
    ASSERT_EQ(x.r.adopted.size(), 1u);
    EXPECT_EQ(x.r.adopted[0].kind, FindingKind::missing_link);
    expect_only(x.text, x.r.text, {},
                {"  - a: {node: storage01, hca: mlx5_1, port: 1}", "    b: spine02/35", "    label: STOR-B"});
    EXPECT_NE(x.r.text.find("  # the second rail\n\noverrides:"), std::string::npos) << "a comment is not an entry's line";
}

TEST(PlanAccept, AnAbsentHostIsNeitherABlockerNorDropped) {
    Accepted x;
    x.text = plan_text();
    x.plan = parse_plan_yaml(x.text, "plan.yaml");
    x.fabric = actual_with_new_host();
    x.before = check(x.plan, x.fabric);
    Finding absent;
    absent.kind = FindingKind::host_absent;
    absent.severity = Severity::warning;
    absent.a = {"node08", 0, 0};
    absent.b = {"leaf04", 0, 2};
    absent.message = "host node08 mlx5_0 is absent";
    x.before.push_back(absent);
    AcceptResult r = accept_into_plan(x.text, "plan.yaml", x.plan, x.fabric, x.before, {.scope = {"leaf04", "node0[8-9]"},
                                      .accept_kinds = {FindingKind::rate_mismatch}},
                                      [&](const Plan& p) { return check(p, x.fabric); });
    ASSERT_TRUE(r.refused.empty());
    bool kept = false;
    for (const AcceptItem& k : r.kept) kept |= k.finding.kind == FindingKind::host_absent;
    EXPECT_TRUE(kept);
    EXPECT_NE(r.text.find("names: node[01-08]"), std::string::npos);
    EXPECT_EQ(accept_refusal(r), "");
}

TEST(PlanAccept, EverythingOutsideTheScopeIsARefusalThatSaysSo) {
    Accepted x = accept({"spine09"});
    EXPECT_TRUE(x.r.changes.empty());
    EXPECT_EQ(x.r.text, x.text);
    EXPECT_NE(accept_refusal(x.r).find("nothing in the scope differs from the plan; 5 differences are outside it"),
              std::string::npos)
        << accept_refusal(x.r);
}

TEST(PlanAccept, ScopeTakesPlanPatternsShellPatternsAndNames) {
    AcceptScope s({"leaf[03-04]", "node0?", "spine01", "r[1-2]n*"});
    for (const char* yes : {"leaf03", "leaf04", "node01", "node09", "spine01", "r2n17"}) EXPECT_TRUE(s.matches(yes)) << yes;
    for (const char* no : {"leaf05", "node010", "spine02", "r3n1", ""}) EXPECT_FALSE(s.matches(no)) << no;
    EXPECT_TRUE(AcceptScope({}).matches("anything"));
    EXPECT_THROW(AcceptScope({"leaf[04-01]"}), InputError);
}

TEST(PlanAccept, AFlowSectionToEditIsAnErrorNamingItsLine) {
    const std::string text = "version: 1\ncables: [{a: sw1/1, b: h1/1}]\nnodes:\n  sw1: {type: switch, ports: 8}\n";
    const Plan plan = parse_plan_yaml(text, "p.yaml");
    Fabric f;
    Node sw;
    sw.type = NodeType::Switch;
    sw.guid = 0x10;
    sw.description = "sw1";
    Node h;
    h.type = NodeType::CA;
    h.guid = 0x20;
    h.description = "h1 mlx5_0";
    Node h2 = h;
    h2.guid = 0x30;
    h2.description = "h2 mlx5_0";
    const NodeId a = f.add_node(sw, 8), b = f.add_node(h, 1), c = f.add_node(h2, 1);
    f.connect(a, 1, b, 1);
    f.connect(a, 2, c, 1);
    f.finalize();
    const auto fs = check(plan, f);
    try {
        accept_into_plan(text, "p.yaml", plan, f, fs, {}, [&](const Plan& p) { return check(p, f); });
        FAIL() << "a flow cables: list was edited";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("p.yaml:2:1: 'cables' is written as a flow collection"), std::string::npos)
            << e.what();
    }
}

TEST(PlanAccept, TheDiffIsUnifiedWithThreeLinesOfContext) {
    Accepted x = accept({"node09"});
    const std::vector<std::string> d = lines(x.r.diff);
    ASSERT_GE(d.size(), 3u) << x.r.diff;
    EXPECT_EQ(d[0], "--- plan.yaml");
    EXPECT_EQ(d[1], "+++ plan.yaml (accepted)");
    // The STOR-B entry is lines 31-33; the two new lines follow it.
    EXPECT_EQ(d[2], "@@ -31,6 +31,8 @@") << x.r.diff;
    EXPECT_EQ(d[3], "   - a: {node: storage01, hca: mlx5_1, port: 1}");
    EXPECT_EQ(d[6], "+  # accepted from now.txt");
    EXPECT_EQ(d[8], " ");
    EXPECT_EQ(d[10], "   - {port: leaf04/22, label: L04-S02-B}");
    EXPECT_EQ(d.size(), 11u) << x.r.diff;
}

}  // namespace
}  // namespace ibf
