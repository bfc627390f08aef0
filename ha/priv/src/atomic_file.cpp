// write_file_atomic(): temp file, old mode and owner, fsync, rename, fsync of the directory
// (ibf/atomic_file.h).
#include "ibf/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ibf {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
    throw std::runtime_error(path + ": cannot " + what + ": " + std::strerror(err));
}

void write_all(int fd, const std::string& text, const std::string& tmp) {
    size_t off = 0;
    while (off < text.size()) {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(tmp, "write", n < 0 ? errno : EIO);
        off += static_cast<size_t>(n);
    }
}

// Mode and owner of the file being replaced onto the temp file (or the new file's mode).
void copy_mode_and_owner(int fd, const std::string& path, mode_t mode_if_new, const std::string& tmp) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) fail(path, "stat", errno);
        if (::fchmod(fd, mode_if_new) != 0) fail(tmp, "chmod", errno);
        return;
    }
    // The mode first, while the file is still ours (no CAP_FOWNER needed), then the owner.
    if (::fchmod(fd, st.st_mode & 07777) != 0) fail(tmp, "chmod", errno);
    if ((st.st_uid != ::geteuid() || st.st_gid != ::getegid()) && ::fchown(fd, st.st_uid, st.st_gid) != 0)
        fail(tmp, "give it " + path + "'s owner", errno);
}

void fsync_dir(const std::string& path) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) fail(dir, "open the directory to fsync it", errno);
    const int rc = ::fsync(dfd), err = errno;
    ::close(dfd);
    if (rc != 0) fail(dir, "fsync", err);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& text, mode_t mode_if_new) {
    const std::string tmp = path + ".tmp";
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) fail(tmp, "remove a stale temp file", errno);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) fail(tmp, "create", errno);
    try {
        copy_mode_and_owner(fd, path, mode_if_new, tmp);
        write_all(fd, text, tmp);
        if (::fsync(fd) != 0) fail(tmp, "fsync", errno);
    } catch (...) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw;
    }
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(tmp, "close", err);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, "replace", err);
    }
    fsync_dir(path);
}

}  // namespace ibf
