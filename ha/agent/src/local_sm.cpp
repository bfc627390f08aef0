// set_opensm_priority(): opensm.conf's sm_priority and SIGHUP (ibf/local_sm.h), the direct path
// (a root daemon, the lab); under the packaged units the root helper does it (ha/priv/).
#include "ibf/local_sm.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "ibf/atomic_file.h"
#include "ibf/error.h"
#include "ibf/sm_helper.h"

namespace ibf {

LocalPriority set_opensm_priority(const std::string& opensm_conf, int pid, int priority) {
    std::error_code ec;
    const auto exe = pid > 0 ? std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec)
                             : std::filesystem::path("opensm");
    if (ec || exe.filename() != "opensm")
        throw InputError("", 0, 0, "pid " + std::to_string(pid) + " is not an opensm process");
    std::ifstream in(opensm_conf, std::ios::binary);
    if (!in) throw std::runtime_error(opensm_conf + ": cannot read");
    const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LocalPriority p;
    write_file_atomic(opensm_conf, opensm_conf_with_priority(old, priority, p.before), {.mode_if_new = 0600});
    if (pid > 0 && ::kill(pid, SIGHUP) != 0) throw std::runtime_error("cannot signal opensm (pid " + std::to_string(pid) + ")");
    return p;
}

}  // namespace ibf
