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

long peak_rss_kb() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;  // kilobytes on Linux
}

int usage(bool asked = false) {
    std::fprintf(asked ? stdout : stderr,
                 "usage: bench_check [--levels 2|3] [--radix K] [--hosts N] [--repeat R] [--write DIR]\n"
                 "  defaults: --levels 3 --radix 64 --hosts 32768 --repeat 5\n"
                 "Example: bench_check --levels 2 --radix 36 --hosts 648 --repeat 3\n");
    return asked ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    FatTreeSpec spec{.levels = 3, .radix = 64, .hosts = 32768};
    int repeat = 5;
    std::string write_dir;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") return usage(true);
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
