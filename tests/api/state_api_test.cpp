// ControllerState (master selection, fallback, connections, publish order) and handle_api()
// (routes, status codes, token, JSON shapes, metrics) without sockets.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <random>
#include <set>

#include "ibf/daemon_fixture.h"
#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/daemon.h"
#include "ibf/daemon_config.h"
#include "ibf/history.h"
#include "ibf/log_limit.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

CheckResult result_for(const CheckJob& job, const Plan& plan) {
    CheckResult r;
    r.generation = job.generation;
    r.snapshot = job.snapshot;
    r.findings = check(plan, job.snapshot->fabric);
    r.findings_json = findings_to_json(r.findings);
    r.checked = true;
    r.check_ms = 0.5;
    return r;
}

ApiResponse call(const ControllerState& st, const std::string& method, const std::string& target,
                 std::optional<std::string> token = std::nullopt, const std::string& auth = "",
                 bool token_for_reads = false) {
    ApiContext ctx;
    ctx.state = &st;
    ctx.token_for_reads = token_for_reads;
    ctx.now_ms = 1764468000000;
    ctx.token = std::move(token);
    ctx.reload = [] { return json{{"reloaded", true}}; };
    return handle_api({.method = method, .target = target, .authorization = auth, .body = ""}, ctx);
}

}  // namespace

TEST(ControllerState, MessagesBeforeHelloAreProtocolErrors) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    EXPECT_FALSE(st.on_heartbeat(1, wire::Heartbeat{}, 11));
    EXPECT_FALSE(st.on_counters(1, wire::Counters{}, 11));
    bool proto = false;
    EXPECT_FALSE(st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 1), 12, &proto));
    EXPECT_TRUE(proto);
    EXPECT_TRUE(st.sms().empty());
}

TEST(ControllerState, MasterSnapshotBecomesTheFabricAndStandbyIsKeptButIgnored) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_connect(2, "unix", 10);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master, 1), 10));
    ASSERT_TRUE(st.on_hello(2, hello(kStandbyGuid, SmState::Standby, 2), 10));
    EXPECT_EQ(st.master(), kMasterGuid);

    auto job = st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 5), 20);
    ASSERT_TRUE(job);
    EXPECT_TRUE(job->new_sweep);
    EXPECT_EQ(st.current_source(), kMasterGuid);
    EXPECT_EQ(st.last_sweep_seq(), 5u);

    EXPECT_FALSE(st.on_snapshot(2, snapshot(small_fabric(), kStandbyGuid, SmState::Standby, 9), 30));
    EXPECT_EQ(st.current_source(), kMasterGuid);
    EXPECT_EQ(st.sms().at(kStandbyGuid).latest->sweep_seq, 9u);  // kept per SM
    EXPECT_EQ(st.ingest().snapshots_ignored, 1u);
    EXPECT_EQ(st.sweeps_ingested(), 1u);
}

TEST(ControllerState, WithoutMasterTheMostRecentSnapshotWins) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_connect(2, "unix", 10);
    st.on_hello(1, hello(kMasterGuid, SmState::Standby), 10);
    st.on_hello(2, hello(kStandbyGuid, SmState::Standby), 10);
    EXPECT_FALSE(st.master());
    ASSERT_TRUE(st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Standby, 1), 20));
    EXPECT_EQ(st.current_source(), kMasterGuid);
    ASSERT_TRUE(st.on_snapshot(2, snapshot(small_fabric(), kStandbyGuid, SmState::Standby, 2), 30));
    EXPECT_EQ(st.current_source(), kStandbyGuid);

    // The first SM becomes MASTER (heartbeat): from now on only its snapshots count.
    wire::Heartbeat hb;
    hb.sm = hello(kMasterGuid, SmState::Master).sm;
    ASSERT_TRUE(st.on_heartbeat(1, hb, 40));
    EXPECT_EQ(st.master(), kMasterGuid);
    EXPECT_FALSE(st.on_snapshot(2, snapshot(small_fabric(), kStandbyGuid, SmState::Standby, 3), 50));
    EXPECT_TRUE(st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 4), 60));
    EXPECT_EQ(st.current_source(), kMasterGuid);
}

TEST(ControllerState, DisconnectedMasterIsNoLongerMaster) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_hello(1, hello(kMasterGuid, SmState::Master), 10);
    EXPECT_TRUE(st.sms().at(kMasterGuid).connected());
    st.on_disconnect(1, 20);
    EXPECT_FALSE(st.sms().at(kMasterGuid).connected());
    EXPECT_FALSE(st.master());
    EXPECT_EQ(st.ingest().connections_open, 0u);
    EXPECT_EQ(st.ingest().connections_total, 1u);
}

TEST(ControllerState, OlderResultsDoNotReplaceNewerOnes) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_hello(1, hello(kMasterGuid, SmState::Master), 10);
    Fabric bad = small_fabric();
    cross_cables(bad, synth_node(bad, "leaf0001"), 1, 2);
    const Plan plan = plan_from_fabric(small_fabric(), "golden");
    auto j1 = st.on_snapshot(1, snapshot(bad, kMasterGuid, SmState::Master, 1), 20);
    auto j2 = st.on_snapshot(1, snapshot(small_fabric(), kMasterGuid, SmState::Master, 2), 30);
    ASSERT_TRUE(j1 && j2);
    EXPECT_TRUE(st.publish(result_for(*j2, plan), 40));
    EXPECT_FALSE(st.publish(result_for(*j1, plan), 50));
    EXPECT_TRUE(st.findings().empty());
    EXPECT_EQ(st.findings_sweep_seq(), 2u);
}

TEST(ControllerApi, FindingsAreExactlyTheReportJsonPlusSweepKeys) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_hello(1, hello(kMasterGuid, SmState::Master), 10);
    Fabric bad = small_fabric();
    cross_cables(bad, synth_node(bad, "leaf0001"), 1, 2);
    const Plan plan = plan_from_fabric(small_fabric(), "golden");
    auto job = st.on_snapshot(1, snapshot(bad, kMasterGuid, SmState::Master, 7), 20);
    ASSERT_TRUE(job);
    st.publish(result_for(*job, plan), 1764468000000);

    ApiResponse r = call(st, "GET", "/api/v1/findings");
    ASSERT_EQ(r.status, 200);
    json j = json::parse(r.body);
    const json expected = findings_to_json(check(plan, bad));
    ASSERT_FALSE(expected["findings"].empty());
    EXPECT_EQ(j["findings"], expected["findings"]);
    EXPECT_EQ(j["summary"], expected["summary"]);
    EXPECT_EQ(j["sweep_seq"], 7);
    EXPECT_EQ(j["generated_at"], "2025-11-30T02:00:00.000Z");

    json f = json::parse(call(st, "GET", "/api/v1/fabric").body);
    EXPECT_EQ(f["nodes"], bad.size());
    EXPECT_EQ(f["switches"], 6);
    EXPECT_EQ(f["cas"], 8);
    EXPECT_EQ(f["links"], bad.link_count());
    EXPECT_EQ(f["sm_count"], 1);
    EXPECT_EQ(f["last_sweep_seq"], 7);
    EXPECT_EQ(f["master_sm"], "0x0002c90300000001");
    EXPECT_EQ(f["findings"], expected["findings"].size());
}

// Issue 20 item 9: a STANDBY showed `LID 0` in `ibfabric status` (what its plugin's Hello said: its
// OpenSM never swept) and its real LID in `sm status`. The SM list now takes the LID of its port
// in the master's sweep when the SM says 0.
TEST(ControllerApi, AStandbyThatSaysLidZeroShowsItsPortsLidFromTheMastersSweep) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_connect(2, "unix", 10);
    ASSERT_TRUE(st.on_hello(1, hello(kMasterGuid, SmState::Master, 1), 10));
    ASSERT_TRUE(st.on_hello(2, hello(kStandbyGuid, SmState::Standby, 0), 10));
    Fabric f = small_fabric();
    Node& host = f.node(synth_node(f, "node00002"));
    host.ports[1].guid = kStandbyGuid;
    host.ports[1].lid = 82;
    ASSERT_TRUE(st.on_snapshot(1, snapshot(f, kMasterGuid, SmState::Master, 1), 20));
    json j = json::parse(call(st, "GET", "/api/v1/sm").body);
    ASSERT_EQ(j["sms"].size(), 2u);
    for (const json& s : j["sms"]) {
        if (s["port_guid"] == guid_hex(kStandbyGuid)) EXPECT_EQ(s["lid"], 82) << s.dump();
        else EXPECT_EQ(s["lid"], 1) << "what an SM says is kept";
    }
}

TEST(ControllerApi, SmListShowsStateCountersAndHeartbeat) {
    ControllerState st;
    st.on_connect(1, "unix", 10);
    st.on_hello(1, hello(kMasterGuid, SmState::Master, 3, 14), 10);
    wire::Heartbeat hb;
    hb.sm = hello(kMasterGuid, SmState::Master, 3, 14).sm;
    hb.sweep_seq = 12;
    st.on_heartbeat(1, hb, 1764468000000);
    wire::Counters k;
    k.snapshots_taken = 12;
    k.snapshots_sent = 11;
    k.last_copy_us = 850;
    st.on_counters(1, k, 1764468000001);
    json j = json::parse(call(st, "GET", "/api/v1/sm").body);
    ASSERT_EQ(j["sms"].size(), 1u);
    const json& s = j["sms"][0];
    EXPECT_EQ(s["port_guid"], "0x0002c90300000001");
    EXPECT_EQ(s["lid"], 3);
    EXPECT_EQ(s["priority"], 14);
    EXPECT_EQ(s["state"], "MASTER");
    EXPECT_EQ(s["connected"], true);
    EXPECT_EQ(s["last_heartbeat"], "2025-11-30T02:00:00.000Z");
    EXPECT_EQ(s["heartbeat_sweep_seq"], 12);
    EXPECT_EQ(s["counters"]["snapshots_taken"], 12);
    EXPECT_EQ(s["counters"]["last_copy_us"], 850);
    EXPECT_EQ(j["master"], "0x0002c90300000001");

    const std::string m = call(st, "GET", "/metrics").body;
    EXPECT_NE(m.find("ibfabric_plugin_snapshots_taken_total{sm=\"0x0002c90300000001\"} 12\n"), std::string::npos);
    EXPECT_NE(m.find("ibfabric_sm_connected{sm=\"0x0002c90300000001\"} 1\n"), std::string::npos);
    EXPECT_NE(m.find("ibfabric_sm_state{sm=\"0x0002c90300000001\"} 3\n"), std::string::npos);
    EXPECT_NE(m.find("ibfabric_ingest_messages_total{type=\"Heartbeat\"} 1\n"), std::string::npos);
}

TEST(ControllerApi, StatusCodes) {
    ControllerState st;
    EXPECT_EQ(call(st, "GET", "/healthz").status, 200);
    EXPECT_EQ(call(st, "GET", "/healthz").body, "ok\n");
    EXPECT_EQ(call(st, "GET", "/nope").status, 404);
    EXPECT_EQ(json::parse(call(st, "GET", "/nope").body)["error"], "no such path: /nope");
    ApiResponse r = call(st, "DELETE", "/api/v1/findings");
    EXPECT_EQ(r.status, 405);
    EXPECT_EQ(r.allow, "GET");
    EXPECT_EQ(call(st, "GET", "/api/v1/reload").status, 405);
    EXPECT_EQ(call(st, "GET", "/api/v1/history").status, 404);  // history off
    EXPECT_EQ(call(st, "GET", "/api/v1/history?limit=x").status, 400);
    EXPECT_EQ(call(st, "GET", "/api/v1/history?limit=0").status, 400);
    EXPECT_EQ(call(st, "GET", "/api/v1/history?bogus=1").status, 400);
    json f = json::parse(call(st, "GET", "/api/v1/findings").body);  // before any snapshot
    EXPECT_TRUE(f["findings"].empty());
    EXPECT_TRUE(f["sweep_seq"].is_null());
}

// Every mutating route (docs/api.md's POST rows), not only reload: 403 without a configured token,
// 401 without or with a wrong one, before its handler runs (none is set in this context).
TEST(ControllerApi, EveryPostNeedsTheToken) {
    ControllerState st;
    for (const char* p : {"/api/v1/reload", "/api/v1/accept", "/api/v1/sm/priority", "/api/v1/sm/state", "/api/v1/sm/process-gone",
                          "/api/v1/sm/switchover", "/api/v1/sm/switchover/abort"}) {
        EXPECT_EQ(call(st, "POST", p).status, 403) << p;
        EXPECT_EQ(call(st, "POST", p, "s3cret", "").status, 401) << p;
        EXPECT_EQ(call(st, "POST", p, "s3cret", "Bearer s3cre").status, 401) << p;
    }
}

TEST(ControllerApi, ReloadNeedsTheToken) {
    ControllerState st;
    EXPECT_EQ(call(st, "POST", "/api/v1/reload").status, 403);  // no token configured
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "Bearer s3cre").status, 401);
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "").status, 401);
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "Basic s3cret").status, 401);
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "Bearers3cret").status, 401);
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "Bearer s3cret ").status, 401);
    ApiResponse ok = call(st, "POST", "/api/v1/reload", "s3cret", "Bearer s3cret");
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(json::parse(ok.body)["reloaded"], true);
}

TEST(ControllerHistory, FailoverEventsNewestFirstAndSurviveReopen) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    {
        HistoryStore h(db);
        h.append_ha_event(1000, json{{"from", "0x1"}, {"to", "0x2"}, {"outcome", "promoted"}}.dump());
        h.append_ha_event(2000, json{{"from", "0x2"}, {"to", "0x1"}, {"outcome", "observed"}}.dump());
    }
    HistoryStore h(db);  // a daemon restart keeps them
    json ev = h.recent_ha_events(10);
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0]["outcome"], "observed");
    EXPECT_EQ(ev[1]["outcome"], "promoted");
    EXPECT_EQ(h.recent_ha_events(1).size(), 1u);
    EXPECT_EQ(h.count(), 0u) << "failover events are not sweep rows";
}

TEST(ControllerHistory, RowsNewestFirstAndSurviveReopen) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    {
        HistoryStore h(db);
        for (uint64_t seq = 1; seq <= 3; ++seq) {
            HistoryRow r;
            r.sweep_seq = seq;
            r.taken_unix_ms = 1764468000000 + static_cast<int64_t>(seq);
            r.sm_guid = kMasterGuid;
            r.nodes = 14;
            r.findings = seq - 1;
            r.checked = true;
            r.findings_json = json{{"summary", json::object()}, {"findings", json::array()}}.dump();
            h.append(r);
        }
    }
    HistoryStore h(db);
    EXPECT_EQ(h.count(), 3u);
    json rows = h.recent(2);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["sweep_seq"], 3);
    EXPECT_EQ(rows[1]["sweep_seq"], 2);
    EXPECT_EQ(rows[0]["sm_guid"], "0x0002c90300000001");
    EXPECT_EQ(rows[0]["findings_count"], 2);
    EXPECT_TRUE(rows[0]["findings"]["findings"].is_array());
    EXPECT_THROW(HistoryStore("/nonexistent-dir/h.db"), std::runtime_error);
}

// Seeded fuzz of the pure API: random methods, targets (paths, queries, escapes, control bytes)
// and Authorization headers. Every request gets a JSON or text answer with a known status;
// nothing throws, and only the right token ever gets a 200 from POST /api/v1/reload.
TEST(ControllerApi, FuzzedRequestsGetKnownStatusesAndNeverThrow) {
    ControllerState st;
    std::mt19937 rng(20261130);
    const std::vector<std::string> methods = {"GET", "POST", "PUT", "DELETE", "HEAD", "get", "", "G\x01T"};
    const std::vector<std::string> bases = {"/api/v1/fabric", "/api/v1/findings", "/api/v1/analysis", "/api/v1/sm",
                                            "/api/v1/history", "/api/v1/reload", "/healthz", "/metrics", "/", ""};
    const std::vector<std::string> tails = {"", "?", "?limit=", "?limit=-1", "?limit=99999999999999999999",
                                            "?switches=1", "?switches=yes", "?a=b&c", "%00", "/../../etc/passwd",
                                            "?limit=5&limit=6", "#frag", "//", "?\xff\xfe"};
    auto random_bytes = [&](size_t n) {
        std::string s(n, '\0');
        for (char& c : s) c = static_cast<char>(rng() & 0xff);
        return s;
    };
    const std::set<int> known = {200, 400, 401, 403, 404, 405, 422};
    for (int i = 0; i < 5000; ++i) {
        std::string method = methods[rng() % methods.size()];
        std::string target = bases[rng() % bases.size()] + tails[rng() % tails.size()];
        if (rng() % 4 == 0) target += random_bytes(rng() % 16);
        std::string auth;
        switch (rng() % 4) {
            case 0: break;
            case 1: auth = "Bearer s3cret"; break;
            case 2: auth = "Bearer " + random_bytes(rng() % 12); break;
            default: auth = random_bytes(rng() % 24); break;
        }
        ApiResponse r;
        ASSERT_NO_THROW(r = call(st, method, target, std::string("s3cret"), auth)) << i;
        EXPECT_TRUE(known.count(r.status)) << i << ": " << r.status << " for " << method << " " << target;
        if (r.status >= 400) {
            EXPECT_TRUE(json::parse(r.body).contains("error")) << r.body;
        }
        if (method == "POST" && r.status == 200) {
            EXPECT_EQ(auth, "Bearer s3cret");
        }
    }
}

// The scheme of an Authorization header is case-insensitive (RFC 7235 2.1).
TEST(ControllerApi, BearerSchemeInAnyCase) {
    ControllerState st;
    for (const char* auth : {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "bEaReR   s3cret"})
        EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", auth).status, 200) << auth;
    EXPECT_FALSE(bearer_matches("bearer S3CRET", "s3cret"));  // the token itself is exact
}

// docs/api.md: an unknown query parameter is 400, on every path.
TEST(ControllerApi, UnknownQueryParametersAre400Everywhere) {
    ControllerState st;
    for (const char* t : {"/api/v1/fabric?x=1", "/api/v1/findings?verbose", "/api/v1/sm?a=b", "/healthz?probe=1",
                          "/metrics?format=json", "/api/v1/analysis?switch=1", "/api/v1/history?limit=5&page=2",
                          "/api/v1/history?limit=5&limit=6"}) {
        ApiResponse r = call(st, "GET", t);
        EXPECT_EQ(r.status, 400) << t;
        EXPECT_TRUE(json::parse(r.body).contains("error")) << t;
    }
    EXPECT_EQ(json::parse(call(st, "GET", "/api/v1/findings?verbose").body)["error"],
              "unknown query parameter 'verbose' (this path takes none)");
    EXPECT_EQ(json::parse(call(st, "GET", "/api/v1/analysis?switch=1").body)["error"],
              "unknown query parameter 'switch' (expected switches)");
    EXPECT_EQ(call(st, "POST", "/api/v1/reload?now=1", "s3cret", "Bearer s3cret").status, 400);
    EXPECT_EQ(call(st, "GET", "/api/v1/findings?").status, 200);  // an empty query is no parameter
    EXPECT_EQ(call(st, "GET", "/api/v1/analysis?switches=1").status, 200);
}

// token_for_reads: every path but /healthz needs the token.
TEST(ControllerApi, TokenForReads) {
    ControllerState st;
    for (const char* t : {"/api/v1/fabric", "/api/v1/findings", "/api/v1/sm", "/api/v1/analysis", "/metrics",
                          "/api/v1/history", "/nope"}) {
        EXPECT_EQ(call(st, "GET", t, "s3cret", "", true).status, 401) << t;
        EXPECT_EQ(call(st, "GET", t, "s3cret", "Bearer wrong", true).status, 401) << t;
    }
    EXPECT_EQ(call(st, "GET", "/api/v1/findings", "s3cret", "Bearer s3cret", true).status, 200);
    EXPECT_EQ(call(st, "GET", "/metrics", "s3cret", "bearer s3cret", true).status, 200);
    EXPECT_EQ(call(st, "GET", "/healthz", "s3cret", "", true).status, 200);
    EXPECT_EQ(call(st, "GET", "/api/v1/findings", "s3cret", "", false).status, 200);  // default: reads open
}

namespace {
HistoryRow history_row(uint64_t seq, const std::string& findings_json, Guid sm = kMasterGuid) {
    HistoryRow r;
    r.sweep_seq = seq;
    r.taken_unix_ms = 1764468000000 + static_cast<int64_t>(seq);
    r.sm_guid = sm;
    r.nodes = 14;
    r.checked = true;
    r.findings_json = findings_json;
    return r;
}
const std::string kNoFindings = R"({"findings":[],"summary":{}})";
}  // namespace

// After a daemon restart the plugin resends its latest snapshot: same SM, same sweep, no new row.
TEST(ControllerHistory, ResentSnapshotAfterRestartIsNotASecondRow) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    {
        HistoryStore h(db);
        EXPECT_TRUE(h.append(history_row(7, kNoFindings)));
    }
    HistoryStore h(db);  // the restarted daemon
    EXPECT_FALSE(h.append(history_row(7, kNoFindings)));
    EXPECT_EQ(h.count(), 1u);
    EXPECT_TRUE(h.append(history_row(7, kNoFindings, kStandbyGuid)));  // another SM's sweep 7
    EXPECT_TRUE(h.append(history_row(8, kNoFindings)));
    HistoryRow restarted_sm = history_row(8, kNoFindings);  // OpenSM restarted: seq 8 again, later
    restarted_sm.taken_unix_ms += 60000;
    EXPECT_TRUE(h.append(restarted_sm));
    EXPECT_EQ(h.count(), 4u);
}

TEST(ControllerHistory, DatabaseIsCreatedOwnerOnly) {
    TempDir dir;
    const mode_t old = ::umask(022);
    { HistoryStore h(dir.file("h.db")); h.append(history_row(1, kNoFindings)); }
    ::umask(old);
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("h.db").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Pages stop before the byte limit and say where to continue; a row larger than the limit alone
// comes without its findings, so paging always moves on.
TEST(ControllerHistory, PagesAreBoundedAndContinue) {
    TempDir dir;
    HistoryStore h(dir.file("h.db"));
    const std::string big = json{{"summary", json::object()}, {"findings", json::array({std::string(40000, 'f')})}}.dump();
    for (uint64_t seq = 1; seq <= 5; ++seq) h.append(history_row(seq, seq == 5 ? std::string(R"({"findings":[],"summary":{"x":1}})") : big));
    // Row 5 is small, rows 4..1 are 40 kB each: 60 kB holds 5 and 4, then 3 alone.
    HistoryPage p = h.page(10, 0, 60000);
    EXPECT_LE(p.rows.size(), 60000u);
    json rows = json::parse(p.rows);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(p.count, 2u);
    EXPECT_EQ(rows[0]["sweep_seq"], 5);
    EXPECT_EQ(rows[0]["findings"]["summary"]["x"], 1);
    EXPECT_EQ(rows[1]["sweep_seq"], 4);
    EXPECT_EQ(rows[1]["findings"], json::parse(big));
    EXPECT_EQ(p.next_before, rows[1]["id"].get<int64_t>());
    HistoryPage p2 = h.page(10, p.next_before, 60000);
    json rows2 = json::parse(p2.rows);
    ASSERT_EQ(rows2.size(), 1u);
    EXPECT_EQ(rows2[0]["sweep_seq"], 3);
    EXPECT_EQ(p2.next_before, rows2[0]["id"].get<int64_t>());
    // A limit below one row: that row comes alone, without its findings, and paging moves on.
    HistoryPage small = h.page(10, 0, 30000);
    ASSERT_EQ(json::parse(small.rows).size(), 1u);
    HistoryPage alone = h.page(10, small.next_before, 30000);
    json rows3 = json::parse(alone.rows);
    ASSERT_EQ(rows3.size(), 1u);
    EXPECT_EQ(rows3[0]["sweep_seq"], 4);
    EXPECT_TRUE(rows3[0]["findings"].is_null());
    EXPECT_EQ(rows3[0]["findings_omitted"], true);
    EXPECT_EQ(rows3[0]["findings_count"], 0);
    EXPECT_EQ(alone.next_before, rows3[0]["id"].get<int64_t>());
    // The oldest row: nothing older.
    HistoryPage last = h.page(10, json::parse(h.page(10, 0, 1 << 20).rows)[3]["id"].get<int64_t>(), 1 << 20);
    ASSERT_EQ(last.count, 1u);
    EXPECT_EQ(json::parse(last.rows)[0]["sweep_seq"], 1);
    EXPECT_EQ(last.next_before, 0);
    // The row limit alone: 2 of 5, continue from the second.
    HistoryPage two = h.page(2, 0, 1 << 20);
    EXPECT_EQ(two.count, 2u);
    EXPECT_EQ(json::parse(two.rows)[1]["sweep_seq"], 4);
    EXPECT_EQ(two.next_before, json::parse(two.rows)[1]["id"].get<int64_t>());
}

TEST(ControllerApi, HistoryAnswerNamesTheNextPage) {
    ControllerState st;
    ApiContext ctx;
    ctx.state = &st;
    int seen_limit = 0;
    int64_t seen_before = -1;
    ctx.history = [&](int limit, int64_t before) {
        seen_limit = limit;
        seen_before = before;
        return HistoryPage{"[\n{\"id\":9,\"findings\":null}\n]", 1, 9};
    };
    ApiResponse r = handle_api({.method = "GET", .target = "/api/v1/history?limit=1&before=10"}, ctx);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(seen_limit, 1);
    EXPECT_EQ(seen_before, 10);
    json j = json::parse(r.body);
    EXPECT_EQ(j["history"].size(), 1u);
    EXPECT_EQ(j["rows"], 1);
    EXPECT_EQ(j["next_before"], 9);
    EXPECT_EQ(j["next"], "/api/v1/history?limit=1&before=9");
    EXPECT_EQ(handle_api({.method = "GET", .target = "/api/v1/history?before=0"}, ctx).status, 400);
    EXPECT_EQ(handle_api({.method = "GET", .target = "/api/v1/history?before=x"}, ctx).status, 400);
    ctx.history = [](int, int64_t) { return HistoryPage{"[]", 0, 0}; };
    j = json::parse(handle_api({.method = "GET", .target = "/api/v1/history"}, ctx).body);
    EXPECT_TRUE(j["next"].is_null());
    EXPECT_TRUE(j["history"].empty());
    EXPECT_EQ(j["limit"], 20);
}

// One burst of refusals writes one line; the next line says how many were held back.
TEST(LogLimit, OneLinePerIntervalWithTheCountHeldBack) {
    LogLimit l(10000);
    ASSERT_EQ(l.allow(1000), std::optional<uint64_t>(0));
    for (int i = 0; i < 935; ++i) EXPECT_FALSE(l.allow(1000 + i));
    EXPECT_EQ(l.held(), 935u);
    EXPECT_FALSE(l.allow(10999));
    EXPECT_EQ(l.allow(11000), std::optional<uint64_t>(936));
    EXPECT_EQ(LogLimit::suffix(936), " (936 more like this since the last one were not logged)");
    EXPECT_EQ(LogLimit::suffix(1), " (1 more like this since the last one was not logged)");
    EXPECT_EQ(LogLimit::suffix(0), "");
}

TEST(HttpExposure, WarnsBeyondLoopbackWithoutAToken) {
    DaemonConfig c;
    EXPECT_EQ(http_exposure_warning(c), "");  // 127.0.0.1
    c.http_bind = "::1";
    EXPECT_EQ(http_exposure_warning(c), "");
    c.http_bind = "0.0.0.0";
    EXPECT_EQ(http_exposure_warning(c),
              "http: the API listens on 0.0.0.0 (beyond loopback) and no token_file is configured: anyone who can reach "
              "port 8639 reads the fabric and its findings; set token_file and token_for_reads: true, or bind "
              "127.0.0.1 behind a reverse proxy (docs/security.md)");
    c.http_bind = "10.0.0.5";
    EXPECT_NE(http_exposure_warning(c), "");
    c.token_file = "/etc/ibfabric/token";
    EXPECT_EQ(http_exposure_warning(c), "");
}

// The token file must not be readable or writable by others, nor writable by the group.
TEST(ControllerToken, TokenFileModeIsChecked) {
    TempDir dir;
    DaemonConfig c;
    c.token_file = write_file(dir.file("token"), "s3cret\n");
    for (mode_t ok : {0600, 0640, 0400, 0440}) {
        ::chmod(c.token_file.c_str(), ok);
        EXPECT_EQ(load_token(c), std::optional<std::string>("s3cret")) << std::oct << ok;
    }
    for (mode_t bad : {0644, 0660, 0604, 0666}) {
        ::chmod(c.token_file.c_str(), bad);
        try {
            load_token(c);
            ADD_FAILURE() << "mode " << std::oct << bad << " accepted";
        } catch (const InputError& e) {
            char m[16];
            std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(bad));
            EXPECT_EQ(std::string(e.what()), c.token_file + ": mode " + m +
                                                 " lets other users read or change the token; chmod 0600 (or 0640 "
                                                 "with the group of the readers)");
        }
    }
    c.token_file = "/dev/zero";
    EXPECT_THROW(load_token(c), InputError);
}
