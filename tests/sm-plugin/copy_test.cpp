// ibf::osm::copy_port on hand-built OpenSM PortInfo structures: the rate, mask and MTU mapping.
#include <gtest/gtest.h>

#include <cstring>

#include "../../sm-plugin/src/osm_headers.h"
#include "ibf/osm_copy.h"

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
