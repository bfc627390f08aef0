// bench_state: ControllerState::on_snapshot's cost on ibfabricd's io thread per master sweep at
// 2k, 8k and 48k LIDs, and its parts (docs/threading.md: the io thread must do no work
// proportional to the fabric). A program that prints figures, not a test. The HA engine's share
// is bench_ha's.
//
//   bench_state                     # 2,048, 7,680 and 44,500 hosts (radix 64; 2 levels, else 3)
//   bench_state --hosts 44500 --repeat 20
//
// Per size, a state with one master plugin (no HA engine) that has port counter state for every
// linked port (perfmgr on: a row per port, as the plugin sends them); then a steady master sweep
// (the same fabric again, nothing changed):
//   on_snapshot          ControllerState::on_snapshot of one master sweep without port states
//                        (the fabric walked), the previous snapshot still held elsewhere (by the
//                        check thread in the daemon), of which
//     flaps.on_sweep     the flap detector's pass over the fabric's ports (a FlapDetector alone)
//     counter ports      which counter ports the fabric has (PortCounterTracker::mark_present +
//                        forget_absent, the lambda note_counter_ports() gives it)
//   on_snapshot with port states   the same sweep carrying Snapshot::port_states as the decoder
//                        makes them (the changes since the last sweep: none): changes applied
//   port_states          making those port states with their changes (decode thread)
//   release snapshot     destroying a snapshot of that size (on whichever thread drops it last)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ibf/bench_util.h"
#include "ibf/controller_state.h"
#include "ibf/synth.h"

using namespace ibf;
using bench::Clock;

namespace {

using bench::master_sm;
using bench::Timing;
using bench::time_it;

void run(int hosts, int repeat) {
    const int levels = hosts <= 2048 ? 2 : 3;
    Snapshot base;
    base.osm_version = "OpenSM 3.3.23";
    base.fabric = synth_fat_tree({.levels = levels, .radix = 64, .hosts = hosts});
    const Fabric& f = base.fabric;
    size_t lids = 0, linked = 0;
    const Port* sm_port = nullptr;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid) continue;
            if (p.lid && (n.type != NodeType::Switch || p.num == 0)) ++lids;
            if (p.linked()) ++linked;
            if (!sm_port && n.type != NodeType::Switch && p.lid) sm_port = &p;
        }
    base.self = master_sm(sm_port->guid, sm_port->lid);
    base.master_lid = sm_port->lid;
    base.port_lids = std::make_shared<const PortLids>(port_lids(f));
    std::printf("\n%d-level radix 64, %d hosts: %zu nodes, %zu LIDs, %zu linked ports\n", levels, hosts, f.size(), lids,
                linked);

    // The state: one plugin, MASTER, counter state for every linked port.
    ControllerState st;
    int64_t now = 1'700'000'000'000;
    st.on_connect(1, "unix", now);
    wire::Hello h;
    h.sm = base.self;
    st.on_hello(1, h, now);
    wire::PortCounters pc;
    size_t rows = 0;
    auto flush = [&] {
        st.on_port_counters(1, pc, now);
        rows += pc.ports.size();
        pc.ports.clear();
    };
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports)
            if (p.valid && p.linked()) {
                pc.ports.push_back({n.guid, p.num, {}});
                if (pc.ports.size() == wire::kMaxPortCounterRows) flush();
            }
    flush();
    (void)st.on_snapshot(1, base, ++now);  // the first sweep: the flap detector learns every port

    // on_snapshot of a steady sweep; the previous snapshot stays alive in `held` (the daemon's
    // check thread or CheckResult usually holds it), so its release is timed apart. Each run gets a
    // fresh copy (a decoded snapshot is fresh memory too). `digests`: with the port states the
    // decoder makes (made here outside the timer, from the previous run's, as wire::Decoder does).
    std::shared_ptr<const PortStates> last_states;
    auto sweep = [&](bool digests, ControllerState& state) {
        Snapshot next;
        std::shared_ptr<const Snapshot> held;
        bool became_fabric = true;
        const Timing t = time_it(
            repeat,
            [&] {
                next = base;
                if (digests) {
                    next.port_states = std::make_shared<const PortStates>(port_states(next.fabric, last_states));
                    last_states = next.port_states;
                }
                held = state.current();
            },
            [&] { became_fabric = state.on_snapshot(1, std::move(next), ++now).has_value() && became_fabric; });
        if (!became_fabric) std::printf("  NOT every sweep became the fabric\n");
        return t;
    };
    const Timing whole = sweep(false, st);
    const Timing with = sweep(true, st);

    // The parts, each on a fresh copy of the fabric per run.
    Fabric copy;
    FlapDetector flaps;
    flaps.on_sweep(f, now);
    const Timing flap = time_it(repeat, [&] { copy = f; }, [&] { flaps.on_sweep(copy, ++now); });

    PortCounterTracker t = st.port_counters();
    const Timing counters = time_it(
        repeat, [&] { copy = f; },
        [&] {
            t.mark_present(
                [&copy](Guid g, int port) {
                    const auto id = copy.find(g);
                    return id && copy.node(*id).port(port) != nullptr;
                },
                ++now);
            t.forget_absent(now);
        });
    const Timing digest = time_it(std::max(3, repeat / 3), [] {}, [&] { (void)port_states(f, last_states); });

    std::unique_ptr<Snapshot> victim;
    const Timing release = time_it(
        std::max(3, repeat / 2), [&] { victim = std::make_unique<Snapshot>(base); }, [&] { victim.reset(); });

    std::printf("  counter ports tracked: %zu (%zu rows); flap sweeps from changes: %llu\n", t.port_count(), rows,
                static_cast<unsigned long long>(st.flaps().sweeps_from_changes()));
    std::printf("  on_snapshot, master sweep (io)  best %8.3f ms  median %8.3f ms  (%d runs; fabric walked)\n", whole.best,
                whole.median, repeat);
    std::printf("    flaps.on_sweep                best %8.3f ms  median %8.3f ms\n", flap.best, flap.median);
    std::printf("    counter ports                 best %8.3f ms  median %8.3f ms\n", counters.best, counters.median);
    std::printf("  on_snapshot with port states    best %8.3f ms  median %8.3f ms  (changes applied)\n", with.best,
                with.median);
    std::printf("  port_states with changes (decode thread)  best %8.3f ms  median %8.3f ms\n", digest.best,
                digest.median);
    std::printf("  release of a snapshot           best %8.3f ms  median %8.3f ms\n", release.best, release.median);
}

}  // namespace

int main(int argc, char** argv) {
    int hosts = 0, repeat = 15;
    if (!bench::hosts_and_repeat(argc, argv, "bench_state", hosts, repeat)) return 2;
    if (hosts) {
        run(hosts, repeat);
    } else {
        for (int h : {2048, 7680, 44500}) run(h, repeat);
    }
    return 0;
}
