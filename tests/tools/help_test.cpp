// Every `ibfabric` subcommand's --help shows an example (the tree is found by walking --help from
// the top, so a new subcommand is covered without touching this test); so do ibfabricd's and the
// benchmarks' (which must print help, not run).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ibf/lab_process.h"

namespace {

const std::string kBin = IBF_BIN_DIR;

struct Out {
    int rc;
    std::string text;
};

Out run(std::vector<std::string> argv) {
    ibf::lab_detail::SpawnSpec s;
    s.argv = std::move(argv);
    std::string out;
    const int rc = ibf::lab_detail::run_capture(s, 30.0, out);
    return {rc, out};
}

// The names listed under "Subcommands:" in a CLI11 help text (entries are indented by 2 spaces,
// their wrapped descriptions by more).
std::vector<std::string> subcommands(const std::string& help) {
    std::vector<std::string> names;
    std::istringstream in(help);
    bool in_section = false;
    for (std::string line; std::getline(in, line);) {
        if (line == "Subcommands:" || line == "SUBCOMMANDS:") {
            in_section = true;
            continue;
        }
        if (!in_section) continue;
        if (line.empty() || line[0] != ' ') {
            in_section = false;
            continue;
        }
        if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
            names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
    return names;
}

void walk(const std::vector<std::string>& path, std::vector<std::string>& seen) {
    std::vector<std::string> argv = {kBin + "/ibfabric"};
    argv.insert(argv.end(), path.begin(), path.end());
    argv.push_back("--help");
    const Out o = run(argv);
    std::string name = "ibfabric";
    for (const auto& p : path) name += " " + p;
    EXPECT_EQ(o.rc, 0) << name << " --help";
    if (!path.empty()) {
        EXPECT_NE(o.text.find("Example"), std::string::npos) << name << " --help has no example:\n" << o.text;
        seen.push_back(name);
    }
    for (const auto& sub : subcommands(o.text)) {
        auto next = path;
        next.push_back(sub);
        walk(next, seen);
    }
}

TEST(Help, EverySubcommandHasAnExample) {
    std::vector<std::string> seen;
    walk({}, seen);
    // The walk found the tree (the subcommands at the time of writing; more may come).
    for (const char* must : {"ibfabric check", "ibfabric status", "ibfabric findings", "ibfabric doctor", "ibfabric plan",
                             "ibfabric plan from-dump", "ibfabric lab", "ibfabric lab up", "ibfabric lab fault",
                             "ibfabric lab status", "ibfabric lab findings", "ibfabric lab down", "ibfabric sm status", "ibfabric ha notify"})
        EXPECT_NE(std::find(seen.begin(), seen.end(), must), seen.end()) << must << " not found by the walk";
}

TEST(Help, OtherProgramsPrintHelpWithAnExampleAndExitZero) {
    for (const char* prog : {"ibfabricd", "ibf_lab_bench", "ibf_ha_bench"}) {
        if (!std::filesystem::exists(kBin + "/" + prog)) continue;  // not built in this configuration
        const Out o = run({kBin + "/" + prog, "--help"});
        EXPECT_EQ(o.rc, 0) << prog;
        EXPECT_NE(o.text.find("Example"), std::string::npos) << prog << ":\n" << o.text;
        EXPECT_EQ(o.text.find("fabric: 2-level fat-tree"), std::string::npos) << prog << " ran instead of printing help";
    }
}

}  // namespace
