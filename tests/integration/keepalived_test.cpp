// keepalived follows the InfiniBand master: two keepalived in network namespaces this test creates
// (and always removes), each tracking the `ha.track_file` its SM node's ibfabricd writes in a
// two-SM lab (config/templates/keepalived.conf's scheme: track_file weight 0, nopreempt, VRRPv3
// 100 ms adverts, unicast over a bridge in a third namespace, link-local addresses only). The VIP
// must sit on the master's node, and move within 1 s after the agent of the new master says so.
// Needs root, keepalived and iproute2 (CI has them); elsewhere it skips saying which is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "lab_cli.h"

namespace fs = std::filesystem;
using namespace ibf;
using namespace ibf::test;
using lab_detail::now_s;
using lab_detail::sleep_s;

namespace {

// `ip ARGS` (never a shell); its exit status.
int ip(const std::vector<std::string>& args, std::string* out = nullptr) {
    lab_detail::SpawnSpec s;
    s.argv = {"ip"};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    std::string o;
    const int rc = lab_detail::run_capture(s, 10, o);
    if (out) *out = o;
    return rc;
}

// Three namespaces A, B and a switch SW (a bridge), removed with every process in them.
struct Namespaces {
    std::string a, b, sw;
    std::vector<int> pids;
    std::vector<std::string> pid_files;  // keepalived's own (its VRRP child too)
    explicit Namespaces(const std::string& tag) : a("ibfk" + tag + "A"), b("ibfk" + tag + "B"), sw("ibfk" + tag + "S") {}
    ~Namespaces() {
        for (int pid : pids) lab_detail::stop(pid, "", 2.0);
        for (const auto& f : pid_files)
            if (int pid = std::atoi(read_all(f).c_str()); pid > 1) lab_detail::stop(pid, "keepalived", 1.0);
        for (const auto& n : {a, b, sw}) ip({"netns", "del", n});
    }
    bool create() {
        const std::vector<std::vector<std::string>> steps = {
            {"netns", "add", a}, {"netns", "add", b}, {"netns", "add", sw},
            {"-n", sw, "link", "add", "br0", "type", "bridge"},
            {"link", "add", "vA", "netns", a, "type", "veth", "peer", "name", "swA", "netns", sw},
            {"link", "add", "vB", "netns", b, "type", "veth", "peer", "name", "swB", "netns", sw},
            {"-n", sw, "link", "set", "swA", "master", "br0"}, {"-n", sw, "link", "set", "swB", "master", "br0"},
            {"-n", sw, "link", "set", "br0", "up"}, {"-n", sw, "link", "set", "swA", "up"},
            {"-n", sw, "link", "set", "swB", "up"}, {"-n", a, "addr", "add", "169.254.77.1/24", "dev", "vA"},
            {"-n", b, "addr", "add", "169.254.77.2/24", "dev", "vB"}, {"-n", a, "link", "set", "lo", "up"},
            {"-n", b, "link", "set", "lo", "up"}, {"-n", a, "link", "set", "vA", "up"},
            {"-n", b, "link", "set", "vB", "up"}};
        for (const auto& s : steps)
            if (ip(s) != 0) return false;
        return true;
    }
    bool has_vip(const std::string& ns, const std::string& dev) {
        std::string out;
        ip({"-n", ns, "-4", "addr", "show", "dev", dev}, &out);
        return out.find("169.254.77.100/") != std::string::npos;
    }
};

std::string keepalived_conf(const std::string& dev, const std::string& self, const std::string& peer,
                            const std::string& track_file) {
    return "global_defs {\n  vrrp_version 3\n  enable_script_security\n  script_user root\n}\n"
           "track_file ib_sm_master {\n  file \"" + track_file + "\"\n  weight 0\n}\n"
           "vrrp_instance IB_SM {\n  state BACKUP\n  nopreempt\n  interface " + dev +
           "\n  virtual_router_id 77\n  priority 100\n  advert_int 0.1\n  unicast_src_ip " + self +
           "\n  unicast_peer {\n    " + peer + "\n  }\n  virtual_ipaddress {\n    169.254.77.100/24 dev " + dev +
           "\n  }\n  track_file {\n    ib_sm_master\n  }\n}\n";
}

std::string missing() {
    if (::geteuid() != 0) return "not root: network namespaces and keepalived need root (CI runs as root)";
    for (const char* p : {"keepalived", "ip", "ibsim", "opensm"})
        if (lab_detail::which(p).empty()) return std::string(p) + " is not installed (scripts/install-deps.sh installs it)";
    if (!have_daemon()) return "ibfabricd or libibfabric_osm.so is not built";
    return "";
}

bool wait_for(const std::function<bool()>& ok, double timeout_s, double* at = nullptr) {
    const double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        if (ok()) {
            if (at) *at = now_s();
            return true;
        }
        sleep_s(0.01);
    }
    return false;
}

}  // namespace

TEST(Keepalived, TheVipFollowsTheInfiniBandMaster) {
    if (auto why = missing(); !why.empty()) GTEST_SKIP() << why;
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--sms", "2", "--json"}, 180);
    ASSERT_LE(up.rc, 1) << up.err;
    auto s = lab_load_state(lab.path);
    ASSERT_TRUE(s && s->sms.size() == 2);
    const std::string track_a = s->sms[0].dir + "/sm-state", track_b = s->sms[1].dir + "/sm-state";
    ASSERT_TRUE(wait_for([&] { return read_all(track_a) == "0\n" && read_all(track_b) == "1\n"; }, 10))
        << "SM 1 is master: its agent writes 0, the standby's 1 (" << read_all(track_a) << "/" << read_all(track_b) << ")";

    Namespaces ns(std::to_string(::getpid() % 100000));
    ASSERT_TRUE(ns.create()) << "cannot create the test's network namespaces";
    struct Node {
        std::string ns, dev, self, peer, track;
    };
    for (const Node& n : {Node{ns.a, "vA", "169.254.77.1", "169.254.77.2", track_a},
                          Node{ns.b, "vB", "169.254.77.2", "169.254.77.1", track_b}}) {
        const std::string conf = lab.path + "/keepalived-" + n.dev + ".conf";
        std::ofstream(conf) << keepalived_conf(n.dev, n.self, n.peer, n.track);
        lab_detail::SpawnSpec sp;
        sp.argv = {"ip", "netns", "exec", n.ns, "keepalived", "-n", "-l", "-D", "-f", conf,
                   "-p", lab.path + "/ka-" + n.dev + ".pid", "-r", lab.path + "/ka-" + n.dev + "-vrrp.pid"};
        sp.out_path = lab.path + "/keepalived-" + n.dev + ".log";
        sp.die_with_parent = true;
        ns.pids.push_back(lab_detail::spawn(sp));
        ns.pid_files.push_back(lab.path + "/ka-" + n.dev + "-vrrp.pid");
    }
    ASSERT_TRUE(wait_for([&] { return ns.has_vip(ns.a, "vA"); }, 10)) << read_all(lab.path + "/keepalived-vA.log");
    EXPECT_FALSE(ns.has_vip(ns.b, "vB")) << "the VIP is on the master's node only";

    Cli kill = lab.cli({"lab", "fault", "kill-sm", "master", "--json"}, 30);
    ASSERT_EQ(kill.rc, 0) << kill.err;
    double b_master = 0, b_vip = 0;
    ASSERT_TRUE(wait_for([&] { return read_all(track_b) == "0\n"; }, 10, &b_master))
        << "the standby's agent reports its SM MASTER after the takeover";
    ASSERT_TRUE(wait_for([&] { return ns.has_vip(ns.b, "vB"); }, 3, &b_vip)) << read_all(lab.path + "/keepalived-vB.log");
    EXPECT_LT(b_vip - b_master, 1.0) << "the VIP moves within 1 s of the InfiniBand master change";
    EXPECT_TRUE(wait_for([&] { return !ns.has_vip(ns.a, "vA"); }, 3)) << "and leaves the old master's node";
    std::printf("kill -> B's track file says MASTER: see the lab; track file -> VIP on B: %.0f ms\n",
                (b_vip - b_master) * 1000);
}
