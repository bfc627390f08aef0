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
#include "ibf/dumps.h"
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

// Cables a new host, newhost01 mlx5_0, to the first switch port of `f` that is free, at the rate of
// that switch's other ports; returns the switch's name and the port (0: none free).
std::pair<std::string, int> add_host(Fabric& f) {
    NodeId leaf = kNoNode;
    int free_port = 0;
    for (NodeId n = 0; n < f.size() && !free_port; ++n)
        for (int p = 1; f.node(n).type == NodeType::Switch && p <= f.node(n).num_ports() && !free_port; ++p)
            if (!f.node(n).port(p)->linked()) leaf = n, free_port = p;
    if (!free_port) return {"", 0};
    Node h;
    h.type = NodeType::CA;
    h.guid = 0x00ab00000000e001;
    h.description = "newhost01 mlx5_0";
    const NodeId id = f.add_node(h, 1);
    f.connect(leaf, free_port, id, 1);
    const Port model = *f.node(leaf).port(free_port == 1 ? 2 : 1);  // a cabled port of the same switch
    for (Port* p : {f.node(id).port(1), f.node(leaf).port(free_port)}) {
        p->width_active = model.width_active;
        p->speed_active = model.speed_active;
        p->width_supported = model.width_supported;
        p->speed_supported = model.speed_supported;
        p->mtu_active = model.mtu_active;
        p->state = model.state;
        p->phys = model.phys;
    }
    f.finalize();
    return {f.node(leaf).name, free_port};
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

    // accept: token, scope; the missing cable is a fault (severity error) of the compact form.
    EXPECT_EQ(call("POST", "/api/v1/accept", "{}").status, 401);
    EXPECT_EQ(call("POST", "/api/v1/accept", "{}", "Bearer wrong").status, 401);
    HttpResult outside = call("POST", "/api/v1/accept", R"({"scope": ["leaf0002"]})", "Bearer s3cret-token");
    EXPECT_EQ(outside.status, 409) << outside.body;
    EXPECT_NE(json::parse(outside.body)["error"].get<std::string>().find("nothing in the scope differs from the plan"),
              std::string::npos)
        << outside.body;
    HttpResult fault = call("POST", "/api/v1/accept", R"({"scope": ["leaf000*"]})", "Bearer s3cret-token");
    ASSERT_EQ(fault.status, 409) << fault.body;
    json fj = json::parse(fault.body);
    ASSERT_EQ(fj["refused"].size(), 1u) << fault.body;
    EXPECT_EQ(fj["refused"][0]["kind"], "missing_link");
    EXPECT_NE(fj["refused"][0]["why"].get<std::string>().find("--accept-kind missing_link"), std::string::npos) << fault.body;
    HttpResult compact =
        call("POST", "/api/v1/accept", R"({"scope": ["leaf000*"], "accept_kind": ["missing_link"]})", "Bearer s3cret-token");
    ASSERT_EQ(compact.status, 409) << compact.body;
    EXPECT_NE(compact.body.find("made by the compact form"), std::string::npos) << compact.body;
    EXPECT_EQ(call("POST", "/api/v1/accept", R"({"accept_kind": ["no_such_kind"]})", "Bearer s3cret-token").status, 400);
    EXPECT_EQ(read_file(plan_path), plan_text) << "a refused accept writes nothing";
    EXPECT_FALSE(std::filesystem::exists(plan_path + ".1"));

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

// Issue 20 item 6: accept edits the plan. A new host is one cables: entry; the dry run answers the
// diff and writes nothing; the write keeps every other byte, keeps the old plan, and re-checks clean.
TEST_F(HistoryDaemon, AcceptAddsANewHostToThePlanWithADiffFirst) {
    Fabric f = small_fabric();
    const auto [sw, free_port] = add_host(f);
    ASSERT_NE(free_port, 0);
    start();
    ASSERT_NO_FATAL_FAILURE(sweeps({f}));
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["findings"].size() == 1u; }));

    HttpResult dry = call("POST", "/api/v1/accept", R"({"scope": ["newhost*"], "dry_run": true})", "Bearer s3cret-token");
    ASSERT_EQ(dry.status, 200) << dry.body;
    json d = json::parse(dry.body);
    EXPECT_EQ(d["accepted"], false);
    EXPECT_EQ(d["dry_run"], true);
    const std::string added = "  - {a: \"newhost01:mlx5_0/1\", b: \"" + sw + "/" + std::to_string(free_port) + "\"}";
    EXPECT_NE(d["diff"].get<std::string>().find("\n+" + added + "\n"), std::string::npos) << d["diff"];
    EXPECT_EQ(read_file(plan_path), plan_text) << "a dry run writes nothing";

    HttpResult ok = call("POST", "/api/v1/accept", R"({"scope": ["newhost*"]})", "Bearer s3cret-token");
    ASSERT_EQ(ok.status, 200) << ok.body;
    json a = json::parse(ok.body);
    EXPECT_EQ(a["accepted"], true);
    EXPECT_EQ(a["backup"], plan_path + ".1");
    EXPECT_EQ(a["findings_after"], 0);
    EXPECT_EQ(read_file(plan_path + ".1"), plan_text);
    const std::string now = read_file(plan_path);
    EXPECT_EQ(now.substr(0, plan_text.size()), plan_text) << "the plan had no cables: section: it is appended";
    EXPECT_NE(now.find("\ncables:\n  # accepted from ibfabricd: sweep 1 of SM "), std::string::npos) << now;
    EXPECT_NE(now.find(added + "\n"), std::string::npos) << now;
    ASSERT_TRUE(wait_until([&] { return get("/api/v1/findings")["findings"].empty(); }))
        << "the accepted plan has the host: the re-check is clean";
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
    CliRun fault = ibfabric(dir, {"accept", "--scope", "spine*", "--token-file", dir.file("token"), "--url", u});
    EXPECT_EQ(fault.code, 1) << "the removed cable has an end on spine0001: inside the scope, and a fault. " << fault.err;
    EXPECT_NE(fault.err.find("--accept-kind missing_link"), std::string::npos) << fault.err;
    EXPECT_NE(fault.out.find("not adopted, so nothing is written (1)\n  missing_link  no cable between leaf0001/5"),
              std::string::npos)
        << fault.out;
    CliRun outside = ibfabric(dir, {"accept", "--scope", "node*", "--token-file", dir.file("token"), "--url", u, "--json"});
    EXPECT_EQ(outside.code, 1) << outside.err;
    EXPECT_NE(json::parse(outside.out)["error"].get<std::string>().find("nothing in the scope differs"), std::string::npos);
    EXPECT_EQ(ibfabric(dir, {"accept", "--accept-kind", "typo", "--token-file", dir.file("token"), "--url", u}).code, 2);
    EXPECT_EQ(read_file(plan_path), plan_text);

    // Offline, the same edit: a plan file and a dump with a new host. --dry-run shows the diff and
    // writes nothing; --yes writes and keeps the previous plan.
    Fabric grown = small_fabric();
    const auto [sw, port] = add_host(grown);
    ASSERT_NE(port, 0);
    write_file(dir.file("now.txt"), write_ibnetdiscover(grown));
    const std::string offline = dir.file("offline.yaml");
    write_file(offline, plan_text);
    CliRun dry = ibfabric(dir, {"accept", "--plan", offline, "--actual", dir.file("now.txt"), "--scope", "newhost01", "--dry-run"});
    EXPECT_EQ(dry.code, 0) << dry.err;
    const std::string added = "+  - {a: \"newhost01:mlx5_0/1\", b: \"" + sw + "/" + std::to_string(port) + "\"}\n";
    EXPECT_NE(dry.out.find(added), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find("dry run: nothing written; write it with --yes"), std::string::npos) << dry.out;
    EXPECT_EQ(read_file(offline), plan_text);
    CliRun wrote = ibfabric(dir, {"accept", "--plan", offline, "--actual", dir.file("now.txt"), "--yes", "--json"});
    EXPECT_EQ(wrote.code, 0) << wrote.err;
    EXPECT_EQ(json::parse(wrote.out)["backup"], offline + ".1");
    EXPECT_EQ(json::parse(wrote.out)["findings_after"], 0);
    EXPECT_EQ(read_file(offline + ".1"), plan_text);
    EXPECT_EQ(read_file(offline).substr(0, plan_text.size()), plan_text);
    CliRun clean = ibfabric(dir, {"check", "--expected", offline, "--actual", dir.file("now.txt")});
    EXPECT_EQ(clean.code, 0) << clean.out;

    for (const char* cmd : {"history", "diff", "accept"}) {
        CliRun help = ibfabric(dir, {cmd, "--help"});
        EXPECT_EQ(help.code, 0);
        EXPECT_NE(help.out.find("Example"), std::string::npos) << cmd;
        EXPECT_NE(help.out.find("Exit status: 0"), std::string::npos) << cmd;
    }
}

}  // namespace
}  // namespace ibf
