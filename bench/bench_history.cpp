// bench_history: how big does the history database grow per 1000 sweeps, and how long does
// recording one sweep take (HistoryStore::record: change list, keyframes, findings, one
// transaction)? A program that prints figures (not a test). See docs/benchmarks.md.
//
//   bench_history                       # both fabrics, 1000 sweeps each, steady and churning
//   bench_history --sweeps 5000 --dir /var/tmp   # where the databases go (default: /tmp)
//
// Fabrics: the 324-host example (config/examples/fat-tree-2tier-324.yaml: 18 leaves, 9 spines,
// 2 cables per leaf-spine pair, 648 links) built here by its rule, and the 2k-node synthetic
// tree of the lab benchmarks (ibf_synth: 1920 hosts, 60 leaves, 32 spines, 3840 links).
// Scenarios: "steady" (every sweep the same fabric, 2 findings), "churn" (every sweep one cable
// goes down or comes back, its finding opens or closes: a flapping link forever).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ibf/fabric_diff.h"
#include "ibf/history.h"
#include "ibf/report.h"
#include "ibf/synth.h"

using namespace ibf;
using Clock = std::chrono::steady_clock;

namespace {

// The 324-host example: leaf L port 19+k -> spine k/2+1 port 2L + k%2 + 1; hosts on ports 1-18.
Fabric example_324() {
    Fabric f;
    std::vector<NodeId> leaves, spines;
    auto sw = [&](const std::string& name, Guid g) {
        return f.add_node({.type = NodeType::Switch, .guid = g, .description = "MF0;" + name + ":MSB7800/U1"}, 36);
    };
    char name[32];
    for (int s = 0; s < 9; ++s) std::snprintf(name, sizeof name, "spine%02d", s + 1), spines.push_back(sw(name, 0x7cfe900300200000 + s));
    for (int l = 0; l < 18; ++l) std::snprintf(name, sizeof name, "leaf%02d", l + 1), leaves.push_back(sw(name, 0x7cfe900300100000 + l));
    for (int l = 0; l < 18; ++l)
        for (int k = 0; k < 18; ++k) f.connect(leaves[l], 19 + k, spines[k / 2], 2 * l + k % 2 + 1);
    for (int h = 0; h < 324; ++h) {
        std::snprintf(name, sizeof name, "node%03d mlx5_0", h + 1);
        NodeId n = f.add_node({.type = NodeType::CA, .guid = 0x0c42a10300000000 + (static_cast<Guid>(h) << 4), .description = name}, 1);
        f.connect(leaves[h / 18], h % 18 + 1, n, 1);
    }
    uint16_t lid = 1;
    for (NodeId id = 0; id < f.size(); ++id) {
        Node& n = f.node(id);
        if (n.type == NodeType::Switch) n.ports[0].lid = lid++;
        for (Port& p : n.ports) {
            if (!p.valid) continue;
            if (n.type == NodeType::CA) p.lid = lid++;
            if (p.linked()) p.width_active = Width::X4, p.speed_active = Speed::EDR, p.mtu_active = 4096, p.state = PortState::Active;
        }
    }
    f.finalize();
    return f;
}

struct Result {
    double mean_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0, state_ms = 0;
    uint64_t bytes = 0;
};

uint64_t file_size(const std::string& p) {
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

Result run(const Fabric& base, NodeId flap_node, int flap_port, int sweeps, bool churn, const std::string& db) {
    for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((db + suffix).c_str());
    Fabric down = base;
    remove_cable(down, flap_node, flap_port);
    const SmInfo sm{.port_guid = 0x0002c90300000001, .lid = 1, .priority = 15, .state = SmState::Master};
    const FabricState up_state = fabric_state(base, sm, {});
    const FabricState down_state = fabric_state(down, sm, {});
    const Finding steady1{.kind = FindingKind::miswired, .a = {"leaf03", 0, 19}, .b = {"spine01", 0, 6}, .expected = "spine01/5",
                          .actual = "spine01/6", .message = "cable at leaf03/19 goes to spine01/6, plan says spine01/5"};
    const Finding steady2{.kind = FindingKind::rate_mismatch, .a = {"leaf07", 0, 25}, .b = {"spine04", 0, 13},
                          .expected = "4xEDR", .actual = "1xEDR", .message = "leaf07/25 -- spine04/13 runs at 1xEDR"};
    const Finding flap{.kind = FindingKind::missing_link, .a = {base.node(flap_node).name, 0, flap_port}, .b = {"spine", 0, 1},
                       .message = "missing"};
    Result res;
    std::vector<double> ts;
    {
        HistoryStore h(db);
        const auto s0 = Clock::now();
        for (int i = 0; i < 10; ++i) (void)fabric_state(base, sm, {});
        res.state_ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count() / 10;
        for (int i = 0; i < sweeps; ++i) {
            const bool is_down = churn && i % 2 == 1;
            std::vector<Finding> fs{steady1, steady2};
            if (is_down) fs.push_back(flap);
            HistoryRow r;
            r.sweep_seq = static_cast<uint64_t>(i + 1);
            r.taken_unix_ms = 1796090000000 + int64_t{i} * 10000;
            r.published_unix_ms = r.taken_unix_ms + 20;
            r.sm_guid = sm.port_guid;
            r.nodes = base.size();
            r.links = base.link_count() - (is_down ? 1 : 0);
            r.findings = fs.size();
            r.checked = true;
            r.findings_json = json_text(findings_to_json(fs));
            const auto t0 = Clock::now();
            h.record(r, is_down ? down_state : up_state, fs);
            ts.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
    }  // closed: the WAL is checkpointed into the file
    res.bytes = file_size(db) + file_size(db + "-wal");
    std::sort(ts.begin(), ts.end());
    for (double t : ts) res.mean_ms += t / static_cast<double>(ts.size());
    res.p50_ms = ts[ts.size() / 2];
    res.p99_ms = ts[ts.size() * 99 / 100];
    res.max_ms = ts.back();
    return res;
}

}  // namespace

int main(int argc, char** argv) {
    int sweeps = 1000;
    std::string dir = "/tmp";
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--sweeps") && i + 1 < argc) sweeps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_history [--sweeps N] [--dir DIR]\n");
            return 2;
        }
    }
    if (sweeps < 2) sweeps = 2;
    struct Case {
        const char* name;
        Fabric f;
        NodeId node;
        int port;
    };
    Fabric big = synth_fat_tree({.levels = 2, .radix = 64, .hosts = 1920});
    Fabric small = example_324();
    std::vector<Case> cases;
    cases.push_back({"324-host example", small, small.find_by_name("leaf03").front(), 20});
    cases.push_back({"2k-node synthetic", big, synth_node(big, "leaf0003"), 40});
    std::printf("%d sweeps each; the database closed (WAL checkpointed) before it is measured\n", sweeps);
    std::printf("%-18s %5s %6s %-7s %14s %10s %9s %9s %9s %9s\n", "fabric", "nodes", "links", "sweeps", "bytes/1k sweeps",
                "state ms", "mean ms", "p50 ms", "p99 ms", "max ms");
    for (const Case& c : cases)
        for (bool churn : {false, true}) {
            const std::string db = dir + "/bench-history-" + std::to_string(::getpid()) + ".db";
            const Result r = run(c.f, c.node, c.port, sweeps, churn, db);
            for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((db + suffix).c_str());
            std::printf("%-18s %5zu %6zu %-7s %14.0f %10.2f %9.3f %9.3f %9.3f %9.3f\n", c.name, c.f.size(), c.f.link_count(),
                        churn ? "churn" : "steady", static_cast<double>(r.bytes) * 1000.0 / sweeps, r.state_ms, r.mean_ms,
                        r.p50_ms, r.p99_ms, r.max_ms);
        }
    return 0;
}
