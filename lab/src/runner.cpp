#include "ibf/lab_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "ibf/atomic_file.h"
#include "ibf/error.h"
#include "ibf/guid2lid.h"
#include "ibf/lab_process.h"
#include "lab_internal.h"

namespace fs = std::filesystem;

namespace ibf {

using namespace lab_detail;

namespace lab_detail {

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw LabError("cannot write " + path + ": " + std::strerror(errno));
    f << text;
    if (!f.flush()) throw LabError("cannot write " + path);
}

int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace lab_detail

void require_trusted_lab_path(const std::string& path, const char* what) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw InputError(path, 0, 0, std::string("cannot check the ") + what + ": " + std::strerror(errno));
    if (st.st_uid != ::geteuid())
        throw InputError(path, 0, 0,
                         std::string("the ") + what + " belongs to uid " + std::to_string(st.st_uid) +
                             ", not to this user (uid " + std::to_string(::geteuid()) +
                             "): not trusted (another user may have planted it); use a --dir of your own");
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        throw InputError(path, 0, 0,
                         std::string("the ") + what + " is writable by group or others (mode " + mode +
                             "): not trusted; chmod go-w " + path);
    }
}

namespace {

bool abstract_socket_listed(const std::string& name) {
    std::ifstream f("/proc/net/unix");
    std::string line;
    const std::string want = "@" + name;
    while (std::getline(f, line)) {
        auto sp = line.rfind(' ');
        if (sp == std::string::npos) continue;
        std::string_view n(line.c_str() + sp + 1, line.size() - sp - 1);
        while (!n.empty() && n.back() == '@') n.remove_suffix(1);  // NUL padding shows as '@'
        if (n == want) return true;
    }
    return false;
}

void progress(const LabOptions& o, const std::string& s) {
    if (o.progress) o.progress(s);
}

}  // namespace

std::string tail_file(const std::string& path, int max_lines) {
    std::ifstream f(path);
    std::deque<std::string> lines;
    std::string line;
    while (std::getline(f, line)) {
        lines.push_back(line);
        if (static_cast<int>(lines.size()) > max_lines) lines.pop_front();
    }
    std::string out;
    for (auto& l : lines) out += l + "\n";
    return out;
}

std::string fill_template(const std::string& text, const std::vector<std::pair<std::string, std::string>>& vars,
                          const std::string& file) {
    std::string out;
    size_t i = 0;
    int line = 1;
    size_t line_start = 0;
    while (i < text.size()) {
        if (text.compare(i, 2, "{{") == 0) {
            auto end = text.find("}}", i + 2);
            if (end == std::string::npos)
                throw InputError(file, line, static_cast<int>(i - line_start) + 1, "unterminated {{ placeholder");
            std::string key = text.substr(i + 2, end - i - 2);
            bool found = false;
            for (auto& [k, v] : vars)
                if (k == key) {
                    out += v;
                    found = true;
                    break;
                }
            if (!found)
                throw InputError(file, line, static_cast<int>(i - line_start) + 1, "unknown placeholder {{" + key + "}}");
            i = end + 2;
            continue;
        }
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
        out += text[i++];
    }
    return out;
}

std::string lab_umad_kernel_beside(const std::string& bin_dir) {
    if (const char* off = getenv("IBF_LAB_NO_UMAD_KERNEL"); off && *off) return "";
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::path(bin_dir) / ".." / "lib" / "libibf_umad_kernel.so", ec);
    return !ec && fs::exists(p, ec) ? p.string() : "";
}

std::string default_lab_dir() {
    std::string user;
    if (const char* u = getenv("USER"); u && *u) user = u;
    if (user.empty())
        if (passwd* pw = getpwuid(getuid())) user = pw->pw_name;
    if (user.empty()) user = std::to_string(getuid());
    return "/tmp/ibfabric-lab-" + user;
}

namespace {

nlohmann::json sm_to_json(const LabSm& m) {
    return {{"host", m.host},       {"port_guid", m.port_guid},   {"lid", m.lid},         {"priority", m.priority},
            {"pid", m.pid},         {"log", m.log},               {"daemon_pid", m.daemon_pid}, {"api_port", m.api_port},
            {"tcp_port", m.tcp_port}, {"dir", m.dir},             {"conf", m.conf},       {"out", m.out},
            {"cache", m.cache},     {"daemon_log", m.daemon_log}, {"ingest_socket", m.ingest_socket}};
}

LabSm sm_from_json(const nlohmann::json& j) {
    LabSm m;
    m.host = j.at("host").get<std::string>();
    m.port_guid = j.value("port_guid", "");
    m.lid = j.value("lid", 0);
    m.priority = j.value("priority", 15);
    m.pid = j.at("pid").get<int>();
    m.log = j.at("log").get<std::string>();
    m.daemon_pid = j.value("daemon_pid", 0);
    m.api_port = j.value("api_port", 0);
    m.tcp_port = j.value("tcp_port", 0);
    m.dir = j.value("dir", "");
    m.conf = j.value("conf", "");
    m.out = j.value("out", "");
    m.cache = j.value("cache", "");
    m.daemon_log = j.value("daemon_log", "");
    m.ingest_socket = j.value("ingest_socket", "");
    return m;
}

// A state written before `sms` existed: its one SM from the single-SM fields.
LabSm legacy_sm(const LabState& s) {
    LabSm m;
    m.host = s.sm_host;
    m.pid = s.opensm_pid;
    m.dir = s.path("work");
    m.conf = s.path("opensm.conf");
    m.log = s.path("osm.log");
    m.out = s.path("opensm.out");
    m.cache = s.path("work");
    m.daemon_pid = s.daemon_pid;
    m.api_port = s.api_port;
    m.daemon_log = s.path("ibfabricd.log");
    m.ingest_socket = s.ingest_socket;
    return m;
}

// The single-SM fields mean SM 1.
void mirror_sm1(LabState& s) {
    if (s.sms.empty()) return;
    const LabSm& m = s.sms.front();
    s.sm_host = m.host;
    s.opensm_pid = m.pid;
    s.daemon_pid = m.daemon_pid;
    s.api_port = m.api_port;
    s.ingest_socket = m.ingest_socket;
}

}  // namespace

namespace lab_detail {

void save_state(LabState& s) {
    mirror_sm1(s);
    lab_save_state(s);
}

}  // namespace lab_detail

void lab_save_state(const LabState& in) {
    LabState s = in;
    // The single-SM fields are SM 1's: when set, they win (callers written before `sms` existed
    // change those, e.g. a test that restarts the daemon); lab/ itself keeps both in step.
    if (!s.sms.empty()) {
        LabSm& m = s.sms.front();
        if (!s.sm_host.empty()) m.host = s.sm_host;
        if (s.opensm_pid) m.pid = s.opensm_pid;
        if (s.daemon_pid) m.daemon_pid = s.daemon_pid;
        if (s.api_port) m.api_port = s.api_port;
        if (!s.ingest_socket.empty()) m.ingest_socket = s.ingest_socket;
    }
    nlohmann::json sms = nlohmann::json::array();
    for (const auto& m : s.sms) sms.push_back(sm_to_json(m));
    nlohmann::json j{{"dir", s.dir},
                     {"ibsim_sockname", s.sockname},
                     {"sm_host", s.sm_host},
                     {"pids", {{"ibsim", s.ibsim_pid}, {"opensm", s.opensm_pid}, {"ibfabricd", s.daemon_pid},
                               {"watchdog", s.watchdog_pid}}},
                     {"watchdog_exe", s.watchdog_exe},
                     {"api_port", s.api_port},
                     {"ingest_socket", s.ingest_socket},
                     {"expected", s.expected},
                     {"source", s.source},
                     {"faults", s.faults},
                     {"started_unix_ms", s.started_unix_ms},
                     {"sms", sms},
                     {"ha", std::string(to_string(s.ha))},
                     {"key_file", s.key_file},
                     {"umad_kernel", s.umad_kernel},
                     {"plugin_dir", s.plugin_dir},
                     {"umad2sim", s.umad2sim}};
    // A new state file is 0644 whatever the umask, a replaced one keeps its mode:
    // lab_load_state() trusts no file that others may write.
    try {
        write_file_atomic(s.path("state.json"), j.dump(2) + "\n", {.mode_if_new = 0644});
    } catch (const std::system_error& e) {
        throw LabError(e.what());
    }
}

std::optional<LabState> lab_load_state(const std::string& dir) {
    std::string path = dir + "/state.json";
    if (!fs::exists(path)) return std::nullopt;
    require_trusted_lab_path(dir, "lab directory");
    require_trusted_lab_path(path, "lab state file");
    std::string text = read_file(path);
    try {
        auto j = nlohmann::json::parse(text);
        LabState s;
        s.dir = j.at("dir").get<std::string>();
        s.sockname = j.at("ibsim_sockname").get<std::string>();
        s.sm_host = j.at("sm_host").get<std::string>();
        s.ibsim_pid = j.at("pids").at("ibsim").get<int>();
        s.opensm_pid = j.at("pids").at("opensm").get<int>();
        s.daemon_pid = j.at("pids").at("ibfabricd").get<int>();
        s.watchdog_pid = j.at("pids").value("watchdog", 0);
        s.watchdog_exe = j.value("watchdog_exe", "");
        s.api_port = j.value("api_port", 0);
        s.ingest_socket = j.value("ingest_socket", "");
        s.expected = j.value("expected", "");
        s.source = j.value("source", "");
        s.faults = j.value("faults", std::vector<std::string>{});
        s.started_unix_ms = j.value("started_unix_ms", int64_t{0});
        if (j.contains("sms"))
            for (const auto& m : j.at("sms")) s.sms.push_back(sm_from_json(m));
        if (s.sms.empty()) s.sms.push_back(legacy_sm(s));
        const std::string ha = j.value("ha", "single");
        s.ha = ha == "native" ? LabHa::Native : ha == "ibfabric" ? LabHa::Ibfabric : LabHa::Single;
        s.key_file = j.value("key_file", "");
        s.umad_kernel = j.value("umad_kernel", "");
        s.plugin_dir = j.value("plugin_dir", "");
        s.umad2sim = j.value("umad2sim", "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so");
        mirror_sm1(s);
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path, 0, 0, std::string("unreadable lab state: ") + e.what());
    }
}

std::vector<LabProcessStatus> lab_status(const LabState& s) {
    std::vector<LabProcessStatus> out{{"ibsim", s.ibsim_pid, alive(s.ibsim_pid, "ibsim"), s.path("ibsim.log")}};
    for (size_t i = 0; i < s.sms.size(); ++i) {
        const LabSm& m = s.sms[i];
        const std::string n = i == 0 ? "" : std::to_string(i + 1);
        out.push_back({"opensm" + n, m.pid, alive(m.pid, "opensm"), m.log});
        out.push_back({"ibfabricd" + n, m.daemon_pid, m.daemon_pid > 0 && alive(m.daemon_pid, "ibfabricd"),
                       m.daemon_log.empty() ? s.path("ibfabricd.log") : m.daemon_log});
    }
    return out;
}

std::vector<std::string> lab_down(const LabState& s, double grace_s) {
    std::vector<std::string> stopped;
    // Clients first: the OpenSMs and the daemons, then the simulator they talk to. A frozen
    // (SIGSTOPped) OpenSM gets SIGCONT so it can take the SIGTERM.
    for (size_t i = 0; i < s.sms.size(); ++i) {
        const LabSm& m = s.sms[i];
        const std::string n = i == 0 ? "" : std::to_string(i + 1);
        if (m.pid > 0 && alive(m.pid, "opensm")) kill(m.pid, SIGCONT);
        if (stop(m.pid, "opensm", grace_s)) stopped.push_back("opensm" + n);
        if (m.daemon_pid > 0 && stop(m.daemon_pid, "ibfabricd", grace_s)) stopped.push_back("ibfabricd" + n);
    }
    if (stop(s.ibsim_pid, "ibsim", grace_s)) stopped.push_back("ibsim");
    if (s.watchdog_pid > 0 && s.watchdog_pid != getpid() && !s.watchdog_exe.empty())
        stop(s.watchdog_pid, s.watchdog_exe, 0.5);
    std::error_code ec;
    fs::remove(s.path("state.json"), ec);
    fs::remove(s.path("console"), ec);
    return stopped;
}

int lab_subnet_up_count(const LabState& s) {
    int n = 0;
    std::vector<std::string> logs;
    for (const auto& m : s.sms) logs.push_back(m.log);
    if (logs.empty()) logs.push_back(s.path("osm.log"));
    for (const auto& log : logs) {
        std::ifstream f(log);
        std::string line;
        while (std::getline(f, line))
            if (line.find("SUBNET UP") != std::string::npos) ++n;
    }
    return n;
}

bool lab_wait_subnet_up(const LabState& s, int more_than, double timeout_s) {
    const double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        if (lab_subnet_up_count(s) > more_than) return true;
        bool any = alive(s.opensm_pid, "opensm");
        for (const auto& m : s.sms) any = any || alive(m.pid, "opensm");
        if (!any) return false;
        sleep_s(0.02);
    }
    return false;
}

std::string lab_console(const LabState& s, const std::string& line, double wait_s) {
    if (line.size() > 128 || line.find('\n') != std::string::npos)
        throw LabError("console line longer than ibsim's 128 characters or with a newline");
    if (!alive(s.ibsim_pid, "ibsim")) throw LabError("ibsim (pid " + std::to_string(s.ibsim_pid) + ") is not running", tail_file(s.path("ibsim.log")));
    const std::string log = s.path("ibsim.log");
    std::error_code ec;
    auto before = fs::file_size(log, ec);
    if (ec) before = 0;
    int fd = open(s.path("console").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw LabError("cannot open ibsim's console " + s.path("console") + ": " + std::strerror(errno));
    std::string msg = line + "\n";
    ssize_t n = write(fd, msg.data(), msg.size());
    close(fd);
    if (n != static_cast<ssize_t>(msg.size())) throw LabError("cannot write to ibsim's console");
    sleep_s(wait_s);
    std::ifstream f(log, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(before));
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string lab_run_client(const LabState& s, const std::vector<std::string>& argv, double timeout_s,
                           const std::string& umad2sim, const std::string& host) {
    SpawnSpec sp;
    sp.argv = argv;
    sp.cwd = s.path("work");
    fs::create_directories(sp.cwd);
    sp.env = {{"IBSIM_SOCKNAME", s.sockname}, {"SIM_HOST", host.empty() ? s.sm_host : host}, {"LD_PRELOAD", umad2sim}};
    sp.out_path = s.path("client.log");  // the client's stderr
    std::string out;
    int rc = run_capture(sp, timeout_s, out);
    if (rc == -1) throw LabError(argv[0] + " timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s", tail_file(sp.out_path));
    if (rc != 0) throw LabError(argv[0] + " exited with " + std::to_string(rc), tail_file(sp.out_path));
    return out;
}

int lab_perfmgr_sweep_s(const LabState& s) {
    const std::string conf = read_file(s.sms.empty() ? s.path("opensm.conf") : s.sms[0].conf);
    bool on = false;
    int sweep = 180;  // OpenSM's default
    std::istringstream in(conf);
    for (std::string line; std::getline(in, line);) {
        std::istringstream w(line);
        std::string key, value;
        if (!(w >> key >> value)) continue;
        if (key == "perfmgr") on = value == "TRUE";
        if (key == "perfmgr_sweep_time_s") sweep = std::atoi(value.c_str());
    }
    return on ? sweep : 0;
}

std::string counter_family(const std::string& ibsim_field) {
    static const std::pair<const char*, const char*> kFamilies[] = {
        {"symbolerrorcounter", "symbol_errors"},
        {"linkerrorrecoverycounter", "error_recovery"},
        {"linkdownedcounter", "downed"},
        {"portrcverrors", "rcv_errors"},
        {"portrcvremotephysicalerrors", "rcv_remote_physical_errors"},
        {"portrcvswitchrelayerrors", "rcv_switch_relay_errors"},
        {"portxmitdiscards", "xmit_discards"},
        {"locallinkintegrityerrors", "integrity_errors"},
        {"excessivebufferoverrunerrors", "excessive_buffer_overruns"},
        {"vl15dropped", "vl15_dropped"},
        {"portxmitwait", "xmit_wait"},
        {"portxmitdata", "xmit_bytes"},
        {"portrcvdata", "rcv_bytes"},
        {"portxmitpkts", "xmit_packets"},
        {"portrcvpkts", "rcv_packets"},
    };
    std::string f = ibsim_field;
    if (f.rfind("PortCounters.", 0) == 0) f = f.substr(13);
    std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& [field, family] : kFamilies)
        if (f == field) return std::string("ibfabric_link_") + family + "_total";
    return "";
}

std::string metrics_port_counters(const std::string& metrics, const std::string& name, int port, const std::string& only) {
    // A link's series names one end local and the other remote: either may be <name>/<port>.
    const std::string local = "local_name=\"" + name + "\",local_port=\"" + std::to_string(port) + "\",";
    const std::string remote = "remote_name=\"" + name + "\",remote_port=\"" + std::to_string(port) + "\"";
    auto ends_here = [&](std::string_view labels) {
        if (labels.find(local) != std::string_view::npos) return true;
        const size_t r = labels.find(remote);
        return r != std::string_view::npos && r + remote.size() < labels.size() &&
               (labels[r + remote.size()] == ',' || labels[r + remote.size()] == '}');
    };
    std::string out;
    for (size_t at = metrics.find("\nibfabric_link_"); at != std::string::npos; at = metrics.find("\nibfabric_link_", at + 1)) {
        const size_t brace = metrics.find('{', at);
        const size_t eol = std::min(metrics.find('\n', at + 1), metrics.size());
        if (brace == std::string::npos || brace > eol) continue;
        const std::string family = metrics.substr(at + 1, brace - at - 1);
        if (family.size() < 6 || family.compare(family.size() - 6, 6, "_total") != 0) continue;
        if (!only.empty() && family != only) continue;
        if (ends_here(std::string_view(metrics).substr(brace, eol - brace))) out += metrics.substr(at + 1, eol - at - 1) + "\n";
    }
    return out;
}

std::string lab_port_counters(const LabState& s, const std::string& name, int port, const std::string& family) {
    std::vector<int> ports;
    for (const LabSm& m : s.sms)
        if (m.api_port > 0) ports.push_back(m.api_port);
    if (ports.empty() && s.api_port > 0) ports.push_back(s.api_port);
    for (int p : ports) {
        try {
            return metrics_port_counters(http_get(p, "/metrics", 2).body, name, port, family);
        } catch (const LabError&) {  // that daemon is down (a failover scenario): ask the next
        }
    }
    return "";
}

bool lab_wait_port_counted(const LabState& s, const std::string& name, int port, double timeout_s) {
    return lab_wait_port_counters_change(s, name, port, "", timeout_s);
}

bool lab_wait_port_counters_change(const LabState& s, const std::string& name, int port, const std::string& before,
                                   double timeout_s, const std::string& family) {
    const double deadline = now_s() + timeout_s;
    while (true) {
        const std::string now = lab_port_counters(s, name, port, family);
        if (!now.empty() && now != before) return true;
        if (now_s() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

HttpReply http_get(int port, const std::string& target, double timeout_s) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw LabError(std::string("socket: ") + std::strerror(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        int e = errno;
        close(fd);
        throw LabError("cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(e));
    }
    std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                      "\r\nConnection: close\r\nAccept: application/json\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        close(fd);
        throw LabError("cannot send the HTTP request");
    }
    std::string resp;
    const double deadline = now_s() + timeout_s;
    char buf[65536];
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            close(fd);
            throw LabError("HTTP GET " + target + " timed out");
        }
        pollfd pf{fd, POLLIN, 0};
        int r = poll(&pf, 1, static_cast<int>(left * 1000) + 1);
        if (r <= 0) continue;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        resp.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    auto hdr_end = resp.find("\r\n\r\n");
    if (resp.compare(0, 5, "HTTP/") != 0 || hdr_end == std::string::npos) throw LabError("not an HTTP response from port " + std::to_string(port));
    HttpReply rep;
    rep.status = std::atoi(resp.c_str() + resp.find(' ') + 1);
    std::string headers = resp.substr(0, hdr_end);
    for (auto& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string body = resp.substr(hdr_end + 4);
    if (headers.find("transfer-encoding: chunked") != std::string::npos) {
        std::string out;
        size_t i = 0;
        while (i < body.size()) {
            auto eol = body.find("\r\n", i);
            if (eol == std::string::npos) break;
            size_t len = std::stoul(body.substr(i, eol - i), nullptr, 16);
            if (len == 0) break;
            out += body.substr(eol + 2, len);
            i = eol + 2 + len + 2;
        }
        body = out;
    }
    rep.body = std::move(body);
    return rep;
}

void lab_arm_watchdog(LabState& s, double ttl_s) {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    exe = exe.substr(exe.rfind('/') + 1);
    const LabState copy = s;
    pid_t pid = fork();
    if (pid < 0) throw LabError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        setsid();
        for (int fd = 0; fd < 1024; ++fd) close(fd);
        const double deadline = now_s() + ttl_s;
        for (;;) {
            // Stopped (or replaced by another lab) already: nothing to do.
            std::optional<LabState> cur;
            try {
                cur = lab_load_state(copy.dir);
            } catch (...) {
            }
            if (!cur || cur->sockname != copy.sockname) _exit(0);
            if (now_s() >= deadline) {
                cur->watchdog_pid = 0;  // do not signal ourselves
                lab_down(*cur, 2.0);
                _exit(0);
            }
            sleep_s(0.5);
        }
    }
    s.watchdog_pid = pid;
    s.watchdog_exe = exe;
    lab_save_state(s);
}

namespace {

std::string unique_sockname() {
    return "ibflab" + std::to_string(getpid()) + "x" + std::to_string(unix_ms() % 100000000);
}

[[noreturn]] void fail(LabState& s, const std::string& what, const std::string& log) {
    std::string tail = log.empty() ? "" : tail_file(log, 25);
    lab_down(s, 1.0);
    throw LabError(what, tail);
}

}  // namespace

namespace {

// The SM nodes' paths, hosts and priorities: one SM keeps today's files in the lab directory.
std::vector<LabSm> plan_sms(const LabState& s, const Net& net, const LabOptions& o) {
    LabSmOptions so = o.sms;
    if (so.count < 1) so.count = 1;
    std::vector<std::string> given = so.hosts;
    if (given.empty() && !o.sm_host.empty()) given.push_back(o.sm_host);
    const auto hosts = choose_sm_hosts(net, so.count, given);
    const auto prio = sm_priorities(so.count, so.priorities);
    std::vector<LabSm> out;
    for (int i = 0; i < so.count; ++i) {
        LabSm m;
        m.host = net.nodes[hosts[static_cast<size_t>(i)]].id;
        m.priority = prio[static_cast<size_t>(i)];
        if (so.count == 1) {
            m = legacy_sm(s);
            m.host = net.nodes[hosts[0]].id;
            m.priority = prio[0];
            m.daemon_log = s.path("ibfabricd.log");
            m.ingest_socket = s.path("ingest.sock");
        } else {
            const std::string d = s.path("sm" + std::to_string(i + 1));
            m.dir = d;
            m.conf = d + "/opensm.conf";
            m.log = d + "/osm.log";
            m.out = d + "/opensm.out";
            m.cache = d + "/cache";
            m.daemon_log = d + "/ibfabricd.log";
            m.ingest_socket = d + "/ingest.sock";
        }
        out.push_back(m);
    }
    return out;
}

void start_ibsim(LabState& s, const Net& net, const LabOptions& o) {
    std::error_code ec;
    fs::remove(s.path("console"), ec);
    if (mkfifo(s.path("console").c_str(), 0600) != 0) throw LabError("mkfifo " + s.path("console") + ": " + std::strerror(errno));
    SimLimits lim = sim_limits_for(net);
    SpawnSpec ib;
    ib.argv = {"ibsim", "-s"};
    if (lim.nodes != SimLimits{}.nodes) ib.argv.insert(ib.argv.end(), {"-N", std::to_string(lim.nodes)});
    if (lim.switches != SimLimits{}.switches) ib.argv.insert(ib.argv.end(), {"-S", std::to_string(lim.switches)});
    if (lim.ports != SimLimits{}.ports) ib.argv.insert(ib.argv.end(), {"-P", std::to_string(lim.ports)});
    ib.argv.push_back(s.path("net.txt"));
    ib.env = {{"IBSIM_SOCKNAME", s.sockname}};
    ib.cwd = s.path("work");
    ib.stdin_path = s.path("console");
    ib.stdin_rdwr = true;
    ib.out_path = s.path("ibsim.log");
    progress(o, "starting ibsim (" + std::to_string(net.count(NodeType::Switch)) + " switches, " +
                    std::to_string(net.count(NodeType::CA)) + " CAs, " + std::to_string(net.link_count()) +
                    " links; IBSIM_SOCKNAME=" + s.sockname + ")");
    try {
        s.ibsim_pid = spawn(ib);
    } catch (const std::exception& e) {
        throw LabError(e.what());
    }
    save_state(s);
    const double deadline = now_s() + o.start_timeout_s;
    while (!abstract_socket_listed(s.sockname + ":ctl")) {
        if (!alive(s.ibsim_pid, "ibsim")) fail(s, "ibsim exited while loading the net file", s.path("ibsim.log"));
        if (now_s() > deadline) fail(s, "ibsim did not come up within the timeout", s.path("ibsim.log"));
        sleep_s(0.02);
    }
}

// The port GUID umad2sim gives a client at `host` (ibstat -p lists the CA's ports).
std::string port_guid_of(const LabState& s, const Net& net, const std::string& host) {
    std::string out = lab_run_client(s, {"ibstat", "-p"}, 30, s.umad2sim, host);
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) lines.push_back(l);
    size_t want = 0;
    if (auto i = net.find(host); i && !net.nodes[*i].ports.empty())
        want = static_cast<size_t>(net.nodes[*i].ports.begin()->first - 1);
    if (want >= lines.size()) throw LabError("ibstat -p at \"" + host + "\" printed no GUID for its cabled port");
    auto g = parse_guid(lines[want]);
    if (!g) throw LabError("ibstat -p at \"" + host + "\" printed '" + lines[want] + "', not a GUID");
    return guid_hex(*g);
}

// Free TCP ports on 127.0.0.1 (all held open until every one is chosen, so they differ).
std::vector<int> free_tcp_ports(size_t n) {
    std::vector<int> fds, ports;
    for (size_t i = 0; i < n; ++i) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            if (fd >= 0) close(fd);
            for (int f : fds) close(f);
            throw LabError(std::string("cannot find a free TCP port: ") + std::strerror(errno));
        }
        fds.push_back(fd);
        ports.push_back(ntohs(a.sin_port));
    }
    for (int f : fds) close(f);
    return ports;
}

// 32 random bytes as 64 hex digits, mode 0600.
void write_key_file(const std::string& path) {
    std::ifstream r("/dev/urandom", std::ios::binary);
    unsigned char b[32];
    if (!r.read(reinterpret_cast<char*>(b), sizeof b)) throw LabError("cannot read /dev/urandom");
    static const char* hex = "0123456789abcdef";
    std::string key;
    for (unsigned char c : b) key += {hex[c >> 4], hex[c & 15]};
    std::error_code ec;
    fs::remove(path, ec);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw LabError("cannot create " + path + ": " + std::strerror(errno));
    key += "\n";
    bool ok = write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
    close(fd);
    if (!ok) throw LabError("cannot write " + path);
}

// TCP ingest and HTTP ports for every daemon, the shared ingest key and the API token (several SMs).
void prepare_sm_ports(LabState& s) {
    const auto ports = free_tcp_ports(2 * s.sms.size());
    for (size_t i = 0; i < s.sms.size(); ++i) {
        s.sms[i].tcp_port = ports[2 * i];
        s.sms[i].api_port = ports[2 * i + 1];
    }
    s.key_file = s.path("ingest.key");
    write_key_file(s.key_file);
    write_key_file(s.path("api.token"));
}

// opensm.conf (and ibfabricd.yaml) of every SM. `peers`: each plugin also sends to the other
// daemons' TCP ports with the shared key (several SMs).
void write_sm_files(LabState& s, const LabOptions& o, bool with_daemon, bool with_plugin, bool peers) {
    const bool multi = s.sms.size() > 1;
    const std::string tmpl = read_file(o.opensm_template);
    if (tmpl.empty()) throw LabError("cannot read the OpenSM template " + o.opensm_template);
    std::vector<std::pair<std::string, int>> expect;
    for (const auto& m : s.sms) expect.emplace_back(m.port_guid, m.priority);
    for (size_t i = 0; i < s.sms.size(); ++i) {
        LabSm& m = s.sms[i];
        fs::create_directories(m.dir);
        fs::create_directories(m.cache);
        std::vector<int> peer_tcp, peer_http;
        for (size_t k = 0; k < s.sms.size(); ++k)
            if (k != i) {
                if (peers) peer_tcp.push_back(s.sms[k].tcp_port);
                peer_http.push_back(s.sms[k].api_port);
            }
        std::string plugin_opts =
            multi ? lab_plugin_options(m.ingest_socket, peer_tcp, peers ? s.key_file : "", o.ha_heartbeat_ms,
                                       "backoff_max_ms=200" + (o.plugin_options.empty() ? "" : " " + o.plugin_options))
                  : "socket=" + m.ingest_socket + (o.plugin_options.empty() ? "" : " " + o.plugin_options);
        write_file(m.conf, fill_template(tmpl,
                                         {{"LOG_FILE", m.log},
                                          {"DUMP_DIR", m.cache},
                                          {"SWEEP_INTERVAL", std::to_string(o.sweep_interval_s)},
                                          {"PERFMGR", o.perfmgr_sweep_s > 0 ? "TRUE" : "FALSE"},
                                          {"PERFMGR_SWEEP_TIME", std::to_string(o.perfmgr_sweep_s > 0 ? o.perfmgr_sweep_s : 180)},
                                          {"EVENT_PLUGIN_NAME", with_plugin ? "ibfabric_osm" : "(null)"},
                                          {"EVENT_PLUGIN_OPTIONS", with_plugin ? plugin_opts : "(null)"},
                                          {"PARTITION_FILE", s.path("partitions.conf")},
                                          {"SM_PRIORITY", std::to_string(m.priority)},
                                          {"SMINFO_POLLING_TIMEOUT", std::to_string(o.sms.polling_ms)},
                                          {"POLLING_RETRY_NUMBER", std::to_string(o.sms.polling_retries)},
                                          {"HONOR_GUID2LID", s.ha == LabHa::Ibfabric ? "TRUE" : "FALSE"}},
                                         o.opensm_template));
        if (!with_daemon) continue;
        LabDaemonConfig dc;
        dc.socket = m.ingest_socket;
        dc.expected = o.expected;
        dc.history = multi ? m.dir + "/history.db" : s.path("history.db");  // the lab records history
        dc.ha = s.ha;
        dc.metrics_all_links = o.metrics_all_links;
        if (multi) {
            dc.http_port = m.api_port;
            dc.tcp_port = peers ? m.tcp_port : 0;
            dc.key_file = peers ? s.key_file : "";
            dc.token_file = s.path("api.token");
            dc.local_sm_guid = m.port_guid;
            dc.guid2lid_file = m.cache + "/guid2lid";
            dc.track_file = m.dir + "/sm-state";
            dc.opensm_conf = m.conf;
            dc.agent_ports = peer_http;
            dc.expect = expect;
        }
        write_file(multi ? m.dir + "/ibfabricd.yaml" : s.path("ibfabricd.yaml"), lab_daemon_yaml(dc));
    }
    write_file(s.path("partitions.conf"), "Default=0x7fff, ipoib, defmember=full : ALL, ALL_SWITCHES=full;\n");
}

// Every SM's daemon. One SM: before OpenSM, so the plugin finds its socket at create(). Several:
// after the OpenSMs are up, because umad2sim gives a client the port state and LID of the moment
// it attaches (a daemon attached before SUBNET UP would see its own port INIT forever); the
// plugins reconnect within backoff_max_ms. A daemon built before TCP ingest had a key
// (`tcp_key_file`) refuses the peers' config: then the lab says so and runs each daemon without
// TCP ingest (SMInfo is its only view of the others).
void start_daemons(LabState& s, const LabOptions& o, bool with_plugin) {
    const bool multi = s.sms.size() > 1;
    bool peers = multi;
    for (size_t i = 0; i < s.sms.size(); ++i) {
        LabSm& m = s.sms[i];
        progress(o, "starting ibfabricd" + (multi ? " for \"" + m.host + "\" (" + std::string(to_string(s.ha)) + ")" : ""));
        try {
            start_daemon(s, m, o.ibfabricd, o.start_timeout_s);
        } catch (const LabError& e) {
            if (!(peers && i == 0 && e.log_tail().find("unknown key 'tcp_key_file'") != std::string::npos)) {
                lab_down(s, 1.0);
                throw;
            }
            progress(o, "WARNING: this ibfabricd has no authenticated TCP ingest (tcp_key_file): each daemon sees only "
                        "its own SM's plugin");
            peers = false;
            write_sm_files(s, o, true, with_plugin, peers);
            for (auto& x : s.sms) x.tcp_port = 0;
            s.key_file.clear();
            --i;
            continue;
        }
        save_state(s);
    }
}

// Each daemon has heard of every SM (its own plugin and, over TCP, the others') as MASTER or STANDBY,
// so the first findings judge the whole HA pair, not a standby that had not connected or whose last
// word was its DISCOVERING hello (that gave a passing sm_no_standby in 1 of 4 runs of the switchover test).
void wait_daemons_see_every_sm(LabState& s, const LabOptions& o) {
    progress(o, "waiting for every ibfabricd to see all " + std::to_string(s.sms.size()) + " SMs");
    const double deadline = now_s() + o.start_timeout_s;
    for (const auto& m : s.sms) {
        size_t seen = 0;
        std::string why;
        while (now_s() < deadline) {
            try {
                auto j = nlohmann::json::parse(http_get(m.api_port, "/api/v1/sm", 2).body, nullptr, false);
                seen = 0;  // an SM counts once the daemon knows it settled: a hello sent while DISCOVERING is not
                if (j.is_object() && j.contains("sms") && j["sms"].is_array())
                    for (const auto& e : j["sms"])
                        if (e.contains("state") && e["state"].is_string() &&
                            (e["state"] == "MASTER" || e["state"] == "STANDBY"))
                            ++seen;
                // With an HA agent, its engine must also see a live standby (the designated successor),
                // or the first findings would carry a passing sm_no_standby.
                if (j.is_object() && j.contains("ha") && j["ha"].is_object() && s.sms.size() > 1 &&
                    (!j["ha"].contains("designated_successor") || j["ha"]["designated_successor"].is_null()))
                    seen = std::min(seen, s.sms.size() - 1), why = " (its HA engine sees no live standby)";
                // ... and its published SM findings caught up with that (they are refreshed every ha.poll_ms).
                if (seen >= s.sms.size() && s.sms.size() > 1 &&
                    http_get(m.api_port, "/api/v1/findings", 2).body.find("\"sm_no_standby\"") != std::string::npos)
                    seen = s.sms.size() - 1, why = " (its findings still say sm_no_standby)";
            } catch (const LabError&) {
                seen = 0;
            }
            if (seen >= s.sms.size()) break;
            sleep_s(0.05);
        }
        if (seen < s.sms.size())
            fail(s, "ibfabricd of \"" + m.host + "\" sees " + std::to_string(seen) + " of " + std::to_string(s.sms.size()) +
                        " SMs as MASTER or STANDBY" + why, m.daemon_log);
    }
}

// The plugin refused its options (an OpenSM without it would leave the daemon waiting forever).
void check_plugin_loaded(LabState& s, const LabSm& m) {
    if (s.plugin_dir.empty()) return;
    const std::string log = read_file(m.log);
    const auto at = log.find("ibfabric_osm: refusing to load");
    if (at == std::string::npos) return;
    const auto eol = log.find('\n', at);
    fail(s, "the ibfabric plugin did not load in OpenSM on \"" + m.host + "\": " + log.substr(at, eol - at), m.log);
}

// After SM i started: sm1 must still complete a sweep (its SMInfo query may have raced SM i's
// start and be lost for good on ibsim: lab_sm_sweeps()); if not, sm1 is restarted (no daemon
// runs yet, so nothing fails over meanwhile).
void ensure_master_sweeps(LabState& s, size_t i, const LabOptions& o) {
    for (int attempt = 1; !lab_sm_sweeps(s, 0, 3.0); ++attempt) {
        if (attempt == 3) fail(s, "OpenSM sm1 completes no sweep after sm" + std::to_string(i + 1) + " started", s.sms[0].log);
        progress(o, "OpenSM sm1 lost an SMInfo answer while sm" + std::to_string(i + 1) +
                        " started (ibsim never times a MAD out): restarting sm1");
        try {
            lab_restart_sm(s, 0, o.start_timeout_s);
        } catch (const LabError& e) {
            fail(s, e.what(), s.sms[0].log);
        }
    }
}

// OpenSM i (0-based) up: SM 1 waits for SUBNET UP, the others for STANDBY (or MASTER).
void start_sm(LabState& s, size_t i, const LabOptions& o) {
    LabSm& m = s.sms[i];
    progress(o, "starting OpenSM on \"" + m.host + "\"" +
                    (s.sms.size() > 1 ? " (sm" + std::to_string(i + 1) + ", priority " + std::to_string(m.priority) + ")" : ""));
    try {
        m.pid = spawn_opensm(s, m);
    } catch (const std::exception& e) {
        fail(s, e.what(), "");
    }
    save_state(s);
    const std::string tail_of = fs::exists(m.log) ? m.log : m.out;
    if (i == 0) {
        if (!lab_wait_subnet_up(s, 0, o.start_timeout_s))
            fail(s, alive(m.pid, "opensm") ? "OpenSM did not reach SUBNET UP in time" : "OpenSM exited before SUBNET UP",
                 fs::exists(m.log) ? m.log : m.out);
        check_plugin_loaded(s, m);
        progress(o, "OpenSM: SUBNET UP");
        return;
    }
    const double deadline = now_s() + o.start_timeout_s;
    for (;;) {
        const std::string st = osm_log_state(read_file(m.log));
        if (st == "STANDBY" || st == "MASTER") {
            check_plugin_loaded(s, m);
            progress(o, "OpenSM sm" + std::to_string(i + 1) + ": " + st);
            ensure_master_sweeps(s, i, o);
            return;
        }
        if (!alive(m.pid, "opensm")) fail(s, "OpenSM sm" + std::to_string(i + 1) + " exited at start", tail_of);
        if (now_s() > deadline) fail(s, "OpenSM sm" + std::to_string(i + 1) + " did not enter STANDBY in time", m.log);
        sleep_s(0.02);
    }
}

// Base LIDs of the SM ports from the master's guid2lid (OpenSM writes it as the sweep ends).
void read_sm_lids(LabState& s) {
    const double deadline = now_s() + 3;
    for (;;) {
        ha::Guid2Lid map;
        try {  // OpenSM writes it to a .tmp and renames it; an empty or missing file means "not yet"
            map = ha::parse_guid2lid(read_file(s.sms[0].cache + "/guid2lid"), s.sms[0].cache + "/guid2lid");
        } catch (const InputError&) {
        }
        bool all = true;
        for (auto& m : s.sms) {
            auto g = parse_guid(m.port_guid);
            if (auto it = g ? map.find(*g) : map.end(); it != map.end()) m.lid = it->second.first;
            all = all && m.lid > 0;
        }
        if (all || now_s() > deadline) return;
        sleep_s(0.02);
    }
}

}  // namespace

LabState lab_up(const Net& net, const LabOptions& o) {
    if (o.dir.empty()) throw LabError("no lab directory");
    fs::create_directories(o.dir);
    const std::string dir = fs::canonical(o.dir).string();
    require_trusted_lab_path(dir, "lab directory");  // e.g. /tmp/ibfabric-lab-root made by someone else
    if (auto old = lab_load_state(dir)) {
        for (auto& p : lab_status(*old))
            if (p.alive)
                throw LabError("a lab is already running in " + dir + " (" + p.name + " pid " + std::to_string(p.pid) +
                               "): run `ibfabric lab down` first");
    }
    LabState s;
    s.dir = dir;
    s.sockname = unique_sockname();
    s.source = net.source;
    s.expected = o.expected;
    s.started_unix_ms = unix_ms();
    s.umad2sim = o.umad2sim;
    s.umad_kernel = o.umad_kernel;
    const bool with_daemon = !o.ibfabricd.empty();
    const bool with_plugin = with_daemon && !o.plugin_dir.empty();
    s.plugin_dir = with_plugin ? o.plugin_dir : "";
    s.sms = plan_sms(s, net, o);
    const bool multi = s.sms.size() > 1;
    s.ha = multi ? (o.sms.ha == LabHa::Single ? LabHa::Ibfabric : o.sms.ha) : LabHa::Single;
    if (s.ha == LabHa::Ibfabric && !with_daemon) throw LabError("--ha ibfabric needs ibfabricd (use --ha native with --no-daemon)");
    fs::create_directories(s.path("work"));
    for (const char* f : {"ibsim.log", "osm.log", "opensm.out", "ibfabricd.log", "ibfabricd.port", "net-current.txt"}) {
        std::error_code ec;
        fs::remove(s.path(f), ec);
    }
    for (size_t i = 0; multi && i < s.sms.size(); ++i) {
        std::error_code ec;
        fs::remove_all(s.sms[i].dir, ec);  // an earlier lab's logs would fake states
    }
    write_file(s.path("net.txt"), write_net(net));
    start_ibsim(s, net, o);
    try {
        for (auto& m : s.sms) m.port_guid = port_guid_of(s, net, m.host);
    } catch (const LabError& e) {
        if (multi) fail(s, e.what(), s.path("client.log"));
    }
    if (multi && with_daemon) prepare_sm_ports(s);
    write_sm_files(s, o, with_daemon, with_plugin, multi && with_daemon);
    if (with_daemon && !multi) start_daemons(s, o, with_plugin);
    for (size_t i = 0; i < s.sms.size(); ++i) {
        start_sm(s, i, o);
        mirror_sm1(s);
    }
    if (with_daemon && multi) {
        start_daemons(s, o, with_plugin);
        wait_daemons_see_every_sm(s, o);
    }
    read_sm_lids(s);
    mirror_sm1(s);
    save_state(s);
    return s;
}

}  // namespace ibf
