// write_file_atomic(): the directory opened first, a temp file of its own beside the target, the
// old mode and owner, fsync, rename, fsync of the directory (ibf/atomic_file.h).
#include "ibf/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

namespace ibf {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
    throw std::system_error(err, std::generic_category(), path + ": cannot " + what);
}

// Closes the descriptor it holds, whatever happens.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

struct Split {
    std::string dir, base;
};

Split split(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

void write_all(int fd, std::string_view data, const std::string& path) {
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(path, "write", n < 0 ? errno : EIO);
        off += static_cast<size_t>(n);
    }
}

// The mode and owner of the file being replaced onto the temp file (or the new file's mode).
void copy_mode_and_owner(int dfd, int fd, const std::string& base, const std::string& path, mode_t mode_if_new) {
    struct stat st {};
    if (::fstatat(dfd, base.c_str(), &st, 0) != 0) {
        if (errno != ENOENT) fail(path, "stat", errno);
        if (::fchmod(fd, mode_if_new & 07777) != 0) fail(path, "set the new file's mode", errno);
        return;
    }
    // The mode first, while the file is still ours (no CAP_FOWNER needed), then the owner.
    if (::fchmod(fd, st.st_mode & 07777) != 0) fail(path, "keep its mode", errno);
    if ((st.st_uid != ::geteuid() || st.st_gid != ::getegid()) && ::fchown(fd, st.st_uid, st.st_gid) != 0)
        fail(path, "keep its owner (uid " + std::to_string(st.st_uid) + ", gid " + std::to_string(st.st_gid) + ")",
             errno);
}

// A temp file of this call's own beside the target: FILE.tmp.XXXXXXXX, created 0600 and O_EXCL.
int create_temp(int dfd, const Split& s, const std::string& path, std::string& tmp) {
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, ".tmp.%08x", static_cast<unsigned>(rd()));
        tmp = s.base + suffix;
        const int fd = ::openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
        if (errno != EEXIST || attempt >= 100) fail(path, "create a temporary file in " + s.dir, errno);
    }
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view data, const AtomicWriteOptions& options) {
    const Split s = split(path);
    if (s.base.empty() || s.base == "." || s.base == "..") fail(path, "replace it (not a file name)", EISDIR);
    // The directory first: it is fsync'd after the rename, so one the caller cannot open fails
    // here, before anything changed.
    Fd dir{::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd < 0) fail(path, "open its directory " + s.dir, errno);
    std::string tmp;
    {
        Fd f{create_temp(dir.fd, s, path, tmp)};
        try {
            copy_mode_and_owner(dir.fd, f.fd, s.base, path, options.mode_if_new);
            write_all(f.fd, data, path);
            if (::fsync(f.fd) != 0) fail(path, "fsync", errno);
            const int fd = f.fd;
            f.fd = -1;
            if (::close(fd) != 0) fail(path, "write (close)", errno);
            if (::renameat(dir.fd, tmp.c_str(), dir.fd, s.base.c_str()) != 0) fail(path, "replace it", errno);
        } catch (...) {
            ::unlinkat(dir.fd, tmp.c_str(), 0);
            throw;
        }
    }
    if (::fsync(dir.fd) != 0) fail(path, "fsync its directory " + s.dir, errno);
}

}  // namespace ibf
