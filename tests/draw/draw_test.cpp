// The fabric picture: rows by tier, positions, bundles, host groups, red links, escaping, the page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "ibf/analysis.h"
#include "ibf/draw.h"
#include "ibf/page.h"
#include "ibf/synth.h"

using namespace ibf;
using namespace ibf::draw;

namespace {

// 2 spines, 2 leaves (ports 1-4 hosts; 5,6 -> spine01, 7,8 -> spine02), hosts node01-03 on
// leaf01, node04 on leaf02, node05 not cabled.
struct Small {
    Fabric f;
    NodeId s1, s2, l1, l2, h[5];
    Small(const std::string& node04_desc = "node04 mlx5_0") {
        s1 = f.add_node({.type = NodeType::Switch, .guid = 0x21, .description = "MF0;spine01:QM8700/U1"}, 8);
        s2 = f.add_node({.type = NodeType::Switch, .guid = 0x22, .description = "MF0;spine02:QM8700/U1"}, 8);
        l1 = f.add_node({.type = NodeType::Switch, .guid = 0x11, .description = "MF0;leaf01:QM8700/U1"}, 8);
        l2 = f.add_node({.type = NodeType::Switch, .guid = 0x12, .description = "MF0;leaf02:QM8700/U1"}, 8);
        for (int i = 0; i < 5; ++i) {
            const std::string d = i == 3 ? node04_desc : "node0" + std::to_string(i + 1) + " mlx5_0";
            h[i] = f.add_node({.type = NodeType::CA, .guid = 0x100u + i, .description = d}, 1);
        }
        for (int i = 0; i < 3; ++i) f.connect(l1, i + 1, h[i], 1);
        f.connect(l2, 1, h[3], 1);
        int sp = 1;
        for (NodeId l : {l1, l2}) {
            f.connect(l, 5, s1, sp), f.connect(l, 6, s1, sp + 1);
            f.connect(l, 7, s2, sp), f.connect(l, 8, s2, sp + 1);
            sp += 2;
        }
        f.finalize();
    }
    DrawInput input(std::vector<Finding> fs = {}) const {
        Analysis a = analyze(f);
        return {.fabric = &f, .tier_of = a.tier_of, .names = a.names, .findings = std::move(fs)};
    }
};

Finding finding(FindingKind k, Endpoint a, Endpoint b, std::string label = "", std::string msg = "m") {
    Finding f;
    f.kind = k;
    f.a = std::move(a);
    f.b = std::move(b);
    f.label = std::move(label);
    f.message = std::move(msg);
    return f;
}

const Box& box(const Layout& l, BoxKind k, const std::string& name) {
    for (const Box& b : l.boxes)
        if (b.kind == k && b.name == name) return b;
    throw std::runtime_error("no box " + name);
}
const Box& group_of(const Layout& l, const Small&, NodeId sw) {
    for (const Box& b : l.boxes)
        if (b.kind == BoxKind::HostGroup && b.node == sw) return b;
    throw std::runtime_error("no group");
}
std::vector<const Edge*> edges_between(const Layout& l, const Box& a, const Box& b) {
    std::vector<const Edge*> out;
    for (const Edge& e : l.edges) {
        const Box &x = l.boxes[e.from], &y = l.boxes[e.to];
        if ((&x == &a && &y == &b) || (&x == &b && &y == &a)) out.push_back(&e);
    }
    return out;
}
size_t count(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

}  // namespace

TEST(DrawLayout, RowsByTierWithHostsCollapsedUnderTheirLeaf) {
    Small s;
    Layout l = layout(s.input());
    ASSERT_EQ(l.rows.size(), 3u);
    EXPECT_EQ(l.rows[0].name, "spine");
    EXPECT_EQ(l.rows[1].name, "leaf");
    EXPECT_EQ(l.rows[2].name, "hosts");
    const Box &sp1 = box(l, BoxKind::Switch, "spine01"), &sp2 = box(l, BoxKind::Switch, "spine02");
    const Box &lf1 = box(l, BoxKind::Switch, "leaf01"), &lf2 = box(l, BoxKind::Switch, "leaf02");
    EXPECT_EQ(sp1.row, 0);
    EXPECT_EQ(lf1.row, 1);
    EXPECT_DOUBLE_EQ(sp1.y, l.rows[0].y);
    EXPECT_DOUBLE_EQ(lf1.y, l.rows[1].y);
    EXPECT_LT(sp1.y, lf1.y);
    EXPECT_LT(lf1.x, lf2.x);
    EXPECT_LT(sp1.x, sp2.x);
    EXPECT_GE(lf2.x, lf1.x + lf1.w);  // no overlap
    const Box& g1 = group_of(l, s, s.l1);
    EXPECT_EQ(g1.hosts, 3);
    EXPECT_EQ(g1.host_names, (std::vector<std::string>{"node01", "node02", "node03"}));
    EXPECT_DOUBLE_EQ(g1.y, l.rows[2].y);
    EXPECT_DOUBLE_EQ(g1.cx(), lf1.cx());  // centred under its leaf
    EXPECT_EQ(group_of(l, s, s.l2).hosts, 1);
    // node05 has no cable: a group of its own, not under a switch.
    int unattached = 0;
    for (const Box& b : l.boxes) {
        if (b.kind != BoxKind::HostGroup || b.node != kNoNode) continue;
        ++unattached;
        EXPECT_EQ(b.host_names, std::vector<std::string>{"node05"});
    }
    EXPECT_EQ(unattached, 1);
    EXPECT_EQ(l.switches, 4);
    EXPECT_EQ(l.hosts, 5);
    EXPECT_EQ(l.links, 12);
    EXPECT_EQ(l.faults, 0);
    EXPECT_GT(l.width, lf2.x + lf2.w);
    EXPECT_GT(l.height, g1.y + g1.h);
}

TEST(DrawLayout, ParallelCablesAreOneBundleWithACount) {
    Small s;
    Layout l = layout(s.input());
    const Box &sp1 = box(l, BoxKind::Switch, "spine01"), &lf1 = box(l, BoxKind::Switch, "leaf01");
    auto e = edges_between(l, sp1, lf1);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0]->cables, 2);
    EXPECT_FALSE(e[0]->fault);
    EXPECT_EQ(&l.boxes[e[0]->from], &sp1);  // from the upper box
    auto h = edges_between(l, lf1, group_of(l, s, s.l1));
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0]->cables, 3);
    // 4 switch pairs + 2 host groups; nothing for the uncabled host.
    EXPECT_EQ(l.edges.size(), 6u);
    const std::string svg = render_svg(l);
    EXPECT_EQ(count(svg, "class=\"bundle\""), 6u);
    EXPECT_EQ(count(svg, ">x2</text>"), 4u);
    EXPECT_EQ(count(svg, ">x3</text>"), 1u);
    EXPECT_EQ(count(svg, "class=\"link fault"), 0u);
    EXPECT_NE(svg.find("data-findings=\"0\" data-faults=\"0\""), std::string::npos);
}

TEST(DrawLayout, FindingsTurnTheirCablesRedWithLabels) {
    Small s;
    std::vector<Finding> fs = {
        finding(FindingKind::miswired, {"leaf01", 0x11, 5}, {"spine01", 0x21, 1}, "L01-S01-A",
                "cable at leaf01/5 goes to spine01/1, plan says spine01/2"),
        finding(FindingKind::rate_mismatch, {"leaf01", 0x11, 5}, {"spine01", 0x21, 1}, "L01-S01-A"),
        // found by name only (no GUID): the host's own cable
        finding(FindingKind::rate_mismatch, {"node02", 0, 1}, {"leaf01", 0, 2}),
        // a cable that is not there: dashed, the host gets a box under leaf02
        finding(FindingKind::missing_link, {"leaf02", 0x12, 4}, {"node05", 0x104, 1}, "H05"),
        // a whole node: red outline
        finding(FindingKind::unexpected_node, {"node01", 0x100, 0}, {}),
        // nowhere to draw it
        finding(FindingKind::missing_node, {"ghost", 0, 0}, {}, "", "node ghost is missing"),
    };
    Layout l = layout(s.input(fs));
    EXPECT_EQ(l.findings, 6u);
    const Box &sp1 = box(l, BoxKind::Switch, "spine01"), &lf1 = box(l, BoxKind::Switch, "leaf01");
    auto e = edges_between(l, sp1, lf1);
    ASSERT_EQ(e.size(), 2u);  // the healthy rest of the bundle, and the red cable
    const Edge* red = e[0]->fault ? e[0] : e[1];
    const Edge* rest = e[0]->fault ? e[1] : e[0];
    EXPECT_EQ(rest->cables, 1);
    EXPECT_TRUE(red->fault);
    EXPECT_FALSE(red->missing);
    EXPECT_EQ(red->kinds, "miswired rate_mismatch");  // two findings, one cable
    EXPECT_EQ(red->a, "spine01/1");
    EXPECT_EQ(red->b, "leaf01/5");
    EXPECT_EQ(red->label, "L01-S01-A");
    EXPECT_EQ(red->text, "miswired rate_mismatch [L01-S01-A] spine01/1 - leaf01/5");
    EXPECT_NE(red->lane, 0);  // beside the grey bundle, not on it

    // node02 and node01 leave leaf01's group for boxes of their own; node03 stays collapsed.
    EXPECT_EQ(group_of(l, s, s.l1).hosts, 1);
    const Box& n2 = box(l, BoxKind::Host, "node02");
    const Box& n1 = box(l, BoxKind::Host, "node01");
    EXPECT_TRUE(n1.fault);
    EXPECT_FALSE(n2.fault);
    EXPECT_DOUBLE_EQ(n2.y, l.rows[2].y);
    EXPECT_LT(n1.x, n2.x);
    auto h2 = edges_between(l, lf1, n2);
    ASSERT_EQ(h2.size(), 1u);
    EXPECT_TRUE(h2[0]->fault);
    EXPECT_EQ(h2[0]->a, "leaf01/2");
    // node05: a box under leaf02 and a dashed red line; no unattached group any more.
    const Box& n5 = box(l, BoxKind::Host, "node05");
    const Box& lf2 = box(l, BoxKind::Switch, "leaf02");
    EXPECT_GT(n5.x + n5.w, lf2.x - 100);
    auto m = edges_between(l, lf2, n5);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_TRUE(m[0]->missing);
    EXPECT_EQ(m[0]->text, "missing_link [H05] leaf02/4 - node05/1");
    for (const Box& b : l.boxes) EXPECT_FALSE(b.kind == BoxKind::HostGroup && b.node == kNoNode);
    ASSERT_EQ(l.not_drawn.size(), 1u);
    EXPECT_EQ(l.not_drawn[0].kind, FindingKind::missing_node);
    EXPECT_EQ(l.faults, 4);  // three red cables and node01's box

    const std::string svg = render_svg(l);
    EXPECT_EQ(count(svg, "<g class=\"link fault\""), 2u);
    EXPECT_EQ(count(svg, "<g class=\"link fault missing\""), 1u);
    EXPECT_NE(svg.find("data-kind=\"miswired rate_mismatch\" data-a=\"spine01/1\" data-b=\"leaf01/5\" "
                       "data-label=\"L01-S01-A\""),
              std::string::npos)
        << svg;
    EXPECT_NE(svg.find(">miswired rate_mismatch [L01-S01-A] spine01/1 - leaf01/5</text>"), std::string::npos);
    EXPECT_NE(svg.find("<g class=\"node host fault\" data-name=\"node01\">"), std::string::npos);
    EXPECT_NE(svg.find("not drawn: missing_node: node ghost is missing"), std::string::npos);
    EXPECT_NE(svg.find("data-findings=\"6\" data-faults=\"4\""), std::string::npos);
}

TEST(DrawLayout, PodsSpinesSitOverTheirLeavesAndNamesSortNaturally) {
    // 3 levels, radix 4: 2 leaves per pod, 2 pods, 2 spines per pod, 4 cores.
    Fabric f = synth_fat_tree({.levels = 3, .radix = 4, .hosts = 8});
    Analysis a = analyze(f);
    Layout l = layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names});
    ASSERT_EQ(l.rows.size(), 4u);
    EXPECT_EQ(l.rows[0].name, "core");
    EXPECT_EQ(l.rows[1].name, "spine");
    // spine0001/0002 serve pod 1 (leaf0001/0002), spine0003/0004 pod 2.
    const double pod1 = (box(l, BoxKind::Switch, "leaf0001").cx() + box(l, BoxKind::Switch, "leaf0002").cx()) / 2;
    const double pod2 = (box(l, BoxKind::Switch, "leaf0003").cx() + box(l, BoxKind::Switch, "leaf0004").cx()) / 2;
    for (const char* sp : {"spine0001", "spine0002"}) EXPECT_LT(box(l, BoxKind::Switch, sp).cx(), (pod1 + pod2) / 2) << sp;
    for (const char* sp : {"spine0003", "spine0004"}) EXPECT_GT(box(l, BoxKind::Switch, sp).cx(), (pod1 + pod2) / 2) << sp;

    EXPECT_TRUE(natural_less("leaf2", "leaf10"));
    EXPECT_FALSE(natural_less("leaf10", "leaf2"));
    EXPECT_TRUE(natural_less("a9b", "a10a"));
    EXPECT_FALSE(natural_less("leaf01", "leaf01"));
    EXPECT_TRUE(natural_less("leaf01", "leaf1") != natural_less("leaf1", "leaf01"));
}

TEST(DrawLayout, AThousandNodesStayReadable) {
    // 2 levels, radix 40: 40 leaves x 20 hosts = 800 hosts, 20 spines (860 nodes, 1600 cables).
    Fabric f = synth_fat_tree({.levels = 2, .radix = 40, .hosts = 0});
    ASSERT_GE(f.size(), 800u);
    Analysis a = analyze(f);
    Layout l = layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names});
    int groups = 0, switches = 0;
    for (const Box& b : l.boxes) {
        groups += b.kind == BoxKind::HostGroup;
        switches += b.kind == BoxKind::Switch;
        if (b.kind == BoxKind::HostGroup) {
            EXPECT_EQ(b.hosts, 20);
        }
    }
    EXPECT_EQ(groups, 40);
    EXPECT_EQ(switches, 60);
    EXPECT_EQ(l.boxes.size(), 100u);         // not 860
    EXPECT_EQ(l.edges.size(), 40u * 20 + 40);  // one bundle per leaf-spine pair, one per host group
    // Switch boxes of a row never overlap.
    std::vector<const Box*> leaves;
    for (const Box& b : l.boxes)
        if (b.kind == BoxKind::Switch && b.row == 1) leaves.push_back(&b);
    std::sort(leaves.begin(), leaves.end(), [](auto* x, auto* y) { return x->x < y->x; });
    for (size_t i = 1; i < leaves.size(); ++i) EXPECT_GE(leaves[i]->x, leaves[i - 1]->x + leaves[i - 1]->w);
}

TEST(DrawSvg, UntrustedNamesAreEscaped) {
    EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
    EXPECT_EQ(xml_escape("x\x1b]0;t\x07y"), "x\\x1b]0;t\\x07y");
    EXPECT_EQ(xml_escape("ok\xff"), "ok\\xff");  // invalid UTF-8 would make the SVG invalid XML
    EXPECT_EQ(xml_escape("Grüße"), "Grüße");
    // A host named to break out of the markup.
    Small s("<script>alert(1)</script>\"onload=x mlx5_0");
    std::vector<Finding> fs = {finding(FindingKind::rate_mismatch, {"leaf02", 0x12, 1}, {"", 0x103, 1}, "<b>",
                                       "</title><script>alert(2)</script>")};
    Layout l = layout(s.input(fs));
    const std::string svg = render_svg(l, {.title = "t<i>"});
    EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("\"onload"), std::string::npos);
    EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot;onload=x"), std::string::npos) << svg;
    EXPECT_NE(svg.find("&lt;/title&gt;&lt;script&gt;alert(2)"), std::string::npos);
    EXPECT_NE(svg.find("data-label=\"&lt;b&gt;\""), std::string::npos);
    EXPECT_NE(svg.find(">t&lt;i&gt;</text>"), std::string::npos);
    // Long names are cut on the box, whole in the tooltip.
    EXPECT_NE(svg.find(">&lt;script&gt;alert...</text>"), std::string::npos) << svg;
}

TEST(DrawPage, FindingsTablesAndNoDataAreShownEscaped) {
    Page p;
    p.title = "fabric <1>";
    p.facts = {{"sweep", "12"}};
    p.warning = "stale: no snapshot for 40 s";
    p.svg = "<svg class=\"ibf-fabric\"></svg>";
    p.findings = {finding(FindingKind::miswired, {"leaf<01>", 0x11, 5}, {"spine01", 0x21, 1}, "L01",
                          "move the cable & <reseat>")};
    p.findings[0].severity = Severity::error;
    p.tables.push_back({.id = "sms", .caption = "Subnet Managers", .head = {"GUID", "state"},
                        .rows = {{"0x0000000000000001", "MASTER"}}, .empty = "no SM"});
    p.tables.push_back({.id = "counters", .caption = "Link error counters", .head = {"link"}, .rows = {},
                        .empty = "no counter data: port counters are not collected"});
    const std::string html = render_page(p);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<title>fabric &lt;1&gt;</title>"), std::string::npos);
    EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("http://"), std::string::npos);  // nothing external
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_NE(html.find("<div class=\"banner\" id=\"warning\">stale: no snapshot for 40 s</div>"), std::string::npos);
    EXPECT_NE(html.find("<div class=\"picture\">\n<svg class=\"ibf-fabric\"></svg></div>"), std::string::npos);
    EXPECT_NE(html.find("<tr class=\"finding sev-error\" data-kind=\"miswired\"><td class=\"sev\">error</td>"
                        "<td>miswired</td><td>leaf&lt;01&gt;/5</td><td>spine01/1</td>"),
              std::string::npos)
        << html;
    EXPECT_NE(html.find("<td>move the cable &amp; &lt;reseat&gt;</td>"), std::string::npos);
    EXPECT_NE(html.find("<section id=\"sms\">\n<h2>Subnet Managers</h2>\n<table>"), std::string::npos);
    EXPECT_NE(html.find("<td>MASTER</td>"), std::string::npos);
    EXPECT_NE(html.find("<section id=\"counters\">\n<h2>Link error counters</h2>\n<p class=\"nodata\">no counter data: "
                        "port counters are not collected</p>"),
              std::string::npos);
    EXPECT_NE(html.find("<h2>Findings (1)</h2>"), std::string::npos);

    Page empty;
    empty.title = "x";
    empty.no_picture = "no fabric yet";
    const std::string e = render_page(empty);
    EXPECT_NE(e.find("<p class=\"nodata\">no fabric yet</p>"), std::string::npos);
    EXPECT_NE(e.find("<p class=\"nodata\" id=\"findings\">no findings</p>"), std::string::npos);
}

TEST(DrawLayout, ARowWiderThanTheLeavesWrapsIntoLines) {
    // 3 levels, radix 40, 1600 hosts: 80 leaves, 80 spines, 400 cores.
    Fabric f = synth_fat_tree({.levels = 3, .radix = 40, .hosts = 1600});
    Analysis a = analyze(f);
    Layout l = layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names});
    ASSERT_EQ(l.rows[0].name, "core");
    std::set<double> core_y;
    double leaf_right = 0, right = 0;
    for (const Box& b : l.boxes) {
        if (b.kind != BoxKind::Switch) continue;
        if (b.row == 0) core_y.insert(b.y);
        if (b.row == 2) leaf_right = std::max(leaf_right, b.x + b.w);
        right = std::max(right, b.x + b.w);
    }
    EXPECT_EQ(core_y.size(), 5u);  // 400 cores in lines of 80
    EXPECT_DOUBLE_EQ(*core_y.begin(), l.rows[0].y);
    EXPECT_LE(right, leaf_right + 1);
    // The spine row starts below the core row's last line.
    EXPECT_GT(l.rows[1].y, *core_y.rbegin() + 22);
    EXPECT_LT(l.width, 8000);
}

TEST(DrawLayout, ASpineThatLostACableKeepsItsPlace) {
    // 12 spines over 12 leaves, every leaf to every spine; spine01 loses its cable to leaf01.
    Fabric f = synth_fat_tree({.levels = 2, .radix = 24, .hosts = 0});
    remove_cable(f, synth_node(f, "spine0001"), 1);
    Analysis a = analyze(f);
    Layout l = layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names});
    for (int i = 1; i < 12; ++i) {
        char x[16], y[16];
        std::snprintf(x, sizeof x, "spine%04d", i);
        std::snprintf(y, sizeof y, "spine%04d", i + 1);
        EXPECT_LT(box(l, BoxKind::Switch, x).x, box(l, BoxKind::Switch, y).x) << x;
    }
}

TEST(DrawPage, ASparklineScalesItsPointsToTheBox) {
    EXPECT_EQ(render_sparkline({.points = {{0, 3}, {60, 3}, {120, 57}}, .title = "3 -> 57"}),
              "<svg class=\"spark\" width=\"96\" height=\"20\" viewBox=\"0 0 96 20\" role=\"img\"><title>3 -&gt; 57</title>"
              "<polyline points=\"2.0,18.0 48.0,18.0 94.0,2.0\"/><circle cx=\"94.0\" cy=\"2.0\" r=\"2\"/></svg>");
}

TEST(DrawPage, AFlatSparklineRunsThroughTheMiddle) {
    EXPECT_EQ(render_sparkline({.points = {{0, 5}, {10, 5}}, .title = ""}, 50, 10),
              "<svg class=\"spark\" width=\"50\" height=\"10\" viewBox=\"0 0 50 10\" role=\"img\"><title></title>"
              "<polyline points=\"2.0,5.0 48.0,5.0\"/><circle cx=\"48.0\" cy=\"5.0\" r=\"2\"/></svg>");
}

TEST(DrawPage, AOnePointSparklineIsADotAtTheRight) {
    EXPECT_EQ(render_sparkline({.points = {{7, 1}}, .title = "1"}),
              "<svg class=\"spark\" width=\"96\" height=\"20\" viewBox=\"0 0 96 20\" role=\"img\"><title>1</title>"
              "<circle cx=\"94.0\" cy=\"10.0\" r=\"2\"/></svg>");
    EXPECT_EQ(render_sparkline({}), "");
}

TEST(DrawPage, TableRowsCarryTheirClassAndSparklineEscaped) {
    Page p;
    p.title = "x";
    Table t{.id = "counters", .caption = "Link error counters", .head = {"link", "trend"},
            .rows = {{"leaf<1>/5 -- spine01/1"}, {"leaf02/1"}}, .empty = "no counter data", .note = "3 more",
            .summary = "4 ports counted: 2 & more"};
    t.row_class = {"counter over", ""};
    t.sparks = {{.points = {{0, 0}, {1, 1}}, .title = "<b>"}};  // the second row has none
    p.tables.push_back(t);
    const std::string html = render_page(p);
    EXPECT_NE(html.find("<section id=\"counters\">\n<h2>Link error counters</h2>\n<p class=\"summary\">4 ports counted: 2 "
                        "&amp; more</p>\n<table>\n<tr><th>link</th><th>trend</th></tr>\n"
                        "<tr class=\"counter over\"><td>leaf&lt;1&gt;/5 -- spine01/1</td><td class=\"spark\"><svg "
                        "class=\"spark\""),
              std::string::npos)
        << html;
    EXPECT_NE(html.find("<title>&lt;b&gt;</title>"), std::string::npos);
    EXPECT_NE(html.find("<tr><td>leaf02/1</td><td class=\"spark\"></td></tr>\n</table>\n<p class=\"note\">3 more</p>"),
              std::string::npos);
    EXPECT_EQ(html.find("no counter data"), std::string::npos);
    EXPECT_EQ(html.find("<b>"), std::string::npos);
}

TEST(DrawPage, ASummaryWithoutRowsStandsInsteadOfNoData) {
    Page p;
    p.title = "x";
    p.tables.push_back({.id = "counters", .caption = "Link error counters", .head = {"link"}, .rows = {},
                        .empty = "no counter data", .summary = "16 ports counted, no errors"});
    const std::string html = render_page(p);
    EXPECT_NE(html.find("<section id=\"counters\">\n<h2>Link error counters</h2>\n<p class=\"summary\">16 ports counted, "
                        "no errors</p>\n</section>"),
              std::string::npos)
        << html;
    EXPECT_EQ(html.find("no counter data"), std::string::npos);
    EXPECT_EQ(html.find("<table>"), std::string::npos);
}

// Issue 20 item 9: a SHARP aggregation node is a CA but not a host: drawn in a box of its own
// ("1 SHARP node") and counted apart, so draw and analyze agree on the number of hosts.
TEST(DrawLayout, SharpAggregationNodesAreNotDrawnAsHosts) {
    Small s;
    const NodeId agg =
        s.f.add_node({.type = NodeType::CA, .guid = 0x900, .description = "Mellanox Technologies Aggregation Node"}, 1);
    s.f.connect(s.l1, 4, agg, 1);
    s.f.finalize();
    const Layout l = layout(s.input());
    EXPECT_EQ(l.hosts, 5);  // node01-05
    EXPECT_EQ(l.aggregation_nodes, 1);
    int groups_on_leaf01 = 0;
    for (const Box& b : l.boxes) {
        if (b.kind != BoxKind::HostGroup || b.node != s.l1) continue;
        ++groups_on_leaf01;
        if (b.aggregation) {
            EXPECT_EQ(b.hosts, 1);
            EXPECT_EQ(b.title.rfind("1 SHARP aggregation node on leaf01:", 0), 0u) << b.title;
        } else {
            EXPECT_EQ(b.hosts, 3);  // node01-03, not the aggregation node
        }
    }
    EXPECT_EQ(groups_on_leaf01, 2);
    const std::string svg = render_svg(l);
    EXPECT_NE(svg.find(">1 SHARP node</text>"), std::string::npos);
    EXPECT_NE(svg.find("data-aggregation-nodes=\"1\""), std::string::npos);
    EXPECT_NE(svg.find("5 hosts, 1 SHARP aggregation node, "), std::string::npos);
    EXPECT_EQ(analyze(s.f).compute_hosts.size(), static_cast<size_t>(l.hosts));  // draw and analyze agree
}

namespace {

// How tangled the switch tiers of a layout are: per pair of rows (by the upper row), the pairs of
// healthy switch-to-switch bundles between them that cross, and the summed horizontal run of
// those bundles in picture widths.
struct Tangle {
    std::map<int, long> crossings;
    double run = 0;
    long total() const {
        long n = 0;
        for (const auto& [row, c] : crossings) n += c;
        return n;
    }
};

Tangle tangle(const Layout& l) {
    std::vector<const Edge*> es;
    for (const Edge& e : l.edges)
        if (!e.fault && l.boxes[e.from].kind == BoxKind::Switch && l.boxes[e.to].kind == BoxKind::Switch) es.push_back(&e);
    Tangle t;
    for (size_t i = 0; i < es.size(); ++i) {
        const Box &a = l.boxes[es[i]->from], &b = l.boxes[es[i]->to];
        t.run += std::abs(a.cx() - b.cx()) / l.width;
        for (size_t j = i + 1; j < es.size(); ++j) {
            const Box &c = l.boxes[es[j]->from], &d = l.boxes[es[j]->to];
            if (a.row == c.row && b.row == d.row) t.crossings[a.row] += (a.cx() - c.cx()) * (b.cx() - d.cx()) < 0;
        }
    }
    return t;
}

}  // namespace

// Issue 20: "the DGX page is a hairball". A rail-optimized DGX SuperPOD (4 SUs of 20 DGX with 8
// HCAs, one leaf per rail and SU, 4 spines per rail, 16 cores, a SHARP aggregation node on every
// switch). With the leaves in name order (su1-leaf-r1..r8, su2-leaf-r1, ...) every spine's leaves
// spread over the whole width: measured before the leaves were regrouped, 2976 crossing pairs of
// leaf-spine bundles, 6336 in all, bundles running 76.1 picture widths (6116 wide: a column
// per leaf for its hosts and one for its SHARP node). Now the leaves of a rail sit together under
// their spines: 288 crossings between leaves and spines (the least there can be: a rail's 4 leaves
// and 4 spines are all cabled to each other, 36 per rail), 3648 in all (the other 3360 between
// spines and cores, where every core group reaches every rail), 43.9 widths of run.
TEST(DrawLayout, ARailOptimizedSuperPodIsDrawnRailByRail) {
    Fabric f = synth_superpod({.units = 4});
    Analysis a = analyze(f);
    const Layout l = layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names});
    ASSERT_EQ(l.rows.size(), 4u);
    EXPECT_EQ(l.switches, 80);
    EXPECT_EQ(l.hosts, 640);  // 79 DGX x 8 HCAs + 8 service nodes: each HCA is a CA, as analyze counts
    EXPECT_EQ(l.hosts, static_cast<int>(a.compute_hosts.size()));
    EXPECT_EQ(l.aggregation_nodes, 80);
    EXPECT_EQ(l.links, 2000);
    const SuperPodShape shape = superpod_shape({.units = 4});  // the generator's own counts agree
    EXPECT_EQ(shape.leaves + shape.spines + shape.cores, l.switches);
    EXPECT_EQ(shape.hcas + shape.service_nodes, l.hosts);
    EXPECT_EQ(shape.aggregation_nodes, l.aggregation_nodes);
    EXPECT_EQ(shape.links, static_cast<size_t>(l.links));
    int switches = 0, groups = 0, tags = 0;
    for (const Box& b : l.boxes) {
        switches += b.kind == BoxKind::Switch;
        if (b.kind == BoxKind::HostGroup && !b.aggregation) {
            ++groups;
            EXPECT_EQ(b.hosts, 20);
        }
        if (b.kind == BoxKind::HostGroup && b.aggregation) {
            ++tags;
            EXPECT_EQ(b.hosts, 1);
            // Hanging from its switch, not a column of its own.
            const Box& sw = *std::find_if(l.boxes.begin(), l.boxes.end(),
                                          [&](const Box& x) { return x.kind == BoxKind::Switch && x.node == b.node; });
            EXPECT_DOUBLE_EQ(b.x, sw.x);
            EXPECT_DOUBLE_EQ(b.y, sw.y + sw.h);
        }
    }
    EXPECT_EQ(switches, 80);
    EXPECT_EQ(groups, 32);
    EXPECT_EQ(tags, 80);
    EXPECT_EQ(l.edges.size(), 128u + 128 + 32);  // leaf-spine and spine-core bundles, host groups; no line to a tag

    const Tangle t = tangle(l);
    EXPECT_EQ(t.crossings.at(1), 288);  // spine row to leaf row: was 2976
    EXPECT_LE(t.total(), 3648);         // was 6336
    EXPECT_LT(t.run, 45);               // was 75.6 widths
    EXPECT_LT(l.width, 3400);           // was 6116

    // The four leaves of a rail side by side, su1..su4, their rail's spines over them.
    std::vector<const Box*> leaves;
    for (const Box& b : l.boxes)
        if (b.kind == BoxKind::Switch && b.row == 2) leaves.push_back(&b);
    std::sort(leaves.begin(), leaves.end(), [](auto* x, auto* y) { return x->x < y->x; });
    ASSERT_EQ(leaves.size(), 32u);
    for (int r = 1; r <= 8; ++r) {
        for (int su = 1; su <= 4; ++su)
            EXPECT_EQ(leaves[(r - 1) * 4 + su - 1]->name, "su" + std::to_string(su) + "-leaf-r" + std::to_string(r));
        const double lo = leaves[(r - 1) * 4]->x, hi = leaves[(r - 1) * 4 + 3]->x + leaves[(r - 1) * 4 + 3]->w;
        for (int j = 1; j <= 4; ++j) {
            const Box& sp = box(l, BoxKind::Switch, "spine-r" + std::to_string(r) + "-" + std::to_string(j));
            EXPECT_GE(sp.cx(), lo) << sp.name;
            EXPECT_LE(sp.cx(), hi) << sp.name;
        }
    }
    // Counts of crossing bundles do not sit on top of each other.
    std::vector<const Edge*> counted;
    for (const Edge& e : l.edges)
        if (e.cables > 1) counted.push_back(&e);
    for (size_t i = 0; i < counted.size(); ++i)
        for (size_t j = i + 1; j < counted.size(); ++j)
            EXPECT_FALSE(std::abs(counted[i]->label_x - counted[j]->label_x) < 12 &&
                         std::abs(counted[i]->label_y - counted[j]->label_y) < 10)
                << i << " " << j;
}

// Without a core the SuperPOD's two tiers are a classic fat-tree (every leaf to every spine): the
// regrouping finds nothing to regroup, the leaves stay in name order without gaps.
TEST(DrawLayout, ASuperPodWithoutRailGroupsKeepsItsLeavesInNameOrder) {
    Fabric f = synth_superpod({.units = 2, .core = false, .sharp = false, .service_slots = 0});
    Analysis a = analyze(f);
    const Layout l = layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names});
    EXPECT_EQ(l.switches, 16 + 10);
    EXPECT_EQ(l.hosts, 2 * 20 * 8);
    EXPECT_EQ(l.aggregation_nodes, 0);
    std::vector<const Box*> leaves;
    for (const Box& b : l.boxes)
        if (b.kind == BoxKind::Switch && b.row == 1) leaves.push_back(&b);
    std::sort(leaves.begin(), leaves.end(), [](auto* x, auto* y) { return x->x < y->x; });
    ASSERT_EQ(leaves.size(), 16u);
    for (size_t i = 0; i < leaves.size(); ++i) {
        EXPECT_EQ(leaves[i]->name, "su" + std::to_string(i / 8 + 1) + "-leaf-r" + std::to_string(i % 8 + 1));
        if (i > 0) {
            EXPECT_DOUBLE_EQ(leaves[i]->x - leaves[i - 1]->x, 94);  // one pitch: no group gap
        }
    }
}
