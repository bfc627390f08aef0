// /metrics and the no-data path without sockets: exact samples for per-link series, SM state,
// timestamps, staleness and flapping; naming rules checked over the whole family table.
#include <gtest/gtest.h>

#include <ctime>
#include <cstdio>
#include <map>
#include <set>

#include "ibf/counter_rows.h"
#include "ibf/daemon_fixture.h"
#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/dumps.h"
#include "ibf/fabric_role.h"
#include "ibf/gzip.h"
#include "ibf/ha_engine.h"
#include "ibf/live_analysis.h"
#include "ibf/metrics.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

constexpr int64_t T0 = 1764468000000;  // 2025-11-30T02:00:00.000Z
constexpr ConnId kConn = 1;

// A daemon's state fed by hand: one master plugin, sweeps checked against small_fabric()'s golden plan.
struct Live {
    ControllerState st;
    Plan plan = load_plan(write_ibnetdiscover(small_fabric()), "golden.ibnetdiscover");

    Live() {
        st.on_connect(kConn, "unix", T0);
        st.on_hello(kConn, hello(kMasterGuid, SmState::Master), T0);
    }
    void sweep(const Fabric& f, uint64_t seq, int64_t now, ConnId c = kConn, Guid sm = kMasterGuid) {
        auto job = st.on_snapshot(c, snapshot(f, sm, SmState::Master, seq), now);
        ASSERT_TRUE(job.has_value());
        CheckResult r;
        r.generation = job->generation;
        r.snapshot = job->snapshot;
        std::vector<LinkMatch> m;
        r.findings = check(plan, f, {}, &m);
        r.findings_json = findings_to_json(r.findings);
        r.checked = true;
        const LiveAnalysis la = analyze_live(*job->snapshot, f);
        LinkTable t = link_table(f, la.tier_of, &plan, m);
        mark_deviating_links(t, r.findings);  // as the check thread does (pipeline.cpp)
        r.links = std::make_shared<const LinkTable>(std::move(t));
        st.publish(std::move(r), now);
    }
    // Every link (metrics.per_link: all); the default, deviating links only, is metrics_default().
    std::string metrics(int64_t now) const { return metrics_text({.state = &st, .now_ms = now, .all_links = true}); }
    std::string metrics_default(int64_t now) const { return metrics_text({.state = &st, .now_ms = now}); }
    json findings(int64_t now) const { return findings_response_json(st, now, true); }
};

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

const std::string kLeafSpine =
    "local_guid=\"0x7cfe900301000001\",local_name=\"leaf0001\",local_port=\"5\",remote_guid=\"0x7cfe900302000001\","
    "remote_name=\"spine0001\",remote_port=\"1\",tier=\"leaf-spine\"";
// The role label of the fabric gauges of a daemon without `ha:` (always active).
const std::string kActive = "role=\"active\"";
const std::string kLeafHost =
    "local_guid=\"0x7cfe900301000001\",local_name=\"leaf0001\",local_port=\"1\",remote_guid=\"0x0c42a10300000010\","
    "remote_name=\"node00001\",remote_port=\"1\",tier=\"host-leaf\"";

}  // namespace

TEST(Metrics, PerLinkSeriesAreLabelledLikeInfinibandExporterWithValuesInBaseUnits) {
    Live l;
    Fabric f = small_fabric();
    set_link_rate(f, synth_node(f, "leaf0001"), 1, Rate{Width::X1, Speed::HDR});  // a degraded host link
    l.sweep(f, 7, T0 + 1000);
    const std::string m = l.metrics(T0 + 2000);
    EXPECT_TRUE(has_line(m, "ibfabric_link_state{" + kLeafSpine + "," + kActive + "} 4")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_link_width_lanes{" + kLeafSpine + "," + kActive + "} 4"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_speed_bytes_per_second{" + kLeafSpine + "," + kActive + "} 6250000000"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_rate_bytes_per_second{" + kLeafSpine + "," + kActive + "} 2.5e+10"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_planned_rate_bytes_per_second{" + kLeafSpine + "," + kActive + "} 2.5e+10"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_mtu_bytes{" + kLeafSpine + "," + kActive + "} 4096"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_flapping{" + kLeafSpine + "," + kActive + "} 0"));
    // The host link: local is the switch end; planned 4xHDR, running 1xHDR.
    EXPECT_TRUE(has_line(m, "ibfabric_link_width_lanes{" + kLeafHost + "," + kActive + "} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_rate_bytes_per_second{" + kLeafHost + "," + kActive + "} 6250000000"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_planned_rate_bytes_per_second{" + kLeafHost + "," + kActive + "} 2.5e+10"));
    EXPECT_TRUE(has_line(m, "ibfabric_findings{kind=\"rate_mismatch\",severity=\"error\",role=\"active\"} 1"));
    // One series per link and family.
    size_t n = 0;
    for (size_t p = m.find("\nibfabric_link_rate_bytes_per_second{"); p != std::string::npos;
         p = m.find("\nibfabric_link_rate_bytes_per_second{", p + 1))
        ++n;
    EXPECT_EQ(n, f.link_count());
}

size_t count_of(const std::string& m, const std::string& prefix) {
    size_t n = 0;
    for (size_t p = m.find("\n" + prefix); p != std::string::npos; p = m.find("\n" + prefix, p + 1)) ++n;
    return n;
}

// Issue 18 item 5: by default (metrics.per_link: deviating) only the links that deviate have
// per-link series; every link is counted in the per-tier and per-switch aggregates.
TEST(Metrics, ByDefaultOnlyDeviatingLinksHavePerLinkSeriesAndTiersAndSwitchesAreAggregated) {
    Live l;
    Fabric f = small_fabric();
    set_link_rate(f, synth_node(f, "leaf0001"), 1, Rate{Width::X1, Speed::HDR});  // below plan: deviates
    l.sweep(f, 7, T0 + 1000);
    constexpr Guid kLeaf = 0x7cfe900301000001, kSpine = 0x7cfe900302000001;
    auto row = [](Guid g, int p, uint64_t symbol, uint64_t xmit_data) {
        wire::PortCounterRow r;
        r.node_guid = g;
        r.port = static_cast<uint8_t>(p);
        r.v[static_cast<size_t>(wire::PortCounter::symbol_errors)] = symbol;
        r.v[static_cast<size_t>(wire::PortCounter::xmit_data)] = xmit_data;
        return r;
    };
    int64_t t = T0 + 1000;
    // leaf0001/5 -- spine0001/1 gets symbol errors; leaf0001/6 only traffic.
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(kLeaf, 5, 0, 0), row(kSpine, 1, 0, 0), row(kLeaf, 6, 0, 0)}}, t));
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(kLeaf, 5, 3, 10), row(kSpine, 1, 0, 0), row(kLeaf, 6, 0, 1000)}}, t));
    const std::string m = l.metrics_default(t);
    // The degraded host link, and nothing else, in the per-link state families.
    EXPECT_EQ(count_of(m, "ibfabric_link_rate_bytes_per_second{"), 1u) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_link_rate_bytes_per_second{" + kLeafHost + "," + kActive + "} 6250000000"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_planned_rate_bytes_per_second{" + kLeafHost + "," + kActive + "} 2.5e+10"));
    EXPECT_EQ(m.find("ibfabric_link_state{" + kLeafSpine), std::string::npos);
    EXPECT_EQ(count_of(m, "ibfabric_link_flapping{"), 0u);
    // Counters: the link with errors has all its counter series; the one with traffic only has none.
    EXPECT_TRUE(has_line(m, "ibfabric_link_symbol_errors_total{" + kLeafSpine + "} 3"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_downed_total{" + kLeafSpine + "} 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_xmit_bytes_total{" + kLeafSpine + "} 40"));
    EXPECT_EQ(count_of(m, "ibfabric_link_xmit_bytes_total{"), 1u);
    // Aggregates over every link: 8 host links and 8 leaf-spine cables in small_fabric().
    EXPECT_TRUE(has_line(m, "ibfabric_tier_links_deviating{tier=\"host-leaf\"," + kActive + "} 1")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_tier_links_deviating{tier=\"leaf-spine\"," + kActive + "} 0"));
    size_t tier_links = 0;
    for (const LinkRow& r : l.st.links()->rows) tier_links += r.tier == "leaf-spine";
    EXPECT_TRUE(has_line(m, "ibfabric_tier_links{tier=\"leaf-spine\"," + kActive + "} " + std::to_string(tier_links)));
    EXPECT_TRUE(has_line(m, "ibfabric_tier_perfmgr_total{tier=\"leaf-spine\",counter=\"symbol_errors\"} 3"));
    EXPECT_TRUE(has_line(m, "ibfabric_tier_perfmgr_total{tier=\"leaf-spine\",counter=\"xmit_data\"} 4040"));
    const std::string leaf = "switch_guid=\"0x7cfe900301000001\",switch_name=\"leaf0001\"";
    EXPECT_TRUE(has_line(m, "ibfabric_switch_link_errors_total{" + leaf + "} 3"));
    EXPECT_TRUE(has_line(m, "ibfabric_switch_xmit_bytes_total{" + leaf + "} 4040"));
    // metrics.per_link: all has every link.
    EXPECT_EQ(count_of(l.metrics(t), "ibfabric_link_rate_bytes_per_second{"), f.link_count());
    EXPECT_LT(m.size(), l.metrics(t).size());
}

// GET /metrics with Accept-Encoding: gzip, and the cached answer shared by the scrapes of a second
// (one immutable buffer, rendered once) until the state changes.
TEST(Metrics, TheCachedAnswerIsSharedAndGzippedOnRequest) {
    Live l;
    l.sweep(small_fabric(), 1, T0);
    MetricsCache cache;
    ApiContext ctx{.state = &l.st, .now_ms = T0 + 10};
    ctx.metrics_cache = &cache;
    const ApiResponse a = handle_api({.method = "GET", .target = "/metrics"}, ctx);
    ctx.now_ms = T0 + 500;
    const ApiResponse b = handle_api({.method = "GET", .target = "/metrics"}, ctx);
    ASSERT_TRUE(a.shared_body && b.shared_body);
    EXPECT_EQ(a.shared_body.get(), b.shared_body.get());  // the same bytes, not a copy
    EXPECT_EQ(cache.renders, 1u);
    EXPECT_EQ(*a.shared_body, l.metrics_default(T0 + 10));
    const ApiResponse z = handle_api({.method = "GET", .target = "/metrics", .accept_gzip = true}, ctx);
    EXPECT_EQ(z.content_encoding, "gzip");
    EXPECT_EQ(gunzip(z.bytes()), *a.shared_body);
    EXPECT_LT(z.bytes().size(), a.bytes().size());
    // A message changes the state: rendered again.
    l.st.on_heartbeat(kConn, wire::Heartbeat{.sm = hello(kMasterGuid, SmState::Master).sm}, T0 + 600);
    ctx.now_ms = T0 + 600;
    const ApiResponse c = handle_api({.method = "GET", .target = "/metrics"}, ctx);
    EXPECT_NE(c.shared_body.get(), a.shared_body.get());
    EXPECT_EQ(cache.renders, 2u);
    // And after max_age_ms even without a change (the time-dependent gauges).
    ctx.now_ms = T0 + 600 + cache.max_age_ms;
    handle_api({.method = "GET", .target = "/metrics"}, ctx);
    EXPECT_EQ(cache.renders, 3u);
}

TEST(Metrics, AcceptEncodingGzipFollowsQValues) {
    EXPECT_TRUE(accepts_gzip("gzip"));
    EXPECT_TRUE(accepts_gzip("deflate, gzip;q=0.5"));
    EXPECT_TRUE(accepts_gzip("*"));
    EXPECT_FALSE(accepts_gzip("gzip;q=0"));
    EXPECT_FALSE(accepts_gzip("gzip;q=0.000, deflate"));
    EXPECT_FALSE(accepts_gzip("identity"));
    EXPECT_FALSE(accepts_gzip(""));
}

TEST(Metrics, SmStateIsOneNumericSeriesPerSmAndADisconnectedSmIsNotMaster) {
    Live l;
    l.st.on_connect(2, "unix", T0);
    l.st.on_hello(2, hello(kStandbyGuid, SmState::Standby, 2, 10), T0);
    std::string m = l.metrics(T0);
    EXPECT_TRUE(has_line(m, "ibfabric_sm_state{sm=\"0x0002c90300000001\"} 3")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_sm_state{sm=\"0x0002c90300000002\"} 2"));
    EXPECT_TRUE(has_line(m, "ibfabric_sm_connected{sm=\"0x0002c90300000001\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_sm_priority{sm=\"0x0002c90300000002\"} 10"));
    l.st.on_disconnect(kConn, T0 + 1000);
    m = l.metrics(T0 + 1000);
    EXPECT_TRUE(has_line(m, "ibfabric_sm_state{sm=\"0x0002c90300000001\"} 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_sm_connected{sm=\"0x0002c90300000001\"} 0"));
    EXPECT_EQ(m.find("state=\""), std::string::npos);  // never a state label
}

TEST(Metrics, LastSweepSeqNeverGoesBackOnFailover) {
    Live l;
    const Fabric f = small_fabric();
    l.sweep(f, 41, T0 + 1000);
    EXPECT_TRUE(has_line(l.metrics(T0 + 1000), "ibfabric_last_sweep_seq 1"));
    // The master dies; the standby takes over with its own counter at 1.
    l.st.on_disconnect(kConn, T0 + 2000);
    l.st.on_connect(2, "unix", T0 + 2000);
    l.st.on_hello(2, hello(kStandbyGuid, SmState::Master, 2), T0 + 2000);
    l.sweep(f, 1, T0 + 3000, 2, kStandbyGuid);
    const std::string m = l.metrics(T0 + 3000);
    EXPECT_TRUE(has_line(m, "ibfabric_last_sweep_seq 2")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_sm_sweep_seq{sm=\"0x0002c90300000001\"} 41"));
    EXPECT_TRUE(has_line(m, "ibfabric_sm_sweep_seq{sm=\"0x0002c90300000002\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_sm_state{sm=\"0x0002c90300000002\"} 3"));
    EXPECT_TRUE(has_line(m, "ibfabric_sm_state{sm=\"0x0002c90300000001\"} 0"));
}

TEST(Metrics, NoDataBeforeTheFirstFindingsThenFreshThenStale) {
    Live l;
    std::string m = l.metrics(T0);
    EXPECT_TRUE(has_line(m, "ibfabric_data_fresh{role=\"active\"} 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_data_timestamp_seconds{role=\"active\"} 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_last_sweep_timestamp_seconds{role=\"active\"} 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_stale_after_seconds 30"));
    json j = l.findings(T0);
    EXPECT_EQ(j["data_state"], "no_data");
    EXPECT_EQ(j["data_message"],
              "no data: no snapshot received yet (is OpenSM running with the ibfabric plugin? docs/plugin.md)");
    EXPECT_EQ(j["checked"], true);  // a topology is configured: no data is not "not checked"
    EXPECT_EQ(findings_response_json(l.st, T0, false)["checked"], false);

    l.sweep(small_fabric(), 5, T0 + 1234);
    m = l.metrics(T0 + 2000);
    EXPECT_TRUE(has_line(m, "ibfabric_data_fresh{role=\"active\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_data_timestamp_seconds{role=\"active\"} 1764468001.234"));
    EXPECT_TRUE(has_line(m, "ibfabric_last_sweep_timestamp_seconds{role=\"active\"} 1764468005.000"));  // the plugin's copy time
    EXPECT_TRUE(has_line(m, "ibfabric_last_check_timestamp_seconds 1764468001.234"));
    j = l.findings(T0 + 2000);
    EXPECT_EQ(j["data_state"], "fresh");
    EXPECT_TRUE(j["data_message"].is_null());
    EXPECT_EQ(j["data_as_of"], "2025-11-30T02:00:01.234Z");

    // A heartbeat naming the same sweep confirms the fabric; one naming another sweep does not.
    wire::Heartbeat hb;
    hb.sm = SmInfo{.port_guid = kMasterGuid, .lid = 1, .priority = 15, .state = SmState::Master, .act_count = 9};
    hb.sweep_seq = 5;
    l.st.on_heartbeat(kConn, hb, T0 + 20000);
    EXPECT_EQ(l.findings(T0 + 45000)["data_state"], "fresh");
    hb.sweep_seq = 6;
    l.st.on_heartbeat(kConn, hb, T0 + 40000);
    EXPECT_EQ(l.findings(T0 + 50000)["data_state"], "fresh");  // as of T0 + 20 s
    j = l.findings(T0 + 50001);
    EXPECT_EQ(j["data_state"], "stale");
    EXPECT_EQ(j["data_message"],
              "stale: the fabric (sweep 5 from SM 0x0002c90300000001) was last confirmed 30 s ago "
              "(health.stale_after_s 30): is that SM and its plugin still running and connected?");
    EXPECT_TRUE(has_line(l.metrics(T0 + 50001), "ibfabric_data_fresh{role=\"active\"} 0"));
}

TEST(Metrics, AFlappingLinkIsOneFindingInTheApiAndTheMetrics) {
    Live l;
    l.st.configure({.stale_after_ms = 30000, .flap = {.threshold = 3, .window_ms = 600000, .quiet_ms = 1800000}});
    const Fabric up = small_fabric();
    Fabric down = up;
    remove_cable(down, synth_node(down, "leaf0001"), 5);
    int64_t t = T0;
    uint64_t seq = 1;
    l.sweep(up, seq++, t);
    for (int i = 0; i < 3; ++i) {
        l.sweep(down, seq++, t += 1000);
        l.sweep(up, seq++, t += 1000);
    }
    const json j = l.findings(t);
    ASSERT_EQ(j["summary"]["link_flapping"], 1) << j.dump(2);
    json fl;
    for (const json& f : j["findings"])
        if (f["kind"] == "link_flapping") fl = f;
    EXPECT_EQ(fl["severity"], "warning");
    EXPECT_EQ(fl["a"]["name"], "leaf0001");
    EXPECT_EQ(fl["a"]["port"], 5);
    EXPECT_EQ(fl["b"]["name"], "spine0001");
    EXPECT_EQ(fl["b"]["port"], 1);
    EXPECT_EQ(fl["actual"], "3 flaps, first 2025-11-30T02:00:02.000Z, last 2025-11-30T02:00:06.000Z");
    EXPECT_EQ(fl["message"],
              "leaf0001/5 -- spine0001/1 went down and up 3 times from 2025-11-30T02:00:02.000Z to "
              "2025-11-30T02:00:06.000Z; reseat the cable and clean the optics, replace the cable if it keeps flapping");
    const std::string m = l.metrics(t);
    EXPECT_TRUE(has_line(m, "ibfabric_findings{kind=\"link_flapping\",severity=\"warning\",role=\"active\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_flapping{" + kLeafSpine + "," + kActive + "} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_links_flapping{role=\"active\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_flaps_total 3"));
    // After the quiet window it is gone.
    EXPECT_EQ(l.findings(t + 1800000)["summary"].count("link_flapping"), 0u);
    EXPECT_TRUE(has_line(l.metrics(t + 1800000), "ibfabric_findings{kind=\"link_flapping\",severity=\"warning\",role=\"active\"} 0"));
}

TEST(Metrics, PortCountersFromTheMasterAreLinkCountersAndAPortErrorsFinding) {
    Live l;
    int64_t t = T0;
    l.sweep(small_fabric(), 1, t);
    constexpr Guid kLeaf = 0x7cfe900301000001, kSpine = 0x7cfe900302000001;
    using C = wire::PortCounter;
    auto row = [](Guid g, int p, uint64_t symbol, uint64_t xmit_data) {
        wire::PortCounterRow r;
        r.node_guid = g;
        r.port = static_cast<uint8_t>(p);
        r.v[static_cast<size_t>(C::symbol_errors)] = symbol;
        r.v[static_cast<size_t>(C::xmit_data)] = xmit_data;
        return r;
    };
    // The first perfmgr sweep is the baseline; the second brings +55 at the leaf and +2 at the spine.
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(kLeaf, 5, 0, 0), row(kSpine, 1, 0, 0)}}, t));
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(kLeaf, 5, 55, 100), row(kSpine, 1, 2, 7)}}, t));
    // A standby's view of the same ports is ignored.
    l.st.on_connect(2, "unix", t);
    l.st.on_hello(2, hello(kStandbyGuid, SmState::Standby), t);
    ASSERT_TRUE(l.st.on_port_counters(2, {t, {row(kLeaf, 5, 9999, 0)}}, t));
    EXPECT_EQ(l.st.port_counter_rows_ignored(), 1u);

    const json j = l.findings(t);
    ASSERT_EQ(j["summary"]["port_errors"], 1) << j.dump(2);
    json pe;
    for (const json& f : j["findings"])
        if (f["kind"] == "port_errors") pe = f;
    EXPECT_EQ(pe["severity"], "warning");
    EXPECT_EQ(pe["a"]["name"], "leaf0001");
    EXPECT_EQ(pe["a"]["port"], 5);
    EXPECT_EQ(pe["b"]["name"], "spine0001");
    EXPECT_EQ(pe["b"]["port"], 1);
    EXPECT_EQ(pe["expected"], "SymbolErrorCounter +10 or less per 1 h");
    EXPECT_EQ(pe["actual"], "+55 at leaf0001/5 within 1 h (2025-11-30T02:00:02.000Z .. 2025-11-30T02:00:02.000Z)");
    EXPECT_EQ(pe["message"],
              "leaf0001/5 -- spine0001/1: SymbolErrorCounter +55 at leaf0001/5 within 1 h (threshold 10); clean or "
              "reseat the optics; replace the cable if it persists");
    const std::string m = l.metrics(t);
    EXPECT_TRUE(has_line(m, "ibfabric_findings{kind=\"port_errors\",severity=\"warning\",role=\"active\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_symbol_errors_total{" + kLeafSpine + "} 57")) << m;  // both ends
    EXPECT_TRUE(has_line(m, "ibfabric_link_xmit_bytes_total{" + kLeafSpine + "} 400"));         // local end, x4
    EXPECT_TRUE(has_line(m, "ibfabric_link_downed_total{" + kLeafSpine + "} 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_rows_total{source=\"master\"} 4"));
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_rows_total{source=\"other\"} 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_ingest_messages_total{type=\"PortCounters\"} 3"));
    // Links without counter data have no counter series.
    EXPECT_EQ(m.find("ibfabric_link_symbol_errors_total{local_guid=\"0x7cfe900301000001\",local_name=\"leaf0001\",local_port=\"6\""),
              std::string::npos);
    // An hour after the growth the finding is gone; the totals stay.
    EXPECT_EQ(l.findings(t + 3600000)["summary"].count("port_errors"), 0u);
    EXPECT_TRUE(has_line(l.metrics(t + 3600000), "ibfabric_link_symbol_errors_total{" + kLeafSpine + "} 57"));
}

// A host that leaves the fabric: its link's counter series leaves /metrics with the link; its
// counter state stays through a flap (the total continues) and is dropped after counters.window_s
// out of the fabric, after which a return starts from a new baseline.
TEST(Metrics, CounterStateOfAPortOutOfTheFabricIsDroppedAfterTheWindow) {
    Live l;
    const Fabric with = small_fabric();
    const Fabric without = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 7});  // node00008 gone
    const NodeId host = synth_node(with, "node00008");
    ASSERT_FALSE(without.find(with.node(host).guid).has_value());
    const Port& hp = *with.node(host).port(1);
    const Guid hg = with.node(host).guid, lg = with.node(hp.peer).guid;
    const int lp = hp.peer_port;
    using C = wire::PortCounter;
    auto row = [](Guid g, int p, uint64_t symbol) {
        wire::PortCounterRow r;
        r.node_guid = g;
        r.port = static_cast<uint8_t>(p);
        r.v[static_cast<size_t>(C::symbol_errors)] = symbol;
        return r;
    };
    const std::string series = "ibfabric_link_symbol_errors_total{local_guid=\"" + guid_hex(lg) +
                               "\",local_name=\"leaf0002\",local_port=\"" + std::to_string(lp) + "\",remote_guid=\"" +
                               guid_hex(hg) + "\",remote_name=\"node00008\",remote_port=\"1\",tier=\"host-leaf\"}";
    constexpr int64_t M = 60'000, H = 60 * M;
    l.sweep(with, 1, T0);
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0, {row(lg, lp, 0), row(hg, 1, 0)}}, T0));
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0 + M, {row(lg, lp, 0), row(hg, 1, 3)}}, T0 + M));
    std::string m = l.metrics(T0 + M);
    ASSERT_TRUE(has_line(m, series + " 3")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports 2"));
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports_forgotten_total 0"));

    // The host goes away (a reboot): no link, no series; its state stays for the window.
    l.sweep(without, 2, T0 + 2 * M);
    m = l.metrics(T0 + 2 * M);
    EXPECT_EQ(m.find(series), std::string::npos);
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports 2"));
    // Back 40 min later: the series again, its total where it was.
    l.sweep(with, 3, T0 + 42 * M);
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0 + 43 * M, {row(hg, 1, 5)}}, T0 + 43 * M));
    m = l.metrics(T0 + 43 * M);
    EXPECT_TRUE(has_line(m, series + " 5")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports_forgotten_total 0"));

    // Gone for good: a sweep an hour after it left drops the host's port, not the leaf's.
    l.sweep(without, 4, T0 + 50 * M);
    l.sweep(without, 5, T0 + 50 * M + H - 1);
    EXPECT_TRUE(has_line(l.metrics(T0 + 50 * M + H - 1), "ibfabric_perfmgr_ports 2"));
    l.sweep(without, 6, T0 + 50 * M + H);
    m = l.metrics(T0 + 50 * M + H);
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports 1")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports_forgotten_total 1"));
    EXPECT_EQ(l.st.port_counters().find(hg, 1), nullptr);
    EXPECT_NE(l.st.port_counters().find(lg, lp), nullptr);
    EXPECT_EQ(m.find("remote_name=\"node00008\""), std::string::npos);
    // A later return is a new port: its first row is the baseline (the plugin's sum), not growth.
    l.sweep(with, 7, T0 + 3 * H);
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0 + 3 * H, {row(hg, 1, 9)}}, T0 + 3 * H));
    m = l.metrics(T0 + 3 * H);
    EXPECT_TRUE(has_line(m, series + " 9")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports 2"));
}

// Ports are dropped on PortCounters batches too (a quiet fabric sends no snapshot for hours): a
// port the perfmgr reported but no snapshot has (a stranger) goes a window after the sweep that
// did not have it.
TEST(Metrics, APortNotInTheFabricIsDroppedOnALaterCounterBatch) {
    Live l;
    const Fabric f = small_fabric();
    l.sweep(f, 1, T0);
    constexpr Guid kGone = 0x0badc0de;
    wire::PortCounterRow gone;
    gone.node_guid = kGone;
    gone.port = 1;
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0, {gone}}, T0));
    EXPECT_TRUE(has_line(l.metrics(T0), "ibfabric_perfmgr_ports 1"));
    l.sweep(f, 2, T0 + 1000);  // not in the fabric: absent from here
    wire::PortCounterRow leaf;
    leaf.node_guid = 0x7cfe900301000001;
    leaf.port = 5;
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0 + 3'600'999, {leaf}}, T0 + 3'600'999));
    EXPECT_TRUE(has_line(l.metrics(T0 + 3'600'999), "ibfabric_perfmgr_ports 2"));
    ASSERT_TRUE(l.st.on_port_counters(kConn, {T0 + 3'601'000, {leaf}}, T0 + 3'601'000));
    const std::string m = l.metrics(T0 + 3'601'000);
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports 1")) << m;  // the leaf's; the stranger's is gone
    EXPECT_TRUE(has_line(m, "ibfabric_perfmgr_ports_forgotten_total 1"));
    EXPECT_TRUE(has_line(m, "ibfabric_link_symbol_errors_total{" + kLeafSpine + "} 0"));
}

// The scrape budget (<= 50 ms on a 2k-node fabric) with perfmgr counters on every port: the counter
// families are rendered once per PortCounters batch, then copied.
TEST(Metrics, ScrapeWithCountersOnEveryPortOfA2kNodeFabric) {
    Live l;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 64, .hosts = 1920});
    l.plan = load_plan(write_ibnetdiscover(f), "golden.ibnetdiscover");
    l.sweep(f, 1, T0);
    const wire::PortCounters pc = test::counters_for_linked_ports(f, T0, 1234567);
    const size_t rows = pc.ports.size();
    ASSERT_TRUE(l.st.on_port_counters(kConn, pc, T0 + 1000));
    // Process CPU time (docs/testing.md: wall time swings 10-20x on this shared 2-core machine; at
    // load 8 the second scrape took 290 ms of wall time and far less CPU).
    const auto cpu_ms = [] { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
    const double t0 = cpu_ms();
    const std::string first = l.metrics(T0 + 1000);
    const double first_ms = cpu_ms() - t0;
    const double t1 = cpu_ms();
    const std::string again = l.metrics(T0 + 1000);
    const double again_ms = cpu_ms() - t1;
    EXPECT_EQ(first, again);
    const size_t links = l.st.links()->rows.size();
    std::printf("%zu nodes, %zu links, %zu port rows: /metrics %zu bytes; first scrape after a batch %.1f ms CPU, then %.1f ms\n",
                f.size(), links, rows, first.size(), first_ms, again_ms);
    EXPECT_TRUE(has_line(first, "ibfabric_perfmgr_rows_total{source=\"master\"} " + std::to_string(rows)));
    EXPECT_LT(again_ms, 200.0);  // the figure is in docs/benchmarks.md
}

// Issue 18 item 5: after a PortCounters batch only the rows of the ports in it are read again
// (PortCounterTracker::changed_since) and the aggregates move by their difference. The text must
// be byte for byte what a render from scratch gives (a copy of the link table without its
// caches), in both modes, through errors appearing, traffic, a reset, a port outside the table,
// a mode switch, and a batch history longer than the tracker's log (then every row is read).
TEST(Metrics, CounterFamiliesRenderedIncrementallyAreByteIdenticalToAFullRender) {
    Live l;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 16, .hosts = 64});
    l.plan = load_plan(write_ibnetdiscover(f), "golden.ibnetdiscover");
    l.sweep(f, 1, T0);
    wire::PortCounters all = test::counters_for_linked_ports(f, T0, 100);
    ASSERT_GT(all.ports.size(), 100u);
    int64_t t = T0 + 1000;
    ASSERT_TRUE(l.st.on_port_counters(kConn, all, t));
    using C = wire::PortCounter;
    auto full = [&](int64_t now, bool all_links) {
        MetricsJob j = metrics_job({.state = &l.st, .now_ms = now, .all_links = all_links});
        LinkTable fresh = *j.fabric.links;
        fresh.rendered.clear();
        fresh.rendered_counters.clear();
        fresh.counter_rows = {};
        j.fabric.links = std::make_shared<const LinkTable>(std::move(fresh));
        return metrics_render(j);
    };
    auto check_both = [&](const char* step) {
        for (bool a : {false, true}) {
            const std::string inc = metrics_text({.state = &l.st, .now_ms = t, .all_links = a});
            EXPECT_EQ(inc, full(t, a)) << step << (a ? " (all)" : " (deviating)");
        }
    };
    check_both("first render");
    std::vector<std::string> seen;
    for (int batch = 0; batch < 12; ++batch) {
        wire::PortCounters pc{t, {}};
        for (size_t i = static_cast<size_t>(batch) % 7; i < all.ports.size(); i += 7 + static_cast<size_t>(batch)) {
            wire::PortCounterRow r = all.ports[i];
            const uint64_t k = static_cast<uint64_t>(batch + 1);
            r.v[static_cast<size_t>(C::xmit_data)] = 100 + 1000 * k;  // traffic on every changed port
            r.v[static_cast<size_t>(C::rcv_pkts)] = 100 + 10 * k;
            if (i % 3 == 0) r.v[static_cast<size_t>(C::symbol_errors)] = 100 + k;  // errors on some
            if (batch == 5 && i % 2 == 0) r.v.fill(1);                               // a reset (new baseline)
            all.ports[i] = r;
            pc.ports.push_back(r);
        }
        pc.ports.push_back(test::counter_row(0x1234, 1, {{C::symbol_errors, 5}}));  // not in the fabric
        ASSERT_TRUE(l.st.on_port_counters(kConn, pc, t += 1000));
        // Alternate which mode renders first, so each mode sometimes follows the other's state.
        const bool a = batch % 2;
        const std::string inc = metrics_text({.state = &l.st, .now_ms = t, .all_links = a});
        ASSERT_EQ(inc, full(t, a)) << "batch " << batch;
        seen.push_back(inc);
        if (batch % 3 == 0) check_both("both modes");
    }
    EXPECT_NE(seen.front(), seen.back());  // the counters did move
    EXPECT_NE(seen.back().find("ibfabric_link_symbol_errors_total{"), std::string::npos);
    // More rows than the tracker's log keeps (twice the ports, at least 4096) without a render.
    for (int k = 0; k < 40; ++k) {
        wire::PortCounters pc{t, {}};
        for (auto& r : all.ports) {
            r.v[static_cast<size_t>(C::xmit_data)] += 7;
            pc.ports.push_back(r);
        }
        ASSERT_TRUE(l.st.on_port_counters(kConn, pc, t += 1000));
    }
    ASSERT_GT(40 * all.ports.size(), std::max<size_t>(4096, 2 * all.ports.size()));
    check_both("after the log was trimmed");
}

TEST(Metrics, EveryFamilyFollowsPrometheusNaming) {
    Live l;
    l.sweep(small_fabric(), 1, T0);
    const ha::HaEngine e{ha::HaConfig{}};  // the ibfabric_ha_* families need `ha:`
    const std::string m = metrics_text({.state = &l.st, .now_ms = T0, .ha = &e, .all_links = true});
    std::set<std::string> seen;
    for (const std::string& name : metric_family_names()) {
        EXPECT_TRUE(seen.insert(name).second) << name << " twice";
        EXPECT_EQ(name.rfind("ibfabric_", 0), 0u) << name;
        for (const char* bad : {"_bits", "_sum", "_count", "_bucket", "_milliseconds", "_microseconds", "_ms", "_us"})
            EXPECT_EQ(name.find(bad), std::string::npos) << name;
        const std::string type_line = "# TYPE " + name + " ";
        const size_t at = m.find(type_line);
        ASSERT_NE(at, std::string::npos) << name;
        const std::string type = m.substr(at + type_line.size(), m.find('\n', at) - at - type_line.size());
        const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
        EXPECT_EQ(type == "counter", total) << name << " is a " << type;
    }
}

// The HA agent's families are rows of the one family table (kWithHa): absent without `ha:`,
// rendered by the same writer with `ha:` (per-SM samples, exact millisecond timestamps).
TEST(Metrics, TheHaFamiliesComeFromTheFamilyTableOnlyWithHa) {
    Live l;
    l.sweep(small_fabric(), 1, T0);
    EXPECT_EQ(l.metrics_default(T0).find("ibfabric_ha_"), std::string::npos);
    ha::HaConfig c;
    c.mode = ha::Mode::monitor;
    c.local_sm = kStandbyGuid;
    ha::HaEngine e(c);
    e.on_plugin({kMasterGuid, 1, 15, SmState::Master, 100}, false, T0 + 1000);
    e.on_plugin({kStandbyGuid, 2, 14, SmState::Standby, 100}, true, T0 + 1000);
    e.tick(T0 + 1000);
    e.on_plugin({kStandbyGuid, 2, 14, SmState::Master, 101}, true, T0 + 4321);
    e.on_plugin({kMasterGuid, 1, 15, SmState::Standby, 101}, false, T0 + 4321);
    e.tick(T0 + 4321);  // the engine notes the master change when it ticks
    const std::string m = metrics_text({.state = &l.st, .now_ms = T0 + 4400, .ha = &e});
    size_t names = 0;
    for (const std::string& name : metric_family_names()) {
        if (name.rfind("ibfabric_ha_", 0) != 0) continue;
        ++names;
        EXPECT_NE(m.find("\n# HELP " + name + " "), std::string::npos) << name;
        EXPECT_EQ(m.find("# TYPE " + name + " "), m.rfind("# TYPE " + name + " ")) << name << " once";
    }
    EXPECT_EQ(names, 8u);
    EXPECT_TRUE(has_line(m, "ibfabric_ha_sm_state{sm=\"" + guid_hex(kMasterGuid) + "\"} 2")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_ha_sm_state{sm=\"" + guid_hex(kStandbyGuid) + "\"} 3")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_ha_sm_alive{sm=\"" + guid_hex(kStandbyGuid) + "\"} 1")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_ha_local_sm_master 1")) << m;
    EXPECT_TRUE(has_line(m, "ibfabric_ha_master_changes_total " + std::to_string(e.master_changes()))) << m;
    ASSERT_GE(e.master_changes(), 1u);
    const ha::FailoverRecord* last = nullptr;
    for (const auto& r : e.history())
        if (r.master_ms) last = &r;
    ASSERT_NE(last, nullptr);
    // Seconds with exactly three decimals: the change is dated to the millisecond (was %.6g: ~100 s).
    char want[64];
    std::snprintf(want, sizeof want, "%lld.%03lld", static_cast<long long>(last->master_ms / 1000),
                  static_cast<long long>(last->master_ms % 1000));
    EXPECT_TRUE(has_line(m, std::string("ibfabric_ha_last_master_change_timestamp_seconds ") + want)) << m;
}

// The SM nodes' daemons of an HA pair export the same fabric: the master's node as role="active",
// the standby's as role="standby" (ha/fabric_role.h), so the shipped rules count one copy.
TEST(Metrics, TheStandbyNodesDaemonMirrorsTheFabricGaugesAsStandby) {
    Live l;
    Fabric f = small_fabric();
    set_link_rate(f, synth_node(f, "leaf0001"), 1, Rate{Width::X1, Speed::HDR});
    l.sweep(f, 7, T0 + 1000);
    auto engine_of = [](Guid local) {
        ha::HaConfig c;
        c.mode = ha::Mode::monitor;
        c.local_sm = local;
        ha::HaEngine e(c);
        e.on_plugin({kMasterGuid, 1, 15, SmState::Master, 100}, local == kMasterGuid, T0 + 1000);
        e.on_plugin({kStandbyGuid, 2, 14, SmState::Standby, 100}, local == kStandbyGuid, T0 + 1000);
        return e;
    };
    const ha::HaEngine standby = engine_of(kStandbyGuid), master = engine_of(kMasterGuid);
    const std::string s = metrics_text({.state = &l.st, .now_ms = T0 + 1100, .ha = &standby});
    EXPECT_TRUE(has_line(s, "ibfabric_role{role=\"standby\"} 1")) << s;
    EXPECT_TRUE(has_line(s, "ibfabric_role{role=\"active\"} 0"));
    EXPECT_TRUE(has_line(s, "ibfabric_findings{kind=\"rate_mismatch\",severity=\"error\",role=\"standby\"} 1"));
    EXPECT_TRUE(has_line(s, "ibfabric_data_fresh{role=\"standby\"} 1"));
    EXPECT_TRUE(has_line(s, "ibfabric_link_rate_bytes_per_second{" + kLeafHost + ",role=\"standby\"} 6250000000"));
    EXPECT_EQ(s.find("role=\"active\"} 1"), std::string::npos) << "no active copy on the standby's node";
    // The master's node: the same series, active; the per-link copy rendered for the other role is
    // not reused (a failover changes the role between two checks).
    const std::string a = metrics_text({.state = &l.st, .now_ms = T0 + 1100, .ha = &master});
    EXPECT_TRUE(has_line(a, "ibfabric_role{role=\"active\"} 1"));
    EXPECT_TRUE(has_line(a, "ibfabric_findings{kind=\"rate_mismatch\",severity=\"error\",role=\"active\"} 1"));
    EXPECT_TRUE(has_line(a, "ibfabric_link_rate_bytes_per_second{" + kLeafHost + "," + kActive + "} 6250000000"));
    EXPECT_EQ(a.find("role=\"standby\"} 1"), std::string::npos);
    EXPECT_EQ(metrics_text({.state = &l.st, .now_ms = T0 + 1100, .ha = &standby}), s);
}

// Only gauges carry the role: a counter's series must not split when the role moves (increase()).
TEST(Metrics, OnlyGaugesCarryTheRoleLabel) {
    Live l;
    l.sweep(small_fabric(), 1, T0);
    const std::string m = l.metrics(T0);
    std::map<std::string, std::string> type;
    size_t with_role = 0;
    for (size_t at = 0, eol; at < m.size(); at = eol + 1) {
        eol = m.find('\n', at);
        const std::string line = m.substr(at, eol - at);
        if (line.rfind("# TYPE ", 0) == 0) {
            const size_t sp = line.find(' ', 7);
            type[line.substr(7, sp - 7)] = line.substr(sp + 1);
        } else if (line[0] != '#' && line.find("role=\"") != std::string::npos) {
            const std::string name = line.substr(0, line.find('{'));
            EXPECT_EQ(type[name], "gauge") << line;
            ++with_role;
        }
    }
    EXPECT_GT(with_role, 20u);
    EXPECT_TRUE(has_line(m, "ibfabric_checks_total 1")) << "a daemon's own counter has no role";
}

TEST(Metrics, ReloadResultIsExported) {
    Live l;
    EXPECT_TRUE(has_line(l.metrics(T0), "ibfabric_config_last_reload_successful 1"));
    l.st.note_reload(true, T0 + 5000);
    l.st.note_reload(false, T0 + 6000);
    const std::string m = l.metrics(T0 + 7000);
    EXPECT_TRUE(has_line(m, "ibfabric_config_last_reload_successful 0"));
    EXPECT_TRUE(has_line(m, "ibfabric_config_last_reload_success_timestamp_seconds 1764468005.000"));
}

TEST(LinkTable, LocalIsTheSwitchOrLowerTierEndAndTierNamesBothEnds) {
    const Fabric f = synth_fat_tree({.levels = 3, .radix = 4, .hosts = 8});
    const LiveAnalysis la = analyze_live(snapshot(f, kMasterGuid, SmState::Master, 1), f);
    const LinkTable t = link_table(f, la.tier_of, nullptr, {});
    ASSERT_EQ(t.rows.size(), f.link_count());
    std::map<std::string, int> tiers;
    for (const LinkRow& r : t.rows) {
        ++tiers[r.tier];
        const std::string lname = r.local_name.substr(0, 4), rname = r.remote_name.substr(0, 4);
        const std::map<std::string, std::string> ends{
            {"host-leaf", "leafnode"}, {"leaf-spine", "leafspin"}, {"spine-core", "spincore"}};
        ASSERT_TRUE(ends.count(r.tier)) << r.labels;
        EXPECT_EQ(lname + rname, ends.at(r.tier)) << r.labels;
        EXPECT_EQ(r.planned_rate_bps, 0);  // no plan
        EXPECT_EQ(r.rate_bps, 4 * 50e9);   // synth default 4xHDR
    }
    const FatTreeShape s = fat_tree_shape({.levels = 3, .radix = 4, .hosts = 8});
    EXPECT_EQ(tiers, (std::map<std::string, int>{{"host-leaf", 8}, {"leaf-spine", s.leaves * 2}, {"spine-core", s.spines * 2}}));
}

TEST(LinkTable, LabelValuesAreEscaped) {
    EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

// Issue 19 item 9: a NodeDescription "spine\e[2J\e]0;PWN\a" reached /metrics with its raw ESC and
// BEL bytes; the label shows them as text (\x1b, escaped for the exposition format) instead.
TEST(LinkTable, LabelValuesCarryNoTerminalEscapes) {
    const std::string v = escape_label_value("spine\x1b[2J\x1b]0;PWN\a\n2");
    EXPECT_EQ(v, "spine\\\\x1b[2J\\\\x1b]0;PWN\\\\x07\\n2");  // \\x1b as text, its backslash escaped
    EXPECT_EQ(v.find('\x1b'), std::string::npos);
    EXPECT_EQ(v.find('\a'), std::string::npos);
}

// GET /api/v1/sm's ha.role: the same decision as the role label of /metrics (ha/fabric_role.h),
// with the rule that made it: this node's SM a STANDBY under a remote master is standby.
TEST(HaApi, TheRoleOfThisDaemonIsInTheSmView) {
    ha::HaConfig c;
    c.mode = ha::Mode::monitor;
    c.local_sm = 0x2;
    ha::HaEngine e(c);
    e.on_plugin({0x2, 2, 14, SmState::Standby, 1}, true, 100);
    e.on_plugin({0x1, 1, 15, SmState::Master, 1}, false, 100);
    const json j = ha_json(e, 150, {});
    EXPECT_EQ(j.value("role", ""), "standby") << j.dump();
    EXPECT_FALSE(j.value("role_why", "").empty()) << j.dump();
    EXPECT_EQ(ha::to_string(ha::fabric_role(ha::role_view(e, 150)).role), j.value("role", ""));
}

// Issue 18: the port_errors findings are one pass over every port per counter state, not per
// scrape (nor three per scrape): scrapes, findings requests and waiver splits in between reuse it;
// a batch, or the growth leaving the window, makes the next caller compute them afresh.
TEST(Metrics, PortErrorsAreComputedOncePerCounterVersion) {
    Live l;
    int64_t t = T0;
    l.sweep(small_fabric(), 1, t);
    constexpr Guid kLeaf = 0x7cfe900301000001;
    auto row = [](uint64_t symbol) {
        wire::PortCounterRow r;
        r.node_guid = kLeaf;
        r.port = 5;
        r.v[static_cast<size_t>(wire::PortCounter::symbol_errors)] = symbol;
        return r;
    };
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(0)}}, t));
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(55)}}, t));
    const uint64_t before = l.st.port_error_passes();
    for (int i = 0; i < 3; ++i) {
        l.metrics(t + i);
        l.metrics_default(t + i);
        l.findings(t + i);
    }
    EXPECT_EQ(l.st.port_error_passes(), before + 1) << "one pass for 3 scrapes of each kind and 3 findings requests";
    EXPECT_EQ(l.findings(t)["summary"]["port_errors"], 1);
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(60)}}, t));  // a new version
    l.metrics(t);
    l.metrics(t);
    EXPECT_EQ(l.st.port_error_passes(), before + 2);
    // The growth leaves the 1 h window: computed again once, and the finding is gone.
    EXPECT_EQ(l.findings(t + 3600000)["summary"].count("port_errors"), 0u);
    l.metrics(t + 3600000);
    EXPECT_EQ(l.st.port_error_passes(), before + 3);
}

// The render off the io thread reads a frozen job: a counter batch after metrics_job() changes
// the state's counters (a copy: copy-on-write), not the job's, whose text is the one of its time.
TEST(Metrics, AJobKeepsTheCounterStateOfItsTime) {
    Live l;
    int64_t t = T0;
    l.sweep(small_fabric(), 1, t);
    constexpr Guid kLeaf = 0x7cfe900301000001;
    auto row = [](uint64_t symbol) {
        wire::PortCounterRow r;
        r.node_guid = kLeaf;
        r.port = 5;
        r.v[static_cast<size_t>(wire::PortCounter::symbol_errors)] = symbol;
        return r;
    };
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(0)}}, t));
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t += 1000, {row(3)}}, t));
    const std::string then = l.metrics(t);
    MetricsJob job = metrics_job({.state = &l.st, .now_ms = t, .all_links = true});
    ASSERT_EQ(job.fabric.counters.get(), &l.st.port_counters());
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t + 1000, {row(9)}}, t + 1000));
    EXPECT_NE(job.fabric.counters.get(), &l.st.port_counters()) << "the batch went to a copy";
    EXPECT_EQ(metrics_render(job), then);
    const std::string kLeafEnd = "local_guid=\"0x7cfe900301000001\",local_name=\"leaf0001\",local_port=\"5\"";
    EXPECT_NE(then.find("ibfabric_link_symbol_errors_total{" + kLeafEnd), std::string::npos);
    EXPECT_NE(l.metrics(t + 1000), then);
    job = {};  // released: the next batch writes in place
    const PortCounterTracker* now = &l.st.port_counters();
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t + 2000, {row(10)}}, t + 2000));
    EXPECT_EQ(&l.st.port_counters(), now);
}

// A counter batch that arrives while a /metrics render holds the counter state (metrics_job takes
// port_counters_shared()) goes to a copy that shares every shard but the ones it writes
// (docs/threading.md); the render's state and text stay as they were.
TEST(Metrics, ACounterBatchWhileARenderHoldsTheCounterStateCopiesOnlyTheShardsItWrites) {
    Live l;
    l.sweep(small_fabric(), 1, T0 + 1000);
    using C = wire::PortCounter;
    const Guid leaf = 0x7cfe900301000001, spine = 0x7cfe900302000001;
    int64_t t = T0 + 2000;
    ASSERT_TRUE(l.st.on_port_counters(
        kConn, {t, {counter_row(leaf, 5, {{C::symbol_errors, 0}}), counter_row(spine, 1, {{C::symbol_errors, 0}})}}, t));
    {
        const std::shared_ptr<const PortCounterTracker> held = l.st.port_counters_shared();  // the render's
        const std::string before = metrics_text({.state = &l.st, .now_ms = t, .all_links = true});
        const uint64_t version = held->version();
        ASSERT_TRUE(l.st.on_port_counters(kConn, {t + 1000, {counter_row(leaf, 5, {{C::symbol_errors, 7}})}}, t + 1000));
        const std::shared_ptr<const PortCounterTracker> now = l.st.port_counters_shared();
        ASSERT_NE(now, held);
        EXPECT_EQ(held->version(), version);
        EXPECT_EQ(held->find(leaf, 5)->total[static_cast<size_t>(C::symbol_errors)], 0u);
        EXPECT_EQ(now->find(leaf, 5)->total[static_cast<size_t>(C::symbol_errors)], 7u);
        EXPECT_EQ(now->version(), version + 1);
        for (size_t i = 0; i < PortCounterTracker::kShards; ++i)
            EXPECT_EQ(held->shard_address(i) == now->shard_address(i), i != PortCounterTracker::shard_of(leaf)) << i;
        EXPECT_EQ(held->find(spine, 1), now->find(spine, 1)) << "a port in a shard not written is shared";
        EXPECT_NE(metrics_text({.state = &l.st, .now_ms = t + 1000, .all_links = true}), before);
    }
    // Nothing holds it any more: the next batch is written in place.
    const PortCounterTracker* in_place = l.st.port_counters_shared().get();
    ASSERT_TRUE(l.st.on_port_counters(kConn, {t + 2000, {counter_row(leaf, 5, {{C::symbol_errors, 9}})}}, t + 2000));
    EXPECT_EQ(l.st.port_counters_shared().get(), in_place);
    EXPECT_EQ(l.st.port_counters().find(leaf, 5)->total[static_cast<size_t>(C::symbol_errors)], 9u);
}
