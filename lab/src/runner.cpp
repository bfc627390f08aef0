#include "ibf/lab_runner.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ibf/error.h"
#include "ibf/lab_process.h"

namespace fs = std::filesystem;

namespace ibf {

using namespace lab_detail;

namespace {

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

std::string default_lab_dir() {
    std::string user;
    if (const char* u = getenv("USER"); u && *u) user = u;
    if (user.empty())
        if (passwd* pw = getpwuid(getuid())) user = pw->pw_name;
    if (user.empty()) user = std::to_string(getuid());
    return "/tmp/ibfabric-lab-" + user;
}

void lab_save_state(const LabState& s) {
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
                     {"started_unix_ms", s.started_unix_ms}};
    std::string tmp = s.path("state.json.tmp");
    write_file(tmp, j.dump(2) + "\n");
    fs::rename(tmp, s.path("state.json"));
}

std::optional<LabState> lab_load_state(const std::string& dir) {
    std::string path = dir + "/state.json";
    if (!fs::exists(path)) return std::nullopt;
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
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path, 0, 0, std::string("unreadable lab state: ") + e.what());
    }
}

std::vector<LabProcessStatus> lab_status(const LabState& s) {
    return {{"ibsim", s.ibsim_pid, alive(s.ibsim_pid, "ibsim"), s.path("ibsim.log")},
            {"opensm", s.opensm_pid, alive(s.opensm_pid, "opensm"), s.path("osm.log")},
            {"ibfabricd", s.daemon_pid, s.daemon_pid > 0 && alive(s.daemon_pid, "ibfabricd"), s.path("ibfabricd.log")}};
}

std::vector<std::string> lab_down(const LabState& s, double grace_s) {
    std::vector<std::string> stopped;
    // Clients first: OpenSM and the daemon, then the simulator they talk to.
    if (stop(s.opensm_pid, "opensm", grace_s)) stopped.push_back("opensm");
    if (s.daemon_pid > 0 && stop(s.daemon_pid, "ibfabricd", grace_s)) stopped.push_back("ibfabricd");
    if (stop(s.ibsim_pid, "ibsim", grace_s)) stopped.push_back("ibsim");
    if (s.watchdog_pid > 0 && s.watchdog_pid != getpid() && !s.watchdog_exe.empty())
        stop(s.watchdog_pid, s.watchdog_exe, 0.5);
    std::error_code ec;
    fs::remove(s.path("state.json"), ec);
    fs::remove(s.path("console"), ec);
    return stopped;
}

int lab_subnet_up_count(const LabState& s) {
    std::ifstream f(s.path("osm.log"));
    std::string line;
    int n = 0;
    while (std::getline(f, line))
        if (line.find("SUBNET UP") != std::string::npos) ++n;
    return n;
}

bool lab_wait_subnet_up(const LabState& s, int more_than, double timeout_s) {
    const double deadline = now_s() + timeout_s;
    while (now_s() < deadline) {
        if (lab_subnet_up_count(s) > more_than) return true;
        if (!alive(s.opensm_pid, "opensm")) return false;
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
                           const std::string& umad2sim) {
    SpawnSpec sp;
    sp.argv = argv;
    sp.cwd = s.path("work");
    fs::create_directories(sp.cwd);
    sp.env = {{"IBSIM_SOCKNAME", s.sockname}, {"SIM_HOST", s.sm_host}, {"LD_PRELOAD", umad2sim}};
    sp.out_path = s.path("client.log");  // the client's stderr
    std::string out;
    int rc = run_capture(sp, timeout_s, out);
    if (rc == -1) throw LabError(argv[0] + " timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s", tail_file(sp.out_path));
    if (rc != 0) throw LabError(argv[0] + " exited with " + std::to_string(rc), tail_file(sp.out_path));
    return out;
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

LabState lab_up(const Net& net, const LabOptions& o) {
    if (o.dir.empty()) throw LabError("no lab directory");
    fs::create_directories(o.dir);
    const std::string dir = fs::canonical(o.dir).string();
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
    if (!o.sm_host.empty()) {
        auto i = net.find(o.sm_host);
        if (!i || net.nodes[*i].type != NodeType::CA) throw LabError("--sm-host '" + o.sm_host + "' is not a CA of the lab fabric");
        s.sm_host = net.nodes[*i].id;
    } else {
        auto i = net.default_sm_host();
        if (!i) throw LabError("the fabric has no CA with a cable: OpenSM needs one to attach to");
        s.sm_host = net.nodes[*i].id;
    }
    fs::create_directories(s.path("work"));
    for (const char* f : {"ibsim.log", "osm.log", "opensm.out", "ibfabricd.log", "ibfabricd.port", "net-current.txt"}) {
        std::error_code ec;
        fs::remove(s.path(f), ec);
    }

    // 1. files
    write_file(s.path("net.txt"), write_net(net));
    const bool with_daemon = !o.ibfabricd.empty();
    const bool with_plugin = with_daemon && !o.plugin_dir.empty();
    s.ingest_socket = with_daemon ? s.path("ingest.sock") : "";
    std::string tmpl = read_file(o.opensm_template);
    if (tmpl.empty()) throw LabError("cannot read the OpenSM template " + o.opensm_template);
    std::string conf = fill_template(
        tmpl,
        {{"LOG_FILE", s.path("osm.log")},
         {"DUMP_DIR", s.path("work")},
         {"SWEEP_INTERVAL", std::to_string(o.sweep_interval_s)},
         {"EVENT_PLUGIN_NAME", with_plugin ? "ibfabric_osm" : "(null)"},
         {"EVENT_PLUGIN_OPTIONS", with_plugin ? "socket=" + s.ingest_socket + (o.plugin_options.empty() ? "" : " " + o.plugin_options) : "(null)"},
         {"PARTITION_FILE", s.path("partitions.conf")}},
        o.opensm_template);
    write_file(s.path("opensm.conf"), conf);
    write_file(s.path("partitions.conf"), "Default=0x7fff, ipoib, defmember=full : ALL, ALL_SWITCHES=full;\n");

    // 2. ibsim with a console FIFO
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
    lab_save_state(s);
    {
        const double deadline = now_s() + o.start_timeout_s;
        while (!abstract_socket_listed(s.sockname + ":ctl")) {
            if (!alive(s.ibsim_pid, "ibsim")) fail(s, "ibsim exited while loading the net file", s.path("ibsim.log"));
            if (now_s() > deadline) fail(s, "ibsim did not come up within the timeout", s.path("ibsim.log"));
            sleep_s(0.02);
        }
    }

    // 3. ibfabricd (before OpenSM, so the plugin finds its socket at create())
    if (with_daemon) {
        std::string yaml = "# generated by `ibfabric lab up`\n";
        yaml += "socket: \"" + s.ingest_socket + "\"\n";
        yaml += "socket_mode: 0600\n";
        yaml += "http: \"127.0.0.1:0\"\n";
        if (!o.expected.empty()) yaml += "topology: \"" + o.expected + "\"\n";
        yaml += "log_level: info\n";
        // ibsim reports every port as able to run 12xHDR: "slower than it could" is noise here.
        yaml += "checks:\n  rate_below_capability: false\n";
        write_file(s.path("ibfabricd.yaml"), yaml);
        SpawnSpec d;
        d.argv = {o.ibfabricd, "--config", s.path("ibfabricd.yaml"), "--port-file", s.path("ibfabricd.port")};
        d.cwd = s.dir;
        d.out_path = s.path("ibfabricd.log");
        progress(o, "starting ibfabricd");
        try {
            s.daemon_pid = spawn(d);
        } catch (const std::exception& e) {
            fail(s, e.what(), "");
        }
        lab_save_state(s);
        const double deadline = now_s() + o.start_timeout_s;
        for (;;) {
            std::string p = read_file(s.path("ibfabricd.port"));
            if (!p.empty() && p.back() == '\n') {
                s.api_port = std::atoi(p.c_str());
                if (s.api_port > 0) break;
            }
            if (!alive(s.daemon_pid, "ibfabricd")) fail(s, "ibfabricd exited at start", s.path("ibfabricd.log"));
            if (now_s() > deadline) fail(s, "ibfabricd did not write its port file in time", s.path("ibfabricd.log"));
            sleep_s(0.02);
        }
        lab_save_state(s);
    }

    // 4. OpenSM under umad2sim
    SpawnSpec sm;
    sm.argv = {"opensm", "-F", s.path("opensm.conf"), "-f", s.path("osm.log"), "-e"};
    sm.env = {{"IBSIM_SOCKNAME", s.sockname}, {"SIM_HOST", s.sm_host}, {"OSM_TMP_DIR", s.path("work")},
              {"OSM_CACHE_DIR", s.path("work")}, {"LD_PRELOAD", o.umad2sim}};
    if (with_plugin) {
        std::string ld = o.plugin_dir;
        if (const char* old = getenv("LD_LIBRARY_PATH"); old && *old) ld += std::string(":") + old;
        sm.env.emplace_back("LD_LIBRARY_PATH", ld);
    }
    sm.cwd = s.path("work");
    sm.out_path = s.path("opensm.out");
    progress(o, "starting OpenSM on \"" + s.sm_host + "\"");
    try {
        s.opensm_pid = spawn(sm);
    } catch (const std::exception& e) {
        fail(s, e.what(), "");
    }
    lab_save_state(s);
    if (!lab_wait_subnet_up(s, 0, o.start_timeout_s)) {
        std::string log = fs::exists(s.path("osm.log")) ? s.path("osm.log") : s.path("opensm.out");
        fail(s, alive(s.opensm_pid, "opensm") ? "OpenSM did not reach SUBNET UP in time" : "OpenSM exited before SUBNET UP", log);
    }
    progress(o, "OpenSM: SUBNET UP");
    return s;
}

}  // namespace ibf
