// The history through ibfabricd (in-process, real sockets): per-sweep change rows, GET
// /api/v1/history/changes and /diff, POST /api/v1/accept with its token and scope, and the change
// list continuing across a daemon restart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <thread>

#include "ibf/daemon_fixture.h"
#include "ibf/analysis.h"
#include "ibf/daemon.h"
#include "ibf/http_client.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"
#include "ibf/plan_yaml.h"

namespace ibf {
namespace {

using nlohmann::json;
using namespace ibf::test;

class HistoryDaemon : public ::testing::Test {
protected:
    TempDir dir;
    std::string plan_path = dir.file("plan.yaml");
    std::string plan_text;
    DaemonConfig cfg;
    std::unique_ptr<Daemon> daemon;
    std::thread thread;
    HttpUrl url;

    void SetUp() override {
        const Fabric f = small_fabric();
        plan_text = plan_yaml_text(infer_plan(f, analyze(f), "test").doc);
        write_file(plan_path, plan_text);
        write_file(dir.file("token"), "s3cret-token\n");
        ::chmod(dir.file("token").c_str(), 0600);
        cfg.socket_path = dir.file("ibfabricd.sock");
        cfg.http_bind = "127.0.0.1";
        cfg.http_port = 0;
        cfg.topology = plan_path;
        cfg.token_file = dir.file("token");
        cfg.history_db = dir.file("history.db");
    }
    void start() {
        daemon = std::make_unique<Daemon>(DaemonOptions{.config = cfg});
        thread = std::thread([this] { daemon->run(); });
        url = HttpUrl{"127.0.0.1", daemon->http_port(), ""};
    }
    void stop() {
        daemon->stop();
        thread.join();
        daemon.reset();
    }
    void TearDown() override {
        if (daemon) stop();
    }
    HttpResult call(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& auth = "") {
        return http_request(url, method, path, body, auth);
    }
    json get(const std::string& path) {
        HttpResult r = call("GET", path);
        EXPECT_EQ(r.status, 200) << path << ": " << r.body;
        return json::parse(r.body);
    }
    size_t rows() { return get("/api/v1/history/changes?limit=100")["rows"].get<size_t>(); }
    // The master's plugin sends `fabrics` as sweeps 1, 2, ...; returns once each is a history row.
    void sweeps(const std::vector<Fabric>& fabrics) {
        UnixClient plugin(cfg.socket_path);
        ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
        for (size_t i = 0; i < fabrics.size(); ++i) {
            ASSERT_TRUE(plugin.send(snapshot(fabrics[i], kMasterGuid, SmState::Master, i + 1)));
            ASSERT_TRUE(wait_until([&] { return rows() == i + 1; }));
        }
    }
};

Fabric without_cable() {
    Fabric f = small_fabric();
    remove_cable(f, synth_node(f, "leaf0001"), 5);
    return f;
}

TEST_F(HistoryDaemon, ChangesDiffAcceptAndRestart) {
    start();
    ASSERT_NO_FATAL_FAILURE(sweeps({small_fabric(), without_cable()}));
    json page = get("/api/v1/history/changes?limit=10&detail=1");
    ASSERT_EQ(page["sweeps"].size(), 2u);
    const json& s2 = page["sweeps"][0];
    EXPECT_EQ(s2["sweep_seq"], 2);
    EXPECT_EQ(s2["summary"], "1 link removed: leaf0001/5 -- spine0001/1 removed (was 4xHDR MTU 4096)");
    EXPECT_EQ(s2["findings_opened"], 1);
    EXPECT_EQ(s2["opened"], json({"missing_link leaf0001/5 spine0001/1"}));
    EXPECT_EQ(page["sweeps"][1]["summary"], "first recorded fabric: 14 nodes, 16 links");

    // diff in the findings format; references by id and by time.
    json d = get("/api/v1/history/diff?from=1&to=latest");
    EXPECT_EQ(d["change_summary"], s2["summary"]);
    ASSERT_EQ(d["findings"].size(), 1u);
    EXPECT_EQ(d["findings"][0]["kind"], "missing_link");
    EXPECT_EQ(d["summary"], json({{"missing_link", 1}}));
    EXPECT_EQ(get("/api/v1/history/diff?from=2&to=@" + std::to_string(s2["unix_ms"].get<int64_t>()))["changes"].size(), 0u);
    EXPECT_EQ(call("GET", "/api/v1/history/diff?from=yesterday").status, 400);
    EXPECT_EQ(call("GET", "/api/v1/history/diff?from=99").status, 404);
    EXPECT_EQ(call("GET", "/api/v1/history/diff").status, 400);
    EXPECT_EQ(call("GET", "/api/v1/history/changes?since=41").status, 400);
    EXPECT_EQ(call("POST", "/api/v1/history/changes").status, 405);

    // accept: token, scope, backup, re-check.
    EXPECT_EQ(call("POST", "/api/v1/accept", "{}").status, 401);
    EXPECT_EQ(call("POST", "/api/v1/accept", "{}", "Bearer wrong").status, 401);
    HttpResult outside = call("POST", "/api/v1/accept", R"({"scope": ["leaf0002"]})", "Bearer s3cret-token");
    EXPECT_EQ(outside.status, 409) << outside.body;
    EXPECT_EQ(read_file(plan_path), plan_text) << "a refused accept writes nothing";
    HttpResult ok = call("POST", "/api/v1/accept", R"({"scope": ["leaf000*"]})", "Bearer s3cret-token");
    ASSERT_EQ(ok.status, 200) << ok.body;
    json a = json::parse(ok.body);
    EXPECT_EQ(a["backup"], plan_path + ".1");
    EXPECT_EQ(a["differences"], 1);
    EXPECT_EQ(read_file(plan_path + ".1"), plan_text);
    EXPECT_NO_THROW(parse_plan_yaml(read_file(plan_path), plan_path));
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["findings"].empty(); }))
        << "the accepted plan is the fabric: the re-check is clean";
    EXPECT_EQ(rows(), 2u) << "a re-check is not a new sweep";

    // Restart: the next sweep is compared with the last recorded one.
    stop();
    start();
    {
        UnixClient plugin(cfg.socket_path);
        ASSERT_TRUE(plugin.send(hello(kMasterGuid, SmState::Master)));
        ASSERT_TRUE(plugin.send(snapshot(small_fabric(), kMasterGuid, SmState::Master, 3)));
        ASSERT_TRUE(wait_until([&] { return rows() == 3; }));
    }
    json s3 = get("/api/v1/history/changes?limit=1&detail=1")["sweeps"][0];
    EXPECT_EQ(s3["summary"], "1 link added: leaf0001/5 -- spine0001/1 added (4xHDR MTU 4096)");
    EXPECT_EQ(s3["closed"], json({"missing_link leaf0001/5 spine0001/1"}));
}

// A planned cable that was pulled and comes back is "restored", not a new unexpected_link.
TEST_F(HistoryDaemon, APlannedCableThatComesBackIsRestored) {
    start();
    ASSERT_NO_FATAL_FAILURE(sweeps({without_cable(), small_fabric()}));
    json d = get("/api/v1/history/diff?from=1&to=2");
    ASSERT_EQ(d["changes"].size(), 1u) << d.dump();
    EXPECT_EQ(d["changes"][0]["kind"], "link_added");
    EXPECT_EQ(d["changes"][0]["restored"], true);
    EXPECT_EQ(d["changes"][0]["text"], "leaf0001/5 -- spine0001/1 added (4xHDR MTU 4096) (restored: as planned)");
    EXPECT_TRUE(d["findings"].empty()) << d.dump();  // no "unexpected_link ... is new"
}

struct CliRun {
    int code = -1;
    std::string out, err;
};

// Runs build/bin/ibfabric with `args` (fork + execv, output to files in `dir`).
CliRun ibfabric(const TempDir& dir, std::vector<std::string> args) {
    args.insert(args.begin(), std::string(IBF_BIN_DIR) + "/ibfabric");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = dir.file("cli.out"), err = dir.file("cli.err");
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(o, 1);
        ::dup2(e, 2);
        ::unsetenv("IBFABRIC_TOKEN");
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
}

TEST_F(HistoryDaemon, CliHistoryDiffAcceptTextJsonAndExitCodes) {
    start();
    ASSERT_NO_FATAL_FAILURE(sweeps({small_fabric(), without_cable()}));
    const std::string u = "http://127.0.0.1:" + std::to_string(daemon->http_port());
    CliRun h = ibfabric(dir, {"history", "--url", u});
    EXPECT_EQ(h.code, 1) << h.err;
    EXPECT_NE(h.out.find("#2  "), std::string::npos) << h.out;
    EXPECT_NE(h.out.find(" findings (+1 -0)  1 link removed: leaf0001/5 -- spine0001/1 removed (was 4xHDR MTU 4096)\n"),
              std::string::npos) << h.out;
    CliRun hj = ibfabric(dir, {"history", "--json", "--limit", "1", "--url", u});
    EXPECT_EQ(hj.code, 1);
    EXPECT_EQ(json::parse(hj.out)["sweeps"][0]["by_kind"], json({{"link_removed", 1}}));
    CliRun bad_since = ibfabric(dir, {"history", "--since", "tuesday", "--url", u});
    EXPECT_EQ(bad_since.code, 2);
    EXPECT_EQ(bad_since.err, "ibfabric: --since 'tuesday' is not a time: 2026-12-01T03:00:00Z, @unix_ms, or -30m/-2h/-1d\n");

    CliRun d = ibfabric(dir, {"diff", "1", "--url", u});
    EXPECT_EQ(d.code, 1) << d.err;
    EXPECT_EQ(d.out.rfind("changes from #1 (sweep 1, ", 0), 0u) << d.out;
    EXPECT_NE(d.out.find("leaf0001/5 -- spine0001/1 is gone"), std::string::npos) << d.out;
    CliRun dj = ibfabric(dir, {"diff", "1", "2", "--json", "--url", u});
    EXPECT_EQ(dj.code, 1);
    EXPECT_EQ(json::parse(dj.out)["summary"], json({{"missing_link", 1}}));
    EXPECT_EQ(ibfabric(dir, {"diff", "2", "latest", "--url", u}).code, 0) << "no changes";
    // #N as `history` prints it. A time before the history began (`-1h` on a history younger than an
    // hour; these sweeps are stamped 2025-11-30, so -4000d is before them): from its first sweep.
    CliRun hash = ibfabric(dir, {"diff", "#1", "latest", "--url", u});
    EXPECT_EQ(hash.code, 1) << hash.err;
    EXPECT_EQ(hash.out.rfind("changes from #1 (sweep 1, ", 0), 0u) << hash.out;
    CliRun hour = ibfabric(dir, {"diff", "-4000d", "--url", u});
    EXPECT_EQ(hour.code, 1) << hour.err;
    EXPECT_EQ(hour.out.rfind("changes from #1 (sweep 1, ", 0), 0u) << hour.out;
    EXPECT_NE(hour.out.find("  (from: no sweep at or before -4000d: from the history's first sweep)\n"), std::string::npos)
        << hour.out;
    EXPECT_NE(hour.out.find("leaf0001/5 -- spine0001/1 is gone"), std::string::npos) << hour.out;
    CliRun missing = ibfabric(dir, {"diff", "99", "--url", u});
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.err.find("from: the history has no row 99"), std::string::npos) << missing.err;
    EXPECT_EQ(ibfabric(dir, {"diff", "yesterday", "--url", u}).code, 2);
    EXPECT_EQ(ibfabric(dir, {"diff", "1", "--url", "http://127.0.0.1:1"}).code, 3);

    CliRun no_token = ibfabric(dir, {"accept", "--url", u});
    EXPECT_EQ(no_token.code, 2);
    EXPECT_EQ(no_token.err, "ibfabric: accept needs the daemon's token: --token-file F or $IBFABRIC_TOKEN\n");
    write_file(dir.file("wrong"), "nope\n");
    EXPECT_EQ(ibfabric(dir, {"accept", "--token-file", dir.file("wrong"), "--url", u}).code, 2);
    CliRun outside = ibfabric(dir, {"accept", "--scope", "spine*", "--token-file", dir.file("token"), "--url", u});
    EXPECT_EQ(outside.code, 0) << "the removed cable has an end on spine0001: inside the scope. " << outside.err;
    EXPECT_NE(outside.out.find("previous plan kept as " + plan_path + ".1"), std::string::npos) << outside.out;
    CliRun again = ibfabric(dir, {"accept", "--scope", "node*", "--token-file", dir.file("token"), "--url", u, "--json"});
    EXPECT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(json::parse(again.out)["backup"], plan_path + ".2");
    EXPECT_EQ(json::parse(again.out)["differences"], 0);

    for (const char* cmd : {"history", "diff", "accept"}) {
        CliRun help = ibfabric(dir, {cmd, "--help"});
        EXPECT_EQ(help.code, 0);
        EXPECT_NE(help.out.find("Example"), std::string::npos) << cmd;
        EXPECT_NE(help.out.find("Exit status: 0"), std::string::npos) << cmd;
    }
}

}  // namespace
}  // namespace ibf
