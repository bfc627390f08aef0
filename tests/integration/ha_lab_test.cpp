// SM high availability on ibsim: `ibfabric lab up --sms 2` runs two OpenSMs (and an ibfabricd per SM
// node), `lab fault kill-sm|freeze-sm|thaw-sm|restart-sm` hurts them. Every scenario starts its own
// ibsim (a stale client of an earlier SM can fake a dual master). Tests that need the daemon's HA
// engine skip, printing why, only when the daemon or the plugin refuses the HA configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ibf/dumps.h"
#include "ibf/lab_ha.h"
#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "lab_cli.h"

namespace fs = std::filesystem;
using namespace ibf;
using namespace ibf::test;
using lab_detail::now_s;
using lab_detail::sleep_s;
using nlohmann::json;

namespace {

int current_year() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm.tm_year + 1900;
}

long utc_offset_s() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm.tm_gmtoff;
}

// Node GUID -> LID as ibnetdiscover (attached at SM `via`'s CA) sees the fabric now.
std::map<Guid, int> fabric_lids(const LabState& s, size_t via) {
    const std::string out = lab_run_client(s, {"ibnetdiscover"}, 30, s.umad2sim, s.sms.at(via).host);
    Fabric f = parse_dump(out, "ibnetdiscover");
    std::map<Guid, int> lids;
    for (NodeId i = 0; i < f.size(); ++i)
        if (f.node(i).lid > 0) lids[f.node(i).guid] = f.node(i).lid;
    return lids;
}

// When the daemon or the plugin refuses the HA configuration (the HA engine or the plugin's TCP
// endpoints are not there): the reason, else nullopt.
std::optional<std::string> ha_unsupported(const Cli& up) {
    for (const char* key : {"unknown key 'ha'", "unknown key 'tcp_key_file'", "refusing to load: event_plugin_options"})
        if (auto at = up.err.find(key); up.rc == 3 && at != std::string::npos) {
            const auto bol = up.err.rfind('\n', at), eol = up.err.find('\n', at);
            return "this build does not support SM HA in the lab: " +
                   up.err.substr(bol == std::string::npos ? 0 : bol + 1, eol == std::string::npos ? eol : eol - bol - 1);
        }
    return std::nullopt;
}

// Microseconds from `kill_ms` to the first `needle` line of `log` logged after it.
std::optional<int64_t> log_us_after(const std::string& log, int64_t kill_ms, const std::string& needle) {
    const std::string text = read_all(log);
    size_t from = 0;
    while (auto hit = find_osm_log_line(text, from, needle, current_year(), utc_offset_s())) {
        if (hit->unix_us >= kill_ms * 1000 - 1000) return hit->unix_us - kill_ms * 1000;
        from = hit->end;
    }
    return std::nullopt;
}

std::string last_state(const LabState& s, size_t i) { return osm_log_state(read_all(s.sms.at(i).log)); }

bool wait_state(const LabState& s, size_t i, const std::string& want, double timeout_s) {
    const double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        if (last_state(s, i) == want) return true;
        sleep_s(0.02);
    }
    return false;
}

Cli fault(const LabDir& lab, const std::string& what, const std::string& target) {
    return lab.cli({"lab", "fault", what, target, "--json"}, 30);
}

// A lab whose daemons had to start without TCP ingest (lab up warned: the daemon has no
// tcp_key_file): each daemon sees only its own SM, the HA engine has nothing to fail over to.
std::optional<std::string> peers_missing(const LabDir& lab) {
    auto s = lab_load_state(lab.path);
    if (s && s->sms.size() > 1 && s->sms[0].daemon_pid > 0 && s->sms[0].tcp_port == 0)
        return std::string("this ibfabricd has no authenticated TCP ingest (tcp_key_file): the SM nodes' daemons "
                           "cannot see each other (lab up printed a WARNING)");
    return std::nullopt;
}

#define SKIP_WITHOUT_HA(lab, up)                                 \
    if (!have_daemon()) GTEST_SKIP() << "ibfabricd or libibfabric_osm.so is not built"; \
    if (auto why = ha_unsupported(up)) GTEST_SKIP() << *why;     \
    if (auto why = peers_missing(lab)) GTEST_SKIP() << *why

}  // namespace

// OpenSM's own failover, sped up: a standby polling every 1000 ms, 2 misses. No daemon needed.
TEST(HaLab, NativeFailoverAfterKillOfTheMasterKeepsLidsAndRestartGivesOneMaster) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--ha", "native", "--sm-polling", "1000,2", "--no-daemon",
                      "--timeout", "60", "--json"});
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    ASSERT_EQ(s.sms.size(), 2u);
    EXPECT_EQ(s.ha, LabHa::Native);
    EXPECT_NE(s.sms[0].host, s.sms[1].host);
    EXPECT_NE(read_all(s.sms[1].conf).find("\nsminfo_polling_timeout 1000\npolling_retry_number 2\n"), std::string::npos);
    EXPECT_NE(read_all(s.sms[1].conf).find("\nsm_priority 14\n"), std::string::npos);

    Cli st = lab.cli({"lab", "status", "--json"});
    ASSERT_EQ(st.rc, 0) << describe(st);
    ASSERT_EQ(st.j["sms"].size(), 2u) << st.out;
    EXPECT_EQ(st.j["sms"][0]["state"], "MASTER") << st.out;
    EXPECT_EQ(st.j["sms"][1]["state"], "STANDBY") << st.out;
    EXPECT_EQ(st.j["sms"][0]["priority"], 15);
    EXPECT_EQ(st.j["sms"][0]["port_guid"], s.sms[0].port_guid);
    EXPECT_GT(st.j["sms"][0]["lid"].get<int>(), 0);
    EXPECT_GT(st.j["sms"][1]["lid"].get<int>(), 0);

    const auto before = fabric_lids(s, 1);
    ASSERT_EQ(before.size(), parse_net(read_all(s.path("net.txt")), "net.txt").nodes.size()) << "every node has a LID";
    Cli k = fault(lab, "kill-sm", "master");
    ASSERT_EQ(k.rc, 0) << describe(k);
    EXPECT_EQ(k.j["sm"], 1);
    const int64_t kill_ms = k.j["unix_ms"].get<int64_t>();
    auto master = lab_wait_one_master(s, 20, 1.0);
    ASSERT_TRUE(master) << read_all(s.sms[1].log);
    EXPECT_EQ(*master, 1u);
    auto took = log_us_after(s.sms[1].log, kill_ms, "Entering MASTER state");
    ASSERT_TRUE(took);
    // OpenSM's standby needs polling_retry_number missed polls of sminfo_polling_timeout each.
    EXPECT_GE(*took, 1000000) << "took over " << *took << " us after the kill";
    EXPECT_LE(*took, 8000000) << "took over " << *took << " us after the kill";
    EXPECT_EQ(fabric_lids(s, 1), before);

    Cli st2 = lab.cli({"lab", "status", "--json"});
    EXPECT_EQ(st2.rc, 3) << "a killed SM is a process that is not running\n" << describe(st2);
    EXPECT_EQ(st2.j["sms"][0]["alive"], false);
    EXPECT_EQ(st2.j["sms"][1]["state"], "MASTER");

    const int killed = s.sms[0].pid;
    Cli r = fault(lab, "restart-sm", "sm1");
    ASSERT_EQ(r.rc, 0) << describe(r);
    s = lab.state();
    EXPECT_TRUE(lab_detail::alive(s.sms[0].pid, "opensm"));
    EXPECT_TRUE(fs::exists(s.sms[0].log + ".1")) << "the killed OpenSM's log is kept";
    ASSERT_TRUE(lab_wait_one_master(s, 20, 2.0));
    // the killed OpenSM's ibsim client is gone (freed by the restart, or dropped by ibsim itself)
    std::vector<int> pids;
    for (const auto& c : parse_attached(lab_console(s, "Attached", 0.3))) pids.push_back(c.pid);
    EXPECT_EQ(std::count(pids.begin(), pids.end(), killed), 0);
    EXPECT_EQ(std::count(pids.begin(), pids.end(), s.sms[0].pid), 1);
    EXPECT_EQ(std::count(pids.begin(), pids.end(), s.sms[1].pid), 1);
    EXPECT_EQ(fabric_lids(s, 1), before);
}

TEST(HaLab, BadHaOptionsAreUsageErrors) {
    LabDir lab;
    EXPECT_EQ(lab.cli({"lab", "up", kSmall, "--sms", "4"}).rc, 2);
    EXPECT_EQ(lab.cli({"lab", "up", kSmall, "--ha", "native"}).rc, 2) << "--ha needs --sms 2 or more";
    EXPECT_EQ(lab.cli({"lab", "up", kSmall, "--sms", "2", "--sm-priority", "15"}).rc, 2);
    EXPECT_EQ(lab.cli({"lab", "up", kSmall, "--sms", "2", "--sm-host", "leaf01"}).rc, 2);
    EXPECT_EQ(lab.cli({"lab", "up", kSmall, "--sms", "2", "--sm-polling", "1000"}).rc, 2);
    EXPECT_FALSE(fs::exists(lab.path + "/state.json"));
    Cli f = lab.cli({"lab", "fault", "kill-sm", "master"});
    EXPECT_EQ(f.rc, 3) << "no lab: " << describe(f);
}

// The daemons of a native lab see both SMs (the plugin sends to its own daemon and to the peer's TCP port).
TEST(HaLab, NativeModeDaemonsSeeEverySm) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--ha", "native", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    EXPECT_EQ((fs::status(s.key_file).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);
    for (const auto& m : s.sms) {
        json sm;
        for (int i = 0; i < 100; ++i) {  // heartbeats every 100 ms
            sm = json::parse(http_get(m.api_port, "/api/v1/sm").body, nullptr, false);
            if (sm.is_object() && sm["sms"].size() == 2) break;
            sleep_s(0.05);
        }
        ASSERT_EQ(sm["sms"].size(), 2u) << "ibfabricd of " << m.host << ": " << sm.dump();
    }
    Cli st = lab.cli({"lab", "status", "--json"});
    ASSERT_EQ(st.rc, 0) << describe(st);
    EXPECT_EQ(st.j["sms"][0]["state"], "MASTER");
    EXPECT_EQ(st.j["sms"][0]["state_from"], "ibfabricd");
    EXPECT_EQ(st.j["sms"][1]["state"], "STANDBY");
}

TEST(HaLab, KillOfTheMasterIsTakenOverWithinASecondWithLidsKept) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    ASSERT_EQ(s.ha, LabHa::Ibfabric);
    const auto before = fabric_lids(s, 1);
    Cli k = fault(lab, "kill-sm", "master");
    ASSERT_EQ(k.rc, 0) << describe(k);
    auto master = lab_wait_one_master(s, 10, 1.0);
    ASSERT_TRUE(master) << read_all(s.sms[1].daemon_log);
    EXPECT_EQ(*master, 1u);
    auto took = log_us_after(s.sms[1].log, k.j["unix_ms"].get<int64_t>(), "Entering MASTER state");
    ASSERT_TRUE(took);
    EXPECT_LE(*took, 1000000) << "took over " << *took << " us after the kill";
    EXPECT_EQ(fabric_lids(s, 1), before);
}

TEST(HaLab, FrozenMasterIsTakenOverOnlyAfterTheThreshold) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    // 150 ms is below heartbeat_timeout_ms (400): no takeover.
    ASSERT_EQ(fault(lab, "freeze-sm", "master").rc, 0);
    sleep_s(0.15);
    ASSERT_EQ(fault(lab, "thaw-sm", "sm1").rc, 0);
    sleep_s(2.0);
    EXPECT_EQ(last_state(s, 1), "STANDBY") << read_all(s.sms[1].daemon_log);
    EXPECT_EQ(last_state(s, 0), "MASTER");
    // 3 s is far beyond it: the standby takes over; once thawed, exactly one master remains.
    Cli fz = fault(lab, "freeze-sm", "master");
    ASSERT_EQ(fz.rc, 0) << describe(fz);
    EXPECT_TRUE(wait_state(s, 1, "MASTER", 3.0)) << read_all(s.sms[1].daemon_log);
    ASSERT_EQ(fault(lab, "thaw-sm", "sm1").rc, 0);
    EXPECT_TRUE(lab_wait_one_master(s, 15, 2.0)) << read_all(s.sms[0].log);
}

TEST(HaLab, IsolatedMasterIsTakenOverAndOneMasterRemainsAfterRelink) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    const std::string cable = s.sms[0].host + "/1";
    Cli un = lab.cli({"lab", "fault", "unlink", cable, "--no-wait"});
    ASSERT_EQ(un.rc, 0) << describe(un);
    // SMInfo alone (the isolated master's plugin still heartbeats over TCP): the slow path.
    EXPECT_TRUE(wait_state(s, 1, "MASTER", 10.0)) << read_all(s.sms[1].daemon_log);
    bool split_seen = last_state(s, 0) != "MASTER";  // nothing to see when the isolated SM gave up by itself
    for (int i = 0; i < 50 && !split_seen; ++i) {
        split_seen = http_get(s.sms[1].api_port, "/api/v1/findings").body.find("sm_split_brain") != std::string::npos;
        sleep_s(0.1);
    }
    EXPECT_TRUE(split_seen) << "both SMs are MASTER: the standby's daemon must report sm_split_brain";
    Cli re = lab.cli({"lab", "fault", "relink", cable, "--no-wait"});
    ASSERT_EQ(re.rc, 0) << describe(re);
    ASSERT_TRUE(lab_wait_one_master(s, 20, 2.0)) << read_all(s.sms[0].log);
    bool cleared = false;
    for (int i = 0; i < 100 && !cleared; ++i) {
        cleared = http_get(s.sms[1].api_port, "/api/v1/findings").body.find("sm_split_brain") == std::string::npos;
        sleep_s(0.1);
    }
    EXPECT_TRUE(cleared) << "sm_split_brain must clear once one master remains";
}

TEST(HaLab, TwoHostsResetDuringFailoverKeepTheirLids) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    // two CAs that are not SM hosts
    const Net net = parse_net(read_all(s.path("net.txt")), "net.txt");
    std::vector<std::string> hosts;
    for (const auto& n : net.nodes)
        if (n.type == NodeType::CA && !n.ports.empty() && n.id != s.sms[0].host && n.id != s.sms[1].host &&
            hosts.size() < 2)
            hosts.push_back(n.id);
    ASSERT_EQ(hosts.size(), 2u);
    sleep_s(0.5);  // the standby's daemon has the master's guid2lid of the first sweep
    const auto before = fabric_lids(s, 1);
    ASSERT_EQ(fault(lab, "kill-sm", "master").rc, 0);
    for (const auto& h : hosts) lab_console(s, "Clear \"" + h + "\"", 0.05);
    for (const auto& h : hosts) lab_console(s, "ReLink \"" + h + "\"", 0.05);
    ASSERT_TRUE(lab_wait_one_master(s, 10, 1.0));
    std::map<Guid, int> after;
    for (int i = 0; i < 50; ++i) {  // until the reset hosts have LIDs again
        after = fabric_lids(s, 1);
        if (after.size() == before.size()) break;
        sleep_s(0.2);
    }
    EXPECT_EQ(after, before);
}

// Unix ms now (for log_us_after).
int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Maintenance switchover through the daemons (`ibfabric sm switchover`), there and back: exactly one
// master each time, the one asked for, its sweep completes (SUBNET UP), and no LID moves. The way
// back names the target by its node description (the lab's host id).
TEST(HaLab, SwitchoverBothWaysKeepsLids) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    ASSERT_EQ(lab_wait_one_master(s, 10, 1.0), std::optional<size_t>(0));
    const auto before = fabric_lids(s, 1);
    const std::string url = "http://127.0.0.1:" + std::to_string(s.sms[0].api_port);
    const std::string token = s.path("api.token");
    auto switchover = [&](const std::string& to) {
        return lab.raw({"sm", "switchover", "--url", url, "--token-file", token, "--to", to, "--timeout", "5"}, 30);
    };

    Cli self = switchover(s.sms[0].port_guid);
    EXPECT_EQ(self.rc, 1) << "the master is not a standby\n" << describe(self);
    EXPECT_NE(self.err.find("is already the master"), std::string::npos) << self.err;
    Cli bad = switchover("no-such-node");
    EXPECT_EQ(bad.rc, 2) << describe(bad);
    EXPECT_NE(bad.err.find("no SM is named 'no-such-node'; SMs: " + s.sms[0].port_guid), std::string::npos) << bad.err;

    int64_t t = unix_ms_now();
    Cli to2 = switchover(s.sms[1].port_guid);
    ASSERT_EQ(to2.rc, 0) << describe(to2) << read_all(s.sms[0].log);
    auto m = lab_wait_one_master(s, 10, 1.0);
    ASSERT_TRUE(m);
    EXPECT_EQ(*m, 1u);
    EXPECT_TRUE(log_us_after(s.sms[1].log, t, "SUBNET UP")) << "the new master's sweep completes\n" << read_all(s.sms[1].log);
    EXPECT_EQ(fabric_lids(s, 1), before);

    t = unix_ms_now();
    // The way back as an operator of the lab types it: --lab, and the lab's own token (no --token-file).
    Cli to1 = lab.raw({"sm", "switchover", "--lab", lab.path, "--to", s.sms[0].host, "--timeout", "5"}, 30);
    ASSERT_EQ(to1.rc, 0) << describe(to1) << read_all(s.sms[1].log);
    m = lab_wait_one_master(s, 10, 1.0);
    ASSERT_TRUE(m);
    EXPECT_EQ(*m, 0u);
    EXPECT_TRUE(log_us_after(s.sms[0].log, t, "SUBNET UP")) << read_all(s.sms[0].log);
    EXPECT_EQ(fabric_lids(s, 1), before);
    // A round trip restores both priorities (docs/ha.md "Graceful switchover"), as SMInfo answers them.
    std::map<std::string, int> prio;
    const json sm = json::parse(http_get(s.sms[0].api_port, "/api/v1/sm").body, nullptr, false);
    ASSERT_TRUE(sm.is_object() && sm["ha"].is_object()) << sm.dump();
    for (const json& x : sm["ha"]["sms"]) prio[x["port_guid"].get<std::string>()] = x["priority"].get<int>();
    EXPECT_EQ(prio[s.sms[0].port_guid], 15) << sm.dump();
    EXPECT_EQ(prio[s.sms[1].port_guid], 14) << sm.dump();
}

namespace {

// ha.switchover of the agent at `port` once it has finished (null after `timeout_s`).
json finished_switchover(int port, double timeout_s) {
    const double deadline = now_s() + timeout_s;
    for (; now_s() < deadline; sleep_s(0.05)) {
        const json sm = json::parse(http_get(port, "/api/v1/sm").body, nullptr, false);
        if (sm.is_object() && sm["ha"].is_object() && sm["ha"]["switchover"].is_object() &&
            sm["ha"]["switchover"].value("finished", false))
            return sm["ha"]["switchover"];
    }
    return nullptr;
}

// The copies of the miswired finding one daemon's /metrics has: "active", "standby" or "" (none
// above 0; also when the scrape failed).
std::string miswired_copy(int api_port) {
    const std::string body = http_get(api_port, "/metrics", 2).body;
    for (const char* role : {"active", "standby"}) {
        const std::string key = std::string("\nibfabric_findings{kind=\"miswired\",severity=\"error\",role=\"") + role + "\"} ";
        const size_t at = body.find(key);
        if (at != std::string::npos && std::atoi(body.c_str() + at + key.size()) > 0) return role;
    }
    return "";
}

}  // namespace

// Issue 16 scenario 3: the `sm switchover` client killed 30 ms after it started. The run lives in
// the daemon, so it completes anyway: exactly one master (the target), the other SM STANDBY (not
// NOT_ACTIVE), every LID kept.
TEST(HaLab, SwitchoverWhoseClientIsKilledIsFinishedByTheDaemon) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    ASSERT_EQ(lab_wait_one_master(s, 10, 1.0), std::optional<size_t>(0));
    const auto before = fabric_lids(s, 1);
    lab_detail::SpawnSpec c;
    c.argv = {kBin + "/ibfabric", "sm", "switchover", "--url", "http://127.0.0.1:" + std::to_string(s.sms[0].api_port),
              "--token-file", s.path("api.token"), "--to", s.sms[1].port_guid};
    const int pid = lab_detail::spawn(c);
    sleep_s(0.03);
    ::kill(pid, SIGKILL);
    while (lab_detail::alive(pid)) sleep_s(0.01);
    const json sw = finished_switchover(s.sms[0].api_port, 30);
    ASSERT_TRUE(sw.is_object()) << "no switchover was started or it never finished\n" << read_all(s.sms[0].daemon_log);
    EXPECT_EQ(sw.value("state", ""), "done") << sw.dump();
    EXPECT_EQ(lab_wait_one_master(s, 10, 1.0), std::optional<size_t>(1)) << read_all(s.sms[0].daemon_log);
    EXPECT_TRUE(wait_state(s, 0, "STANDBY", 5.0)) << "the old master polls again\n" << read_all(s.sms[0].log);
    EXPECT_EQ(fabric_lids(s, 1), before);
}

// Issue 16 scenario 3: the target SIGSTOPped just before the switchover. Either the agent refuses
// before any change (it no longer answers) or its DISABLE queues up in the frozen SM and the run
// rolls back; at SIGCONT the queued DISABLE applies and the rollback tells it STANDBY again: one
// master (the old one), the target STANDBY, every LID kept.
TEST(HaLab, SwitchoverToAFrozenStandbyRollsBackAndLeavesItStandby) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--timeout", "60", "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 0) << describe(up);
    LabState s = lab.state();
    ASSERT_EQ(lab_wait_one_master(s, 10, 1.0), std::optional<size_t>(0));
    const auto before = fabric_lids(s, 1);
    ASSERT_EQ(fault(lab, "freeze-sm", s.sms[1].port_guid).rc, 0);
    Cli sw = lab.raw({"sm", "switchover", "--url", "http://127.0.0.1:" + std::to_string(s.sms[0].api_port),
                      "--token-file", s.path("api.token"), "--to", s.sms[1].port_guid, "--timeout", "2"},
                     5);
    // Still running after 5 s (-1: the client was killed), or refused, or rolled back: never done.
    EXPECT_NE(sw.rc, 0) << describe(sw);
    ASSERT_EQ(fault(lab, "thaw-sm", s.sms[1].port_guid).rc, 0);
    const json run = finished_switchover(s.sms[0].api_port, 40);
    if (run.is_object()) {  // accepted: it must have rolled back
        EXPECT_EQ(run.value("state", ""), "rolled_back") << run.dump();
    } else {
        EXPECT_NE(sw.err.find("not answering"), std::string::npos) << "refused before any change\n" << describe(sw);
    }
    EXPECT_EQ(lab_wait_one_master(s, 10, 1.0), std::optional<size_t>(0)) << read_all(s.sms[0].daemon_log);
    EXPECT_TRUE(wait_state(s, 1, "STANDBY", 20.0)) << "the target is not left NOT_ACTIVE\n" << read_all(s.sms[1].log);
    EXPECT_EQ(fabric_lids(s, 1), before);
}

// Issue 17 item 3: both SM nodes' daemons see the crossed pair, exactly one publishes it as
// active (the master's node); after a kill of the master the successor's daemon takes it over,
// never with two active copies and without one only while the failover lasts.
TEST(HaLab, ACrossedPairIsOneActiveMiswiredAcrossBothDaemonsThroughAFailover) {
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--fault", "cross:leaf02/19,leaf02/20", "--timeout", "60",
                      "--json"});
    SKIP_WITHOUT_HA(lab, up);
    ASSERT_EQ(up.rc, 1) << "findings: exit 1\n" << describe(up);
    EXPECT_EQ(summary(up), (std::map<std::string, int>{{"miswired", 1}})) << up.out;
    LabState s = lab.state();
    ASSERT_EQ(s.sms.size(), 2u);
    ASSERT_EQ(lab_wait_one_master(s, 10, 1.0), std::optional<size_t>(0));
    const int master_api = s.sms[0].api_port, standby_api = s.sms[1].api_port;
    std::string m, st;
    for (int i = 0; i < 100 && !(m == "active" && st == "standby"); ++i) {  // both daemons checked the fabric
        m = miswired_copy(master_api);
        st = miswired_copy(standby_api);
        if (!(m == "active" && st == "standby")) sleep_s(0.1);
    }
    ASSERT_EQ(m, "active") << "the master's node publishes the finding";
    ASSERT_EQ(st, "standby") << "the standby's node mirrors it";

    Cli k = fault(lab, "kill-sm", "master");
    ASSERT_EQ(k.rc, 0) << describe(k);
    const double kill_s = now_s();
    // Read the successor's daemon first: it turns active only after the old master's turned standby,
    // so in this order a poll never shows two active copies that were not there at one instant.
    int polls = 0, two = 0, after = 0, kept = 0;
    double zero_since = -1, longest_zero_s = 0, settled_s = -1;
    // Until the new master's daemon is active and the old one's is not, then one second more.
    while (now_s() - kill_s < 10 && (settled_s < 0 || now_s() - settled_s < 1.0)) {
        const std::string succ = miswired_copy(standby_api), old = miswired_copy(master_api);
        const double t = now_s();
        ++polls;
        two += succ == "active" && old == "active";
        const bool none = succ != "active" && old != "active";
        if (none && zero_since < 0) zero_since = t;
        if (!none && zero_since >= 0) longest_zero_s = std::max(longest_zero_s, t - zero_since), zero_since = -1;
        if (settled_s >= 0) {
            ++after;
            kept += succ == "active" && old != "active";
        } else if (succ == "active" && old != "active" && last_state(s, 1) == "MASTER") {
            settled_s = t;
        }
        sleep_s(0.01);
    }
    std::printf("kill -> new master's daemon active: %.0f ms; longest time without an active copy %.0f ms (%d polls)\n",
                (settled_s - kill_s) * 1000, longest_zero_s * 1000, polls);
    ASSERT_GT(settled_s, 0) << "the new master's daemon never published the finding as active\n"
                            << read_all(s.sms[1].daemon_log);
    EXPECT_EQ(two, 0) << "two active copies in " << two << " of " << polls << " polls";
    EXPECT_LT(longest_zero_s, 1.0) << "no active copy for longer than the failover (taken over within 1 s)";
    // And it stays so: the old node mirrors it or has none (its SM is dead, its daemon runs).
    EXPECT_GT(after, 10);
    EXPECT_EQ(kept, after) << "the new master's daemon active, the old one's not, in every poll after";
}
