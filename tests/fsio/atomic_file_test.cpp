// write_file_atomic() (fsio/): mode and owner kept, a new file's mode, the directory fsync'd, no
// temp file left behind on any failure, and concurrent writers leaving one whole file.
#include "ibf/atomic_file.h"

#include <gtest/gtest.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

class AtomicFile : public ::testing::Test {
protected:
    void SetUp() override {
        char t[] = "/tmp/ibf-fsio-XXXXXX";
        ASSERT_NE(::mkdtemp(t), nullptr);
        dir = t;
        ASSERT_EQ(::chmod(dir.c_str(), 0711), 0);  // an unprivileged child may pass through
    }
    void TearDown() override {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.is_directory()) fs::permissions(e.path(), fs::perms::owner_all, ec);
        fs::remove_all(dir, ec);
    }
    // A directory for a child without privileges: owned by nobody when the test runs as root
    // (so its mode bits apply to the child), else the test's own.
    std::string child_dir(mode_t mode) {
        const std::string d = dir + "/d";
        EXPECT_EQ(::mkdir(d.c_str(), 0700), 0);
        if (::geteuid() == 0) {
            EXPECT_EQ(::chown(d.c_str(), kNobody, kNobody), 0);
        }
        EXPECT_EQ(::chmod(d.c_str(), mode), 0);
        return d;
    }
    std::string dir;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every name in `d`: a temp file left behind shows up here.
std::set<std::string> names_in(const std::string& d) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(d)) out.insert(e.path().filename().string());
    return out;
}

// What write_file_atomic() threw, or "no error".
std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::system_error& e) {
        return e.what();
    }
    return "no error";
}

// Runs `f` in a child process (as nobody when the test runs as root, so permission bits apply;
// `setup` runs in the child first, e.g. a resource limit) and returns what it returned.
std::string in_child(const std::function<std::string()>& f, const std::function<void()>& setup = {}) {
    int p[2];
    if (::pipe(p) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(p[0]);
        std::string r;
        if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) {
            r = "cannot become nobody";
        } else {
            if (setup) setup();
            try {
                r = f();
            } catch (const std::exception& e) {
                r = std::string("unexpected: ") + e.what();
            }
        }
        (void)!::write(p[1], r.data(), r.size());
        ::_exit(0);
    }
    ::close(p[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(p[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) out += " (child died)";
    return out;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
}

TEST_F(AtomicFile, KeepsTheModeAndOwnerOfTheFileItReplaces) {
    const std::string f = dir + "/opensm.conf";
    std::ofstream(f) << "sm_key 0x1\n";
    ASSERT_EQ(::chmod(f.c_str(), 0640), 0);
    const bool root = ::geteuid() == 0;
    if (root) {
        ASSERT_EQ(::chown(f.c_str(), 1234, 5678), 0);
    }
    ibf::write_file_atomic(f, "sm_key 0x1\nsm_priority 3\n", {.mode_if_new = 0644});  // not new: ignored
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    if (root) {
        EXPECT_EQ(st.st_uid, 1234u);
        EXPECT_EQ(st.st_gid, 5678u);
    } else {
        std::printf("not root: the owner part is checked only as root\n");
    }
    EXPECT_EQ(slurp(f), "sm_key 0x1\nsm_priority 3\n");
    EXPECT_EQ(names_in(dir), std::set<std::string>{"opensm.conf"});
}

TEST_F(AtomicFile, ANewFileIs0600UnlessToldAndGetsItsModeWhateverTheUmask) {
    const mode_t old = ::umask(0);
    ibf::write_file_atomic(dir + "/token", "secret\n");
    ::umask(077);
    ibf::write_file_atomic(dir + "/track", "1\n", {.mode_if_new = 0644});
    ::umask(old);
    EXPECT_EQ(mode_of(dir + "/token"), 0600u);
    EXPECT_EQ(mode_of(dir + "/track"), 0644u);
    EXPECT_EQ(slurp(dir + "/track"), "1\n");
    ibf::write_file_atomic(dir + "/empty", "");
    EXPECT_EQ(slurp(dir + "/empty"), "");
    EXPECT_EQ(names_in(dir), (std::set<std::string>{"empty", "token", "track"}));
}

// The directory is fsync'd after the rename, so it is opened first: one that may be written but
// not read (0300) is an error before anything changed, not after the file was replaced.
TEST_F(AtomicFile, ADirectoryItCannotOpenToFsyncIsAnErrorBeforeAnythingChanges) {
    const std::string d = child_dir(0700);
    const std::string f = d + "/plan.yaml";
    std::ofstream(f) << "old\n";
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(f.c_str(), kNobody, kNobody), 0);
    }
    ASSERT_EQ(::chmod(d.c_str(), 0300), 0);
    EXPECT_EQ(in_child([&] { return error_of([&] { ibf::write_file_atomic(f, "new\n"); }); }),
              f + ": cannot open its directory " + d + ": Permission denied");
    ASSERT_EQ(::chmod(d.c_str(), 0700), 0);
    EXPECT_EQ(slurp(f), "old\n");
    EXPECT_EQ(names_in(d), std::set<std::string>{"plan.yaml"});
    // The same directory readable: the fsync'd path succeeds.
    EXPECT_EQ(in_child([&] { return error_of([&] { ibf::write_file_atomic(f, "new\n"); }); }), "no error");
    EXPECT_EQ(slurp(f), "new\n");
}

TEST_F(AtomicFile, AnUnwritableOrMissingDirectoryIsAnErrorNamingTheFile) {
    const std::string d = child_dir(0500);
    EXPECT_EQ(in_child([&] { return error_of([&] { ibf::write_file_atomic(d + "/port", "8639\n"); }); }),
              d + "/port: cannot create a temporary file in " + d + ": Permission denied");
    ASSERT_EQ(::chmod(d.c_str(), 0700), 0);
    EXPECT_TRUE(names_in(d).empty());
    EXPECT_EQ(error_of([&] { ibf::write_file_atomic(dir + "/no/such/guid2lid", "x"); }),
              dir + "/no/such/guid2lid: cannot open its directory " + dir + "/no/such: No such file or directory");
    EXPECT_EQ(error_of([&] { ibf::write_file_atomic(dir + "/", "x"); }),
              dir + "/: cannot replace it (not a file name): Is a directory");
}

// A failure after the temp file exists (here the write: a file size limit) removes it, and the
// old file stays as it was.
TEST_F(AtomicFile, AFailedWriteLeavesNoTempFileAndTheOldFileAsItWas) {
    const std::string d = child_dir(0700);
    const std::string f = d + "/state.json";
    std::ofstream(f) << "{}\n";
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(f.c_str(), kNobody, kNobody), 0);
    }
    const std::string err = in_child([&] { return error_of([&] { ibf::write_file_atomic(f, std::string(8192, 'x')); }); },
                                     [] {
                                         ::signal(SIGXFSZ, SIG_IGN);
                                         const rlimit lim{1024, 1024};
                                         ::setrlimit(RLIMIT_FSIZE, &lim);
                                     });
    EXPECT_EQ(err, f + ": cannot write: File too large");
    EXPECT_EQ(slurp(f), "{}\n");
    EXPECT_EQ(names_in(d), std::set<std::string>{"state.json"});
}

// An owner the writer may not give (a file of root's in a directory nobody may write) is an
// error: the file keeps its owner and text, rather than silently changing hands.
TEST_F(AtomicFile, AnOwnerItMayNotGiveIsAnErrorAndTheFileStaysAsItWas) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: a file of another owner cannot be made otherwise";
    const std::string d = child_dir(0700);
    const std::string f = d + "/waivers.yaml";
    std::ofstream(f) << "version: 1\n";  // root's
    EXPECT_EQ(in_child([&] { return error_of([&] { ibf::write_file_atomic(f, "version: 1\nwaivers: []\n"); }); }),
              f + ": cannot keep its owner (uid 0, gid 0): Operation not permitted");
    EXPECT_EQ(slurp(f), "version: 1\n");
    EXPECT_EQ(names_in(d), std::set<std::string>{"waivers.yaml"});
}

// Each writer has a temp file of its own: 4 writers replacing one file 40 times each, while a
// reader reads it, leave a whole file every time (one writer's text, never a mix or a part),
// and no temp file.
TEST_F(AtomicFile, ConcurrentWritersLeaveOneWholeFile) {
    const std::string f = dir + "/state";
    constexpr size_t kSize = 64 * 1024;
    ibf::write_file_atomic(f, std::string(kSize, 'a'));
    std::atomic<bool> done{false};
    std::atomic<int> reads{0}, torn{0};
    std::vector<std::string> errors(4);
    std::thread reader([&] {
        while (!done) {
            const std::string t = slurp(f);
            ++reads;
            if (t.size() != kSize || t.find_first_not_of(t[0]) != std::string::npos) ++torn;
        }
    });
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w)
        writers.emplace_back([&, w] {
            for (int i = 0; i < 40; ++i) {
                const std::string e = error_of([&] { ibf::write_file_atomic(f, std::string(kSize, static_cast<char>('a' + w))); });
                if (e != "no error") errors[w] = e;
            }
        });
    for (auto& t : writers) t.join();
    done = true;
    reader.join();
    for (const auto& e : errors) EXPECT_EQ(e, "");
    EXPECT_EQ(torn.load(), 0) << "of " << reads.load() << " reads";
    EXPECT_GT(reads.load(), 0);
    const std::string t = slurp(f);
    ASSERT_EQ(t.size(), kSize);
    EXPECT_EQ(t.find_first_not_of(t[0]), std::string::npos);
    EXPECT_EQ(names_in(dir), std::set<std::string>{"state"});
}

}  // namespace
