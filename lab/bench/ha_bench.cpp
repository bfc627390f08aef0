// ibf_ha_bench: SM failover figures on a simulated fabric (docs/benchmarks.md, "SM failover").
// A program, not a test: it asserts nothing and prints a table. `ibf_ha_bench --help`.
//
// For each mode: a lab with two OpenSMs (priorities 15, 14) on two CAs of different leaves, each
// with its ibfabricd; K times: kill -9 the master, read the new master's OpenSM log, then a fresh
// lab (ibsim restarted: no stale client can fake a second master) or, with --restart, the killed
// SM restarted (its stale ibsim client freed first) and one master awaited. Measured from the kill (wall clock, ms) to the new master's OpenSM log lines
// (local time with microseconds): "Entering DISCOVERING state" (the standby noticed), "Entering
// MASTER state", the "SUBNET UP" that follows; the standby's own sweep (its DISCOVERING or MASTER
// line -> that SUBNET UP: the floor any failover pays); double masters seen after settling; LIDs
// changed (ibnetdiscover before the kill vs after the takeover).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/lab_ha.h"
#include "ibf/lab_net.h"
#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "ibf/plan_yaml.h"

namespace fs = std::filesystem;
using namespace ibf;
using lab_detail::now_s;
using lab_detail::sleep_s;

namespace {

constexpr const char* kHelp =
    "ibf_ha_bench: SM failover figures (kill -9 of the master) on a simulated fabric.\n"
    "\n"
    "usage: ibf_ha_bench [--plan PLAN] [--mode MODE]... [--kills K] [--kills-slow K] [--restart] [--dir DIR]\n"
    "\n"
    "  --plan PLAN      plan to simulate (default config/examples/fat-tree-2tier-324.yaml)\n"
    "  --mode MODE      ibfabric | native | native:MS,RETRIES (repeatable; default: ibfabric, native,\n"
    "                   native:1000,2). ibfabric = each ibfabricd acts for its SM (lab up --ha ibfabric);\n"
    "                   native = OpenSM's own polling (--ha native, default 10000 ms x 4).\n"
    "  --kills K        kills per mode (default 20)\n"
    "  --kills-slow K   kills for native modes whose polling takes over 5 s to notice (default 3: ~50 s\n"
    "                   each)\n"
    "  --restart        restart the killed SM (freeing its ibsim client) and wait for one master,\n"
    "                   instead of a fresh lab for every kill (the default). On this ibsim a\n"
    "                   restarted OpenSM's first sweep sometimes never ends: the bench then falls\n"
    "                   back to a fresh lab and says so\n"
    "  --no-daemon      native modes without ibfabricd and the plugin (OpenSM alone)\n"
    "  --dir DIR        lab directory (default /tmp/ibf-ha-bench-<pid>)\n"
    "\n"
    "Per mode: kill -> standby DISCOVERING (noticed), kill -> MASTER, kill -> SUBNET UP (median, max,\n"
    "ms), the standby's sweep (DISCOVERING/MASTER -> SUBNET UP: the floor), takeovers K/K, double\n"
    "masters seen after settling, LIDs changed. Needs ibsim, opensm, infiniband-diags, and (mode\n"
    "ibfabric) ibfabricd + libibfabric_osm.so next to this program. Exit 0, 2 bad arguments, 3 a lab\n"
    "failed.\n"
    "\n"
    "Example: ibf_ha_bench --mode ibfabric --kills 5\n";

struct Mode {
    std::string name;
    LabHa ha = LabHa::Ibfabric;
    int poll_ms = 10000, retries = 4;
};

struct Sample {
    std::optional<double> noticed_ms, master_ms, up_ms, sweep_ms;
    bool double_master = false;
    int lids_changed = 0;
};

struct Args {
    std::string plan, dir;
    std::vector<Mode> modes;
    int kills = 20, kills_slow = 3;
    bool fresh = true, no_daemon = false;
};

std::string read_all(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

Mode parse_mode(const std::string& s) {
    Mode m;
    m.name = s;
    if (s == "ibfabric") return m;
    if (s == "native") {
        m.ha = LabHa::Native;
        return m;
    }
    if (s.rfind("native:", 0) == 0) {
        m.ha = LabHa::Native;
        std::tie(m.poll_ms, m.retries) = parse_sm_polling(s.substr(7));
        return m;
    }
    throw InputError("ha_bench", 0, 0, "--mode must be ibfabric, native or native:MS,RETRIES, got '" + s + "'");
}

Args parse_args(int argc, char** argv) {
    Args a;
    a.plan = std::string(IBF_LAB_SOURCE_DIR) + "/config/examples/fat-tree-2tier-324.yaml";
    a.dir = "/tmp/ibf-ha-bench-" + std::to_string(getpid());
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) throw InputError("ha_bench", 0, 0, k + " needs a value");
            return argv[++i];
        };
        auto num = [&](int lo, int hi) {
            std::string v = val();
            int n = std::atoi(v.c_str());
            if (std::to_string(n) != v || n < lo || n > hi)
                throw InputError("ha_bench", 0, 0, k + " must be " + std::to_string(lo) + ".." + std::to_string(hi));
            return n;
        };
        if (k == "--help" || k == "-h") {
            std::fputs(kHelp, stdout);
            std::exit(0);
        } else if (k == "--plan") a.plan = val();
        else if (k == "--dir") a.dir = val();
        else if (k == "--mode") a.modes.push_back(parse_mode(val()));
        else if (k == "--kills") a.kills = num(1, 1000);
        else if (k == "--kills-slow") a.kills_slow = num(1, 1000);
        else if (k == "--restart") a.fresh = false;
        else if (k == "--no-daemon") a.no_daemon = true;
        else throw InputError("ha_bench", 0, 0, "unknown argument '" + k + "' (see --help)");
    }
    if (a.modes.empty()) a.modes = {parse_mode("ibfabric"), parse_mode("native"), parse_mode("native:1000,2")};
    return a;
}

int year_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm.tm_year + 1900;
}

long utc_offset() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm.tm_gmtoff;
}

std::map<Guid, int> fabric_lids(const LabState& s, size_t via) {
    Fabric f = parse_dump(lab_run_client(s, {"ibnetdiscover"}, 60, s.umad2sim, s.sms.at(via).host), "ibnetdiscover");
    std::map<Guid, int> lids;
    for (NodeId i = 0; i < f.size(); ++i)
        if (f.node(i).lid > 0) lids[f.node(i).guid] = f.node(i).lid;
    return lids;
}

int lids_changed(const std::map<Guid, int>& a, const std::map<Guid, int>& b) {
    int n = 0;
    for (auto& [g, lid] : a)
        if (auto it = b.find(g); it == b.end() || it->second != lid) ++n;
    for (auto& [g, lid] : b)
        if (!a.count(g)) ++n;
    return n;
}

// Times in the new master's log (the first of each line after the kill), ms after `kill_ms`.
void read_takeover(const LabState& s, size_t who, int64_t kill_ms, Sample& x) {
    const std::string log = read_all(s.sms[who].log);
    const int64_t k_us = kill_ms * 1000 - 1000;  // the kill's ms is truncated
    auto first_after = [&](const std::string& needle, size_t from) -> std::optional<OsmLogHit> {
        while (auto h = find_osm_log_line(log, from, needle, year_now(), utc_offset())) {
            if (h->unix_us >= k_us) return h;
            from = h->end;
        }
        return std::nullopt;
    };
    auto disc = first_after("Entering DISCOVERING state", 0);
    auto master = first_after("Entering MASTER state", 0);
    if (!master) return;
    auto up = find_osm_log_line(log, master->end, "SUBNET UP", year_now(), utc_offset());
    const double k = static_cast<double>(kill_ms) * 1000;
    if (disc && disc->unix_us <= master->unix_us) x.noticed_ms = (static_cast<double>(disc->unix_us) - k) / 1000;
    x.master_ms = (static_cast<double>(master->unix_us) - k) / 1000;
    if (up) {
        x.up_ms = (static_cast<double>(up->unix_us) - k) / 1000;
        const int64_t start = disc && disc->unix_us <= master->unix_us ? disc->unix_us : master->unix_us;
        x.sweep_ms = static_cast<double>(up->unix_us - start) / 1000;
    }
}

// Samples the SMs for `window_s`: true when two running SMs were MASTER at once.
bool saw_double_master(const LabState& s, double window_s) {
    const double end = now_s() + window_s;
    while (now_s() < end) {
        int masters = 0;
        for (const auto& st : lab_sm_status(s, false))
            if (st.alive && !st.frozen && st.state == "MASTER") ++masters;
        if (masters > 1) return true;
        sleep_s(0.05);
    }
    return false;
}

LabState start_lab(const Net& net, const Args& a, const Mode& m) {
    if (auto old = lab_load_state(a.dir)) lab_down(*old, 1.0);
    const std::string bin = fs::path(fs::read_symlink("/proc/self/exe")).parent_path().string();
    LabOptions o;
    o.dir = a.dir;
    o.opensm_template = std::string(IBF_LAB_SOURCE_DIR) + "/config/templates/opensm.conf";
    o.start_timeout_s = 180;
    o.sms.count = 2;
    o.sms.ha = m.ha;
    o.sms.polling_ms = m.poll_ms;
    o.sms.polling_retries = m.retries;
    if (!(a.no_daemon && m.ha == LabHa::Native)) {
        o.ibfabricd = bin + "/ibfabricd";
        o.plugin_dir = fs::weakly_canonical(bin + "/../lib").string();
        o.umad_kernel = lab_umad_kernel_beside(bin);
    }
    o.progress = [](const std::string& s) { std::fprintf(stderr, "bench: %s\n", s.c_str()); };
    return lab_up(net, o);
}

// One kill of the current master; leaves the lab with one master again (or a fresh lab).
Sample one_kill(LabState& s, const Mode& m, const Args& a, const Net& net) {
    Sample x;
    auto master = lab_wait_one_master(s, 60, 1.0);
    if (!master) throw LabError("no single master before the kill");
    const size_t standby = 1 - *master;
    const auto before = fabric_lids(s, standby);
    LabSmFault f = lab_sm_fault(s, "kill-sm", "sm" + std::to_string(*master + 1));
    const double limit = 2.0 * m.poll_ms * (m.retries + 1) / 1000 + 30;
    const double deadline = now_s() + limit;
    while (now_s() < deadline) {
        read_takeover(s, standby, f.unix_ms, x);
        if (x.up_ms) break;
        sleep_s(0.02);
    }
    if (x.up_ms) {
        sleep_s(1.0);
        x.double_master = saw_double_master(s, 1.0);
        x.lids_changed = lids_changed(before, fabric_lids(s, standby));
    }
    if (a.fresh) {
        lab_down(s, 1.0);
        s = start_lab(net, a, m);
    } else {
        lab_sm_fault(s, "restart-sm", "sm" + std::to_string(*master + 1));
        if (!lab_wait_one_master(s, limit + 60, 2.0)) {
            std::fprintf(stderr, "bench: %s: no single master after restarting sm%zu: a fresh lab\n", m.name.c_str(),
                         *master + 1);
            lab_down(s, 1.0);
            s = start_lab(net, a, m);
        }
    }
    return x;
}

struct Stat {
    double median = 0, max = 0;
    size_t n = 0;
};

Stat stat_of(const std::vector<Sample>& xs, std::optional<double> Sample::*field) {
    std::vector<double> v;
    for (const auto& x : xs)
        if (x.*field) v.push_back(*(x.*field));
    Stat s;
    s.n = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    s.max = v.back();
    return s;
}

void print_row(const Mode& m, const std::vector<Sample>& xs, int kills) {
    auto cell = [](const Stat& s) {
        char b[64];
        if (s.n == 0) return std::string("-");
        std::snprintf(b, sizeof b, "%.0f / %.0f", s.median, s.max);
        return std::string(b);
    };
    int took = 0, dbl = 0, lids = 0;
    for (const auto& x : xs) {
        took += x.up_ms ? 1 : 0;
        dbl += x.double_master ? 1 : 0;
        lids += x.lids_changed;
    }
    std::printf("| %-14s | %5d/%-3d | %-15s | %-15s | %-15s | %-15s | %6d | %6d |\n", m.name.c_str(), took, kills,
                cell(stat_of(xs, &Sample::noticed_ms)).c_str(), cell(stat_of(xs, &Sample::master_ms)).c_str(),
                cell(stat_of(xs, &Sample::up_ms)).c_str(), cell(stat_of(xs, &Sample::sweep_ms)).c_str(), dbl, lids);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    Net net;
    try {
        a = parse_args(argc, argv);
        const std::string text = read_all(a.plan);
        if (text.empty()) throw InputError(a.plan, 0, 0, "cannot read the plan");
        net = net_from_plan(load_plan(text, a.plan));
    } catch (const InputError& e) {
        std::fprintf(stderr, "ibf_ha_bench: %s\n", e.what());
        return 2;
    }
    std::printf("ibf_ha_bench: %s (%zu CAs), kill -9 of the master, %s; times in ms (median / max) after the kill\n",
                a.plan.c_str(), net.count(NodeType::CA), a.fresh ? "a fresh lab per kill" : "killed SM restarted");
    std::printf("| %-14s | %-9s | %-15s | %-15s | %-15s | %-15s | %-6s | %-6s |\n", "mode", "takeovers", "-> DISCOVERING",
                "-> MASTER", "-> SUBNET UP", "standby sweep", "double", "LIDs");
    std::printf("|----------------|-----------|-----------------|-----------------|-----------------|-----------------|--------|--------|\n");
    int rc = 0;
    for (const auto& m : a.modes) {
        const int kills = m.ha == LabHa::Native && m.poll_ms * m.retries > 5000 ? a.kills_slow : a.kills;
        std::vector<Sample> xs;
        LabState s;
        try {
            s = start_lab(net, a, m);
            for (int i = 0; i < kills; ++i) {
                xs.push_back(one_kill(s, m, a, net));
                const Sample& x = xs.back();
                std::fprintf(stderr, "bench: %s kill %d: MASTER %.1f ms, SUBNET UP %.1f ms, sweep %.1f ms\n", m.name.c_str(),
                             i + 1, x.master_ms.value_or(-1), x.up_ms.value_or(-1), x.sweep_ms.value_or(-1));
            }
        } catch (const LabError& e) {
            std::fprintf(stderr, "ibf_ha_bench: %s: %s\n%s", m.name.c_str(), e.what(), e.log_tail().c_str());
            rc = 3;
        }
        if (auto st = lab_load_state(a.dir)) lab_down(*st, 1.0);
        print_row(m, xs, kills);
    }
    return rc;
}
