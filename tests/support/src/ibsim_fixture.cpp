#include "ibf/ibsim_fixture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ibf::test_support {

using namespace std::chrono_literals;

std::string bin_dir() { return IBF_BIN_DIR; }
std::string plugin_dir() { return bin_dir() + "/../lib"; }

std::string missing_tools(const std::vector<std::string>& bins) {
    std::string missing;
    auto need = [&](const std::string& path, int mode) {
        if (::access(path.c_str(), mode) != 0) missing += (missing.empty() ? "" : ", ") + path;
    };
    need("/usr/bin/ibsim", X_OK);
    need("/usr/sbin/opensm", X_OK);
    need(kUmad2sim, R_OK);
    need(plugin_dir() + "/libibfabric_osm.so", R_OK);
    for (const auto& b : bins) need(bin_dir() + "/" + b, X_OK);
    return missing.empty() ? "" : "missing: " + missing;
}

TempDir::TempDir(const std::string& prefix) {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path_ = t;
}

TempDir::~TempDir() {
    std::error_code ec;
    if (!std::getenv("IBF_KEEP_TMP")) std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool wait_for_text(const std::string& file, const std::string& needle, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        if (read_file(file).find(needle) != std::string::npos) return true;
        std::this_thread::sleep_for(20ms);
    }
    return read_file(file).find(needle) != std::string::npos;
}

std::string unique_sockname(const std::string& prefix) {
    std::random_device rd;
    char r[16];
    std::snprintf(r, sizeof r, "%08x", static_cast<unsigned>(rd()));
    return prefix + std::to_string(::getpid()) + "x" + r;
}

// ---- Child ----

Child::Child(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& cwd,
             const std::string& out_file, const std::string& stdin_path) {
    // Everything the child needs is prepared before fork (only async-signal-safe calls after it).
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::string in_path = stdin_path.empty() ? "/dev/null" : stdin_path;
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
        ::setpgid(0, 0);
        if (::chdir(cwd.c_str()) != 0) ::_exit(126);
        int in = ::open(in_path.c_str(), O_RDONLY);
        int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0) ::_exit(126);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(out, 2);
        for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
}

Child::Child(Child&& o) noexcept : pid_(o.pid_), status_(o.status_), reaped_(o.reaped_) { o.pid_ = -1; }

Child& Child::operator=(Child&& o) noexcept {
    if (this != &o) {
        kill_now();
        pid_ = o.pid_;
        status_ = o.status_;
        reaped_ = o.reaped_;
        o.pid_ = -1;
    }
    return *this;
}

Child::~Child() { kill_now(); }

bool Child::running() {
    if (pid_ <= 0) return false;
    int st;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        status_ = st;
        reaped_ = true;
        pid_ = -1;
        return false;
    }
    return true;
}

bool Child::stop(std::chrono::milliseconds grace) {
    if (!running()) return true;
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + grace;
    while (Clock::now() < deadline) {
        if (!running()) return true;
        std::this_thread::sleep_for(10ms);
    }
    kill_now();
    return false;
}

void Child::kill_now() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int st;
        ::waitpid(pid_, &st, 0);
        status_ = st;
        reaped_ = true;
        pid_ = -1;
    }
}

int Child::exit_code() const { return reaped_ && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }

// ---- nets ----

std::string plugin_conf(const std::string& plugin_options, const std::string& extra) {
    return "event_plugin_name ibfabric_osm\nevent_plugin_options " + plugin_options + "\nforce_log_flush TRUE\n" + extra;
}

std::string two_switch_net() {
    return R"(speed=7
extspeed=7

Switch 8 "sw1"
[1] "h1"[1]
[2] "h2"[1] e=2
[3] "sw2"[3]
[4] "sw2"[4]

Switch 8 "sw2"
[1] "h3"[1]
[2] "h4"[1] w=1
[3] "sw1"[3]
[4] "sw1"[4]

Hca 1 "h1"
[1] "sw1"[1]

Hca 1 "h2"
[1] "sw1"[2] e=2

Hca 1 "h3"
[1] "sw2"[1]

Hca 1 "h4"
[1] "sw2"[2] w=1
)";
}

std::string spine_leaf_net(bool host_on_spine) {
    auto s = [](int i) { return std::to_string(i); };
    std::string net;
    for (int sp = 0; sp < 4; ++sp) {
        const bool extra = host_on_spine && sp == 0;
        net += "Switch " + s(extra ? 9 : 8) + " \"spine" + s(sp) + "\"\n";
        for (int l = 0; l < 8; ++l) net += "[" + s(l + 1) + "] \"leaf" + s(l) + "\"[" + s(5 + sp) + "]\n";
        if (extra) net += "[9] \"hx\"[1]\n";
        net += "\n";
    }
    for (int l = 0; l < 8; ++l) {
        net += "Switch 8 \"leaf" + s(l) + "\"\n";
        for (int h = 0; h < 3; ++h) net += "[" + s(h + 1) + "] \"h" + s(l * 3 + h) + "\"[1]\n";
        for (int sp = 0; sp < 4; ++sp) net += "[" + s(5 + sp) + "] \"spine" + s(sp) + "\"[" + s(l + 1) + "]\n";
        net += "\n";
    }
    for (int i = 0; i < 24; ++i) net += "Hca 1 \"h" + s(i) + "\"\n[1] \"leaf" + s(i / 3) + "\"[" + s(i % 3 + 1) + "]\n\n";
    if (host_on_spine) net += "Hca 1 \"hx\"\n[1] \"spine0\"[9]\n\n";
    return net;
}

std::string full_tree_net(int radix) {
    auto s = [](int i) { return std::to_string(i); };
    const int h = radix / 2;
    std::string net;
    for (int sp = 0; sp < h; ++sp) {
        net += "Switch " + s(radix) + " \"spine" + s(sp) + "\"\n";
        for (int l = 0; l < radix; ++l) net += "[" + s(l + 1) + "] \"leaf" + s(l) + "\"[" + s(h + 1 + sp) + "]\n";
        net += "\n";
    }
    for (int l = 0; l < radix; ++l) {
        net += "Switch " + s(radix) + " \"leaf" + s(l) + "\"\n";
        for (int i = 0; i < h; ++i) net += "[" + s(i + 1) + "] \"h" + s(l * h + i) + "\"[1]\n";
        for (int sp = 0; sp < h; ++sp) net += "[" + s(h + 1 + sp) + "] \"spine" + s(sp) + "\"[" + s(l + 1) + "]\n";
        net += "\n";
    }
    for (int i = 0; i < radix * h; ++i) net += "Hca 1 \"h" + s(i) + "\"\n[1] \"leaf" + s(i / h) + "\"[" + s(i % h + 1) + "]\n\n";
    return net;
}

// ---- IbsimFixture ----

IbsimFixture::IbsimFixture(const std::string& prefix) : tmp(prefix), sockname(unique_sockname(prefix)) {}

IbsimFixture::~IbsimFixture() {
    opensm.kill_now();
    daemon.kill_now();
    ibsim.kill_now();
    if (console_fd_ >= 0) ::close(console_fd_);
}

void IbsimFixture::start_ibsim(const std::string& net, const IbsimOptions& o) {
    write_file(tmp / "net", net);
    std::vector<std::string> argv = {"ibsim", "-s"};
    std::string in;
    if (o.console) {
        in = tmp / "console";
        ASSERT_EQ(::mkfifo(in.c_str(), 0600), 0);
        console_fd_ = ::open(in.c_str(), O_RDWR | O_CLOEXEC);  // held open: ibsim's stdin never sees EOF
        ASSERT_GE(console_fd_, 0);
    } else {
        argv.push_back("-n");
    }
    argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
    argv.push_back(tmp / "net");
    ibsim = Child(argv, {"IBSIM_SOCKNAME=" + sockname}, tmp.path(), tmp / "ibsim.out", in);
    ASSERT_TRUE(wait_for_text(tmp / "ibsim.out", "Network simulator ready", 10s)) << read_file(tmp / "ibsim.out");
}

void IbsimFixture::console(const std::string& cmd) {
    ASSERT_GE(console_fd_, 0) << "ibsim was started without a console";
    const std::string line = cmd + "\n";
    ASSERT_EQ(::write(console_fd_, line.data(), line.size()), static_cast<ssize_t>(line.size()));
}

// LD_PRELOAD of OpenSM: umad2sim, after $IBF_OPENSM_PRELOAD when set (scripts/sanitize.sh puts the
// ASan runtime there so an ASan-built plugin loads into the uninstrumented opensm).
static std::string opensm_preload() {
    const char* extra = ::getenv("IBF_OPENSM_PRELOAD");
    return extra && *extra ? std::string(extra) + ":" + kUmad2sim : kUmad2sim;
}

Child IbsimFixture::spawn_opensm(const std::string& dir, const std::string& host, const std::string& conf,
                                 const std::string& lib_dir) const {
    write_file(dir + "/opensm.conf", conf);
    return Child({"opensm", "-F", dir + "/opensm.conf", "-f", dir + "/osm.log", "-e"},
                 {"IBSIM_SOCKNAME=" + sockname, "SIM_HOST=" + host, "OSM_TMP_DIR=" + dir, "OSM_CACHE_DIR=" + dir,
                  "LD_LIBRARY_PATH=" + lib_dir, "LD_PRELOAD=" + opensm_preload()},
                 dir, dir + "/opensm.out");
}

void IbsimFixture::start_opensm(const std::string& host, const std::string& conf, const std::string& lib_dir) {
    opensm = spawn_opensm(tmp.path(), host, conf, lib_dir);
}

Child IbsimFixture::spawn_sm(const std::string& name, const std::string& host, const std::string& conf) {
    const std::string dir = tmp / name;
    std::filesystem::create_directory(dir);
    return spawn_opensm(dir, host, conf, plugin_dir());
}

void IbsimFixture::start_daemon(const std::string& socket, const std::vector<std::string>& extra_args, uint16_t& port) {
    std::vector<std::string> argv = {bin_dir() + "/ibfabricd", "--socket", socket, "--http", "127.0.0.1:0",
                                     "--port-file", tmp / "port"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    daemon = Child(argv, {}, tmp.path(), tmp / "daemon.log");
    const auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline && read_file(tmp / "port").empty()) std::this_thread::sleep_for(10ms);
    const std::string p = read_file(tmp / "port");
    ASSERT_FALSE(p.empty()) << read_file(tmp / "daemon.log");
    port = static_cast<uint16_t>(std::stoi(p));
}

}  // namespace ibf::test_support
