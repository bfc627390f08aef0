// Bad input: every reader throws ibf::InputError naming file:line:column and what was expected, and
// never crashes or throws anything else, even on random bytes or mutated real dumps.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "dump_test_util.h"

namespace ibf {
namespace {

using test::read_data;

// Two switches and one CA, every link printed at both ends.
const std::string kGood =
    "vendid=0x2c9\n"
    "devid=0xc738\n"
    "sysimgguid=0x10\n"
    "switchguid=0x10(10)\n"
    "Switch\t8 \"S-0000000000000010\"\t\t# \"MF0;sw1:SX6036/U1\" enhanced port 0 lid 1 lmc 0\n"  // line 5
    "[1]\t\"H-0000000000000030\"[1](31) \t\t# \"host1 mlx4_0\" lid 3 4xQDR\n"                   // line 6
    "[2]\t\"S-0000000000000020\"[2]\t\t# \"MF0;sw2:SX6036/U1\" lid 2 4xFDR10\n"                  // line 7
    "\n"
    "switchguid=0x20(20)\n"
    "Switch\t8 \"S-0000000000000020\"\t\t# \"MF0;sw2:SX6036/U1\" enhanced port 0 lid 2 lmc 0\n"  // line 10
    "[2]\t\"S-0000000000000010\"[2]\t\t# \"MF0;sw1:SX6036/U1\" lid 1 4xFDR10\n"                  // line 11
    "\n"
    "caguid=0x30\n"
    "Ca\t2 \"H-0000000000000030\"\t\t# \"host1 mlx4_0\"\n"                                        // line 14
    "[1](31) \t\"S-0000000000000010\"[1]\t\t# lid 3 lmc 0 \"MF0;sw1:SX6036/U1\" lid 1 4xQDR\n";  // line 15

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
}

// Parses and returns the InputError; fails the test when there is none.
InputError expect_error(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const InputError& e) {
        return e;
    }
    ADD_FAILURE() << "expected an InputError";
    return InputError("", 0, 0, "");
}

InputError net_error(const std::string& text) {
    return expect_error([&] { parse_ibnetdiscover(text, "bad.txt"); });
}

TEST(Errors, GoodBaseline) {
    Fabric f = parse_ibnetdiscover(kGood, "good.txt");
    EXPECT_EQ(f.size(), 3u);
    EXPECT_EQ(f.link_count(), 2u);
}

TEST(Errors, UnknownRate) {
    auto e = net_error(replace_once(kGood, "lid 3 4xQDR\n", "lid 3 4xQQR\n"));
    EXPECT_EQ(e.file(), "bad.txt");
    EXPECT_EQ(e.line(), 6);
    EXPECT_GT(e.column(), 40);
    EXPECT_NE(e.message().find("unknown link rate \"4xQQR\""), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("expected"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).rfind("bad.txt:6:" + std::to_string(e.column()) + ": unknown link rate", 0), 0u) << e.what();
}

// Garbage where a rate should be is quoted short and escaped: one readable line, not raw bytes.
TEST(Errors, GarbageIsQuotedShortAndEscaped) {
    auto e = net_error(replace_once(kGood, "lid 3 4xQDR\n", "lid 3 4x\x01\xff" + std::string(300, 'Q') + "\n"));
    EXPECT_EQ(e.line(), 6);
    EXPECT_NE(e.message().find("unknown link rate \"4x\\x01\\xff" + std::string(56, 'Q') + "...\""), std::string::npos)
        << e.what();
    EXPECT_LT(e.message().size(), 200u) << e.what();
}

TEST(Errors, TruncatedDumpLinksToUndefinedNode) {
    std::string cut = kGood.substr(0, kGood.find("caguid=0x30"));
    auto e = net_error(cut);
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.column(), 5);  // the remote id after "[1]\t"
    EXPECT_NE(e.message().find("never defines"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("H-0000000000000030"), std::string::npos) << e.what();
}

TEST(Errors, PortBeyondPortCount) {
    auto e = net_error(replace_once(kGood, "[2]\t\"S-0000000000000010\"[2]", "[9]\t\"S-0000000000000010\"[2]"));
    EXPECT_EQ(e.line(), 11);
    EXPECT_EQ(e.column(), 2);
    EXPECT_NE(e.message().find("beyond the node's port count 8"), std::string::npos) << e.what();
    auto r = net_error(replace_once(kGood, "\"H-0000000000000030\"[1](31)", "\"H-0000000000000030\"[3](31)"));
    EXPECT_EQ(r.line(), 6);
    EXPECT_NE(r.message().find("remote port 3 is beyond the port count 2"), std::string::npos) << r.what();
}

// Port 0 is a switch's management port and never carries a cable: a "[0]" port line (local or remote)
// is refused with file:line:column, never linked.
TEST(Errors, PortZeroIsRefused) {
    auto e = net_error(replace_once(kGood, "[2]\t\"S-0000000000000010\"[2]", "[0]\t\"S-0000000000000010\"[2]"));
    EXPECT_EQ(e.file(), "bad.txt");
    EXPECT_EQ(e.line(), 11);
    EXPECT_EQ(e.column(), 2);
    EXPECT_NE(e.message().find("port 0 is beyond the node's port count 8 (expected 1..8)"), std::string::npos) << e.what();
    auto r = net_error(replace_once(kGood, "\"H-0000000000000030\"[1](31)", "\"H-0000000000000030\"[0](31)"));
    EXPECT_EQ(r.line(), 6);
    EXPECT_NE(r.message().find("remote port 0 is beyond the port count 2"), std::string::npos) << r.what();

    const std::string good =
        "Switch: 0x0002c90200aa0001 sw:\n"
        "           1    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       7    1[  ] \"host7 mlx4_0\" ( )\n"
        "CA: host7 mlx4_0:\n"
        "      0x0002c90300bb0071      7    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       1    1[  ] \"sw\" ( )\n";
    auto l = expect_error([&] { parse_iblinkinfo(replace_once(good, "           1    1[  ]", "           1    0[  ]"), "l.txt"); });
    EXPECT_EQ(l.file(), "l.txt");
    EXPECT_EQ(l.line(), 2);
    EXPECT_NE(l.message().find("port 0 is not a link port (expected 1..255)"), std::string::npos) << l.what();
    auto lr = expect_error([&] { parse_iblinkinfo(replace_once(good, "==>       1    1[  ] \"sw\"", "==>       1    0[  ] \"sw\""), "l.txt"); });
    EXPECT_EQ(lr.line(), 4);
    EXPECT_NE(lr.message().find("remote port 0 is not a link port"), std::string::npos) << lr.what();
}

// A port whose cable comes back to itself is refused (a loopback between two different ports of one
// switch is a real cable and is not what this refuses).
TEST(Errors, PortLinkedToItselfIsRefused) {
    auto e = net_error(replace_once(kGood, "lid 2 4xFDR10\n",
                                    "lid 2 4xFDR10\n[3]\t\"S-0000000000000010\"[3]\t\t# \"MF0;sw1:SX6036/U1\" lid 1 4xQDR\n"));
    EXPECT_EQ(e.file(), "bad.txt");
    EXPECT_EQ(e.line(), 8);
    EXPECT_NE(e.message().find("port 3 is linked to itself"), std::string::npos) << e.what();
}

TEST(Errors, MalformedHeaders) {
    auto e = net_error(replace_once(kGood, "Switch\t8 \"S-0000000000000020\"", "Switch\tx \"S-0000000000000020\""));
    EXPECT_EQ(e.line(), 10);
    EXPECT_EQ(e.column(), 8);
    EXPECT_NE(e.message().find("expected the number of ports"), std::string::npos) << e.what();
    auto q = net_error(replace_once(kGood, "Ca\t2 \"H-0000000000000030\"", "Ca\t2 H-0000000000000030"));
    EXPECT_EQ(q.line(), 14);
    EXPECT_NE(q.message().find("node id"), std::string::npos) << q.what();
    auto t = net_error(replace_once(kGood, "Ca\t2 \"H-0000000000000030\"", "Ca\t2 \"S-0000000000000030\""));
    EXPECT_NE(t.message().find("does not match node type"), std::string::npos) << t.what();
    auto l = net_error(replace_once(kGood, "port 0 lid 2 lmc 0", "port 0 lid two lmc 0"));
    EXPECT_EQ(l.line(), 10);
    EXPECT_NE(l.message().find("expected a LID"), std::string::npos) << l.what();
    auto v = net_error(replace_once(kGood, "vendid=0x2c9", "vendid=zz"));
    EXPECT_EQ(v.line(), 1);
    EXPECT_EQ(v.column(), 8);
    auto g = net_error(replace_once(kGood, "Switch\t8", "Switch\t8 garbage"));
    EXPECT_EQ(g.line(), 5);
    auto junk = net_error(replace_once(kGood, "\ncaguid", "\nthis is not a dump line\ncaguid"));
    EXPECT_EQ(junk.line(), 13);
    EXPECT_EQ(junk.column(), 1);
}

TEST(Errors, DuplicateNodeGuid) {
    std::string dup = kGood + "\ncaguid=0x30\nCa\t2 \"H-0000000000000030\"\t\t# \"again\"\n";
    auto e = net_error(dup);
    EXPECT_EQ(e.line(), 18);
    EXPECT_NE(e.message().find("duplicate node GUID 0x0000000000000030 (first defined at line 14)"), std::string::npos) << e.what();
}

TEST(Errors, DuplicatePortAndDisagreeingEnds) {
    // The same port listed twice.
    auto d = net_error(replace_once(kGood, "[2]\t\"S-0000000000000020\"[2]", "[1]\t\"S-0000000000000020\"[2]"));
    EXPECT_EQ(d.line(), 7);
    EXPECT_NE(d.message().find("listed twice"), std::string::npos) << d.what();
    // sw2 says its port 2 goes to sw1 port 3, sw1 says port 2 -> sw2 port 2.
    auto x = net_error(replace_once(kGood, "[2]\t\"S-0000000000000010\"[2]", "[2]\t\"S-0000000000000010\"[3]"));
    EXPECT_EQ(x.line(), 11);
    EXPECT_NE(x.message().find("disagree"), std::string::npos) << x.what();
    // A second cable into a port that already has one.
    auto y = net_error(replace_once(kGood, "[2]\t\"S-0000000000000010\"[2]", "[3]\t\"S-0000000000000010\"[1]"));
    EXPECT_NE(y.message().find("disagree"), std::string::npos) << y.what();
    // Rates differ between the two ends.
    auto r = net_error(replace_once(kGood, "lid 1 4xFDR10\n", "lid 1 4xQDR\n"));
    EXPECT_EQ(r.line(), 11);
    EXPECT_NE(r.message().find("disagree on the rate"), std::string::npos) << r.what();
}

TEST(Errors, IblinkinfoErrors) {
    const std::string good =
        "Switch: 0x0002c90200aa0001 sw:\n"
        "           1    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       7    1[  ] \"host7 mlx4_0\" ( )\n"
        "CA: host7 mlx4_0:\n"
        "      0x0002c90300bb0071      7    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       1    1[  ] \"sw\" ( )\n";
    EXPECT_EQ(parse_iblinkinfo(good, "l.txt").link_count(), 1u);
    auto rate = expect_error([&] { parse_iblinkinfo(replace_once(good, "4X          10.0 Gbps", "4X          11.0 Gbps"), "l.txt"); });
    EXPECT_EQ(rate.line(), 2);
    EXPECT_NE(rate.message().find("unknown link rate"), std::string::npos) << rate.what();
    auto state = expect_error([&] { parse_iblinkinfo(replace_once(good, "Active/  LinkUp)==>       7", "Fine/  LinkUp)==>       7"), "l.txt"); });
    EXPECT_NE(state.message().find("unknown port state"), std::string::npos) << state.what();
    auto disagree = expect_error([&] { parse_iblinkinfo(replace_once(good, "==>       1    1[  ] \"sw\"", "==>       1    2[  ] \"sw\""), "l.txt"); });
    EXPECT_EQ(disagree.line(), 4);
    EXPECT_NE(disagree.message().find("beyond the port count"), std::string::npos) << disagree.what();
    auto dupport = expect_error([&] {
        parse_iblinkinfo(good + "      0x0002c90300bb0071      7    1[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n", "l.txt");
    });
    EXPECT_EQ(dupport.line(), 5);
    EXPECT_NE(dupport.message().find("listed twice"), std::string::npos) << dupport.what();
    auto dupnode = expect_error([&] { parse_iblinkinfo(good + "Switch: 0x0002c90200aa0001 sw:\n", "l.txt"); });
    EXPECT_EQ(dupnode.line(), 5);
    EXPECT_NE(dupnode.message().find("duplicate node GUID"), std::string::npos) << dupnode.what();
    auto cut = expect_error([&] { parse_iblinkinfo(good.substr(0, good.size() - 40), "l.txt"); });
    EXPECT_EQ(cut.line(), 4);
    auto arrow = expect_error([&] { parse_iblinkinfo(replace_once(good, ")==>       7", ")=>       7"), "l.txt"); });
    EXPECT_EQ(arrow.line(), 2);
    EXPECT_NE(arrow.message().find(")==>"), std::string::npos) << arrow.what();
    auto could = expect_error([&] { parse_iblinkinfo(replace_once(good, "\"host7 mlx4_0\" ( )", "\"host7 mlx4_0\" ( Could be 3X)"), "l.txt"); });
    EXPECT_NE(could.message().find("unknown capability"), std::string::npos) << could.what();
}

TEST(Errors, NodeNameMapErrors) {
    auto e = expect_error([] { parse_node_name_map("0x10 \"a\"\nnot-a-guid \"b\"\n", "map"); });
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 1);
    auto n = expect_error([] { parse_node_name_map("0x10\n", "map"); });
    EXPECT_NE(n.message().find("expected a name"), std::string::npos);
    auto d = expect_error([] { parse_node_name_map("0x10 a\n0x10 b\n", "map"); });
    EXPECT_EQ(d.line(), 2);
    EXPECT_NE(d.message().find("already mapped"), std::string::npos);
}

// Feeds `text` to every reader: each must return a Fabric or throw InputError, nothing else.
void survive(const std::string& text) {
    for (auto* parse : {&parse_ibnetdiscover, &parse_iblinkinfo, &parse_ibdiagnet_net, &parse_dump}) {
        try {
            Fabric f = parse(text, "fuzz");
            test::expect_consistent(f);
        } catch (const InputError& e) {
            EXPECT_FALSE(e.message().empty());
        }
    }
    try {
        parse_node_name_map(text, "fuzz");
    } catch (const InputError&) {
    }
    (void)detect_dump_format(text);
}

TEST(Fuzz, RandomBytes) {
    std::mt19937 rng(12345);
    for (int i = 0; i < 1500; ++i) {
        std::string s(rng() % 400, '\0');
        for (char& c : s) c = static_cast<char>(rng() & 0xff);
        survive(s);
        // random lines made of dump tokens
        static const char* tok[] = {"Switch", "Ca", "Rt", "\t", " ", "36", "\"S-0000000000000001\"", "\"H-0000000000000002\"",
                                    "[1]", "[2]", "(3)", "#", "\"desc\"", "lid", "7", "lmc", "4xQDR", "\n", "==(", ")==>",
                                    "Active/", "LinkUp", "CA: x:", "Switch: 0x1 y:", "0x01", "[  ]", "Could be", "vendid=0x2",
                                    "switchguid=0x1(1)", "caguid=0x2", "\"", "]", "[", "255", "0", "99999999999999999999"};
        std::string t;
        int n = static_cast<int>(rng() % 60);
        for (int k = 0; k < n; ++k) t += tok[rng() % (sizeof tok / sizeof *tok)];
        survive(t);
    }
}

TEST(Fuzz, MutatedRealDumps) {
    const std::vector<std::string> files{"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt",
                                         "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt",
                                         "iblinkinfo-qdr-1sw-8ca-infiniscale4-teaker.txt",
                                         "iblinkinfo-qdr-1sw-5ca-infiniscale4-36port.txt",
                                         "synthetic-ibnetdiscover-hdr-sharp.txt",
                                         "synthetic-ibdiagnet2-2sw-3ca.net",
                                         "synthetic-iblinkinfo-line-2sw-3ca.txt",
                                         "synthetic-iblinkinfo-could-be.txt"};
    std::vector<std::string> texts;
    for (const auto& f : files) texts.push_back(read_data(f));
    std::mt19937 rng(4242);
    const char specials[] = "[]()\"#=:/ \t\n0123456789xX-SH";
    int errors = 0, ok = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string s = texts[rng() % texts.size()];
        if (s.size() > 6000) {  // keep big captures quick: a window of whole lines
            size_t from = s.find('\n', rng() % (s.size() - 6000));
            s = s.substr(from + 1, 6000);
        }
        int edits = 1 + static_cast<int>(rng() % 8);
        for (int k = 0; k < edits && !s.empty(); ++k) {
            size_t at = rng() % s.size();
            switch (rng() % 5) {
                case 0: s[at] = specials[rng() % (sizeof specials - 1)]; break;
                case 1: s.erase(at, 1 + rng() % 20); break;
                case 2: s.insert(at, 1, static_cast<char>(rng() & 0xff)); break;
                case 3: s = s.substr(0, at); break;  // truncate
                case 4: {                            // duplicate a line
                    size_t b = s.rfind('\n', at);
                    b = b == std::string::npos ? 0 : b + 1;
                    size_t e = s.find('\n', at);
                    std::string line = s.substr(b, e == std::string::npos ? std::string::npos : e - b + 1);
                    s.insert(b, line);
                    break;
                }
            }
        }
        try {
            Fabric f = parse_dump(s, "mutated");
            test::expect_consistent(f);
            ++ok;
        } catch (const InputError&) {
            ++errors;
        }
    }
    // Both outcomes happen: mutations are not all harmless and not all fatal.
    EXPECT_GT(errors, 100);
    EXPECT_GT(ok, 100);
}

}  // namespace
}  // namespace ibf
