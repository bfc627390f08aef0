// Every class of plan error is an InputError at the right file:line:column with a message that
// says what was expected; random and mutated input gives a Plan or an InputError, nothing else.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"
#include "plan_test_util.h"

using namespace ibf;
using namespace ibf::test;

namespace {

// Parses `yaml` and checks the InputError's position and that its message contains each of `parts`.
void expect_error(const std::string& yaml, int line, int column, std::initializer_list<std::string> parts) {
    try {
        parse_plan_yaml(yaml, "plan.yaml");
        ADD_FAILURE() << "no error for:\n" << yaml;
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "plan.yaml");
        EXPECT_EQ(e.line(), line) << e.what();
        EXPECT_EQ(e.column(), column) << e.what();
        for (const auto& p : parts) EXPECT_NE(e.message().find(p), std::string::npos) << "missing '" << p << "' in: " << e.what();
        std::string prefix = "plan.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
        EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    }
}

// A valid 2-tier plan to break one line at a time (lines numbered in the comments).
const std::string kBase =
    "version: 1\n"                       // 1
    "rate: 4xEDR\n"                      // 2
    "switches:\n"                        // 3
    "  leaf:\n"                          // 4
    "    names: leaf[01-04]\n"           // 5
    "    ports: 36\n"                    // 6
    "    down: 1-18\n"                   // 7
    "    up: 19-22\n"                    // 8
    "    up_to: spine\n"                 // 9
    "    cables_per_pair: 2\n"           // 10
    "  spine:\n"                         // 11
    "    names: spine[01-02]\n"          // 12
    "    ports: 36\n"                    // 13
    "    down: 1-8\n"                    // 14
    "hosts:\n"                           // 15
    "  names: node[01-08]\n"             // 16
    "  per_switch: 2\n";                 // 17

std::string replace(std::string s, const std::string& from, const std::string& to) {
    auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) s.replace(pos, from.size(), to);
    return s;
}

}  // namespace

TEST(PlanErrors, BaseIsValid) {
    Plan p = parse_plan_yaml(kBase, "plan.yaml");
    EXPECT_EQ(p.links.size(), 16u + 8u);
}

// Issue 20 item 2: a director's cards keep their names in a plan ("dir1/L03/U2", as check and
// analyze name them), in patterns, in cable ends (node/port splits at the last '/') and as keys.
TEST(PlanErrors, ChassisCardNamesAreNames) {
    const std::string yaml = replace(replace(kBase, "spine[01-02]", "dir1/S[01-02]/U1"), "hosts:\n",
                                     "cables:\n  - {a: dir1/S01/U1/9, b: {node: dir1/S02/U1, port: 9}}\n"
                                     "nodes:\n  dir1/S02/U1: 0x0002c90300000abc\nhosts:\n");
    const Plan p = parse_plan_yaml(yaml, "plan.yaml");
    std::set<std::string> names;
    for (const PlannedNode& n : p.nodes) names.insert(n.name);
    EXPECT_TRUE(names.count("dir1/S01/U1") && names.count("dir1/S02/U1"));
    bool cable = false;
    for (const PlannedLink& l : p.links)
        cable |= p.nodes[l.a.node].name == "dir1/S01/U1" && l.a.port == 9 && p.nodes[l.b.node].name == "dir1/S02/U1" && l.b.port == 9;
    EXPECT_TRUE(cable);
    for (const PlannedNode& n : p.nodes)
        if (n.name == "dir1/S02/U1") {
            EXPECT_EQ(n.guid, Guid{0x0002c90300000abc});
        }
}

// The wording every reader shares (ibf/suggest.h unknown_key): where, the suggestion when one is
// close, the keys the mapping takes.
TEST(PlanErrors, UnknownKeyWithSuggestion) {
    const std::string kPlanKeys =
        "(expected one of: version, name, description, node_name_map, rate, mtu, nodes, switches, hosts, cables, "
        "overrides, scope)";
    expect_error(replace(kBase, "cables_per_pair", "cable_per_pair"), 10, 5,
                 {"unknown key 'cable_per_pair' in tier 'leaf'; did you mean 'cables_per_pair'? (expected one of: "
                  "names, ports, down, up, up_to, cables_per_pair, pods, rate, mtu)"});
    expect_error(replace(kBase, "switches:", "swiches:"), 3, 1,
                 {"unknown key 'swiches' in the plan; did you mean 'switches'? " + kPlanKeys});
    expect_error(kBase + "colour: blue\n", 18, 1, {"unknown key 'colour' in the plan " + kPlanKeys});
}

TEST(PlanErrors, DuplicateKey) {
    expect_error(replace(kBase, "    ports: 36\n    down: 1-18", "    ports: 36\n    ports: 36"), 7, 5,
                 {"duplicate key 'ports'", "plan.yaml:6:5"});
}

TEST(PlanErrors, WrongTypes) {
    expect_error(replace(kBase, "ports: 36\n    down: 1-18", "ports: many\n    down: 1-18"), 6, 12,
                 {"expected an integer for 'ports'"});
    expect_error(replace(kBase, "names: leaf[01-04]", "names: {a: b}"), 5, 12, {"expected a name pattern"});
    expect_error(replace(kBase, "hosts:\n  names: node[01-08]\n  per_switch: 2\n", "hosts: 7\n"), 15, 8, {"host group"});
    expect_error("- a\n- b\n", 1, 1, {"expected a YAML map"});
    expect_error(replace(kBase, "up_to: spine", "up_to: [spine]"), 9, 12, {"expected a string for 'up_to'"});
}

TEST(PlanErrors, VersionMissingOrUnsupported) {
    expect_error(replace(kBase, "version: 1\n", "name: x\n"), 1, 1, {"missing `version: 1`"});
    expect_error(replace(kBase, "version: 1", "version: 2"), 1, 10, {"unsupported plan version 2"});
}

TEST(PlanErrors, BadPatternAndBadRange) {
    expect_error(replace(kBase, "leaf[01-04]", "leaf[01-04"), 5, 16, {"never closed"});
    expect_error(replace(kBase, "leaf[01-04]", "leaf[04-01]"), 5, 17, {"bad range '04-01'", "start is greater"});
    expect_error(replace(kBase, "leaf[01-04]", "leaf[a-d]"), 5, 17, {"bad range 'a-d'"});
    expect_error(replace(kBase, "leaf[01-04]", "\"leaf [01-04]\""), 5, 12, {"bad name 'leaf 01'", "may not contain"});
    expect_error(replace(kBase, "node[01-08]", "[a:1, b]"), 16, 11, {"bad name 'a:1'"});
    // '/' only inside a chassis card's name: a last part that is a number reads as node/port.
    expect_error(replace(kBase, "spine[01-02]", "[dir1/S01/U1, dir1/2]"), 12, 26, {"bad name 'dir1/2'", "not before a number"});
    expect_error(replace(kBase, "spine[01-02]", "[dir1//U1, dir1/S02/U1]"), 12, 13, {"bad name 'dir1//U1'", "only inside a card name"});
    expect_error(replace(kBase, "down: 1-18", "down: 18-1"), 7, 11, {"bad port range '18-1'"});
    expect_error(replace(kBase, "down: 1-18", "down: 1-x"), 7, 11, {"bad port range"});
    expect_error(replace(kBase, "down: 1-18", "down: 1-18,5"), 7, 11, {"port 5 is listed twice"});
}

TEST(PlanErrors, BadRateAndMtu) {
    expect_error(replace(kBase, "rate: 4xEDR", "rate: 4xEDX"), 2, 7, {"bad rate '4xEDX'", "4xEDR"});
    expect_error(kBase + "mtu: 3000\n", 18, 6, {"bad MTU '3000'", "256, 512, 1024, 2048 or 4096"});
    expect_error(kBase + "mtu: [1]\n", 18, 6, {"expected an MTU"});
    expect_error(kBase + "cables:\n  - {a: x/1, b: y/1, rate: fast}\n", 19, 28, {"bad rate 'fast'"});
}

TEST(PlanErrors, PortBeyondTheSwitchPortCount) {
    expect_error(replace(kBase, "up: 19-22", "up: 33-40"), 8, 9, {"port 40", "beyond the switch's 36 ports"});
    expect_error(kBase + "cables:\n  - {a: leaf01/37, b: x/1}\n", 19, 5, {"port 37 is beyond leaf01's 36 ports", "plan.yaml:5:12"});
    expect_error(kBase + "nodes:\n  storage: {type: switch, ports: 8}\ncables:\n  - {a: storage/9, b: x/1}\n", 21, 5,
                 {"port 9 is beyond storage's 8 ports"});
}

TEST(PlanErrors, DuplicatePortUseNamesBothPlaces) {
    // leaf02/19 is spine01/3 by the compact rule (up ports at line 8).
    expect_error(kBase + "cables:\n  - {a: leaf02/19, b: spine02/30}\n", 19, 5,
                 {"leaf02/19 is already cabled to spine01/3 by plan.yaml:8:9", "this cable (plan.yaml:19:5)",
                  "spine02/30"});
    // The other end collides with a host link (hosts at line 16).
    expect_error(kBase + "cables:\n  - {a: spine02/30, b: leaf01/2}\n", 19, 5,
                 {"leaf01/2 is already cabled to node02/1 by plan.yaml:16:10"});
    // Two explicit cables.
    expect_error("version: 1\ncables:\n  - {a: a/1, b: b/1}\n  - a: c/1\n    b: a/1\n", 4, 5,
                 {"a/1 is already cabled to b/1 by plan.yaml:3:5"});
    // Up and down overlap inside a tier.
    expect_error(replace(kBase, "up: 19-22", "up: 18-21"), 8, 9, {"port 18", "both down (plan.yaml:7:11) and up"});
    // Host groups that overlap.
    expect_error(replace(kBase, "hosts:\n  names: node[01-08]\n  per_switch: 2\n",
                         "hosts:\n  - {names: \"node[01-08]\", per_switch: 2}\n"
                         "  - {names: x1, attach: leaf01, ports: 1, per_switch: 1}\n"),
                 17, 13, {"leaf01/1 is already cabled to node01/1 by plan.yaml:16:13"});
}

TEST(PlanErrors, CountsThatDoNotMatchTheirPeers) {
    expect_error(replace(kBase, "up: 19-22", "up: 19-21"), 8, 9,
                 {"tier 'leaf' has 3 up ports but needs 4", "2 switches of tier 'spine' x 2 cables_per_pair"});
    expect_error(replace(kBase, "down: 1-8", "down: 1-10"), 14, 11,
                 {"tier 'spine' has 10 down ports but tier 'leaf' needs 8"});
    expect_error(replace(kBase, "node[01-08]", "node[01-07]"), 16, 10,
                 {"host names give 7 hosts but 4 switches x 2 per_switch need 8"});
    expect_error(replace(kBase, "per_switch: 2", "per_switch: 19"), 17, 15, {"per_switch 19 is more than the 18"});
    expect_error(replace(kBase, "names: leaf[01-04]", "names: leaf[01-04]\n    pods: 3"), 6, 11,
                 {"do not split into 3 equal pods"});
}

TEST(PlanErrors, PodsThatDoNotFit) {
    const std::string three =
        "version: 1\n"                                                                          // 1
        "switches:\n"                                                                           // 2
        "  leaf: {names: \"l[1-4]\", ports: 8, pods: 2, down: 1-2, up: 3-4, up_to: mid}\n"      // 3
        "  mid: {names: \"m[1-4]\", ports: 8, pods: 2, down: 1-2, up: 3-4, up_to: core}\n"      // 4
        "  core: {names: \"c[1-4]\", ports: 8, down: 1-2}\n";                                   // 5
    EXPECT_EQ(parse_plan_yaml(three, "plan.yaml").links.size(), 16u);
    // Different pod counts on both sides.
    expect_error(replace(three, "ports: 8, down: 1-2}", "ports: 8, pods: 4, down: 1-2}"), 4, 42,
                 {"tier 'mid' has 2 pods and tier 'core' has 4"});
    // Planes: 3 cores do not split into one plane per mid position (2 per pod).
    expect_error(replace(three, "c[1-4]", "c[1-3]"), 5, 17, {"3 switches, not a multiple of the 2 switches per pod"});
}

TEST(PlanErrors, HostsNeedAnAttachWhenTheLowestTierIsAmbiguous) {
    expect_error("version: 1\nswitches:\n  a: {names: a1, ports: 4, down: 1-2}\n  b: {names: b1, ports: 4, down: 1-2}\n"
                 "hosts: {names: \"h[1-2]\"}\n",
                 5, 8, {"needs `attach:`"});
}

TEST(PlanErrors, TierRelations) {
    expect_error(replace(kBase, "up_to: spine", "up_to: spien"), 9, 12, {"unknown tier 'spien'", "did you mean 'spine'?"});
    expect_error(replace(kBase, "up_to: spine", "up_to: leaf"), 9, 12, {"cannot go up to itself"});
    expect_error(replace(kBase, "    up_to: spine\n", ""), 8, 9, {"no `up_to:`"});
    expect_error(replace(kBase, "    names: leaf[01-04]\n", ""), 4, 3, {"needs `names:`"});
    expect_error(replace(kBase, "  names: node[01-08]\n", "  names: node[01-08]\n  attach: lef\n"), 17, 11,
                 {"attach 'lef'", "did you mean 'leaf'?"});
}

TEST(PlanErrors, CableEndsNodesAndOverrides) {
    expect_error("version: 1\ncables:\n  - {a: leaf03, b: x/1}\n", 3, 9, {"bad cable end 'leaf03'", "leaf03/19"});
    expect_error("version: 1\ncables:\n  - {a: leaf03/x, b: x/1}\n", 3, 9, {"the port is not a number"});
    expect_error("version: 1\ncables:\n  - {a: l/1}\n", 3, 5, {"needs both ends"});
    expect_error("version: 1\ncables:\n  - {a: {node: g, prt: 1}, b: x/1}\n", 3, 19, {"unknown key 'prt'", "did you mean 'port'?"});
    expect_error(kBase + "nodes:\n  leaf1: 0x1\n", 19, 3,
                 {"node 'leaf1' in 'nodes' is not declared", "did you mean 'leaf01'?"});
    expect_error(kBase + "nodes:\n  leaf01: 0x1\n  leaf02: 0x01\n", 20, 11, {"GUID 0x0000000000000001 is given to both 'leaf01'"});
    expect_error(kBase + "nodes:\n  leaf01: zz\n", 19, 11, {"bad GUID 'zz'"});
    expect_error(kBase + "overrides:\n  - {port: leaf01/30, mtu: 2048}\n", 19, 12, {"no planned cable at leaf01/30"});
    expect_error(kBase + "overrides:\n  - {port: leaf01/19}\n", 19, 5, {"needs `label:`, `rate:` or `mtu:`"});
    expect_error(kBase + "overrides:\n  - {port: {node: nobody, port: 1}, label: x}\n", 19, 12, {"no node 'nobody'"});
    // An end without HCA means the host's only HCA; a second HCA then makes the first end ambiguous.
    expect_error("version: 1\ncables:\n  - {a: g/1, b: x/1}\n  - {a: g:mlx5_1/1, b: y/1}\n", 4, 9,
                 {"'g' is declared both with and without an HCA"});
    expect_error("version: 1\ncables:\n  - {a: g:mlx5_0/1, b: x/1}\n  - {a: g:mlx5_1/1, b: x/2}\n  - {a: g/2, b: y/1}\n", 5,
                 9, {"'g' has several HCAs (mlx5_0, mlx5_1)"});
}

TEST(PlanErrors, YamlSyntaxErrors) {
    expect_error("version: 1\nswitches: [leaf\n", 3, 1, {"YAML syntax error"});
    expect_error("version: 1\n  bad: indent\n", 2, 6, {"YAML syntax error"});
    expect_error("version: 1\ncables: {a: \"x/1}\n", 3, 1, {"YAML syntax error"});
}

// Issue 19 item 4: inputs whose expanded size is far beyond their bytes. Each is one InputError
// naming the file and line, raised before the expansion is built (the CLI test measures time and
// memory: tests/tools/check_cli_test.cpp, InputLimitsBoundTimeAndMemory).
TEST(PlanErrors, ExpandedSizeIsBounded) {
    std::string flow = "version: 1\nnodes: [";  // the 2 MB plan written as one flow list
    for (int i = 0; i < 1000000; ++i) flow += i ? ",a" : "a";
    flow += "]\n";
    expect_error(flow, 2, 500008, {"the plan has more than 250000 YAML nodes"});
    std::string block = "version: 1\nnodes:\n";  // the same as a block list: yaml-cpp's events count it
    for (int i = 0; i < 300000; ++i) block += "  - a\n";
    expect_error(block, 249998, 5, {"the plan has more than 250000 YAML nodes"});
    std::string laughs = "version: 1\nx0: &a0 [a, a, a, a, a, a, a, a, a, a]\n";  // 10^7 nodes from aliases;
    // x5 (line 7) is the first past the bound: after x0..x4 (~123k) its second alias of x4 (111,111).
    for (int i = 1; i < 7; ++i) {
        laughs += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int k = 0; k < 10; ++k) laughs += (k ? ", *a" : "*a") + std::to_string(i - 1);
        laughs += "]\n";
    }
    expect_error(laughs, 7, 15, {"aliases counted as what they stand for"});
    // The 2 KB plan with names: "<2000 x A>[1-1000000]".
    const std::string names = "version: 1\nswitches:\n  leaf:\n    names: \"" + std::string(2000, 'A') + "[1-1000000]\"\n    ports: 36\n";
    expect_error(names, 4, 2014, {"expands to more than 100000 names"});
    expect_error("version: 1\nswitches:\n  leaf:\n    names: \"" + std::string(2000, 'A') + "[1-9]\"\n    ports: 36\n", 4, 13,
                 {"makes names of 2001 bytes; a name has at most 255"});
    // Compact tiers whose cables pass the limit: 100 pods of 100 leaves x 100 spines = 10^6 cables.
    expect_error("version: 1\nswitches:\n  leaf:\n    names: l[1-10000]\n    ports: 255\n    up: 1-100\n    up_to: spine\n"
                 "    pods: 100\n  spine:\n    names: s[1-10000]\n    ports: 255\n    down: 1-100\n    pods: 100\n",
                 6, 9, {"the plan expands to more than 500000 cables"});
}

TEST(PlanErrors, EmptyInput) {
    EXPECT_THROW(parse_plan_yaml("", "e.yaml"), InputError);
    EXPECT_THROW(parse_plan_yaml("# nothing\n", "e.yaml"), InputError);
    EXPECT_THROW(load_plan("hello\n", "e.txt"), InputError);
}

// ---- fuzz-ish ----------------------------------------------------------------------------------

namespace {

// Parses; anything but a Plan or an InputError fails the test (a crash fails it too).
void survives(const std::string& text) {
    try {
        (void)load_plan(text, "fuzz.yaml");
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).find("internal error"), std::string::npos) << e.what() << "\ninput:\n" << text;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected " << typeid(e).name() << ": " << e.what() << "\ninput:\n" << text;
    }
}

}  // namespace

TEST(PlanFuzz, RandomBytes) {
    std::mt19937 rng(12345);
    for (int i = 0; i < 2000; ++i) {
        std::string s(rng() % 200, '\0');
        for (auto& c : s) c = static_cast<char>(rng() % 256);
        if (i % 2) s = "version: 1\n" + s;
        survives(s);
    }
}

TEST(PlanFuzz, DeepNestingAndAliases) {
    survives("version: 1\nswitches: " + std::string(100000, '[') + "\n");
    survives("version: 1\nswitches: " + std::string(5000, '{') + "\n");
    survives("version: 1\na: &a [x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n");
    // An alias used as a tier spec twice: two tiers with the same switch names.
    survives("version: 1\nswitches:\n  leaf: &t {names: \"s[1-2]\", ports: 4}\n  spine: *t\n");
    survives("version: 1\nhosts: &h {names: *h}\n");
}

TEST(PlanFuzz, MutatedExamples) {
    std::vector<std::string> seeds = {read_file(example_path("small-plan.yaml")),
                                      read_file(example_path("fat-tree-2tier-324.yaml")), kBase};
    for (const auto& s : seeds) ASSERT_FALSE(s.empty());
    const std::vector<std::string> tokens = {"-", "[", "]", "{", "}", ":", ",", "/", "0", "1", "99999", "-1", "\n",
                                             "  ", "\"", "'", "#", "&a", "*a", "x", "leaf01", "spine", "4xHDR", "mlx5_0",
                                             "[1-3]", "1-40", "0x1", "~", "null", "pods: 2", "up_to: leaf"};
    std::mt19937 rng(777);
    int parsed = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string s = seeds[i % seeds.size()];
        int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !s.empty(); ++e) {
            size_t pos = rng() % s.size();
            switch (rng() % 4) {
                case 0: s.erase(pos, 1 + rng() % 6); break;
                case 1: s.insert(pos, tokens[rng() % tokens.size()]); break;
                case 2: s[pos] = static_cast<char>(32 + rng() % 95); break;
                default: {  // duplicate a line
                    size_t b = s.rfind('\n', pos);
                    b = b == std::string::npos ? 0 : b + 1;
                    size_t en = s.find('\n', pos);
                    if (en != std::string::npos) s.insert(b, s.substr(b, en - b + 1));
                }
            }
        }
        try {
            (void)parse_plan_yaml(s, "fuzz.yaml");
            ++parsed;
        } catch (const InputError& e) {
            EXPECT_EQ(std::string(e.what()).find("internal error"), std::string::npos) << e.what() << "\ninput:\n" << s;
            EXPECT_GT(e.line(), 0) << e.what() << "\ninput:\n" << s;
        } catch (const std::exception& ex) {
            ADD_FAILURE() << "unexpected exception: " << ex.what() << "\ninput:\n" << s;
        }
    }
    // Many mutations (in comments, names) still give a plan: the fuzzer reached the expansion code.
    EXPECT_GT(parsed, 50);
}

// A binary or huge scalar is shown short and escaped, so the error stays one readable line.
TEST(PlanErrors, OddScalarsAreShownShortAndEscaped) {
    expect_error(std::string("\x01\x02\xfe") + std::string(200, 'z') + "\n", 1, 1,
                 {"expected a YAML map", "got '\\x01\\x02\\xfe" + std::string(57, 'z') + "...'"});
    expect_error(replace(kBase, "ports: 36", "ports: \"3\\t6\""), 6, 12, {"got '3\\x096'"});
}
