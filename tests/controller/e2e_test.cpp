// End to end on a simulated fabric: ibsim -> real OpenSM 3.3.23 with libibfabric_osm.so -> ibfabricd
// -> `ibfabric findings --json`. Label: integration. Skipped when ibsim/opensm/umad2sim or the
// plugin are missing. Every process is started here and killed by pid (never by name).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <random>

#include "fixture.h"
#include "ibf/http_client.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

const std::string kUmad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";
const std::string kPlugin = std::string(IBF_BIN_DIR) + "/../lib/libibfabric_osm.so";

// Two switches, four hosts; h2's link runs at EDR and h4's at 1x (both ends carry the masks).
const char* kNet = R"(speed=7
extspeed=7

Switch 8 "sw1"
[1] "h1"[1]
[2] "h2"[1] e=2
[3] "sw2"[3]
[4] "sw2"[4]

Switch 8 "sw2"
[1] "h3"[1]
[2] "h4"[1] w=1
[3] "sw1"[3]
[4] "sw1"[4]

Hca 1 "h1"
[1] "sw1"[1]

Hca 1 "h2"
[1] "sw1"[2] e=2

Hca 1 "h3"
[1] "sw2"[1]

Hca 1 "h4"
[1] "sw2"[2] w=1
)";

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

// A child process in its own process group, killed (by pid) and reaped on destruction.
class Child {
public:
    Child(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& cwd,
          const std::string& out, const std::string& in = "/dev/null") {
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            ::setpgid(0, 0);
            if (::chdir(cwd.c_str()) != 0) ::_exit(126);
            int i = ::open(in.c_str(), O_RDONLY), o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(i, 0);
            ::dup2(o, 1);
            ::dup2(o, 2);
            for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
    }
    ~Child() { kill(SIGKILL); }
    // Sends `sig`, waits up to 5 s; returns the exit code (-1 for a signal or a timeout, then SIGKILL).
    int kill(int sig = SIGTERM) {
        if (pid_ <= 0) return -1;
        ::kill(pid_, sig);
        int status = 0;
        bool done = wait_until([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, std::chrono::seconds(5));
        if (!done) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
        }
        pid_ = -1;
        return done && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
};

bool have_tools() {
    return ::access("/usr/bin/ibsim", X_OK) == 0 && ::access("/usr/sbin/opensm", X_OK) == 0 &&
           ::access(kUmad2sim.c_str(), R_OK) == 0 && ::access(kPlugin.c_str(), R_OK) == 0;
}

}  // namespace

TEST(ControllerEndToEnd, RealOpenSmPluginToDaemonToCli) {
    if (!have_tools()) GTEST_SKIP() << "ibsim/opensm/umad2sim or the built plugin missing";
    TempDir dir;
    std::random_device rd;
    const std::string sim = "ibfctl" + std::to_string(::getpid()) + "x" + std::to_string(rd() % 100000);
    write_file(dir.file("net"), kNet);
    write_file(dir.file("plan.yaml"), kPlan);
    ASSERT_EQ(::mkfifo(dir.file("console").c_str(), 0600), 0);
    const int console = ::open(dir.file("console").c_str(), O_RDWR);  // held open: ibsim never reads EOF
    ASSERT_GE(console, 0);

    Child ibsim({"ibsim", "-s", dir.file("net")}, {"IBSIM_SOCKNAME=" + sim}, dir.path.string(), dir.file("ibsim.out"),
                dir.file("console"));
    ASSERT_TRUE(wait_until([&] { return read_file(dir.file("ibsim.out")).find("Network simulator ready") != std::string::npos; }))
        << read_file(dir.file("ibsim.out"));

    const std::string sock = dir.file("osm.sock");
    Child daemon({std::string(IBF_BIN_DIR) + "/ibfabricd", "--socket", sock, "--http", "127.0.0.1:0", "--port-file",
                  dir.file("port"), "--topology", dir.file("plan.yaml")},
                 {}, dir.path.string(), dir.file("daemon.log"));
    ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(dir.file("port")); })) << read_file(dir.file("daemon.log"));
    const uint16_t port = static_cast<uint16_t>(std::stoi(read_file(dir.file("port"))));
    const HttpUrl url{"127.0.0.1", port, ""};

    write_file(dir.file("opensm.conf"), "event_plugin_name ibfabric_osm\nevent_plugin_options socket=" + sock +
                                            " heartbeat_ms=500\nforce_log_flush TRUE\n");
    Child opensm({"opensm", "-F", dir.file("opensm.conf"), "-f", dir.file("osm.log"), "-e"},
                 {"IBSIM_SOCKNAME=" + sim, "SIM_HOST=h1", "OSM_TMP_DIR=" + dir.path.string(),
                  "OSM_CACHE_DIR=" + dir.path.string(), "LD_LIBRARY_PATH=" + std::string(IBF_BIN_DIR) + "/../lib",
                  "LD_PRELOAD=" + kUmad2sim},
                 dir.path.string(), dir.file("opensm.out"));

    auto findings = [&] { return json::parse(http_request(url, "GET", "/api/v1/findings").body); };
    ASSERT_TRUE(wait_until([&] { return findings()["summary"].value("rate_mismatch", 0) == 2; }, std::chrono::seconds(40)))
        << findings().dump(2) << "\n" << read_file(dir.file("daemon.log"));

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
    Child cli({std::string(IBF_BIN_DIR) + "/ibfabric", "findings", "--json", "--url",
               "http://127.0.0.1:" + std::to_string(port)},
              {}, dir.path.string(), dir.file("cli.out"));
    int status = 0;
    ASSERT_TRUE(wait_until([&] { return ::waitpid(cli.pid(), &status, WNOHANG) == cli.pid(); }));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const json cj = json::parse(read_file(dir.file("cli.out")));
    EXPECT_EQ(cj["summary"]["rate_mismatch"], 2);

    opensm.kill(SIGTERM);  // opensm's own exit status is not ours to judge
    EXPECT_TRUE(wait_until([&] {
        return json::parse(http_request(url, "GET", "/api/v1/sm").body)["sms"][0]["connected"] == false;
    }));
    EXPECT_EQ(daemon.kill(SIGTERM), 0) << read_file(dir.file("daemon.log"));
    EXPECT_FALSE(std::filesystem::exists(sock));
    ibsim.kill(SIGKILL);
    ::close(console);
}

// The live analysis end to end: ftree configured on a tree ftree refuses (a host on a spine, no
// guid files). OpenSM falls back to minhop; the plugin sends both engine names and the LFTs; the
// daemon, without any topology, serves the routing_fallback finding and the LFT figures.
TEST(ControllerEndToEnd, RoutingFallbackAndLftsReachTheAnalysisApi) {
    if (!have_tools()) GTEST_SKIP() << "ibsim/opensm/umad2sim or the built plugin missing";
    TempDir dir;
    std::random_device rd;
    const std::string sim = "ibfcta" + std::to_string(::getpid()) + "x" + std::to_string(rd() % 100000);
    // 4 spines, 8 leaves x 3 hosts; "hx" on spine0 port 9.
    std::string net;
    for (int s = 0; s < 4; ++s) {
        net += "Switch " + std::to_string(s == 0 ? 9 : 8) + " \"spine" + std::to_string(s) + "\"\n";
        for (int l = 0; l < 8; ++l) net += "[" + std::to_string(l + 1) + "] \"leaf" + std::to_string(l) + "\"[" + std::to_string(5 + s) + "]\n";
        if (s == 0) net += "[9] \"hx\"[1]\n";
        net += "\n";
    }
    for (int l = 0; l < 8; ++l) {
        net += "Switch 8 \"leaf" + std::to_string(l) + "\"\n";
        for (int h = 0; h < 3; ++h) net += "[" + std::to_string(h + 1) + "] \"h" + std::to_string(l * 3 + h) + "\"[1]\n";
        for (int s = 0; s < 4; ++s) net += "[" + std::to_string(5 + s) + "] \"spine" + std::to_string(s) + "\"[" + std::to_string(l + 1) + "]\n";
        net += "\n";
    }
    for (int i = 0; i < 24; ++i) net += "Hca 1 \"h" + std::to_string(i) + "\"\n[1] \"leaf" + std::to_string(i / 3) + "\"[" + std::to_string(i % 3 + 1) + "]\n\n";
    net += "Hca 1 \"hx\"\n[1] \"spine0\"[9]\n";
    write_file(dir.file("net"), net);

    Child ibsim({"ibsim", "-s", "-n", dir.file("net")}, {"IBSIM_SOCKNAME=" + sim}, dir.path.string(), dir.file("ibsim.out"));
    ASSERT_TRUE(wait_until([&] { return read_file(dir.file("ibsim.out")).find("Network simulator ready") != std::string::npos; }))
        << read_file(dir.file("ibsim.out"));
    const std::string sock = dir.file("osm.sock");
    Child daemon({std::string(IBF_BIN_DIR) + "/ibfabricd", "--socket", sock, "--http", "127.0.0.1:0", "--port-file",
                  dir.file("port")},
                 {}, dir.path.string(), dir.file("daemon.log"));
    ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(dir.file("port")); })) << read_file(dir.file("daemon.log"));
    const HttpUrl url{"127.0.0.1", static_cast<uint16_t>(std::stoi(read_file(dir.file("port")))), ""};

    write_file(dir.file("opensm.conf"), "event_plugin_name ibfabric_osm\nevent_plugin_options socket=" + sock +
                                            "\nforce_log_flush TRUE\nrouting_engine ftree\n");
    Child opensm({"opensm", "-F", dir.file("opensm.conf"), "-f", dir.file("osm.log"), "-e"},
                 {"IBSIM_SOCKNAME=" + sim, "SIM_HOST=h0", "OSM_TMP_DIR=" + dir.path.string(),
                  "OSM_CACHE_DIR=" + dir.path.string(), "LD_LIBRARY_PATH=" + std::string(IBF_BIN_DIR) + "/../lib",
                  "LD_PRELOAD=" + kUmad2sim},
                 dir.path.string(), dir.file("opensm.out"));

    auto analysis = [&] { return json::parse(http_request(url, "GET", "/api/v1/analysis").body); };
    ASSERT_TRUE(wait_until([&] { return analysis()["analyzed"] == true; }, std::chrono::seconds(40)))
        << read_file(dir.file("daemon.log")) << read_file(dir.file("osm.log"));
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
    const std::string log = read_file(dir.file("daemon.log"));
    EXPECT_NE(log.find("ROUTING FALLBACK"), std::string::npos) << log;
    opensm.kill(SIGTERM);
    EXPECT_EQ(daemon.kill(SIGTERM), 0) << read_file(dir.file("daemon.log"));
}
