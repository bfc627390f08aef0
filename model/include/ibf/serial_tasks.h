// SerialTasks: one thread that runs posted tasks in order, for blocking work a thread must not
// wait on: the daemon's page and /metrics renders and its HTTP calls to the other SM nodes' agents
// (the io thread), the HA agent's file writes and history rows (its MAD prober). Header-only; the
// user links Threads::Threads. docs/threading.md.
//
//   SerialTasks t;                       // the thread starts at the first post
//   t.post([] { http_request(...); });   // returns at once
//   t.stop();                            // runs nothing more; joins after the task in progress
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace ibf {

class SerialTasks {
public:
    SerialTasks() = default;
    SerialTasks(const SerialTasks&) = delete;
    SerialTasks& operator=(const SerialTasks&) = delete;
    ~SerialTasks() { stop(); }

    void post(std::function<void()> task) {
        std::lock_guard lk(mu_);
        if (stop_) return;
        tasks_.push_back(std::move(task));
        if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
        cv_.notify_one();
    }

    void stop() {
        {
            std::lock_guard lk(mu_);
            stop_ = true;
            tasks_.clear();
        }
        cv_.notify_one();
        if (thread_.joinable()) thread_.join();
    }

private:
    void run() {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock lk(mu_);
                cv_.wait(lk, [this] { return stop_ || !tasks_.empty(); });
                if (stop_) return;
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> tasks_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace ibf
