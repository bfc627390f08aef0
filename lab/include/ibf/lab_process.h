// Process helpers of the lab (also used by the integration tests): fork()+execve() with an argv,
// never a shell; liveness checked through /proc so a reused PID is not mistaken for ours.
//
//   std::string out;
//   int rc = ibf::lab_detail::run_capture({.argv = {"ibnetdiscover"}, .env = {{"SIM_HOST", "h1"}}}, 30, out);
#pragma once

#include <string>
#include <vector>

namespace ibf::lab_detail {

struct SpawnSpec {
    std::vector<std::string> argv;   // argv[0] is resolved through PATH when it has no '/'
    std::vector<std::pair<std::string, std::string>> env;  // added to / replacing the environment
    std::string cwd;
    std::string stdin_path = "/dev/null";
    bool stdin_rdwr = false;         // open stdin read-write (keeps a FIFO from ever reaching EOF)
    std::string out_path;            // spawn: stdout and stderr, appended ("" = /dev/null);
                                     // run_capture: stderr only ("" = /dev/null)
    bool new_session = true;         // setsid(): survives the CLI that started it
    bool die_with_parent = false;    // SIGKILL when the caller dies (run_capture sets it: a client
                                     // such as ibnetdiscover hangs forever once ibsim is gone)
};

// Starts the process; throws std::runtime_error when it cannot be executed.
int spawn(const SpawnSpec& s);

// Runs to completion with stdout captured (stderr to `err_path` or /dev/null); kills it after
// `timeout_s`. Returns the exit status (128+signal when killed), -1 on timeout.
int run_capture(const SpawnSpec& s, double timeout_s, std::string& out);

std::string which(const std::string& prog);  // "" when not found
// The process exists, is not a zombie, and its executable's file name is `exe_name`
// (empty = any). Reaps it first when it is our own exited child.
bool alive(int pid, const std::string& exe_name = {});
// SIGTERM, wait up to grace_s, then SIGKILL. Returns true when it was running.
bool stop(int pid, const std::string& exe_name, double grace_s);
long rss_kb(int pid);  // VmRSS from /proc/<pid>/status, -1 when unknown
void sleep_s(double s);
double now_s();        // monotonic seconds

}  // namespace ibf::lab_detail
