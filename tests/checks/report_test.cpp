// The JSON report (schema in docs/findings.md) and the text report.
#include "ibf/report.h"

#include <gtest/gtest.h>

#include "ibf/check.h"
#include "ibf/error.h"
#include "ibf/synth.h"
#include "plan_of.h"

using namespace ibf;
using nlohmann::json;

namespace {

Finding miswired() {
    Finding f;
    f.kind = FindingKind::miswired;
    f.severity = Severity::error;
    f.a = {"leaf01", 0x0002c90300a1b2c3, 3};
    f.b = {"spine02", 0x2, 5};
    f.expected = "spine02/3";
    f.actual = "spine02/5";
    f.label = "C-17";
    f.message = "cable at leaf01/3 (cable C-17) goes to spine02/5, plan says spine02/3; move the cable at spine02/5 to spine02/3";
    return f;
}

Finding warning() {
    Finding f;
    f.kind = FindingKind::rate_below_capability;
    f.severity = Severity::warning;
    f.a = {"leaf01", 0x1, 7};
    f.b = {"node007", 0x7, 1};
    f.expected = "4xHDR";
    f.actual = "4xEDR";
    f.message = "leaf01/7 -- node007/1 runs at 4xEDR";
    return f;
}

bool same(const Finding& x, const Finding& y) {
    return x.kind == y.kind && x.severity == y.severity && x.a.name == y.a.name && x.a.guid == y.a.guid &&
           x.a.port == y.a.port && x.b.name == y.b.name && x.b.guid == y.b.guid && x.b.port == y.b.port &&
           x.expected == y.expected && x.actual == y.actual && x.label == y.label && x.message == y.message;
}

}  // namespace

TEST(ReportJson, ExactSchema) {
    Finding m = miswired();
    m.links = {{m.a, m.b, {"spine02", 2, 3}, "C-17", "4xHDR"}};
    json j = findings_to_json({m});
    json want = json::parse(R"({
      "summary": {"miswired": 1},
      "findings": [{
        "kind": "miswired", "severity": "error",
        "a": {"name": "leaf01", "guid": "0x0002c90300a1b2c3", "port": 3},
        "b": {"name": "spine02", "guid": "0x0000000000000002", "port": 5},
        "expected": "spine02/3", "actual": "spine02/5", "label": "C-17",
        "message": "cable at leaf01/3 (cable C-17) goes to spine02/5, plan says spine02/3; move the cable at spine02/5 to spine02/3",
        "links": [{
          "a": {"name": "leaf01", "guid": "0x0002c90300a1b2c3", "port": 3},
          "b": {"name": "spine02", "guid": "0x0000000000000002", "port": 5},
          "planned": {"name": "spine02", "guid": "0x0000000000000002", "port": 3},
          "label": "C-17", "rate": "4xHDR"
        }],
        "members": []
      }]})");
    EXPECT_EQ(j, want) << j.dump(2);
    EXPECT_TRUE(j["findings"][0]["a"]["port"].is_number_integer());
}

TEST(ReportJson, EmptyIsAnEmptySummaryAndList) {
    json j = findings_to_json({});
    EXPECT_EQ(j, json::parse(R"({"summary": {}, "findings": []})"));
    EXPECT_TRUE(findings_from_json(j).empty());
}

TEST(ReportJson, RoundTripOfRealCheckOutput) {
    FatTreeSpec spec{.levels = 2, .radix = 8, .hosts = 6};
    Fabric f = synth_fat_tree(spec);
    Plan p = ibf::test::plan_of(f);
    remove_cable(f, synth_node(f, "node00001"), 1);
    cross_cables(f, synth_node(f, "leaf0002"), 5, 6);
    set_link_mtu(f, synth_node(f, "leaf0001"), 7, 1024);
    add_host(f, "stray mlx5_0", 0xdead0, synth_node(f, "leaf0002"), 4);
    auto fs = check(p, f);
    ASSERT_EQ(fs.size(), 4u);
    json j = findings_to_json(fs);
    EXPECT_EQ(j["summary"], json::parse(R"({"missing_link": 1, "miswired": 1, "mtu_mismatch": 1, "unexpected_node": 1})"));
    auto back = findings_from_json(json::parse(j.dump()));
    ASSERT_EQ(back.size(), fs.size());
    for (size_t i = 0; i < fs.size(); ++i) EXPECT_TRUE(same(back[i], fs[i])) << i;
    EXPECT_EQ(findings_to_json(back), j);
}

TEST(ReportJson, BadObjectsAreInputErrorsThatSayWhere) {
    json good = finding_to_json(miswired());
    auto expect_error = [](const json& j, const std::string& part) {
        try {
            finding_from_json(j);
            ADD_FAILURE() << "accepted " << j.dump();
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    expect_error(json::array(), "expected an object");
    json j = good;
    j["kind"] = "cable_eaten_by_mice";
    expect_error(j, "unknown kind \"cable_eaten_by_mice\"");
    j = good;
    j["a"]["guid"] = "0xnotahex";
    expect_error(j, "finding.a.guid");
    j = good;
    j["b"]["port"] = "5";
    expect_error(j, "finding.b.port");
    j = good;
    j["a"]["port"] = 300;
    expect_error(j, "finding.a.port");
    j = good;
    j.erase("b");
    expect_error(j, "missing \"b\"");
    j = good;
    j["severity"] = "fatal";
    expect_error(j, "finding.severity");
    j = good;
    j["expected"] = 3;
    expect_error(j, "finding.expected");

    json list = findings_to_json({miswired(), miswired()});
    list["findings"][1]["kind"] = 7;
    try {
        findings_from_json(list);
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("findings[1]"), std::string::npos) << e.what();
    }
    EXPECT_THROW(findings_from_json(json::parse(R"({"summary": {}})")), InputError);
    EXPECT_THROW(findings_from_json(json::parse(R"({"findings": {}})")), InputError);
}

TEST(ReportText, GroupedByKindAndSwitchWithASummaryLine) {
    Finding m2 = miswired();
    m2.a.name = "leaf02";
    m2.message = "second";
    std::string t = render_text({warning(), m2, miswired()}, false);
    EXPECT_EQ(t.find('\033'), std::string::npos) << "no colour unless asked";
    EXPECT_EQ(t,
              "miswired (2)\n"
              "  leaf01\n"
              "    error   " + miswired().message + "\n"
              "  leaf02\n"
              "    error   second\n"
              "rate_below_capability (1)\n"
              "  leaf01\n"
              "    warning leaf01/7 -- node007/1 runs at 4xEDR\n"
              "3 findings: 2 miswired, 1 rate_below_capability\n");
    EXPECT_EQ(render_text({}, false), "no findings\n");
    EXPECT_EQ(render_text({warning()}, false).substr(render_text({warning()}, false).rfind("1 finding:")),
              "1 finding: 1 rate_below_capability\n");
}

TEST(ReportText, ColourOnlyWhenAsked) {
    std::string t = render_text({miswired(), warning()}, true);
    EXPECT_NE(t.find("\033[31merror"), std::string::npos) << t;
    EXPECT_NE(t.find("\033[33mwarning"), std::string::npos) << t;
    EXPECT_NE(t.find("\033[0m"), std::string::npos);
}

// A NodeDescription is chosen by whoever owns the node: its escape sequences must reach the
// terminal as text (issue 10). JSON keeps the bytes (the JSON writer escapes them).
TEST(ReportText, EscapeSequencesFromNodeDescriptionsArePrintedAsText) {
    Finding f = miswired();
    f.a.name = "leaf01\x1b]0;owned\x07";
    f.message = "cable at leaf01\x1b[2J/19 \xc2\x9b" "31m goes nowhere\r";
    const std::string t = render_text({f}, false);
    EXPECT_EQ(t,
              "miswired (1)\n"
              "  leaf01\\x1b]0;owned\\x07\n"
              "    error   cable at leaf01\\x1b[2J/19 \\xc2\\x9b31m goes nowhere\\x0d\n"
              "1 finding: 1 miswired\n");
    EXPECT_EQ(findings_to_json({f})["findings"][0]["a"]["name"], "leaf01\x1b]0;owned\x07");
}
