// Test support for tests that run real ibsim / OpenSM / ibfabricd (label integration). Every
// process is a child of the test: in its own process group, SIGKILLed when the test process dies
// (PR_SET_PDEATHSIG), and killed by pid (never by name) when its Child or the fixture goes away.
//
//   if (auto why = ibf::test_support::missing_tools(); !why.empty()) GTEST_SKIP() << why;
//   ibf::test_support::IbsimFixture fx("ibfpl");            // temp dir + unique IBSIM_SOCKNAME
//   ASSERT_NO_FATAL_FAILURE(fx.start_ibsim(two_switch_net(), {.console = true}));
//   fx.start_opensm("h1", plugin_conf("socket=" + (fx.tmp / "s.sock")));
//   ASSERT_TRUE(wait_for_text(fx.tmp / "osm.log", "SUBNET UP", 15s)) << fx.log();
//   fx.console("Unlink \"sw2\"[1]");
//   // ~IbsimFixture: opensm, ibfabricd, then ibsim are killed and the temp dir removed
//   // (kept when IBF_KEEP_TMP is set).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace ibf::test_support {

using Clock = std::chrono::steady_clock;

inline const std::string kUmad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

std::string bin_dir();     // the build's bin/ (ibfabric, ibfabricd)
std::string plugin_dir();  // the directory holding libibfabric_osm.so (bin/../lib)

// "" when ibsim, opensm, umad2sim and the built plugin are there (plus each of `bins`, program
// names in bin_dir()); otherwise what is missing, for GTEST_SKIP().
std::string missing_tools(const std::vector<std::string>& bins = {});

// A fresh directory under $TMPDIR, removed with what it holds (unless IBF_KEEP_TMP is set).
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "ibf-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);  // "" when it cannot be read
// Polls `file` every 20 ms until it contains `needle`.
bool wait_for_text(const std::string& file, const std::string& needle, std::chrono::milliseconds timeout);

// An IBSIM_SOCKNAME no other run uses: prefix, our pid and a random part.
std::string unique_sockname(const std::string& prefix);

// A child process (argv[0] through PATH), stdout and stderr to `out_file`, stdin from
// `stdin_path` ("" = /dev/null; a FIFO is opened read-only, so keep it open read-write yourself).
// SIGKILLed (by pid) and reaped when destroyed unless it has already ended.
class Child {
public:
    Child() = default;
    Child(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& cwd,
          const std::string& out_file, const std::string& stdin_path = "");
    Child(Child&& o) noexcept;
    Child& operator=(Child&& o) noexcept;
    ~Child();

    pid_t pid() const { return pid_; }  // -1 once it has been reaped
    bool running();                     // reaps it when it has ended
    // SIGTERM, wait up to `grace`, then SIGKILL. True when it ended within the grace.
    bool stop(std::chrono::milliseconds grace);
    void kill_now();                    // SIGKILL and reap
    int status() const { return status_; }  // wait status once reaped
    int exit_code() const;              // its exit code once reaped, -1 when killed by a signal

private:
    pid_t pid_ = -1;
    int status_ = 0;
    bool reaped_ = false;
};

// OpenSM configuration loading the ibfabric plugin, with force_log_flush (tests wait on the log),
// then `extra` lines as they are.
std::string plugin_conf(const std::string& plugin_options, const std::string& extra = "");

// Nets used by several tests (ibsim net file text).
// 2 switches, 4 HCAs, 6 cables: two parallel ISLs; every port enables SDR..QDR and FDR..HDR, so
// links come up 4xHDR, except h2's (EDR only enabled at both ends: 4xEDR) and h4's (1x only: 1xHDR).
std::string two_switch_net();
// 4 spines, 8 leaves with 3 hosts each (leaf ports 1..3 hosts, 5..8 spines); when `host_on_spine`,
// one more host "hx" on spine0 port 9 (ftree refuses it: not a fat-tree).
std::string spine_leaf_net(bool host_on_spine);
// A full 2-level tree of `radix`-port switches: radix/2 spines, radix leaves with radix/2 hosts each
// (h0..), leaf ports 1..radix/2 to hosts, radix/2+1.. to the spines.
std::string full_tree_net(int radix);

struct IbsimOptions {
    bool console = false;                 // a console FIFO (tmp/console) instead of -n
    std::vector<std::string> extra_args;  // e.g. {"-N", "4096"}
};

// One simulated fabric in a temp dir, with the OpenSMs and the ibfabricd the test starts in it.
class IbsimFixture {
public:
    explicit IbsimFixture(const std::string& prefix = "ibft");
    ~IbsimFixture();  // opensm, daemon, ibsim killed by pid; console closed; temp dir removed
    IbsimFixture(const IbsimFixture&) = delete;
    IbsimFixture& operator=(const IbsimFixture&) = delete;

    TempDir tmp;
    std::string sockname;  // IBSIM_SOCKNAME
    Child ibsim, opensm, daemon;

    // Writes tmp/net and starts `ibsim -s` on it; waits for "Network simulator ready" (gtest
    // assertions: wrap in ASSERT_NO_FATAL_FAILURE).
    void start_ibsim(const std::string& net, const IbsimOptions& o = {});
    // One console line (needs {.console = true}).
    void console(const std::string& cmd);

    // An OpenSM attached at node `host` under umad2sim, run in `dir` (conf, osm.log, opensm.out,
    // caches there), loading plugins from `lib_dir`.
    Child spawn_opensm(const std::string& dir, const std::string& host, const std::string& conf,
                       const std::string& lib_dir) const;
    // The fixture's main OpenSM, in tmp.
    void start_opensm(const std::string& host, const std::string& conf, const std::string& lib_dir = plugin_dir());
    // Another OpenSM in its own directory tmp/<name>/.
    Child spawn_sm(const std::string& name, const std::string& host, const std::string& conf);
    std::string log() const { return read_file(tmp / "osm.log"); }  // the main OpenSM's log

    // ibfabricd listening on `socket`, HTTP on an ephemeral port of 127.0.0.1, log in tmp/daemon.log;
    // waits for its port file and returns the port (gtest assertions).
    void start_daemon(const std::string& socket, const std::vector<std::string>& extra_args, uint16_t& port);

private:
    int console_fd_ = -1;
};

}  // namespace ibf::test_support
