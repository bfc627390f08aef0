// Synthetic dumps in tests/data (written for these tests): SHARP aggregation nodes and newer rates,
// the ibdiagnet2 ibnetdiscover-like layout, the iblinkinfo -l line form and "Could be" capability notes.
#include <gtest/gtest.h>

#include "dump_test_util.h"

namespace ibf {
namespace {

using test::by_name;
using test::rate_histogram;
using test::read_data;

TEST(Formats, SharpAggregationNodesAndNewRates) {
    const char* name = "synthetic-ibnetdiscover-hdr-sharp.txt";
    Fabric f = parse_ibnetdiscover(read_data(name), name);
    EXPECT_EQ(f.count(NodeType::Switch), 2u);
    EXPECT_EQ(f.count(NodeType::CA), 5u);
    EXPECT_EQ(f.link_count(), 7u);
    std::map<std::string, int> want{{"2xNDR", 1}, {"4xEDR", 1}, {"4xHDR", 5}};
    EXPECT_EQ(rate_histogram(f), want);
    NodeId leaf = by_name(f, "leaf01");
    const Node& an = f.node(f.node(leaf).ports[41].peer);
    EXPECT_EQ(an.type, NodeType::CA);
    EXPECT_EQ(an.description, "Mellanox Technologies Aggregation Node");
    EXPECT_EQ(an.guid, 0xb8cef60300a1b208u);
    EXPECT_EQ(an.lid, 20);
    // Two hosts share one default description: identity is the GUID.
    EXPECT_EQ(f.find_by_name("MT4123").size(), 2u);
    EXPECT_TRUE(f.find(0xb8cef60300c10000u));
    EXPECT_TRUE(f.find(0xb8cef60300c20000u));
    const Node& gpu = f.node(by_name(f, "gpu03"));
    EXPECT_EQ(gpu.num_ports(), 2);
    EXPECT_EQ(gpu.ports[1].width_active, Width::X2);
    EXPECT_EQ(gpu.ports[1].speed_active, Speed::NDR);
    EXPECT_FALSE(gpu.ports[2].linked());
}

TEST(Formats, IbdiagnetNet) {
    const char* name = "synthetic-ibdiagnet2-2sw-3ca.net";
    std::string text = read_data(name);
    EXPECT_EQ(detect_dump_format(text), DumpFormat::IbdiagnetNet);
    Fabric f = parse_ibdiagnet_net(text, name);
    EXPECT_EQ(f.count(NodeType::Switch), 2u);
    EXPECT_EQ(f.count(NodeType::CA), 3u);
    EXPECT_EQ(f.link_count(), 5u);
    std::map<std::string, int> want{{"4xEDR", 4}, {"4xFDR", 1}};
    EXPECT_EQ(rate_histogram(f), want);
    // "[1](1)" on a switch is a port number, "[1](248a...)" on a CA is the port GUID.
    const Node& sw1 = f.node(by_name(f, "sw-ib01"));
    EXPECT_EQ(sw1.ports[1].guid, 0x248a070300f8a2c0u);
    const Node& n3 = f.node(by_name(f, "node03"));
    EXPECT_EQ(n3.ports[2].guid, 0x248a070300b4e402u);
    EXPECT_EQ(n3.lid, 7);
    EXPECT_FALSE(n3.ports[1].linked());
    EXPECT_EQ(parse_dump(text, name).link_count(), 5u);
    // Without the ibdiagnet comment, the "[p](p)" switch port lines still identify the format.
    std::string no_comment = text.substr(text.find("\nvendid"));
    EXPECT_EQ(detect_dump_format(no_comment), DumpFormat::IbdiagnetNet);
    test::expect_consistent(f);
}

TEST(Formats, IblinkinfoLineForm) {
    const char* name = "synthetic-iblinkinfo-line-2sw-3ca.txt";
    std::string text = read_data(name);
    EXPECT_EQ(detect_dump_format(text), DumpFormat::Iblinkinfo);
    Fabric f = parse_iblinkinfo(text, name);
    EXPECT_EQ(f.count(NodeType::Switch), 2u);
    EXPECT_EQ(f.count(NodeType::CA), 3u);
    EXPECT_EQ(f.link_count(), 4u);
    std::map<std::string, int> want{{"1xEDR", 1}, {"4xEDR", 2}, {"4xFDR", 1}};
    EXPECT_EQ(rate_histogram(f), want);
    NodeId sw1 = by_name(f, "sw-ib01"), sw2 = by_name(f, "sw-ib02"), n2 = by_name(f, "node02");
    EXPECT_EQ(f.node(sw1).guid, 0x248a070300f8a2c0u);
    EXPECT_EQ(f.node(sw1).lid, 3);
    EXPECT_EQ(f.node(sw1).ports[4].peer, sw2);
    EXPECT_EQ(f.node(sw1).ports[4].peer_port, 4);
    // CA identity in -l form: iblinkinfo prints port GUIDs; the node takes its lowest port's GUID, and
    // the two lines of node03 (ports 1 and 2, GUIDs ...401/...402) are one HCA.
    EXPECT_EQ(f.node(n2).guid, 0x248a070300b4e3f1u);
    EXPECT_EQ(f.node(sw1).ports[2].peer, n2);
    const Node& n3 = f.node(by_name(f, "node03"));
    EXPECT_EQ(n3.guid, 0x248a070300b4e401u);
    EXPECT_EQ(n3.num_ports(), 2);
    EXPECT_EQ(n3.ports[1].state, PortState::Down);
    EXPECT_EQ(n3.ports[2].guid, 0x248a070300b4e402u);
    EXPECT_EQ(n3.ports[2].peer, sw2);
    // Capability notes: "Could be 25.78125 Gbps" (EDR) on a FDR link, "Could be 4X" on a 1X link.
    const Port& p2 = f.node(sw1).ports[2];
    EXPECT_EQ(p2.speed_active, Speed::FDR);
    EXPECT_TRUE(p2.speed_supported & speed_bit(Speed::EDR));
    EXPECT_EQ(max_speed(p2.speed_supported), Speed::EDR);
    EXPECT_EQ(max_speed(f.node(n2).ports[1].speed_supported), Speed::EDR);
    const Port& p4 = f.node(sw1).ports[4];
    EXPECT_EQ(p4.width_active, Width::X1);
    EXPECT_EQ(max_width(p4.width_supported), Width::X4);
    EXPECT_EQ(f.node(sw2).ports[2].phys, PhysState::Disabled);
    test::expect_consistent(f);
}

TEST(Formats, IblinkinfoCouldBeAndRemoteOnlyNodes) {
    const char* name = "synthetic-iblinkinfo-could-be.txt";
    Fabric f = parse_iblinkinfo(read_data(name), name);
    EXPECT_EQ(f.count(NodeType::Switch), 1u);
    EXPECT_EQ(f.count(NodeType::CA), 3u);  // node12 is only seen from the switch
    EXPECT_EQ(f.link_count(), 3u);
    NodeId sw = by_name(f, "leaf01");
    const Node& s = f.node(sw);
    EXPECT_EQ(s.ports[1].speed_active, Speed::QDR);
    EXPECT_EQ(max_speed(s.ports[1].speed_supported), Speed::FDR);
    EXPECT_EQ(s.ports[2].width_active, Width::X1);
    EXPECT_EQ(max_width(s.ports[2].width_supported), Width::X4);
    EXPECT_EQ(max_width(s.ports[3].width_supported), Width::X4);
    EXPECT_EQ(max_speed(s.ports[3].speed_supported), Speed::FDR);
    NodeId n12 = by_name(f, "node12");
    const Node& r = f.node(n12);
    EXPECT_EQ(r.type, NodeType::CA);
    EXPECT_EQ(r.guid, 0xffffffff00000000u | 12);  // placeholder identity from the LID
    EXPECT_EQ(r.lid, 12);
    EXPECT_EQ(r.ports[1].peer, sw);
    EXPECT_EQ(r.ports[1].peer_port, 3);
    EXPECT_EQ(r.ports[1].rate(), (Rate{Width::X4, Speed::FDR}));
    test::expect_consistent(f);
}

TEST(Formats, IblinkinfoWithoutLids) {
    // Before an SM runs every LID is 0: remote ends are then found by their (unique) description.
    std::string text =
        "Switch: 0x0002c90200aa0001 MF0;leaf01:SX6036/U1:\n"
        "           0    1[  ] ==( 4X          10.0 Gbps  Init/  LinkUp)==>       0    1[  ] \"node1 mlx4_0\" ( )\n"
        "           0    2[  ] ==( 4X          10.0 Gbps  Init/  LinkUp)==>       0    1[  ] \"node2 mlx4_0\" ( )\n"
        "CA: node1 mlx4_0:\n"
        "      0x0002c90300bb0011      0    1[  ] ==( 4X          10.0 Gbps  Init/  LinkUp)==>       0    1[  ] \"MF0;leaf01:SX6036/U1\" ( )\n"
        "CA: node2 mlx4_0:\n"
        "      0x0002c90300bb0021      0    1[  ] ==( 4X          10.0 Gbps  Init/  LinkUp)==>       0    2[  ] \"MF0;leaf01:SX6036/U1\" ( )\n";
    Fabric f = parse_iblinkinfo(text, "nolid.txt");
    EXPECT_EQ(f.size(), 3u);
    EXPECT_EQ(f.link_count(), 2u);
    NodeId sw = by_name(f, "leaf01");
    EXPECT_EQ(f.node(sw).ports[2].peer, by_name(f, "node2"));
    EXPECT_EQ(f.node(sw).ports[2].state, PortState::Init);
    test::expect_consistent(f);
}

TEST(Formats, IbsimStyleNetFileWithFreeIds) {
    // ibsim net files may name nodes freely when a switchguid=/caguid= line gives the GUID.
    std::string text =
        "switchguid=0x10\n"
        "Switch 4 \"sw1\"\n"
        "[1] \"hca1\"[1]\n"
        "\n"
        "caguid=0x20\n"
        "Ca 1 \"hca1\"\n"
        "[1](21) \"sw1\"[1]\n";
    Fabric f = parse_ibnetdiscover(text, "ibsim.net");
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f.link_count(), 1u);
    EXPECT_EQ(f.node(*f.find(0x20)).ports[1].guid, 0x21u);
    EXPECT_EQ(f.node(*f.find(0x20)).ports[1].rate(), Rate{});
}

TEST(Formats, GroupingExtPortsAndRouters) {
    // ibnetdiscover -g prints chassis headings and "[ext N]" after switch ports; routers are "Rt" / "R-".
    std::string text =
        "Chassis 0x0008f10400411f56 (Voltaire ISR9288)\n"
        "\n"
        "vendid=0x8f1\n"
        "switchguid=0x8f10400411f56(8f10400411f56)\n"
        "Switch\t24 \"S-0008f10400411f56\"\t\t# \"ISR9288/ISR9096 Voltaire sLB-24\" base port 0 lid 6 lmc 0\n"
        "[12][ext 1]\t\"H-0008f10403960558\"[1](8f10403960559) \t\t# \"host1 HCA-1\" lid 4 4xSDR\n"
        "[13][ext 2]\t\"R-0008f10403970000\"[1](8f10403970001) \t\t# \"router1\" lid 9 4xDDR\n"
        "\n"
        "Non-Chassis Nodes\n"
        "\n"
        "caguid=0x8f10403960558\n"
        "Ca\t2 \"H-0008f10403960558\"\t\t# \"host1 HCA-1\"\n"
        "[1](8f10403960559) \t\"S-0008f10400411f56\"[12][ext 1]\t\t# lid 4 lmc 0 \"ISR9288/ISR9096 Voltaire sLB-24\" lid 6 4xSDR\n"
        "\n"
        "rtguid=0x8f10403970000\n"
        "Rt\t1 \"R-0008f10403970000\"\t\t# \"router1\"\n"
        "[1](8f10403970001) \t\"S-0008f10400411f56\"[13]\t\t# lid 9 lmc 0 \"ISR9288/ISR9096 Voltaire sLB-24\" lid 6 4xDDR\n";
    Fabric f = parse_ibnetdiscover(text, "grouped.txt");
    EXPECT_EQ(f.link_count(), 2u);
    EXPECT_EQ(f.count(NodeType::Router), 1u);
    NodeId sw = *f.find(0x0008f10400411f56u);
    EXPECT_EQ(f.node(sw).ports[13].peer, *f.find(0x0008f10403970000u));
    EXPECT_EQ(f.node(sw).ports[12].rate(), (Rate{Width::X4, Speed::SDR}));
    EXPECT_EQ(f.node(*f.find(0x0008f10403970000u)).lid, 9);
    Fabric g = parse_ibnetdiscover(write_ibnetdiscover(f), "again");
    EXPECT_EQ(g.count(NodeType::Router), 1u);
    EXPECT_EQ(g.link_count(), 2u);
}

TEST(Formats, DetectRejectsOtherText) {
    EXPECT_FALSE(detect_dump_format(""));
    EXPECT_FALSE(detect_dump_format("hello world\nthis is not a dump\n"));
    EXPECT_THROW(parse_dump("hello\n", "x.txt"), InputError);
    try {
        parse_dump("hello\n", "x.txt");
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "x.txt");
        EXPECT_NE(std::string(e.what()).find("not a recognised fabric dump"), std::string::npos);
    }
}

}  // namespace
}  // namespace ibf
