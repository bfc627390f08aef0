#include "ibf/inputs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "ibf/atomic_file.h"
#include "ibf/error.h"
#include "ibf/plan_yaml.h"

namespace ibf {
namespace {

// The directory part of `path` ("" when none), to resolve files a plan names relative to it.
std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Closes a file descriptor on every path out.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

[[noreturn]] void too_large(const std::string& path, size_t max_bytes) {
    throw InputError(path, 0, 0, "larger than the " + size_limit_text(max_bytes) + " limit");
}

// Reads `fd` to its end, failing once more than `max_bytes` arrive (a file may grow while read).
std::string read_bounded(int fd, const std::string& path, std::string_view what, size_t max_bytes, size_t hint) {
    std::string out;
    out.reserve(std::min(hint, max_bytes) + 1);
    char buf[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw InputError(path, 0, 0, "cannot read the " + std::string(what) + ": " + std::strerror(errno));
        if (n == 0) return out;
        if (out.size() + static_cast<size_t>(n) > max_bytes) too_large(path, max_bytes);
        out.append(buf, static_cast<size_t>(n));
    }
}

}  // namespace

std::string size_limit_text(size_t bytes) {
    if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

FileContents read_regular_file(const std::string& path, std::string_view what, size_t max_bytes) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (f.fd < 0) throw InputError(path, 0, 0, "cannot read the " + std::string(what) + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0)
        throw InputError(path, 0, 0, "cannot read the " + std::string(what) + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw InputError(path, 0, 0, "not a regular file");
    if (static_cast<uint64_t>(st.st_size) > max_bytes) too_large(path, max_bytes);
    ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
    return {read_bounded(f.fd, path, what, max_bytes, static_cast<size_t>(st.st_size)),
            static_cast<unsigned>(st.st_mode & 07777)};
}

std::string read_text_file(const std::string& path, std::string_view what, size_t max_bytes) {
    if (path == "-") return read_bounded(STDIN_FILENO, "<stdin>", what, max_bytes, 0);
    return read_regular_file(path, what, max_bytes).text;
}

void write_text_file(const std::string& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw InputError(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
}

namespace {

// Writes `text` to a new file `path` with `mode`, flushed to disk.
void write_new(const std::string& path, std::string_view text, mode_t mode) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) throw InputError(path, 0, 0, std::string("cannot create: ") + std::strerror(errno));
    Fd closer{fd};
    size_t off = 0;
    while (off < text.size()) {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw InputError(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
        off += static_cast<size_t>(n);
    }
    if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0)  // fchmod: the umask does not narrow the plan's mode
        throw InputError(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
}

}  // namespace

std::string write_plan_keeping_previous(const std::string& path, std::string_view text) {
    const FileContents old = read_regular_file(path, "plan", kMaxInputFileBytes);
    const mode_t mode = static_cast<mode_t>(old.mode);
    std::string backup;
    for (int n = 1;; ++n) {
        backup = path + "." + std::to_string(n);
        if (!std::filesystem::exists(backup)) break;
    }
    write_new(backup, old.text, mode);  // exclusive: a concurrent accept never overwrites a backup
    // The plan itself through the one atomic write (fsio/): its mode and owner kept (a plan of
    // another user's than the daemon's is refused, not handed over), fsync'd with its directory.
    try {
        write_file_atomic(path, text);
    } catch (const std::system_error& e) {
        throw InputError(path, 0, 0, e.what());
    }
    return backup;
}

NodeNameMap load_node_name_map(const std::string& path) {
    const std::string text = read_text_file(path, "node-name-map");
    return naming_file(path, "node-name-map", [&] { return parse_node_name_map(text, path); });
}

Fabric load_dump_file(const std::string& path, const NodeNameMap& names) {
    const std::string text = read_text_file(path, "dump");
    Fabric f = naming_file(path, "dump", [&] { return parse_dump(text, path); });
    if (!names.empty()) apply_node_name_map(f, names);
    return f;
}

Expected load_expected(const std::string& path, const std::string& node_name_map) {
    Expected e;
    if (!node_name_map.empty()) {
        e.names = load_node_name_map(node_name_map);
        e.names_path = node_name_map;
    }
    const std::string text = read_text_file(path, "plan");
    if (!looks_like_plan_yaml(text) && detect_dump_format(text)) {
        e.golden = naming_file(path, "plan", [&] { return parse_dump(text, path); });
        if (!e.names.empty()) apply_node_name_map(*e.golden, e.names);
        e.plan = plan_from_fabric(*e.golden, path);
        return e;
    }
    e.plan = naming_file(path, "plan", [&] { return parse_plan_yaml(text, path); });
    if (node_name_map.empty() && !e.plan.node_name_map.empty()) {
        std::string p = e.plan.node_name_map;
        if (p.front() != '/') p = dir_of(path) + p;
        e.names = parse_node_name_map(read_text_file(p, "node-name-map named by the plan"), p);
        e.names_path = p;
    }
    return e;
}

}  // namespace ibf
