// The LFT dump reader on the three formats as ibsim + OpenSM 3.3.23 wrote them for one fabric
// (tests/data/ibsim-2sw2sp-4ca-*), and its errors.
#include <gtest/gtest.h>

#include "dump_test_util.h"
#include "ibf/lft_dump.h"

namespace ibf {
namespace {

using test::read_data;

const SwitchLft* table(const std::vector<SwitchLft>& t, Guid g) {
    for (const SwitchLft& s : t)
        if (s.switch_guid == g) return &s;
    return nullptr;
}

std::string err(std::string_view text) {
    try {
        parse_lft_dump(text, "lfts.txt");
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(LftDump, DumpLftsAndOpenSmLftsDumpGiveTheSameTables) {
    const auto a = parse_lft_dump(read_data("ibsim-2sw2sp-4ca-dump_lfts.txt"), "dump_lfts.txt");
    const auto b = parse_lft_dump(read_data("ibsim-2sw2sp-4ca-opensm-lfts.dump"), "opensm-lfts.dump");
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(b.size(), 4u);
    for (const SwitchLft& t : a) {
        const SwitchLft* o = table(b, t.switch_guid);
        ASSERT_NE(o, nullptr) << guid_hex(t.switch_guid);
        EXPECT_EQ(t.port_by_lid(), o->port_by_lid()) << guid_hex(t.switch_guid);
    }
    // leaf01 (0x200000): node01 (LID 1) on port 1, itself (LID 2) port 0, node03 (LID 7) up port 5.
    const SwitchLft* leaf01 = table(a, 0x200000);
    ASSERT_NE(leaf01, nullptr);
    ASSERT_EQ(leaf01->port_by_lid().size(), 9u);
    EXPECT_EQ(leaf01->port_by_lid()[0], kLftNoPath);
    EXPECT_EQ(leaf01->port_by_lid()[1], 1);
    EXPECT_EQ(leaf01->port_by_lid()[2], 0);
    EXPECT_EQ(leaf01->port_by_lid()[7], 5);
    EXPECT_EQ(leaf01->port_by_lid()[8], 6);
}

TEST(LftDump, OpenSmFdbsFormat) {
    const auto t = parse_lft_dump("dump_ucast_routes: Switch 0x0000000000200000\n"
                                  "LID    : Port : Hops : Optimal\n"
                                  "0x0001 : 001  : 01   : yes\n"
                                  "0x0003 : 005  : 02   : yes\n",
                                  "opensm.fdbs");
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].switch_guid, 0x200000u);
    EXPECT_EQ(t[0].port_by_lid(), (std::vector<uint8_t>{255, 1, 255, 5}));
}

TEST(LftDump, ErrorsNameFileLineAndColumn) {
    EXPECT_EQ(err("0x0001 001 : (x)\n"), "lfts.txt:1:1: a forwarding entry before any switch header");
    EXPECT_EQ(err("Unicast lids [0x0-0x8] of switch Lid 2 (leaf01):\n"),
              "lfts.txt:1:1: switch header without a GUID: Unicast lids [0x0-0x8] of switch Lid 2 (leaf01):");
    const std::string h = "Unicast lids [0x0-0x8] of switch Lid 2 guid 0x0000000000200000 (leaf01):\n";
    EXPECT_EQ(err(h + "0xC000 001 : x\n"), "lfts.txt:2:1: LID 0xC000 is outside the unicast range (1..0xBFFF)");
    EXPECT_EQ(err(h + "0x0001 300 : x\n"), "lfts.txt:2:8: port 300 is not a switch port (0..254)");
    EXPECT_EQ(err(h + "0x0001 : x\n"), "lfts.txt:2:10: expected the egress port after the LID");
    EXPECT_EQ(err(h + h), "lfts.txt:2:1: switch 0x0000000000200000 is listed twice");
}

}  // namespace
}  // namespace ibf
