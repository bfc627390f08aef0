// ha/priv/: the SM helper's request parser, opensm.conf rewrite, choice of opensm, the atomic file
// write (mode/owner kept), and the ibfabric-sm-helper program end to end on a socketpair.
#include "ibf/sm_helper.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ibf/sm_helper_client.h"

namespace {

namespace fs = std::filesystem;

std::string error_of(std::string_view bytes) {
    const auto r = ibf::parse_helper_request(bytes);
    const auto* e = std::get_if<std::string>(&r);
    return e ? *e : "(accepted)";
}

const std::string kGuid2Lid = "0x0002c90300000001 0x0001 0x0001\n\n0x0002c90300000002 0x0004 0x0007\n\n";

TEST(SmHelperRequest, BadRequestsGetOneLineErrors) {
    const std::pair<std::string, std::string> cases[] = {
        {"", "request without a newline: ''"},
        {"priority 14", "request without a newline: 'priority 14'"},
        {"reboot now\n", "unknown request 'reboot' (expected priority N or guid2lid BYTES)"},
        {"priority\n", "priority must be 0..15, got ''"},
        {"priority 16\n", "priority must be 0..15, got '16'"},
        {"priority -1\n", "priority must be 0..15, got '-1'"},
        {"priority 1 2\n", "priority must be 0..15, got '1 2'"},
        {"priority 14\nextra", "priority takes nothing after its line"},
        {"priority \x1b[2J\n", "priority must be 0..15, got '\\x1b[2J'"},
        {std::string(65, 'p') + "\n", "request line longer than 64 bytes"},
        {std::string(100, 'p'), "request line longer than 64 bytes"},
        {"guid2lid x\n", "guid2lid needs its size in bytes, 1..16777216, got 'x'"},
        {"guid2lid 99999999\n", "guid2lid needs its size in bytes, 1..16777216, got '99999999'"},
        {"guid2lid 0\n", "guid2lid with 0 bytes: an empty file would drop every LID"},
        {"guid2lid 10\nshort", "guid2lid said 10 bytes and 5 followed"},
        {"guid2lid 6\nhello\n", "guid2lid:1: expected \"0x<16 hex digits> <first LID> <last LID>\", got \"hello\""},
    };
    for (const auto& [in, want] : cases) EXPECT_EQ(error_of(in), want) << "request: " << in;
}

TEST(SmHelperRequest, PriorityAndGuid2LidAreAccepted) {
    auto r = ibf::parse_helper_request(ibf::priority_request(14));
    ASSERT_TRUE(std::holds_alternative<ibf::HelperRequest>(r));
    EXPECT_EQ(std::get<ibf::HelperRequest>(r).kind, ibf::HelperRequest::Kind::priority);
    EXPECT_EQ(std::get<ibf::HelperRequest>(r).priority, 14);
    EXPECT_EQ(std::get<ibf::HelperRequest>(ibf::parse_helper_request("priority 0\n")).priority, 0);

    r = ibf::parse_helper_request(ibf::guid2lid_request(kGuid2Lid));
    ASSERT_TRUE(std::holds_alternative<ibf::HelperRequest>(r)) << std::get<std::string>(r);
    const auto& g = std::get<ibf::HelperRequest>(r);
    EXPECT_EQ(g.kind, ibf::HelperRequest::Kind::guid2lid);
    EXPECT_EQ(g.body, kGuid2Lid);
    EXPECT_EQ(g.entries, 2u);
}

TEST(SmHelperRequest, ErrorsAreOneLine) {
    EXPECT_EQ(ibf::helper_error("bad\nline\x1b"), "error: bad\\x0aline\\x1b\n");
}

TEST(SmHelperConf, PriorityLinesAreReplacedOrAppended) {
    int before = 0;
    EXPECT_EQ(ibf::opensm_conf_with_priority("sm_key 0x1\nsm_priority 15\nlmc 0\n", 13, before),
              "sm_key 0x1\nsm_priority 13\nlmc 0\n");
    EXPECT_EQ(before, 15);
    EXPECT_EQ(ibf::opensm_conf_with_priority("sm_key 0x1", 2, before), "sm_key 0x1\nsm_priority 2\n");
    EXPECT_EQ(before, -1);
    // sm_priority_x is another option; a commented line stays.
    EXPECT_EQ(ibf::opensm_conf_with_priority("sm_priority_x 1\n# sm_priority 3\nsm_priority\t7\n", 9, before),
              "sm_priority_x 1\n# sm_priority 3\nsm_priority 9\n");
    EXPECT_EQ(before, 7);
}

TEST(SmHelperPick, OnlyARootOpensmAndWhenSeveralTheOneNamingTheConf) {
    using P = ibf::ProcInfo;
    const std::string conf = "/etc/opensm/opensm.conf";
    auto pick = [&](std::vector<P> ps) { return ibf::pick_opensm(ps, conf); };
    EXPECT_EQ(std::get<std::string>(pick({})), "no opensm process runs as root on this node");
    EXPECT_EQ(std::get<std::string>(pick({P{10, "opensm", 1000, {}}, P{11, "sshd", 0, {}}})),
              "no opensm process runs as root on this node");
    EXPECT_EQ(std::get<int>(pick({P{10, "opensm", 0, {"opensm"}}, P{11, "opensm", 1000, {}}})), 10);
    EXPECT_EQ(std::get<int>(pick({P{10, "opensm", 0, {"opensm", "-F", "/tmp/a.conf"}},
                                  P{12, "opensm", 0, {"opensm", "--config", conf}}})),
              12);
    EXPECT_EQ(std::get<std::string>(pick({P{10, "opensm", 0, {"opensm"}}, P{12, "opensm", 0, {"opensm", "-B"}}})),
              "2 opensm processes run and 0 of them name /etc/opensm/opensm.conf with -F/--config: not choosing one");
    // opensm forked (a child not yet exec'd has its parent's name and argv): still one SM.
    const std::vector<std::string> argv{"opensm", "-F", conf};
    EXPECT_EQ(std::get<int>(pick({P{10, "opensm", 0, argv, 1}, P{20, "opensm", 0, argv, 10}})), 10);
    EXPECT_EQ(std::get<int>(pick({P{20, "opensm", 0, argv, 10}, P{10, "opensm", 0, argv, 1}})), 10);
    // Two unrelated ones that both name the conf: refused, as before.
    EXPECT_EQ(std::get<std::string>(pick({P{10, "opensm", 0, argv, 1}, P{20, "opensm", 0, argv, 1}})),
              "2 opensm processes run and 2 of them name /etc/opensm/opensm.conf with -F/--config: not choosing one");
}

TEST(SmHelperClient, AnswerFields) {
    EXPECT_EQ(ibf::answer_field("priority=14 before=15 pid=812", "before"), 15);
    EXPECT_EQ(ibf::answer_field("priority=14 before=-1 pid=812", "before"), -1);
    EXPECT_EQ(ibf::answer_field("priority=14 pid=812", "id"), -1);
    EXPECT_EQ(ibf::answer_field("priority=14 pid=812", "pid"), 812);
}

class TempDir : public ::testing::Test {
protected:
    void SetUp() override {
        char t[] = "/tmp/ibf-smhelper-XXXXXX";
        ASSERT_NE(::mkdtemp(t), nullptr);
        dir = t;
    }
    void TearDown() override { fs::remove_all(dir); }
    std::string dir;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The helper on one end of a socketpair (stdin and stdout, as systemd's Accept=yes gives it), the
// test on the other as its client; returns the answer line and the helper's exit status.
std::pair<std::string, int> run_helper(const std::vector<std::string>& args, const std::string& request) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return {"socketpair failed", -1};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(sv[1], 0);
        ::dup2(sv[1], 1);
        ::close(sv[0]);
        ::close(sv[1]);
        std::vector<char*> argv;
        const std::string prog = std::string(IBF_BIN_DIR) + "/ibfabric-sm-helper";
        argv.push_back(const_cast<char*>(prog.c_str()));
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(prog.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(sv[1]);
    (void)!::write(sv[0], request.data(), request.size());
    ::shutdown(sv[0], SHUT_WR);
    std::string answer;
    char buf[256];
    for (ssize_t n; (n = ::read(sv[0], buf, sizeof buf)) > 0;) answer.append(buf, static_cast<size_t>(n));
    ::close(sv[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {answer, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

using SmHelperProgram = TempDir;

TEST_F(SmHelperProgram, ReplacesGuid2LidKeepingItsModeAndRefusesBadText) {
    const std::string g = dir + "/guid2lid";
    std::ofstream(g) << "0x0002c90300000009 0x0009 0x0009\n\n";
    ASSERT_EQ(::chmod(g.c_str(), 0640), 0);
    const std::vector<std::string> args = {"--opensm-conf", dir + "/opensm.conf", "--guid2lid", g, "--allow-group", "root"};
    auto [a, rc] = run_helper(args, ibf::guid2lid_request(kGuid2Lid));
    EXPECT_EQ(a, "ok guid2lid bytes=" + std::to_string(kGuid2Lid.size()) + " entries=2\n");
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(slurp(g), kGuid2Lid);
    struct stat st {};
    ASSERT_EQ(::stat(g.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);

    std::tie(a, rc) = run_helper(args, "guid2lid 6\nhello\n");
    EXPECT_EQ(a, "error: guid2lid:1: expected \"0x<16 hex digits> <first LID> <last LID>\", got \"hello\"\n");
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(slurp(g), kGuid2Lid);
}

TEST_F(SmHelperProgram, SetsThePriorityAndSignalsTheOpensmItFindsItself) {
    const std::string conf = dir + "/opensm.conf";
    std::ofstream(conf) << "sm_key 0x1\nsm_priority 15\n";
    ASSERT_EQ(::chmod(conf.c_str(), 0600), 0);
    // A stand-in opensm: a copy of sh named opensm (so /proc/PID/comm says opensm), whose argv
    // names this conf with -F (other opensm processes may run on this machine).
    fs::copy_file("/bin/sh", dir + "/opensm");
    const pid_t sm = ::fork();
    if (sm == 0) {
        ::execl((dir + "/opensm").c_str(), "opensm", "-c", "trap 'exit 42' HUP; : >\"$0.ready\"; while :; do sleep 0.05; done",
                (dir + "/opensm").c_str(), "-F", conf.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    for (int i = 0; i < 200 && !fs::exists(dir + "/opensm.ready"); ++i)  // its trap is set
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    const std::vector<std::string> args = {"--opensm-conf", conf, "--guid2lid", dir + "/guid2lid", "--allow-group", "root"};
    auto [a, rc] = run_helper(args, "priority 13\n");
    EXPECT_EQ(a, "ok priority=13 before=15 pid=" + std::to_string(sm) + "\n");
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(slurp(conf), "sm_key 0x1\nsm_priority 13\n");
    struct stat st {};
    ASSERT_EQ(::stat(conf.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(sm, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!WIFEXITED(status)) ::kill(sm, SIGKILL), ::waitpid(sm, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 42) << "the stand-in opensm got no SIGHUP";
}

TEST_F(SmHelperProgram, NotOnASocketOrWithoutItsPathsItRefuses) {
    const std::string prog = std::string(IBF_BIN_DIR) + "/ibfabric-sm-helper";
    EXPECT_EQ(WEXITSTATUS(std::system((prog + " --opensm-conf relative.conf --guid2lid /x --allow-group g 2>/dev/null").c_str())), 2);
    const std::string out = dir + "/out";
    const int rc = std::system((prog + " --opensm-conf /x --guid2lid /y --allow-group root </dev/null >" + out + " 2>/dev/null").c_str());
    EXPECT_EQ(WEXITSTATUS(rc), 1);
    EXPECT_EQ(slurp(out).rfind("error: refused: stdin is not a Unix socket", 0), 0u) << slurp(out);
}

}  // namespace
