// The port states digest (model/port_states.h) that lets ControllerState::on_snapshot apply a
// master sweep in O(changes) on the io thread: the flap detector and the port counter state come
// out the same whether they are given the decoder's port states or walk the fabric, over a long
// random run of cables unplugged and moved, ports Down, nodes gone and back, renames and traps;
// and every snapshot wire::Decoder returns carries them, with the changes from the last one.
#include <gtest/gtest.h>

#include <random>
#include <variant>

#include "ibf/controller_state.h"
#include "ibf/daemon_fixture.h"
#include "ibf/flap_detector.h"
#include "ibf/port_counters.h"
#include "ibf/port_states.h"
#include "ibf/wire.h"

using namespace ibf;
using namespace ibf::test;

namespace {

constexpr int64_t T0 = 1764468000000;
constexpr int64_t S = 1000;

bool same(const std::vector<Flapping>& a, const std::vector<Flapping>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        const Flapping &x = a[i], &y = b[i];
        if (x.a.guid != y.a.guid || x.a.port != y.a.port || x.a.name != y.a.name || x.b.guid != y.b.guid ||
            x.b.port != y.b.port || x.b.name != y.b.name || x.count != y.count || x.first_ms != y.first_ms ||
            x.last_ms != y.last_ms)
            return false;
    }
    return true;
}

// The next fabric of a random run: mostly small changes to `cur`, sometimes all back to `up`.
Fabric mutate(const Fabric& up, const Fabric& cur, std::mt19937& rng) {
    std::uniform_int_distribution<int> pick(0, 99);
    const int what = pick(rng);
    if (what < 8) return up;                       // everything back (vanished nodes appear again)
    if (what < 14) return cur;                     // a steady sweep
    Fabric f = cur;
    auto node = [&] { return static_cast<NodeId>(std::uniform_int_distribution<size_t>(0, f.size() - 1)(rng)); };
    auto port_of = [&](NodeId n) { return std::uniform_int_distribution<int>(1, std::max(1, f.node(n).num_ports()))(rng); };
    const int changes = 1 + pick(rng) % 3;
    for (int i = 0; i < changes; ++i) {
        const int k = pick(rng);
        const NodeId n = node();
        const int p = port_of(n);
        if (!f.node(n).port(p)) continue;
        if (k < 30) {
            f.disconnect(n, p);                                        // unplugged
        } else if (k < 50) {
            f.node(n).ports[p].state = PortState::Down;                // Down, cable still there
        } else if (k < 65) {
            f.node(n).ports[p].state = PortState::Active;
        } else if (k < 85) {
            const NodeId m = node();                                   // (re)cabled elsewhere
            const int q = port_of(m);
            if (m != n && f.node(m).port(q)) f.connect(n, p, m, q);
        } else if (k < 93) {
            if (f.size() > 4) f = without_node(f, n);                  // gone (its ports vanish)
        } else {
            f.node(n).name += "x";                                     // renamed
        }
    }
    return f;
}

}  // namespace

TEST(PortStates, EntriesAreEveryPortSortedAndFindable) {
    const Fabric f = small_fabric();
    const PortStates d = port_states(f);
    size_t ports = 0;
    for (const Node& n : f.nodes())
        for (int p = 0; p <= n.num_ports(); ++p)
            if (n.port(p)) {
                ++ports;
                const PortStates::Entry* e = d.find(n.guid, p);
                ASSERT_NE(e, nullptr);
                const Port& port = *n.port(p);
                const bool up = p > 0 && port.linked() && port.state != PortState::Down;
                EXPECT_EQ(e->up, up);
                if (up) {
                    EXPECT_EQ(e->peer, f.node(port.peer).guid);
                }
            }
    EXPECT_EQ(d.entries.size(), ports);
    EXPECT_TRUE(std::is_sorted(d.entries.begin(), d.entries.end(), [](const auto& a, const auto& b) {
        return std::pair(a.guid, a.port) < std::pair(b.guid, b.port);
    }));
    EXPECT_TRUE(d.unique);
    EXPECT_FALSE(d.has_changes_from_base);
    EXPECT_EQ(d.find(0x1234, 1), nullptr);
}

TEST(PortStates, ChangesFromTheBaseNameWhatChangedInNodeOrderThenTheVanished) {
    const Fabric up = small_fabric();
    const NodeId leaf = synth_node(up, "leaf0001");
    Fabric down = up;
    remove_cable(down, leaf, 5);
    auto a = std::make_shared<const PortStates>(port_states(up));
    auto b = std::make_shared<const PortStates>(port_states(down, a));
    ASSERT_TRUE(b->diff_from(a));
    EXPECT_FALSE(b->diff_from(std::make_shared<const PortStates>(port_states(up))));  // another digest, same content
    EXPECT_TRUE(b->same_names);
    ASSERT_EQ(b->changes.size(), 2u);  // both ends of the cable
    EXPECT_EQ(b->changes[0].kind, PortStates::Change::Kind::state);
    EXPECT_EQ(b->entries[b->changes[0].entry].guid, up.node(leaf).guid);
    EXPECT_EQ(b->entries[b->changes[0].entry].port, 5);
    // A steady sweep: no changes.
    auto c = std::make_shared<const PortStates>(port_states(down, b));
    EXPECT_TRUE(c->diff_from(b));
    EXPECT_TRUE(c->changes.empty());
    // A host gone: its port vanishes (listed last, by the base's entry), its leaf port goes down.
    const NodeId host = synth_node(up, "node00001");
    auto g = std::make_shared<const PortStates>(port_states(without_node(down, host), c));
    ASSERT_FALSE(g->changes.empty());
    EXPECT_EQ(g->changes.back().kind, PortStates::Change::Kind::vanished);
    EXPECT_EQ(c->entries[g->changes.back().entry].guid, up.node(host).guid);
}

TEST(PortStates, FlapDetectorCountsTheSameFromChangesAsFromTheFabric) {
    const Fabric up = small_fabric();
    for (unsigned seed : {1u, 2u, 3u, 4u}) {
        std::mt19937 rng(seed);
        const FlapOptions o{.threshold = 2, .window_ms = 60 * S, .quiet_ms = 120 * S};
        FlapDetector walked(o), changes(o);
        std::shared_ptr<const PortStates> last;
        Fabric cur = up;
        int64_t t = T0;
        for (int sweep = 0; sweep < 400; ++sweep) {
            // Traps 128 from a random switch LID, and sweep starts, between some sweeps.
            if (rng() % 4 == 0) {
                const auto lid = static_cast<uint16_t>(1 + rng() % 8);
                walked.on_trap(128, lid, t);
                changes.on_trap(128, lid, t);
            }
            if (rng() % 3 == 0) {
                walked.on_sweep_start(t);
                changes.on_sweep_start(t);
            }
            cur = mutate(up, cur, rng);
            // Now and then a sweep of another SM's connection: states without the right base.
            auto states = std::make_shared<const PortStates>(port_states(cur, rng() % 10 == 0 ? nullptr : last));
            last = states;
            t += S;
            walked.on_sweep(cur, t);
            changes.on_sweep(cur, states, t);
            ASSERT_TRUE(same(walked.flapping(t), changes.flapping(t))) << "seed " << seed << " sweep " << sweep;
            ASSERT_EQ(walked.flaps_total(), changes.flaps_total()) << "seed " << seed << " sweep " << sweep;
            ASSERT_EQ(walked.trap_flaps_total(), changes.trap_flaps_total()) << "seed " << seed << " sweep " << sweep;
        }
        EXPECT_GT(walked.flaps_total(), 10u) << "the run must flap";
        EXPECT_GT(walked.trap_flaps_total(), 0u) << "and have traps without a visible change";
        EXPECT_GT(changes.sweeps_from_changes(), 200u) << "most sweeps apply only the changes";
        EXPECT_EQ(walked.sweeps_from_changes(), 0u);
    }
}

TEST(PortStates, CounterPortsAreMarkedTheSameFromChangesAsFromTheFabric) {
    const Fabric up = small_fabric();
    std::mt19937 rng(7);
    PortErrorOptions o;
    o.window_ms = 20 * S;
    PortCounterTracker walked(o), changes(o);
    std::shared_ptr<const PortStates> last;
    Fabric cur = up;
    int64_t t = T0;
    size_t forgotten = 0;
    for (int sweep = 0; sweep < 300; ++sweep) {
        // Rows for some ports of the full fabric (some not in the current one) between sweeps.
        for (int r = 0; r < 3; ++r) {
            const Node& n = up.node(static_cast<NodeId>(rng() % up.size()));
            wire::PortCounterRow row{n.guid, static_cast<uint8_t>(rng() % (n.num_ports() + 1)), {}};
            row.v[0] = rng() % 3;
            walked.on_row(kMasterGuid, row, t);
            changes.on_row(kMasterGuid, row, t);
            ASSERT_EQ(walked.forget_absent(t), changes.forget_absent(t));
        }
        cur = mutate(up, cur, rng);
        auto states = std::make_shared<const PortStates>(port_states(cur, rng() % 10 == 0 ? nullptr : last));
        last = states;
        t += S;
        walked.mark_present(
            [&cur](Guid g, int port) {
                const auto id = cur.find(g);
                return id && cur.node(*id).port(port) != nullptr;
            },
            t);
        changes.mark_present(states, t);
        const size_t n = walked.forget_absent(t);
        ASSERT_EQ(n, changes.forget_absent(t)) << "sweep " << sweep;
        forgotten += n;
        ASSERT_EQ(walked.port_count(), changes.port_count()) << "sweep " << sweep;
        size_t missing = 0, differ = 0;
        walked.for_each_port([&](const PortCounterTracker::PortKey& k, const PortCounterState& s) {
            const PortCounterState* c = changes.find(k.first, k.second);
            if (!c)
                ++missing;
            else if (s.absent_since_ms != c->absent_since_ms)
                ++differ;
        });
        ASSERT_EQ(missing, 0u) << "sweep " << sweep;
        ASSERT_EQ(differ, 0u) << "sweep " << sweep;
    }
    EXPECT_GT(forgotten, 0u) << "the run must drop ports that left";
}

TEST(PortStates, ControllerStateGivesTheSameFlapsWithAndWithoutTheDecodersDigest) {
    const Fabric up = small_fabric();
    Fabric down = up;
    remove_cable(down, synth_node(down, "leaf0001"), 5);
    ControllerState with, without;
    for (ControllerState* st : {&with, &without}) {
        st->on_connect(1, "unix", T0);
        st->on_hello(1, hello(kMasterGuid, SmState::Master), T0);
    }
    wire::Decoder dec;
    int64_t t = T0;
    for (int i = 0; i < 8; ++i) {
        const Snapshot s = snapshot(i % 2 ? down : up, kMasterGuid, SmState::Master, static_cast<uint64_t>(i + 1));
        const std::string bytes = wire::encode(hello(kMasterGuid, SmState::Master));
        if (i == 0) dec.feed(bytes.data(), bytes.size()), (void)dec.next();
        const std::string sb = wire::encode(s);
        dec.feed(sb.data(), sb.size());
        auto m = dec.next();
        ASSERT_TRUE(m && std::holds_alternative<Snapshot>(*m));
        Snapshot decoded = std::get<Snapshot>(std::move(*m));
        ASSERT_TRUE(decoded.port_states) << "the decoder gives every snapshot its port states";
        EXPECT_EQ(decoded.port_states->entries, port_states(decoded.fabric).entries);
        EXPECT_EQ(decoded.port_states->has_changes_from_base, i > 0) << "changes from this connection's last one";
        Snapshot plain = decoded;
        plain.port_states.reset();
        t += S;
        ASSERT_TRUE(with.on_snapshot(1, std::move(decoded), t));
        ASSERT_TRUE(without.on_snapshot(1, std::move(plain), t));
        ASSERT_TRUE(same(with.flaps().flapping(t), without.flaps().flapping(t)));
        ASSERT_EQ(with.flaps().flaps_total(), without.flaps().flaps_total());
    }
    EXPECT_EQ(with.flaps().flaps_total(), 3u);
    EXPECT_EQ(with.flaps().sweeps_from_changes(), 7u);
    EXPECT_EQ(without.flaps().sweeps_from_changes(), 0u);
}
