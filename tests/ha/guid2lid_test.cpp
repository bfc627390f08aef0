// guid2lid.h: OpenSM's guid2lid text from a fabric, the parser, and lid_changes.
#include "ibf/guid2lid.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibf/dumps.h"
#include "ibf/error.h"

namespace {

using ibf::Fabric;
using ibf::NodeType;
using ibf::ha::Guid2Lid;
using ibf::ha::LidRange;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A switch (port 0 LID 1) with two CAs: a one-port CA (LID 2) and a two-port CA with LMC 2 on
// both ports (LIDs 4..7 and 8..11), one of its ports also down (no LID).
Fabric small_fabric() {
    Fabric f;
    auto sw = f.add_node({.type = NodeType::Switch, .guid = 0x20}, 8);
    auto a = f.add_node({.type = NodeType::CA, .guid = 0x10, .description = "a HCA-1"}, 1);
    auto b = f.add_node({.type = NodeType::CA, .guid = 0x30, .description = "b HCA-1"}, 2);
    auto c = f.add_node({.type = NodeType::CA, .guid = 0x40, .description = "c HCA-1"}, 1);
    for (auto& p : f.node(sw).ports) p.guid = 0x20;
    f.node(sw).ports[0].lid = 1;
    f.node(sw).ports[3].lid = 1;  // switch external ports never get an entry of their own
    f.node(a).ports[1].guid = 0x11;
    f.node(a).ports[1].lid = 2;
    f.node(b).ports[1].guid = 0x31;
    f.node(b).ports[1].lid = 4;
    f.node(b).ports[1].lmc = 2;
    f.node(b).ports[2].guid = 0x32;
    f.node(b).ports[2].lid = 8;
    f.node(b).ports[2].lmc = 2;
    f.node(c).ports[1].guid = 0x41;  // down: lid 0
    f.connect(sw, 1, a, 1);
    f.connect(sw, 2, b, 1);
    f.connect(sw, 3, b, 2);
    f.finalize();
    return f;
}

TEST(Guid2Lid, TextFromFabricIsOpenSmsFormat) {
    EXPECT_EQ(ibf::ha::guid2lid_text(small_fabric()),
              "0x0000000000000011 0x0002 0x0002\n\n"
              "0x0000000000000020 0x0001 0x0001\n\n"
              "0x0000000000000031 0x0004 0x0007\n\n"
              "0x0000000000000032 0x0008 0x000b\n\n");
}

TEST(Guid2Lid, ParseRoundTrip) {
    const Guid2Lid m = ibf::ha::guid2lid_map(small_fabric());
    EXPECT_EQ(ibf::ha::parse_guid2lid(ibf::ha::guid2lid_text(m), "g"), m);
    EXPECT_EQ(m.size(), 4u);
    EXPECT_EQ(m.at(0x31), (LidRange{4, 7}));
}

// A file OpenSM 3.3.23 wrote (tests/data/ha/fat324-opensm.guid2lid: the 324-host example fabric
// on ibsim, master on node001): 324 CA ports + 27 switches, in OpenSM's hash order.
TEST(Guid2Lid, ParsesAndRewritesAFileOpenSmWrote) {
    const std::string path = std::string(IBF_TEST_DATA) + "/ha/fat324-opensm.guid2lid";
    const std::string text = slurp(path);
    ASSERT_FALSE(text.empty()) << path;
    const Guid2Lid m = ibf::ha::parse_guid2lid(text, path);
    EXPECT_EQ(m.size(), 351u);
    // Same entries, same bytes per entry; only the order differs (we sort by GUID).
    const std::string ours = ibf::ha::guid2lid_text(m);
    EXPECT_EQ(ours.size(), text.size());
    EXPECT_EQ(ibf::ha::parse_guid2lid(ours, "ours"), m);
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) {
            EXPECT_NE(ours.find(line + "\n\n"), std::string::npos) << line;
        }
}

// The same run's ibnetdiscover (from node003): the map we build from that fabric is exactly the
// map OpenSM stored.
TEST(Guid2Lid, MapFromTheFabricEqualsWhatOpenSmStored) {
    const std::string dir = std::string(IBF_TEST_DATA) + "/ha/";
    const Fabric f = ibf::parse_ibnetdiscover(slurp(dir + "fat324.ibnetdiscover"), "fat324.ibnetdiscover");
    const Guid2Lid ours = ibf::ha::guid2lid_map(f);
    const Guid2Lid theirs = ibf::ha::parse_guid2lid(slurp(dir + "fat324-opensm.guid2lid"), "fat324-opensm.guid2lid");
    EXPECT_EQ(ours.size(), 351u);
    EXPECT_EQ(ours, theirs);
    EXPECT_TRUE(ibf::ha::lid_changes(theirs, ours).empty());
}

void expect_error(const std::string& text, const std::string& what) {
    try {
        ibf::ha::parse_guid2lid(text, "cache/guid2lid");
        ADD_FAILURE() << "no error for: " << text;
    } catch (const ibf::InputError& e) {
        EXPECT_EQ(std::string(e.what()), what);
    }
}

TEST(Guid2Lid, BadLinesNameFileAndLine) {
    expect_error("0x0000000000000011 0x0002 0x0002\n\n0x11 0x0003 0x0003\n",
                 "cache/guid2lid:3: GUID \"0x11\" is not 0x + 16 lowercase hex digits (OpenSM would ignore it)");
    expect_error("0x00000000000000AB 0x0002 0x0002\n",
                 "cache/guid2lid:1: GUID \"0x00000000000000AB\" is not 0x + 16 lowercase hex digits (OpenSM would ignore it)");
    expect_error("0x0000000000000011 0x0002\n",
                 "cache/guid2lid:1: expected \"0x<16 hex digits> <first LID> <last LID>\", got \"0x0000000000000011 0x0002\"");
    expect_error("0x0000000000000011 0x0004 0x0002\n",
                 "cache/guid2lid:1: bad LID range \"0x0004 0x0002\" (unicast 1..0xbfff, first <= last)");
    expect_error("0x0000000000000011 0xc000 0xc000\n",
                 "cache/guid2lid:1: bad LID range \"0xc000 0xc000\" (unicast 1..0xbfff, first <= last)");
    expect_error("0x0000000000000011 0x0002 0x0002\n\n0x0000000000000011 0x0003 0x0003\n",
                 "cache/guid2lid:3: GUID 0x0000000000000011 appears twice");
    expect_error("0x0000000000000011 0x0002 0x0003\n\n0x0000000000000012 0x0003 0x0003\n",
                 "cache/guid2lid:3: LID 3 of 0x0000000000000012 is already used by 0x0000000000000011");
    expect_error("0x0000000000000011 0x0002 0x0002\n  0x0003\n",
                 "cache/guid2lid:2: a value continuation line (OpenSM's guid2lid has one line per entry)");
    expect_error(std::string(ibf::ha::kMaxGuid2LidBytes + 1, '\n'),
                 "cache/guid2lid: larger than 16777216 bytes");
}

TEST(Guid2Lid, EmptyAndDecimalAndCrlf) {
    EXPECT_TRUE(ibf::ha::parse_guid2lid("", "g").empty());
    EXPECT_TRUE(ibf::ha::parse_guid2lid("\n\n", "g").empty());
    // OpenSM reads LIDs with strtoul(base 0): decimal is accepted too.
    const auto m = ibf::ha::parse_guid2lid("0x0000000000000011 12 0x000c\r\n\r\n", "g");
    EXPECT_EQ(m.at(0x11), (LidRange{12, 12}));
}

TEST(Guid2Lid, ChangesAreOnlyPortsInBothWithAnotherRange) {
    const Guid2Lid before{{0x11, {2, 2}}, {0x12, {3, 3}}, {0x13, {4, 4}}, {0x14, {5, 5}}};
    const Guid2Lid after{{0x11, {3, 3}}, {0x12, {2, 2}}, {0x13, {4, 4}}, {0x15, {6, 6}}};
    const auto ch = ibf::ha::lid_changes(before, after);
    ASSERT_EQ(ch.size(), 2u);
    EXPECT_EQ(ch[0].port_guid, 0x11u);
    EXPECT_EQ(ch[0].before, (LidRange{2, 2}));
    EXPECT_EQ(ch[0].after, (LidRange{3, 3}));
    EXPECT_EQ(ch[1].port_guid, 0x12u);
    EXPECT_EQ(ch[1].after, (LidRange{2, 2}));
    EXPECT_TRUE(ibf::ha::lid_changes(before, before).empty());
}

TEST(Guid2Lid, MergeKeepsAbsentPortsUnlessTheirLidIsTaken) {
    const Guid2Lid previous{{0x11, {2, 2}}, {0x12, {3, 3}}, {0x13, {4, 5}}, {0x14, {9, 9}}};
    // 0x12 is down (absent); 0x13 is down and LID 5 now belongs to 0x15; 0x14 moved to 10.
    const Guid2Lid current{{0x11, {2, 2}}, {0x14, {10, 10}}, {0x15, {5, 5}}};
    const Guid2Lid want{{0x11, {2, 2}}, {0x12, {3, 3}}, {0x14, {10, 10}}, {0x15, {5, 5}}};
    EXPECT_EQ(ibf::ha::merge_guid2lid(previous, current), want);
    EXPECT_EQ(ibf::ha::merge_guid2lid({}, current), current);
    EXPECT_EQ(ibf::ha::merge_guid2lid(previous, {}), previous);
    // The result always parses back (no LID twice).
    const auto merged = ibf::ha::merge_guid2lid(previous, current);
    EXPECT_EQ(ibf::ha::parse_guid2lid(ibf::ha::guid2lid_text(merged), "m"), merged);
}

}  // namespace
