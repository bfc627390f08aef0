// The daemon's page and picture (GET /, /ui, /ui/fabric.svg) through handle_api(), without sockets.
#include <gtest/gtest.h>

#include "fixture.h"
#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/controller_state.h"
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
