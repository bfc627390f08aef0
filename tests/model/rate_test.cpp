#include "ibf/rate.h"

#include <gtest/gtest.h>

using namespace ibf;

TEST(Rate, ParsesCompactForms) {
    EXPECT_EQ(parse_rate("4xHDR"), (Rate{Width::X4, Speed::HDR}));
    EXPECT_EQ(parse_rate("4XHDR"), (Rate{Width::X4, Speed::HDR}));
    EXPECT_EQ(parse_rate("2xNDR"), (Rate{Width::X2, Speed::NDR}));
    EXPECT_EQ(parse_rate("12xEDR"), (Rate{Width::X12, Speed::EDR}));
    EXPECT_EQ(parse_rate("4xFDR10"), (Rate{Width::X4, Speed::FDR10}));
    EXPECT_EQ(parse_rate("1xXDR"), (Rate{Width::X1, Speed::XDR}));
    EXPECT_EQ(parse_rate("4X HDR"), (Rate{Width::X4, Speed::HDR}));
}

TEST(Rate, ParsesIblinkinfoAndIbstatForms) {
    EXPECT_EQ(parse_rate("4X 53.125 Gbps"), (Rate{Width::X4, Speed::HDR}));
    EXPECT_EQ(parse_rate("4X          10.0 Gbps"), (Rate{Width::X4, Speed::QDR}));
    EXPECT_EQ(parse_rate("4X 14.0625 Gbps"), (Rate{Width::X4, Speed::FDR}));
    EXPECT_EQ(parse_rate("4X 25.78125 Gbps"), (Rate{Width::X4, Speed::EDR}));
    EXPECT_EQ(parse_rate("4X 10.3125 Gbps"), (Rate{Width::X4, Speed::FDR10}));
    EXPECT_EQ(parse_rate("200 Gb/sec (4X HDR)"), (Rate{Width::X4, Speed::HDR}));
    EXPECT_EQ(parse_rate("40 Gb/sec (4X)"), (Rate{Width::X4, Speed::QDR}));
    EXPECT_EQ(parse_rate("4X 10.0 Gbps FDR10"), (Rate{Width::X4, Speed::FDR10}));
}

TEST(Rate, PartialRates) {
    EXPECT_EQ(parse_rate("4x"), (Rate{Width::X4, Speed::Unknown}));
    EXPECT_EQ(parse_rate("HDR"), (Rate{Width::Unknown, Speed::HDR}));
    EXPECT_EQ(to_string(Rate{Width::X4, Speed::Unknown}), "4x");
}

TEST(Rate, RejectsGarbage) {
    EXPECT_FALSE(parse_rate(""));
    EXPECT_FALSE(parse_rate("4xZDR"));
    EXPECT_FALSE(parse_rate("3xHDR"));
    EXPECT_FALSE(parse_rate("fast"));
    EXPECT_FALSE(parse_rate("4X 11.0 Gbps"));
    EXPECT_FALSE(parse_rate("4X 10.0 furlongs"));
}

TEST(Rate, PrintsTheWayIbPeopleWriteIt) {
    EXPECT_EQ(to_string(Rate{Width::X4, Speed::HDR}), "4xHDR");
    EXPECT_EQ(to_string(Rate{Width::X2, Speed::NDR}), "2xNDR");
    EXPECT_EQ(to_string(Rate{}), "?");
    for (auto w : {Width::X1, Width::X2, Width::X4, Width::X8, Width::X12})
        for (int s = 1; s <= static_cast<int>(Speed::XDR); ++s) {
            Rate r{w, static_cast<Speed>(s)};
            EXPECT_EQ(parse_rate(to_string(r)), r) << to_string(r);
        }
}

TEST(Rate, ComparesInGbps) {
    EXPECT_DOUBLE_EQ(parse_rate("4xHDR")->gbps(), 200);
    EXPECT_DOUBLE_EQ(parse_rate("4xEDR")->gbps(), 100);
    EXPECT_DOUBLE_EQ(parse_rate("4xQDR")->gbps(), 32);
    EXPECT_DOUBLE_EQ(parse_rate("4xFDR10")->gbps(), 40);
    EXPECT_GT(parse_rate("4xFDR10")->gbps(), parse_rate("4xQDR")->gbps());
    EXPECT_LT(parse_rate("1xHDR")->gbps(), parse_rate("4xEDR")->gbps());
    EXPECT_DOUBLE_EQ(parse_rate("2xNDR")->gbps(), parse_rate("4xHDR")->gbps());
    EXPECT_EQ(Rate{}.gbps(), 0);
}

TEST(Rate, Masks) {
    EXPECT_EQ(max_width(width_bit(Width::X1) | width_bit(Width::X4)), Width::X4);
    EXPECT_EQ(max_width(0), Width::Unknown);
    EXPECT_EQ(max_speed(speed_bit(Speed::SDR) | speed_bit(Speed::QDR) | speed_bit(Speed::EDR)), Speed::EDR);
}

TEST(Mtu, Codes) {
    EXPECT_EQ(mtu_from_code(1), 256);
    EXPECT_EQ(mtu_from_code(5), 4096);
    EXPECT_EQ(mtu_from_code(0), 0);
    EXPECT_EQ(mtu_from_code(6), 0);
    EXPECT_EQ(mtu_to_code(2048), 4);
    EXPECT_EQ(mtu_to_code(3000), 0);
    EXPECT_EQ(parse_mtu("4096"), 4096);
    EXPECT_EQ(parse_mtu("IBV_MTU_2048"), 2048);
    EXPECT_FALSE(parse_mtu("9000"));
    EXPECT_FALSE(parse_mtu("big"));
}
