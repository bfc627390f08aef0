// Scope matching and writing an accepted plan (ibf/plan_accept.h).
#include "ibf/plan_accept.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "ibf/analysis.h"
#include "ibf/inputs.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"

namespace ibf {
namespace {

[[noreturn]] void sys_fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

// Writes `text` to a new file `path` with `mode`, flushed to disk.
void write_new(const std::string& path, const std::string& text, mode_t mode) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) sys_fail(path, "cannot create");
    size_t off = 0;
    while (off < text.size()) {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            sys_fail(path, "cannot write");
        }
        off += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) sys_fail(path, "cannot write");
}

}  // namespace

bool scope_matches(const std::vector<std::string>& scope, const std::string& name) {
    for (const std::string& s : scope) {
        if (s == name) return true;
        if (!s.empty() && s.back() == '*' && name.compare(0, s.size() - 1, s, 0, s.size() - 1) == 0) return true;
    }
    return false;
}

std::vector<Finding> findings_outside_scope(const std::vector<Finding>& fs, const std::vector<std::string>& scope) {
    std::vector<Finding> out;
    for (const Finding& f : fs)
        if (!scope_matches(scope, f.a.name) && !scope_matches(scope, f.b.name)) out.push_back(f);
    return out;
}

AcceptWrite write_accepted_plan(const std::string& plan_path, const Fabric& f, const std::string& source) {
    const InferredPlan p = infer_plan(f, analyze(f), source);
    const std::string yaml = plan_yaml_text(p.doc);
    struct stat st{};
    if (::stat(plan_path.c_str(), &st) != 0) sys_fail(plan_path, "cannot read");
    const std::string old = read_text_file(plan_path, "plan");
    AcceptWrite w;
    for (int n = 1;; ++n) {
        w.backup = plan_path + "." + std::to_string(n);
        if (!std::filesystem::exists(w.backup)) break;
    }
    write_new(w.backup, old, st.st_mode & 07777);
    const std::string tmp = plan_path + ".accept-tmp";
    std::remove(tmp.c_str());
    write_new(tmp, yaml, st.st_mode & 07777);
    if (std::rename(tmp.c_str(), plan_path.c_str()) != 0) sys_fail(plan_path, "cannot replace");
    w.compact_switches = p.compact_switches;
    w.compact_hosts = p.compact_hosts;
    w.explicit_cables = p.explicit_cables;
    w.bytes = yaml.size();
    return w;
}

}  // namespace ibf
