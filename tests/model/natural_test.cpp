#include "ibf/natural.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

TEST(Natural, DigitRunsCompareByValue) {
    EXPECT_LT(ibf::natural_compare("leaf2", "leaf10"), 0);
    EXPECT_GT(ibf::natural_compare("leaf10", "leaf2"), 0);
    EXPECT_LT(ibf::natural_compare("leaf02", "leaf10"), 0);
    EXPECT_LT(ibf::natural_compare("sw1/2", "sw1/10"), 0);
    EXPECT_EQ(ibf::natural_compare("leaf03", "leaf03"), 0);
}

TEST(Natural, EqualValuesOrderByLeadingZerosSoTheOrderIsStrict) {
    EXPECT_LT(ibf::natural_compare("leaf1", "leaf01"), 0);
    EXPECT_GT(ibf::natural_compare("leaf001", "leaf01"), 0);
    EXPECT_LT(ibf::natural_compare("a0", "a00"), 0);
    EXPECT_NE(ibf::natural_compare("leaf1x", "leaf01x"), 0);
}

TEST(Natural, PrefixesAndBytes) {
    EXPECT_LT(ibf::natural_compare("leaf", "leaf1"), 0);
    EXPECT_LT(ibf::natural_compare("", "a"), 0);
    EXPECT_LT(ibf::natural_compare("A", "a"), 0);
    EXPECT_LT(ibf::natural_compare("z", "\xc3\xa9"), 0);  // bytes as unsigned char
    EXPECT_TRUE(ibf::natural_less("spine9", "spine10"));
    EXPECT_FALSE(ibf::natural_less("spine10", "spine10"));
}

TEST(Natural, SortsAMixedList) {
    std::vector<std::string> v{"leaf10", "leaf01", "leaf2", "leaf1", "core", "leaf10a", "leaf10/3"};
    std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return ibf::natural_less(a, b); });
    EXPECT_EQ(v, (std::vector<std::string>{"core", "leaf1", "leaf01", "leaf2", "leaf10", "leaf10/3", "leaf10a"}));
}

}  // namespace
