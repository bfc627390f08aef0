#include "ibf/inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/stat.h>

#include <filesystem>
#include <functional>

#include "ibf/error.h"

namespace fs = std::filesystem;
using namespace ibf;

namespace {

class InputsTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ibf-inputs-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

const char* kPlan = R"(version: 1
node_name_map: names.map
cables:
  - {a: sw1/1, b: hostA/1, rate: 4xEDR}
)";

}  // namespace

TEST_F(InputsTest, PlanNamesItsNodeNameMapRelativeToItsOwnFolder) {
    write_text_file(path("plan.yaml"), kPlan);
    write_text_file(path("names.map"), "0x0000000000000001 \"sw1\"\n");
    Expected e = load_expected(path("plan.yaml"));
    EXPECT_FALSE(e.golden);
    EXPECT_EQ(e.plan.links.size(), 1u);
    EXPECT_EQ(e.names_path, path("names.map"));
    ASSERT_EQ(e.names.size(), 1u);
    EXPECT_EQ(e.names.at(1), "sw1");
}

TEST_F(InputsTest, ExplicitNodeNameMapWinsOverThePlans) {
    write_text_file(path("plan.yaml"), kPlan);
    write_text_file(path("other.map"), "0x2 \"hostA\"\n");
    Expected e = load_expected(path("plan.yaml"), path("other.map"));
    EXPECT_EQ(e.names_path, path("other.map"));
    EXPECT_EQ(e.names.count(2), 1u);
}

TEST_F(InputsTest, GoldenDumpIsAPlanByGuidWithTheMapApplied) {
    const std::string dump = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
    write_text_file(path("names.map"), "0xf4521403001165a0 \"renamed-ib5\"\n");
    Expected e = load_expected(dump, path("names.map"));
    ASSERT_TRUE(e.golden);
    EXPECT_EQ(e.plan.nodes.size(), 152u);
    EXPECT_EQ(e.plan.links.size(), 192u);
    EXPECT_EQ(e.golden->find_by_name("renamed-ib5").size(), 1u);
    Fabric actual = load_dump_file(dump, e.names);
    EXPECT_EQ(actual.find_by_name("renamed-ib5").size(), 1u);
}

TEST_F(InputsTest, ErrorsNameTheFile) {
    try {
        load_expected(path("absent.yaml"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), path("absent.yaml"));
        EXPECT_NE(std::string(e.what()).find("cannot read the plan"), std::string::npos) << e.what();
    }
    write_text_file(path("plan.yaml"), kPlan);  // names.map is missing
    try {
        load_expected(path("plan.yaml"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), path("names.map"));
        EXPECT_NE(std::string(e.what()).find("node-name-map named by the plan"), std::string::npos) << e.what();
    }
    write_text_file(path("bad.txt"), "Switch 36 \"S-1\"\n[1] \"H-2\"[1] # \"x\" lid 3 4xZDR\n");
    EXPECT_THROW(load_dump_file(path("bad.txt")), InputError);
}

// Bounded reads (issue 10): the probes that used to eat memory or pass silently.
namespace {
std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_F(InputsTest, DevicesAreNotRegularFiles) {
    EXPECT_EQ(error_of([] { load_dump_file("/dev/zero"); }), "/dev/zero: not a regular file");
    EXPECT_EQ(error_of([] { load_dump_file("/dev/urandom"); }), "/dev/urandom: not a regular file");
    EXPECT_EQ(error_of([] { load_node_name_map("/dev/zero"); }), "/dev/zero: not a regular file");
    EXPECT_EQ(error_of([] { load_expected("/dev/zero"); }), "/dev/zero: not a regular file");
    write_text_file(path("plan.yaml"), kPlan);
    EXPECT_EQ(error_of([&] { load_expected(path("plan.yaml"), "/dev/urandom"); }), "/dev/urandom: not a regular file");
}

TEST_F(InputsTest, ADirectoryAsNodeNameMapIsAnError) {
    fs::create_directories(path("maps"));
    EXPECT_EQ(error_of([&] { load_node_name_map(path("maps")); }), path("maps") + ": not a regular file");
    const std::string dump = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
    EXPECT_EQ(error_of([&] { load_expected(dump, path("maps")); }), path("maps") + ": not a regular file");
}

TEST_F(InputsTest, AFifoIsRefusedWithoutWaitingForAWriter) {
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    EXPECT_EQ(error_of([&] { load_dump_file(path("fifo")); }), path("fifo") + ": not a regular file");
}

TEST_F(InputsTest, FilesOverTheLimitAreRefusedBeforeReading) {
    // A sparse file one byte over 256 MiB: refused from its size, nothing is read.
    const std::string big = path("big.txt");
    write_text_file(big, "");
    fs::resize_file(big, kMaxInputFileBytes + 1);
    EXPECT_EQ(error_of([&] { load_dump_file(big); }), big + ": larger than the 256 MiB limit");
    EXPECT_EQ(error_of([&] { load_expected(big); }), big + ": larger than the 256 MiB limit");
    // Exactly at a (smaller) limit is fine; one byte more is not.
    write_text_file(path("small"), std::string(1024, 'x'));
    EXPECT_EQ(read_text_file(path("small"), "test", 1024).size(), 1024u);
    EXPECT_EQ(error_of([&] { read_text_file(path("small"), "test", 1023); }), path("small") + ": larger than the 1023 bytes limit");
    EXPECT_EQ(size_limit_text(4096), "4 KiB");
    EXPECT_EQ(size_limit_text(kMaxInputFileBytes), "256 MiB");
}

TEST_F(InputsTest, RegularFileModeComesWithTheText) {
    write_text_file(path("t"), "abc\n");
    ::chmod(path("t").c_str(), 0640);
    FileContents c = read_regular_file(path("t"), "token file", 4096);
    EXPECT_EQ(c.text, "abc\n");
    EXPECT_EQ(c.mode, 0640u);
}

TEST_F(InputsTest, DashIsStandardInputUpToTheLimit) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const int saved = ::dup(STDIN_FILENO);
    ASSERT_EQ(::dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    ::close(fds[0]);
    ASSERT_EQ(::write(fds[1], "0x1 \"sw1\"\n", 10), 10);
    ::close(fds[1]);
    const std::string text = read_text_file("-", "node-name-map", 10);
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
    EXPECT_EQ(text, "0x1 \"sw1\"\n");

    ASSERT_EQ(::pipe(fds), 0);
    const int saved2 = ::dup(STDIN_FILENO);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
    ASSERT_EQ(::write(fds[1], "0123456789A", 11), 11);
    ::close(fds[1]);
    const std::string err = error_of([] { read_text_file("-", "dump", 10); });
    ::dup2(saved2, STDIN_FILENO);
    ::close(saved2);
    EXPECT_EQ(err, "<stdin>: larger than the 10 bytes limit");
}

// accept's write (issue 20 item 6): the previous plan is kept as plan.yaml.N (the first free N),
// both files with the plan's mode whatever the umask, and the plan is replaced whole.
TEST_F(InputsTest, AnAcceptedPlanKeepsThePreviousOneWithItsMode) {
    write_text_file(path("plan.yaml"), "version: 1\n# one\n");
    ::chmod(path("plan.yaml").c_str(), 0640);
    const mode_t old_umask = ::umask(077);
    EXPECT_EQ(write_plan_keeping_previous(path("plan.yaml"), "version: 1\n# two\n"), path("plan.yaml.1"));
    EXPECT_EQ(write_plan_keeping_previous(path("plan.yaml"), "version: 1\n# three\n"), path("plan.yaml.2"));
    ::umask(old_umask);
    EXPECT_EQ(read_regular_file(path("plan.yaml.1"), "plan", 4096).text, "version: 1\n# one\n");
    EXPECT_EQ(read_regular_file(path("plan.yaml.2"), "plan", 4096).text, "version: 1\n# two\n");
    for (const char* f : {"plan.yaml", "plan.yaml.1", "plan.yaml.2"}) {
        const FileContents c = read_regular_file(path(f), "plan", 4096);
        EXPECT_EQ(c.mode, 0640u) << f;
    }
    EXPECT_EQ(read_regular_file(path("plan.yaml"), "plan", 4096).text, "version: 1\n# three\n");
    EXPECT_FALSE(fs::exists(path("plan.yaml.accept-tmp")));
    EXPECT_THROW(write_plan_keeping_previous(path("absent.yaml"), "x"), InputError);
}
