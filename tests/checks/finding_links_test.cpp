// Complete findings (docs/findings.md, "links"): for every kind check() produces, each port that a
// finding's message names is one of its structured ends (a, b, or an end of one of its links), so a
// client reading --json knows every cable to touch; crossed pairs carry both cables with their
// planned ends; links survive the JSON round trip.
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>
#include <string>

#include "ibf/capability.h"
#include "ibf/check.h"
#include "ibf/error.h"
#include "ibf/report.h"
#include "ibf/synth.h"
#include "plan_of.h"

using namespace ibf;
using ibf::test::plan_of;

namespace {

Fabric small_tree(FatTreeSpec spec = {}) {
    spec.levels = 2;
    spec.radix = 8;
    spec.hosts = 6;
    return synth_fat_tree(spec);
}

NodeId id(const Fabric& f, const std::string& name) { return synth_node(f, name); }

std::string end_text(const Endpoint& e) { return e.name + "/" + std::to_string(e.port); }

// Every "node/port" the finding carries as data.
std::set<std::string> structured_ports(const Finding& f) {
    std::set<std::string> s;
    auto add = [&s](const Endpoint& e) {
        if (!e.name.empty() && e.port > 0) s.insert(end_text(e));
    };
    add(f.a);
    add(f.b);
    for (const FindingLink& l : f.links) {
        add(l.a);
        add(l.b);
        add(l.planned);
    }
    return s;
}

// Every "node/port" the message names ("leaf0001/5", "sw1/4"; "Gb/s" is not one), and every port of
// a group ("4 links of leaf0001 (ports 5-7,9)" names leaf0001/5, /6, /7 and /9).
std::vector<std::string> message_ports(const std::string& m) {
    static const std::regex port_re(R"(([A-Za-z0-9_.:@-]+(/[A-Za-z][A-Za-z0-9]*)*)/([0-9]+))");
    static const std::regex group_re(R"(([A-Za-z0-9_.:@/-]+) \(ports ([0-9,-]+)\))");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(m.begin(), m.end(), port_re); it != std::sregex_iterator(); ++it)
        out.push_back(it->str());
    for (auto it = std::sregex_iterator(m.begin(), m.end(), group_re); it != std::sregex_iterator(); ++it) {
        const std::string node = (*it)[1].str(), ranges = (*it)[2].str();
        size_t at = 0;
        while (at < ranges.size()) {
            size_t comma = ranges.find(',', at);
            const std::string r = ranges.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
            at = comma == std::string::npos ? ranges.size() : comma + 1;
            const size_t dash = r.find('-');
            const int lo = std::stoi(r.substr(0, dash)), hi = dash == std::string::npos ? lo : std::stoi(r.substr(dash + 1));
            for (int p = lo; p <= hi; ++p) out.push_back(node + "/" + std::to_string(p));
        }
    }
    return out;
}

struct Case {
    const char* what;
    FindingKind kind;
    std::function<void(Fabric&, Plan&)> mutate;
    FatTreeSpec spec{};
    bool with_rate = true;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> cs = {
        {"cable removed", FindingKind::missing_link,
         [](Fabric& f, Plan&) { remove_cable(f, id(f, "leaf0002"), 5); }},
        {"planned port cabled to a node the plan does not know", FindingKind::missing_link,
         [](Fabric& f, Plan&) {
             // "no cable between leaf0001/1 and node00001/1; leaf0001/1 is cabled to intruder/1 (not in the plan)"
             remove_cable(f, id(f, "leaf0001"), 1);
             add_host(f, "intruder", 0xabc0, id(f, "leaf0001"), 1);
             f.finalize();
         }},
        {"unplanned cable", FindingKind::unexpected_link,
         [](Fabric& f, Plan&) {
             f.connect(id(f, "leaf0002"), 3, id(f, "spine0001"), 5);
             f.finalize();
         }},
        {"cable moved", FindingKind::miswired,
         [](Fabric& f, Plan&) { move_far_end(f, id(f, "node00005"), 1, 3); }},
        {"crossed pair", FindingKind::miswired,
         [](Fabric& f, Plan& p) {
             cross_cables(f, id(f, "leaf0001"), 5, 6);
             for (PlannedLink& l : p.links) l.label = "C-" + std::to_string(l.a.port) + "-" + std::to_string(l.b.port);
         }},
        {"node gone", FindingKind::missing_node,
         [](Fabric& f, Plan&) { f = without_node(f, id(f, "spine0004")); }},
        {"host gone", FindingKind::host_absent,
         [](Fabric& f, Plan&) { f = without_node(f, id(f, "node00004")); }},
        {"node added", FindingKind::unexpected_node,
         [](Fabric& f, Plan&) {
             add_host(f, "intruder", 0xabc0, id(f, "leaf0002"), 3);
             f.finalize();
         }},
        {"renamed", FindingKind::identity_changed,
         [](Fabric& f, Plan& p) { p.nodes[id(f, "leaf0001")].guid = 0xdead; }},  // replaced: found by name
        {"rate below plan", FindingKind::rate_mismatch,
         [](Fabric& f, Plan&) { set_link_rate(f, id(f, "leaf0001"), 6, {Width::X1, Speed::HDR}); }},
        {"ends disagree on rate", FindingKind::rate_mismatch,
         [](Fabric& f, Plan&) { f.node(id(f, "spine0002")).port(1)->width_active = Width::X1; },
         {}, /*with_rate=*/false},
        {"rate below capability", FindingKind::rate_below_capability,
         [](Fabric& f, Plan&) { set_link_rate(f, id(f, "leaf0001"), 6, {Width::X4, Speed::EDR}); },
         FatTreeSpec{.speed_supported = speed_bit(Speed::EDR) | speed_bit(Speed::HDR)}, /*with_rate=*/false},
        {"MTU below plan", FindingKind::mtu_mismatch,
         [](Fabric& f, Plan&) { set_link_mtu(f, id(f, "node00006"), 1, 2048); }},
        {"ends disagree on MTU", FindingKind::mtu_mismatch,
         [](Fabric& f, Plan& p) {
             for (PlannedLink& l : p.links) l.mtu.reset();
             f.node(id(f, "node00006")).port(1)->mtu_active = 2048;
         }},
    };
    return cs;
}

}  // namespace

TEST(FindingLinks, EveryPortAMessageNamesIsAStructuredEnd) {
    std::set<FindingKind> seen;
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.what);
        Fabric f = small_tree(c.spec);
        Plan p = plan_of(f, true, c.with_rate);
        c.mutate(f, p);
        const auto fs = check(p, f);
        ASSERT_FALSE(fs.empty());
        bool kind_found = false;
        for (const Finding& fd : fs) {
            kind_found |= fd.kind == c.kind;
            const auto have = structured_ports(fd);
            const auto named = message_ports(fd.message);
            if (fd.kind != FindingKind::identity_changed) {
                EXPECT_FALSE(named.empty()) << fd.message;
            }
            for (const std::string& port : named)
                EXPECT_TRUE(have.count(port)) << to_string(fd.kind) << ": " << port << " is only in the message: "
                                              << fd.message;
            // The JSON carries the same links.
            const Finding back = finding_from_json(finding_to_json(fd));
            EXPECT_EQ(structured_ports(back), have);
        }
        EXPECT_TRUE(kind_found) << "expected a " << to_string(c.kind);
        seen.insert(c.kind);
    }
    // Every plan-vs-actual kind is covered.
    for (FindingKind k : {FindingKind::missing_link, FindingKind::unexpected_link, FindingKind::miswired,
                          FindingKind::missing_node, FindingKind::host_absent, FindingKind::unexpected_node,
                          FindingKind::identity_changed,
                          FindingKind::rate_mismatch, FindingKind::rate_below_capability, FindingKind::mtu_mismatch})
        EXPECT_TRUE(seen.count(k)) << to_string(k);
}

TEST(FindingLinks, ACrossedPairCarriesBothCablesWithTheirPlannedEnds) {
    Fabric f = small_tree();
    Plan p = plan_of(f);
    for (PlannedLink& l : p.links) l.label = "C-" + std::to_string(l.a.port) + "-" + std::to_string(l.b.port);
    cross_cables(f, id(f, "leaf0001"), 5, 6);
    const auto fs = check(p, f);
    ASSERT_EQ(fs.size(), 1u);
    const Finding& x = fs[0];
    EXPECT_EQ(x.kind, FindingKind::miswired);
    ASSERT_EQ(x.links.size(), 2u);
    EXPECT_EQ(end_text(x.links[0].a), "leaf0001/5");
    EXPECT_EQ(end_text(x.links[0].b), "spine0002/1");
    EXPECT_EQ(end_text(x.links[0].planned), "spine0001/1");
    EXPECT_EQ(end_text(x.links[1].a), "leaf0001/6");
    EXPECT_EQ(end_text(x.links[1].b), "spine0001/1");
    EXPECT_EQ(end_text(x.links[1].planned), "spine0002/1");
    EXPECT_EQ(x.links[0].rate, "4xHDR");
    EXPECT_FALSE(x.links[0].label.empty());
    EXPECT_FALSE(x.links[1].label.empty());
    EXPECT_NE(x.links[0].label, x.links[1].label);
    // The text is made from the same data.
    EXPECT_EQ(x.message, "cables at leaf0001/5 and leaf0001/6 (cables " + x.links[0].label + " and " +
                             x.links[1].label +
                             ") are crossed: leaf0001/5 goes to spine0002/1 and leaf0001/6 to spine0001/1, plan says "
                             "the other way round; swap the cables at spine0001/1 and spine0002/1");
    EXPECT_EQ(x.links[0].planned.guid, f.node(id(f, "spine0001")).guid);
}

TEST(FindingLinks, AMissingNodeListsEveryPlannedCable) {
    Fabric f = small_tree();
    Plan p = plan_of(f);
    Fabric g = without_node(f, id(f, "spine0004"));
    const auto fs = check(p, g);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].kind, FindingKind::missing_node);
    ASSERT_EQ(fs[0].links.size(), 2u);  // leaf0001/8 and leaf0002/8
    std::set<std::string> far;
    for (const FindingLink& l : fs[0].links) {
        EXPECT_EQ(l.a.name, "spine0004");
        EXPECT_TRUE(l.b.name.empty());  // nothing is cabled: the node is gone
        far.insert(end_text(l.planned));
    }
    EXPECT_EQ(far, (std::set<std::string>{"leaf0001/8", "leaf0002/8"}));
}

TEST(FindingLinks, JsonHasLinksAndOldObjectsWithoutThemStillRead) {
    Fabric f = small_tree();
    Plan p = plan_of(f);
    move_far_end(f, id(f, "node00005"), 1, 3);
    const auto fs = check(p, f);
    ASSERT_EQ(fs.size(), 1u);
    nlohmann::json j = finding_to_json(fs[0]);
    ASSERT_TRUE(j["links"].is_array());
    ASSERT_EQ(j["links"].size(), 1u);
    // "cable at node00005/1 goes to leaf0002/3, plan says leaf0002/1"
    EXPECT_EQ(j["links"][0]["a"]["name"], "node00005");
    EXPECT_EQ(j["links"][0]["a"]["port"], 1);
    EXPECT_EQ(j["links"][0]["b"]["name"], "leaf0002");
    EXPECT_EQ(j["links"][0]["b"]["port"], 3);
    EXPECT_EQ(j["links"][0]["planned"]["name"], "leaf0002");
    EXPECT_EQ(j["links"][0]["planned"]["port"], 1);
    EXPECT_EQ(j["links"][0]["rate"], "4xHDR");
    j.erase("links");
    EXPECT_TRUE(finding_from_json(j).links.empty());
    j["links"] = "x";
    EXPECT_THROW(finding_from_json(j), InputError);
}

TEST(Unchecked, APlannedMtuTheInputCannotCarryIsSaid) {
    Fabric f = small_tree();
    const Plan p = plan_of(f);  // rates and MTU 4096 on every link
    EXPECT_TRUE(unchecked_fields(p, f).empty());
    for (NodeId n = 0; n < f.size(); ++n)
        for (Port& port : f.node(n).ports) port.mtu_active = 0;  // as every dump reader leaves it
    EXPECT_EQ(unchecked_fields(p, f), (std::vector<std::string>{"mtu"}));
    EXPECT_TRUE(check(p, f).empty());  // nothing to report, which is why it must be said
    EXPECT_EQ(render_unchecked(unchecked_fields(p, f)),
              "notice  MTU not checked: the plan gives it, the fabric's input carries none (ibnetdiscover, iblinkinfo "
              "and .net dumps carry no MTU; ibfabricd checks it live)\n");
    // A plan without MTUs asks for nothing that goes unchecked.
    EXPECT_TRUE(unchecked_fields(plan_of(small_tree(), true, true, /*with_mtu=*/false), f).empty());
    // No rates either: both are said.
    for (NodeId n = 0; n < f.size(); ++n)
        for (Port& port : f.node(n).ports) port.width_active = Width::Unknown, port.speed_active = Speed::Unknown;
    EXPECT_EQ(unchecked_fields(p, f), (std::vector<std::string>{"rate", "mtu"}));
    EXPECT_EQ(render_unchecked({}), "");
}

// The analysis' grouped rate_below_capability ("4 links of leaf0001 (ports 5-8) run at ..."): every
// member link is in `links` with both ends and its rate, so every port the message names is data.
TEST(FindingLinks, AGroupedRateBelowCapabilityCarriesEveryMemberLink) {
    Fabric f = small_tree({.speed_supported = speed_bit(Speed::EDR) | speed_bit(Speed::HDR)});
    const NodeId leaf = id(f, "leaf0001");
    for (int port = 5; port <= 8; ++port) set_link_rate(f, leaf, port, {Width::X4, Speed::EDR});
    set_link_rate(f, id(f, "leaf0002"), 5, {Width::X4, Speed::EDR});  // alone: a single finding
    std::vector<std::string> names;
    for (const Node& n : f.nodes()) names.push_back(n.name);
    const std::vector<Finding> fs = capability_findings(f, names);
    ASSERT_EQ(fs.size(), 2u);
    const Finding& g = fs[0];
    EXPECT_EQ(g.a.name, "leaf0001");
    EXPECT_EQ(g.a.port, 0);
    ASSERT_EQ(g.links.size(), 4u) << g.message;
    for (size_t k = 0; k < g.links.size(); ++k) {
        EXPECT_EQ(end_text(g.links[k].a), "leaf0001/" + std::to_string(5 + k));
        EXPECT_EQ(end_text(g.links[k].b), "spine000" + std::to_string(1 + k) + "/1");
        EXPECT_NE(g.links[k].b.guid, 0u);
        EXPECT_EQ(g.links[k].rate, "4xEDR");
    }
    for (const Finding& fd : fs) {
        const auto have = structured_ports(finding_from_json(finding_to_json(fd)));
        const auto named = message_ports(fd.message);
        EXPECT_FALSE(named.empty()) << fd.message;
        for (const std::string& port : named) EXPECT_TRUE(have.count(port)) << port << " is only in the message: " << fd.message;
    }
    EXPECT_EQ(message_ports(g.message).size(), 4u) << g.message;
    ASSERT_EQ(fs[1].links.size(), 1u);
    EXPECT_EQ(end_text(fs[1].links[0].b), "spine0001/2");
}
