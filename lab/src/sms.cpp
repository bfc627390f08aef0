// The lab's SM nodes as processes: starting OpenSM and its ibfabricd, their states, and the SM
// faults (kill, freeze, thaw, restart). lab_runner.h, "several SMs".
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "lab_internal.h"

namespace fs = std::filesystem;

namespace ibf {

using namespace lab_detail;

namespace {

// Process state letter from /proc/<pid>/stat ('T' = stopped), 0 when unknown.
char proc_state(int pid) {
    if (pid <= 0) return 0;
    std::string st = read_file("/proc/" + std::to_string(pid) + "/stat");
    auto rp = st.rfind(')');
    return rp == std::string::npos || rp + 2 >= st.size() ? 0 : st[rp + 2];
}

std::string daemon_state(const LabSm& m) {
    if (m.api_port <= 0 || m.daemon_pid <= 0 || !alive(m.daemon_pid, "ibfabricd")) return {};
    try {
        HttpReply r = http_get(m.api_port, "/api/v1/sm", 1.0);
        if (r.status != 200) return {};
        auto j = nlohmann::json::parse(r.body, nullptr, false);
        if (!j.is_object() || !j.contains("sms")) return {};
        const auto want = parse_guid(m.port_guid);
        for (const auto& e : j["sms"])
            if (want && e.contains("port_guid") && e["port_guid"].is_string() &&
                parse_guid(e["port_guid"].get<std::string>()) == want && e.contains("state") && e["state"].is_string())
                return e["state"].get<std::string>();
    } catch (const std::exception&) {
    }
    return {};
}

std::string daemon_config_path(const LabState& s, const LabSm& m) {
    return s.sms.size() > 1 ? m.dir + "/ibfabricd.yaml" : s.path("ibfabricd.yaml");
}

std::string daemon_port_path(const LabState& s, const LabSm& m) {
    return s.sms.size() > 1 ? m.dir + "/ibfabricd.port" : s.path("ibfabricd.port");
}

// The PID of a running ibfabricd whose command line has `--config <config>`, 0 when none: how the
// lab recognises its daemon after someone restarted it.
int find_daemon(const std::string& config) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string cmd = read_file(e.path().string() + "/cmdline");
        std::vector<std::string> argv;
        for (size_t pos = 0; pos < cmd.size();) {
            const size_t end = cmd.find('\0', pos);
            argv.push_back(cmd.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
            pos = end == std::string::npos ? cmd.size() : end + 1;
        }
        if (argv.empty() || fs::path(argv[0]).filename() != "ibfabricd") continue;
        for (size_t i = 0; i + 1 < argv.size(); ++i)
            if (argv[i] == "--config" && argv[i + 1] == config) return std::atoi(name.c_str());
    }
    return 0;
}

// TCP ports `pid` listens on (from /proc/<pid>/fd socket inodes and /proc/net/tcp{,6}).
std::vector<int> listening_ports(int pid) {
    std::vector<std::string> inodes;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        const std::string link = fs::read_symlink(e.path(), ec).string();
        if (!ec && link.rfind("socket:[", 0) == 0) inodes.push_back(link.substr(8, link.size() - 9));
    }
    std::vector<int> ports;
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::istringstream in(read_file(table));
        std::string line;
        std::getline(in, line);  // header
        while (std::getline(in, line)) {
            std::istringstream f(line);
            std::string sl, local, remote, st, queues, tr, retr, uid, timeout, inode;
            if (!(f >> sl >> local >> remote >> st >> queues >> tr >> retr >> uid >> timeout >> inode) || st != "0A") continue;
            if (std::find(inodes.begin(), inodes.end(), inode) == inodes.end()) continue;
            const auto colon = local.rfind(':');
            if (colon != std::string::npos) ports.push_back(static_cast<int>(std::stoul(local.substr(colon + 1), nullptr, 16)));
        }
    }
    return ports;
}

// ibsim clients left behind by `pid` (a killed OpenSM) are disconnected with `X <n>`.
std::vector<int> free_sim_clients(const LabState& s, int pid) {
    std::vector<int> freed;
    const std::string answer = lab_console(s, "Attached", 0.3);
    for (const auto& c : parse_attached(answer))
        if (c.pid == pid) {
            lab_console(s, "X " + std::to_string(c.num), 0.1);
            freed.push_back(c.num);
        }
    return freed;
}

}  // namespace

namespace lab_detail {

int spawn_opensm(const LabState& s, const LabSm& m) {
    SpawnSpec sm;
    sm.argv = {"opensm", "-F", m.conf, "-f", m.log, "-e"};
    sm.env = {{"IBSIM_SOCKNAME", s.sockname}, {"SIM_HOST", m.host}, {"OSM_TMP_DIR", m.dir},
              {"OSM_CACHE_DIR", m.cache}, {"LD_PRELOAD", s.umad2sim}};
    // The timeout shim before umad2sim: its umad_send/umad_recv come first, umad2sim's I/O under them.
    if (!s.umad_kernel.empty()) sm.env.back().second = s.umad_kernel + ":" + sm.env.back().second;
    // $IBF_OPENSM_PRELOAD goes first (scripts/sanitize.sh: the ASan runtime for an ASan-built plugin).
    if (const char* extra = getenv("IBF_OPENSM_PRELOAD"); extra && *extra)
        sm.env.back().second = std::string(extra) + ":" + sm.env.back().second;
    if (!s.plugin_dir.empty()) {
        std::string ld = s.plugin_dir;
        if (const char* old = getenv("LD_LIBRARY_PATH"); old && *old) ld += std::string(":") + old;
        sm.env.emplace_back("LD_LIBRARY_PATH", ld);
    }
    sm.cwd = m.dir;
    sm.out_path = m.out;
    return spawn(sm);
}

void start_daemon(const LabState& s, LabSm& m, const std::string& ibfabricd, double timeout_s) {
    const std::string port_file = daemon_port_path(s, m);
    std::error_code ec;
    fs::remove(port_file, ec);
    SpawnSpec d;
    d.argv = {ibfabricd, "--config", daemon_config_path(s, m), "--port-file", port_file};
    d.cwd = s.sms.size() > 1 ? m.dir : s.dir;
    d.out_path = m.daemon_log;
    if (s.sms.size() > 1)  // the SM node's agent: MADs through that node's CA
        d.env = {{"IBSIM_SOCKNAME", s.sockname}, {"SIM_HOST", m.host}, {"LD_PRELOAD", s.umad2sim}};
    try {
        m.daemon_pid = spawn(d);
    } catch (const std::exception& e) {
        throw LabError(e.what());
    }
    const double deadline = now_s() + timeout_s;
    for (;;) {
        std::string p = read_file(port_file);
        if (!p.empty() && p.back() == '\n') {
            m.api_port = std::atoi(p.c_str());
            if (m.api_port > 0) return;
        }
        if (!alive(m.daemon_pid, "ibfabricd")) throw LabError("ibfabricd exited at start", tail_file(m.daemon_log, 25));
        if (now_s() > deadline) throw LabError("ibfabricd did not write its port file in time", tail_file(m.daemon_log, 25));
        sleep_s(0.02);
    }
}

}  // namespace lab_detail

std::vector<LabSmStatus> lab_sm_status(const LabState& s, bool ask_daemons) {
    std::vector<LabSmStatus> out;
    for (const auto& m : s.sms) {
        LabSmStatus st;
        st.alive = m.pid > 0 && alive(m.pid, "opensm");
        st.frozen = st.alive && proc_state(m.pid) == 'T';
        if (ask_daemons) st.state = daemon_state(m);
        if (!st.state.empty()) {
            st.state_from = "ibfabricd";
        } else {
            st.state = osm_log_state(read_file(m.log));
            if (!st.state.empty()) st.state_from = "log";
        }
        out.push_back(st);
    }
    return out;
}

LabSmFault lab_sm_fault(LabState& s, const std::string& action, const std::string& target) {
    if (action != "kill-sm" && action != "freeze-sm" && action != "thaw-sm" && action != "restart-sm")
        throw LabError("unknown SM fault '" + action + "' (kill-sm, freeze-sm, thaw-sm, restart-sm)");
    const auto st = lab_sm_status(s, false);  // OpenSM's own word: its log
    std::vector<LabSmView> views;
    for (size_t i = 0; i < s.sms.size(); ++i) {
        bool running = st[i].alive && !st[i].frozen;
        if (action == "thaw-sm") running = !st[i].frozen;  // candidates: the frozen ones
        if (action == "restart-sm") running = st[i].alive;  // candidates: the dead ones
        views.push_back({s.sms[i].port_guid, st[i].state, running});
    }
    std::string err;
    const bool want_running = action == "kill-sm" || action == "freeze-sm";
    auto i = pick_sm(views, target, want_running, err);
    if (!i) throw LabError(err);
    LabSm& m = s.sms[*i];
    const std::string name = "sm" + std::to_string(*i + 1);
    LabSmFault f;
    f.index = *i;
    if (action == "restart-sm") {
        if (st[*i].alive) throw LabError(name + " is still running (pid " + std::to_string(m.pid) + "): kill-sm it first");
        f.freed_clients = free_sim_clients(s, m.pid);
        std::error_code ec;
        fs::rename(m.log, m.log + ".1", ec);  // OpenSM truncates its log: keep the dead one's
        m.pid = spawn_opensm(s, m);
        f.pid = m.pid;
        f.unix_ms = unix_ms();
        save_state(s);
        return f;
    }
    if (!st[*i].alive) throw LabError(name + " (pid " + std::to_string(m.pid) + ") is not running");
    if (action == "thaw-sm" && !st[*i].frozen) throw LabError(name + " is not frozen");
    if (action == "freeze-sm" && st[*i].frozen) throw LabError(name + " is already frozen");
    const int sig = action == "kill-sm" ? SIGKILL : action == "freeze-sm" ? SIGSTOP : SIGCONT;
    if (kill(m.pid, sig) != 0) throw LabError("kill " + name + " (pid " + std::to_string(m.pid) + "): " + std::strerror(errno));
    f.unix_ms = unix_ms();
    f.pid = m.pid;
    if (sig == SIGKILL) {  // reap it when it is our child, so alive() sees it gone at once
        for (int k = 0; k < 100 && alive(m.pid, "opensm"); ++k) sleep_s(0.005);
    }
    return f;
}

bool lab_follow_daemons(LabState& s) {
    bool changed = false;
    for (auto& m : s.sms) {
        if (m.daemon_pid <= 0 || alive(m.daemon_pid, "ibfabricd")) continue;  // none in this lab, or still the same
        const int pid = find_daemon(daemon_config_path(s, m));
        if (pid <= 0) continue;
        int port = 0;
        for (int p : listening_ports(pid))
            if (p != m.tcp_port) port = p;
        if (port <= 0) continue;  // not listening yet: keep the old view until it is
        m.daemon_pid = pid;
        m.api_port = port;
        changed = true;
    }
    if (changed) save_state(s);
    return changed;
}

bool lab_sm_sweeps(const LabState& s, size_t i, double timeout_s) {
    const LabSm& m = s.sms.at(i);
    const size_t from = read_file(m.log).size();
    if (kill(m.pid, SIGHUP) != 0) return false;
    const double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        if (read_file(m.log).find("SUBNET UP", from) != std::string::npos) return true;
        sleep_s(0.02);
    }
    return false;
}

void lab_restart_sm(LabState& s, size_t i, double timeout_s) {
    const std::string name = "sm" + std::to_string(i + 1);
    lab_sm_fault(s, "kill-sm", s.sms.at(i).port_guid);
    lab_sm_fault(s, "restart-sm", s.sms.at(i).port_guid);
    const double deadline = now_s() + timeout_s;
    while (read_file(s.sms[i].log).find("SUBNET UP") == std::string::npos) {
        if (now_s() > deadline) throw LabError("OpenSM " + name + " did not reach SUBNET UP after a restart", s.sms[i].log);
        sleep_s(0.02);
    }
}

std::optional<size_t> lab_wait_one_master(const LabState& s, double timeout_s, double stable_s) {
    const double deadline = now_s() + timeout_s;
    double since = -1;
    size_t last = s.sms.size();  // none
    while (now_s() < deadline) {
        std::optional<size_t> master;
        int masters = 0;
        const auto st = lab_sm_status(s, false);
        for (size_t i = 0; i < s.sms.size(); ++i) {
            if (!st[i].alive || st[i].frozen || st[i].state != "MASTER") continue;
            ++masters;
            master = i;
        }
        if (masters == 1 && master) {
            if (last != *master) since = now_s();
            last = *master;
            if (now_s() - since >= stable_s) return master;
        } else {
            last = s.sms.size();
        }
        sleep_s(0.05);
    }
    return std::nullopt;
}

}  // namespace ibf
