// HaAgent: the HA threads' I/O (ha_agent.h): probes and promotion on the prober thread, files
// and history rows on the file thread, the fence command on a thread of its own.
#include "ibf/ha_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <stdexcept>

#include "ibf/atomic_file.h"
#include "ibf/sm_helper.h"
#include "ibf/sm_helper_client.h"

namespace ibf {

HaAgent::HaAgent(ha::HaConfig cfg, HaAgentHooks hooks) : cfg_(std::move(cfg)), hooks_(std::move(hooks)) {}

HaAgent::~HaAgent() { stop(); }

void HaAgent::start() {
    std::lock_guard lk(mu_);
    if (thread_.joinable() || stop_) return;
    slow_.post([this] { file_owner_.bind(); });  // the file thread's first task
    thread_ = std::thread([this] { run(); });
}

void HaAgent::stop() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    fences_.stop();  // after the fence in progress (bounded by fence_timeout_ms); a queued one is dropped
    slow_.stop();  // queued files and rows are dropped, as the prober's queue always was
}

void HaAgent::set_targets(std::vector<HaTarget> t) {
    bool urgent = false;
    for (const auto& x : t) urgent |= x.urgent;
    {
        std::lock_guard lk(mu_);
        targets_ = std::move(t);
    }
    if (urgent) cv_.notify_all();
}

void HaAgent::run_action(const ha::Action& a) {
    if (a.kind == ha::Action::Kind::log) return;
    {
        std::lock_guard lk(mu_);
        actions_.push_back(a);
    }
    cv_.notify_all();
}

void HaAgent::write_file(std::string path, FileText make) {
    {
        std::lock_guard lk(mu_);
        // Only the newest content per file matters: a producer still waiting is replaced, and the
        // task already queued for its path runs the newest one.
        auto [it, fresh] = files_.try_emplace(path);
        it->second = std::move(make);
        if (!fresh) return;
    }
    slow_.post([this, path = std::move(path)] { write_pending(path); });
}

void HaAgent::write_pending(const std::string& path) {
    IBF_ASSERT_ON_THREAD(file_owner_);
    FileText make;
    {
        std::lock_guard lk(mu_);
        auto it = files_.find(path);
        if (it == files_.end()) return;
        make = std::move(it->second);
        files_.erase(it);  // a newer write_file from now on queues its own task
    }
    try {
        auto text = make();
        if (!text) return;
        // Under the packaged unit OpenSM's cache is not the daemon's to write: the root helper
        // replaces it (docs/ha.md "Privileges under the packaged unit").
        if (path == cfg_.guid2lid_file && !cfg_.sm_helper.empty())
            call_sm_helper(cfg_.sm_helper, guid2lid_request(*text));
        else
            write_file_atomic(path, *text, {.mode_if_new = 0644});  // OpenSM and keepalived read them
    } catch (const std::exception& e) {
        if (hooks_.log_warn) hooks_.log_warn(e.what());
    }
}

void HaAgent::run_task(std::function<void()> task) {
    slow_.post([this, task = std::move(task)] {
        IBF_ASSERT_ON_THREAD(file_owner_);
        try {
            task();
        } catch (const std::exception& e) {
            if (hooks_.log_warn) hooks_.log_warn(std::string("ha: ") + e.what());
        }
    });
}

void HaAgent::run_with_port(std::function<void(ha::SmpPort*)> task) {
    {
        std::lock_guard lk(mu_);
        port_tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
}

// Prober thread: the queued MADs (and the fence's start), never a file.
void HaAgent::do_jobs(ha::SmpPort* port) {
    IBF_ASSERT_ON_THREAD(prober_owner_);
    std::deque<ha::Action> acts;
    std::deque<std::function<void(ha::SmpPort*)>> port_tasks;
    {
        std::lock_guard lk(mu_);
        acts.swap(actions_);
        port_tasks.swap(port_tasks_);
    }
    for (auto& t : port_tasks) {
        try {
            t(port);
        } catch (const std::exception& e) {
            if (hooks_.log_warn) hooks_.log_warn(std::string("ha: ") + e.what());
        }
    }
    for (auto& a : acts) {
        if (a.kind == ha::Action::Kind::promote) {
            ha::SmInfoReply r;
            if (port) {
                r = port->set_sminfo(a.lid, a.attr_mod, SmState::Master);
            } else {
                r.status = ha::SmpStatus::error;
                r.error = "no MAD port is open";
            }
            if (hooks_.on_promote_sent) hooks_.on_promote_sent(r);
        } else if (a.kind == ha::Action::Kind::fence) {
            fences_.post([this, argv = a.argv] { fence(argv); });  // the prober never waits for it
        }
    }
}

void HaAgent::fence(std::vector<std::string> argv) {
    std::string detail;
    const bool ok = run_fence_command(argv, cfg_.fence_timeout_ms, detail);
    if (hooks_.on_fence_done) hooks_.on_fence_done(ok, detail);
}

void HaAgent::probe_round(ha::SmpPort& port, const std::vector<HaTarget>& targets) {
    IBF_ASSERT_ON_THREAD(prober_owner_);
    HaBatch b;
    // Urgent targets (a suspect master) first: their answer decides a failover. The master gets a
    // burst of overlapped probes (SmpPort::get_sminfo_burst): a probe lost on the way costs a
    // whole mad_timeout_ms (on ibsim the first MAD to reach a killed SM's port is dropped), and the
    // failures the engine needs must not wait behind it; while it answers, a burst is one probe.
    for (int pass = 0; pass < 2; ++pass)
        for (const HaTarget& t : targets) {
            if (t.urgent != (pass == 0) || t.lid == 0) continue;
            if (!t.burst) {
                HaProbe p{t.guid, t.lid, port.get_sminfo(t.lid), 0};
                p.at_ms = hooks_.now_ms();
                b.probes.push_back(std::move(p));
                continue;
            }
            const int64_t start = hooks_.now_ms();
            ha::SmInfoBurst burst =
                port.get_sminfo_burst(t.lid, cfg_.fast_failures, std::min(kUrgentSpacingMs, cfg_.poll_ms));
            for (auto& d : burst.done)
                b.probes.push_back({t.guid, t.lid, std::move(d.reply), start + static_cast<int64_t>(d.after_ms)});
        }
    b.local = port.local();
    if (hooks_.on_batch) hooks_.on_batch(std::move(b));
}

void HaAgent::run() {
    prober_owner_.bind();
    std::unique_ptr<ha::SmpPort> port;
    auto next_open = std::chrono::steady_clock::now();
    std::string last_open_error;
    for (;;) {
        std::vector<HaTarget> targets;
        {
            std::lock_guard lk(mu_);
            if (stop_) return;
            targets = targets_;
        }
        if (!port && std::chrono::steady_clock::now() >= next_open) {
            try {
                port = hooks_.open_port();
                last_open_error.clear();
            } catch (const std::exception& e) {
                if (e.what() != last_open_error && hooks_.log_warn)
                    hooks_.log_warn(std::string("ha: cannot open the MAD port (no SMInfo probes, no failover): ") +
                                    e.what() + "; retrying every 5 s");
                last_open_error = e.what();
                next_open = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            }
        }
        do_jobs(port.get());
        bool urgent = false;
        if (port) {
            probe_round(*port, targets);
            for (const auto& t : targets) urgent |= t.urgent;
            do_jobs(port.get());  // a promotion decided on this round's answers goes out at once
        } else if (hooks_.on_batch) {
            hooks_.on_batch(HaBatch{});
        }
        std::unique_lock lk(mu_);
        // A suspect master is probed again almost at once (a dead one costs mad_timeout_ms per
        // probe anyway; a live one answers in microseconds, hence the 10 ms floor).
        const auto wait = std::chrono::milliseconds(urgent ? std::min(kUrgentSpacingMs, cfg_.poll_ms) : cfg_.poll_ms);
        cv_.wait_for(lk, wait, [&] {
            if (stop_ || !actions_.empty() || !port_tasks_.empty()) return true;
            if (!port) return false;  // nothing to probe an urgent target with: keep the period
            for (const auto& t : targets_)
                if (t.urgent) return !urgent;  // became urgent while we slept
            return false;
        });
    }
}

bool run_fence_command(const std::vector<std::string>& argv, int timeout_ms, std::string& detail) {
    if (argv.empty()) {
        detail = "empty command";
        return false;
    }
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) {
        detail = std::string("pipe: ") + std::strerror(errno);
        return false;
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        detail = std::string("fork: ") + std::strerror(errno);
        ::close(pipefd[0]);
        ::close(pipefd[1]);
        return false;
    }
    if (pid == 0) {
        ::dup2(pipefd[1], 1);
        ::dup2(pipefd[1], 2);
        int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        ::execv(args[0], args.data());
        _exit(127);
    }
    ::close(pipefd[1]);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    int status = 0;
    bool done = false, timed_out = false;
    while (!done) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            ::kill(pid, SIGKILL);
            timed_out = true;
            ::waitpid(pid, &status, 0);
            break;
        }
        pollfd p{pipefd[0], POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 50))) > 0) {
            char buf[512];
            ssize_t n = ::read(pipefd[0], buf, sizeof buf);
            if (n > 0 && out.size() < 4096) out.append(buf, static_cast<size_t>(n));
        }
        done = ::waitpid(pid, &status, WNOHANG) == pid;
    }
    ::close(pipefd[0]);
    const std::string first = out.substr(0, out.find('\n'));
    if (timed_out) {
        detail = argv[0] + " timed out after " + std::to_string(timeout_ms) + " ms";
        return false;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        detail = first;
        return true;
    }
    detail = argv[0] + (WIFEXITED(status) ? " exited with status " + std::to_string(WEXITSTATUS(status))
                                          : " killed by signal " + std::to_string(WTERMSIG(status))) +
             (first.empty() ? "" : ": " + first);
    return false;
}

}  // namespace ibf
