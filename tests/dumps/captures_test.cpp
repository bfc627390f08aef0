// The readers on the real captures in tests/data (copies of ../shared/fabrics). Every expected count
// below was checked independently with grep/awk on the file, as stated next to it.
#include <gtest/gtest.h>

#include "dump_test_util.h"

namespace ibf {
namespace {

using test::by_name;
using test::rate_histogram;
using test::read_data;

const char* kSx6036 = "ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
const char* kX5 = "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt";
const char* kTeaker = "iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt";
const char* k36port = "iblinkinfo-qdr-1sw-5ca-infiniscale4-36port.txt";

TEST(Captures, Sx6036CountsAndRates) {
    Fabric f = parse_ibnetdiscover(read_data(kSx6036), kSx6036);
    // grep -c '^Switch' = 8, grep -c '^Ca' = 144
    EXPECT_EQ(f.count(NodeType::Switch), 8u);
    EXPECT_EQ(f.count(NodeType::CA), 144u);
    // grep '^\[' | awk '{print $NF}' | sort | uniq -c: 94 x 4xFDR10, 290 x 4xQDR port lines; every link is
    // printed at both ends, so 47 switch links and 145 host links = 192 links.
    EXPECT_EQ(f.link_count(), 192u);
    std::map<std::string, int> want{{"4xFDR10", 47}, {"4xQDR", 145}};
    EXPECT_EQ(rate_histogram(f), want);
    test::expect_consistent(f);
}

TEST(Captures, Sx6036KnownFacts) {
    Fabric f = parse_ibnetdiscover(read_data(kSx6036), kSx6036);
    NodeId ib1 = by_name(f, "ib1"), ib8 = by_name(f, "ib8"), ib7 = by_name(f, "ib7");
    // The missing uplink: ib1 port 25 and ib8 port 6 have no line in their sections.
    EXPECT_FALSE(f.node(ib1).ports[25].linked());
    EXPECT_FALSE(f.node(ib8).ports[6].linked());
    // Switch links are 4xFDR10, host links 4xQDR.
    for (const Link& l : f.links()) {
        bool sw_sw = f.node(l.a).type == NodeType::Switch && f.node(l.b).type == NodeType::Switch;
        EXPECT_EQ(to_string(f.node(l.a).ports[l.pa].rate()), sw_sw ? "4xFDR10" : "4xQDR");
    }
    // ib1 <-> ib8 has 3 cables (awk over ib1's section: 3 lines to "S-f4521403007ea570"), ib1 <-> ib7 has 4.
    int to8 = 0, to7 = 0;
    for (const Port& p : f.node(ib1).ports) {
        if (p.linked() && p.peer == ib8) ++to8;
        if (p.linked() && p.peer == ib7) ++to7;
    }
    EXPECT_EQ(to8, 3);
    EXPECT_EQ(to7, 4);
    // Dual-port storage host on spine ib7 (ib7 section lines [9] and [12] -> "tank1 mlx4_0").
    NodeId tank1 = by_name(f, "tank1");
    EXPECT_EQ(f.node(tank1).ports[1].peer, ib7);
    EXPECT_EQ(f.node(tank1).ports[1].peer_port, 12);
    EXPECT_EQ(f.node(tank1).ports[2].peer, ib7);
    EXPECT_EQ(f.node(tank1).ports[2].peer_port, 9);
    EXPECT_EQ(f.node(tank1).ports[2].guid, 0xf452140300081a22u);
    EXPECT_EQ(f.node(tank1).ports[2].lid, 10);
    // CAs cabled through HCA port 2 only (awk: Ca sections whose only port line is "[2](...)"):
    // booster1..4, rocket, tank2.
    int port2_only = 0;
    for (const Node& n : f.nodes())
        if (n.type == NodeType::CA && n.ports[2].linked() && !n.ports[1].linked()) ++port2_only;
    EXPECT_EQ(port2_only, 6);
    // Header fields.
    const Node& ib5 = f.node(by_name(f, "ib5"));
    EXPECT_EQ(ib5.guid, 0xf4521403001165a0u);
    EXPECT_EQ(ib5.system_guid, 0xf4521403001165a0u);
    EXPECT_EQ(ib5.vendor_id, 0x2c9);
    EXPECT_EQ(ib5.device_id, 0xc738);
    EXPECT_EQ(ib5.lid, 128);
    EXPECT_EQ(ib5.ports[0].lid, 128);
    EXPECT_EQ(ib5.num_ports(), 36);
    EXPECT_EQ(ib5.description, "MF0;ib5:SX6036/U1");
    const Node& s114 = f.node(by_name(f, "stage114"));
    EXPECT_EQ(s114.guid, 0x24be05ffff980030u);
    EXPECT_EQ(s114.ports[1].guid, 0x24be05ffff980031u);
    EXPECT_EQ(s114.lid, 105);
    EXPECT_EQ(s114.ports[1].state, PortState::Active);
    EXPECT_EQ(s114.ports[1].phys, PhysState::LinkUp);
    EXPECT_EQ(s114.ports[1].width_active, Width::X4);
    EXPECT_EQ(s114.ports[1].speed_active, Speed::QDR);
}

TEST(Captures, X5CountsRatesAndSharedDescriptions) {
    Fabric f = parse_ibnetdiscover(read_data(kX5), kX5);
    // grep -c '^Switch' = 11, grep -c '^Ca' = 89
    EXPECT_EQ(f.count(NodeType::Switch), 11u);
    EXPECT_EQ(f.count(NodeType::CA), 89u);
    // port lines: 46 x 4xDDR + 272 x 4xQDR, each link twice -> 23 + 136 = 159
    EXPECT_EQ(f.link_count(), 159u);
    std::map<std::string, int> want{{"4xDDR", 23}, {"4xQDR", 136}};
    EXPECT_EQ(rate_histogram(f), want);
    // All 89 CAs share one description (grep '^Ca' | sed 's/.*# //' | sort | uniq -c -> 89), distinct GUIDs.
    EXPECT_EQ(f.find_by_name("MT25408").size(), 89u);
    int ddr_hosts = 0;
    for (const Node& n : f.nodes()) {
        if (n.type != NodeType::CA) continue;
        EXPECT_EQ(n.description, "MT25408 ConnectX Mellanox Technologies");
        if (n.ports[1].speed_active == Speed::DDR) ++ddr_hosts;
    }
    EXPECT_EQ(ddr_hosts, 23);
    // A description containing '#', and a "base port 0" switch.
    auto v = f.find(0x0008f10500108c5cu);
    ASSERT_TRUE(v);
    EXPECT_EQ(f.node(*v).description, "Voltaire 4036 # 4036-8C5C");
    auto is4 = f.find(0x0002c90200417670u);
    ASSERT_TRUE(is4);
    EXPECT_EQ(f.node(*is4).lid, 18);
    EXPECT_EQ(f.node(*is4).vendor_id, 0x2c9);
    EXPECT_EQ(f.node(*is4).device_id, 0xbd36);
    test::expect_consistent(f);
}

TEST(Captures, TeakerIblinkinfo) {
    Fabric f = parse_iblinkinfo(read_data(kTeaker), kTeaker);
    // grep -c '^CA:' = 8, one "Switch:" header; grep -c 'Active/' = 18 port lines = 9 links x 2 ends
    EXPECT_EQ(f.count(NodeType::Switch), 1u);
    EXPECT_EQ(f.count(NodeType::CA), 8u);
    EXPECT_EQ(f.link_count(), 9u);
    std::map<std::string, int> want{{"4xQDR", 9}};
    EXPECT_EQ(rate_histogram(f), want);
    NodeId sw = *f.find(0x0002c902004b2678u);
    const Node& s = f.node(sw);
    EXPECT_EQ(s.num_ports(), 18);
    EXPECT_EQ(s.lid, 2);
    EXPECT_EQ(s.description, "Infiniscale-IV Mellanox Technologies");
    // grep -c 'Down/' = 9: switch ports 8, 10-13, 15-18
    int down = 0;
    for (int p = 1; p <= 18; ++p)
        if (s.ports[p].state == PortState::Down) {
            ++down;
            EXPECT_EQ(s.ports[p].phys, PhysState::Polling);
            EXPECT_FALSE(s.ports[p].linked());
        }
    EXPECT_EQ(down, 9);
    // Dual-port host teaker-9 on ports 3 and 14; node GUID = port GUID of its port 1.
    NodeId t9 = by_name(f, "teaker-9");
    EXPECT_EQ(f.node(t9).guid, 0xf45214030091ba51u);
    EXPECT_EQ(f.node(t9).num_ports(), 2);
    EXPECT_EQ(f.node(t9).ports[2].guid, 0xf45214030091ba52u);
    EXPECT_EQ(f.node(t9).ports[1].lid, 6);
    EXPECT_EQ(f.node(t9).ports[2].lid, 4);
    EXPECT_EQ(s.ports[3].peer, t9);
    EXPECT_EQ(s.ports[3].peer_port, 1);
    EXPECT_EQ(s.ports[14].peer, t9);
    EXPECT_EQ(s.ports[14].peer_port, 2);
    // teaker-10 is printed after the switch: the forward reference resolves to the same node.
    NodeId t10 = by_name(f, "teaker-10");
    EXPECT_EQ(s.ports[2].peer, t10);
    EXPECT_EQ(f.node(t10).ports[1].state, PortState::Active);
    test::expect_consistent(f);
}

TEST(Captures, ThirtySixPortIblinkinfo) {
    Fabric f = parse_iblinkinfo(read_data(k36port), k36port);
    // grep -c '^CA:' = 5; 10 'Active/' lines = 5 links; 31 'Down/' lines
    EXPECT_EQ(f.count(NodeType::Switch), 1u);
    EXPECT_EQ(f.count(NodeType::CA), 5u);
    EXPECT_EQ(f.link_count(), 5u);
    std::map<std::string, int> want{{"4xQDR", 5}};
    EXPECT_EQ(rate_histogram(f), want);
    const Node& s = f.node(*f.find(0x0002c9020046c588u));
    EXPECT_EQ(s.num_ports(), 36);
    int down = 0;
    for (const Port& p : s.ports)
        if (p.state == PortState::Down) ++down;
    EXPECT_EQ(down, 31);
    NodeId ip210 = by_name(f, "ip-210");  // printed last, after the switch
    EXPECT_EQ(s.ports[36].peer, ip210);
    // No "Could be" trailer: the link runs at what both ends support.
    EXPECT_EQ(s.ports[36].width_supported, width_bit(Width::X4));
    EXPECT_EQ(s.ports[36].speed_supported, speed_bit(Speed::QDR));
}

TEST(Captures, DetectAndParseDump) {
    EXPECT_EQ(detect_dump_format(read_data(kSx6036)), DumpFormat::Ibnetdiscover);
    EXPECT_EQ(detect_dump_format(read_data(kX5)), DumpFormat::Ibnetdiscover);
    EXPECT_EQ(detect_dump_format(read_data(kTeaker)), DumpFormat::Iblinkinfo);
    EXPECT_EQ(detect_dump_format(read_data(k36port)), DumpFormat::Iblinkinfo);
    EXPECT_EQ(parse_dump(read_data(kX5), kX5).link_count(), 159u);
    EXPECT_EQ(parse_dump(read_data(kTeaker), kTeaker).link_count(), 9u);
    EXPECT_EQ(to_string(DumpFormat::Ibnetdiscover), "ibnetdiscover");
    EXPECT_EQ(to_string(DumpFormat::Iblinkinfo), "iblinkinfo");
    EXPECT_EQ(to_string(DumpFormat::IbdiagnetNet), "ibdiagnet-net");
}

}  // namespace
}  // namespace ibf
