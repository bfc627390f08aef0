// finding_identity / finding_transitions / parse_sweep_ref.
#include <gtest/gtest.h>

#include <string>

#include "ibf/finding_track.h"
#include "ibf/sweep_ref.h"

namespace ibf {
namespace {

Finding miswired(const char* a, int pa, const char* b, int pb, const char* msg = "x") {
    return Finding{.kind = FindingKind::miswired, .a = {a, 0, pa}, .b = {b, 0, pb}, .message = msg};
}

TEST(FindingTrack, IdentityIsKindAndSortedEnds) {
    EXPECT_EQ(finding_identity(miswired("leaf03", 19, "spine01", 6)), "miswired leaf03/19 spine01/6");
    EXPECT_EQ(finding_identity(miswired("spine01", 6, "leaf03", 19)), "miswired leaf03/19 spine01/6");
    EXPECT_EQ(finding_identity(Finding{.kind = FindingKind::missing_node, .a = {"node007", 0, 0}}), "missing_node node007");
    EXPECT_EQ(finding_identity(Finding{.kind = FindingKind::unexpected_node, .a = {"", 0x2c9, 0}}),
              "unexpected_node 0x00000000000002c9");
}

TEST(FindingTrack, TransitionsOpenNewCloseGoneKeepSame) {
    const std::set<std::string> open = {"miswired leaf03/19 spine01/6", "missing_node node007"};
    const auto t = finding_transitions(open, {miswired("spine01", 6, "leaf03", 19, "reworded"),
                                              miswired("leaf04", 1, "spine02", 2), miswired("leaf04", 1, "spine02", 2)});
    ASSERT_EQ(t.opened.size(), 1u);
    EXPECT_EQ(finding_identity(t.opened[0]), "miswired leaf04/1 spine02/2");
    EXPECT_EQ(t.closed, std::vector<std::string>{"missing_node node007"});
}

TEST(SweepRef, Forms) {
    const int64_t now = 1796094000000;  // 2026-12-01T03:00:00Z
    EXPECT_EQ(parse_sweep_ref("41", now)->kind, SweepRef::Kind::id);
    EXPECT_EQ(parse_sweep_ref("41", now)->value, 41);
    EXPECT_EQ(parse_sweep_ref("latest", now)->kind, SweepRef::Kind::latest);
    EXPECT_EQ(parse_sweep_ref("2026-12-01T03:00:00Z", now)->value, now);
    EXPECT_EQ(parse_sweep_ref("2026-12-01 03:00", now)->value, now);
    EXPECT_EQ(parse_sweep_ref("2026-12-01T03:00:00.250Z", now)->value, now + 250);
    EXPECT_EQ(parse_sweep_ref("@1796094000000", now)->value, now);
    EXPECT_EQ(parse_sweep_ref("-2h", now)->value, now - 7200000);
    EXPECT_EQ(parse_sweep_ref("-30m", now)->kind, SweepRef::Kind::time);
    EXPECT_EQ(parse_iso_time("1970-01-01T00:00:00Z"), 0);
    for (const char* bad : {"", "0", "-3", "-2y", "yesterday", "2026-13-01T00:00Z", "2026-12-01", "@x"})
        EXPECT_FALSE(parse_sweep_ref(bad, now)) << bad;
}

// `ibfabric history` prints row ids as #N, and the docs write `ibfabric diff '#1' latest`.
TEST(SweepRef, HashIdIsARowId) {
    const int64_t now = 1796094000000;
    ASSERT_TRUE(parse_sweep_ref("#1", now));
    EXPECT_EQ(parse_sweep_ref("#1", now)->kind, SweepRef::Kind::id);
    EXPECT_EQ(parse_sweep_ref("#41", now)->value, 41);
    for (const char* bad : {"#", "#0", "#-1", "#x", "##1"}) EXPECT_FALSE(parse_sweep_ref(bad, now)) << bad;
}

// The probe: since=-9223372036854775807d answered with since = tomorrow (signed overflow).
TEST(SweepRef, HugeRelativeTimesAreRefusedNotWrapped) {
    const int64_t now = 1796094000000;
    for (const char* bad : {"-9223372036854775807d", "-9223372036854775807s", "-106751991167301d", "-99999999999d"})
        EXPECT_FALSE(parse_sweep_ref(bad, now)) << bad;
    // The furthest back that still fits: 1970-01-01 itself.
    ASSERT_TRUE(parse_sweep_ref("-" + std::to_string(now / 1000) + "s", now));
    EXPECT_EQ(parse_sweep_ref("-" + std::to_string(now / 1000) + "s", now)->value, 0);
    EXPECT_FALSE(parse_sweep_ref("-" + std::to_string(now / 1000 + 1) + "s", now));
    // Found by fuzz_sweep_ref: an ISO time before 1970 was a negative time.
    EXPECT_FALSE(parse_sweep_ref("0226-12-01T03:00:00.250Z", now));
    EXPECT_FALSE(parse_sweep_ref("1969-12-31T23:59:59Z", now));
    EXPECT_FALSE(parse_iso_time("-026-04-30T00:01Z"));  // a sign is not a digit (also fuzz_sweep_ref)
    EXPECT_FALSE(parse_iso_time("2026-+4-30T00:01Z"));
    EXPECT_EQ(parse_sweep_ref("1970-01-01T00:00:00Z", now)->value, 0);
}

// The probe: 2026-02-30T00:00Z was taken as 2026-03-02.
TEST(SweepRef, DatesThatDoNotExistAreRefused) {
    const int64_t now = 1796094000000;
    for (const char* bad : {"2026-02-30T00:00Z", "2026-02-29T00:00Z", "2026-04-31T00:00Z", "2026-00-10T00:00Z"})
        EXPECT_FALSE(parse_sweep_ref(bad, now)) << bad;
    EXPECT_TRUE(parse_iso_time("2028-02-29T00:00Z"));  // a leap day
    EXPECT_TRUE(parse_iso_time("2026-01-31T23:59:59Z"));
}

}  // namespace
}  // namespace ibf
