// The same fabric in three formats. tests/data/ibsim-*-iblinkinfo*.txt were produced by the real
// infiniband-diags tools (iblinkinfo and iblinkinfo -l, build 44.0) on ibsim 0.10 loaded with
// write_ibnetdiscover() of the two real ibnetdiscover captures (OpenSM 3.3.23 assigned the LIDs).
// (ibnetdiscover on that simulation printed the capture's own lines back, in another order.)
// Every reader must find the same cables and rates. CA node GUIDs differ by design between the
// formats (iblinkinfo prints only port GUIDs), so links are compared by port: a CA end by its port
// GUID, a switch end by switch GUID and port number.
#include <gtest/gtest.h>

#include <set>

#include "dump_test_util.h"

namespace ibf {
namespace {

using test::read_data;

std::set<std::string> link_keys(const Fabric& f) {
    auto end = [&](NodeId n, int p) {
        const Node& node = f.node(n);
        if (node.type == NodeType::Switch) return guid_hex(node.guid) + "/" + std::to_string(p);
        return "port " + guid_hex(node.ports[p].guid);
    };
    std::set<std::string> out;
    for (const Link& l : f.links()) {
        std::string a = end(l.a, l.pa), b = end(l.b, l.pb);
        if (b < a) std::swap(a, b);
        out.insert(a + " <-> " + b + " " + to_string(f.node(l.a).ports[l.pa].rate()));
    }
    return out;
}

struct Trio {
    const char* ibnetdiscover;
    const char* iblinkinfo;
    const char* iblinkinfo_l;
    size_t switches, cas, links;
};

class CrossFormat : public ::testing::TestWithParam<Trio> {};

TEST_P(CrossFormat, SameCablesAndRates) {
    const Trio& t = GetParam();
    Fabric a = parse_ibnetdiscover(read_data(t.ibnetdiscover), t.ibnetdiscover);
    Fabric b = parse_iblinkinfo(read_data(t.iblinkinfo), t.iblinkinfo);
    Fabric c = parse_iblinkinfo(read_data(t.iblinkinfo_l), t.iblinkinfo_l);
    for (const Fabric* f : {&a, &b, &c}) {
        EXPECT_EQ(f->count(NodeType::Switch), t.switches);
        EXPECT_EQ(f->count(NodeType::CA), t.cas);
        EXPECT_EQ(f->link_count(), t.links);
        test::expect_consistent(*f);
    }
    auto ka = link_keys(a);
    EXPECT_EQ(ka.size(), t.links);
    EXPECT_EQ(link_keys(b), ka);
    EXPECT_EQ(link_keys(c), ka);
    // Same descriptions and switch LIDs.
    for (const Node& n : a.nodes()) {
        if (n.type != NodeType::Switch) continue;
        for (const Fabric* f : {&b, &c}) {
            auto id = f->find(n.guid);
            ASSERT_TRUE(id);
            EXPECT_EQ(f->node(*id).description, n.description);
            EXPECT_EQ(f->node(*id).lid, n.lid);
        }
    }
    // The -l form and the default form agree on CA identity (lowest port's GUID) as well.
    for (const Node& n : b.nodes()) {
        auto id = c.find(n.guid);
        ASSERT_TRUE(id) << guid_hex(n.guid);
        EXPECT_EQ(c.node(*id).type, n.type);
        EXPECT_EQ(c.node(*id).description, n.description);
    }
    // ibsim reports every port as 1x..12x capable: iblinkinfo says "Could be 12X" and the readers keep it.
    for (const Link& k : b.links()) EXPECT_EQ(max_width(b.node(k.a).ports[k.pa].width_supported), Width::X12);
}

INSTANTIATE_TEST_SUITE_P(
    Ibsim, CrossFormat,
    ::testing::Values(Trio{"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", "ibsim-sx6036-iblinkinfo.txt",
                           "ibsim-sx6036-iblinkinfo-l.txt", 8, 144, 192},
                      Trio{"ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt", "ibsim-x5-iblinkinfo.txt",
                           "ibsim-x5-iblinkinfo-l.txt", 11, 89, 159}));

TEST(CrossFormat, DdrHostsCouldRunQdr) {
    // "(Could be 12X Could be 10.0 Gbps)" on the 46 DDR port lines (grep -c) = 23 links at both ends.
    Fabric f = parse_iblinkinfo(read_data("ibsim-x5-iblinkinfo.txt"), "x5");
    int ddr = 0;
    for (const Link& l : f.links()) {
        const Port& p = f.node(l.a).ports[l.pa];
        if (p.speed_active != Speed::DDR) continue;
        ++ddr;
        EXPECT_EQ(max_speed(p.speed_supported), Speed::QDR);
        EXPECT_EQ(max_speed(f.node(l.b).ports[l.pb].speed_supported), Speed::QDR);
    }
    EXPECT_EQ(ddr, 23);
}

}  // namespace
}  // namespace ibf
