// Real-world damage every reader tolerates: CRLF, a UTF-8 BOM, shell-prompt lines before the dump,
// tabs turned into spaces, no final newline. Each variant must give the same fabric as the original.
#include <gtest/gtest.h>

#include "dump_test_util.h"

namespace ibf {
namespace {

using test::read_data;

struct Summary {
    size_t switches, cas, links;
    std::map<std::string, int> rates;
    std::vector<std::pair<Guid, std::string>> nodes;
    bool operator==(const Summary&) const = default;
};

Summary summarize(const Fabric& f) {
    Summary s{f.count(NodeType::Switch), f.count(NodeType::CA), f.link_count(), test::rate_histogram(f), {}};
    for (const Node& n : f.nodes()) s.nodes.emplace_back(n.guid, n.description);
    std::sort(s.nodes.begin(), s.nodes.end());
    return s;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    size_t at = 0;
    while ((at = s.find(from, at)) != std::string::npos) {
        s.replace(at, from.size(), to);
        at += to.size();
    }
    return s;
}

struct Case {
    const char* file;
};

class Quirks : public ::testing::TestWithParam<const char*> {};

TEST_P(Quirks, EveryVariantParsesToTheSameFabric) {
    const std::string name = GetParam();
    const std::string text = read_data(name);
    const Summary want = summarize(parse_dump(text, name));
    ASSERT_GT(want.links, 0u);
    std::vector<std::pair<std::string, std::string>> variants{
        {"crlf", replace_all(text, "\n", "\r\n")},
        {"bom", "\xEF\xBB\xBF" + text},
        {"bom+crlf", "\xEF\xBB\xBF" + replace_all(text, "\n", "\r\n")},
        {"prompt", "[root@mgmt ~]# " + std::string(name.find("iblinkinfo") == 0 ? "iblinkinfo" : "ibnetdiscover") + "\n" + text},
        {"prompt2", "admin@login01:~$ sudo ibnetdiscover > out\nWarning: something harmless\n" + text + "[root@mgmt ~]# \n"},
        {"spaces", replace_all(text, "\t", "    ")},
        {"single-spaces", replace_all(text, "\t", " ")},
        {"no-final-newline", text.substr(0, text.find_last_not_of("\n") + 1)},
        {"all", "\xEF\xBB\xBF[root@mgmt ~]# cat dump\r\n" +
                    replace_all(replace_all(text.substr(0, text.find_last_not_of("\n") + 1), "\t", "  "), "\n", "\r\n")},
    };
    for (const auto& [what, v] : variants) {
        SCOPED_TRACE(what);
        auto fmt = detect_dump_format(v);
        ASSERT_TRUE(fmt);
        EXPECT_EQ(*fmt, *detect_dump_format(text));
        EXPECT_EQ(summarize(parse_dump(v, name)), want);
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Quirks,
                         ::testing::Values("ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt",
                                           "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt",
                                           "iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt",
                                           "iblinkinfo-qdr-1sw-5ca-infiniscale4-36port.txt",
                                           "synthetic-ibnetdiscover-hdr-sharp.txt",
                                           "synthetic-ibdiagnet2-2sw-3ca.net",
                                           "synthetic-iblinkinfo-line-2sw-3ca.txt",
                                           "synthetic-iblinkinfo-could-be.txt"));

TEST(Quirks, ManagedSwitchDescriptionsGiveNames) {
    const char* name = "ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
    Fabric f = parse_ibnetdiscover(read_data(name), name);
    for (int i = 1; i <= 8; ++i) {
        auto ids = f.find_by_name("ib" + std::to_string(i));
        ASSERT_EQ(ids.size(), 1u);
        EXPECT_EQ(f.node(ids[0]).description, "MF0;ib" + std::to_string(i) + ":SX6036/U1");
    }
}

TEST(Quirks, IblinkinfoSwitchHeaderWithColonsInDescription) {
    std::string text =
        "Switch: 0x0002c90200aa0001 MF0;leaf:01:SX6036/U1:\n"
        "           1    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       7    1[  ] \"host7 mlx4_0\" ( )\n"
        "CA: host7 mlx4_0:\n"
        "      0x0002c90300bb0071      7    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       1    1[  ] \"MF0;leaf:01:SX6036/U1\" ( )";
    Fabric f = parse_iblinkinfo(text, "t");
    EXPECT_EQ(f.node(*f.find(0x0002c90200aa0001u)).description, "MF0;leaf:01:SX6036/U1");
    EXPECT_EQ(f.link_count(), 1u);
}

}  // namespace
}  // namespace ibf
