#include "ibf/lab_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ibf::lab_detail {

namespace {

struct CArgs {
    std::vector<std::string> store;
    std::vector<char*> ptrs;
    void finish() {
        ptrs.clear();
        for (auto& s : store) ptrs.push_back(s.data());
        ptrs.push_back(nullptr);
    }
};

CArgs make_env(const SpawnSpec& s) {
    CArgs e;
    for (char** p = environ; *p; ++p) {
        std::string kv = *p;
        auto eq = kv.find('=');
        std::string k = kv.substr(0, eq);
        bool replaced = false;
        for (auto& [nk, nv] : s.env)
            if (nk == k) replaced = true;
        if (!replaced) e.store.push_back(kv);
    }
    for (auto& [k, v] : s.env) e.store.push_back(k + "=" + v);
    e.finish();
    return e;
}

// Child side, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const SpawnSpec& s, const std::string& path, char** argv, char** envp, int out_fd,
                             int err_fd, int in_fd, int err_pipe, pid_t parent) {
    if (s.new_session) setsid();
    if (s.die_with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);  // the caller died before prctl took effect
    }
    if (!s.cwd.empty() && chdir(s.cwd.c_str()) != 0) {
        int e = errno;
        (void)!write(err_pipe, &e, sizeof e);
        _exit(127);
    }
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int fd = 3; fd < 1024; ++fd)
        if (fd != err_pipe) close(fd);
    execve(path.c_str(), argv, envp);
    int e = errno;
    (void)!write(err_pipe, &e, sizeof e);
    _exit(127);
}

int start(const SpawnSpec& s, int out_fd, int err_fd, int in_fd) {
    if (s.argv.empty()) throw std::runtime_error("spawn: empty argv");
    std::string path = s.argv[0].find('/') == std::string::npos ? which(s.argv[0]) : s.argv[0];
    if (path.empty()) throw std::runtime_error("cannot find '" + s.argv[0] + "' in PATH");
    CArgs argv;
    argv.store = s.argv;
    argv.finish();
    CArgs envp = make_env(s);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) exec_child(s, path, argv.ptrs.data(), envp.ptrs.data(), out_fd, err_fd, in_fd, p[1], parent);
    close(p[1]);
    int e = 0;
    ssize_t n;
    do n = read(p[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(p[0]);
    if (n == static_cast<ssize_t>(sizeof e)) {
        waitpid(pid, nullptr, 0);
        throw std::runtime_error("cannot start " + path + ": " + std::strerror(e));
    }
    return pid;
}

}  // namespace

std::string which(const std::string& prog) {
    if (prog.find('/') != std::string::npos) return access(prog.c_str(), X_OK) == 0 ? prog : "";
    const char* p = getenv("PATH");
    std::string path = p ? p : "/usr/local/bin:/usr/bin:/bin";
    path += ":/usr/sbin:/sbin";  // opensm lives in /usr/sbin, not always in a user's PATH
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) continue;
        std::string c = dir + "/" + prog;
        struct stat st;
        if (stat(c.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(c.c_str(), X_OK) == 0) return c;
    }
    return "";
}

int spawn(const SpawnSpec& s) {
    int out_fd = open(s.out_path.empty() ? "/dev/null" : s.out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out_fd < 0) throw std::runtime_error("cannot open " + s.out_path + ": " + std::strerror(errno));
    int in_fd = open(s.stdin_path.c_str(), (s.stdin_rdwr ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (in_fd < 0) {
        close(out_fd);
        throw std::runtime_error("cannot open " + s.stdin_path + ": " + std::strerror(errno));
    }
    try {
        int pid = start(s, out_fd, out_fd, in_fd);
        close(out_fd);
        close(in_fd);
        return pid;
    } catch (...) {
        close(out_fd);
        close(in_fd);
        throw;
    }
}

int run_capture(const SpawnSpec& s, double timeout_s, std::string& out) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int err_fd = open(s.out_path.empty() ? "/dev/null" : s.out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int pid;
    SpawnSpec spec = s;
    spec.new_session = true;      // own process group, so a timeout kill reaches only it
    spec.die_with_parent = true;  // and it never outlives this process
    try {
        if (err_fd < 0) throw std::runtime_error("cannot open " + s.out_path + ": " + std::strerror(errno));
        pid = start(spec, p[1], err_fd, in_fd);
    } catch (...) {
        close(p[0]);
        close(p[1]);
        close(in_fd);
        if (err_fd >= 0) close(err_fd);
        throw;
    }
    close(p[1]);
    close(in_fd);
    close(err_fd);
    const double deadline = now_s() + timeout_s;
    char buf[65536];
    bool timed_out = false;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        pollfd pf{p[0], POLLIN, 0};
        int r = poll(&pf, 1, static_cast<int>(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) continue;
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    close(p[0]);
    if (timed_out) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        return -1;
    }
    int st = 0;
    // The pipe closed; the process may still be exiting.
    while (true) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sleep_s(0.005);
    }
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return -1;
}

bool alive(int pid, const std::string& exe_name) {
    if (pid <= 0) return false;
    int st;
    waitpid(pid, &st, WNOHANG);  // reaps our own exited child; harmless for others (ECHILD)
    if (kill(pid, 0) != 0 && errno == ESRCH) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    auto rp = line.rfind(')');
    if (rp != std::string::npos && rp + 2 < line.size() && (line[rp + 2] == 'Z' || line[rp + 2] == 'X')) return false;
    if (exe_name.empty()) return true;
    char buf[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    if (n <= 0) {
        // not ours to read: fall back on the command name in stat, "(name)"
        auto lp = line.find('(');
        return lp != std::string::npos && rp != std::string::npos &&
               exe_name.compare(0, 15, line.substr(lp + 1, rp - lp - 1)) == 0;
    }
    std::string exe(buf, static_cast<size_t>(n));
    const std::string deleted = " (deleted)";
    if (exe.size() > deleted.size() && exe.compare(exe.size() - deleted.size(), deleted.size(), deleted) == 0)
        exe.resize(exe.size() - deleted.size());
    auto slash = exe.rfind('/');
    return exe.substr(slash + 1) == exe_name;
}

bool stop(int pid, const std::string& exe_name, double grace_s) {
    if (!alive(pid, exe_name)) return false;
    kill(pid, SIGTERM);
    const double deadline = now_s() + grace_s;
    while (now_s() < deadline) {
        if (!alive(pid, exe_name)) return true;
        sleep_s(0.02);
    }
    if (alive(pid, exe_name)) kill(pid, SIGKILL);
    for (int i = 0; i < 100 && alive(pid, exe_name); ++i) sleep_s(0.02);
    return true;
}

long rss_kb(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    return -1;
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace ibf::lab_detail
