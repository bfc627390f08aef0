// Slurm hostlists (hostlist.h): compression as topology.conf shows it, expansion, and errors.
#include <gtest/gtest.h>

#include "ibf/error.h"
#include <algorithm>

#include "ibf/hostlist.h"

namespace ibf {
namespace {

std::string err(std::string_view l) {
    try {
        hostlist_expand(l);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(Hostlist, CompressMergesRangesPerPrefixAndWidth) {
    EXPECT_EQ(hostlist_compress({"node003", "node001", "node002", "node005"}), "node[001-003,005]");
    EXPECT_EQ(hostlist_compress({"node9", "node10", "node11"}), "node[9-11]");
    EXPECT_EQ(hostlist_compress({"gpu1", "login", "node01", "node02", "node02"}), "gpu1,login,node[01-02]");
    EXPECT_EQ(hostlist_compress({"leaf01"}), "leaf01");
    // Past the padding: the same width without a leading zero is the same group (leaf01..leaf18).
    EXPECT_EQ(hostlist_compress({"leaf10", "leaf09", "leaf11", "leaf01"}), "leaf[01,09-11]");
    EXPECT_EQ(hostlist_compress({"node099", "node100", "node9", "node10"}), "node[9-10],node[099-100]");
    EXPECT_EQ(hostlist_compress({"node10", "node11"}), "node[10-11]");
    EXPECT_EQ(hostlist_compress({}), "");
}

TEST(Hostlist, ExpandIsTheInverse) {
    EXPECT_EQ(hostlist_expand("node[01-03,07],login"),
              (std::vector<std::string>{"node01", "node02", "node03", "node07", "login"}));
    EXPECT_EQ(hostlist_expand("r[1-2]-a"), (std::vector<std::string>{"r1-a", "r2-a"}));
    const std::vector<std::string> names{"node001", "node002", "node010", "gpu7"};
    std::vector<std::string> back = hostlist_expand(hostlist_compress(names));
    std::sort(back.begin(), back.end());
    std::vector<std::string> want = names;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(back, want);
}

TEST(Hostlist, ExpandErrorsNameTheColumn) {
    EXPECT_EQ(err("node[1-3"), "hostlist:1:5: '[' without ']'");
    EXPECT_EQ(err("node1-3]"), "hostlist:1:8: ']' without '['");
    EXPECT_EQ(err("node[3-1]"), "hostlist:1:6: range '3-1' runs backwards");
    EXPECT_EQ(err("node[a-b]"), "hostlist:1:6: bad range 'a-b' (expected N or N-M)");
    EXPECT_EQ(err("n[1-2]x[1-2]"), "hostlist:1:8: only one [...] per name is supported");
    EXPECT_EQ(err("n[0-99999999]"), "hostlist:1:3: more than 1000000 names");
}

}  // namespace
}  // namespace ibf
