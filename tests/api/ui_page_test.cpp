// The daemon's page and picture (GET /, /ui, /ui/fabric.svg) through handle_api(), without sockets.
#include <gtest/gtest.h>

#include "ibf/daemon_fixture.h"
#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/link_table.h"
#include "ibf/live_analysis.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"

using namespace ibf;
using namespace ibf::test;

namespace {

ApiResponse get(const ControllerState& st, const std::string& target, const std::string& auth = "",
                bool token_for_reads = false, const std::string& method = "GET") {
    ApiContext ctx;
    ctx.state = &st;
    ctx.now_ms = 1764468000000;
    ctx.token = "s3cret";
    ctx.token_for_reads = token_for_reads;
    return handle_api({.method = method, .target = target, .authorization = auth, .body = ""}, ctx);
}

size_t count(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

}  // namespace

TEST(ControllerUi, BeforeAnySnapshotThePageSaysSoInsteadOfLookingHealthy) {
    ControllerState st;
    for (const char* path : {"/", "/ui"}) {
        ApiResponse r = get(st, path);
        ASSERT_EQ(r.status, 200) << path;
        EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
        EXPECT_NE(r.body.find("<p class=\"nodata\">no fabric yet: no Subnet Manager has sent a snapshot</p>"),
                  std::string::npos);
        EXPECT_NE(r.body.find("<div class=\"banner\" id=\"warning\">"), std::string::npos);
        EXPECT_NE(r.body.find("<p class=\"nodata\" id=\"findings\">no data yet: not checked</p>"), std::string::npos);
        EXPECT_NE(r.body.find("no Subnet Manager has connected to this daemon yet"), std::string::npos);
        EXPECT_NE(r.body.find("<p class=\"nodata\">no counter data:"), std::string::npos);
    }
    ApiResponse svg = get(st, "/ui/fabric.svg");
    EXPECT_EQ(svg.status, 404);
    EXPECT_NE(svg.body.find("no fabric yet"), std::string::npos);
    EXPECT_EQ(get(st, "/ui", "", false, "POST").status, 405);
    EXPECT_EQ(get(st, "/ui/fabric.svg", "Bearer s3cret", false, "POST").status, 405);
    EXPECT_EQ(get(st, "/ui?x=1").status, 400);
}

TEST(ControllerUi, ReadsNeedTheTokenWhenTokenForReads) {
    ControllerState st;
    for (const char* path : {"/", "/ui", "/ui/fabric.svg"}) {
        EXPECT_EQ(get(st, path, "", true).status, 401) << path;
        EXPECT_EQ(get(st, path, "Bearer wrong", true).status, 401) << path;
    }
    EXPECT_EQ(get(st, "/ui", "Bearer s3cret", true).status, 200);
}

TEST(ControllerUi, ThePictureDrawsTheCurrentFindingsInRed) {
    ControllerState st;
    const int64_t t = 1764468000000 - 1000;  // a second before the page: fresh
    st.on_connect(1, "unix", t);
    st.on_hello(1, hello(kMasterGuid, SmState::Master), t);
    Fabric bad = small_fabric();
    cross_cables(bad, synth_node(bad, "leaf0001"), 1, 2);
    const Plan plan = plan_from_fabric(small_fabric(), "golden");
    auto job = st.on_snapshot(1, snapshot(bad, kMasterGuid, SmState::Master, 7), t);
    ASSERT_TRUE(job);
    CheckResult res;
    res.generation = job->generation;
    res.snapshot = job->snapshot;
    res.findings = check(plan, bad);
    res.findings_json = findings_to_json(res.findings);
    res.checked = true;
    ASSERT_EQ(res.findings.size(), 1u);  // the crossed pair is one swap
    ASSERT_TRUE(st.publish(std::move(res), 1764468000000));

    ApiResponse svg = get(st, "/ui/fabric.svg");
    ASSERT_EQ(svg.status, 200);
    EXPECT_EQ(svg.content_type, "image/svg+xml");
    EXPECT_EQ(svg.body.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.body.find("data-findings=\"1\" data-faults=\"1\""), std::string::npos);
    EXPECT_EQ(count(svg.body, "<g class=\"link fault\" data-kind=\"miswired\""), 1u);
    EXPECT_NE(svg.body.find("data-b=\"node00001/1\""), std::string::npos) << svg.body;
    EXPECT_NE(svg.body.find(">sweep 7 at 2025-11-30T02:00:00.000Z</text>"), std::string::npos);

    ApiResponse page = get(st, "/");
    ASSERT_EQ(page.status, 200);
    EXPECT_EQ(count(page.body, "<tr class=\"finding sev-error\" data-kind=\"miswired\">"), 1u);
    EXPECT_EQ(count(page.body, "<g class=\"link fault\" data-kind=\"miswired\""), 1u);
    EXPECT_NE(page.body.find("<td>MASTER</td>"), std::string::npos);
    EXPECT_NE(page.body.find("<span>sweep: <b>7</b></span>"), std::string::npos);
    EXPECT_EQ(page.body.find("<div class=\"banner\""), std::string::npos) << "fresh data: no banner";
}

namespace {

constexpr int64_t kPageMs = 1764468000000;
constexpr Guid kLeaf = 0x7cfe900301000001, kSpine = 0x7cfe900302000001, kHost = 0x0c42a10300000010;

// A master that sent small_fabric() (checked against its own golden plan: no findings, the link
// rows /metrics exports) a minute before the page.
void live_fabric(ControllerState& st) {
    const int64_t t = kPageMs - 60'000;
    st.on_connect(1, "unix", t);
    st.on_hello(1, hello(kMasterGuid, SmState::Master), t);
    const Fabric f = small_fabric();
    const Plan plan = plan_from_fabric(f, "golden");
    auto job = st.on_snapshot(1, snapshot(f, kMasterGuid, SmState::Master, 3), t);
    ASSERT_TRUE(job);
    CheckResult res;
    res.generation = job->generation;
    res.snapshot = job->snapshot;
    std::vector<LinkMatch> m;
    res.findings = check(plan, f, {}, &m);
    res.findings_json = findings_to_json(res.findings);
    res.checked = true;
    const LiveAnalysis la = analyze_live(*job->snapshot, f);
    res.links = std::make_shared<const LinkTable>(link_table(f, la.tier_of, &plan, m));
    ASSERT_TRUE(st.publish(std::move(res), t));
}

wire::PortCounterRow pc_row(Guid g, int port, std::initializer_list<std::pair<wire::PortCounter, uint64_t>> vals) {
    wire::PortCounterRow r;
    r.node_guid = g;
    r.port = static_cast<uint8_t>(port);
    for (auto [c, v] : vals) r.v[static_cast<size_t>(c)] = v;
    return r;
}

}  // namespace

TEST(ControllerUi, TheCountersPanelShowsTheLinksWithErrorsWorstFirst) {
    using C = wire::PortCounter;
    ControllerState st;
    live_fabric(st);
    const int64_t t = kPageMs - 60'000;
    ASSERT_TRUE(st.on_port_counters(
        1, {t, {pc_row(kLeaf, 5, {}), pc_row(kSpine, 1, {}), pc_row(kLeaf, 1, {}), pc_row(kHost, 1, {})}}, t));
    ASSERT_TRUE(st.on_port_counters(1,
                                    {kPageMs,
                                     {pc_row(kLeaf, 5, {{C::symbol_errors, 55}}), pc_row(kSpine, 1, {{C::symbol_errors, 2}}),
                                      pc_row(kHost, 1, {{C::link_downed, 1}, {C::xmit_data, 500}})}},
                                    kPageMs));
    ApiResponse r = get(st, "/ui");
    ASSERT_EQ(r.status, 200);
    const std::string& b = r.body;
    EXPECT_EQ(b.find("no counter data"), std::string::npos);
    EXPECT_NE(b.find("<section id=\"counters\">\n<h2>Link error counters</h2>\n<p class=\"summary\">4 ports counted: 2 of "
                     "2 links with errors; worst first (red: over its threshold, a port_errors finding)</p>\n<table>\n"
                     "<tr><th>link</th><th>cable</th><th>counter</th><th>total</th><th>+ within 1 h</th><th>per hour (trend)</th>"
                     "<th>by end</th><th>threshold per 1 h</th><th>trend</th></tr>\n"),
              std::string::npos)
        << b;
    // Both over their threshold; the symbol errors grew more: first. 57 in a minute: 3420 per hour.
    EXPECT_NE(b.find("<tr class=\"counter over\"><td>leaf0001/5 -- spine0001/1</td><td></td><td>SymbolErrorCounter</td>"
                     "<td>57</td><td>+57</td><td>-</td><td>leaf0001/5 55 (+55), spine0001/1 2 (+2)</td><td>&gt; 10</td>"
                     "<td class=\"spark\"><svg class=\"spark\" width=\"96\" height=\"20\" viewBox=\"0 0 96 20\" role=\"img\">"
                     "<title>SymbolErrorCounter 0 -&gt; 57 over 2 readings, 2025-11-30T01:59:00.000Z .. "
                     "2025-11-30T02:00:00.000Z</title><polyline points=\"2.0,18.0 94.0,2.0\"/>"),
              std::string::npos);
    EXPECT_NE(b.find("<tr class=\"counter over\"><td>leaf0001/1 -- node00001/1</td><td></td><td>LinkDownedCounter</td>"
                     "<td>1</td><td>+1</td><td>-</td><td>node00001/1 1 (+1)</td><td>any increase</td>"),
              std::string::npos);
    EXPECT_LT(b.find("<td>SymbolErrorCounter</td>"), b.find("<td>LinkDownedCounter</td>"));
    EXPECT_EQ(count(b, "<tr class=\"counter"), 2u);
    EXPECT_EQ(b.find("PortXmitData"), std::string::npos);
    // The same growth is a port_errors finding per link in the findings table above.
    EXPECT_EQ(count(b, "<tr class=\"finding sev-warning\" data-kind=\"port_errors\">"), 2u);
}

TEST(ControllerUi, CountedPortsWithoutErrorsAreOneLine) {
    ControllerState st;
    live_fabric(st);
    ASSERT_TRUE(st.on_port_counters(1, {kPageMs, {pc_row(kLeaf, 5, {}), pc_row(kSpine, 1, {})}}, kPageMs));
    ApiResponse r = get(st, "/");
    ASSERT_EQ(r.status, 200);
    EXPECT_NE(r.body.find("<section id=\"counters\">\n<h2>Link error counters</h2>\n<p class=\"summary\">2 ports counted, "
                          "no errors</p>\n</section>"),
              std::string::npos)
        << r.body;
    EXPECT_EQ(r.body.find("no counter data"), std::string::npos);
}

TEST(ControllerUi, AFabricWithoutCounterDataSaysWhy) {
    ControllerState st;
    live_fabric(st);
    ApiResponse r = get(st, "/ui");
    EXPECT_NE(r.body.find("<p class=\"nodata\">no counter data: this daemon has received no port counters from the "
                          "master&#39;s plugin (OpenSM&#39;s perfmgr is off: `perfmgr TRUE` in opensm.conf, or has not "
                          "read the ports yet: one reading per perfmgr_sweep_time_s);"),
              std::string::npos)
        << r.body;
}
