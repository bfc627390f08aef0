// Which thread owns a piece of state (docs/threading.md), checked at the entry of the functions
// that thread alone may run. Active in debug builds (no NDEBUG), sanitizer builds
// (-fsanitize=address or thread) or with IBF_THREAD_CHECKS=1; otherwise the check compiles to
// nothing. A check on the wrong thread prints file:line and the owner's name, then aborts.
//
//   ibf::ThreadOwner io_owner{"io"};
//   io_owner.bind();                    // on the io thread, before io.run()
//   IBF_ASSERT_ON_THREAD(io_owner);     // at the entry of an io-thread function
//
// An unbound owner (before bind(), after release()) accepts any thread: construction and
// destruction run on the thread that creates the daemon.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#ifndef IBF_THREAD_CHECKS
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IBF_THREAD_CHECKS 1
#else
#define IBF_THREAD_CHECKS 0
#endif
#endif

namespace ibf {

class ThreadOwner {
public:
    explicit ThreadOwner(const char* name) : name_(name) {}
    void bind() { id_.store(std::this_thread::get_id()); }
    void release() { id_.store(std::thread::id{}); }
    bool on_owner() const {
        const std::thread::id id = id_.load();
        return id == std::thread::id{} || id == std::this_thread::get_id();
    }
    const char* name() const { return name_; }

    // The check behind IBF_ASSERT_ON_THREAD.
    void check(const char* file, int line, const char* func) const {
        if (on_owner()) return;
        std::fprintf(stderr, "%s:%d: %s runs off the %s thread (docs/threading.md)\n", file, line, func, name_);
        std::abort();
    }

private:
    const char* name_;
    std::atomic<std::thread::id> id_{};
};

}  // namespace ibf

#if IBF_THREAD_CHECKS
#define IBF_ASSERT_ON_THREAD(owner) (owner).check(__FILE__, __LINE__, __func__)
#else
#define IBF_ASSERT_ON_THREAD(owner) ((void)0)
#endif
