// FlapDetector: sweeps and traps 128 fed with explicit times -> exact flap counts and episodes.
#include <gtest/gtest.h>

#include "ibf/daemon_fixture.h"
#include "ibf/flap_detector.h"

using namespace ibf;
using namespace ibf::test;

namespace {

constexpr int64_t T0 = 1764468000000;  // 2025-11-30T02:00:00Z
constexpr int64_t S = 1000;

struct Fabrics {
    Fabric up = small_fabric();
    Fabric down = up;       // leaf0001/5 -- spine0001/1 unplugged
    Fabric host_gone;       // node00001 (on leaf0001/1) vanished
    Fabric moved = up;      // leaf0001/5's cable moved from spine0001/2 to spine0001/... (far end moved)
    NodeId leaf = synth_node(up, "leaf0001");
    Fabrics() {
        remove_cable(down, synth_node(down, "leaf0001"), 5);
        host_gone = without_node(up, synth_node(up, "node00001"));
    }
    Guid guid(const std::string& name) const { return up.node(synth_node(up, name)).guid; }
    uint16_t lid(const std::string& name) const { return up.node(synth_node(up, name)).lid; }
};

// up, then `cycles` times down/up, one sweep per second from T0.
int64_t cycle(FlapDetector& d, const Fabrics& f, int cycles, int64_t t) {
    for (int i = 0; i < cycles; ++i) {
        d.on_sweep(f.down, t += S);
        d.on_sweep(f.up, t += S);
    }
    return t;
}

}  // namespace

TEST(FlapDetector, ThreeDownUpCyclesAreOneFlappingLinkRaisedAtTheThirdSweepUp) {
    Fabrics f;
    FlapDetector d({.threshold = 3, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    d.on_sweep(f.up, T0);
    int64_t t = cycle(d, f, 2, T0);
    EXPECT_EQ(d.flaps_total(), 2u);
    EXPECT_TRUE(d.flapping(t).empty());
    d.on_sweep(f.down, t += S);
    EXPECT_TRUE(d.flapping(t).empty());  // down, not back yet: a missing link, not yet a third flap
    d.on_sweep(f.up, t += S);
    const auto fl = d.flapping(t);
    ASSERT_EQ(fl.size(), 1u);
    EXPECT_EQ(d.flaps_total(), 3u);
    EXPECT_EQ(d.trap_flaps_total(), 0u);
    EXPECT_EQ(fl[0].count, 3);
    EXPECT_EQ(fl[0].first_ms, T0 + 2 * S);
    EXPECT_EQ(fl[0].last_ms, T0 + 6 * S);
    // Both ends, ordered by (GUID, port): leaves (tier 1) have lower GUIDs than spines.
    EXPECT_EQ(fl[0].a.guid, f.guid("leaf0001"));
    EXPECT_EQ(fl[0].a.port, 5);
    EXPECT_EQ(fl[0].a.name, "leaf0001");
    EXPECT_EQ(fl[0].b.guid, f.guid("spine0001"));
    EXPECT_EQ(fl[0].b.port, 1);
    EXPECT_EQ(fl[0].b.name, "spine0001");
}

TEST(FlapDetector, ClearsAfterTheQuietWindowAndALaterFlapStartsANewEpisode) {
    Fabrics f;
    FlapDetector d({.threshold = 3, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    d.on_sweep(f.up, T0);
    const int64_t last = cycle(d, f, 3, T0);
    EXPECT_EQ(d.flapping(last + 1800 * S - 1).size(), 1u);
    EXPECT_TRUE(d.flapping(last + 1800 * S).empty());
    // One more flap after the quiet window: a new episode of 1, below the threshold.
    const int64_t t = cycle(d, f, 1, last + 1800 * S);
    EXPECT_TRUE(d.flapping(t).empty());
    EXPECT_EQ(d.flaps_total(), 4u);
    // Two more within the window: flapping again, counted from the new episode's first flap.
    const int64_t t2 = cycle(d, f, 2, t);
    const auto fl = d.flapping(t2);
    ASSERT_EQ(fl.size(), 1u);
    EXPECT_EQ(fl[0].count, 3);
    EXPECT_EQ(fl[0].first_ms, last + 1800 * S + 2 * S);
}

TEST(FlapDetector, FlapsFurtherApartThanTheWindowDoNotRaise) {
    Fabrics f;
    FlapDetector d({.threshold = 3, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    d.on_sweep(f.up, T0);
    int64_t t = T0;
    for (int i = 0; i < 3; ++i) t = cycle(d, f, 1, t + 400 * S);  // flaps at +402, +804, +1206 s
    EXPECT_EQ(d.flaps_total(), 3u);
    EXPECT_TRUE(d.flapping(t).empty());  // never three within 600 s
    t = cycle(d, f, 1, t + 100 * S);     // +1308 s: +804, +1206 and +1308 are within 600 s
    const auto fl = d.flapping(t);
    ASSERT_EQ(fl.size(), 1u);
    EXPECT_EQ(fl[0].count, 4);  // the episode never went quiet for 1800 s: it counts from +402 s
    EXPECT_EQ(fl[0].first_ms, T0 + 402 * S);
}

TEST(FlapDetector, ALinkThatStaysDownOrAMovedCableIsNotAFlap) {
    Fabrics f;
    FlapDetector d({.threshold = 2, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    d.on_sweep(f.up, T0);
    d.on_sweep(f.down, T0 + S);
    d.on_sweep(f.down, T0 + 2 * S);
    EXPECT_EQ(d.flaps_total(), 0u);
    // The far end comes back on another spine port: a move, not a flap.
    Fabric moved = f.up;
    move_far_end(moved, synth_node(moved, "leaf0001"), 5, 8);  // spine0001 port 8 is free (2 leaves)
    d.on_sweep(moved, T0 + 3 * S);
    d.on_sweep(f.down, T0 + 4 * S);
    d.on_sweep(moved, T0 + 5 * S);
    EXPECT_EQ(d.flaps_total(), 1u);  // moved -> down -> moved again is one flap of the new link
    EXPECT_TRUE(d.flapping(T0 + 5 * S).empty());
}

TEST(FlapDetector, AHostThatVanishesAndComesBackFlapsItsLinkOncePerCycle) {
    Fabrics f;
    FlapDetector d({.threshold = 3, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    d.on_sweep(f.up, T0);
    int64_t t = T0;
    for (int i = 0; i < 3; ++i) {
        d.on_sweep(f.host_gone, t += S);
        d.on_sweep(f.up, t += S);
    }
    const auto fl = d.flapping(t);
    ASSERT_EQ(fl.size(), 1u);
    EXPECT_EQ(fl[0].count, 3);
    EXPECT_EQ(d.flaps_total(), 3u);
    const Guid leaf = f.guid("leaf0001"), host = f.guid("node00001");
    EXPECT_EQ(fl[0].a.guid, std::min(leaf, host));
    EXPECT_EQ(fl[0].b.guid, std::max(leaf, host));
}

TEST(FlapDetector, Trap128WithNoChangeInTheNextSweepIsAFlapOfTheSwitchWithPortUnknown) {
    Fabrics f;
    FlapDetector d({.threshold = 3, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    const uint16_t lid = f.lid("leaf0002");
    d.on_trap(128, lid, T0);  // before the first sweep: no LID map, ignored
    d.on_sweep(f.up, T0);
    int64_t t = T0;
    for (int i = 0; i < 3; ++i) {
        d.on_trap(128, lid, t += S);
        d.on_trap(128, lid, t);        // down and up: two traps, one flap
        d.on_trap(64, lid, t);         // other traps are ignored
        d.on_sweep_start(t);
        d.on_sweep(f.up, t += S);      // nothing changed on leaf0002
    }
    EXPECT_EQ(d.flaps_total(), 3u);
    EXPECT_EQ(d.trap_flaps_total(), 3u);
    const auto fl = d.flapping(t);
    ASSERT_EQ(fl.size(), 1u);
    EXPECT_EQ(fl[0].a.guid, f.guid("leaf0002"));
    EXPECT_EQ(fl[0].a.port, 0);
    EXPECT_EQ(fl[0].a.name, "leaf0002");
    EXPECT_EQ(fl[0].b.guid, 0u);
    EXPECT_EQ(fl[0].count, 3);
}

TEST(FlapDetector, TrapsExplainedByTheSweepOrNotYetSweptAreNotExtraFlaps) {
    Fabrics f;
    FlapDetector d({.threshold = 2, .window_ms = 600 * S, .quiet_ms = 1800 * S});
    d.on_sweep(f.up, T0);
    const uint16_t lid = f.lid("leaf0001");
    d.on_trap(128, lid, T0 + S);
    d.on_sweep_start(T0 + S);
    d.on_sweep(f.down, T0 + 2 * S);  // the trap's sweep shows leaf0001/5 down: explained
    d.on_trap(128, lid, T0 + 3 * S);
    d.on_sweep(f.down, T0 + 3 * S);  // a sweep that started before the trap: the trap waits
    d.on_sweep_start(T0 + 4 * S);
    d.on_sweep(f.up, T0 + 5 * S);    // the trap's sweep shows the link back: explained
    EXPECT_EQ(d.flaps_total(), 1u);
    EXPECT_EQ(d.trap_flaps_total(), 0u);
}
