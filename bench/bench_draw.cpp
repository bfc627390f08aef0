// bench_draw: time to lay out and render the fabric picture (draw/) of ~2k-node synthetic
// fat-trees and rail-optimized DGX SuperPODs, and the size of the SVG and the HTML page (a
// program, not a test; docs/benchmarks.md). Times: median of 5, wall and this thread's CPU.
//
//   build/bin/bench_draw            # prints one line per fabric
//   build/bin/bench_draw /tmp/out   # and writes /tmp/out/draw-2tier.html, draw-3tier.html, draw-superpod4.html, ...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/draw.h"
#include "ibf/page.h"
#include "ibf/synth.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Six findings on leaf uplinks and host cables of three leaves, as a check would report them.
std::vector<ibf::Finding> some_findings(const ibf::Fabric& f, const std::vector<const char*>& leaves) {
    std::vector<ibf::Finding> out;
    for (const char* leaf : leaves) {
        const ibf::NodeId n = ibf::synth_node(f, leaf);
        const ibf::Node& node = f.node(n);
        const int up = node.num_ports();  // the last uplink
        ibf::Finding fd;
        fd.kind = ibf::FindingKind::rate_mismatch;
        fd.a = {node.name, node.guid, up};
        fd.message = "runs at 1xHDR, plan says 4xHDR";
        out.push_back(fd);
        fd.kind = ibf::FindingKind::missing_link;
        fd.a = {node.name, node.guid, 1};
        out.push_back(fd);
    }
    return out;
}

void run(const char* what, const ibf::Fabric& f, const std::vector<ibf::Finding>& fs, const std::string& out_path) {
    auto t0 = Clock::now();
    const ibf::Analysis a = ibf::analyze(f);
    const double analyze_ms = ms_since(t0);
    std::vector<double> layout_ms, layout_cpu_ms, svg_ms, page_ms;
    std::string svg, html;
    for (int i = 0; i < 5; ++i) {
        t0 = Clock::now();
        const double c0 = cpu_ms();
        const ibf::draw::Layout l = ibf::draw::layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names, .findings = fs});
        layout_cpu_ms.push_back(cpu_ms() - c0);
        layout_ms.push_back(ms_since(t0));
        t0 = Clock::now();
        svg = ibf::draw::render_svg(l);
        svg_ms.push_back(ms_since(t0));
        t0 = Clock::now();
        ibf::draw::Page p;
        p.title = what;
        p.svg = svg;
        p.findings = fs;
        html = ibf::draw::render_page(p);
        page_ms.push_back(ms_since(t0));
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const ibf::draw::Layout l = ibf::draw::layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names, .findings = fs});
    std::printf("%s: %zu nodes, %zu links -> %zu boxes, %zu edges (%d red), %.0fx%.0f px; analyze %.1f ms, layout %.1f ms "
                "(CPU %.1f ms), svg %.1f ms (%zu KiB), page %.1f ms (%zu KiB)\n",
                what, f.size(), f.link_count(), l.boxes.size(), l.edges.size(), l.faults, l.width, l.height, analyze_ms,
                median(layout_ms), median(layout_cpu_ms), median(svg_ms), svg.size() / 1024, median(page_ms), html.size() / 1024);
    if (!out_path.empty()) std::ofstream(out_path) << html;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : "";
    auto out = [&](const char* name) { return dir.empty() ? std::string() : dir + "/" + name; };
    const std::vector<const char*> leaves{"leaf0001", "leaf0007", "leaf0013"}, rails{"su1-leaf-r1", "su2-leaf-r3", "su1-leaf-r7"};
    for (const auto& [what, spec, file] : {std::tuple{"2-tier radix 64 (2048 hosts)", ibf::FatTreeSpec{.levels = 2, .radix = 64}, "draw-2tier.html"},
                                           std::tuple{"3-tier radix 40 (1600 hosts)", ibf::FatTreeSpec{.levels = 3, .radix = 40, .hosts = 1600}, "draw-3tier.html"}}) {
        const ibf::Fabric f = ibf::synth_fat_tree(spec);
        run(what, f, some_findings(f, leaves), out(file));
    }
    for (const auto& [what, units, file] : {std::tuple{"DGX SuperPOD 4 SU (79 DGX, rails, core, SHARP)", 4, "draw-superpod4.html"},
                                            std::tuple{"DGX SuperPOD 10 SU (199 DGX, rails, core, SHARP)", 10, "draw-superpod10.html"}}) {
        const ibf::Fabric f = ibf::synth_superpod({.units = units});
        run(what, f, some_findings(f, rails), out(file));
    }
    return 0;
}
