#include "ibf/rate.h"

#include <gtest/gtest.h>

#include <cstdio>

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

// Every generation against the IBA values (IBA vol. 1 rel. 1.7 table 14.2.5.6, 64b/66b encoding from
// FDR10 on, 8b/10b before; HDR and later as the data rate after FEC): the per-lane data rate feeds Gb/s,
// oversubscription and bisection, the signalling rate is what iblinkinfo prints.
TEST(Rate, EveryGenerationMatchesTheIbaTable) {
    struct Row {
        Speed s;
        const char* name;
        double data, signal;
    };
    const Row rows[] = {
        {Speed::SDR, "SDR", 2.5 * 8 / 10, 2.5},         {Speed::DDR, "DDR", 5.0 * 8 / 10, 5.0},
        {Speed::QDR, "QDR", 10.0 * 8 / 10, 10.0},       {Speed::FDR10, "FDR10", 10.3125 * 64 / 66, 10.3125},
        {Speed::FDR, "FDR", 14.0625 * 64 / 66, 14.0625}, {Speed::EDR, "EDR", 25.78125 * 64 / 66, 25.78125},
        {Speed::HDR, "HDR", 50.0, 53.125},              {Speed::NDR, "NDR", 100.0, 106.25},
        {Speed::XDR, "XDR", 200.0, 212.5},
    };
    for (const Row& r : rows) {
        SCOPED_TRACE(r.name);
        // FDR is 14.0625 x 64/66 = 13.636.. exactly (4x: 54.5 Gb/s of data, as ibstat's 56 signalling implies).
        EXPECT_NEAR(lane_data_gbps(r.s), r.data, 0.005);
        EXPECT_DOUBLE_EQ(lane_signal_gbps(r.s), r.signal);
        EXPECT_EQ(to_string(r.s), r.name);
        EXPECT_EQ(parse_speed(r.name), r.s);
        char sig[32];
        std::snprintf(sig, sizeof sig, "%g", r.signal);
        EXPECT_EQ(parse_speed(sig), r.s) << sig;
    }
    EXPECT_NEAR(parse_rate("4xFDR")->gbps(), 54.545, 0.02);
    EXPECT_NEAR(parse_rate("1xFDR")->gbps(), 13.636, 0.005);
    EXPECT_DOUBLE_EQ(parse_rate("4xFDR10")->gbps(), 40);
    EXPECT_DOUBLE_EQ(parse_rate("12xEDR")->gbps(), 300);
    EXPECT_DOUBLE_EQ(parse_rate("1xXDR")->gbps(), 200);
    EXPECT_EQ(lane_data_gbps(Speed::Unknown), 0.0);
    EXPECT_EQ(lane_signal_gbps(Speed::Unknown), 0.0);
}

// ibstat's nominal link rate "N Gb/sec (WX)" names the speed by N / lanes: 2.5, 5, 10, 14 (FDR), 25, 50,
// 100, 200. FDR10 prints as 40 like QDR and cannot be told apart without its name.
TEST(Rate, NominalIbstatFormsForEveryGeneration) {
    EXPECT_EQ(parse_rate("10 Gb/sec (4X)"), (Rate{Width::X4, Speed::SDR}));
    EXPECT_EQ(parse_rate("20 Gb/sec (4X)"), (Rate{Width::X4, Speed::DDR}));
    EXPECT_EQ(parse_rate("40 Gb/sec (4X)"), (Rate{Width::X4, Speed::QDR}));
    EXPECT_EQ(parse_rate("56 Gb/sec (4X)"), (Rate{Width::X4, Speed::FDR}));
    EXPECT_EQ(parse_rate("14 Gb/sec (1X)"), (Rate{Width::X1, Speed::FDR}));
    EXPECT_EQ(parse_rate("168 Gb/sec (12X)"), (Rate{Width::X12, Speed::FDR}));
    EXPECT_EQ(parse_rate("100 Gb/sec (4X)"), (Rate{Width::X4, Speed::EDR}));
    EXPECT_EQ(parse_rate("200 Gb/sec (4X)"), (Rate{Width::X4, Speed::HDR}));
    EXPECT_EQ(parse_rate("200 Gb/sec (2X)"), (Rate{Width::X2, Speed::NDR}));
    EXPECT_EQ(parse_rate("400 Gb/sec (4X)"), (Rate{Width::X4, Speed::NDR}));
    EXPECT_EQ(parse_rate("800 Gb/sec (4X)"), (Rate{Width::X4, Speed::XDR}));
    EXPECT_EQ(parse_rate("40 Gb/sec (4X FDR10)"), (Rate{Width::X4, Speed::FDR10}));
    EXPECT_EQ(parse_rate("56 Gb/sec (4X FDR)"), (Rate{Width::X4, Speed::FDR}));
    EXPECT_FALSE(parse_rate("54 Gb/sec (4X)"));
}

TEST(Rate, WidthsAndTheirLaneCounts) {
    EXPECT_EQ(lanes(Width::X1), 1);
    EXPECT_EQ(lanes(Width::X2), 2);
    EXPECT_EQ(lanes(Width::X4), 4);
    EXPECT_EQ(lanes(Width::X8), 8);
    EXPECT_EQ(lanes(Width::X12), 12);
    EXPECT_EQ(lanes(Width::Unknown), 0);
    EXPECT_EQ(max_width(width_bit(Width::X2) | width_bit(Width::X1)), Width::X2);
    EXPECT_EQ(max_width(width_bit(Width::X12) | width_bit(Width::X8)), Width::X12);
    EXPECT_EQ(max_speed(speed_bit(Speed::FDR10) | speed_bit(Speed::FDR)), Speed::FDR);
    EXPECT_EQ(max_speed(0), Speed::Unknown);
}

// Rates as `ibstat` prints them (issue 9): QDR and FDR10 at 4x are both 40 Gb/s; the data rate
// follows where the encoding makes it differ.
TEST(Rate, IbstatRateAndDataRate) {
    EXPECT_EQ(ibstat_gbps({Width::X4, Speed::QDR}), 40);
    EXPECT_EQ(ibstat_gbps({Width::X4, Speed::FDR10}), 40);
    EXPECT_EQ(ibstat_gbps({Width::X4, Speed::FDR}), 56);
    EXPECT_EQ(ibstat_gbps({Width::X4, Speed::EDR}), 100);
    EXPECT_EQ(ibstat_gbps({Width::X4, Speed::HDR}), 200);
    EXPECT_EQ(ibstat_gbps({Width::X1, Speed::SDR}), 2.5);
    EXPECT_EQ(ibstat_gbps({Width::X4, Speed::Unknown}), 0);
    EXPECT_EQ(rate_gbps_text({Width::X4, Speed::QDR}), "40 Gb/s signalling, 32 Gb/s data");
    EXPECT_EQ(rate_gbps_text({Width::X4, Speed::FDR10}), "40 Gb/s");
    EXPECT_EQ(rate_gbps_text({Width::X4, Speed::FDR}), "56 Gb/s signalling, 54.5 Gb/s data");
    EXPECT_EQ(rate_gbps_text({Width::X4, Speed::EDR}), "100 Gb/s");
    EXPECT_EQ(rate_gbps_text({Width::X1, Speed::EDR}), "25 Gb/s");
    EXPECT_EQ(rate_gbps_text({Width::X1, Speed::SDR}), "2.5 Gb/s signalling, 2 Gb/s data");
    EXPECT_EQ(rate_gbps_text({Width::X4, Speed::DDR}), "20 Gb/s signalling, 16 Gb/s data");
    EXPECT_EQ(rate_gbps_text({Width::Unknown, Speed::HDR}), "");
}
