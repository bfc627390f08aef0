// The `ibfabric analyze`, `plan from-dump` and `routing-files` subcommands, run as a user would.
#include <gtest/gtest.h>
#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

const std::string kBin = std::string(IBF_BIN_DIR) + "/ibfabric";
const std::string kData = IBF_TEST_DATA;
const std::string kSx = kData + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
const std::string kX5 = kData + "/ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt";

struct Result {
    int code = -1;
    std::string out;
};

Result run(const std::string& args) {
    Result r;
    std::string cmd = kBin + " " + args + " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int status = ::pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class CliTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("ibf-routing-cli-" + std::to_string(::getpid()) + "-" +
                                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path dir_;
};

TEST_F(CliTest, AnalyzeReportsFindingsWithExitOne) {
    Result r = run("analyze " + kSx + " --no-color");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("leaf           6"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ib1 has 3 cables to ib8"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("4 findings: 1 missing_uplink, 3 host_misplaced"), std::string::npos) << r.out;
}

TEST_F(CliTest, AnalyzeSwitchesListsPerLeafOversubscription) {
    Result r = run("analyze " + kSx + " --switches --no-color");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("ib1                          leaf      24    24     7  1x3 1x4                2.74:1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ib7                          spine      3    27     0  -                      -"), std::string::npos) << r.out;
}

TEST_F(CliTest, AnalyzeCleanFabricExitsZero) {
    Result r = run("analyze " + kX5);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("no findings"), std::string::npos);
}

TEST_F(CliTest, AnalyzeJsonHasFindingsAndAnalysis) {
    Result r = run("analyze " + kSx + " --json");
    EXPECT_EQ(r.code, 1);
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["summary"]["missing_uplink"], 1);
    EXPECT_EQ(j["summary"]["host_misplaced"], 3);
    ASSERT_EQ(j["findings"].size(), 4u);
    EXPECT_EQ(j["findings"][0]["kind"], "missing_uplink");
    EXPECT_EQ(j["analysis"]["levels"], 2);
    EXPECT_EQ(j["analysis"]["tiers"][0]["switches"], 6);
}

TEST_F(CliTest, BadInputExitsTwo) {
    EXPECT_EQ(run("analyze " + (dir_ / "missing.txt").string()).code, 2);
    std::ofstream(dir_ / "junk.txt") << "this is not a dump\n";
    EXPECT_EQ(run("analyze " + (dir_ / "junk.txt").string()).code, 2);
    EXPECT_EQ(run("routing-files " + kSx).code, 2);  // --out-dir is required
}

TEST_F(CliTest, PlanFromDumpChecksClean) {
    for (const std::string& dump : {kSx, kX5}) {
        std::string plan = (dir_ / "plan.yaml").string();
        for (const char* pin : {"", " --pin-guids"}) {
            ASSERT_EQ(run("plan from-dump " + dump + pin + " -o " + plan).code, 0) << dump;
            Result c = run("check --expected " + plan + " --actual " + dump);
            EXPECT_EQ(c.code, 0) << dump << pin << "\n" << c.out;
        }
    }
}

TEST_F(CliTest, RoutingFilesFromDumpAndFromItsPlanAgree) {
    ASSERT_EQ(run("routing-files " + kSx + " --out-dir " + (dir_ / "a").string()).code, 0);
    std::string roots = slurp(dir_ / "a" / "root_guid_file");
    EXPECT_EQ(roots, "0xf4521403007ea570\n0xf4521403007eaa70\n");
    std::string cn = slurp(dir_ / "a" / "cn_guid_file");
    EXPECT_EQ(std::count(cn.begin(), cn.end(), '\n'), 142);
    EXPECT_NE(slurp(dir_ / "a" / "ib-node-name-map").find("0xf452140300115da0 \"ib1\""), std::string::npos);
    // the same files from the plan inferred from the dump (GUIDs pinned in nodes:)
    std::string plan = (dir_ / "plan.yaml").string();
    ASSERT_EQ(run("plan from-dump " + kSx + " -o " + plan).code, 0);
    EXPECT_EQ(run("routing-files " + plan + " --out-dir " + (dir_ / "b").string()).code, 2);  // nodes by name: no GUIDs
    ASSERT_EQ(run("plan from-dump " + kSx + " --pin-guids -o " + plan).code, 0);
    ASSERT_EQ(run("routing-files " + plan + " --out-dir " + (dir_ / "b").string()).code, 0);
    EXPECT_EQ(slurp(dir_ / "b" / "root_guid_file"), roots);
    EXPECT_EQ(slurp(dir_ / "b" / "cn_guid_file"), cn);
}

}  // namespace
