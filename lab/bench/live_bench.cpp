// ibf_lab_bench: live figures on a ~2k-node simulated fat-tree (docs/benchmarks-live.md).
//
//   ibf_lab_bench [--leaves 60 | --plan FILE] [--sweeps 20] [--dir /tmp/ibf-lab-bench-<pid>]
//
// 1. OpenSM heavy-sweep period without and with the ibfabric plugin (+ ibfabricd), two labs side
//    by side swept in alternating pairs: heavy sweeps are forced back to back with SIGHUP (sent the moment SUBNET UP is logged, so the plugin's
//    copy at SUBNET_UP, which runs on the sweeper thread, delays the next sweep and is counted);
//    the period is the distance between consecutive SUBNET UP timestamps in osm.log.
// 2. The plugin's own copy time under OpenSM's lock (its log=debug line per snapshot).
// 3. SUBNET UP (osm.log timestamp) -> the findings of that sweep served by GET /api/v1/findings
//    (polled every millisecond).
// 4. GET /metrics (the daemon's default export, metrics.per_link: deviating): bytes and time.
// Prints medians (and min/max); a program, not a test: it asserts nothing.
#include <signal.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ibf/lab_net.h"
#include "ibf/lab_plan.h"
#include "ibf/lab_process.h"
#include "ibf/lab_report.h"
#include "ibf/lab_runner.h"
#include "ibf/plan_yaml.h"
#include "ibf/http_client.h"

namespace fs = std::filesystem;
using namespace ibf;
using lab_detail::sleep_s;

namespace {

// Reads only what was appended to a log since the last call.
class LogTail {
public:
    explicit LogTail(std::string path) : path_(std::move(path)) {}
    std::vector<std::string> new_lines() {
        std::vector<std::string> out;
        std::ifstream f(path_, std::ios::binary);
        if (!f) return out;
        f.seekg(static_cast<std::streamoff>(off_));
        std::string chunk((std::istreambuf_iterator<char>(f)), {});
        partial_ += chunk;
        off_ += chunk.size();
        size_t pos;
        while ((pos = partial_.find('\n')) != std::string::npos) {
            out.push_back(partial_.substr(0, pos));
            partial_.erase(0, pos + 1);
        }
        return out;
    }

private:
    std::string path_;
    size_t off_ = 0;
    std::string partial_;
};

// "Nov 30 02:35:56 099398 [...]" -> seconds since local midnight.
double log_time(const std::string& line) {
    int h, m, s;
    long us;
    char mon[4];
    int day;
    if (std::sscanf(line.c_str(), "%3s %d %d:%d:%d %ld", mon, &day, &h, &m, &s, &us) != 6) return -1;
    return h * 3600.0 + m * 60.0 + s + us / 1e6;
}

double now_of_day() {
    auto now = std::chrono::system_clock::now();
    time_t t = std::chrono::system_clock::to_time_t(now);
    tm lt{};
    localtime_r(&t, &lt);
    double frac = std::chrono::duration<double>(now.time_since_epoch()).count();
    frac -= static_cast<double>(static_cast<int64_t>(frac));
    return lt.tm_hour * 3600.0 + lt.tm_min * 60.0 + lt.tm_sec + frac;
}

// utime + stime of a process (all its threads), in seconds.
double cpu_seconds(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(f, line);
    auto rp = line.rfind(')');
    if (rp == std::string::npos) return 0;
    std::istringstream in(line.substr(rp + 2));
    std::string tok;
    double ut = 0, st = 0;
    for (int field = 3; in >> tok; ++field) {
        if (field == 14) ut = std::atof(tok.c_str());
        if (field == 15) {
            st = std::atof(tok.c_str());
            break;
        }
    }
    return (ut + st) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Stats {
    double median = 0, min = 0, max = 0;
    size_t n = 0;
};
Stats stats(std::vector<double> v) {
    Stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.n = v.size();
    s.min = v.front();
    s.max = v.back();
    s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return s;
}

std::string plan_yaml(int leaves) {
    std::ostringstream y;
    y << "# 2-level fat-tree of 64-port HDR switches: " << leaves << " leaves x 32 hosts, 32 spines\n"
      << "version: 1\nname: bench-2tier-64\nrate: 4xHDR\nmtu: 4096\n"
      << "switches:\n  leaf:\n    names: leaf[01-" << leaves << "]\n    ports: 64\n    down: 1-32\n"
      << "    up: 33-64\n    up_to: spine\n    cables_per_pair: 1\n"
      << "  spine:\n    names: spine[01-32]\n    ports: 64\n    down: 1-" << leaves << "\n"
      << "hosts:\n  names: node[0001-" << leaves * 32 << "]\n  hca: mlx5_0\n  attach: leaf\n  per_switch: 32\n";
    return y.str();
}

// Forces `n` heavy sweeps back to back; returns SUBNET UP-to-SUBNET UP periods (s).
std::vector<double> sweep_periods(const LabState& s, int n) {
    LogTail tail(s.path("osm.log"));
    tail.new_lines();
    std::vector<double> ups;
    kill(s.opensm_pid, SIGHUP);
    const double deadline = lab_detail::now_s() + 60.0 * (n + 1);
    while (static_cast<int>(ups.size()) < n + 1 && lab_detail::now_s() < deadline) {
        bool got = false;
        for (auto& l : tail.new_lines())
            if (l.find("SUBNET UP") != std::string::npos) {
                ups.push_back(log_time(l));
                got = true;
            }
        if (got && static_cast<int>(ups.size()) < n + 1) kill(s.opensm_pid, SIGHUP);
        else sleep_s(0.0005);
    }
    std::vector<double> periods;
    for (size_t i = 1; i < ups.size(); ++i) periods.push_back(ups[i] - ups[i - 1]);
    return periods;
}

// Plugin copy times (ms) logged since `tail` was created.
std::vector<double> copy_times(LogTail& tail) {
    std::vector<double> ms;
    for (auto& l : tail.new_lines()) {
        auto p = l.find(" us under the lock");
        if (p == std::string::npos) continue;
        auto b = l.rfind(' ', p - 1);
        ms.push_back(std::atof(l.substr(b + 1, p - b - 1).c_str()) / 1000.0);
    }
    return ms;
}

// SUBNET UP -> findings of that sweep served by the API, `n` times (s).
std::vector<double> findings_lags(const LabState& s, int n) {
    std::vector<double> lags;
    LogTail tail(s.path("osm.log"));
    tail.new_lines();
    sleep_s(0.5);  // the previous sweeps' findings are published
    for (int i = 0; i < n; ++i) {
        int64_t seq = -1;
        if (auto f = lab_findings_via_daemon(s)) seq = f->sweep_seq;
        kill(s.opensm_pid, SIGHUP);
        double up = -1;
        const double deadline = lab_detail::now_s() + 60;
        std::optional<double> served;
        while (lab_detail::now_s() < deadline) {
            if (up < 0)
                for (auto& l : tail.new_lines())
                    if (l.find("SUBNET UP") != std::string::npos) up = log_time(l);
            if (auto f = lab_findings_via_daemon(s, seq)) {
                served = now_of_day();
                while (up < 0) {  // the log line may land after the API already answered
                    for (auto& l : tail.new_lines())
                        if (l.find("SUBNET UP") != std::string::npos) up = log_time(l);
                    sleep_s(0.0005);
                }
                break;
            }
            sleep_s(0.001);
        }
        if (served && up >= 0) lags.push_back(*served - up);
        sleep_s(0.2);
    }
    return lags;
}

// `n` GET /metrics from the lab's daemon: seconds each, and the bytes of the last.
std::vector<double> scrape_times(const LabState& s, int n, size_t& bytes) {
    std::vector<double> t;
    const HttpUrl url{"127.0.0.1", static_cast<uint16_t>(s.api_port), ""};
    for (int i = 0; i < n; ++i) {
        const double t0 = lab_detail::now_s();
        const HttpResult r = http_request(url, "GET", "/metrics", "", "", std::chrono::seconds(60));
        if (r.status != 200) throw LabError("GET /metrics answered " + std::to_string(r.status));
        t.push_back(lab_detail::now_s() - t0);
        bytes = r.body.size();
    }
    return t;
}

}  // namespace

constexpr const char* kUsage =
    "usage: ibf_lab_bench [--leaves N (1..64, default 60) | --plan FILE] [--sweeps N (>= 3, default 20)] [--dir DIR]\n"
    "Live figures on a simulated fat-tree (docs/benchmarks-live.md): OpenSM's heavy-sweep period\n"
    "without and with the plugin, the plugin's copy time, SUBNET UP -> findings, the /metrics scrape.\n"
    "--leaves N: a 2-level fabric of 64-port switches; --plan: any plan (docs/plan.md). Takes minutes.\n"
    "Examples: ibf_lab_bench --leaves 60 --sweeps 20\n"
    "          ibf_lab_bench --plan config/examples/fat-tree-3tier-8192.yaml --sweeps 3\n";

int main(int argc, char** argv) {
    int leaves = 60, sweeps = 20;
    std::string dir = "/tmp/ibf-lab-bench-" + std::to_string(getpid()), plan_file;
    for (int i = 1; i < argc; i += 2) {
        std::string k = argv[i];
        if (k == "--help" || k == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (i + 1 >= argc || (k != "--leaves" && k != "--sweeps" && k != "--dir" && k != "--plan")) {
            std::fputs(kUsage, stderr);
            return 2;
        }
        if (k == "--leaves") leaves = std::atoi(argv[i + 1]);
        else if (k == "--sweeps") sweeps = std::atoi(argv[i + 1]);
        else if (k == "--plan") plan_file = argv[i + 1];
        else dir = argv[i + 1];
    }
    if (leaves < 1 || leaves > 64 || sweeps < 3) {
        std::fprintf(stderr, "ibf_lab_bench: --leaves 1..64, --sweeps >= 3\n");
        return 2;
    }
    const std::string bin = fs::canonical("/proc/self/exe").parent_path().string();
    const std::string src = IBF_LAB_SOURCE_DIR;
    fs::create_directories(dir);
    std::string plan_text, plan_path = dir + "/plan.yaml";
    if (plan_file.empty()) {
        plan_text = plan_yaml(leaves);
        std::ofstream(plan_path) << plan_text;
    } else {
        std::ifstream in(plan_file);
        if (!in) {
            std::fprintf(stderr, "ibf_lab_bench: %s: cannot read\n", plan_file.c_str());
            return 2;
        }
        plan_text.assign(std::istreambuf_iterator<char>(in), {});
        plan_path = plan_file;
    }
    Plan plan;
    try {
        plan = load_plan(plan_text, plan_path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ibf_lab_bench: %s\n", e.what());
        return 2;
    }
    Net net = net_from_plan(plan);
    LabExpectation ex = lab_expectation(plan);
    const std::string expected = dir + "/expected-plan.yaml";
    std::ofstream(expected) << (ex.adjusted ? ex.yaml : plan_text);
    std::printf("fabric: %s: %zu switches, %zu HCAs, %zu links; %d alternating pairs of forced heavy sweeps (without, with)\n",
                plan_file.empty() ? ("2-level fat-tree of 64-port switches, " + std::to_string(leaves) + " leaves").c_str()
                                  : plan_file.c_str(),
                net.count(NodeType::Switch), net.count(NodeType::CA), net.link_count(), sweeps);
    std::fflush(stdout);

    struct Mode {
        const char* name;
        bool plugin;
        std::vector<double> periods, copies, lags;
        double cpu = 0;  // opensm CPU seconds over the forced sweeps
        int n = 0;
        LabState s;
    } modes[] = {{"without plugin", false, {}, {}, {}, 0, 0, {}}, {"with plugin + ibfabricd", true, {}, {}, {}, 0, 0, {}}};
    // Both labs run at once (idle between forced sweeps) and sweep in alternating pairs, so slow
    // changes in the machine's load hit both modes alike.
    auto stop_all = [&] {
        for (auto& m : modes)
            if (auto st = lab_load_state(m.s.dir.empty() ? dir + "/none" : m.s.dir)) lab_down(*st);
    };
    std::vector<double> ratios, scrapes;
    size_t scrape_bytes = 0;
    try {
        for (auto& m : modes) {
            LabOptions o;
            o.dir = dir + (m.plugin ? "/with" : "/without");
            o.opensm_template = src + "/config/templates/opensm.conf";
            o.sweep_interval_s = 3600;  // only forced sweeps
            o.start_timeout_s = 180;
            o.progress = [](const std::string& s) { std::fprintf(stderr, "bench: %s\n", s.c_str()); };
            if (m.plugin) {
                o.ibfabricd = bin + "/ibfabricd";
                o.plugin_dir = fs::weakly_canonical(bin + "/../lib").string();
                o.umad_kernel = lab_umad_kernel_beside(bin);
                o.expected = expected;
                o.plugin_options = "log=debug";
                o.metrics_all_links = false;  // the shipped default export, not `lab up`'s per_link: all
            }
            m.s = lab_up(net, o);
            if (m.plugin && !lab_wait_findings(m.s, -1, 120)) throw LabError("no findings from ibfabricd");
        }
        sleep_s(1.0);
        for (auto& m : modes) sweep_periods(m.s, 2);  // warm-up
        LogTail copies(modes[1].s.path("osm.log"));
        copies.new_lines();
        for (int i = 0; i < sweeps; ++i) {
            double pair[2] = {0, 0};
            for (int k = 0; k < 2; ++k) {
                Mode& m = modes[(i + k) % 2];  // alternate which mode goes first
                const double cpu0 = cpu_seconds(m.s.opensm_pid);
                auto p = sweep_periods(m.s, 1);
                m.cpu += cpu_seconds(m.s.opensm_pid) - cpu0;
                m.n += 1;
                if (p.empty()) throw LabError(std::string(m.name) + ": a forced sweep did not finish");
                m.periods.push_back(p[0]);
                pair[m.plugin ? 1 : 0] = p[0];
            }
            ratios.push_back(pair[1] / pair[0]);
        }
        modes[1].copies = copy_times(copies);
        modes[1].lags = findings_lags(modes[1].s, std::max(10, sweeps));
        scrapes = scrape_times(modes[1].s, 5, scrape_bytes);
    } catch (const LabError& e) {
        std::fprintf(stderr, "ibf_lab_bench: %s\n%s", e.what(), e.log_tail().c_str());
        stop_all();
        return 3;
    }
    stop_all();
    for (auto& m : modes) {
        std::printf("%s: periods (s)", m.name);
        for (double d : m.periods) std::printf(" %.4f", d);
        std::printf("\n");
    }
    Stats a = stats(modes[0].periods), b = stats(modes[1].periods), c = stats(modes[1].copies),
          l = stats(modes[1].lags);
    std::printf("heavy sweep period, SUBNET UP to SUBNET UP (s): without plugin median %.4f (min %.4f max %.4f, n=%zu)\n",
                a.median, a.min, a.max, a.n);
    std::printf("                                               with plugin    median %.4f (min %.4f max %.4f, n=%zu)\n",
                b.median, b.min, b.max, b.n);
    std::printf("added by the plugin: %+.2f %% (ratio of medians); median of the %zu paired ratios: %+.2f %%\n",
                (b.median - a.median) / a.median * 100, ratios.size(), (stats(ratios).median - 1) * 100);
    const double ca = modes[0].cpu / modes[0].n, cb = modes[1].cpu / modes[1].n;
    std::printf("opensm CPU time per forced heavy sweep (ms, all threads): without %.1f, with %.1f: %+.2f %%\n",
                ca * 1000, cb * 1000, (cb - ca) / ca * 100);
    std::printf("plugin copy under OpenSM's lock (ms): median %.2f (min %.2f max %.2f, n=%zu) = %.2f %% of a sweep\n",
                c.median, c.min, c.max, c.n, c.median / 1000 / a.median * 100);
    std::printf("SUBNET UP -> findings served by GET /api/v1/findings (ms): median %.1f (min %.1f max %.1f, n=%zu)\n",
                l.median * 1000, l.min * 1000, l.max * 1000, l.n);
    Stats m = stats(scrapes);
    std::printf("GET /metrics (default, per_link deviating): %.2f MB, %.1f ms median (min %.1f max %.1f, n=%zu)\n", scrape_bytes / 1e6,
                m.median * 1000, m.min * 1000, m.max * 1000, m.n);
    std::error_code ec;
    fs::remove_all(dir, ec);
    return 0;
}
