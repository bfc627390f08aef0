// End to end on a simulated fabric: ibsim -> real OpenSM 3.3.23 with libibfabric_osm.so -> ibfabricd
// -> `ibfabric findings --json`. Label: integration. Skipped when ibsim/opensm/umad2sim or the
// plugin are missing. Every process is started here (tests/support) and killed by pid (never by name).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture.h"
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
    ASSERT_TRUE(wait_until([&] { return analysis()["analyzed"] == true; }, std::chrono::seconds(40)))
        << read_file(fx.tmp / "daemon.log") << fx.log();
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
    EXPECT_NE(metrics.find("ibfabric_routing_fallback 1"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("ibfabric_analysis_findings{kind=\"routing_fallback\",severity=\"warning\"} 1"), std::string::npos);
    EXPECT_NE(metrics.find("ibfabric_lft_switches 12"), std::string::npos);
    const std::string log = read_file(fx.tmp / "daemon.log");
    EXPECT_NE(log.find("ROUTING FALLBACK"), std::string::npos) << log;
    fx.opensm.stop(5s);
    EXPECT_TRUE(fx.daemon.stop(5s)) << read_file(fx.tmp / "daemon.log");
    EXPECT_EQ(fx.daemon.exit_code(), 0) << read_file(fx.tmp / "daemon.log");
}
