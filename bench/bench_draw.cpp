// bench_draw: time to lay out and render the fabric picture (draw/) of ~2k-node synthetic
// fat-trees, and the size of the SVG and the HTML page (a program, not a test; docs/benchmarks.md).
//
//   build/bin/bench_draw            # prints one line per fabric
//   build/bin/bench_draw /tmp/out   # and writes /tmp/out/draw-2tier.html, draw-3tier.html
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/draw.h"
#include "ibf/page.h"
#include "ibf/synth.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Five findings on leaf uplinks and host cables, as a check would report them.
std::vector<ibf::Finding> some_findings(const ibf::Fabric& f) {
    std::vector<ibf::Finding> out;
    for (const char* leaf : {"leaf0001", "leaf0007", "leaf0013"}) {
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

void run(const char* what, const ibf::FatTreeSpec& spec, const std::string& out_path) {
    const ibf::Fabric f = ibf::synth_fat_tree(spec);
    const std::vector<ibf::Finding> fs = some_findings(f);
    auto t0 = Clock::now();
    const ibf::Analysis a = ibf::analyze(f);
    const double analyze_ms = ms_since(t0);
    std::vector<double> layout_ms, svg_ms, page_ms;
    std::string svg, html;
    for (int i = 0; i < 5; ++i) {
        t0 = Clock::now();
        const ibf::draw::Layout l = ibf::draw::layout({.fabric = &f, .tier_of = a.tier_of, .names = a.names, .findings = fs});
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
    std::printf("%s: %zu nodes, %zu links -> %zu boxes, %zu edges (%d red), %.0fx%.0f px; analyze %.1f ms, layout %.1f ms, "
                "svg %.1f ms (%zu KiB), page %.1f ms (%zu KiB)\n",
                what, f.size(), f.link_count(), l.boxes.size(), l.edges.size(), l.faults, l.width, l.height, analyze_ms,
                median(layout_ms), median(svg_ms), svg.size() / 1024, median(page_ms), html.size() / 1024);
    if (!out_path.empty()) std::ofstream(out_path) << html;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : "";
    run("2-tier radix 64 (2048 hosts)", {.levels = 2, .radix = 64, .hosts = 0}, dir.empty() ? "" : dir + "/draw-2tier.html");
    run("3-tier radix 40 (1600 hosts)", {.levels = 3, .radix = 40, .hosts = 1600}, dir.empty() ? "" : dir + "/draw-3tier.html");
    return 0;
}
