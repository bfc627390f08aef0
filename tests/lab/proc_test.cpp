// The lab's process helpers and state file, without ibsim: templates, state round trip, spawning
// with an argv, timeouts, liveness by PID and program, stopping.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ibf/error.h"
#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"

namespace fs = std::filesystem;
using namespace ibf;
using namespace ibf::lab_detail;

namespace {
struct Tmp {
    Tmp() {
        char t[] = "/tmp/ibf-lab-unit-XXXXXX";
        path = mkdtemp(t);
    }
    ~Tmp() { fs::remove_all(path); }
    std::string path;
};
}  // namespace

TEST(LabProc, FillTemplateReplacesEveryPlaceholderOrSaysWhere) {
    EXPECT_EQ(fill_template("a {{X}} b {{Y}}\n", {{"X", "1"}, {"Y", "two"}}, "t.conf"), "a 1 b two\n");
    try {
        fill_template("ok\nlog_file {{LOG}}\n", {{"X", "1"}}, "t.conf");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "t.conf");
        EXPECT_EQ(e.line(), 2);
        EXPECT_EQ(e.column(), 10);
        EXPECT_NE(e.message().find("{{LOG}}"), std::string::npos);
    }
    EXPECT_THROW(fill_template("x {{OPEN", {}, "t.conf"), InputError);
}

TEST(LabProc, TheShippedOpenSMTemplateFillsAndAsksForThePlugin) {
    std::ifstream f(std::string(IBF_SOURCE_DIR) + "/config/templates/opensm.conf");
    std::string t((std::istreambuf_iterator<char>(f)), {});
    ASSERT_FALSE(t.empty());
    std::string conf = fill_template(t,
                                     {{"LOG_FILE", "/l/osm.log"}, {"DUMP_DIR", "/l/work"}, {"SWEEP_INTERVAL", "2"},
                                      {"EVENT_PLUGIN_NAME", "ibfabric_osm"}, {"EVENT_PLUGIN_OPTIONS", "socket=/l/s"},
                                      {"PARTITION_FILE", "/l/p.conf"}, {"SM_PRIORITY", "14"},
                                      {"SMINFO_POLLING_TIMEOUT", "1000"}, {"POLLING_RETRY_NUMBER", "2"},
                                      {"HONOR_GUID2LID", "TRUE"}, {"PERFMGR", "TRUE"}, {"PERFMGR_SWEEP_TIME", "2"}},
                                     "opensm.conf");
    EXPECT_NE(conf.find("\nevent_plugin_name ibfabric_osm\n"), std::string::npos);
    EXPECT_NE(conf.find("\nevent_plugin_options socket=/l/s\n"), std::string::npos);
    EXPECT_NE(conf.find("\nforce_log_flush TRUE\n"), std::string::npos);
    EXPECT_NE(conf.find("\nlog_file /l/osm.log\n"), std::string::npos);
    EXPECT_NE(conf.find("\nsm_priority 14\n"), std::string::npos);
    EXPECT_NE(conf.find("\nsminfo_polling_timeout 1000\n"), std::string::npos);
    EXPECT_NE(conf.find("\npolling_retry_number 2\n"), std::string::npos);
    EXPECT_NE(conf.find("\nhonor_guid2lid_file TRUE\n"), std::string::npos);
    EXPECT_NE(conf.find("\nperfmgr TRUE\n"), std::string::npos);
    EXPECT_NE(conf.find("\nperfmgr_sweep_time_s 2\n"), std::string::npos);
    // Fewer than 10 perfmgr MADs in flight, or OpenSM and ibsim deadlock in umad2sim (docs/lab.md).
    EXPECT_NE(conf.find("\nperfmgr_max_outstanding_queries 4\n"), std::string::npos);
    EXPECT_EQ(conf.find("{{"), std::string::npos);
}

TEST(LabProc, PerfmgrSweepFromTheLabsOpenSMConf) {
    Tmp t;
    LabState s;
    s.dir = t.path;
    std::ofstream(s.path("opensm.conf")) << "# perfmgr TRUE\nperfmgr TRUE\nperfmgr_sweep_time_s 5\n";
    EXPECT_EQ(lab_perfmgr_sweep_s(s), 5);
    std::ofstream(s.path("opensm.conf")) << "perfmgr TRUE\n";
    EXPECT_EQ(lab_perfmgr_sweep_s(s), 180);  // OpenSM's default
    std::ofstream(s.path("opensm.conf")) << "perfmgr FALSE\nperfmgr_sweep_time_s 5\n";
    EXPECT_EQ(lab_perfmgr_sweep_s(s), 0);
    s.sms.push_back(LabSm{});
    s.sms[0].conf = s.path("sm1.conf");
    std::ofstream(s.sms[0].conf) << "perfmgr TRUE\nperfmgr_sweep_time_s 2\n";
    EXPECT_EQ(lab_perfmgr_sweep_s(s), 2);  // SM 1's file when the lab has several
}

TEST(LabProc, MetricsCountAPortOnlyThroughItsOwnCounterSeries) {
    const std::string m =
        "# TYPE ibfabric_link_symbol_errors_total counter\n"
        "ibfabric_link_symbol_errors_total{local_guid=\"0x2\",local_name=\"leaf05\",local_port=\"1\",remote_name=\"node073\",remote_port=\"1\"} 0\n"
        "ibfabric_link_state{local_guid=\"0x2\",local_name=\"leaf06\",local_port=\"2\",remote_name=\"x\"} 1\n"
        "ibfabric_links_total{local_name=\"leaf07\",local_port=\"3\",} 1\n"
        "ibfabric_link_downed_total{local_guid=\"0x3\",local_name=\"leaf05\",local_port=\"12\",remote_name=\"n\"} 2\n";
    EXPECT_NE(metrics_port_counters(m, "leaf05", 1), "");
    EXPECT_NE(metrics_port_counters(m, "leaf05", 12), "");
    EXPECT_EQ(metrics_port_counters(m, "leaf05", 2), "");   // no series for that port
    EXPECT_NE(metrics_port_counters(m, "node073", 1), "");   // the link's other end (both ends are added)
    EXPECT_EQ(metrics_port_counters(m, "node07", 1), "");   // a name is matched whole
    EXPECT_EQ(metrics_port_counters(m, "node073", 11), "");
    EXPECT_EQ(metrics_port_counters(m, "leaf05", 12),
              "ibfabric_link_downed_total{local_guid=\"0x3\",local_name=\"leaf05\",local_port=\"12\",remote_name=\"n\"} 2\n");
    EXPECT_EQ(metrics_port_counters(m, "leaf06", 2), "");   // a link gauge, not a counter
    EXPECT_EQ(metrics_port_counters(m, "leaf07", 3), "");   // not a per-link family
    EXPECT_EQ(metrics_port_counters("", "leaf05", 1), "");
    EXPECT_EQ(metrics_port_counters(m, "leaf05", 12, "ibfabric_link_symbol_errors_total"), "");
    EXPECT_NE(metrics_port_counters(m, "leaf05", 1, "ibfabric_link_symbol_errors_total"), "");
}

TEST(LabProc, IbsimCounterFieldsMapToTheirMetricFamilies) {
    EXPECT_EQ(counter_family("SymbolErrorCounter"), "ibfabric_link_symbol_errors_total");
    EXPECT_EQ(counter_family("PortCounters.LinkDownedCounter"), "ibfabric_link_downed_total");
    EXPECT_EQ(counter_family("linkerrorrecoverycounter"), "ibfabric_link_error_recovery_total");  // ibsim: any case
    EXPECT_EQ(counter_family("PortXmitData"), "ibfabric_link_xmit_bytes_total");
    EXPECT_EQ(counter_family("PortXmitWait"), "ibfabric_link_xmit_wait_total");
    EXPECT_EQ(counter_family("PortXmitConstraintErrors"), "");  // not exported
    EXPECT_EQ(counter_family("Bogus"), "");
}

TEST(LabProc, StateFileRoundTrip) {
    Tmp t;
    LabState s;
    s.dir = t.path;
    s.sockname = "ibflab1x2";
    s.sm_host = "node01 mlx5_0";
    s.ibsim_pid = 11;
    s.opensm_pid = 12;
    s.daemon_pid = 13;
    s.api_port = 4242;
    s.ingest_socket = t.path + "/ingest.sock";
    s.expected = "/p.yaml";
    s.source = "plan.yaml";
    s.faults = {"remove:leaf01/1", "cross:a/1,a/2"};
    s.started_unix_ms = 1234;
    lab_save_state(s);
    auto r = lab_load_state(t.path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->sm_host, s.sm_host);
    EXPECT_EQ(r->daemon_pid, 13);
    EXPECT_EQ(r->api_port, 4242);
    EXPECT_EQ(r->faults, s.faults);
    EXPECT_FALSE(lab_load_state(t.path + "/nope"));
    std::ofstream(t.path + "/state.json") << "{not json";
    EXPECT_THROW(lab_load_state(t.path), InputError);
}

TEST(LabProc, StateFileKeepsEverySmAndTheSingleSmFieldsMeanSm1) {
    Tmp t;
    LabState s;
    s.dir = t.path;
    s.sockname = "ibflab1x3";
    s.ha = LabHa::Native;
    s.key_file = t.path + "/ingest.key";
    for (int i = 1; i <= 2; ++i) {
        LabSm m;
        m.host = "node00" + std::to_string(i);
        m.port_guid = "0x000000000010000" + std::to_string(i);
        m.lid = i + 1;
        m.priority = 16 - i;
        m.pid = 100 + i;
        m.log = t.path + "/sm" + std::to_string(i) + "/osm.log";
        m.daemon_pid = 200 + i;
        m.api_port = 3000 + i;
        m.tcp_port = 4000 + i;
        m.dir = t.path + "/sm" + std::to_string(i);
        s.sms.push_back(m);
    }
    lab_save_state(s);
    auto r = lab_load_state(t.path);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->sms.size(), 2u);
    EXPECT_EQ(r->ha, LabHa::Native);
    EXPECT_EQ(r->key_file, s.key_file);
    EXPECT_EQ(r->sms[1].host, "node002");
    EXPECT_EQ(r->sms[1].port_guid, "0x0000000000100002");
    EXPECT_EQ(r->sms[1].lid, 3);
    EXPECT_EQ(r->sms[1].priority, 14);
    EXPECT_EQ(r->sms[1].pid, 102);
    EXPECT_EQ(r->sms[1].tcp_port, 4002);
    EXPECT_EQ(r->sms[1].log, s.sms[1].log);
    // compat: the old single-SM fields are SM 1
    EXPECT_EQ(r->sm_host, "node001");
    EXPECT_EQ(r->opensm_pid, 101);
    EXPECT_EQ(r->daemon_pid, 201);
    EXPECT_EQ(r->api_port, 3001);
}

TEST(LabProc, RunCaptureTakesAnArgvNotAShellLine) {
    std::string out;
    // One argument with shell metacharacters reaches the program untouched.
    EXPECT_EQ(run_capture({.argv = {"echo", "a; rm -rf / $(x) 'q'"}}, 10, out), 0);
    EXPECT_EQ(out, "a; rm -rf / $(x) 'q'\n");
    out.clear();
    EXPECT_EQ(run_capture({.argv = {"sh", "-c", "echo $IBF_X", "x"}, .env = {{"IBF_X", "set"}}}, 10, out), 0);
    EXPECT_EQ(out, "set\n");
    out.clear();
    EXPECT_EQ(run_capture({.argv = {"false"}}, 10, out), 1);
    EXPECT_EQ(run_capture({.argv = {"sleep", "5"}}, 0.2, out), -1);  // timed out and killed
    EXPECT_THROW(run_capture({.argv = {"/nonexistent/ibf-no-such-program"}}, 1, out), std::runtime_error);
}

TEST(LabProc, AliveChecksTheProgramAndStopEndsIt) {
    Tmp t;
    int pid = spawn({.argv = {"sleep", "30"}, .out_path = t.path + "/out"});
    ASSERT_GT(pid, 0);
    EXPECT_TRUE(alive(pid, "sleep"));
    EXPECT_FALSE(alive(pid, "opensm"));  // a PID running another program is not "ours"
    EXPECT_FALSE(stop(pid, "opensm", 0.1));
    EXPECT_TRUE(alive(pid, "sleep"));
    EXPECT_TRUE(stop(pid, "sleep", 2.0));
    EXPECT_FALSE(alive(pid, "sleep"));  // reaped, not a zombie
    EXPECT_FALSE(alive(0));
}

TEST(LabProc, TailFileKeepsTheLastLines) {
    Tmp t;
    std::ofstream(t.path + "/log") << "1\n2\n3\n4\n";
    EXPECT_EQ(tail_file(t.path + "/log", 2), "3\n4\n");
    EXPECT_EQ(tail_file(t.path + "/missing", 2), "");
}

// A client run by run_capture (ibnetdiscover, sminfo...) dies with its caller: once ibsim is gone
// such a client hangs forever, and one was found an hour and a half after its caller had died.
TEST(LabProc, RunCaptureChildDiesWithItsCaller) {
    const fs::path pid_file = fs::temp_directory_path() / ("ibf-pdeath-" + std::to_string(getpid()));
    fs::remove(pid_file);
    pid_t caller = fork();
    ASSERT_GE(caller, 0);
    if (caller == 0) {
        std::string out;
        run_capture({.argv = {"sh", "-c", "echo $$ > \"$1.tmp\" && mv \"$1.tmp\" \"$1\" && exec sleep 30", "sh",
                              pid_file.string()}},
                    60, out);
        _exit(0);
    }
    pid_t client = 0;
    for (int i = 0; i < 100 && client == 0; ++i) {
        std::ifstream f(pid_file);
        if (!(f >> client)) client = 0;
        if (client == 0) usleep(50 * 1000);
    }
    ASSERT_GT(client, 0) << "the client never started";
    ASSERT_EQ(kill(client, 0), 0);
    kill(caller, SIGKILL);
    waitpid(caller, nullptr, 0);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = !alive(client, "sleep");
        if (!gone) usleep(20 * 1000);
    }
    fs::remove(pid_file);
    EXPECT_TRUE(gone) << "pid " << client << " outlived its caller";
    if (!gone) kill(client, SIGKILL);
}
