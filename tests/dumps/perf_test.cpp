// Speed: a generated 108k-link ibnetdiscover dump (216k port lines, ~24 MB) parses well under 0.3 s in
// an optimised build. The bound asserted here is looser (shared 2-core machine, sanitizer builds); the
// measured figure is printed and recorded in docs/dump-formats.md.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include "dump_test_util.h"

namespace ibf {
namespace {

Fabric big_fat_tree(int leaves, int spines) {
    Fabric f;
    std::vector<NodeId> S, L;
    for (int s = 0; s < spines; ++s)
        S.push_back(f.add_node({.type = NodeType::Switch, .guid = 0x7cfe900300000000ull + s,
                                .description = "MF0;spine" + std::to_string(s) + ":MQM8700/U1"}, 36));
    for (int l = 0; l < leaves; ++l)
        L.push_back(f.add_node({.type = NodeType::Switch, .guid = 0x7cfe900400000000ull + l,
                                .description = "MF0;leaf" + std::to_string(l) + ":MQM8700/U1"}, 36));
    auto rate = [&](NodeId a, int pa, NodeId b, int pb) {
        f.connect(a, pa, b, pb);
        for (Port* p : {&f.node(a).ports[pa], &f.node(b).ports[pb]}) {
            p->width_active = Width::X4;
            p->speed_active = Speed::HDR;
        }
    };
    int k = 0;
    for (int l = 0; l < leaves; ++l) {
        for (int h = 0; h < 18; ++h) {
            Guid g = 0x0c42a10300000000ull + static_cast<Guid>(l) * 64 + static_cast<Guid>(h) * 2;
            NodeId c = f.add_node({.type = NodeType::CA, .guid = g, .description = "node" + std::to_string(l * 18 + h) + " mlx5_0"}, 1);
            f.node(c).ports[1].guid = g + 1;
            f.node(c).ports[1].lid = static_cast<uint16_t>(1000 + l * 18 + h);
            rate(L[l], h + 1, c, 1);
        }
        for (int u = 0; u < 18; ++u, ++k) rate(L[l], 19 + u, S[k % spines], k / spines + 1);
    }
    f.finalize();
    return f;
}

TEST(Perf, HundredThousandLinkIbnetdiscover) {
    Fabric f = big_fat_tree(3000, 1500);
    ASSERT_EQ(f.link_count(), 108000u);
    std::string text = write_ibnetdiscover(f);
    double best = 1e9, best_cpu = 1e9;  // wall and process CPU time (the machine is shared: CPU is steadier)
    size_t links = 0;
    for (int i = 0; i < 3; ++i) {
        auto a = std::chrono::steady_clock::now();
        std::clock_t c0 = std::clock();
        Fabric g = parse_ibnetdiscover(text, "big");
        best_cpu = std::min(best_cpu, double(std::clock() - c0) / CLOCKS_PER_SEC);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
        links = g.link_count();
    }
    EXPECT_EQ(links, 108000u);
    std::printf("parse_ibnetdiscover: %zu bytes, 216000 port lines, best of 3: %.3f s wall, %.3f s CPU\n", text.size(),
                best, best_cpu);
    RecordProperty("parse_seconds", std::to_string(best));
    RecordProperty("parse_cpu_seconds", std::to_string(best_cpu));
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    // Goal: well under 0.3 s for 108k links (docs/benchmarks.md). Measured 0.05 s CPU quiet and
    // 0.10 s CPU at load 16 on this 2-core machine (wall time was 1.1 s then: hence CPU time).
    EXPECT_LT(best_cpu, 0.3);
#endif
}

}  // namespace
}  // namespace ibf
