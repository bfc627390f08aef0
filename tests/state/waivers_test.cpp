// The daemon's waivers (config `waivers:`): waived findings leave /api/v1/findings' findings, the
// analysis' findings and the active metrics for "waived"; an expired waiver is a finding. And the
// live analysis with a plan: what the plan declares is no anomaly.
#include <gtest/gtest.h>

#include <set>

#include "ibf/daemon_fixture.h"
#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/daemon_config.h"
#include "ibf/error.h"
#include "ibf/live_analysis.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"
#include "ibf/waivers.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

constexpr int64_t kNow = 1798761600000;  // 2027-01-01T00:00:00Z

ApiResponse get(const ControllerState& st, const std::string& target) {
    ApiContext ctx;
    ctx.state = &st;
    ctx.now_ms = kNow;
    return handle_api({.method = "GET", .target = target, .authorization = "", .body = ""}, ctx);
}

// A fabric with a host on a spine (host_misplaced) and a check finding, published.
void publish(ControllerState& st, const std::vector<Link>& declared = {}, const std::vector<Finding>& more = {}) {
    Fabric f = small_fabric();
    add_host(f, "storage01 mlx5_0", 0xc010, synth_node(f, "spine0001"), 5);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master), 10));
    auto job = st.on_snapshot(1, snapshot(f, kMasterGuid, SmState::Master, 3), 20);
    ASSERT_TRUE(job);
    CheckResult r;
    r.generation = job->generation;
    r.snapshot = job->snapshot;
    Finding mis;
    mis.kind = FindingKind::miswired;
    mis.a = {"leaf0001", 0x1, 3};
    mis.b = {"spine0002", 0x2, 1};
    mis.label = "C-0117";
    mis.message = "cable at leaf0001/3 goes to spine0002/1";
    r.findings = {mis};
    r.findings.insert(r.findings.end(), more.begin(), more.end());
    r.findings_json = findings_to_json(r.findings);
    r.checked = true;
    r.analysis = std::make_shared<const LiveAnalysis>(analyze_live(*job->snapshot, job->snapshot->fabric, {}, declared));
    ASSERT_TRUE(st.publish(std::move(r), 30));
}

TEST(DaemonWaivers, WaivedFindingsAreListedApartAndNotCounted) {
    ControllerState st;
    publish(st);
    ASSERT_EQ(st.analysis()->findings.size(), 1u);
    EXPECT_EQ(st.analysis()->findings[0].kind, FindingKind::host_misplaced);
    json before = json::parse(get(st, "/api/v1/findings").body);
    EXPECT_FALSE(before.contains("waived"));  // no waiver file: the object as before
    EXPECT_EQ(before["findings"].size(), 1u);

    st.set_waivers(std::make_shared<const WaiverSet>(parse_waivers(
        "waivers:\n"
        "  - labels: [C-0117]\n    reason: crossed for the burn-in\n    expires: 2027-06-30\n"
        "  - kind: host_misplaced\n    ends: [storage01]\n    reason: storage on the spines by design\n"
        "  - kind: mtu_mismatch\n    reason: old switch\n    expires: 2026-12-31\n",
        "/etc/ibfabric/waivers.yaml")));
    ASSERT_EQ(st.findings_at(kNow).size(), 1u);  // the expired waiver
    EXPECT_EQ(st.findings_at(kNow)[0].kind, FindingKind::waiver_expired);
    EXPECT_EQ(st.findings_at(kNow)[0].a.name, "/etc/ibfabric/waivers.yaml:8");
    EXPECT_TRUE(st.analysis_findings_at(kNow).empty());

    json j = json::parse(get(st, "/api/v1/findings").body);
    EXPECT_EQ(j["summary"], json::parse(R"({"waiver_expired": 1})"));
    ASSERT_EQ(j["waived"].size(), 1u);
    EXPECT_EQ(j["waived"][0]["kind"], "miswired");
    EXPECT_EQ(j["waived"][0]["waiver"]["where"], "/etc/ibfabric/waivers.yaml:2");
    EXPECT_EQ(j["waived"][0]["waiver"]["reason"], "crossed for the burn-in");

    json a = json::parse(get(st, "/api/v1/analysis").body);
    EXPECT_EQ(a["summary"], json::object());
    EXPECT_EQ(a["findings"], json::array());
    ASSERT_EQ(a["waived"].size(), 1u);
    EXPECT_EQ(a["waived"][0]["kind"], "host_misplaced");

    json fabric = json::parse(get(st, "/api/v1/fabric").body);
    EXPECT_EQ(fabric["findings"], 1);

    const std::string m = get(st, "/metrics").body;
    EXPECT_NE(m.find("ibfabric_findings{kind=\"miswired\",severity=\"error\",role=\"active\"} 0"), std::string::npos) << m;
    EXPECT_NE(m.find("ibfabric_findings{kind=\"waiver_expired\",severity=\"warning\",role=\"active\"} 1"), std::string::npos);
    EXPECT_NE(m.find("ibfabric_analysis_findings{kind=\"host_misplaced\",severity=\"warning\",role=\"active\"} 0"), std::string::npos);
    EXPECT_NE(m.find("ibfabric_findings_waived{role=\"active\"} 2"), std::string::npos);
}

// `ibfabric maintenance add` writes the waiver file's maintenance: section; the daemon reads it with
// the waivers (start, reload): an absent host in maintenance leaves the active findings.
TEST(DaemonWaivers, AnAbsentHostInMaintenanceIsNoActiveFindingUntilItsDate) {
    Finding gone;
    gone.kind = FindingKind::host_absent;
    gone.severity = Severity::warning;
    gone.a = {"node007", 0, 0};
    gone.message = "host node007 mlx5_0 is absent (powered off or drained?)";
    ControllerState st;
    publish(st, {}, {gone});
    ASSERT_EQ(st.findings_at(kNow).size(), 2u);
    st.set_waivers(std::make_shared<const WaiverSet>(parse_waivers(
        "maintenance:\n  - hosts: \"node[001-008]\"\n    until: 2027-01-31\n    reason: rack 4 power work\n",
        "/etc/ibfabric/waivers.yaml")));
    ASSERT_EQ(st.findings_at(kNow).size(), 1u);
    EXPECT_EQ(st.findings_at(kNow)[0].kind, FindingKind::miswired);  // a fault, not an absence: still counts
    const json j = json::parse(get(st, "/api/v1/findings").body);
    EXPECT_EQ(j["summary"], json::parse(R"({"miswired": 1})"));
    ASSERT_EQ(j["waived"].size(), 1u);
    EXPECT_EQ(j["waived"][0]["kind"], "host_absent");
    EXPECT_EQ(j["waived"][0]["waiver"]["maintenance"], true);
    EXPECT_EQ(j["waived"][0]["waiver"]["expires"], "2027-01-31");
    // 2027-02-01: the maintenance ended; the host counts again, and the entry says so.
    const auto later = st.findings_at(kNow + 31 * 86'400'000LL);
    ASSERT_EQ(later.size(), 3u);
    std::multiset<FindingKind> kinds;
    for (const Finding& f : later) kinds.insert(f.kind);
    EXPECT_EQ(kinds, (std::multiset<FindingKind>{FindingKind::miswired, FindingKind::waiver_expired, FindingKind::host_absent}));
}

TEST(DaemonWaivers, ConfigKeyIsAPathRelativeToTheConfig) {
    const DaemonConfig c = parse_daemon_config("waivers: waivers.yaml\n", "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_EQ(c.waivers, "/etc/ibfabric/waivers.yaml");
    EXPECT_THROW(parse_daemon_config("waiver: w.yaml\n", "/etc/ibfabric/ibfabricd.yaml"), InputError);
}

TEST(LiveAnalysisWithPlan, WhatThePlanDeclaresIsNoWarning) {
    // The plan puts storage01 on spine0001/5: the check matches that link, the analysis leaves it.
    Fabric f = small_fabric();
    add_host(f, "storage01 mlx5_0", 0xc010, synth_node(f, "spine0001"), 5);
    Plan p = parse_plan_yaml("version: 1\ncables:\n  - {a: spine0001/5, b: storage01/1}\n", "plan.yaml");
    p.scope.ignore_hosts = true;
    std::vector<LinkMatch> m;
    check(p, f, {}, &m);
    ASSERT_EQ(m.size(), 1u);
    std::vector<Link> declared{{m[0].a, static_cast<uint8_t>(m[0].pa), m[0].b, static_cast<uint8_t>(m[0].pb)}};
    ControllerState st;
    publish(st, declared);
    EXPECT_TRUE(st.analysis()->findings.empty());
    ControllerState bare;
    publish(bare);
    EXPECT_EQ(bare.analysis()->findings.size(), 1u);
}

}  // namespace
