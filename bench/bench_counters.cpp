// bench_counters: the io thread's cost of one PortCounters batch (wire::kMaxPortCounterRows rows,
// ControllerState::on_port_counters) at 2k, 8k and 48k LIDs with perfmgr on every linked port
// (docs/threading.md: the io thread must do no work proportional to the fabric). A program that
// prints figures, not a test.
//
//   bench_counters                    # 2,048, 7,680 and 44,500 hosts (radix 64; 2 levels, else 3)
//   bench_counters --hosts 44500 --repeat 50
//
// Per size, a state with one master plugin and counter state for every linked port; then batches
// of 128 rows (PortXmitData grows on each, SymbolErrorCounter on every 8th port), timed:
//   batch, nothing held       no render holds the counter state: written in place
//   batch, render holds it    a /metrics render (metrics thread) holds port_counters_shared()
//                             when the batch arrives: the copy-on-write the io thread pays
//   release held state        the io thread dropping the render's reference afterwards (the
//                             render posts it back): the old state's parts only it still holds
// Also the resident memory the first readings added (the counter state, roughly).
// Each timing twice: rows in the fabric's node order (as the plugin's dirty list sends a
// perfmgr sweep's ports) and rows from 128 random ports (its resync order, the worst case).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ibf/bench_util.h"
#include "ibf/controller_state.h"
#include "ibf/synth.h"

using namespace ibf;
using bench::Clock;

namespace {

using bench::master_sm;
using bench::ms_since;
using bench::summary;
using bench::Timing;

// This process's resident memory in MiB (Linux; 0 elsewhere).
double rss_mib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (!std::strncmp(line, "VmRSS:", 6)) kb = std::atol(line + 6);
    std::fclose(f);
    return static_cast<double>(kb) / 1024;
}

void print(const char* what, const Timing& t) {
    std::printf("    %-34s best %8.3f ms  median %8.3f ms\n", what, t.best, t.median);
}

void run(int hosts, int repeat) {
    const int levels = hosts <= 2048 ? 2 : 3;
    const Fabric f = synth_fat_tree({.levels = levels, .radix = 64, .hosts = hosts});
    std::vector<wire::PortCounterRow> ports;  // every linked port, in the fabric's node order
    const Port* sm_port = nullptr;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid) continue;
            if (p.linked()) ports.push_back({n.guid, p.num, {}});
            if (!sm_port && n.type != NodeType::Switch && p.lid) sm_port = &p;
        }
    std::printf("\n%d-level radix 64, %d hosts: %zu nodes, %zu counter ports\n", levels, hosts, f.size(), ports.size());

    const double rss_before = rss_mib();
    ControllerState st;
    int64_t now = 1'700'000'000'000;
    st.on_connect(1, "unix", now);
    wire::Hello h;
    h.sm = master_sm(sm_port->guid, sm_port->lid);
    st.on_hello(1, h, now);
    wire::PortCounters pc;
    for (size_t i = 0; i < ports.size(); ++i) {  // the first readings: every port's baseline
        pc.ports.push_back(ports[i]);
        if (pc.ports.size() == wire::kMaxPortCounterRows || i + 1 == ports.size()) {
            st.on_port_counters(1, pc, now);
            pc.ports.clear();
        }
    }

    std::printf("  counter state after the first readings: +%.1f MiB resident\n", rss_mib() - rss_before);

    std::mt19937_64 rng(42);
    size_t next_in_order = 0;
    // The next batch: its rows' values grown since their last row.
    auto make_batch = [&](bool random_ports) {
        pc.ports.clear();
        for (size_t i = 0; i < wire::kMaxPortCounterRows; ++i) {
            const size_t at = random_ports ? rng() % ports.size() : next_in_order++ % ports.size();
            wire::PortCounterRow& r = ports[at];
            r.v[static_cast<size_t>(wire::PortCounter::xmit_data)] += 1000;
            if (at % 8 == 0) r.v[static_cast<size_t>(wire::PortCounter::symbol_errors)] += 1;
            pc.ports.push_back(r);
        }
    };
    auto time_batches = [&](bool random_ports, bool held_by_render, Timing* release) {
        std::vector<double> ts, rel;
        for (int i = 0; i < repeat; ++i) {
            make_batch(random_ports);
            std::shared_ptr<const PortCounterTracker> held;
            if (held_by_render) held = st.port_counters_shared();  // a /metrics render's reference
            ++now;
            auto t0 = Clock::now();
            st.on_port_counters(1, pc, now);
            ts.push_back(ms_since(t0));
            t0 = Clock::now();
            held.reset();
            rel.push_back(ms_since(t0));
        }
        if (release) *release = summary(rel);
        return summary(std::move(ts));
    };
    for (const bool random_ports : {false, true}) {
        std::printf("  %s:\n", random_ports ? "128 random ports per batch" : "128 ports in node order per batch");
        print("batch, nothing held", time_batches(random_ports, false, nullptr));
        Timing release;
        print("batch, render holds it", time_batches(random_ports, true, &release));
        print("release held state", release);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> sizes = {2048, 7680, 44500};
    int hosts = 0, repeat = 30;
    if (!bench::hosts_and_repeat(argc, argv, "bench_counters", hosts, repeat)) return 2;
    if (hosts) sizes = {hosts};
    for (int hosts : sizes) run(hosts, repeat);
    return 0;
}
