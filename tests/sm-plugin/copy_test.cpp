// ibf::osm::copy_port on hand-built OpenSM PortInfo structures: the rate, mask and MTU mapping.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "../../sm-plugin/src/osm_headers.h"
#include "../../sm-plugin/bench/fake_subnet.h"
#include "ibf/osm_copy.h"
#include "ibf/osm_counters.h"

using namespace ibf;

namespace {

osm_physp_t make_port(uint8_t num) {
    osm_physp_t p;
    std::memset(&p, 0, sizeof p);
    p.port_num = num;
    p.port_guid = cl_hton64(0x0002c90300a1b2c3ULL);
    p.port_info.base_lid = cl_hton16(17);
    ib_port_info_set_lmc(&p.port_info, 1);
    ib_port_info_set_port_state(&p.port_info, IB_LINK_ACTIVE);
    ib_port_info_set_port_phys_state(5, &p.port_info);  // LinkUp
    p.port_info.link_width_active = 2;                   // 4x
    p.port_info.link_width_enabled = 3;                  // 1x, 4x
    p.port_info.link_width_supported = 0x1F;
    ib_port_info_set_link_speed_sup(7, &p.port_info);    // SDR DDR QDR
    p.port_info.link_speed = static_cast<uint8_t>((4 << 4) | 7);  // active QDR, enabled SDR..QDR
    p.port_info.mtu_cap = 5;                             // 4096
    p.port_info.mtu_smsl = static_cast<uint8_t>(4 << 4); // neighbor 2048
    return p;
}

}  // namespace

TEST(OsmCopy, QdrCaPortWithoutExtendedSpeeds) {
    osm_physp_t p = make_port(1);
    Port out;
    osm::copy_port(&p, false, false, out);
    EXPECT_EQ(out.guid, 0x0002c90300a1b2c3ULL);
    EXPECT_EQ(out.lid, 17);
    EXPECT_EQ(out.lmc, 1);
    EXPECT_EQ(out.state, PortState::Active);
    EXPECT_EQ(out.phys, PhysState::LinkUp);
    EXPECT_EQ(to_string(out.rate()), "4xQDR");
    EXPECT_EQ(out.width_enabled, 3);
    EXPECT_EQ(out.width_supported, 0x1F);
    EXPECT_EQ(out.speed_supported, speed_bit(Speed::SDR) | speed_bit(Speed::DDR) | speed_bit(Speed::QDR));
    EXPECT_EQ(out.speed_enabled, out.speed_supported);
    EXPECT_EQ(out.mtu_cap, 4096);
    EXPECT_EQ(out.mtu_active, 2048);
}

TEST(OsmCopy, ExtendedSpeedsCountOnlyWithTheCapability) {
    osm_physp_t p = make_port(1);
    p.port_info.link_speed_ext = static_cast<uint8_t>((4 << 4) | 0x7);  // active HDR, supports FDR EDR HDR
    ib_port_info_set_link_speed_ext_enabled(&p.port_info, 0x6);          // EDR HDR
    Port with, without;
    osm::copy_port(&p, true, false, with);
    osm::copy_port(&p, false, false, without);
    EXPECT_EQ(to_string(with.rate()), "4xHDR");
    EXPECT_EQ(with.speed_supported & speed_bit(Speed::FDR), speed_bit(Speed::FDR));
    EXPECT_EQ(with.speed_supported & speed_bit(Speed::HDR), speed_bit(Speed::HDR));
    EXPECT_EQ(with.speed_enabled & speed_bit(Speed::FDR), 0);
    EXPECT_EQ(with.speed_enabled & speed_bit(Speed::EDR), speed_bit(Speed::EDR));
    EXPECT_EQ(to_string(without.rate()), "4xQDR");  // the ext fields are garbage without the capability bit
    EXPECT_EQ(without.speed_supported & speed_bit(Speed::HDR), 0);
    // LinkSpeedExtEnabled 30 = "disable extended speeds": nothing enabled from it.
    ib_port_info_set_link_speed_ext_enabled(&p.port_info, IB_LINK_SPEED_EXT_DISABLE);
    Port dis;
    osm::copy_port(&p, true, false, dis);
    EXPECT_EQ(dis.speed_enabled & (speed_bit(Speed::FDR) | speed_bit(Speed::EDR) | speed_bit(Speed::HDR)), 0);
}

TEST(OsmCopy, Fdr10FromMellanoxExtendedPortInfo) {
    osm_physp_t p = make_port(3);
    p.ext_port_info.link_speed_active = kMlnxFdr10Bit;
    p.ext_port_info.link_speed_supported = kMlnxFdr10Bit;
    p.ext_port_info.link_speed_enabled = kMlnxFdr10Bit;
    Port out;
    osm::copy_port(&p, false, true, out);
    EXPECT_EQ(to_string(out.rate()), "4xFDR10");
    EXPECT_TRUE(out.speed_supported & speed_bit(Speed::FDR10));
    EXPECT_TRUE(out.speed_enabled & speed_bit(Speed::FDR10));
    EXPECT_EQ(out.lid, 0);  // a switch's LID lives on port 0 only
    EXPECT_EQ(out.lmc, 0);
}

TEST(OsmCopy, DownPortAndOddValues) {
    osm_physp_t p = make_port(2);
    ib_port_info_set_port_state(&p.port_info, IB_LINK_DOWN);
    ib_port_info_set_port_phys_state(2, &p.port_info);  // Polling
    p.port_info.link_width_active = 3;                  // not a single width: unknown
    p.port_info.mtu_cap = 9;                            // not an MTU code
    Port out;
    osm::copy_port(&p, false, false, out);
    EXPECT_EQ(out.state, PortState::Down);
    EXPECT_EQ(out.phys, PhysState::Polling);
    EXPECT_EQ(out.width_active, Width::Unknown);
    EXPECT_EQ(out.mtu_cap, 0);
}

// copy_lfts on a hand-built subnet: two switches in sw_guid_tbl, one with a shorter table than the
// subnet's max LID and one entry beyond its ports (must not reach the wire, which would refuse it).
TEST(OsmCopy, LftsAreCopiedUpToTheMaxLidInUse) {
    auto osm = std::make_unique<osm_opensm_t>();
    std::memset(static_cast<void*>(osm.get()), 0, sizeof(osm_opensm_t));
    cl_qmap_init(&osm->subn.sw_guid_tbl);
    osm->subn.max_ucast_lid_ho = 6;

    osm_node_t n1{}, n2{};
    n1.node_info.node_guid = cl_hton64(0x1111);
    n2.node_info.node_guid = cl_hton64(0x2222);
    std::vector<uint8_t> t1(64, OSM_NO_PATH), t2(64, OSM_NO_PATH);
    t1[1] = 0; t1[2] = 3; t1[3] = 4; t1[4] = 1; t1[5] = 2; t1[6] = 3;
    t2[1] = 1; t2[2] = 0; t2[3] = 37;  // 37: beyond a 36-port switch
    t2[5] = 9;                         // beyond max_lid_ho 4: not part of the table
    osm_switch_t s1, s2;
    std::memset(static_cast<void*>(&s1), 0, sizeof s1);
    std::memset(static_cast<void*>(&s2), 0, sizeof s2);
    s1.p_node = &n1; s1.num_ports = 9;  s1.max_lid_ho = 6; s1.lft = t1.data(); s1.lft_size = 64;
    s2.p_node = &n2; s2.num_ports = 37; s2.max_lid_ho = 4; s2.lft = t2.data(); s2.lft_size = 64;
    cl_qmap_insert(&osm->subn.sw_guid_tbl, 0x1111, &s1.map_item);
    cl_qmap_insert(&osm->subn.sw_guid_tbl, 0x2222, &s2.map_item);

    Snapshot snap;
    ibf::osm::copy_lfts(osm.get(), snap);
    ASSERT_EQ(snap.lfts.size(), 2u);
    EXPECT_EQ(snap.lfts[0].switch_guid, 0x1111u);
    EXPECT_EQ(snap.lfts[0].port_by_lid(), (std::vector<uint8_t>{255, 0, 3, 4, 1, 2, 3}));
    EXPECT_EQ(snap.lfts[1].switch_guid, 0x2222u);
    EXPECT_EQ(snap.lfts[1].port_by_lid(), (std::vector<uint8_t>{255, 1, 0, 255, 255, 255, 255}));

    // With the fabric copied first, the tables stop at the highest LID in use (here a CA at LID 3
    // with LMC 1: LIDs 3 and 4), not at OpenSM's capacity.
    Snapshot snap2;
    NodeId ca = snap2.fabric.add_node({.type = NodeType::CA, .guid = 0x3333}, 1);
    snap2.fabric.node(ca).ports[1].lid = 3;
    snap2.fabric.node(ca).ports[1].lmc = 1;
    ibf::osm::copy_lfts(osm.get(), snap2);
    ASSERT_EQ(snap2.lfts.size(), 2u);
    EXPECT_EQ(snap2.lfts[0].port_by_lid(), (std::vector<uint8_t>{255, 0, 3, 4, 1}));
}

// The perfmgr's event structs as OpenSM fills them (osm_perfmgr_db.c) -> CounterEvent, in wire order.
TEST(CounterEvent, PerfmgrErrorAndDataEventsAreCopiedInWireOrder) {
    osm_epi_pe_event_t pe;
    std::memset(&pe, 0, sizeof pe);
    osm_epi_create_port_id(&pe.port_id, 0xec0d9a0300000020ULL, 19, const_cast<char*>("leaf01"));
    pe.symbol_err_cnt = 55;
    pe.link_err_recover = 2;
    pe.link_downed = 3;
    pe.rcv_err = 4;
    pe.rcv_rem_phys_err = 5;
    pe.rcv_switch_relay_err = 6;
    pe.xmit_discards = 7;
    pe.xmit_constraint_err = 8;
    pe.rcv_constraint_err = 9;
    pe.link_integrity = 10;
    pe.buffer_overrun = 11;
    pe.vl15_dropped = 12;
    pe.xmit_wait = 13;
    pe.time_diff_s = 2;
    const ibf::osm::CounterEvent e = ibf::osm::counter_event(pe);
    EXPECT_EQ(e.node_guid, 0xec0d9a0300000020ULL);
    EXPECT_EQ(e.port, 19);
    EXPECT_FALSE(e.data);
    const std::array<uint64_t, 13> want{55, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    EXPECT_EQ(e.d, want);
    EXPECT_EQ(e.d[static_cast<size_t>(ibf::wire::PortCounter::excessive_buffer_overruns)], 11u);

    osm_epi_dc_event_t dc;
    std::memset(&dc, 0xff, sizeof dc);  // unicast/multicast left "uninitialised": must not be read
    osm_epi_create_port_id(&dc.port_id, 0x20, 1, const_cast<char*>("h1"));
    dc.xmit_data = 100;
    dc.rcv_data = 200;
    dc.xmit_pkts = 3;
    dc.rcv_pkts = 4;
    const ibf::osm::CounterEvent d = ibf::osm::counter_event(dc);
    EXPECT_TRUE(d.data);
    EXPECT_EQ(d.node_guid, 0x20u);
    EXPECT_EQ(d.port, 1);
    const std::array<uint64_t, 13> want_d{100, 200, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(d.d, want_d);
}

// The split copy (sm-plugin/include/ibf/osm_copy.h): under the lock only flat records, remote
// ports kept as addresses; after it, the Fabric with every link resolved, each cable once.
TEST(OsmCopy, FlatCopyUnderTheLockBuildsTheSameFabricAfterIt) {
    osm::FakeSubnet fs;
    osm_node_t* sw = fs.add(IB_NODE_TYPE_SWITCH, 0x10, 8, "MF0;leaf01:MQM8700/U1");
    osm_node_t* h1 = fs.add(IB_NODE_TYPE_CA, 0x20, 1, "h1 mlx5_0");
    osm_node_t* h2 = fs.add(IB_NODE_TYPE_CA, 0x30, 2, "h2 mlx5_0");
    osm_node_t* sw2 = fs.add(IB_NODE_TYPE_SWITCH, 0x40, 8, "MF0;spine01:MQM8700/U1");
    fs.link(sw, 1, h1, 1);
    fs.link(h2, 2, sw, 3);
    fs.link(sw, 7, sw2, 2);
    fs.link(sw, 8, sw2, 1);
    std::free(h1->print_desc);
    h1->print_desc = strdup("gpu-node-1");  // a node-name-map entry
    fs.add_lfts();
    osm::SubnetCopy raw;
    osm::copy_subnet(fs.osm, raw);
    EXPECT_EQ(raw.nodes.size(), 4u);
    EXPECT_EQ(raw.ports.size(), 9u + 1u + 2u + 9u);
    EXPECT_EQ(raw.lids, 5u);  // LIDs 1..4 given (LMC 0): LFTs over LIDs 0..4
    osm::LftCache cache;
    EXPECT_EQ(cache.refresh(fs.osm, raw.lids).copied, 2u);
    EXPECT_EQ(cache.refresh(fs.osm, raw.lids).copied, 0u);  // nothing changed: nothing copied
    fs.lfts[1][3] = 1;
    EXPECT_EQ(cache.refresh(fs.osm, raw.lids).copied, 1u);  // no event record: every table compared

    Snapshot snap;
    osm::build_snapshot(raw, snap);
    cache.fill(snap);
    const Fabric& f = snap.fabric;
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f.link_count(), 4u);
    auto id = [&](Guid g) { return *f.find(g); };
    const Node& s1 = f.node(id(0x10));
    EXPECT_EQ(s1.ports[1].peer, id(0x20));
    EXPECT_EQ(s1.ports[3].peer, id(0x30));
    EXPECT_EQ(s1.ports[3].peer_port, 2);
    EXPECT_EQ(s1.ports[7].peer, id(0x40));
    EXPECT_EQ(s1.ports[7].peer_port, 2);
    EXPECT_EQ(s1.ports[8].peer_port, 1);
    EXPECT_FALSE(s1.ports[2].linked());
    EXPECT_EQ(s1.lid, 1);
    EXPECT_EQ(f.node(id(0x30)).lid, 3);  // a CA's LID: its first linked port's
    EXPECT_EQ(f.node(id(0x20)).name, "gpu-node-1");
    EXPECT_EQ(f.node(id(0x20)).description, "h1 mlx5_0");
    EXPECT_EQ(to_string(s1.ports[1].rate()), "4xQDR");
    ASSERT_EQ(snap.lfts.size(), 2u);
    EXPECT_EQ(snap.lfts[1].port_by_lid().size(), 5u);
    EXPECT_EQ(snap.lfts[1].port_by_lid()[3], 1);
    EXPECT_EQ(snap.lfts[0].port_by_lid()[0], kLftNoPath);

    // Filled again after a sweep that changed one table: the other is the very buffer the last
    // snapshot got (shared, not copied), the changed one new bytes; the old snapshot keeps its own.
    fs.lfts[0][2] = 3;
    EXPECT_EQ(cache.refresh(fs.osm, raw.lids).copied, 1u);
    Snapshot next;
    cache.fill(next);
    ASSERT_EQ(next.lfts.size(), 2u);
    EXPECT_EQ(next.lfts[1].shared_port_by_lid(), snap.lfts[1].shared_port_by_lid());
    EXPECT_NE(next.lfts[0].shared_port_by_lid(), snap.lfts[0].shared_port_by_lid());
    EXPECT_EQ(next.lfts[0].port_by_lid()[2], 3);
    EXPECT_NE(snap.lfts[0].port_by_lid()[2], 3);
}
