// terminal_safe(): what a text report may print of fabric-supplied names.
#include "ibf/text.h"

#include <gtest/gtest.h>

using ibf::terminal_safe;

TEST(TerminalSafe, ControlAndInvalidBytesBecomeHex) {
    EXPECT_EQ(terminal_safe("leaf01 HCA-1"), "leaf01 HCA-1");
    EXPECT_EQ(terminal_safe("a\x1b[31mred"), "a\\x1b[31mred");
    EXPECT_EQ(terminal_safe(std::string("nul\0tab\tnl\nbs\x7f", 14)), "nul\\x00tab\\x09nl\\x0abs\\x7f");
    EXPECT_EQ(terminal_safe("csi\x9b" "2J"), "csi\\x9b2J");          // a lone C1 byte
    EXPECT_EQ(terminal_safe("utf8-c1 \xc2\x9b"), "utf8-c1 \\xc2\\x9b");  // U+009B encoded
    EXPECT_EQ(terminal_safe("Gr\xc3\xbc\xc3\x9f" "e \xe2\x86\x92 \xf0\x9f\x94\x8c"), "Gr\xc3\xbc\xc3\x9f" "e \xe2\x86\x92 \xf0\x9f\x94\x8c");
    EXPECT_EQ(terminal_safe("trunc \xe2\x86"), "trunc \\xe2\\x86");
    EXPECT_EQ(terminal_safe("overlong \xc0\xaf"), "overlong \\xc0\\xaf");
    EXPECT_EQ(terminal_safe("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
    EXPECT_EQ(terminal_safe(""), "");
}

TEST(Trim, AsciiWhiteSpaceAtBothEndsWhateverTheLocale) {
    EXPECT_EQ(ibf::trim(" \tleaf01 \r"), "leaf01");
    EXPECT_EQ(ibf::trim("\n\v\fa b\f\v\n"), "a b");  // inner space kept
    EXPECT_EQ(ibf::trim(""), "");
    EXPECT_EQ(ibf::trim(" \t\r\n"), "");
    EXPECT_EQ(ibf::trim("\xa0x\xa0"), "\xa0x\xa0");  // a NBSP byte is not ASCII white space
    const std::string_view s = "  x  ";
    EXPECT_EQ(ibf::trim(s).data(), s.data() + 2);  // a view into its argument
}
