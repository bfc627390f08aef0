// ControllerState (master selection, fallback, connections, publish order) and handle_api()
// (routes, status codes, token, JSON shapes, metrics) without sockets.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "fixture.h"
#include "ibf/api.h"
#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/history.h"
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
                 std::optional<std::string> token = std::nullopt, const std::string& auth = "") {
    ApiContext ctx;
    ctx.state = &st;
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

TEST(ControllerApi, ReloadNeedsTheToken) {
    ControllerState st;
    EXPECT_EQ(call(st, "POST", "/api/v1/reload").status, 403);  // no token configured
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "Bearer s3cre").status, 401);
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "").status, 401);
    EXPECT_EQ(call(st, "POST", "/api/v1/reload", "s3cret", "bearer s3cret").status, 401);
    ApiResponse ok = call(st, "POST", "/api/v1/reload", "s3cret", "Bearer s3cret");
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(json::parse(ok.body)["reloaded"], true);
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
