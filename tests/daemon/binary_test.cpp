// The ibfabricd and ibfabric executables: start-up from a config file, SIGHUP/SIGTERM, config
// errors, and `ibfabric status|findings` against a running daemon.
#include <algorithm>
#include <cctype>
#include <set>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ibf/counter_rows.h"
#include "ibf/daemon_fixture.h"
#include "ibf/api.h"
#include "ibf/ha_engine.h"
#include "ibf/dumps.h"
#include "ibf/http_client.h"
#include "ibf/metrics.h"

#include <nlohmann/json.hpp>

extern char** environ;

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

const std::string kDaemon = std::string(IBF_BIN_DIR) + "/ibfabricd";
const std::string kCli = std::string(IBF_BIN_DIR) + "/ibfabric";

// Starts `argv` with stdout/stderr to files; returns the pid.
pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err,
            const std::vector<std::string>& extra_env = {}, const std::string& in = "") {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!in.empty()) posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_store;
    for (char** e = environ; *e; ++e)
        if (std::string(*e).rfind("IBFABRIC_URL=", 0) != 0) env_store.emplace_back(*e);
    for (const auto& e : extra_env) env_store.push_back(e);
    std::vector<char*> env;
    for (auto& e : env_store) env.push_back(e.data());
    env.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), env.data()) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

// Waits up to `timeout` for `pid`; returns its exit code, or -1 (and kills it) on timeout / a signal.
int wait_exit(pid_t pid, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    int status = 0;
    const bool done = wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout);
    if (!done) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct CliRun {
    int code;
    std::string out, err;
};

CliRun run_cli(const TempDir& dir, const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv{kCli};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_t pid = spawn(argv, dir.file("cli.out"), dir.file("cli.err"), env);
    EXPECT_GT(pid, 0);
    CliRun r{wait_exit(pid), "", ""};
    r.out = read_file(dir.file("cli.out"));
    r.err = read_file(dir.file("cli.err"));
    return r;
}

class ControllerBinary : public ::testing::Test {
protected:
    TempDir dir;
    std::string sock = dir.file("d.sock");
    std::string topology = dir.file("plan.ibnetdiscover");
    pid_t pid = -1;
    uint16_t port = 0;

    void SetUp() override { write_file(topology, write_ibnetdiscover(small_fabric())); }
    void TearDown() override {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    void start_daemon(const std::string& config_text) {
        write_file(dir.file("ibfabricd.yaml"), config_text);
        pid = spawn({kDaemon, "--config", dir.file("ibfabricd.yaml"), "--socket", sock, "--http", "127.0.0.1:0",
                     "--port-file", dir.file("port"), "--log-level", "debug"},
                    dir.file("d.out"), dir.file("d.err"));
        ASSERT_GT(pid, 0);
        ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(dir.file("port")); }))
            << read_file(dir.file("d.err"));
        port = static_cast<uint16_t>(std::stoi(read_file(dir.file("port"))));
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
    json get(const std::string& path) {
        return json::parse(http_request(HttpUrl{"127.0.0.1", port, ""}, "GET", path).body);
    }
};

}  // namespace

TEST_F(ControllerBinary, FindingsCliAgainstARunningDaemonThenSigtermCleansUp) {
    start_daemon("topology: plan.ibnetdiscover\nsocket_mode: \"0600\"\n");
    struct stat st {};
    ASSERT_EQ(::stat(sock.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    // Before any snapshot: no data is not "no findings".
    const std::string no_data =
        "ibfabric: no data: no snapshot received yet (is OpenSM running with the ibfabric plugin? docs/plugin.md)\n";
    CliRun none = run_cli(dir, {"findings", "--url", url()});
    EXPECT_EQ(none.code, 3) << none.err;
    EXPECT_EQ(none.out, "");
    EXPECT_EQ(none.err, no_data);
    CliRun none_json = run_cli(dir, {"findings", "--json", "--url", url()});
    EXPECT_EQ(none_json.code, 3);
    EXPECT_EQ(json::parse(none_json.out)["data_state"], "no_data");
    CliRun none_status = run_cli(dir, {"status", "--url", url()});
    EXPECT_EQ(none_status.code, 3);
    EXPECT_EQ(none_status.err, no_data);

    Fabric actual = small_fabric();
    cross_cables(actual, synth_node(actual, "leaf0002"), 3, 4);
    UnixClient plugin(sock);
    ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
    ASSERT_TRUE(plugin.send(snapshot(actual, kMasterGuid, SmState::Master, 5)));
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["sweep_seq"] == 5; }));

    CliRun j = run_cli(dir, {"findings", "--json", "--url", url()});
    EXPECT_EQ(j.code, 1) << j.err;
    json parsed = json::parse(j.out);
    EXPECT_EQ(parsed["summary"]["miswired"], 1);  // a crossed pair is one swap (docs/findings.md)
    EXPECT_EQ(parsed["findings"].size(), 1u);

    CliRun text = run_cli(dir, {"findings"}, {"IBFABRIC_URL=" + url()});  // URL from the environment
    EXPECT_EQ(text.code, 1) << text.err;
    EXPECT_NE(text.out.find("1 finding: 1 miswired"), std::string::npos) << text.out;

    CliRun status = run_cli(dir, {"status", "--url", url()});
    EXPECT_EQ(status.code, 1) << status.err;
    EXPECT_NE(status.out.find("MASTER"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("findings: 1"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("\ndata:     fresh (last confirmed 20"), std::string::npos) << status.out;
    CliRun sj = run_cli(dir, {"status", "--json", "--url", url()});
    EXPECT_EQ(json::parse(sj.out)["fabric"]["last_sweep_seq"], 5);

    // SIGHUP reloads (here: the same plan) and keeps serving.
    ASSERT_EQ(::kill(pid, SIGHUP), 0);
    ASSERT_TRUE(wait_until([&] { return read_file(dir.file("d.err")).find("topology reloaded") != std::string::npos; }));
    EXPECT_EQ(get("/api/v1/findings")["summary"]["miswired"], 1);

    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    EXPECT_EQ(wait_exit(pid, std::chrono::seconds(5)), 0) << read_file(dir.file("d.err"));
    pid = -1;
    EXPECT_FALSE(std::filesystem::exists(sock));
    EXPECT_NE(read_file(dir.file("d.err")).find("SIGTERM: stopping"), std::string::npos);

    // Nothing listens any more: exit 3.
    CliRun gone = run_cli(dir, {"findings", "--json", "--url", url()});
    EXPECT_EQ(gone.code, 3) << gone.out;
    EXPECT_NE(gone.err.find("unreachable"), std::string::npos) << gone.err;
}

TEST_F(ControllerBinary, CliUsageErrors) {
    EXPECT_EQ(run_cli(dir, {"findings", "--url", "ftp://x"}).code, 2);
    EXPECT_EQ(run_cli(dir, {"status", "--url", "http://:80"}).code, 2);
    EXPECT_EQ(run_cli(dir, {"findings", "--bogus"}).code, 2);
}

TEST_F(ControllerBinary, ConfigErrorNamesFileLineAndExits2) {
    write_file(dir.file("bad.yaml"), "socket: /tmp/x.sock\nhttp: 127.0.0.1:0\nsokcet_mode: \"0660\"\n");
    pid_t p = spawn({kDaemon, "--config", dir.file("bad.yaml")}, dir.file("o"), dir.file("e"));
    EXPECT_EQ(wait_exit(p), 2);
    EXPECT_NE(read_file(dir.file("e")).find(dir.file("bad.yaml") + ":3:1: unknown key 'sokcet_mode'"),
              std::string::npos)
        << read_file(dir.file("e"));

    write_file(dir.file("plan.yaml"), "version: 1\ntiers:\n  - name: leaf\n    count: [oops\n");
    p = spawn({kDaemon, "--socket", sock, "--http", "127.0.0.1:0", "--topology", dir.file("plan.yaml")},
              dir.file("o"), dir.file("e"));
    EXPECT_EQ(wait_exit(p), 2);
    EXPECT_NE(read_file(dir.file("e")).find(dir.file("plan.yaml") + ":"), std::string::npos) << read_file(dir.file("e"));
    EXPECT_FALSE(std::filesystem::exists(sock));
}

TEST_F(ControllerBinary, StaleDataExits3WithItsReason) {
    start_daemon("topology: plan.ibnetdiscover\nhealth:\n  stale_after_s: 2\n");
    UnixClient plugin(sock);
    ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
    ASSERT_TRUE(plugin.send(snapshot(small_fabric(), kMasterGuid, SmState::Master, 9)));
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["sweep_seq"] == 9; }));
    CliRun fresh = run_cli(dir, {"findings", "--url", url()});
    EXPECT_EQ(fresh.code, 0) << fresh.err;
    EXPECT_EQ(fresh.out, "no findings\n");
    // No heartbeat confirms sweep 9: after 2 s it is stale.
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["data_state"] == "stale"; }, std::chrono::seconds(5)));
    CliRun stale = run_cli(dir, {"findings", "--url", url()});
    EXPECT_EQ(stale.code, 3);
    EXPECT_EQ(stale.out, "no findings\n");  // the last findings are still shown, then why they may be old
    EXPECT_EQ(stale.err.rfind("ibfabric: stale: the fabric (sweep 9 from SM 0x0002c90300000001) was last confirmed ", 0),
              0u)
        << stale.err;
    EXPECT_EQ(std::count(stale.err.begin(), stale.err.end(), '\n'), 1);
    EXPECT_EQ(run_cli(dir, {"status", "--url", url()}).code, 3);
}

// token_for_reads: `ibfabric findings|status` send the bearer token from --token-file or
// $IBFABRIC_TOKEN; without one the daemon's 401 comes with what to do (exit 3); an unreadable token
// file is bad input (exit 2) naming the file.
TEST_F(ControllerBinary, FindingsAndStatusSendTheTokenToADaemonThatWantsItForReads) {
    const std::string token_file = dir.file("api.token");
    write_file(token_file, "s3cret-read-token\n");
    ASSERT_EQ(::chmod(token_file.c_str(), 0600), 0);
    start_daemon("topology: plan.ibnetdiscover\ntoken_file: " + token_file + "\ntoken_for_reads: true\n");
    UnixClient plugin(sock);
    ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
    ASSERT_TRUE(plugin.send(snapshot(small_fabric(), kMasterGuid, SmState::Master, 7)));
    const HttpUrl u{"127.0.0.1", port, ""};
    ASSERT_TRUE(wait_until([&] {
        HttpResult r = http_request(u, "GET", "/api/v1/findings", "", "Bearer s3cret-read-token");
        return r.status == 200 && json::parse(r.body)["sweep_seq"] == 7;
    }));

    CliRun none = run_cli(dir, {"findings", "--url", url()});
    EXPECT_EQ(none.code, 3);
    EXPECT_EQ(none.err, "ibfabric: " + url() + "/api/v1/findings answered 401: \"missing or wrong bearer token\" (this daemon "
                        "wants a token for reads: --token-file FILE or $IBFABRIC_TOKEN)\n");
    CliRun with_file = run_cli(dir, {"findings", "--url", url(), "--token-file", token_file});
    EXPECT_EQ(with_file.code, 0) << with_file.err;
    EXPECT_EQ(with_file.out, "no findings\n");
    CliRun status = run_cli(dir, {"status", "--url", url(), "--token-file", token_file});
    EXPECT_EQ(status.code, 0) << status.err;
    EXPECT_NE(status.out.find("(sweep 7 at "), std::string::npos) << status.out;
    CliRun env = run_cli(dir, {"status", "--json", "--url", url()}, {"IBFABRIC_TOKEN=s3cret-read-token"});
    EXPECT_EQ(env.code, 0) << env.err;
    EXPECT_EQ(json::parse(env.out)["fabric"]["last_sweep_seq"], 7);
    CliRun wrong = run_cli(dir, {"findings", "--url", url()}, {"IBFABRIC_TOKEN=guess"});
    EXPECT_EQ(wrong.code, 3);
    EXPECT_NE(wrong.err.find("answered 401: \"missing or wrong bearer token\" (the token was refused)\n"), std::string::npos)
        << wrong.err;
    CliRun missing = run_cli(dir, {"findings", "--url", url(), "--token-file", dir.file("nope.token")});
    EXPECT_EQ(missing.code, 2);
    EXPECT_EQ(missing.err.rfind("ibfabric: " + dir.file("nope.token"), 0), 0u) << missing.err;
}

namespace {

bool executable(const std::string& p) { return ::access(p.c_str(), X_OK) == 0; }

// Runs argv with stdin from `in`; returns the exit code, stdout+stderr in `out`.
int run_tool(const TempDir& dir, const std::vector<std::string>& argv, const std::string& in, std::string& out) {
    pid_t p = spawn(argv, dir.file("tool.out"), dir.file("tool.out"), {}, in);
    if (p <= 0) return -1;
    const int rc = wait_exit(p);
    out = read_file(dir.file("tool.out"));
    return rc;
}

}  // namespace

// The daemon's /metrics with per-link series and findings, as Prometheus' own tools read it.
TEST_F(ControllerBinary, MetricsPassPromtoolAndThePythonClientParser) {
    start_daemon("topology: plan.ibnetdiscover\n");
    Fabric actual = small_fabric();
    cross_cables(actual, synth_node(actual, "leaf0002"), 3, 4);
    UnixClient plugin(sock);
    ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
    ASSERT_TRUE(plugin.send(wire::Counters{.snapshots_taken = 3, .last_copy_us = 850, .last_send_lag_ms = 12}));
    ASSERT_TRUE(plugin.send(snapshot(actual, kMasterGuid, SmState::Master, 5)));
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["sweep_seq"] == 5; }));
    const HttpResult r = http_request(HttpUrl{"127.0.0.1", port, ""}, "GET", "/metrics");
    ASSERT_EQ(r.status, 200);
    const std::string metrics = write_file(dir.file("metrics.txt"), r.body);
    ASSERT_NE(r.body.find("\nibfabric_link_rate_bytes_per_second{"), std::string::npos);
    size_t families = 0, samples = 0;
    for (size_t p = 0; p < r.body.size();) {
        const size_t e = r.body.find('\n', p);
        const std::string line = r.body.substr(p, e - p);
        families += line.rfind("# TYPE ", 0) == 0;
        samples += !line.empty() && line[0] != '#';
        p = e + 1;
    }

    bool ran = false;
    if (!executable("/usr/bin/promtool")) {
        std::cout << "[ SKIPPED  ] promtool: /usr/bin/promtool not installed (Debian package prometheus)\n";
    } else {
        std::string out;
        EXPECT_EQ(run_tool(dir, {"/usr/bin/promtool", "check", "metrics"}, metrics, out), 0) << out;
        EXPECT_EQ(out, "");  // no lint problem at all
        ran = true;
    }
    std::string probe;
    if (!executable("/usr/bin/python3") ||
        run_tool(dir, {"/usr/bin/python3", "-c", "import prometheus_client.parser"}, "/dev/null", probe) != 0) {
        std::cout << "[ SKIPPED  ] python parser: python3-prometheus-client not installed\n";
    } else {
        const char* script =
            "import sys\n"
            "from prometheus_client.parser import text_string_to_metric_families as parse\n"
            "fams = list(parse(sys.stdin.read()))\n"
            "print(len(fams), sum(len(f.samples) for f in fams))\n";
        std::string out;
        ASSERT_EQ(run_tool(dir, {"/usr/bin/python3", "-c", script}, metrics, out), 0) << out;
        EXPECT_EQ(out, std::to_string(families) + " " + std::to_string(samples) + "\n");
        ran = true;
    }
    if (!ran) GTEST_SKIP() << "neither promtool nor python3-prometheus-client is installed (scripts/install-deps.sh)";
}

// config/monitoring/: promtool checks the scrape config and the rules and runs the rule tests; every
// ibfabric_* name in the rules and the dashboard is a family a real daemon exports.
TEST_F(ControllerBinary, ShippedMonitoringConfigIsValidAndNamesRealMetrics) {
    if (!executable("/usr/bin/promtool"))
        GTEST_SKIP() << "/usr/bin/promtool not installed (Debian package prometheus, scripts/install-deps.sh)";
    const std::string mon = std::string(IBF_SOURCE_DIR) + "/config/monitoring/";
    std::string out;
    EXPECT_EQ(run_tool(dir, {"/usr/bin/promtool", "check", "rules", mon + "ibfabric.rules.yml"}, "/dev/null", out), 0) << out;
    EXPECT_EQ(run_tool(dir, {"/usr/bin/promtool", "test", "rules", mon + "ibfabric.rules.test.yml"}, "/dev/null", out), 0)
        << out;
    EXPECT_EQ(run_tool(dir, {"/usr/bin/promtool", "check", "config", mon + "prometheus.yml"}, "/dev/null", out), 0) << out;

    start_daemon("topology: plan.ibnetdiscover\n");
    // A master with a fabric and one perfmgr batch: the per-link and port counter families exist.
    const Fabric f = small_fabric();
    UnixClient plugin(sock);
    ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
    ASSERT_TRUE(plugin.send(snapshot(f, kMasterGuid, SmState::Master, 3)));
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["sweep_seq"] == 3; }));
    wire::PortCounters pc = counters_for_linked_ports(f, 0);
    pc.ports.resize(std::min(pc.ports.size(), wire::kMaxPortCounterRows));
    ASSERT_TRUE(plugin.send(pc));
    std::string metrics;
    ASSERT_TRUE(wait_until([&] {
        metrics = http_request(HttpUrl{"127.0.0.1", port, ""}, "GET", "/metrics").body;
        return metrics.find("# TYPE ibfabric_link_symbol_errors_total counter") != std::string::npos;
    })) << metrics;
    std::set<std::string> families;
    for (size_t p = metrics.find("# TYPE "); p != std::string::npos; p = metrics.find("# TYPE ", p + 1))
        families.insert(metrics.substr(p + 7, metrics.find(' ', p + 7) - p - 7));
    ASSERT_GT(families.size(), 40u);
    // The HA agent's families (ibfabric_ha_*) appear only with `ha:` configured: take them from
    // the one family table (metric_family_names() lists every family, kWithHa ones included).
    for (const std::string& name : metric_family_names())
        if (name.rfind("ibfabric_ha_", 0) == 0) families.insert(name);
    const json dash = json::parse(read_file(mon + "grafana-dashboard.json"));
    EXPECT_EQ(dash["panels"].size(), 16u);
    for (const std::string file : {"ibfabric.rules.yml", "grafana-dashboard.json"}) {
        const std::string text = read_file(mon + file);
        size_t names = 0;
        for (size_t p = text.find("ibfabric_"); p != std::string::npos; p = text.find("ibfabric_", p + 1)) {
            size_t e = p;
            while (e < text.size() && (std::islower(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
            const std::string name = text.substr(p, e - p);
            if (p > 0 && (std::isalnum(static_cast<unsigned char>(text[p - 1])) || text[p - 1] == '-')) continue;
            EXPECT_TRUE(families.count(name)) << file << " names " << name << ", which the daemon does not export";
            ++names;
        }
        EXPECT_GT(names, 5u) << file;
    }
}
