// `ibfabric check` end to end: the real binary on real captures, mutated captures, a YAML plan,
// node-name-maps, bad input and usage errors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ibf/dumps.h"
#include "ibf/synth.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kBin = std::string(IBF_BIN_DIR) + "/ibfabric";
const std::string kData = IBF_TEST_DATA;
const std::string kToolsData = IBF_TOOLS_TEST_DATA;
const std::string kSx6036 = kData + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

struct Result {
    int code = -1;
    std::string out, err;
};

class CheckCli : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(kBin)) << kBin;
        dir = fs::temp_directory_path() / ("ibf-cli-test-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    Result run(const std::string& args) {
        const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
        std::string cmd = quote(kBin) + " " + args + " >" + quote(out) + " 2>" + quote(err) + " </dev/null";
        int st = std::system(cmd.c_str());
        Result r;
        r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    std::string write(const std::string& name, const std::string& text) {
        std::string path = (dir / name).string();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

    // Runs ibfabric with `args` (no shell) and `env` added; records CPU seconds and peak RSS.
    struct Measured : Result {
        double cpu_s = 0;
        long max_rss_mb = 0;
    };
    Measured measure(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
        const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
        const pid_t pid = ::fork();
        if (pid == 0) {
            const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            ::dup2(o, 1), ::dup2(e, 2);
            for (const std::string& kv : env)  // "NAME=value" sets, "-NAME" unsets
                kv[0] == '-' ? ::unsetenv(kv.c_str() + 1) : ::putenv(const_cast<char*>(kv.c_str()));
            std::vector<char*> argv{const_cast<char*>(kBin.c_str())};
            for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(kBin.c_str(), argv.data());
            ::_exit(127);
        }
        int st = 0;
        struct rusage ru {};
        ::wait4(pid, &st, 0, &ru);
        Measured m;
        m.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        m.out = slurp(out);
        m.err = slurp(err);
        m.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        m.max_rss_mb = ru.ru_maxrss / 1024;
        return m;
    }

    ibf::Fabric sx6036() { return ibf::parse_dump(slurp(kSx6036), kSx6036); }
    ibf::NodeId id(const ibf::Fabric& f, const std::string& name) { return ibf::synth_node(f, name); }

    fs::path dir;
};

}  // namespace

TEST_F(CheckCli, EveryCaptureAgainstItselfIsCleanAndExitsZero) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(kData)) {
        const std::string p = e.path().string();
        if (!ibf::detect_dump_format(slurp(p))) continue;
        Result r = run("check --expected " + quote(p) + " --actual " + quote(p));
        EXPECT_EQ(r.code, 0) << p << "\n" << r.out << r.err;
        EXPECT_NE(r.out.find("no findings"), std::string::npos) << r.out;
        EXPECT_EQ(r.err, "");
        r = run("check -e " + quote(p) + " -a " + quote(p) + " --json");
        EXPECT_EQ(r.code, 0) << p << "\n" << r.err;
        // `unchecked` is always there (docs/findings.md): a golden dump as the plan declares no MTU.
        EXPECT_EQ(json::parse(r.out), json::parse(R"({"summary": {}, "findings": [], "unchecked": []})")) << p;
        ++n;
    }
    EXPECT_GE(n, 4);
}

TEST_F(CheckCli, GoldenIbnetdiscoverAgainstIblinkinfoIsClean) {
    // iblinkinfo names CAs by port GUID, ibnetdiscover by node GUID: the golden plan is aligned.
    for (const char* a : {"ibsim-sx6036-iblinkinfo.txt", "ibsim-sx6036-iblinkinfo-l.txt"}) {
        Result r = run("check -e " + quote(kSx6036) + " -a " + quote(kData + "/" + a) + " --json");
        EXPECT_EQ(r.code, 0) << a << "\n" << r.out << r.err;
        r = run("check -e " + quote(kData + "/" + a) + " -a " + quote(kSx6036) + " --json");
        EXPECT_EQ(r.code, 0) << a << " reversed\n" << r.out << r.err;
    }
}

TEST_F(CheckCli, MutatedDumpExitsOneWithExactJson) {
    ibf::Fabric f = sx6036();
    ibf::cross_cables(f, id(f, "ib5"), 21, 23);
    ibf::remove_cable(f, id(f, "stage112"), 1);
    std::string actual = write("mutated.txt", ibf::write_ibnetdiscover(f));
    Result r = run("check --expected " + quote(kSx6036) + " --actual " + quote(actual) + " --json");
    ASSERT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    json j = json::parse(r.out);
    EXPECT_EQ(j["summary"], json::parse(R"({"missing_link": 1, "miswired": 1})"));
    ASSERT_EQ(j["findings"].size(), 2u);
    json missing = j["findings"][0];
    EXPECT_EQ(missing["kind"], "missing_link");
    EXPECT_EQ(missing["severity"], "error");
    EXPECT_EQ(missing["a"], json::parse(R"({"name": "ib5", "guid": "0xf4521403001165a0", "port": 2})"));
    EXPECT_EQ(missing["b"], json::parse(R"({"name": "stage112", "guid": "0x24be05ffff982d50", "port": 1})"));
    EXPECT_EQ(missing["expected"], "stage112/1");
    EXPECT_EQ(missing["actual"], "");
    json m1 = j["findings"][1];
    EXPECT_EQ(m1["kind"], "miswired");
    EXPECT_EQ(m1["a"], json::parse(R"({"name": "ib5", "guid": "0xf4521403001165a0", "port": 21})"));
    EXPECT_EQ(m1["b"]["name"], "ib8");
    EXPECT_EQ(m1["b"]["port"], 28);
    EXPECT_EQ(m1["expected"], "ib8/26");
    EXPECT_EQ(m1["actual"], "ib8/28");
    EXPECT_EQ(m1["message"],
              "cables at ib5/21 and ib5/23 are crossed: ib5/21 goes to ib8/28 and ib5/23 to ib8/26, plan says the other "
              "way round; swap the cables at ib8/26 and ib8/28");

    // The text report: grouped, uncoloured when stdout is not a terminal, one summary line at the end.
    r = run("check -e " + quote(kSx6036) + " -a " + quote(actual));
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out.find('\033'), std::string::npos);
    EXPECT_NE(r.out.find("miswired (1)\n  ib5\n"), std::string::npos) << r.out;
    EXPECT_TRUE(r.out.ends_with("2 findings: 1 missing_link, 1 miswired\n")) << r.out;
}

TEST_F(CheckCli, YamlPlanAgainstADump) {
    Result r = run("check -e " + quote(kToolsData + "/small-plan.yaml") + " -a " +
                   quote(kToolsData + "/small-actual.ibnetdiscover") + " --json");
    ASSERT_EQ(r.code, 1) << r.out << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["summary"], json::parse(R"({"missing_link": 1, "miswired": 2, "rate_mismatch": 1})")) << r.out;
    bool saw_crossed = false, saw_width = false;
    for (const json& f : j["findings"]) {
        if (f["kind"] == "miswired" && f["a"]["name"] == "leaf02" && f["a"]["port"] == 19) {
            EXPECT_EQ(f["expected"], "spine01/3");
            EXPECT_EQ(f["actual"], "spine01/4");
            saw_crossed = true;
        }
        if (f["kind"] == "rate_mismatch") {
            EXPECT_EQ(f["a"]["name"], "leaf04");
            EXPECT_EQ(f["a"]["port"], 21);
            EXPECT_EQ(f["expected"], "4xEDR");
            EXPECT_EQ(f["actual"], "1xEDR");
            saw_width = true;
        }
    }
    EXPECT_TRUE(saw_crossed && saw_width) << r.out;
}

TEST_F(CheckCli, NodeNameMapRenamesBothSides) {
    std::string map = write("node-name-map", "# test map\n0xf4521403001165a0 \"leaf-a\"\n24be05ffff982d50 \"rack1-n12\"\n");
    Result r = run("check -e " + quote(kSx6036) + " -a " + quote(kSx6036) + " --node-name-map " + quote(map));
    EXPECT_EQ(r.code, 0) << r.out << r.err;

    ibf::Fabric f = sx6036();
    ibf::remove_cable(f, id(f, "stage112"), 1);
    std::string actual = write("mutated.txt", ibf::write_ibnetdiscover(f));
    r = run("check -e " + quote(kSx6036) + " -a " + quote(actual) + " --json --node-name-map " + quote(map));
    ASSERT_EQ(r.code, 1) << r.out << r.err;
    json j = json::parse(r.out);
    ASSERT_EQ(j["findings"].size(), 1u);
    EXPECT_EQ(j["findings"][0]["a"]["name"], "leaf-a");
    EXPECT_EQ(j["findings"][0]["b"]["name"], "rack1-n12");
    EXPECT_EQ(j["findings"][0]["expected"], "rack1-n12/1");
}

TEST_F(CheckCli, YamlPlanLoadsTheNodeNameMapItNamesUnlessOneIsGiven) {
    // 1 leaf, 2 spines, 2 hosts; the map gives the leaf and one host the names the plan uses.
    ibf::Fabric f = ibf::synth_fat_tree({.levels = 2, .radix = 4, .hosts = 2});
    ASSERT_EQ(f.link_count(), 4u);
    std::string actual = write("now.txt", ibf::write_ibnetdiscover(f));
    write("names.map", "0x7cfe900301000001 \"edge-a\"\n0x0c42a10300000010 \"alpha\"\n");
    std::string empty = write("empty.map", "# nothing\n");
    std::string plan = write("plan.yaml",
                             "version: 1\n"
                             "node_name_map: names.map\n"
                             "cables:\n"
                             "  - {a: edge-a/1, b: alpha/1}\n"
                             "  - {a: edge-a/2, b: node00002/1}\n"
                             "  - {a: edge-a/3, b: spine0001/1}\n"
                             "  - {a: edge-a/4, b: spine0002/1}\n");
    Result r = run("check -e " + quote(plan) + " -a " + quote(actual));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("no findings"), std::string::npos) << r.out;
    // --node-name-map wins over the plan's: without the names, edge-a and alpha are missing.
    r = run("check -e " + quote(plan) + " -a " + quote(actual) + " --json --node-name-map " + quote(empty));
    ASSERT_EQ(r.code, 1) << r.out << r.err;
    json j = json::parse(r.out);
    // Both are planned hosts: a node first named by a cable is a CA unless `nodes:` types it (docs/plan.md).
    EXPECT_EQ(j["summary"]["host_absent"], 2) << r.out;
    EXPECT_EQ(j["summary"]["unexpected_node"], 2) << r.out;
}

TEST_F(CheckCli, BadDumpExitsTwoNamingFileAndLine) {
    std::string text = slurp(kSx6036);
    // Break line 20 (a port line of the first switch).
    size_t pos = 0;
    for (int line = 1; line < 20; ++line) pos = text.find('\n', pos) + 1;
    text.replace(pos, text.find('\n', pos) - pos, "[99x]\t\"H-zz\"[1]  # bogus");
    std::string bad = write("bad.txt", text);
    Result r = run("check -e " + quote(kSx6036) + " -a " + quote(bad));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(bad + ":20:"), std::string::npos) << r.err;

    std::string plan = write("plan.yaml", "version: 1\nswitches: [\n");
    r = run("check -e " + quote(plan) + " -a " + quote(kSx6036));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(plan + ":3:"), std::string::npos) << r.err;

    std::string junk = write("junk.txt", "hello\n");
    r = run("check -e " + quote(kSx6036) + " -a " + quote(junk));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(junk + ":"), std::string::npos) << r.err;

    std::string map = write("map", "0xzz \"x\"\n");
    r = run("check -e " + quote(kSx6036) + " -a " + quote(kSx6036) + " --node-name-map " + quote(map));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(map + ":1"), std::string::npos) << r.err;
}

TEST_F(CheckCli, MissingFilesExitTwoNamingTheFile) {
    std::string nope = (dir / "nope.txt").string();
    Result r = run("check -e " + quote(nope) + " -a " + quote(kSx6036));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(nope + ": cannot read the plan"), std::string::npos) << r.err;
    r = run("check -e " + quote(kSx6036) + " -a " + quote(nope));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(nope + ": cannot read the dump"), std::string::npos) << r.err;
    r = run("check -e " + quote(kSx6036) + " -a " + quote(kSx6036) + " --node-name-map " + quote(nope));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(nope), std::string::npos) << r.err;
}

TEST_F(CheckCli, UsageErrorsExitTwoAndHelpTeaches) {
    Result r = run("check");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--expected is required"), std::string::npos) << r.err;
    r = run("check -e " + quote(kSx6036));
    EXPECT_EQ(r.code, 2);
    r = run("check -e " + quote(kSx6036) + " -a " + quote(kSx6036) + " --frobnicate");
    EXPECT_EQ(r.code, 2);
    r = run("check --help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("ibfabric check --expected plan.yaml --actual now.txt"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Exit status"), std::string::npos);
    EXPECT_NE(r.out.find("--node-name-map"), std::string::npos);
}

// Node descriptions are bytes, not UTF-8 (Latin-1 host names exist): the JSON report must still
// be produced, with the bad byte replaced by U+FFFD, and the text report must keep the node.
TEST_F(CheckCli, NonUtf8DescriptionStillGivesValidJson) {
    std::string dump = slurp(kToolsData + "/small-actual.ibnetdiscover");
    size_t replaced = 0;
    for (size_t at = dump.find("MF0;leaf01:"); at != std::string::npos; at = dump.find("MF0;leaf01:", at + 1)) {
        dump.replace(at, 11, "MF0;leaf01\xff:");
        ++replaced;
    }
    ASSERT_GT(replaced, 1u);
    const std::string actual = write("latin1.ibnetdiscover", dump);
    Result r = run("check -e " + quote(kToolsData + "/small-plan.yaml") + " -a " + quote(actual) + " --json");
    ASSERT_EQ(r.code, 1) << r.err;
    json j = json::parse(r.out);
    // The switch is found by its cabling (issue 9): one identity_changed, its cables still checked.
    bool saw_renamed = false;
    for (const json& f : j["findings"])
        if (f["kind"] == "identity_changed" && f["a"]["name"] == "leaf01") {
            EXPECT_EQ(f["actual"], "renamed: \"leaf01\xef\xbf\xbd\" (0x7cfe9003005a0300)");
            saw_renamed = true;
        }
    EXPECT_TRUE(saw_renamed) << r.out;
    EXPECT_EQ(j["summary"],
              json::parse(R"({"identity_changed": 1, "missing_link": 1, "miswired": 2, "rate_mismatch": 1})"));
    Result t = run("check -e " + quote(kToolsData + "/small-plan.yaml") + " -a " + quote(actual) + " --no-color");
    EXPECT_EQ(t.code, 1);
    // Text output: the invalid byte is shown escaped, never sent raw to the terminal.
    EXPECT_NE(t.out.find("leaf01\\xff"), std::string::npos) << t.out;
    EXPECT_EQ(t.out.find("leaf01\xff"), std::string::npos) << t.out;
}

// ---- issue 9: standard input, waivers on check, and `findings` finding the lab's daemon ----

TEST_F(CheckCli, StandardInputOnceForActualOrExpected) {
    const std::string cmd_a = quote(kBin) + " check -e " + quote(kSx6036) + " -a - < " + quote(kSx6036) + " > " +
                              quote((dir / "out").string());
    EXPECT_EQ(WEXITSTATUS(std::system(cmd_a.c_str())), 0);
    EXPECT_EQ(slurp((dir / "out").string()).rfind("checked - (152 nodes, 192 links) against ", 0), 0u);
    const std::string cmd_e = quote(kBin) + " check -e - -a " + quote(kSx6036) + " < " + quote(kSx6036) + " > " +
                              quote((dir / "out").string());
    EXPECT_EQ(WEXITSTATUS(std::system(cmd_e.c_str())), 0);
    Result r = run("check -e - -a -");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibfabric: -: standard input can be read only once: --expected and --actual are both '-'; give one "
                     "of them as a file\n");
}

TEST_F(CheckCli, WaiversOnCheck) {
    ibf::Fabric f = sx6036();
    ibf::cross_cables(f, id(f, "ib5"), 21, 23);
    ibf::remove_cable(f, id(f, "stage112"), 1);
    std::string actual = write("crossed.txt", ibf::write_ibnetdiscover(f));
    std::string w = write("w.yaml",
                          "waivers:\n  - kind: miswired\n    ends: [ib5]\n    reason: swapped for a port test\n"
                          "    expires: 2999-12-31\n");
    Result r = run("check -e " + quote(kSx6036) + " -a " + quote(actual) + " --json --waivers " + quote(w));
    EXPECT_EQ(r.code, 1) << r.out << r.err;  // the crossed pair is waived, the missing link is not
    json j = json::parse(r.out);
    EXPECT_EQ(j["summary"], json::parse(R"({"missing_link": 1})"));
    ASSERT_EQ(j["waived"].size(), 1u);
    EXPECT_EQ(j["waived"][0]["kind"], "miswired");
    EXPECT_EQ(j["waived"][0]["waiver"], json::parse("{\"reason\": \"swapped for a port test\", \"where\": \"" + w +
                                                    ":2\", \"expires\": \"2999-12-31\", \"maintenance\": false}"));
    r = run("check -e " + quote(kSx6036) + " -a " + quote(actual) + " --json --waivers " + quote(w) + " --kind miswired");
    EXPECT_EQ(r.code, 0) << r.out << r.err;  // nothing unwaived of that kind
    w = write("w.yaml", "waivers:\n  - kind: [miswired, missing_link]\n    name: \"[is]*\"\n    reason: port test\n");
    r = run("check -e " + quote(kSx6036) + " -a " + quote(actual) + " --no-color --waivers " + quote(w));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("no findings\nwaived (2)\n  port test (" + w + ":2)\n    error   "), std::string::npos) << r.out;
}

// ---- issue 20 item 7: hosts in maintenance ----
TEST_F(CheckCli, MaintenanceAddListRemoveAndCheckHonoursIt) {
    ibf::Fabric f = sx6036();
    f = ibf::without_node(f, id(f, "stage97"));
    f = ibf::without_node(f, id(f, "stage99"));
    const std::string actual = write("drained.txt", ibf::write_ibnetdiscover(f));
    const std::string w = write("w.yaml", "# ours\nwaivers:\n  - kind: miswired  # keep me\n    ends: [ib5]\n    reason: port test\n");
    const std::string check = "check -e " + quote(kSx6036) + " -a " + quote(actual) + " --waivers " + quote(w);
    Result r = run(check + " --json");
    ASSERT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(json::parse(r.out)["summary"], json::parse(R"({"host_absent": 2})")) << r.out;

    r = run("maintenance add 'stage[97,99]' --until 2999-12-31 --reason 'DIMM swap, ticket 4711' -f " + quote(w));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("stage[97,99]  (2 hosts)  until 2999-12-31  DIMM swap, ticket 4711"), std::string::npos) << r.out;
    EXPECT_EQ(slurp(w), "# ours\nwaivers:\n  - kind: miswired  # keep me\n    ends: [ib5]\n    reason: port test\n"
                        "maintenance:\n  - hosts: \"stage[97,99]\"\n    until: 2999-12-31\n    reason: \"DIMM swap, ticket 4711\"\n");
    r = run(check + " --no-color");
    EXPECT_EQ(r.code, 0) << r.out << r.err;  // absent and in maintenance: no finding
    EXPECT_NE(r.out.find("no findings\nin maintenance (2)\n  DIMM swap, ticket 4711 (" + w + ":7, until 2999-12-31)\n"
                         "    warning host_absent: host stage97 mlx4_0 is absent"),
              std::string::npos)
        << r.out;
    r = run(check + " --json");
    json j = json::parse(r.out);
    EXPECT_EQ(j["summary"], json::object()) << r.out;
    ASSERT_EQ(j["waived"].size(), 2u) << r.out;
    EXPECT_EQ(j["waived"][0]["waiver"]["maintenance"], true);

    r = run("maintenance list --json -f " + quote(w));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["maintenance"][0]["count"], 2) << r.out;
    r = run("maintenance remove stage97 -f " + quote(w));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    r = run("maintenance list -f " + quote(w));
    EXPECT_NE(r.out.find("stage99  (1 host)  until 2999-12-31"), std::string::npos) << r.out;
    r = run(check + " --json");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(json::parse(r.out)["summary"], json::parse(R"({"host_absent": 1})")) << r.out;
    EXPECT_NE(slurp(w).find("# keep me"), std::string::npos);

    // Exit codes: nothing to remove 1; bad hostlist, a past date, no reason, a bad file 2.
    EXPECT_EQ(run("maintenance remove stage5 -f " + quote(w)).code, 1);
    EXPECT_EQ(run("maintenance add 'stage[9-1]' --until 2999-12-31 --reason x -f " + quote(w)).code, 2);
    r = run("maintenance add stage5 --until 2020-01-01 --reason x -f " + quote(w));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--until: 2020-01-01 is already past"), std::string::npos) << r.err;
    EXPECT_EQ(run("maintenance add stage5 --until 2999-12-31 -f " + quote(w)).code, 2);
    const std::string bad = write("bad.yaml", "maintenance:\n  - {hosts: x, until: 2999-12-31}\n");
    r = run("maintenance add stage5 --until 2999-12-31 --reason x -f " + quote(bad));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(bad + ":2:5: a maintenance entry needs reason:"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(bad), "maintenance:\n  - {hosts: x, until: 2999-12-31}\n");  // untouched
    r = run("maintenance add --help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("Examples:\n  ibfabric maintenance add 'node[001-004]'"), std::string::npos) << r.out;
}

TEST_F(CheckCli, FindingsAsksTheLabsDaemon) {
    // A lab directory whose state names a live daemon (this test's pid) on a port nobody listens on:
    // `findings --lab` asks exactly that port.
    const std::string lab = (dir / "lab").string();
    fs::create_directories(lab);
    write("lab/state.json", json{{"dir", lab},
                                 {"ibsim_sockname", "x"},
                                 {"sm_host", "x"},
                                 {"pids", {{"ibsim", 0}, {"opensm", 0}, {"ibfabricd", ::getpid()}}},
                                 {"api_port", 1}}
                                .dump());
    Result r = run("findings --lab " + quote(lab));
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err.rfind("ibfabric: the daemon is unreachable: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
    r = run("status --lab " + quote((dir / "nolab").string()));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibfabric: " + (dir / "nolab").string() +
                         ": no running lab with a daemon here (start one with `ibfabric lab up --dir " +
                         (dir / "nolab").string() + " <plan>`)\n");
}

// A TCP server on 127.0.0.1 that counts connections and closes each at once (no answer).
struct Listener {
    int fd = -1;
    int port = 0;
    std::atomic<int> connections{0};
    std::atomic<bool> stop{false};
    std::thread thread;
    Listener() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 16) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            port = ntohs(a.sin_port);
        thread = std::thread([this] {
            while (!stop) {
                pollfd p{fd, POLLIN, 0};
                if (::poll(&p, 1, 50) <= 0) continue;
                const int c = ::accept(fd, nullptr, nullptr);
                if (c >= 0) ++connections, ::close(c);
            }
        });
    }
    ~Listener() {
        stop = true;
        thread.join();
        ::close(fd);
    }
    bool connected() {  // since the last call
        return connections.exchange(0) > 0;
    }
};

// A lab state as `ibfabric lab up` writes it, naming `port` and a live daemon pid (this test).
std::string lab_state(const std::string& lab, int port) {
    return json{{"dir", lab},
                {"ibsim_sockname", "x"},
                {"sm_host", "x"},
                {"pids", {{"ibsim", 0}, {"opensm", 0}, {"ibfabricd", ::getpid()}}},
                {"api_port", port}}
        .dump();
}

// Issue 19 item 3: another local user created root's default lab state naming their own server;
// root's `ibfabric findings` with $IBFABRIC_TOKEN sent the token there. Client commands now look
// for a lab only with --lab.
TEST_F(CheckCli, ClientCommandsNeverLookForALabUnlessAsked) {
    Listener stranger;
    ASSERT_GT(stranger.port, 0);
    const std::string user = "ibf-probe-" + std::to_string(::getpid());  // default_lab_dir() = /tmp/ibfabric-lab-$USER
    const std::string lab = "/tmp/ibfabric-lab-" + user;
    fs::create_directories(lab);
    fs::permissions(lab, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
    std::ofstream(lab + "/state.json") << lab_state(lab, stranger.port);
    // Neither --url, --lab nor $IBFABRIC_URL: the documented default (127.0.0.1:8639), never the lab's port.
    const std::vector<std::string> env = {"USER=" + user, "IBFABRIC_TOKEN=secret-token", "-IBFABRIC_URL"};
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"findings"}, {"status"}, {"history"}, {"diff", "1"}, {"sm", "status"}}) {
        const Measured r = measure(args, env);
        EXPECT_NE(r.code, 0) << args[0] << ": " << r.out;
        EXPECT_FALSE(stranger.connected()) << args[0] << " connected to the port a lab state named: " << r.err;
    }
    // Asked with --lab, it is this user's own lab: its daemon gets the request (and the token).
    const Measured own = measure({"findings", "--lab", lab}, env);
    EXPECT_EQ(own.code, 3) << own.err;  // the "daemon" hangs up
    EXPECT_TRUE(stranger.connected()) << own.err;
    fs::remove_all(lab);
}

// Issue 19 item 3: a lab state is trusted only when its directory and file are this user's and
// writable by nobody else; otherwise one line naming it, exit 2, and no request at all.
TEST_F(CheckCli, LabStateOthersCouldWriteIsNotTrusted) {
    Listener stranger;
    ASSERT_GT(stranger.port, 0);
    const std::string lab = (dir / "lab").string();
    fs::create_directories(lab);
    const std::string state = write("lab/state.json", lab_state(lab, stranger.port));
    const std::vector<std::string> env = {"IBFABRIC_TOKEN=secret-token"};
    ::chmod(lab.c_str(), 0777);
    Measured r = measure({"findings", "--lab", lab}, env);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibfabric: " + lab + ": the lab directory is writable by group or others (mode 0777): not trusted; chmod go-w " +
                         lab + "\n");
    ::chmod(lab.c_str(), 0755);
    ::chmod(state.c_str(), 0666);
    r = measure({"history", "--lab", lab}, env);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibfabric: " + state + ": the lab state file is writable by group or others (mode 0666): not trusted; chmod go-w " +
                         state + "\n");
    ::chmod(state.c_str(), 0644);
    EXPECT_FALSE(stranger.connected());
    r = measure({"findings", "--lab", lab, "--url", "http://127.0.0.1:1"}, env);
    EXPECT_EQ(r.code, 2) << "--url and --lab exclude each other";
    if (::geteuid() != 0) {
        GTEST_SKIP() << "the owner check needs root to chown the state file to another user (uid 65534)";
    }
    ASSERT_EQ(::chown(state.c_str(), 65534, 65534), 0);
    r = measure({"sm", "status", "--lab", lab}, env);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "ibfabric: " + state + ": the lab state file belongs to uid 65534, not to this user (uid 0): not trusted "
                     "(another user may have planted it); use a --dir of your own\n");
    EXPECT_FALSE(stranger.connected());
}

// Issue 19 item 4: the probe's inputs, through the CLI: each is one line naming the file, exit 2,
// within 2 s and 200 MB. The time is the process's CPU time (user + system): this 2-core machine
// runs several builds at once, so wall time measures the neighbours.
TEST_F(CheckCli, InputLimitsBoundTimeAndMemory) {
    auto flow = [](size_t bytes) {
        std::string t = "version: 1\nnodes: [a";
        while (t.size() < bytes) t += ",a";
        return t + "]\n";
    };
    std::string waivers = "waivers:\n  - &w\n    reason: r\n    labels: [a";
    for (int i = 1; i < 250000; ++i) waivers += ",a";
    waivers += "]\n";
    for (int i = 0; i < 70000; ++i) waivers += "  - *w\n";
    const std::string plan2 = write("flow-2mb.yaml", flow(2u << 20)), plan20 = write("flow-20mb.yaml", flow(20u << 20));
    const std::string names = write("names.yaml", "version: 1\nswitches:\n  leaf:\n    names: \"" + std::string(2000, 'A') +
                                                       "[1-1000000]\"\n    ports: 36\n");
    const std::string w = write("waivers.yaml", waivers);
    const std::string plan = kToolsData + "/small-plan.yaml", actual = kToolsData + "/small-actual.ibnetdiscover";
    struct Case {
        std::vector<std::string> args;
        std::string file;
    };
    for (const Case& c : {Case{{"check", "-e", plan2, "-a", actual}, plan2}, Case{{"check", "-e", plan20, "-a", actual}, plan20},
                          Case{{"check", "-e", names, "-a", actual}, names},
                          Case{{"check", "-e", plan, "-a", actual, "--waivers", w}, w}}) {
        const Measured r = measure(c.args);
        EXPECT_EQ(r.code, 2) << c.file << ": " << r.err;
        EXPECT_EQ(r.err.rfind("ibfabric: " + c.file + ":", 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_LT(r.cpu_s, 2.0) << c.file;
        EXPECT_LT(r.max_rss_mb, 200) << c.file;
        std::printf("%s: %.2f s CPU, %ld MB: %s", fs::path(c.file).filename().c_str(), r.cpu_s, r.max_rss_mb, r.err.c_str());
    }
}

// Issue 19 item 9: a plan or waiver file's error quotes the input; its terminal escapes must not
// reach the terminal raw.
TEST_F(CheckCli, ParseErrorsKeepTerminalEscapesOffStderr) {
    const std::string esc = "\x1b[2J\x1b]0;PWN\x07";
    const std::string plan = write("esc.yaml", "version: 1\nswitches:\n  leaf:\n    names: \"bad name " + esc + "\"\n    ports: 36\n");
    const std::string w = write("esc-waivers.yaml", "waivers:\n  - kind: miswired\n    reason: x\n    " + esc + ": 1\n");
    const std::string actual = kToolsData + "/small-actual.ibnetdiscover";
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"check", "-e", plan, "-a", actual},
                                               {"check", "-e", kToolsData + "/small-plan.yaml", "-a", actual, "--waivers", w}}) {
        const Measured r = measure(args);
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("\\x1b[2J"), std::string::npos) << r.err;
    }
}

// Issue 9: `plan from-dump` of the SX6036 capture, a copy with ib3/21 and ib3/23 crossed and
// ib3/25 at 1x, checked with a node-name-map that renames ib3: the faults are still reported under
// the plan's name, and the rename is one finding — the same text as without the map, plus it.
TEST_F(CheckCli, NodeNameMapRenameKeepsTheCrossedPairAndTheSlowLink) {
    std::string text = slurp(kSx6036);
    auto swap_line = [&](const std::string& from, const std::string& to) {
        size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        ASSERT_EQ(text.find(from, at + 1), std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    swap_line("[21]\t\"S-f4521403007ea570\"[18]", "[21]\t\"S-f4521403007ea570\"[20]");
    swap_line("[23]\t\"S-f4521403007ea570\"[20]", "[23]\t\"S-f4521403007ea570\"[18]");
    swap_line("[18]\t\"S-f4521403007e8af0\"[21]", "[18]\t\"S-f4521403007e8af0\"[23]");
    swap_line("[20]\t\"S-f4521403007e8af0\"[23]", "[20]\t\"S-f4521403007e8af0\"[21]");
    swap_line("[25]\t\"S-f4521403007ea570\"[22]\t\t# \"MF0;ib8:SX6036/U1\" lid 1 4xFDR10",
              "[25]\t\"S-f4521403007ea570\"[22]\t\t# \"MF0;ib8:SX6036/U1\" lid 1 1xFDR10");
    swap_line("[22]\t\"S-f4521403007e8af0\"[25]\t\t# \"MF0;ib3:SX6036/U1\" lid 65 4xFDR10",
              "[22]\t\"S-f4521403007e8af0\"[25]\t\t# \"MF0;ib3:SX6036/U1\" lid 65 1xFDR10");
    const std::string actual = write("faulty.txt", text);
    const std::string plan = (dir / "plan.yaml").string();
    ASSERT_EQ(run("plan from-dump " + quote(kSx6036) + " -o " + quote(plan) + " --accept-anomalies").code, 0);
    const std::string faults =
        "miswired (1)\n"
        "  ib3\n"
        "    error   cables at ib3/21 and ib3/23 are crossed: ib3/21 goes to ib8/20 and ib3/23 to ib8/18, plan says "
        "the other way round; swap the cables at ib8/18 and ib8/20\n";
    const std::string slow =
        "rate_mismatch (1)\n"
        "  ib3\n"
        "    error   ib3/25 -- ib8/22 runs at 1xFDR10 (10 Gb/s), plan says 4xFDR10 (40 Gb/s); width degraded: reseat "
        "or replace the cable\n";
    Result r = run("check -e " + quote(plan) + " -a " + quote(actual));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_TRUE(r.out.ends_with(faults + slow + "2 findings: 1 miswired, 1 rate_mismatch\n")) << r.out;

    const std::string map = write("map", "0xf4521403007e8af0 \"rack03-leaf-ib3\"\n");
    r = run("check -e " + quote(plan) + " -a " + quote(actual) + " --node-name-map " + quote(map));
    EXPECT_EQ(r.code, 1) << r.err;
    // The rename is listed after the faults (docs/findings.md).
    EXPECT_TRUE(r.out.ends_with(faults + slow +
                                "identity_changed (1)\n"
                                "  ib3\n"
                                "    warning ib3 is called \"rack03-leaf-ib3\" in the fabric (0xf4521403007e8af0), found "
                                "by its cabling; its cables are checked as ib3's; use one name in the plan and the "
                                "node-name-map\n"
                                "3 findings: 1 miswired, 1 identity_changed, 1 rate_mismatch\n"))
        << r.out;
}
