// bench_analyze: times the fat-tree analysis on a ~100k-link synthetic 3-level tree (a program,
// not a test). Prints figures; docs/benchmarks-routing.md records them with the command.
//
//   bench_analyze [radix=64] [hosts=34000] [repeats=5] [write-dump-to.txt]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fstream>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/ftree_files.h"
#include "ibf/synth.h"

int main(int argc, char** argv) {
    using clock = std::chrono::steady_clock;
    const int radix = argc > 1 ? std::atoi(argv[1]) : 64;
    const int hosts = argc > 2 ? std::atoi(argv[2]) : 34000;
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
    ibf::FatTreeSpec spec{.levels = 3, .radix = radix, .hosts = hosts};
    auto t0 = clock::now();
    ibf::Fabric f = ibf::synth_fat_tree(spec);
    double build_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    ibf::FatTreeShape shape = ibf::fat_tree_shape(spec);
    std::printf("fabric: 3-level, radix %d: %d hosts, %d leaves, %d spines, %d cores, %zu links, %zu nodes (built in %.0f ms)\n",
                radix, shape.hosts, shape.leaves, shape.spines, shape.cores, f.link_count(), f.size(), build_ms);
    // a few faults so the finding paths run too
    ibf::remove_cable(f, ibf::synth_node(f, "leaf0007"), radix / 2 + 3);
    ibf::set_link_rate(f, ibf::synth_node(f, "spine0010"), radix / 2 + 1, {ibf::Width::X4, ibf::Speed::EDR});

    if (argc > 4) {  // the same fabric as an ibnetdiscover dump, to time `ibfabric analyze` end to end
        std::ofstream(argv[4]) << ibf::write_ibnetdiscover(f);
        std::printf("wrote %s\n", argv[4]);
    }
    std::vector<double> analyze_ms, files_ms, json_ms, summary_ms;
    size_t findings = 0;
    for (int r = 0; r < repeats; ++r) {
        auto a0 = clock::now();
        ibf::Analysis a = ibf::analyze(f);
        auto a1 = clock::now();
        ibf::FtreeFiles files = ibf::ftree_files(f, a);
        auto a2 = clock::now();
        std::string j = ibf::analysis_to_json(f, a).dump();
        auto a3 = clock::now();
        std::string js = ibf::analysis_to_json(f, a, false).dump();
        auto a4 = clock::now();
        summary_ms.push_back(std::chrono::duration<double, std::milli>(a4 - a3).count());
        analyze_ms.push_back(std::chrono::duration<double, std::milli>(a1 - a0).count());
        files_ms.push_back(std::chrono::duration<double, std::milli>(a2 - a1).count());
        json_ms.push_back(std::chrono::duration<double, std::milli>(a3 - a2).count());
        findings = a.findings.size();
        if (r == 0)
            std::printf("levels %d, findings %zu, roots %d, compute ports %d, json %zu bytes (per switch), %zu bytes (summary)\n",
                        a.levels(), findings, files.roots, files.compute_ports, j.size(), js.size());
    }
    auto report = [](const char* what, std::vector<double> v) {
        std::sort(v.begin(), v.end());
        std::printf("%-22s min %8.1f ms   median %8.1f ms   max %8.1f ms\n", what, v.front(), v[v.size() / 2], v.back());
    };
    report("analyze()", analyze_ms);
    report("ftree_files()", files_ms);
    report("analysis_to_json()", json_ms);
    report("  .. per_switch=false", summary_ms);
    double median = analyze_ms[analyze_ms.size() / 2];
    std::printf("budget 500 ms for analyze(): %s\n", median <= 500 ? "met" : "NOT met");
    return 0;
}
