// The port LIDs digest (model/port_lids.h) the HA engine reads a snapshot through, so that its io
// thread never walks the fabric (docs/threading.md): it must say exactly what the engine's walk
// over every port said before it (subnet grouping, the LID a view learns, lid_changes()), whether
// the decode thread made it (wire::Decoder) or the engine did (a snapshot built by hand).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <variant>

#include "ha_events.h"
#include "ibf/ha_engine.h"
#include "ibf/port_lids.h"
#include "ibf/synth.h"
#include "ibf/wire.h"

namespace ibf::ha {
namespace {
using namespace ibf::ha::test;

// --- The engine's walk before the digest (ha/src/engine.cpp, HaEngine::on_snapshot), the reference. ---

// The `lids` map it built: port GUID -> LID, switches only port 0, the last port of a GUID winning.
std::map<Guid, uint16_t> former_lids(const Fabric& f) {
    std::map<Guid, uint16_t> lids;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || p.guid == 0) continue;
            if (p.lid && (n.type != NodeType::Switch || p.num == 0)) lids[p.guid] = p.lid;
        }
    return lids;
}

// Whether a known SM with this port GUID was united with the snapshot's SM, and the LID a view
// without one took (the first port of the GUID with a LID).
struct FormerMatch {
    bool member = false;
    uint16_t learnt = 0;
};
FormerMatch former_match(const Fabric& f, Guid g) {
    FormerMatch m;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || p.guid != g || g == 0) continue;
            m.member = true;
            if (!m.learnt && p.lid) m.learnt = p.lid;
        }
    return m;
}

std::vector<PortLidMove> former_changes(const std::map<Guid, uint16_t>& before, const std::map<Guid, uint16_t>& after) {
    std::vector<PortLidMove> out;
    for (const auto& [g, lid] : before) {
        auto it = after.find(g);
        if (it != after.end() && it->second != lid) out.push_back({g, lid, it->second});
    }
    return out;
}

void expect_like_former_walk(const Fabric& f) {
    const PortLids d = port_lids(f);
    std::set<Guid> guids;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) guids.insert(p.guid);
    guids.insert(0xdeadbeef);  // in no fabric
    for (size_t i = 1; i < d.entries.size(); ++i) EXPECT_LT(d.entries[i - 1].guid, d.entries[i].guid);
    const auto lids = former_lids(f);
    for (Guid g : guids) {
        const FormerMatch m = former_match(f, g);
        const PortLids::Entry* e = d.find(g);
        ASSERT_EQ(e != nullptr, m.member) << guid_hex(g);
        if (!e) continue;
        EXPECT_EQ(e->first_lid, m.learnt) << guid_hex(g);
        auto it = lids.find(g);
        EXPECT_EQ(e->lid, it == lids.end() ? 0 : it->second) << guid_hex(g);
    }
    size_t with_lid = 0;
    for (const auto& e : d.entries) with_lid += e.lid != 0;
    EXPECT_EQ(with_lid, lids.size());
}

// A switch with a LID on port 0 and (wrongly) on port 3, a CA with a LID on one port and none on
// the other, a GUID on two CAs (a duplicated GUID: the last port's LID, the first learnt), a port
// with GUID 0 and one that is not valid.
Fabric odd_fabric() {
    Fabric f;
    const NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x10, .description = "MF0;sw:SX6036/U1"}, 4);
    for (Port& p : f.node(sw).ports) p.guid = 0x10;
    f.node(sw).ports[0].lid = 5;
    f.node(sw).ports[3].lid = 6;
    const NodeId ca = f.add_node({.type = NodeType::CA, .guid = 0x20, .description = "h1 HCA-1"}, 2);
    f.node(ca).ports[1].guid = 0x21;
    f.node(ca).ports[1].lid = 7;
    f.node(ca).ports[2].guid = 0x22;  // down: no LID
    const NodeId d1 = f.add_node({.type = NodeType::CA, .guid = 0x30, .description = "h2 HCA-1"}, 1);
    f.node(d1).ports[1].guid = 0x99;
    f.node(d1).ports[1].lid = 8;
    const NodeId z = f.add_node({.type = NodeType::CA, .guid = 0x40, .description = "h3 HCA-1"}, 2);
    f.node(z).ports[1].lid = 9;  // GUID 0
    f.node(z).ports[2].guid = 0x42;
    f.node(z).ports[2].lid = 10;
    f.node(z).ports[2].valid = false;
    const NodeId d2 = f.add_node({.type = NodeType::CA, .guid = 0x50, .description = "h4 HCA-1"}, 1);
    f.node(d2).ports[1].guid = 0x99;
    f.node(d2).ports[1].lid = 11;
    const NodeId d3 = f.add_node({.type = NodeType::CA, .guid = 0x60, .description = "h5 HCA-1"}, 1);
    f.node(d3).ports[1].guid = 0x99;  // the third port of 0x99: no LID, the last with one stays
    f.finalize();
    return f;
}

TEST(PortLids, SayWhatTheEnginesWalkOverEveryPortSaid) {
    expect_like_former_walk(odd_fabric());
    expect_like_former_walk(synth_fat_tree({.levels = 2, .radix = 8}));
    expect_like_former_walk(Fabric{});
    const PortLids d = port_lids(odd_fabric());
    ASSERT_NE(d.find(0x10), nullptr);
    EXPECT_EQ(*d.find(0x10), (PortLids::Entry{0x10, 5, 5}));
    EXPECT_EQ(*d.find(0x22), (PortLids::Entry{0x22, 0, 0}));
    EXPECT_EQ(*d.find(0x99), (PortLids::Entry{0x99, 11, 8}));
    EXPECT_EQ(d.find(0), nullptr);
    EXPECT_EQ(d.find(0x42), nullptr);
}

// Host LIDs swapped, a switch renumbered, a host gone, a new host, a port that lost its LID.
Fabric moved(Fabric f) {
    std::vector<Port*> hosts;
    for (NodeId id = 0; id < f.size(); ++id)
        if (f.node(id).type == NodeType::CA) hosts.push_back(&f.node(id).ports[1]);
    std::swap(hosts[0]->lid, hosts[1]->lid);
    std::swap(hosts[4]->lid, hosts[9]->lid);
    hosts[2]->guid = 0x0c42a103ffff0001;  // another HCA in that slot
    hosts[3]->lid = 0;
    for (NodeId id = 0; id < f.size(); ++id)
        if (f.node(id).type == NodeType::Switch) {
            f.node(id).ports[0].lid = 999;
            break;
        }
    return f;
}

TEST(PortLids, LidMovesAreTheComparisonOfTheFormerMaps) {
    const Fabric a = synth_fat_tree({.levels = 2, .radix = 8});
    const Fabric b = moved(a);
    const auto want = former_changes(former_lids(a), former_lids(b));
    EXPECT_EQ(want.size(), 5u);  // two swaps, the switch
    EXPECT_EQ(lid_moves(port_lids(a), port_lids(b)), want);
    EXPECT_EQ(lid_moves(port_lids(b), port_lids(a)), former_changes(former_lids(b), former_lids(a)));
    EXPECT_TRUE(lid_moves(port_lids(a), port_lids(a)).empty());
    EXPECT_TRUE(lid_moves(PortLids{}, port_lids(a)).empty());
    EXPECT_EQ(lid_moves(port_lids(odd_fabric()), port_lids(odd_fabric())), std::vector<PortLidMove>{});
}

// --- The engine: one failover, fed hand-built snapshots or the decoder's. ---

// SM A (master) and B (this node's standby) on the first two hosts' ports, C a standby on the
// third host's port whose plugin says LID 0, D an SM of another subnet.
struct Sms {
    Guid a = 0, b = 0, c = 0;
    uint16_t a_lid = 0, b_lid = 0, c_lid = 0;
    static constexpr Guid d = 0xabc0000000000001;
};
Sms sms_of(const Fabric& f) {
    Sms s;
    std::vector<const Port*> hosts;
    for (const Node& n : f.nodes())
        if (n.type == NodeType::CA) hosts.push_back(&n.ports[1]);
    s.a = hosts[5]->guid, s.b = hosts[6]->guid, s.c = hosts[7]->guid;
    s.a_lid = hosts[5]->lid, s.b_lid = hosts[6]->lid, s.c_lid = hosts[7]->lid;
    return s;
}

Snapshot master_snapshot(const Fabric& f, Guid self, uint16_t lid, Guid other, uint16_t other_lid) {
    Snapshot s;
    s.osm_version = "OpenSM 3.3.23";
    s.self = sm(self, lid, 15, SmState::Master);
    s.master_lid = lid;
    s.other_sms = {sm(other, other_lid, 14, SmState::Standby)};
    s.fabric = f;
    return s;
}

// What the engine concluded, for comparing two engines.
struct Outcome {
    std::map<Guid, uint16_t> sm_lids;
    std::map<Guid, int> groups;
    std::vector<std::tuple<Guid, uint16_t, uint16_t, int64_t>> changes;
    std::optional<Guid> master;
    friend bool operator==(const Outcome&, const Outcome&) = default;
};

// The failover: A's sweep, A steps down and B becomes master, B's first sweep (LIDs moved).
// `feed` turns each snapshot into what the engine is given.
template <class Feed>
Outcome failover(const Fabric& fa, const Fabric& fb, Feed feed) {
    const Sms s = sms_of(fa);
    HaConfig cfg;
    cfg.mode = Mode::monitor;
    cfg.local_sm = s.b;
    HaEngine e(cfg);
    e.on_plugin(sm(s.a, s.a_lid, 15, SmState::Master), false, 100);
    e.on_plugin(sm(s.b, 0, 14, SmState::Standby), true, 100);  // a STANDBY's plugin: LID 0
    e.on_plugin(sm(Sms::d, 0, 14, SmState::Standby), false, 100);
    e.tick(100);
    e.on_snapshot(feed(master_snapshot(fa, s.a, s.a_lid, s.b, 0)), 200);
    e.on_plugin(sm(s.c, 0, 13, SmState::Standby), false, 250);  // after the sweep: LID from it
    e.on_plugin(sm(s.a, s.a_lid, 15, SmState::Standby), false, 300);
    e.on_plugin(sm(s.b, s.b_lid, 14, SmState::Master), true, 300);
    e.tick(300);
    EXPECT_TRUE(e.lid_changes().empty());
    e.on_snapshot(feed(master_snapshot(fb, s.b, s.b_lid, s.a, s.a_lid)), 400);
    Outcome o;
    for (const auto& [g, v] : e.sms()) {
        o.sm_lids[g] = v.info.lid;
        o.groups[g] = e.group_of(g);
    }
    for (const auto& c : e.lid_changes()) o.changes.emplace_back(c.port_guid, c.before, c.after, c.seen_ms);
    o.master = e.master();
    return o;
}

Snapshot by_hand(Snapshot s) { return s; }  // no port LIDs: the engine makes them

TEST(HaEngine, ALidChangeAcrossAFailoverIsReportedAsTheFormerWalkDid) {
    const Fabric fa = synth_fat_tree({.levels = 2, .radix = 8});
    const Fabric fb = moved(fa);
    const Sms s = sms_of(fa);
    const Outcome o = failover(fa, fb, by_hand);
    ASSERT_EQ(o.master, s.b);
    std::vector<std::tuple<Guid, uint16_t, uint16_t, int64_t>> want;
    for (const PortLidMove& m : former_changes(former_lids(fa), former_lids(fb)))
        want.emplace_back(m.guid, m.before, m.after, 400);
    ASSERT_EQ(want.size(), 5u);
    EXPECT_EQ(o.changes, want);
    // The SMs: B's view took its port's LID from A's sweep, C's plugin (LID 0) after it from the
    // same sweep; A, B and C are one subnet, D (in neither fabric) is not.
    EXPECT_EQ(o.sm_lids.at(s.b), s.b_lid);
    EXPECT_EQ(o.sm_lids.at(s.c), s.c_lid);
    EXPECT_EQ(o.sm_lids.at(Sms::d), 0);
    EXPECT_EQ(o.groups.at(s.a), o.groups.at(s.b));
    EXPECT_EQ(o.groups.at(s.a), o.groups.at(s.c));
    EXPECT_NE(o.groups.at(s.a), o.groups.at(Sms::d));
}

TEST(HaEngine, AViewWithoutALidTakesItsPortsLidFromThePortLids) {
    const Fabric f = odd_fabric();
    HaEngine e(HaConfig{});
    e.on_plugin(sm(0x21, 0, 14, SmState::Standby), false, 10);  // CA port, LID 7
    e.on_plugin(sm(0x22, 0, 14, SmState::Standby), false, 10);  // in the fabric, no LID
    e.on_plugin(sm(0x99, 0, 14, SmState::Standby), false, 10);  // duplicated GUID: the first LID
    e.on_plugin(sm(0x10, 3, 14, SmState::Standby), false, 10);  // has a LID: kept
    e.on_plugin(sm(0x77, 0, 14, SmState::Standby), false, 10);  // not in the fabric
    Snapshot s;
    s.self = sm(0x1, 1, 15, SmState::Master);
    s.fabric = f;
    s.port_lids = std::make_shared<const PortLids>(port_lids(f));
    e.on_snapshot(s, 20);
    EXPECT_EQ(e.sms().at(0x21).info.lid, 7);
    EXPECT_EQ(e.sms().at(0x22).info.lid, 0);
    EXPECT_EQ(e.sms().at(0x99).info.lid, 8);
    EXPECT_EQ(e.sms().at(0x10).info.lid, 3);
    EXPECT_EQ(e.sms().at(0x77).info.lid, 0);
    for (Guid g : {Guid{0x21}, Guid{0x22}, Guid{0x99}, Guid{0x10}}) EXPECT_EQ(e.group_of(g), e.group_of(0x1)) << guid_hex(g);
    EXPECT_NE(e.group_of(0x77), e.group_of(0x1));
    // A plugin that says LID 0 after that master sweep takes its port's LID as guid2lid keys it
    // (0x99: the last port's), as the former map did.
    e.on_plugin(sm(0x99, 0, 14, SmState::Standby), false, 30);
    EXPECT_EQ(e.sms().at(0x99).info.lid, 8);  // already had one
    HaEngine fresh(HaConfig{});
    fresh.on_snapshot(s, 20);
    fresh.on_plugin(sm(0x99, 0, 14, SmState::Standby), false, 30);
    fresh.on_plugin(sm(0x22, 0, 14, SmState::Standby), false, 30);
    EXPECT_EQ(fresh.sms().at(0x99).info.lid, 11);
    EXPECT_EQ(fresh.sms().at(0x22).info.lid, 0);
    EXPECT_EQ(fresh.group_of(0x99), fresh.group_of(0x1));
    EXPECT_NE(fresh.group_of(0x22), fresh.group_of(0x1));  // no LID: not in the former map either
}

// The engine reads a snapshot's fabric only through its port LIDs when it has them (the io
// thread's share is a lookup per known SM): port LIDs that disagree with the fabric win.
TEST(HaEngine, ReadsTheSnapshotsPortLidsNotItsFabricWhenItHasThem) {
    HaEngine e(HaConfig{});
    e.on_plugin(sm(0x21, 0, 14, SmState::Standby), false, 10);
    Snapshot s;
    s.self = sm(0x1, 1, 15, SmState::Master);
    s.fabric = odd_fabric();  // 0x21 at LID 7
    s.port_lids = std::make_shared<const PortLids>(PortLids{{{0x21, 70, 70}}});
    e.on_snapshot(s, 20);
    EXPECT_EQ(e.sms().at(0x21).info.lid, 70);
}

// What ibfabricd's decode thread hands over: wire::Decoder's snapshot, version 1 and 2.
Snapshot decoded_v1(const Snapshot& s) {
    wire::Decoder d;
    const std::string bytes = wire::encode(s);
    d.feed(bytes.data(), bytes.size());
    auto m = d.next();
    EXPECT_TRUE(m && std::holds_alternative<Snapshot>(*m));
    return std::get<Snapshot>(std::move(*m));
}

Snapshot decoded_v2(const Snapshot& s) {
    wire::Decoder d;
    wire::Hello h{"OpenSM 3.3.23", "test", s.self, 4242};
    h.wire_version = 2;
    const std::string bytes = wire::encode(wire::Message(h)) + wire::encode_v2(s);
    d.feed(bytes.data(), bytes.size());
    EXPECT_TRUE(d.next().has_value());  // the Hello
    auto m = d.next();
    EXPECT_TRUE(m && std::holds_alternative<Snapshot>(*m));
    return std::get<Snapshot>(std::move(*m));
}

TEST(HaEngine, TheDecodersPortLidsGiveTheSameResultAsTheEngines) {
    const Fabric fa = synth_fat_tree({.levels = 2, .radix = 8});
    const Fabric fb = moved(fa);
    for (auto decode : {decoded_v1, decoded_v2}) {
        const Snapshot back = decode(master_snapshot(fa, 0x1, 1, 0x2, 2));
        ASSERT_TRUE(back.port_lids) << "the decoder gives every snapshot its port LIDs";
        EXPECT_EQ(*back.port_lids, port_lids(fa));
        int decoded = 0;
        const Outcome o = failover(fa, fb, [&](const Snapshot& s) {
            Snapshot d = decode(s);
            decoded += d.port_lids != nullptr;
            return d;
        });
        EXPECT_EQ(decoded, 2);
        const Outcome want = failover(fa, fb, by_hand);
        EXPECT_EQ(o, want);
        EXPECT_EQ(o.changes.size(), 5u);
    }
}

}  // namespace
}  // namespace ibf::ha
