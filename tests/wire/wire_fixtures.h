// Sample messages and comparison helpers shared by the wire and sm-plugin tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "ibf/wire.h"

namespace ibf::wire {

inline Port active_port(Width w, Speed s, uint16_t lid, Guid guid) {
    Port p;
    p.guid = guid;
    p.lid = lid;
    p.state = PortState::Active;
    p.phys = PhysState::LinkUp;
    p.width_active = w;
    p.speed_active = s;
    p.width_enabled = 0x1F;
    p.width_supported = 0x1F;
    p.speed_enabled = speed_bit(Speed::SDR) | speed_bit(Speed::DDR) | speed_bit(Speed::QDR) | speed_bit(Speed::FDR10);
    p.speed_supported = p.speed_enabled | speed_bit(Speed::FDR) | speed_bit(Speed::EDR) | speed_bit(Speed::HDR);
    p.mtu_cap = 4096;
    p.mtu_active = 2048;
    return p;
}

// Copies the measured fields into an existing (valid, numbered) port.
inline void set_port(Port& dst, const Port& src) {
    uint8_t num = dst.num;
    dst = src;
    dst.num = num;
    dst.valid = true;
}

// One switch (8 ports, port 7 not valid) and three CAs; 3 links.
inline Snapshot sample_snapshot() {
    Snapshot s;
    s.osm_version = "OpenSM 3.3.23";
    s.self = {0x100001, 5, 7, SmState::Master, 12345};
    s.master_lid = 5;
    s.sweep_seq = 42;
    s.taken_unix_ms = 1764460800123;
    s.initialization_error = true;
    s.routing_engine = "ftree";
    s.routing_engine_configured = "ftree,minhop";
    s.other_sms = {{0x100002, 6, 3, SmState::Standby, 99}, {0x100003, 7, 0, SmState::NotActive, 0}};
    Fabric& f = s.fabric;
    NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x200000, .system_guid = 0x200000,
                            .description = "MF0;leaf01:SX6036/U1", .vendor_id = 0x2c9, .device_id = 0xc738, .lid = 1},
                           8);
    NodeId ca1 = f.add_node({.type = NodeType::CA, .guid = 0x100001, .description = "h1 HCA-1", .name = "custom-name",
                             .vendor_id = 0x2c9, .device_id = 0x1003, .lid = 5},
                            1);
    NodeId ca2 = f.add_node({.type = NodeType::CA, .guid = 0x100002, .description = "h2 mlx5_0", .lid = 6}, 2);
    NodeId ca3 = f.add_node({.type = NodeType::CA, .guid = 0x100003, .description = "h3 \"quoted\" \\ desc", .lid = 7}, 1);
    set_port(f.node(sw).ports[0], active_port(Width::X4, Speed::SDR, 1, 0x200000));
    set_port(f.node(sw).ports[1], active_port(Width::X4, Speed::FDR10, 0, 0x200000));
    set_port(f.node(sw).ports[2], active_port(Width::X1, Speed::DDR, 0, 0x200000));
    set_port(f.node(sw).ports[3], active_port(Width::X12, Speed::HDR, 0, 0x200000));
    f.node(sw).ports[4].state = PortState::Down;
    f.node(sw).ports[4].phys = PhysState::Polling;
    f.node(sw).ports[7].valid = false;
    set_port(f.node(ca1).ports[1], active_port(Width::X4, Speed::FDR10, 5, 0x100001));
    f.node(ca1).ports[1].lmc = 2;
    set_port(f.node(ca2).ports[1], active_port(Width::X1, Speed::DDR, 6, 0x100002 + 1));
    f.node(ca2).ports[2].phys = PhysState::Disabled;
    f.node(ca2).ports[2].state = PortState::Down;
    set_port(f.node(ca3).ports[1], active_port(Width::X12, Speed::HDR, 7, 0x100003 + 1));
    f.node(ca3).ports[1].speed_enabled = speed_bit(Speed::XDR) | speed_bit(Speed::NDR);
    f.node(ca3).ports[1].width_active = Width::X2;
    f.connect(sw, 1, ca1, 1);
    f.connect(ca2, 1, sw, 2);
    f.connect(sw, 3, ca3, 1);
    f.finalize();
    // LID 1 = the switch itself (port 0), 5..8 = h1 (LMC 2), 6 = h2, 7 = h3; the rest no path.
    s.lfts = {{0x200000, {kLftNoPath, 0, kLftNoPath, kLftNoPath, kLftNoPath, 1, 2, 3, 1}}};
    return s;
}

inline Hello sample_hello() { return {"OpenSM 3.3.23", "0.1.0", {0x100001, 5, 7, SmState::Discovering, 1}, 4242}; }
inline Event sample_event() { return {EventKind::Trap, 1764460800999, 128, 1, SmState::Master, "trap 128 from lid 1"}; }
inline Heartbeat sample_heartbeat() { return {{0x100001, 5, 7, SmState::Master, 77}, 42, 1764460801000}; }
inline Counters sample_counters() { return {1, 2, 3, 4, 5, 6, 7, 8, 9}; }

inline void expect_same_sm(const SmInfo& a, const SmInfo& b) {
    EXPECT_EQ(a.port_guid, b.port_guid);
    EXPECT_EQ(a.lid, b.lid);
    EXPECT_EQ(a.priority, b.priority);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.act_count, b.act_count);
}

inline void expect_same_port(const Port& a, const Port& b) {
    EXPECT_EQ(a.num, b.num);
    EXPECT_EQ(a.valid, b.valid);
    if (!a.valid) return;
    EXPECT_EQ(a.guid, b.guid);
    EXPECT_EQ(a.lid, b.lid);
    EXPECT_EQ(a.lmc, b.lmc);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.phys, b.phys);
    EXPECT_EQ(a.width_active, b.width_active);
    EXPECT_EQ(a.speed_active, b.speed_active);
    EXPECT_EQ(a.width_enabled, b.width_enabled);
    EXPECT_EQ(a.width_supported, b.width_supported);
    EXPECT_EQ(a.speed_enabled, b.speed_enabled);
    EXPECT_EQ(a.speed_supported, b.speed_supported);
    EXPECT_EQ(a.mtu_cap, b.mtu_cap);
    EXPECT_EQ(a.mtu_active, b.mtu_active);
    EXPECT_EQ(a.peer, b.peer);
    EXPECT_EQ(a.peer_port, b.peer_port);
}

inline void expect_same_snapshot(const Snapshot& a, const Snapshot& b) {
    EXPECT_EQ(a.osm_version, b.osm_version);
    expect_same_sm(a.self, b.self);
    EXPECT_EQ(a.master_lid, b.master_lid);
    EXPECT_EQ(a.sweep_seq, b.sweep_seq);
    EXPECT_EQ(a.taken_unix_ms, b.taken_unix_ms);
    EXPECT_EQ(a.initialization_error, b.initialization_error);
    EXPECT_EQ(a.routing_engine, b.routing_engine);
    EXPECT_EQ(a.routing_engine_configured, b.routing_engine_configured);
    ASSERT_EQ(a.lfts.size(), b.lfts.size());
    for (size_t i = 0; i < a.lfts.size(); ++i) {
        EXPECT_EQ(a.lfts[i].switch_guid, b.lfts[i].switch_guid);
        EXPECT_EQ(a.lfts[i].port_by_lid(), b.lfts[i].port_by_lid());
    }
    ASSERT_EQ(a.other_sms.size(), b.other_sms.size());
    for (size_t i = 0; i < a.other_sms.size(); ++i) expect_same_sm(a.other_sms[i], b.other_sms[i]);
    ASSERT_EQ(a.fabric.size(), b.fabric.size());
    for (NodeId i = 0; i < a.fabric.size(); ++i) {
        const Node& x = a.fabric.node(i);
        const Node& y = b.fabric.node(i);
        EXPECT_EQ(x.type, y.type);
        EXPECT_EQ(x.guid, y.guid);
        EXPECT_EQ(x.system_guid, y.system_guid);
        EXPECT_EQ(x.description, y.description);
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.vendor_id, y.vendor_id);
        EXPECT_EQ(x.device_id, y.device_id);
        EXPECT_EQ(x.lid, y.lid);
        ASSERT_EQ(x.ports.size(), y.ports.size());
        for (size_t p = 0; p < x.ports.size(); ++p) expect_same_port(x.ports[p], y.ports[p]);
    }
    EXPECT_EQ(a.fabric.link_count(), b.fabric.link_count());
}

// `switches` switches of `ports` ports, `hcas` single-port CAs spread over the switches, then
// switch-to-switch links between free ports until `links` links exist (0: until ports run out).
inline Snapshot synthetic_snapshot(int switches, int ports, int hcas, size_t links) {
    Snapshot s;
    s.osm_version = "OpenSM 3.3.23";
    s.sweep_seq = 1;
    Fabric& f = s.fabric;
    std::vector<std::vector<bool>> used(switches, std::vector<bool>(ports + 1, false));
    for (int i = 0; i < switches; ++i) {
        NodeId id = f.add_node({.type = NodeType::Switch, .guid = 0x0002c90300200000ull + i,
                                .description = "MF0;sw" + std::to_string(i) + ":MQM8700/U1",
                                .lid = static_cast<uint16_t>(1 + i)},
                               ports);
        for (int p = 0; p <= ports; ++p)
            set_port(f.node(id).ports[p], active_port(Width::X4, Speed::HDR, p == 0 ? 1 + i : 0, 0x0002c90300200000ull + i));
    }
    for (int i = 0; i < hcas; ++i) {
        uint16_t lid = static_cast<uint16_t>(1 + switches + i);
        NodeId id = f.add_node({.type = NodeType::CA, .guid = 0x0002c90300100000ull + i,
                                .description = "node" + std::to_string(i) + " mlx5_0", .lid = lid},
                               1);
        set_port(f.node(id).ports[1], active_port(Width::X4, Speed::HDR, lid, 0x0002c90300100000ull + i));
        int sw = i % switches;
        int p = 1;
        while (p <= ports && used[sw][p]) ++p;
        if (p > ports) continue;
        used[sw][p] = true;
        f.connect(static_cast<NodeId>(sw), p, id, 1);
    }
    std::vector<std::pair<int, int>> free;
    for (int p = 1; p <= ports; ++p)
        for (int sw = 0; sw < switches; ++sw)
            if (!used[sw][p]) free.push_back({sw, p});
    size_t count = f.link_count();
    for (size_t i = 0; i + 1 < free.size(); i += 2, ++count) {
        if (links && count >= links) break;
        f.connect(static_cast<NodeId>(free[i].first), free[i].second, static_cast<NodeId>(free[i + 1].first),
                  free[i + 1].second);
    }
    f.finalize();
    return s;
}

}  // namespace ibf::wire
