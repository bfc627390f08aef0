// set_opensm_priority(): opensm.conf's sm_priority and SIGHUP (ibf/local_sm.h).
#include "ibf/local_sm.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "ibf/error.h"
#include "ibf/ha_agent.h"

namespace ibf {
namespace {

// `text` of opensm.conf with its sm_priority line(s) set to `priority` (appended when none);
// `before` gets the last value replaced.
std::string with_priority(std::ifstream& in, int priority, int& before) {
    std::string text, line;
    bool replaced = false;
    while (std::getline(in, line)) {
        if (line.rfind("sm_priority", 0) == 0 && (line.size() == 11 || line[11] == ' ' || line[11] == '\t')) {
            before = std::atoi(line.c_str() + 11);
            line = "sm_priority " + std::to_string(priority);
            replaced = true;
        }
        text += line + "\n";
    }
    if (!replaced) text += "sm_priority " + std::to_string(priority) + "\n";
    return text;
}

}  // namespace

LocalPriority set_opensm_priority(const std::string& opensm_conf, int pid, int priority) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (ec || exe.filename() != "opensm")
        throw InputError("", 0, 0, "pid " + std::to_string(pid) + " is not an opensm process");
    std::ifstream in(opensm_conf);
    if (!in) throw std::runtime_error(opensm_conf + ": cannot read");
    LocalPriority p;
    const std::string text = with_priority(in, priority, p.before);
    write_file_atomic(opensm_conf, text);
    if (::kill(pid, SIGHUP) != 0) throw std::runtime_error("cannot signal opensm (pid " + std::to_string(pid) + ")");
    return p;
}

}  // namespace ibf
