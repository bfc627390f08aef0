// Issue 22 item 1: one model of the SMs, fed once. ControllerState owns the SMs' one table
// (ha/sm_table.h) and every plugin message goes into the state only; the HA engine, made with the
// state's table and attached to it (as ibfabricd does, daemon_ha.cpp), runs its rules on the same
// entries. So the readers cannot disagree on the LID, which SM is MASTER, or when a silent SM is
// forgotten: each test feeds the state alone and reads GET /api/v1/sm, which shows the SM list
// ("sms") and the engine's part ("ha"), /api/v1/fabric and the page.
#include <gtest/gtest.h>

#include "ibf/api.h"
#include "ibf/controller_state.h"
#include "ibf/daemon_fixture.h"
#include "ibf/ha_engine.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

constexpr int64_t kNow = 1764468000000;

ApiResponse get(const ControllerState& st, const ha::HaEngine* e, const std::string& target) {
    ApiContext ctx;
    ctx.state = &st;
    ctx.ha = e;
    ctx.now_ms = kNow;
    return handle_api({.method = "GET", .target = target, .authorization = "", .body = ""}, ctx);
}

// An engine on the state's table, attached to it: the state feeds it every plugin message.
ha::HaEngine engine(Guid local, ControllerState& st) {
    ha::HaConfig c;
    c.mode = ha::Mode::act;
    c.local_sm = local;
    return ha::HaEngine(c, &st.sm_table());
}

const json* sm_in(const json& arr, Guid g) {
    for (const json& s : arr)
        if (s["port_guid"] == guid_hex(g)) return &s;
    return nullptr;
}

ha::SmInfoReply answer(Guid g, SmState st, uint16_t lid) {
    ha::SmInfoReply r;
    r.status = ha::SmpStatus::ok;
    r.info = SmInfo{.port_guid = g, .lid = lid, .priority = 15, .state = st, .act_count = 9};
    return r;
}

}  // namespace

// The page's SM table showed the LID the SM said (0 for a standby that never swept) where
// GET /api/v1/sm shows its port's LID in the master's sweep.
TEST(SmModel, ThePageShowsTheLidTheSmListShows) {
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
    const json j = json::parse(get(st, nullptr, "/api/v1/sm").body);
    ASSERT_NE(sm_in(j["sms"], kStandbyGuid), nullptr);
    EXPECT_EQ((*sm_in(j["sms"], kStandbyGuid))["lid"], 82);
    const std::string page = get(st, nullptr, "/ui").body;
    EXPECT_NE(page.find("<td>" + guid_hex(kStandbyGuid) + "</td><td>82</td>"), std::string::npos) << page;
    EXPECT_EQ(page.find("<td>" + guid_hex(kStandbyGuid) + "</td><td>0</td>"), std::string::npos);
}

// A heartbeat saying LID 0 (a standby's sm_base_lid) wiped the LID its Hello gave in the SM list,
// while the engine (and so its probes) kept it.
TEST(SmModel, AHeartbeatSayingLidZeroKeepsTheLidLikeTheEngine) {
    ControllerState st;
    ha::HaEngine e = engine(kStandbyGuid, st);
    st.attach_ha(&e);
    st.on_connect(1, "unix", kNow - 300);
    const wire::Hello h = hello(kStandbyGuid, SmState::Standby, 5, 14);
    ASSERT_TRUE(st.on_hello(1, h, kNow - 300));
    wire::Heartbeat hb;
    hb.sm = h.sm;
    hb.sm.lid = 0;
    ASSERT_TRUE(st.on_heartbeat(1, hb, kNow - 100));
    const json j = json::parse(get(st, &e, "/api/v1/sm").body);
    ASSERT_NE(sm_in(j["sms"], kStandbyGuid), nullptr);
    ASSERT_NE(sm_in(j["ha"]["sms"], kStandbyGuid), nullptr);
    EXPECT_EQ((*sm_in(j["ha"]["sms"], kStandbyGuid))["lid"], 5);
    EXPECT_EQ((*sm_in(j["sms"], kStandbyGuid))["lid"], 5) << j.dump();
}

// The master's plugin connection closed (its opensm still answers SMInfo as MASTER): the SM list,
// GET /api/v1/fabric and the page said "no master" while the HA part of the same answer named it.
TEST(SmModel, WithHaEveryReaderNamesTheEnginesMaster) {
    ControllerState st, plain;  // plain: the same messages, no engine
    ha::HaEngine e = engine(kStandbyGuid, st);
    st.attach_ha(&e);
    const wire::Hello m = hello(kMasterGuid, SmState::Master, 1, 15), s = hello(kStandbyGuid, SmState::Standby, 2, 14);
    for (ControllerState* x : {&st, &plain}) {
        x->on_connect(1, "10.0.0.1:4000", kNow - 1000);
        x->on_connect(2, "unix", kNow - 1000);
        ASSERT_TRUE(x->on_hello(1, m, kNow - 1000));
        ASSERT_TRUE(x->on_hello(2, s, kNow - 1000));
        x->on_disconnect(1, kNow - 500);
        wire::Heartbeat hb;
        hb.sm = s.sm;
        ASSERT_TRUE(x->on_heartbeat(2, hb, kNow - 60));
    }
    e.on_probe(kMasterGuid, 1, answer(kMasterGuid, SmState::Master, 1), kNow - 50);
    e.tick(kNow - 50);
    ASSERT_EQ(e.master(), kMasterGuid);
    const json j = json::parse(get(st, &e, "/api/v1/sm").body);
    EXPECT_EQ(j["ha"]["master"], guid_hex(kMasterGuid));
    EXPECT_EQ(j["master"], guid_hex(kMasterGuid)) << j.dump();
    ASSERT_NE(sm_in(j["sms"], kMasterGuid), nullptr);
    EXPECT_EQ((*sm_in(j["sms"], kMasterGuid))["master"], true);
    EXPECT_EQ((*sm_in(j["sms"], kMasterGuid))["connected"], false);
    EXPECT_EQ(json::parse(get(st, &e, "/api/v1/fabric").body)["master_sm"], guid_hex(kMasterGuid));
    EXPECT_NE(get(st, &e, "/ui").body.find(guid_hex(kMasterGuid) + "</td><td>1</td><td>15</td><td>MASTER</td><td>master"),
              std::string::npos);
    // Without HA the plugins' word is all there is: a closed connection is no master.
    EXPECT_EQ(json::parse(get(plain, nullptr, "/api/v1/sm").body)["master"], nullptr);
    EXPECT_FALSE(plain.master());
}

// ControllerState drops an SM whose plugin left health.forget_sm_after_s ago; the engine kept it
// (and probed it) for ever, so GET /api/v1/sm listed it under "ha" and not under "sms". The engine
// now forgets what the state forgot, unless its own evidence says the SM is alive (it answers
// SMInfo) or it is this node's SM.
TEST(SmModel, AnSmTheStateForgetsTheEngineForgetsUnlessItAnswers) {
    ControllerState st;
    HealthOptions h;
    h.forget_sm_after_ms = 60'000;
    st.configure(h);
    ha::HaEngine e = engine(kStandbyGuid, st);
    st.attach_ha(&e);
    constexpr Guid kThird = 0x0002c90300000003ULL;
    const int64_t t0 = kNow - 120'000;
    int conn = 0;
    for (Guid g : {kMasterGuid, kStandbyGuid, kThird}) {
        st.on_connect(++conn, g == kStandbyGuid ? "unix" : "10.0.0.9:1", t0);
        const wire::Hello hl = hello(g, g == kMasterGuid ? SmState::Master : SmState::Standby, static_cast<uint16_t>(conn));
        ASSERT_TRUE(st.on_hello(conn, hl, t0));
        st.on_disconnect(conn, t0 + 10);  // all three plugins leave (the local one too)
    }
    // The third SM still answers SMInfo over InfiniBand; the master does not.
    e.on_probe(kThird, 3, answer(kThird, SmState::Standby, 3), kNow - 20);
    ASSERT_EQ(st.forget_silent_sms(kNow), 3u);
    EXPECT_EQ(e.forget_silent([&](Guid g) { return st.sms().count(g) > 0; }, kNow), 1u);
    const json j = json::parse(get(st, &e, "/api/v1/sm").body);
    EXPECT_TRUE(j["sms"].empty());
    EXPECT_EQ(sm_in(j["ha"]["sms"], kMasterGuid), nullptr) << "silent: forgotten by both";
    EXPECT_NE(sm_in(j["ha"]["sms"], kThird), nullptr) << "it answers SMInfo: the engine's own evidence";
    EXPECT_NE(sm_in(j["ha"]["sms"], kStandbyGuid), nullptr) << "this node's SM is never forgotten";
    // Once it stops answering (its failures counted, no answer for a probe window), it goes too.
    for (int i = 1; i <= 12; ++i) {
        ha::SmInfoReply timeout;
        timeout.status = ha::SmpStatus::timeout;
        e.on_probe(kThird, 3, timeout, kNow + i * 100);
    }
    EXPECT_EQ(e.forget_silent([&](Guid g) { return st.sms().count(g) > 0; }, kNow + 1300), 1u);
    EXPECT_FALSE(e.sms().count(kThird));
}

// Fed once: a plugin message goes to the state alone, and the engine's rules see it, because the
// engine works on the state's own table (the same entries, not a copy kept in step).
TEST(SmModel, APluginMessageToTheStateIsTheEnginesToo) {
    ControllerState st;
    ha::HaEngine e = engine(kStandbyGuid, st);
    st.attach_ha(&e);
    EXPECT_EQ(&e.sms(), &st.sm_table().all());
    st.on_connect(1, "unix", kNow - 300);
    ASSERT_TRUE(st.on_hello(1, hello(kStandbyGuid, SmState::Standby, 7, 14), kNow - 300));
    ASSERT_EQ(e.sms().count(kStandbyGuid), 1u);
    const ha::SmView& v = e.sms().at(kStandbyGuid);
    EXPECT_TRUE(v.plugin_connected);
    EXPECT_EQ(v.plugin_ms, kNow - 300);
    EXPECT_EQ(v.info.lid, 7);
    EXPECT_EQ(v.info.priority, 14);
    EXPECT_EQ(e.local_sm(), kStandbyGuid);
    // A StateChange event (its port went down) and the closed connection reach the same entry.
    wire::Event ev;
    ev.kind = wire::EventKind::StateChange;
    ev.state = SmState::Discovering;
    ASSERT_TRUE(st.on_event(1, ev, kNow - 200));
    EXPECT_EQ(v.info.state, SmState::Discovering);
    EXPECT_EQ(v.discovering_since_ms, kNow - 200);
    EXPECT_EQ(st.sm_info(kStandbyGuid).state, SmState::Discovering);
    st.on_disconnect(1, kNow - 100);
    EXPECT_FALSE(v.plugin_connected);
    EXPECT_EQ(v.plugin_closed_ms, kNow - 100);
    // A heavy sweep start owes a sweep in the engine's rules (it only counts for a sweeping SM).
    st.on_connect(2, "unix", kNow - 50);
    ASSERT_TRUE(st.on_hello(2, hello(kStandbyGuid, SmState::Master, 7, 14), kNow - 50));
    EXPECT_EQ(v.sweep_owed_why, "became MASTER");
    ASSERT_TRUE(st.on_snapshot(2, snapshot(small_fabric(), kStandbyGuid, SmState::Master, 4, 7), kNow - 40));
    EXPECT_EQ(v.sweep_owed_ms, 0) << "a snapshot is its SUBNET UP";
    ev.kind = wire::EventKind::SweepStart;
    ASSERT_TRUE(st.on_event(2, ev, kNow - 30));
    EXPECT_EQ(v.sweep_owed_ms, kNow - 30);
    EXPECT_EQ(v.sweep_owed_why, "heavy sweep started");
}

// The snapshot that becomes the fabric follows the same master every reader names. With HA on, a
// master whose plugin connection closed but which still answers SMInfo as MASTER stays the master:
// a STANDBY's snapshot (its own, unswept view) does not replace the fabric. Without an engine the
// plugins' word is all there is, and it does.
TEST(SmModel, TheFabricComesFromTheMasterEveryReaderNames) {
    ControllerState st, plain;
    ha::HaEngine e = engine(kStandbyGuid, st);
    st.attach_ha(&e);
    const Fabric f = small_fabric();
    for (ControllerState* x : {&st, &plain}) {
        x->on_connect(1, "10.0.0.1:4000", kNow - 1000);
        x->on_connect(2, "unix", kNow - 1000);
        ASSERT_TRUE(x->on_hello(1, hello(kMasterGuid, SmState::Master, 1, 15), kNow - 1000));
        ASSERT_TRUE(x->on_hello(2, hello(kStandbyGuid, SmState::Standby, 2, 14), kNow - 1000));
        ASSERT_TRUE(x->on_snapshot(1, snapshot(f, kMasterGuid, SmState::Master, 5), kNow - 900));
        x->on_disconnect(1, kNow - 500);
    }
    e.on_probe(kMasterGuid, 1, answer(kMasterGuid, SmState::Master, 1), kNow - 100);
    EXPECT_FALSE(st.on_snapshot(2, snapshot(f, kStandbyGuid, SmState::Standby, 9, 2), kNow - 50));
    EXPECT_EQ(st.current_source(), kMasterGuid);
    EXPECT_EQ(st.ingest().snapshots_ignored, 1u);
    EXPECT_EQ(st.master(), kMasterGuid);
    EXPECT_TRUE(plain.on_snapshot(2, snapshot(f, kStandbyGuid, SmState::Standby, 9, 2), kNow - 50));
    EXPECT_EQ(plain.current_source(), kStandbyGuid);
    EXPECT_FALSE(plain.master());
}
