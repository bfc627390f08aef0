// End to end on a simulated fabric: ibsim -> real OpenSM 3.3.23 with libibfabric_osm.so -> ibfabricd
// -> `ibfabric findings --json`. Label: integration. Skipped when ibsim/opensm/umad2sim or the
// plugin are missing. Every process is started here (tests/support) and killed by pid (never by name).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "ibf/daemon_fixture.h"
#include "ibf/http_client.h"
#include "ibf/ibsim_fixture.h"
#include "ibf/lab_process.h"

using namespace ibf;
using namespace ibf::test;
namespace ts = ibf::test_support;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

const char* kPlan = R"(version: 1
rate: 4xHDR
nodes:
  sw1: {type: switch, ports: 8}
  sw2: {type: switch, ports: 8}
cables:
  - {a: sw1/1, b: h1/1}
  - {a: sw1/2, b: h2/1}
  - {a: sw1/3, b: sw2/3}
  - {a: sw1/4, b: sw2/4}
  - {a: sw2/1, b: h3/1}
  - {a: sw2/2, b: h4/1}
)";

const char* kPlanLabelled = R"(version: 1
rate: 4xHDR
nodes:
  sw1: {type: switch, ports: 8}
  sw2: {type: switch, ports: 8}
cables:
  - {a: sw1/1, b: h1/1}
  - {a: sw1/2, b: h2/1, rate: 4xEDR}
  - {a: sw1/3, b: sw2/3, label: ISL-A}
  - {a: sw1/4, b: sw2/4}
  - {a: sw2/1, b: h3/1}
  - {a: sw2/2, b: h4/1, rate: 1xHDR}
)";

}  // namespace

TEST(ControllerEndToEnd, RealOpenSmPluginToDaemonToCli) {
    if (auto why = ts::missing_tools(); !why.empty()) GTEST_SKIP() << why;
    ts::IbsimFixture fx("ibfctl");
    write_file(fx.tmp / "plan.yaml", kPlan);
    ASSERT_NO_FATAL_FAILURE(fx.start_ibsim(ts::two_switch_net(), {.console = true}));

    const std::string sock = fx.tmp / "osm.sock";
    uint16_t port = 0;
    ASSERT_NO_FATAL_FAILURE(fx.start_daemon(sock, {"--topology", fx.tmp / "plan.yaml"}, port));
    const HttpUrl url{"127.0.0.1", port, ""};

    fx.start_opensm("h1", ts::plugin_conf("socket=" + sock + " heartbeat_ms=500"));

    auto findings = [&] { return json::parse(http_request(url, "GET", "/api/v1/findings").body); };
    ASSERT_TRUE(wait_until([&] { return findings()["summary"].value("rate_mismatch", 0) == 2; }, std::chrono::seconds(40)))
        << findings().dump(2) << "\n" << read_file(fx.tmp / "daemon.log");

    json sms = json::parse(http_request(url, "GET", "/api/v1/sm").body);
    ASSERT_EQ(sms["sms"].size(), 1u);
    EXPECT_EQ(sms["sms"][0]["connected"], true);
    EXPECT_EQ(sms["sms"][0]["osm_version"].get<std::string>().find("OpenSM"), 0u);
    EXPECT_TRUE(wait_until([&] {
        return json::parse(http_request(url, "GET", "/api/v1/sm").body)["sms"][0]["state"] == "MASTER";
    }));
    json fabric = json::parse(http_request(url, "GET", "/api/v1/fabric").body);
    EXPECT_EQ(fabric["switches"], 2);
    EXPECT_EQ(fabric["cas"], 4);
    EXPECT_EQ(fabric["links"], 6);

    // The CLI sees the same findings.
    std::string cli_out;
    const int cli_rc = lab_detail::run_capture({.argv = {ts::bin_dir() + "/ibfabric", "findings", "--json", "--url",
                                                         "http://127.0.0.1:" + std::to_string(port)},
                                                .cwd = fx.tmp.path(), .out_path = fx.tmp / "cli.err"},
                                               10, cli_out);
    ASSERT_NE(cli_rc, -1) << "ibfabric findings timed out";
    EXPECT_EQ(cli_rc, 1) << read_file(fx.tmp / "cli.err");
    const json cj = json::parse(cli_out);
    EXPECT_EQ(cj["summary"]["rate_mismatch"], 2);

    fx.opensm.stop(5s);  // opensm's own exit status is not ours to judge
    EXPECT_TRUE(wait_until([&] {
        return json::parse(http_request(url, "GET", "/api/v1/sm").body)["sms"][0]["connected"] == false;
    }));
    EXPECT_TRUE(fx.daemon.stop(5s)) << read_file(fx.tmp / "daemon.log");
    EXPECT_EQ(fx.daemon.exit_code(), 0) << read_file(fx.tmp / "daemon.log");
    EXPECT_FALSE(std::filesystem::exists(sock));
}

// The live analysis end to end: ftree configured on a tree ftree refuses (a host on a spine, no
// guid files). OpenSM falls back to minhop; the plugin sends both engine names and the LFTs; the
// daemon, without any topology, serves the routing_fallback finding and the LFT figures.
TEST(ControllerEndToEnd, RoutingFallbackAndLftsReachTheAnalysisApi) {
    if (auto why = ts::missing_tools(); !why.empty()) GTEST_SKIP() << why;
    ts::IbsimFixture fx("ibfcta");
    // 4 spines, 8 leaves x 3 hosts; "hx" on spine0 port 9.
    ASSERT_NO_FATAL_FAILURE(fx.start_ibsim(ts::spine_leaf_net(true)));
    const std::string sock = fx.tmp / "osm.sock";
    uint16_t port = 0;
    ASSERT_NO_FATAL_FAILURE(fx.start_daemon(sock, {}, port));
    const HttpUrl url{"127.0.0.1", port, ""};

    fx.start_opensm("h0", ts::plugin_conf("socket=" + sock, "routing_engine ftree\n"));

    auto analysis = [&] { return json::parse(http_request(url, "GET", "/api/v1/analysis").body); };
    // Where the tables lead (routes, max_hops) comes with the route validation, after the analysis.
    ASSERT_TRUE(wait_until([&] {
        const json j = analysis();
        return j["analyzed"] == true && j["route_validation"].is_object() && j["route_validation"]["state"] == "done";
    }, std::chrono::seconds(40))) << read_file(fx.tmp / "daemon.log") << fx.log();
    json a = analysis();
    EXPECT_EQ(a["routing"]["engine"], "minhop") << a.dump(2);
    EXPECT_EQ(a["routing"]["configured"], "ftree");
    EXPECT_EQ(a["routing"]["fallback"], true);
    EXPECT_EQ(a["summary"]["routing_fallback"], 1);
    EXPECT_EQ(a["summary"]["host_misplaced"], 1);  // hx on spine0: the cause, found by the analysis
    EXPECT_EQ(a["levels"], 2);
    const json& lft = a["routing"]["lft"];
    ASSERT_TRUE(lft.is_object()) << a.dump(2);
    EXPECT_EQ(lft["switches"], 12);
    EXPECT_EQ(lft["routes_broken"], 0);
    EXPECT_EQ(lft["routes_unrouted"], 0);
    EXPECT_EQ(lft["routes"], 12 * 25);
    EXPECT_EQ(lft["max_hops"], 3);
    json sw = json::parse(http_request(url, "GET", "/api/v1/analysis?switches=1").body);
    EXPECT_EQ(sw["switches"].size(), 12u);
    const std::string metrics = http_request(url, "GET", "/metrics").body;
    EXPECT_NE(metrics.find("ibfabric_routing_fallback{role=\"active\"} 1"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("ibfabric_analysis_findings{kind=\"routing_fallback\",severity=\"warning\",role=\"active\"} 1"), std::string::npos);
    EXPECT_NE(metrics.find("ibfabric_lft_switches{role=\"active\"} 12"), std::string::npos);
    EXPECT_NE(metrics.find("ibfabric_lft_max_hops{role=\"active\"} 3"), std::string::npos);  // from the route validation
    const std::string log = read_file(fx.tmp / "daemon.log");
    EXPECT_NE(log.find("ROUTING FALLBACK"), std::string::npos) << log;
    fx.opensm.stop(5s);
    EXPECT_TRUE(fx.daemon.stop(5s)) << read_file(fx.tmp / "daemon.log");
    EXPECT_EQ(fx.daemon.exit_code(), 0) << read_file(fx.tmp / "daemon.log");
}

// Flapping, live: an inter-switch cable unlinked and relinked three times with ibsim's console is
// exactly one link_flapping finding (both ends, the plan's label, 3 flaps), in the API, /metrics and
// the CLI, raised by the sweep that saw the third relink.
TEST(ControllerEndToEnd, ACableUnlinkedAndRelinkedThreeTimesIsOneLinkFlappingFinding) {
    if (auto why = ts::missing_tools(); !why.empty()) GTEST_SKIP() << why;
    ts::IbsimFixture fx("ibfflap");
    write_file(fx.tmp / "plan.yaml", kPlanLabelled);
    ASSERT_NO_FATAL_FAILURE(fx.start_ibsim(ts::two_switch_net(), {.console = true}));
    const std::string sock = fx.tmp / "osm.sock";
    uint16_t port = 0;
    ASSERT_NO_FATAL_FAILURE(fx.start_daemon(sock, {"--topology", fx.tmp / "plan.yaml"}, port));
    const HttpUrl url{"127.0.0.1", port, ""};
    fx.start_opensm("h1", ts::plugin_conf("socket=" + sock + " heartbeat_ms=500"));

    auto get = [&](const std::string& path) { return json::parse(http_request(url, "GET", path).body); };
    auto links_are = [&](int n) {
        return wait_until([&] {
            const json f = get("/api/v1/fabric");
            return f["links"] == n && f["last_findings_unix_ms"].is_number() &&
                   get("/api/v1/findings")["sweep_seq"] == f["last_sweep_seq"];
        }, std::chrono::seconds(20));
    };
    ASSERT_TRUE(links_are(6)) << read_file(fx.tmp / "daemon.log");
    ASSERT_EQ(get("/api/v1/findings")["summary"], json::object()) << get("/api/v1/findings").dump(2);

    for (int i = 0; i < 3; ++i) {
        fx.console("Unlink \"sw1\"[3]");
        ASSERT_TRUE(links_are(5)) << "unlink " << i << "\n" << read_file(fx.tmp / "daemon.log");
        EXPECT_EQ(get("/api/v1/findings")["summary"].value("link_flapping", 0), 0);
        fx.console("ReLink \"sw1\"[3]");
        ASSERT_TRUE(links_are(6)) << "relink " << i << "\n" << read_file(fx.tmp / "daemon.log");
    }
    // The routes over the flapping ISL are route_via_degraded_link too, once the validation of the
    // last sweep (which knew of the flaps) is published.
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["route_validation"] == "done"; }));
    const json j = get("/api/v1/findings");
    ASSERT_EQ(j["summary"], (json{{"link_flapping", 1}, {"route_via_degraded_link", 1}})) << j.dump(2);
    const json& f = j["findings"][0];
    EXPECT_EQ(f["kind"], "link_flapping");
    EXPECT_EQ(f["label"], "ISL-A");
    std::set<std::string> ends{f["a"]["name"].get<std::string>() + "/" + f["a"]["port"].dump(),
                               f["b"]["name"].get<std::string>() + "/" + f["b"]["port"].dump()};
    EXPECT_EQ(ends, (std::set<std::string>{"sw1/3", "sw2/3"}));
    EXPECT_EQ(f["actual"].get<std::string>().rfind("3 flaps, first ", 0), 0u) << f.dump();
    EXPECT_EQ(j["data_state"], "fresh");

    const std::string m = http_request(url, "GET", "/metrics").body;
    EXPECT_NE(m.find("\nibfabric_findings{kind=\"link_flapping\",severity=\"warning\",role=\"active\"} 1\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nibfabric_link_flaps_total 3\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nibfabric_links_flapping{role=\"active\"} 1\n"), std::string::npos);

    std::string cli_out;
    const int rc = lab_detail::run_capture({.argv = {ts::bin_dir() + "/ibfabric", "findings", "--url",
                                                     "http://127.0.0.1:" + std::to_string(port)},
                                            .cwd = fx.tmp.path(), .out_path = fx.tmp / "cli.err"},
                                           10, cli_out);
    EXPECT_EQ(rc, 1) << read_file(fx.tmp / "cli.err");
    EXPECT_NE(cli_out.find("(cable ISL-A) went down and up 3 times"), std::string::npos) << cli_out;
    fx.opensm.stop(5s);
    EXPECT_TRUE(fx.daemon.stop(5s)) << read_file(fx.tmp / "daemon.log");
}
