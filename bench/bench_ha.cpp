// bench_ha: the HA engine's share of a plugin snapshot on ibfabricd's io thread at 2k and 48k
// LIDs (docs/threading.md: the io thread must do no work proportional to the fabric). A program
// that prints figures, not a test.
//
//   bench_ha                      # 2-level radix 64 (2,048 hosts) and 3-level radix 64 (44,500 hosts)
//   bench_ha --hosts 44500 --repeat 50
//
// Per size: a master's snapshot (SM A on the first host's port, SM B on the second's) encoded as
// wire version 1 and decoded by wire::Decoder as the daemon's decode thread does; then, on one
// HaEngine that knows both SMs (and two more that are not in the fabric):
//   decode          wire::Decoder::next() of the snapshot (decode thread), of which
//   port_lids       the snapshot's port LIDs digest (Snapshot::port_lids, made by the decoder)
//   on_snapshot     HaEngine::on_snapshot of that master's sweep (io thread, every snapshot)
//   failover tick   the tick that sees B become master (io thread, once per master change)
//   failover snap   B's first snapshot, 1,000 host LIDs moved: the LID comparison (io thread, once
//                   per master change; on fresh engines, repeat / 4 times)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ibf/ha_engine.h"
#include "ibf/synth.h"
#include "ibf/bench_util.h"
#include "ibf/wire.h"

using namespace ibf;

namespace {

using bench::Timing;
// `fn` timed `repeat` times.
Timing time_it(int repeat, const std::function<void()>& fn) { return bench::time_it(repeat, [] {}, fn); }

SmInfo sm(Guid g, uint16_t lid, SmState st) {
    SmInfo s;
    s.port_guid = g;
    s.lid = lid;
    s.priority = 10;
    s.state = st;
    return s;
}

Snapshot decode(const std::string& bytes) {
    wire::Decoder d;
    d.feed(bytes.data(), bytes.size());
    auto m = d.next();
    if (!m || !std::holds_alternative<Snapshot>(*m)) {
        std::fprintf(stderr, "bench_ha: the snapshot did not decode\n");
        std::exit(1);
    }
    return std::get<Snapshot>(std::move(*m));
}

void run(int levels, int hosts, int repeat) {
    Snapshot s;
    s.osm_version = "OpenSM 3.3.23";
    s.fabric = synth_fat_tree({.levels = levels, .radix = 64, .hosts = hosts});
    // The SMs: the first two hosts' ports.
    std::vector<const Port*> host_ports;
    size_t lids = 0;
    for (const Node& n : s.fabric.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || !p.lid || (n.type == NodeType::Switch && p.num != 0)) continue;
            ++lids;
            if (n.type != NodeType::Switch && host_ports.size() < 2) host_ports.push_back(&p);
        }
    const Guid a = host_ports[0]->guid, b = host_ports[1]->guid;
    const uint16_t a_lid = host_ports[0]->lid, b_lid = host_ports[1]->lid;
    s.self = sm(a, a_lid, SmState::Master);
    s.master_lid = a_lid;
    s.other_sms = {sm(b, b_lid, SmState::Standby)};
    std::printf("\n%d-level radix 64, %d hosts: %zu nodes, %zu port LIDs\n", levels, hosts, s.fabric.size(), lids);

    const std::string bytes = wire::encode(s);
    Snapshot from_a;
    const Timing dec = time_it(std::max(3, repeat / 10), [&] { from_a = decode(bytes); });
    const Timing digest = time_it(repeat, [&] { (void)port_lids(s.fabric); });

    // B's snapshot after the failover: 1,000 host LIDs moved (swapped in pairs).
    Snapshot sb = s;
    sb.self = sm(b, b_lid, SmState::Master);
    sb.master_lid = b_lid;
    sb.other_sms = {sm(a, a_lid, SmState::Standby)};
    std::vector<Port*> movable;
    for (NodeId id = 0; id < static_cast<NodeId>(sb.fabric.size()) && movable.size() < 1000; ++id) {
        Node& n = sb.fabric.node(id);
        if (n.type == NodeType::Switch) continue;
        for (Port& p : n.ports)
            if (p.valid && p.lid && p.guid != a && p.guid != b && movable.size() < 1000) movable.push_back(&p);
    }
    for (size_t i = 0; i + 1 < movable.size(); i += 2) std::swap(movable[i]->lid, movable[i + 1]->lid);
    const Snapshot from_b = decode(wire::encode(sb));

    ha::HaConfig cfg;
    cfg.mode = ha::Mode::monitor;
    cfg.local_sm = b;
    int64_t now = 1000;
    // An engine that knows A (master), B (this node's standby) and two SMs of another subnet.
    auto engine = [&] {
        auto e = std::make_unique<ha::HaEngine>(cfg);
        e->on_plugin(sm(a, a_lid, SmState::Master), false, now);
        e->on_plugin(sm(b, 0, SmState::Standby), true, now);  // a STANDBY's plugin says LID 0
        e->on_plugin(sm(0xabc0000000000001ULL, 0, SmState::Standby), false, now);
        e->on_plugin(sm(0xabc0000000000002ULL, 0, SmState::Standby), false, now);
        e->tick(now);
        return e;
    };
    auto e = engine();
    const Timing snap = time_it(repeat, [&] { e->on_snapshot(from_a, ++now); });

    // The failover, on a fresh engine each time: A's sweep, A steps down, B says MASTER; the tick
    // that sees it, then B's first snapshot.
    std::vector<double> ticks, firsts;
    size_t changes = 0;
    bool b_master = true;
    for (int i = 0; i < std::max(3, repeat / 4); ++i) {
        e = engine();
        e->on_snapshot(from_a, ++now);
        now += 100;
        e->on_plugin(sm(a, a_lid, SmState::Standby), false, now);
        e->on_plugin(sm(b, b_lid, SmState::Master), true, now);
        ticks.push_back(time_it(1, [&] { e->tick(now); }).best);
        firsts.push_back(time_it(1, [&] { e->on_snapshot(from_b, ++now); }).best);
        changes = e->lid_changes().size();
        b_master = b_master && e->master() == b;
    }
    std::sort(ticks.begin(), ticks.end());
    std::sort(firsts.begin(), firsts.end());
    const Timing tick{ticks.front(), ticks[ticks.size() / 2]}, first{firsts.front(), firsts[firsts.size() / 2]};
    const Timing again = time_it(repeat, [&] { e->on_snapshot(from_b, ++now); });

    auto us = [](double ms) { return ms * 1000; };
    std::printf("  decode (decode thread)          best %9.1f us  median %9.1f us\n", us(dec.best), us(dec.median));
    std::printf("    of which port_lids            best %9.1f us  median %9.1f us  (%zu entries)\n", us(digest.best),
                us(digest.median), from_a.port_lids ? from_a.port_lids->entries.size() : size_t(0));
    std::printf("  on_snapshot, master sweep (io)  best %9.1f us  median %9.1f us  (%d runs)\n", us(snap.best),
                us(snap.median), repeat);
    std::printf("  failover: tick (io)             best %9.1f us  median %9.1f us\n", us(tick.best), us(tick.median));
    std::printf("  failover: first snapshot (io)   best %9.1f us  median %9.1f us  (%zu LID changes; master %s)\n",
                us(first.best), us(first.median), changes, b_master ? "B" : "NOT B");
    std::printf("  on_snapshot after it (io)       best %9.1f us  median %9.1f us\n", us(again.best), us(again.median));
}

}  // namespace

int main(int argc, char** argv) {
    int hosts = 0, repeat = 20;
    if (!bench::hosts_and_repeat(argc, argv, "bench_ha", hosts, repeat)) return 2;
    if (hosts) {
        run(hosts <= 2048 ? 2 : 3, hosts, repeat);
    } else {
        run(2, 2048, repeat);
        run(3, 44500, repeat);
    }
    return 0;
}
