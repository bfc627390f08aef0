// bench_check: how long do parsing an ibnetdiscover dump and checking it against its plan take on a
// large fabric? A program that prints figures (not a test). See docs/benchmarks-foundation.md.
//
//   bench_check                         # 3-level fat-tree of 64-port switches, 32768 hosts (~98k links)
//   bench_check --levels 2 --hosts 1750 --write /tmp/f   # also writes golden.txt and actual.txt there
//
// Steps, each timed (best and median of --repeat runs):
//   generate (ibf_synth) -> inject faults -> write_ibnetdiscover (golden and actual text)
//   parse golden + plan_from_fabric | parse actual | check(plan, actual)
// Then prints the findings' summary and the peak RSS (getrusage) of the whole process.
//
//   bench_check --metrics --hosts 44500   # the daemon's side of a master sweep and of /metrics
//
// --metrics: the fabric (with the same faults) as a master's snapshot through ControllerState and
// the check thread's run_check() (check, live analysis, link table), perfmgr counters for every
// linked port in 128-row batches (two rounds: baseline, then traffic everywhere and symbol errors
// on 20 links), then GET /metrics' text by default (metrics.per_link: deviating) and with every
// link (all): bytes, gzip bytes, render ms (first scrape after a batch, i.e. counters re-rendered,
// and again) on the render thread and the io thread's share of each (metrics_job), and the
// process RSS then (the daemon's state at that size).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/gzip.h"
#include "ibf/metrics.h"
#include "ibf/pipeline.h"
#include "ibf/dumps.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"
#include "ibf/synth.h"

using namespace ibf;
using Clock = std::chrono::steady_clock;

namespace {

struct Timing {
    double best = 0, median = 0;
};

Timing time_it(int repeat, const std::function<void()>& fn) {
    std::vector<double> ts;
    for (int i = 0; i < repeat; ++i) {
        auto t0 = Clock::now();
        fn();
        ts.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(ts.begin(), ts.end());
    return {ts.front(), ts[ts.size() / 2]};
}

void row(const char* what, const Timing& t) { std::printf("  %-34s best %8.1f ms   median %8.1f ms\n", what, t.best * 1e3, t.median * 1e3); }

long status_kb(const char* key) {  // VmRSS, VmHWM of /proc/self/status
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key) + 1);
    return 0;
}

double ms_of(const std::function<void()>& fn) {
    auto t0 = Clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// --metrics (see the top of the file).
int bench_metrics(const Fabric& clean, const Fabric& faulty) {
    constexpr Guid kSm = 0x0002c90300000001ULL;
    constexpr int64_t T0 = 1764468000000;
    ControllerState st;
    st.on_connect(1, "unix", T0);
    wire::Hello h;
    h.sm = {kSm, 1, 15, SmState::Master, 1};
    st.on_hello(1, h, T0);
    auto plan = std::make_shared<const Plan>(plan_from_fabric(clean, "golden"));
    Snapshot snap;
    snap.self = h.sm;
    snap.sweep_seq = 1;
    snap.fabric = faulty;
    std::optional<CheckJob> job;
    const double ingest_ms = ms_of([&] { job = st.on_snapshot(1, std::move(snap), T0); });
    CheckRun run;
    const double check_ms = ms_of([&] { run = run_check(WorkItem{*job, plan, nullptr, {}, false}); });
    if (!run.result) {
        std::fprintf(stderr, "bench_check: %s\n", run.error.c_str());
        return 1;
    }
    size_t deviating = 0;
    for (const LinkRow& r : run.result->links->rows) deviating += r.deviates;
    const size_t links = run.result->links->rows.size();
    st.publish(std::move(*run.result), T0);
    std::printf("daemon: snapshot taken as the fabric %.1f ms; run_check (check, analysis, link table) %.0f ms; "
                "%zu links, %zu deviating\n", ingest_ms, check_ms, links, deviating);
    // Perfmgr: every linked port, 128 rows per message, twice.
    std::vector<wire::PortCounterRow> rows;
    for (const Node& n : faulty.nodes())
        for (int p = 1; p <= n.num_ports(); ++p)
            if (n.port(p) && n.port(p)->linked()) {
                wire::PortCounterRow r;
                r.node_guid = n.guid;
                r.port = static_cast<uint8_t>(p);
                rows.push_back(r);
            }
    double feed_ms = 0;
    for (int round = 0; round < 2; ++round) {
        for (size_t i = 0; i < rows.size(); ++i) {
            using C = wire::PortCounter;
            wire::PortCounterRow& r = rows[i];
            if (round == 1) {
                r.v[static_cast<size_t>(C::xmit_data)] = 1000000 + i;
                r.v[static_cast<size_t>(C::rcv_data)] = 2000000 + i;
                r.v[static_cast<size_t>(C::xmit_pkts)] = 3000 + i;
                r.v[static_cast<size_t>(C::rcv_pkts)] = 4000 + i;
                if (i % (rows.size() / 20 + 1) == 7) r.v[static_cast<size_t>(C::symbol_errors)] = 55;
            }
        }
        for (size_t at = 0; at < rows.size(); at += 128) {
            wire::PortCounters pc{T0 + 1000 * (round + 1), {}};
            pc.ports.assign(rows.begin() + at, rows.begin() + std::min(rows.size(), at + 128));
            feed_ms += ms_of([&] { st.on_port_counters(1, pc, T0 + 1000 * (round + 1)); });
        }
    }
    std::printf("perfmgr: %zu port rows x 2 rounds in 128-row batches, applied in %.0f ms\n", rows.size(), feed_ms);
    const int64_t now = T0 + 3000;
    // Per scrape, as ibfabricd splits it (docs/threading.md "Metrics"): the io thread's half
    // (metrics_job: the small families, the findings, the shared_ptrs) and the render thread's
    // (metrics_render, then gzip).
    for (bool all : {false, true}) {
        std::string text;
        auto scrape = [&](double& io_ms, double& render_ms) {
            MetricsJob job;
            io_ms = ms_of([&] { job = metrics_job({.state = &st, .now_ms = now, .all_links = all}); });
            render_ms = ms_of([&] { text = metrics_render(job); });
        };
        double io1 = 0, first = 0, io2 = 0, again = 0;
        scrape(io1, first);
        scrape(io2, again);
        std::string z;
        const double gz = ms_of([&] { z = gzip(text); });
        std::printf("/metrics %-9s %10.1f MB  gzip %8.2f MB (%4.0f ms)  render: first %6.0f ms, again %6.0f ms; "
                    "io thread %.2f / %.2f ms\n",
                    all ? "all" : "deviating", text.size() / 1e6, z.size() / 1e6, gz, first, again, io1, io2);
        // A new PortCounters batch re-renders the counter families only.
        wire::PortCounters pc{now, {rows.front()}};
        pc.ports.front().v[static_cast<size_t>(wire::PortCounter::xmit_data)] += 1;
        st.on_port_counters(1, pc, now);
        double io3 = 0, batch = 0;
        scrape(io3, batch);
        std::printf("/metrics %-9s first scrape after one more 1-row batch: render %6.0f ms, io thread %.2f ms "
                    "(port_errors passes so far: %llu)\n",
                    all ? "all" : "deviating", batch, io3, static_cast<unsigned long long>(st.port_error_passes()));
        if (!all)  // the whole program: both generated fabrics, the plan, the state, the counters, the text
            std::printf("RSS after the default scrapes: %.0f MB, peak %.0f MB\n", status_kb("VmRSS:") / 1024.0,
                        status_kb("VmHWM:") / 1024.0);
    }
    std::printf("RSS: %.0f MB now, peak %.0f MB\n", status_kb("VmRSS:") / 1024.0, status_kb("VmHWM:") / 1024.0);
    return 0;
}

long peak_rss_kb() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;  // kilobytes on Linux
}

int usage(bool asked = false) {
    std::fprintf(asked ? stdout : stderr,
                 "usage: bench_check [--levels 2|3] [--radix K] [--hosts N] [--repeat R] [--write DIR] [--metrics]\n"
                 "  defaults: --levels 3 --radix 64 --hosts 32768 --repeat 5\n"
                 "Example: bench_check --levels 2 --radix 36 --hosts 648 --repeat 3\n"
                 "         bench_check --metrics --hosts 44500   # daemon state, /metrics size and time, RSS\n");
    return asked ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    FatTreeSpec spec{.levels = 3, .radix = 64, .hosts = 32768};
    int repeat = 5;
    std::string write_dir;
    bool metrics = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") return usage(true);
        if (a == "--metrics") {
            metrics = true;
            continue;
        }
        if (i + 1 >= argc) return usage();
        if (a == "--levels") spec.levels = std::atoi(argv[++i]);
        else if (a == "--radix") spec.radix = std::atoi(argv[++i]);
        else if (a == "--hosts") spec.hosts = std::atoi(argv[++i]);
        else if (a == "--repeat") repeat = std::max(1, std::atoi(argv[++i]));
        else if (a == "--write") write_dir = argv[++i];
        else return usage();
    }

    FatTreeShape shape;
    try {
        shape = fat_tree_shape(spec);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_check: %s\n", e.what());
        return 2;
    }
    std::printf("fabric: %d-level fat-tree, %d-port switches: %d leaves, %d spines, %d cores, %d hosts, %zu links\n",
                spec.levels, spec.radix, shape.leaves, shape.spines, shape.cores, shape.hosts, shape.links);

    auto t0 = Clock::now();
    Fabric clean = synth_fat_tree(spec);
    double gen = std::chrono::duration<double>(Clock::now() - t0).count();

    // Faults: one of each cabling kind and a degraded link near the start of the tree (no MTU fault:
    // ibnetdiscover dumps do not carry MTUs).
    Fabric faulty = clean;
    const int h = spec.radix / 2;
    NodeId leaf1 = synth_node(faulty, "leaf0001"), leaf2 = synth_node(faulty, "leaf0002");
    remove_cable(faulty, synth_node(faulty, "node00001"), 1);              // missing_link
    cross_cables(faulty, leaf2, h + 1, h + 2);                             // 2 x miswired
    set_link_rate(faulty, leaf1, h + 1, {Width::X4, Speed::EDR});          // rate_mismatch
    if (shape.hosts % h) {                                                 // a free leaf port: unexpected_node
        NodeId last = synth_node(faulty, "leaf" + std::string(4 - std::to_string(shape.leaves).size(), '0') +
                                             std::to_string(shape.leaves));
        add_host(faulty, "stranger mlx5_0", 0x0c42a103ffff0000ULL, last, h);
    } else {
        faulty = without_node(faulty, synth_node(faulty, "node00002"));    // missing_node
    }

    if (metrics) return bench_metrics(clean, faulty);

    t0 = Clock::now();
    const std::string golden_text = write_ibnetdiscover(clean);
    const std::string actual_text = write_ibnetdiscover(faulty);
    double write = std::chrono::duration<double>(Clock::now() - t0).count() / 2;
    std::printf("dump: %.1f MB of ibnetdiscover text (%zu lines)\n", actual_text.size() / 1e6,
                static_cast<size_t>(std::count(actual_text.begin(), actual_text.end(), '\n')));
    if (!write_dir.empty()) {
        std::ofstream(write_dir + "/golden.txt", std::ios::binary) << golden_text;
        std::ofstream(write_dir + "/actual.txt", std::ios::binary) << actual_text;
        std::printf("wrote %s/golden.txt and %s/actual.txt\n", write_dir.c_str(), write_dir.c_str());
    }
    clean = Fabric{};
    faulty = Fabric{};
    const long rss_before = peak_rss_kb();

    Plan plan;
    Fabric actual;
    std::vector<Finding> fs;
    Timing t_plan = time_it(repeat, [&] { plan = plan_from_fabric(parse_ibnetdiscover(golden_text, "golden.txt"), "golden.txt"); });
    Timing t_parse = time_it(repeat, [&] { actual = parse_ibnetdiscover(actual_text, "actual.txt"); });
    Timing t_check = time_it(repeat, [&] { fs = check(plan, actual); });
    Timing t_total = time_it(repeat, [&] {
        Fabric a = parse_ibnetdiscover(actual_text, "actual.txt");
        fs = check(plan, a);
    });

    std::printf("timings (%d runs each):\n", repeat);
    std::printf("  %-34s %8.1f ms\n", "generate (synth_fat_tree)", gen * 1e3);
    std::printf("  %-34s %8.1f ms\n", "write_ibnetdiscover", write * 1e3);
    row("parse golden + plan_from_fabric", t_plan);
    row("parse actual (parse_ibnetdiscover)", t_parse);
    row("check(plan, actual)", t_check);
    row("parse actual + check", t_total);
    std::printf("findings: %zu %s\n", fs.size(), findings_to_json(fs)["summary"].dump().c_str());
    std::printf("peak RSS: %.1f MB (%.1f MB before parsing: generator and dump texts)\n", peak_rss_kb() / 1024.0,
                rss_before / 1024.0);
    bool ok = t_total.median <= 0.5 && peak_rss_kb() <= 512 * 1024;
    std::printf("goal (parse + check <= 0.5 s, <= 512 MB): %s\n", ok ? "met" : "NOT met");
    return 0;
}
