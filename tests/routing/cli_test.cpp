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

Result run(const std::string& args, const char* redirect = " 2>/dev/null") {
    Result r;
    std::string cmd = kBin + " " + args + redirect;
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
            ASSERT_EQ(run("plan from-dump " + dump + pin + " --accept-anomalies -o " + plan).code, 0) << dump;
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
    ASSERT_EQ(run("plan from-dump " + kSx + " --accept-anomalies -o " + plan).code, 0);
    EXPECT_EQ(run("routing-files " + plan + " --out-dir " + (dir_ / "b").string()).code, 2);  // nodes by name: no GUIDs
    ASSERT_EQ(run("plan from-dump " + kSx + " --pin-guids --accept-anomalies -o " + plan).code, 0);
    ASSERT_EQ(run("routing-files " + plan + " --out-dir " + (dir_ / "b").string()).code, 0);
    EXPECT_EQ(slurp(dir_ / "b" / "root_guid_file"), roots);
    EXPECT_EQ(slurp(dir_ / "b" / "cn_guid_file"), cn);
}

// ---- issue 9: waivers, filters, plan-aware analysis, plan from-dump and its anomalies ----

// What `analyze` says about the SX6036 capture: a missing uplink, and tank1/tank2 on spine ib7.
TEST_F(CliTest, AnalyzeWaiversKindAndSeverity) {
    const std::string w = (dir_ / "waivers.yaml").string();
    std::ofstream(w) << "waivers:\n"
                        "  - kind: host_misplaced\n    name: \"tank*\"\n    reason: storage on spine ib7 by design\n"
                        "  - kind: missing_uplink\n    ends: [ib1]\n    reason: port ib1/25 is broken, RMA open\n"
                        "    expires: 2020-01-31\n";
    Result r = run("analyze " + kSx + " --no-color --waivers " + w);
    EXPECT_EQ(r.code, 1) << r.out;  // the missing uplink counts again: its waiver expired
    const size_t waived = r.out.find("waived (3)\n  storage on spine ib7 by design (" + w + ":2)\n");
    EXPECT_NE(waived, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2 findings: 1 missing_uplink, 1 waiver_expired\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("waiver at " + w + ":5 (port ib1/25 is broken, RMA open) expired after 2020-01-31"),
              std::string::npos) << r.out;

    r = run("analyze " + kSx + " --json --waivers " + w + " --kind host_misplaced");
    EXPECT_EQ(r.code, 0) << r.out;  // every host_misplaced is waived
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["findings"], nlohmann::json::array());
    ASSERT_EQ(j["waived"].size(), 3u);
    EXPECT_EQ(j["waived"][0]["waiver"]["where"], w + ":2");

    r = run("analyze " + kSx + " --json --min-severity error");
    EXPECT_EQ(r.code, 0) << r.out;  // analysis findings are warnings
    EXPECT_EQ(nlohmann::json::parse(r.out)["summary"], nlohmann::json::object());
    EXPECT_FALSE(nlohmann::json::parse(r.out).contains("waived"));

    r = run("analyze " + kSx + " --kind miswird", " 2>&1");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out.substr(0, 54), "ibfabric: --kind: unknown finding kind 'miswird' (expe") << r.out;
    std::ofstream(w) << "waivers:\n  - kind: host_misplaced\n";
    r = run("analyze " + kSx + " --waivers " + w, " 2>&1");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "ibfabric: " + w + ":2:5: a waiver needs a reason: (why this is intended, for the next administrator)\n");
}

TEST_F(CliTest, AnalyzeWithThePlanLeavesWhatItDeclares) {
    // The plan made from the capture (accepting its anomalies) declares tank1/tank2 on ib7.
    const std::string plan = (dir_ / "plan.yaml").string();
    ASSERT_EQ(run("plan from-dump " + kSx + " --accept-anomalies -o " + plan).code, 0);
    Result r = run("analyze " + kSx + " --json --expected " + plan);
    EXPECT_EQ(r.code, 1) << r.out;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["summary"], nlohmann::json::parse(R"({"missing_uplink": 1})")) << r.out;
    r = run("analyze - --expected " + plan + " --no-color < " + kSx);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("links as " + plan + " declares them"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("host_misplaced"), std::string::npos) << r.out;
}

TEST_F(CliTest, PlanFromDumpRefusesAnomaliesUnlessAccepted) {
    const std::string plan = (dir_ / "plan.yaml").string();
    Result r = run("plan from-dump " + kSx + " -o " + plan, " 2>&1");
    EXPECT_EQ(r.code, 1);
    EXPECT_FALSE(std::filesystem::exists(plan));
    EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
              "ibfabric: " + kSx + " is not clean: the plan would declare 4 anomalies as intended:\n") << r.out;
    EXPECT_NE(r.out.find("free port ib1/25 and ib8/6"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fix the fabric, or adopt it as it is with: ibfabric plan from-dump " + kSx + " -o " + plan +
                         " --accept-anomalies\n"), std::string::npos) << r.out;

    r = run("plan from-dump " + kSx + " --accept-anomalies -o " + plan, " 2>&1");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out, "ibfabric: warning: the plan declares 4 anomalies of " + kSx +
                         " as intended (listed at its top)\n"
                         "wrote " + plan + ": 8 switches in tiers (5 with compact uplinks), 142 hosts in host groups, 10 explicit cables\n");
    const std::string yaml = slurp(plan);
    EXPECT_EQ(yaml.rfind("# ibfabric plan from-dump --accept-anomalies: `ibfabric analyze " + kSx + "` found 4 anomalies", 0), 0u)
        << yaml.substr(0, 400);
    EXPECT_NE(yaml.find("#   missing_uplink: ib1 has 3 cables to ib8 where its peers have 4"), std::string::npos);
    EXPECT_EQ(run("check -e " + plan + " -a " + kSx).code, 0);  // still the plan of that fabric
}

TEST_F(CliTest, PlanFromDumpCountsItsTiers) {
    // The X5 capture: a leaf and a spine tier without a compact uplink rule (issue 9: "0 switches").
    const std::string plan = (dir_ / "plan.yaml").string();
    Result r = run("plan from-dump " + kX5 + " -o " + plan, " 2>&1");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out, "wrote " + plan + ": 11 switches in tiers (0 with compact uplinks), 89 hosts in host groups, 70 explicit cables\n");
}

TEST_F(CliTest, APlanWithoutHostsAndScopeHostsIgnore) {
    // The plan from the capture without its hosts: 144 unexpected hosts, unless the plan leaves hosts out.
    const std::string plan = (dir_ / "plan.yaml").string();
    ASSERT_EQ(run("plan from-dump " + kSx + " --accept-anomalies -o " + plan).code, 0);
    std::string yaml = slurp(plan);
    const size_t h = yaml.find("\nhosts:\n");
    ASSERT_NE(h, std::string::npos);
    const size_t next = yaml.find("\ncables:\n", h);
    ASSERT_NE(next, std::string::npos);
    yaml = yaml.substr(0, h) + yaml.substr(next);
    // tank1/tank2 (on the spine ib7) stay as explicit cables.
    std::ofstream(plan) << yaml;
    Result r = run("check -e " + plan + " -a " + kSx + " --json");
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(nlohmann::json::parse(r.out)["summary"], nlohmann::json::parse(R"({"unexpected_node": 142})"));
    std::ofstream(plan) << yaml << "scope:\n  hosts: ignore\n";
    r = run("check -e " + plan + " -a " + kSx);
    EXPECT_EQ(r.code, 0) << r.out;
}

// The ibsim fabric with its forwarding tables as dump_lfts printed them (tests/data/ibsim-2sw2sp-4ca-*).
const std::string kIbsim = kData + "/ibsim-2sw2sp-4ca-ibnetdiscover.txt";
const std::string kIbsimLfts = kData + "/ibsim-2sw2sp-4ca-dump_lfts.txt";

TEST_F(CliTest, RouteTracesBothWaysAsIbtracertDoes) {
    Result r = run("route node01 node03 --dump " + kIbsim + " --lfts " + kIbsimLfts + " --json");
    EXPECT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> there, back;
    for (const auto& c : j["forward"]["cables"]) there.push_back(c["from"].get<std::string>() + ">" + c["to"].get<std::string>());
    for (const auto& c : j["reverse"]["cables"]) back.push_back(c["from"].get<std::string>() + ">" + c["to"].get<std::string>());
    EXPECT_EQ(there, (std::vector<std::string>{"node01/1>leaf01/1", "leaf01/5>spine01/1", "spine01/2>leaf02/5", "leaf02/1>node03/1"}));
    EXPECT_EQ(back, (std::vector<std::string>{"node03/1>leaf02/1", "leaf02/5>spine01/2", "spine01/1>leaf01/5", "leaf01/1>node01/1"}));
    EXPECT_EQ(j["forward"]["lid"], 7);
    EXPECT_EQ(j["forward"]["cables"][1]["rate"], "4xSDR");
    r = run("route node01 nodeX --dump " + kIbsim + " --lfts " + kIbsimLfts, " 2>&1");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "ibfabric: " + kIbsim + ": no node, port GUID or LID 'nodeX' in the fabric\n");
}

TEST_F(CliTest, AnalyzeWithLftsValidatesTheRouting) {
    Result r = run("analyze " + kIbsim + " --lfts " + kIbsimLfts + " --json");
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["analysis"]["routes"]["pairs"], 12);
    EXPECT_EQ(j["analysis"]["routes"]["routed"], 12);
    EXPECT_EQ(j["analysis"]["routes"]["credit_loops"], 0);
    // A table without node03's LID on spine01 (0x200002) is a black hole at spine01.
    std::string lfts = slurp(kIbsimLfts);
    const std::string spine = "guid 0x0000000000200002";
    const size_t at = lfts.find("0x0007 ", lfts.find(spine));
    ASSERT_NE(at, std::string::npos);
    lfts.erase(at, lfts.find('\n', at) + 1 - at);
    std::ofstream(dir_ / "lfts.txt") << lfts;
    r = run("analyze " + kIbsim + " --lfts " + (dir_ / "lfts.txt").string() + " --json");
    EXPECT_EQ(r.code, 1);
    const auto k = nlohmann::json::parse(r.out);
    EXPECT_EQ(k["summary"]["route_unreachable"], 1) << r.out;
}

TEST_F(CliTest, TopologySlurmWritesTheTreeAndTheBlocks) {
    Result r = run("topology slurm " + kIbsim);
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("SwitchName=leaf01 Nodes=node[01-02]\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SwitchName=spine01 Switches=leaf[01-02]\n"), std::string::npos) << r.out;
    const std::string out = (dir_ / "topology.conf").string();
    ASSERT_EQ(run("topology slurm " + kIbsim + " --block -o " + out).code, 0);
    EXPECT_NE(slurp(out).find("BlockName=block01 Nodes=node[01-04]\n"), std::string::npos) << slurp(out);
}

TEST_F(CliTest, ImpactExitsOneOnlyWhenAPairIsLost) {
    Result r = run("impact spine01 --dump " + kIbsim + " --json");
    EXPECT_EQ(r.code, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["unreachable"], 0);
    EXPECT_EQ(j["fewer_paths"], 4);  // node01/02 x node03/04: two spines -> one
    r = run("impact leaf01 --dump " + kIbsim + " --json");
    EXPECT_EQ(r.code, 1);
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["hosts_cut_off"], nlohmann::json::parse(R"(["node01/1", "node02/1"])"));
    EXPECT_EQ(j["unreachable"], 5);  // the 5 of 6 pairs that involve node01 or node02
}

TEST_F(CliTest, HostsListsTheCablesAndTheBound) {
    Result r = run("hosts 'node[01-04]' --dump " + kIbsim + " --lfts " + kIbsimLfts + " --json");
    EXPECT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["hosts"], 4);
    EXPECT_EQ(j["pairs"], 12);
    EXPECT_EQ(j["unrouted"], 0);
    EXPECT_GT(j["all_to_all_gbps_per_host"].get<double>(), 0);
    r = run("hosts 'node[01-04]' --dump " + kIbsim + " --lfts " + kIbsimLfts);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.rfind("4 hosts, 12 pairs (0 do not arrive), ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("\nall-to-all bound: "), std::string::npos) << r.out;
    r = run("hosts 'node[01-05]' --dump " + kIbsim + " --lfts " + kIbsimLfts, " 2>&1");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("no host 'node05'"), std::string::npos) << r.out;
    r = run("hosts 'node[01-04]' --dump " + kIbsim + " --url http://127.0.0.1:1", " 2>&1");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("give one or the other"), std::string::npos) << r.out;
    r = run("hosts 'node[01-04]'", " 2>&1");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("give --dump and --lfts"), std::string::npos) << r.out;
    r = run("hosts 'node[01-04]' --url http://127.0.0.1:1", " 2>&1");  // nothing listens on port 1
    EXPECT_EQ(r.code, 3) << r.out;
}

}  // namespace
