#include "ibf/suggest.h"

#include <gtest/gtest.h>

namespace ibf {
namespace {

TEST(Suggest, EditDistanceCountsInsertDeleteSubstitute) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("abc", ""), 3u);
    EXPECT_EQ(edit_distance("", "ab"), 2u);
    EXPECT_EQ(edit_distance("poll_ms", "pol_ms"), 1u);   // delete
    EXPECT_EQ(edit_distance("pol_ms", "poll_ms"), 1u);   // insert
    EXPECT_EQ(edit_distance("topolgy", "topology"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("abc", "abc"), 0u);
}

TEST(Suggest, DidYouMeanOnlyWithinTheLengthsLimit) {
    EXPECT_EQ(did_you_mean("pol_ms", {"mode", "poll_ms"}), "; did you mean 'poll_ms'?");
    EXPECT_EQ(did_you_mean("ab", {"ac"}), "; did you mean 'ac'?");     // 1 edit, 2 letters
    EXPECT_EQ(did_you_mean("ab", {"cd"}), "");                          // 2 edits, 2 letters
    EXPECT_EQ(did_you_mean("abcdef", {"abxyef"}), "; did you mean 'abxyef'?");  // 2 of 6
    EXPECT_EQ(did_you_mean("abcdef", {"axxxef"}), "");                  // 3 of 6
    EXPECT_EQ(did_you_mean("retension_days", {"path", "retention_days"}), "; did you mean 'retention_days'?");
    EXPECT_EQ(did_you_mean("colour", {"path", "retention_days"}), "");
    EXPECT_EQ(did_you_mean("x", {}), "");
    EXPECT_EQ(did_you_mean("", {""}), "");
    EXPECT_EQ(did_you_mean("abd", {"abc", "abe"}), "; did you mean 'abc'?");  // a tie: the first
}

TEST(Suggest, UnknownKeyNamesTheDottedKeyTheListAndTheSuggestion) {
    EXPECT_EQ(unknown_key("history.", "retension_days", {"path", "retention_days", "max_sweeps"}),
              "unknown key 'history.retension_days'; did you mean 'retention_days'? (expected one of: path, "
              "retention_days, max_sweeps)");
    EXPECT_EQ(unknown_key("", "colour", {"socket", "http"}), "unknown key 'colour' (expected one of: socket, http)");
}

// One wording for the plan, the daemon config and the waiver file: the mapping's name after the
// key, the suggestion before the list.
TEST(Suggest, UnknownKeyNamesWhereWhenGiven) {
    EXPECT_EQ(unknown_key("", "cable_per_pair", {"names", "cables_per_pair"}, "tier 'leaf'"),
              "unknown key 'cable_per_pair' in tier 'leaf'; did you mean 'cables_per_pair'? (expected one of: names, "
              "cables_per_pair)");
    EXPECT_EQ(unknown_key("", "colour", {"waivers", "maintenance"}, "the waiver file"),
              "unknown key 'colour' in the waiver file (expected one of: waivers, maintenance)");
}

// The key is input: quoted as printable() shows it, so a control byte cannot break the line.
TEST(Suggest, UnknownKeyQuotesTheKeyPrintably) {
    EXPECT_EQ(unknown_key("", "a\x1b[2Jb", {"ab"}), "unknown key 'a\\x1b[2Jb' (expected one of: ab)");
}

}  // namespace
}  // namespace ibf
