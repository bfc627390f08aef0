// The `ibfabric` CLI run from integration tests, each lab in a directory of its own whose processes
// are stopped when the test ends (logs kept when it failed).
//
//   LabDir lab;
//   Cli up = lab.cli({"lab", "up", kSmall, "--json"});   // adds --ttl 300 and --dir
//   ASSERT_EQ(up.rc, 0) << describe(up);
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"

namespace ibf::test {

namespace lab_cli_fs = std::filesystem;
using nlohmann::json;

inline const std::string kBin = IBF_BIN_DIR;
inline const std::string kSmall = std::string(IBF_SOURCE_DIR) + "/config/examples/small-plan.yaml";
inline const std::string k324 = std::string(IBF_SOURCE_DIR) + "/config/examples/fat-tree-2tier-324.yaml";

inline bool have_daemon() {
    return lab_cli_fs::exists(kBin + "/ibfabricd") && lab_cli_fs::exists(kBin + "/../lib/libibfabric_osm.so");
}

struct Cli {
    int rc = -1;
    std::string out;  // stdout
    std::string err;  // stderr
    json j;           // stdout parsed when it is JSON
};

// A lab directory of its own; whatever runs in it is stopped at the end of the test.
class LabDir {
public:
    LabDir() {
        char tmpl[] = "/tmp/ibf-lab-it-XXXXXX";
        char* d = mkdtemp(tmpl);
        if (!d) throw std::runtime_error("mkdtemp failed");
        path = d;
    }
    ~LabDir() {
        try {
            if (auto s = lab_load_state(path)) lab_down(*s, 1.0);
        } catch (...) {
        }
        for (int pid : extra_pids) lab_detail::stop(pid, "", 1.0);
        std::error_code ec;
        if (!::testing::Test::HasFailure()) lab_cli_fs::remove_all(path, ec);  // keep logs of a failure
    }
    LabDir(const LabDir&) = delete;
    LabDir& operator=(const LabDir&) = delete;

    // `ibfabric ARGS` as given (no --dir added), e.g. `sm switchover`.
    Cli raw(std::vector<std::string> args, double timeout_s = 60) const {
        lab_detail::SpawnSpec s;
        s.argv = {kBin + "/ibfabric"};
        s.argv.insert(s.argv.end(), args.begin(), args.end());
        s.out_path = path + "/cli.err";
        std::error_code ec;
        lab_cli_fs::remove(s.out_path, ec);
        Cli c;
        c.rc = lab_detail::run_capture(s, timeout_s, c.out);
        std::ifstream e(s.out_path);
        c.err.assign(std::istreambuf_iterator<char>(e), {});
        if (!c.out.empty() && c.out[0] == '{') c.j = json::parse(c.out, nullptr, false);
        return c;
    }

    // `ibfabric ARGS --dir <this lab>` (and --ttl 300 on `lab up` unless given).
    Cli cli(std::vector<std::string> args, double timeout_s = 120) const {
        // A lab never outlives this test for long, even if the test process is killed.
        if (args.size() >= 2 && args[0] == "lab" && args[1] == "up" &&
            std::find(args.begin(), args.end(), "--ttl") == args.end()) {
            args.push_back("--ttl");
            args.push_back("300");
        }
        args.push_back("--dir");
        args.push_back(path);
        return raw(std::move(args), timeout_s);
    }
    LabState state() const {
        auto s = lab_load_state(path);
        if (!s) throw std::runtime_error("no lab state in " + path);
        return *s;
    }

    std::string path;
    std::vector<int> extra_pids;
};

inline std::map<std::string, int> summary(const Cli& c) {
    std::map<std::string, int> m;
    if (c.j.is_object() && c.j.contains("summary"))
        for (auto& [k, v] : c.j["summary"].items()) m[k] = v.get<int>();
    return m;
}

// A whole file ("" when it cannot be read).
inline std::string read_all(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

inline std::string describe(const Cli& c) { return "rc=" + std::to_string(c.rc) + "\nstdout:\n" + c.out + "\nstderr:\n" + c.err; }

}  // namespace ibf::test
