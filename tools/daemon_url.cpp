// Which ibfabricd a client command asks (commands.h: daemon_url, add_daemon_options). A lab is
// asked only when --lab names it: a production command never goes looking for one, and the
// token never goes to a port named by a file someone else could have written (issue 19 item 3).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <signal.h>

#include "commands.h"
#include "ibf/error.h"
#include "ibf/lab_runner.h"

namespace ibf::cli {
namespace {

// A live process of this user (root's kill(pid, 0) succeeds for anyone's).
bool own_live_process(int pid) {
    struct stat st {};
    const std::string proc = "/proc/" + std::to_string(pid);
    return pid > 0 && ::kill(pid, 0) == 0 && ::stat(proc.c_str(), &st) == 0 && st.st_uid == ::geteuid();
}

// The URL of the daemon of the lab in `dir`; InputError when there is none or the state is not
// this user's own (lab_load_state checks owner and mode of the directory and the file).
std::string lab_url(const std::string& dir) {
    const std::optional<LabState> s = lab_load_state(dir);
    if (s && s->api_port > 0 && own_live_process(s->daemon_pid)) return "http://127.0.0.1:" + std::to_string(s->api_port);
    throw InputError(dir, 0, 0, "no running lab with a daemon here (start one with `ibfabric lab up --dir " + dir + " <plan>`)");
}

}  // namespace

std::string lab_token_file(const std::string& lab) {
    if (lab.empty() || !lab_load_state(lab)) return "";
    const std::string f = lab + "/api.token";
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0) return f;
    return "";
}

std::string daemon_url(const std::string& url, const std::string& lab) {
    if (!url.empty()) return url;
    if (!lab.empty()) return lab_url(lab);
    if (const char* env = std::getenv("IBFABRIC_URL"); env && *env) return env;
    return kDefaultDaemonUrl;
}

void add_daemon_options(CLI::App* sub, std::string& url, std::string& lab, const std::string& what) {
    CLI::Option* u = sub->add_option("--url", url,
                                     what + " URL (default: $IBFABRIC_URL, else " + std::string(kDefaultDaemonUrl) + ")");
    sub->add_option("--lab", lab, "ask the daemon of the lab in this directory (`ibfabric lab up --dir DIR`)")
        ->type_name("DIR")
        ->excludes(u);
}

}  // namespace ibf::cli
