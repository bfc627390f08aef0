// The plan writer (ibf/plan_write.h): what it writes parses back with parse_plan_yaml to the same
// names, whatever characters they hold. yaml-cpp does the quoting, so the names a hand-made quoter
// gets wrong (YAML indicators at the start, '#', words YAML 1.1 reads as booleans or null,
// numbers, quotes, backslashes, non-ASCII, control characters) come back as they were.
#include <gtest/gtest.h>

#include <set>

#include "ibf/plan_write.h"
#include "ibf/plan_yaml.h"
#include "plan_test_util.h"

using namespace ibf;
using namespace ibf::test;

namespace {

// Node names a plan can hold (no '/', ':', spaces or '['), each needing quotes in YAML.
const std::vector<std::string> kOddNames = {
    "#c",    "*x",      "&a",   "!t",  "%p",   "@at",  "`b",     "'q",   "\"dq\"", "-d",    "?q",
    "|p",    ">f",      "yes",  "no",  "on",   "null", "~",      "true", "0x10",   "1e3",   "007",
    "a#b",   "a,b",     "{b}",  "]b",  "a\\b", "x=y",  "n\xc5\x93ud-\xc3\xa9" "1", "\xe8\x8a\x82\xe7\x82\xb9" "1",
    "ctl\x01x", "del\x7fx", "tab\tx", "c1\xc2\x85x", "nbsp\xc2\xa0x"};

PlanDocument odd_document() {
    PlanDocument d;
    d.comments = {"source: a file named 'x # y'", "a second line\nversion: 99 (a comment, not a key)"};
    d.name = "name: with # and 'single' \"double\" quotes";
    PlanDocument::Tier leaf;
    leaf.key = "leaf";
    leaf.comment = "odd names # more";
    leaf.names = {"*leaf#1"};
    leaf.ports = 40;
    leaf.down = "1-2";
    d.switches.push_back(leaf);
    d.hosts.push_back({{"yes", "*h"}, "mlx5_0", 1, "*leaf#1", "1-2", 2, std::nullopt});
    for (size_t i = 0; i < kOddNames.size(); ++i)
        d.cables.push_back({{"*leaf#1", "", static_cast<int>(i) + 3}, {kOddNames[i], "hca#" + std::to_string(i), 1}, std::nullopt});
    d.nodes.push_back({"*leaf#1", "", 0, Guid{0x0002c90300a1b2c3}});
    d.nodes.push_back({"&lonely", "ca", 2, std::nullopt});
    return d;
}

}  // namespace

TEST(PlanWrite, NamesThatNeedQuotingRoundTrip) {
    const std::string yaml = plan_yaml_text(odd_document());
    Plan p;
    ASSERT_NO_THROW(p = parse_plan_yaml(yaml, "odd.yaml")) << yaml;
    std::set<std::string> names;
    for (const PlannedNode& n : p.nodes) names.insert(n.name + (n.hca.empty() ? "" : ":" + n.hca));
    for (size_t i = 0; i < kOddNames.size(); ++i)
        EXPECT_TRUE(names.count(kOddNames[i] + ":hca#" + std::to_string(i))) << kOddNames[i] << "\n" << yaml;
    for (const char* n : {"*leaf#1", "yes:mlx5_0", "*h:mlx5_0", "&lonely"}) EXPECT_TRUE(names.count(n)) << n << "\n" << yaml;
    EXPECT_EQ(p.nodes.size(), kOddNames.size() + 4);
    const std::map<std::string, std::string> peers = peer_map(p);
    EXPECT_EQ(peers.at("*leaf#1/1"), "yes:mlx5_0/1");
    EXPECT_EQ(peers.at("*leaf#1/3"), "#c:hca#0/1");
    for (const PlannedNode& n : p.nodes)
        if (n.name == "*leaf#1") {
            EXPECT_EQ(n.guid, Guid{0x0002c90300a1b2c3});
        }
    // Comments stay comments: the second line of a comment is no key.
    EXPECT_NE(yaml.find("# a second line\n# version: 99"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("leaf:   # odd names # more\n"), std::string::npos) << yaml;
    // No raw control byte: yaml-cpp escapes them.
    for (char c : yaml) EXPECT_FALSE(c != '\n' && static_cast<unsigned char>(c) < 0x20) << "raw control byte";
}

TEST(PlanWrite, LayoutOfEverySection) {
    PlanDocument d;
    d.comments = {"top"};
    d.name = "from-dump";
    d.rate = parse_rate("4xHDR");
    d.mtu = 4096;
    d.switches.push_back({"leaf", "", {"leaf[01-02]"}, 40, 0, "1-2", "3-4", "spine", 0, std::nullopt});
    d.switches.push_back({"spine", "", {"spine[1-2]"}, 40, 0, "1-2", "", "", 0, std::nullopt});
    d.hosts.push_back({{"node[01-04]"}, "mlx5_0", 1, "leaf[01-02]", "1-2", 2, std::nullopt});
    d.overrides.push_back({"leaf01/3", parse_rate("4xEDR")});
    d.nodes.push_back({"leaf01", "", 0, Guid{1}});
    EXPECT_EQ(plan_yaml_text(d),
              "# top\n"
              "version: 1\n"
              "name: \"from-dump\"\n"
              "rate: 4xHDR\n"
              "mtu: 4096\n"
              "\n"
              "switches:\n"
              "  leaf:\n"
              "    names: [\"leaf[01-02]\"]\n"
              "    ports: 40\n"
              "    down: \"1-2\"\n"
              "    up: \"3-4\"\n"
              "    up_to: spine\n"
              "  spine:\n"
              "    names: [\"spine[1-2]\"]\n"
              "    ports: 40\n"
              "    down: \"1-2\"\n"
              "\n"
              "hosts:\n"
              "  - {names: [\"node[01-04]\"], hca: \"mlx5_0\", port: 1, attach: \"leaf[01-02]\", ports: \"1-2\", per_switch: 2}\n"
              "\n"
              "overrides:\n"
              "  - {port: \"leaf01/3\", rate: 4xEDR}\n"
              "\n"
              "nodes:\n"
              "  \"leaf01\": 0x0000000000000001\n");
    EXPECT_NO_THROW(parse_plan_yaml(plan_yaml_text(d), "layout.yaml"));
}
