// bench_daemon_memory: the real ibfabricd's resident memory with every switch's LFT, fed over its
// Unix socket by the real version 2 encoder as one plugin connection (docs/benchmarks.md,
// "ibfabricd's memory at 48k LIDs"). A program that prints figures, not a test.
//
//   bench_daemon_memory                                   # 2,048 / 7,680 / 44,500 hosts
//   bench_daemon_memory --hosts 44500 --unchanged 3       # one size
//   bench_daemon_memory --ibfabricd build/bin/ibfabricd --no-topology
//
// Per size: a synthetic fat-tree of radix-64 switches (2 levels up to 2,048 hosts, else 3) and its
// minimum-hop tables (synth_lfts); the tree written as an ibnetdiscover file for the daemon's
// topology (--no-topology: none); ibfabricd started on a temp socket and a free HTTP port; then what
// a master's plugin sends: Hello (wire version 2, MASTER), a first snapshot (every table whole),
// --unchanged snapshots that changed nothing (every table an "unchanged" record), and one where 1 %
// of the tables changed (synth_reroute: every 100th switch, one entry moved to the next up port).
// After each: the wall time until GET /api/v1/findings carried that sweep and until GET
// /api/v1/analysis said its route validation is "done", the daemon's CPU time for the sweep
// (/proc/PID/stat, all its threads), and its VmRSS and VmHWM (/proc/PID/status). Heartbeats go
// out every second meanwhile, as the plugin's.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ibf/daemon_fixture.h"
#include "ibf/dumps.h"
#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "ibf/synth.h"
#include "ibf/wire.h"

namespace fs = std::filesystem;
using ibf::lab_detail::now_s;

namespace {

constexpr ibf::Guid kSmGuid = 0x0002c90300000001ULL;

struct Options {
    std::vector<int> hosts = {2048, 7680, 44500};
    int unchanged = 3;
    bool topology = true;
    std::string ibfabricd;
};

// One field of /proc/PID/status in kB ("VmRSS", "VmHWM"), -1 when unknown.
long status_kb(int pid, const std::string& field) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(f, line);)
        if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
    return -1;
}

// utime + stime of the process (every thread) in ms.
double cpu_ms_of(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t close = s.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream in(s.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 3.. after "pid (comm)"; 14 utime, 15 stime
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
    }
    return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string loadavg() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    f >> a >> b >> c;
    return a + " " + b + " " + c;
}

// The plugin's side of one connection: blocking writes on the daemon's Unix socket.
class Plugin {
public:
    explicit Plugin(const std::string& path) : conn_(path) {}

    void send(const std::string& bytes) {
        if (!conn_.send(bytes)) throw std::runtime_error("the daemon closed the plugin connection");
    }
    // Every part of `s` (tables the daemon holds with an equal hash as "unchanged" records).
    void snapshot(const ibf::Snapshot& s) {
        ibf::wire::SnapshotWriter w(s, delivered_);
        for (std::string frame; w.next(frame);) send(frame);
        delivered_ = w.take_delivered();
    }
    void heartbeat(uint64_t seq) {
        ibf::wire::Heartbeat hb;
        hb.sm = sm();
        hb.sweep_seq = seq;
        hb.unix_ms = static_cast<int64_t>(now_s() * 1000);
        send(ibf::wire::encode(ibf::wire::Message(hb)));
    }
    static ibf::SmInfo sm() { return {.port_guid = kSmGuid, .lid = 1, .priority = 15, .state = ibf::SmState::Master, .act_count = 7}; }

private:
    ibf::test::UnixClient conn_;
    ibf::wire::LftHashes delivered_;
};

struct Row {
    std::string sweep;
    double findings_s = 0, routes_s = 0, cpu_ms = 0;
    std::string mode;
    long rss_kb = 0, hwm_kb = 0;
};

// Polls the API (heartbeats every second meanwhile) until sweep `seq`'s findings are published
// and its route validation is done.
Row wait_sweep(Plugin& plugin, int port, int pid, uint64_t seq, double t0, double cpu0) {
    Row r;
    double next_hb = now_s() + 1;
    const double deadline = now_s() + 600;
    while (true) {
        if (now_s() > deadline) throw std::runtime_error("sweep " + std::to_string(seq) + " not done within 600 s");
        if (!ibf::lab_detail::alive(pid)) throw std::runtime_error("ibfabricd exited");
        if (now_s() >= next_hb) plugin.heartbeat(seq), next_hb += 1;
        if (r.findings_s == 0) {
            const auto j = nlohmann::json::parse(ibf::http_get(port, "/api/v1/findings", 30).body);
            if (j.value("sweep_seq", nlohmann::json()) == seq) r.findings_s = now_s() - t0;
        }
        if (r.findings_s > 0) {
            // A sweep that changed nothing the validation depends on keeps the last one's ("cached",
            // its sweep_seq the validated sweep's).
            const auto j = nlohmann::json::parse(ibf::http_get(port, "/api/v1/analysis", 30).body);
            const auto& rv = j["route_validation"];
            if (j.value("sweep_seq", nlohmann::json()) == seq && rv.is_object() && rv.value("state", "") == "done" &&
                (rv.value("sweep_seq", nlohmann::json()) == seq || rv.value("cached", false))) {
                r.routes_s = now_s() - t0;
                r.mode = rv.value("cached", false) ? "cached" : rv.value("mode", "?");
                break;
            }
        }
        ibf::lab_detail::sleep_s(0.02);
    }
    r.cpu_ms = cpu_ms_of(pid) - cpu0;
    r.rss_kb = status_kb(pid, "VmRSS");
    r.hwm_kb = status_kb(pid, "VmHWM");
    return r;
}

// One size's figures for the table at the end (MB).
struct Summary {
    size_t lids = 0, tables = 0;
    double first_rss = 0, first_hwm = 0, unchanged_min = 0, unchanged_max = 0, changed = 0, settled = 0, hwm = 0;
};

double mb(long kb) { return static_cast<double>(kb) / 1024; }

Summary run(int hosts, const Options& o) {
    const int levels = hosts <= 2048 ? 2 : 3;
    ibf::Snapshot s;
    s.osm_version = "OpenSM 3.3.23";
    s.self = Plugin::sm();
    s.master_lid = 1;
    s.routing_engine = "minhop";
    s.fabric = ibf::synth_fat_tree({.levels = levels, .radix = 64, .hosts = hosts});
    s.lfts = ibf::synth_lfts(s.fabric);
    const size_t lids = s.lfts.empty() ? 0 : s.lfts[0].port_by_lid().size() - 1;
    Summary sum{.lids = lids, .tables = s.lfts.size()};
    std::printf("\n%d-level radix 64, %d hosts: %zu nodes, %zu switches with a table, %zu LIDs, %zu links; tables %.1f MB\n", levels,
                hosts, s.fabric.size(), s.lfts.size(), lids, s.fabric.link_count(),
                static_cast<double>(s.lfts.size() * (lids + 1)) / 1e6);

    const ibf::test::TempDir tmp;  // removed with everything in it when this size is done
    const fs::path& dir = tmp.path;
    std::vector<std::string> argv = {o.ibfabricd, "--socket", (dir / "osm.sock").string(), "--http", "127.0.0.1:0",
                                     "--port-file", (dir / "port").string(), "--log-level", "warn"};
    if (o.topology) {
        std::ofstream(dir / "golden.txt") << ibf::write_ibnetdiscover(s.fabric);
        argv.insert(argv.end(), {"--topology", (dir / "golden.txt").string()});
    }
    const int pid = ibf::lab_detail::spawn({.argv = argv, .out_path = (dir / "daemon.log").string(), .new_session = false,
                                            .die_with_parent = true});
    try {
        for (const double end = now_s() + 30; ibf::test::read_file((dir / "port").string()).empty(); ibf::lab_detail::sleep_s(0.02))
            if (now_s() > end || !ibf::lab_detail::alive(pid)) throw std::runtime_error("ibfabricd did not start: " + ibf::tail_file((dir / "daemon.log").string()));
        const int port = std::stoi(ibf::test::read_file((dir / "port").string()));
        std::printf("ibfabricd pid %d (%s), idle: VmRSS %.0f MB\n", pid, o.topology ? "with the tree as its topology" : "no topology",
                    static_cast<double>(status_kb(pid, "VmRSS")) / 1024);

        Plugin plugin((dir / "osm.sock").string());
        ibf::wire::Hello hello;
        hello.osm_version = s.osm_version;
        hello.plugin_version = "bench";
        hello.sm = Plugin::sm();
        hello.pid = static_cast<uint32_t>(::getpid());
        hello.wire_version = 2;
        plugin.send(ibf::wire::encode(ibf::wire::Message(hello)));

        std::vector<Row> rows;
        auto sweep = [&](const std::string& what) {
            ++s.sweep_seq;
            s.taken_unix_ms = static_cast<int64_t>(now_s() * 1000);
            const double t0 = now_s(), cpu0 = cpu_ms_of(pid);
            plugin.snapshot(s);
            Row r = wait_sweep(plugin, port, pid, s.sweep_seq, t0, cpu0);
            r.sweep = what;
            std::printf("  %-22s findings %6.2f s, routes done %6.2f s (%s), daemon CPU %7.0f ms, VmRSS %6.0f MB, VmHWM %6.0f MB  [load %s]\n",
                        what.c_str(), r.findings_s, r.routes_s, r.mode.c_str(), r.cpu_ms, static_cast<double>(r.rss_kb) / 1024,
                        static_cast<double>(r.hwm_kb) / 1024, loadavg().c_str());
            std::fflush(stdout);
            rows.push_back(r);
        };
        sweep("first (every table)");
        for (int i = 1; i <= o.unchanged; ++i) sweep("unchanged " + std::to_string(i));
        ibf::synth_reroute(s.fabric, s.lfts, 0);
        sweep("1 % of tables changed");
        // Settled: what the daemon keeps between sweeps once nothing is under way.
        ibf::lab_detail::sleep_s(2);
        sum.settled = mb(status_kb(pid, "VmRSS"));
        sum.hwm = mb(status_kb(pid, "VmHWM"));
        std::printf("  settled 2 s later:     VmRSS %6.0f MB, VmHWM %6.0f MB\n", sum.settled, sum.hwm);
        sum.first_rss = mb(rows.front().rss_kb), sum.first_hwm = mb(rows.front().hwm_kb);
        sum.changed = mb(rows.back().rss_kb);
        sum.unchanged_min = sum.unchanged_max = 0;
        for (size_t i = 1; i + 1 < rows.size(); ++i) {
            sum.unchanged_min = i == 1 ? mb(rows[i].rss_kb) : std::min(sum.unchanged_min, mb(rows[i].rss_kb));
            sum.unchanged_max = std::max(sum.unchanged_max, mb(rows[i].rss_kb));
        }
    } catch (...) {
        ibf::lab_detail::stop(pid, "ibfabricd", 5);
        throw;
    }
    ibf::lab_detail::stop(pid, "ibfabricd", 5);
    return sum;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    const fs::path self = fs::canonical("/proc/self/exe");
    o.ibfabricd = (self.parent_path() / "ibfabricd").string();
    bool custom_hosts = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--hosts" && i + 1 < argc) {
            if (!custom_hosts) o.hosts.clear(), custom_hosts = true;
            o.hosts.push_back(std::atoi(argv[++i]));
        } else if (a == "--unchanged" && i + 1 < argc) {
            o.unchanged = std::atoi(argv[++i]);
        } else if (a == "--ibfabricd" && i + 1 < argc) {
            o.ibfabricd = argv[++i];
        } else if (a == "--no-topology") {
            o.topology = false;
        } else {
            std::fprintf(stderr, "usage: bench_daemon_memory [--hosts N]... [--unchanged N] [--ibfabricd PATH] [--no-topology]\n");
            return 2;
        }
    }
    std::printf("ibfabricd: %s; load average %s\n", o.ibfabricd.c_str(), loadavg().c_str());
    try {
        std::vector<Summary> sums;
        for (int h : o.hosts) sums.push_back(run(h, o));
        std::printf("\nibfabricd VmRSS in MB (load average %s)\n%8s %7s %14s %16s %14s %8s %7s\n", loadavg().c_str(), "LIDs", "tables",
                    "first (VmHWM)", "unchanged", "1 % changed", "settled", "VmHWM");
        for (const Summary& m : sums)
            std::printf("%8zu %7zu %6.0f (%5.0f) %7.0f-%-7.0f %14.0f %8.0f %7.0f\n", m.lids, m.tables, m.first_rss, m.first_hwm,
                        m.unchanged_min, m.unchanged_max, m.changed, m.settled, m.hwm);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_daemon_memory: %s\n", e.what());
        return 1;
    }
    return 0;
}
