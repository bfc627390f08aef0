// `ibfabric doctor` end to end on a temp dir: real files and modes, the built plugin and the
// installed opensm binary, a real ibfabricd fed a Hello and a snapshot over its Unix socket.
#include <gtest/gtest.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "ibf/daemon_fixture.h"
#include "ibf/doctor.h"
#include "ibf/ibsim_fixture.h"
#include "ibf/lab_process.h"

namespace ibf::doctor {
namespace {

namespace ts = ibf::test_support;
namespace t = ibf::test;

struct Node {
    t::TempDir dir;
    Paths paths;
    Node() {
        const std::string d = dir.path.string();
        std::filesystem::create_directories(d + "/lib");
        std::filesystem::copy_file(ts::plugin_dir() + "/libibfabric_osm.so", d + "/lib/libibfabric_osm.so");
        ::chmod((d + "/lib/libibfabric_osm.so").c_str(), 0644);
        t::write_file(d + "/opensm.conf", "event_plugin_name ibfabric_osm\nevent_plugin_options socket=" + d + "/osm.sock\n");
        t::write_file(d + "/opensm.log", "x -> ibfabric_osm: loaded (ibfabric 0.1.0, OpenSM 3.3.23), sending to unix:" + d + "/osm.sock\n");
        t::write_file(d + "/token", "s3cret\n");
        ::chmod((d + "/token").c_str(), 0600);
        t::write_file(d + "/ibfabricd.yaml", "socket: " + d + "/osm.sock\nhttp: \"127.0.0.1:0\"\nhistory: " + d +
                                                 "/history.db\ntoken_file: " + d + "/token\n");
        paths.opensm_conf = d + "/opensm.conf";
        paths.plugin_dirs = {d + "/nowhere", d + "/lib"};
        paths.opensm_log = d + "/opensm.log";
        paths.daemon_config = d + "/ibfabricd.yaml";
        paths.keepalived_conf = d + "/keepalived.conf";
    }
    std::string path(const std::string& f) const { return dir.file(f); }
};

std::string missing() {
    if (!std::filesystem::exists(ts::plugin_dir() + "/libibfabric_osm.so")) return "the plugin is not built";
    if (!std::filesystem::exists("/usr/sbin/opensm")) return "/usr/sbin/opensm is not installed (package opensm)";
    return "";
}

std::string me() {
    const passwd* u = ::getpwuid(::geteuid());
    const group* g = ::getgrgid(::getegid());
    return std::string(u ? u->pw_name : "?") + ":" + (g ? g->gr_name : "?");
}

std::string status_of(const std::vector<Check>& r, const std::string& name) {
    for (const auto& c : r)
        if (c.name == name) return std::string(to_string(c.status)) + " " + c.detail;
    return "missing " + name;
}

TEST(DoctorProbe, WithoutADaemonTheDaemonAndSocketChecksFail) {
    if (auto why = missing(); !why.empty()) GTEST_SKIP() << why;
    Node n;
    n.paths.url = "http://127.0.0.1:1";
    const auto r = run_checks(probe(n.paths));
    EXPECT_EQ(status_of(r, "plugin file"), "ok " + n.path("lib/libibfabric_osm.so") + " (where OpenSM's dlopen(\"libibfabric_osm.so\") finds it)");
    EXPECT_EQ(status_of(r, "plugin version"), "ok built for OpenSM 3.3.23, the installed opensm is OpenSM 3.3.23");
    EXPECT_EQ(status_of(r, "socket"), "FAIL " + n.path("osm.sock") + " does not exist");
    EXPECT_EQ(status_of(r, "daemon").rfind("FAIL ibfabricd at http://127.0.0.1:1 does not answer: ", 0), 0u) << status_of(r, "daemon");
    EXPECT_EQ(status_of(r, "token"), "ok " + n.path("token") + " mode 0600 " + me());
    EXPECT_FALSE(all_passed(r));
}

TEST(DoctorProbe, ADaemonReceivingSnapshotsPassesAndTheCliSaysSo) {
    if (auto why = missing(); !why.empty()) GTEST_SKIP() << why;
    Node n;
    ts::Child daemon({ts::bin_dir() + "/ibfabricd", "--config", n.path("ibfabricd.yaml"), "--port-file", n.path("port")}, {},
                     n.dir.path.string(), n.path("daemon.log"));
    ASSERT_TRUE(t::wait_until([&] { return !t::read_file(n.path("port")).empty(); })) << t::read_file(n.path("daemon.log"));
    n.paths.url = "http://127.0.0.1:" + t::read_file(n.path("port"));
    while (!n.paths.url.empty() && (n.paths.url.back() == '\n')) n.paths.url.pop_back();
    {
        t::UnixClient plugin(n.path("osm.sock"));
        ASSERT_TRUE(plugin.send(wire::Message(t::hello(t::kMasterGuid, SmState::Master))));
        ASSERT_TRUE(plugin.send(wire::Message(t::snapshot(t::small_fabric(), t::kMasterGuid, SmState::Master, 1))));
        ASSERT_TRUE(t::wait_until([&] { return probe(n.paths).daemon_fabric.value("sweeps_ingested", 0) == 1; }));
        const auto r = run_checks(probe(n.paths));
        EXPECT_TRUE(all_passed(r)) << render_text(r);
        EXPECT_EQ(status_of(r, "daemon"), "ok ibfabricd at " + n.paths.url + ": 1 plugin(s) connected, 1 sweep(s) received");
        EXPECT_EQ(status_of(r, "socket").rfind("ok " + n.path("osm.sock") + " mode 0660 ", 0), 0u) << status_of(r, "socket");
        EXPECT_EQ(status_of(r, "history db").rfind("ok " + n.path("history.db") + " mode 0600 ", 0), 0u) << status_of(r, "history db");

        // The CLI: the same checks, one line each, exit 0; --json parses.
        std::vector<std::string> argv = {ts::bin_dir() + "/ibfabric", "doctor", "--opensm-conf", n.paths.opensm_conf, "--plugin-dir",
                                         n.path("lib"), "--opensm-log", n.paths.opensm_log, "--config", n.paths.daemon_config,
                                         "--url", n.paths.url};
        ibf::lab_detail::SpawnSpec s;
        s.argv = argv;
        std::string out;
        EXPECT_EQ(ibf::lab_detail::run_capture(s, 20.0, out), 0) << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 14) << out;  // 11 + the 3 HA deployment checks (skipped: ha off)
        s.argv.push_back("--json");
        out.clear();  // run_capture appends
        EXPECT_EQ(ibf::lab_detail::run_capture(s, 20.0, out), 0) << out;
        const auto j = nlohmann::json::parse(out);
        EXPECT_EQ(j["ok"], true);
        EXPECT_EQ(j["checks"].size(), 14u);
    }
    // A world-readable token: the token check fails and so does the CLI (exit 1).
    ::chmod(n.path("token").c_str(), 0644);
    const auto r = run_checks(probe(n.paths));
    EXPECT_EQ(status_of(r, "token"), "FAIL " + n.path("token") + " has mode 0644: ibfabricd refuses it");
}

}  // namespace
}  // namespace ibf::doctor
