// write_ibnetdiscover() round trips through parse_ibnetdiscover(), and node-name-maps.
#include <gtest/gtest.h>

#include "dump_test_util.h"

namespace ibf {
namespace {

using test::read_data;

// Same nodes (type, GUID, description, ports, LIDs, ids), same links and rates.
void expect_same_fabric(const Fabric& a, const Fabric& b) {
    ASSERT_EQ(a.size(), b.size());
    for (const Node& n : a.nodes()) {
        auto id = b.find(n.guid);
        ASSERT_TRUE(id) << guid_hex(n.guid);
        const Node& m = b.node(*id);
        EXPECT_EQ(m.type, n.type);
        EXPECT_EQ(m.description, n.description);
        EXPECT_EQ(m.num_ports(), n.num_ports());
        EXPECT_EQ(m.system_guid, n.system_guid);
        EXPECT_EQ(m.vendor_id, n.vendor_id);
        EXPECT_EQ(m.device_id, n.device_id);
        EXPECT_EQ(m.lid, n.lid);
        for (int p = 0; p <= n.num_ports(); ++p) {
            const Port& x = n.ports[p];
            const Port& y = m.ports[p];
            EXPECT_EQ(x.linked(), y.linked());
            if (x.linked()) {
                EXPECT_EQ(b.node(y.peer).guid, a.node(x.peer).guid);
                EXPECT_EQ(y.peer_port, x.peer_port);
                EXPECT_EQ(y.rate(), x.rate());
                EXPECT_EQ(y.guid, x.guid);
                EXPECT_EQ(y.lid, x.lid);
            }
        }
    }
    EXPECT_EQ(a.link_count(), b.link_count());
    EXPECT_EQ(test::rate_histogram(a), test::rate_histogram(b));
}

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, ParseWriteParseIsTheSameFabric) {
    std::string name = GetParam();
    Fabric f = parse_dump(read_data(name), name);
    std::string text = write_ibnetdiscover(f);
    EXPECT_EQ(detect_dump_format(text), DumpFormat::Ibnetdiscover);
    Fabric g = parse_ibnetdiscover(text, "written");
    expect_same_fabric(f, g);
    EXPECT_EQ(write_ibnetdiscover(g), text);  // stable
}

INSTANTIATE_TEST_SUITE_P(AllCaptures, RoundTrip,
                         ::testing::Values("ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt",
                                           "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt",
                                           "iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt",
                                           "iblinkinfo-qdr-1sw-5ca-infiniscale4-36port.txt",
                                           "synthetic-ibnetdiscover-hdr-sharp.txt",
                                           "synthetic-ibdiagnet2-2sw-3ca.net",
                                           "synthetic-iblinkinfo-line-2sw-3ca.txt",
                                           "synthetic-iblinkinfo-could-be.txt",
                                           "ibsim-sx6036-iblinkinfo.txt",
                                           "ibsim-sx6036-iblinkinfo-l.txt",
                                           "ibsim-x5-iblinkinfo-l.txt"));

TEST(Writer, IbsimLayout) {
    Fabric f;
    NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x2c90300a1b2c3, .description = "MF0;leaf01:MQM9700/U1"}, 64);
    NodeId ca = f.add_node({.type = NodeType::CA, .guid = 0xabc0, .description = "gpu01 mlx5_0"}, 1);
    f.node(ca).ports[1].guid = 0xabc1;
    f.node(ca).ports[1].lid = 7;
    f.node(sw).ports[0].lid = 1;
    f.node(sw).lid = 1;
    f.node(ca).lid = 7;
    for (Port& p : f.node(sw).ports) p.guid = 0x2c90300a1b2c3;
    f.connect(sw, 5, ca, 1);
    for (Port* p : {&f.node(sw).ports[5], &f.node(ca).ports[1]}) {
        p->width_active = Width::X4;
        p->speed_active = Speed::NDR;
    }
    f.finalize();
    std::string t = write_ibnetdiscover(f);
    EXPECT_NE(t.find("Switch\t64 \"S-0002c90300a1b2c3\"\t\t# \"MF0;leaf01:MQM9700/U1\" enhanced port 0 lid 1 lmc 0\n"), std::string::npos) << t;
    EXPECT_NE(t.find("[5]\t\"H-000000000000abc0\"[1](abc1) \t\t# \"gpu01 mlx5_0\" lid 7 4xNDR\n"), std::string::npos) << t;
    EXPECT_NE(t.find("Ca\t1 \"H-000000000000abc0\"\t\t# \"gpu01 mlx5_0\"\n"), std::string::npos) << t;
    EXPECT_NE(t.find("[1](abc1) \t\"S-0002c90300a1b2c3\"[5]\t\t# lid 7 lmc 0 \"MF0;leaf01:MQM9700/U1\" lid 1 4xNDR\n"), std::string::npos) << t;
    Fabric g = parse_ibnetdiscover(t, "w");
    expect_same_fabric(f, g);
}

TEST(Writer, UnknownRateAndEmptyDescription) {
    Fabric f;
    NodeId a = f.add_node({.type = NodeType::Switch, .guid = 1}, 2);
    NodeId b = f.add_node({.type = NodeType::Switch, .guid = 2, .description = "two\nlines"}, 2);
    f.connect(a, 1, b, 2);
    f.finalize();
    Fabric g = parse_ibnetdiscover(write_ibnetdiscover(f), "w");
    EXPECT_EQ(g.link_count(), 1u);
    EXPECT_EQ(g.node(*g.find(1)).description, "");
    EXPECT_EQ(g.node(*g.find(2)).description, "two lines");
    EXPECT_EQ(g.node(*g.find(1)).ports[1].rate(), Rate{});
}

TEST(NodeNameMap, ParseAndApply) {
    std::string map_text =
        "# OpenSM node name map\n"
        "0x0008f10500108c5c \"spine-a\"   # trailing comment\n"
        "\n"
        "  3048c749cd0000   compute-001\r\n"
        "0x0002c90200417670 \"leaf 7\"\n"
        "0x0002c90200417670 \"leaf 7\"\n";  // an identical repeat is fine
    NodeNameMap m = parse_node_name_map(map_text, "map");
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m.at(0x0008f10500108c5cu), "spine-a");
    EXPECT_EQ(m.at(0x003048c749cd0000u), "compute-001");
    EXPECT_EQ(m.at(0x0002c90200417670u), "leaf 7");

    const char* name = "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt";
    Fabric f = parse_ibnetdiscover(read_data(name), name);
    EXPECT_EQ(f.find_by_name("MT25408").size(), 89u);
    apply_node_name_map(f, m);
    auto sp = f.find_by_name("spine-a");
    ASSERT_EQ(sp.size(), 1u);
    EXPECT_EQ(f.node(sp[0]).guid, 0x0008f10500108c5cu);
    EXPECT_EQ(f.node(sp[0]).description, "spine-a");
    auto host = f.find_by_name("compute-001");
    ASSERT_EQ(host.size(), 1u);
    EXPECT_EQ(f.node(host[0]).guid, 0x003048c749cd0000u);
    EXPECT_EQ(f.find_by_name("MT25408").size(), 88u);
    EXPECT_EQ(f.find_by_name("leaf 7").size(), 1u);  // switches keep the whole description as name
    EXPECT_TRUE(parse_node_name_map("", "empty").empty());
}

}  // namespace
}  // namespace ibf
