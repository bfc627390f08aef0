// bench_routes: routing validation (check_routes) and lft_paths on synthetic fat-trees with
// minimum-hop tables (synth_lfts). Prints CPU milliseconds, median of 3, one run above 2 s
// (docs/benchmarks.md).
//
//   bench_routes                 # 2-level radix 64 (2,048 hosts) and 3-level radix 64 (44,500 hosts)
//   bench_routes 3 64 16000      # levels radix hosts
//   bench_routes 3 64 44500 live # only the daemon's per-sweep step (no full validation timed)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <ctime>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/lft.h"
#include "ibf/live_routes.h"
#include "ibf/route_check.h"
#include "ibf/synth.h"

namespace {

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Median of 3 runs (one run when the first takes more than 2 s).
template <class F>
double median3(F&& f) {
    std::vector<double> ms;
    for (int i = 0; i < 3 && (i == 0 || ms[0] < 2000); ++i) {
        const double t0 = cpu_ms();
        f();
        ms.push_back(cpu_ms() - t0);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// The daemon's step per sweep (pipeline/live_routes.h): the first validation in full, then the
// inputs' hash of a sweep that changed nothing, and nothing more (it equals the last one's).
void live_step(const ibf::Fabric& f, const ibf::Analysis& a, const std::vector<ibf::SwitchLft>& lfts) {
    auto snap = std::make_shared<ibf::Snapshot>();
    snap->fabric = f;
    snap->lfts = lfts;
    ibf::LiveRouteCheck live;
    const double t0 = cpu_ms();
    live.validate(ibf::route_job(snap, f, a.names, a.findings));
    std::printf("  live step, first sweep:    %8.1f ms\n", cpu_ms() - t0);
    bool hit = false;
    std::printf("  live step, no change:      %8.1f ms\n", median3([&] {
                    hit = live.cached(ibf::route_job(snap, f, a.names, a.findings).key) != nullptr;
                }));
    if (!hit) std::printf("  (the live step missed its cache: a bug)\n");
}

void run(int levels, int radix, int hosts, bool live_only = false) {
    const ibf::Fabric f = ibf::synth_fat_tree({.levels = levels, .radix = radix, .hosts = hosts});
    const double t0 = cpu_ms();
    const std::vector<ibf::SwitchLft> lfts = ibf::synth_lfts(f);
    const double synth = cpu_ms() - t0;
    const ibf::Analysis a = ibf::analyze(f);
    const size_t lids = lfts.empty() ? 0 : lfts[0].port_by_lid.size() - 1;
    std::printf("%d-level radix %d: %zu switches, %zu hosts, %zu LIDs, %zu links\n", levels, radix, lfts.size(),
                a.compute_hosts.size(), lids, f.link_count());
    std::printf("  synth_lfts (the tables):   %8.1f ms\n", synth);
    if (live_only) {
        live_step(f, a, lfts);
        return;
    }
    ibf::LftPaths p;
    std::printf("  lft_paths:                 %8.1f ms\n", median3([&] { p = ibf::lft_paths(f, lfts); }));
    ibf::RouteCheck rc;
    const double graph = median3([&] { ibf::RouteGraph g(f, lfts); });
    const ibf::RouteGraph g(f, lfts);
    std::printf("  RouteGraph:                %8.1f ms\n", graph);
    std::printf("  check_routes (all):        %8.1f ms\n", median3([&] { rc = ibf::check_routes(g, a); }));
    ibf::RouteCheckOptions quick;
    quick.non_minimal = false;
    quick.credit_loops = false;
    std::printf("  check_routes (no minimal/credit): %8.1f ms\n", median3([&] { rc = ibf::check_routes(g, a, quick); }));
    ibf::RouteCheckCache cache;
    cache.check(f, a, lfts);
    std::printf("  RouteCheckCache, no change: %7.1f ms\n", median3([&] { cache.check(f, a, lfts); }));
    live_step(f, a, lfts);
    std::printf("  pairs %ld, routed %ld, max %d cables, %zu findings, lft_paths routes %ld broken %ld\n", rc.pairs,
                rc.routed, rc.max_hops, rc.findings.size(), p.routes, p.broken);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 || argc == 5) {
        run(std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]), argc == 5 && std::string(argv[4]) == "live");
        return 0;
    }
    run(2, 64, 2048);
    run(3, 64, 44500);
    return 0;
}
