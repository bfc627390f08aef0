// What the benchmark programs (bench/) share: best and median of repeated timings, the
// `[--hosts N] [--repeat N]` arguments, and a MASTER SM to feed a ControllerState. Header-only.
//
//   ibf::bench::Timing t = ibf::bench::time_it(20, [] { /* untimed setup */ }, [&] { work(); });
//   std::printf("best %.3f ms, median %.3f ms\n", t.best, t.median);
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "ibf/snapshot.h"

namespace ibf::bench {

using Clock = std::chrono::steady_clock;

struct Timing {
    double best = 0, median = 0;  // ms
};

inline double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The best and the median of `ts` (ms; not empty).
inline Timing summary(std::vector<double> ts) {
    std::sort(ts.begin(), ts.end());
    return {ts.front(), ts[ts.size() / 2]};
}

// `prepare` outside the timer, `fn` inside, `repeat` times.
inline Timing time_it(int repeat, const std::function<void()>& prepare, const std::function<void()>& fn) {
    std::vector<double> ts;
    for (int i = 0; i < repeat; ++i) {
        prepare();
        const auto t0 = Clock::now();
        fn();
        ts.push_back(ms_since(t0));
    }
    return summary(std::move(ts));
}

// `[--hosts N] [--repeat N]` into hosts and repeat (left as they are when absent); false after
// printing the usage line for anything else.
inline bool hosts_and_repeat(int argc, char** argv, const char* program, int& hosts, int& repeat) {
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--hosts") && i + 1 < argc) {
            hosts = std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: %s [--hosts N] [--repeat N]\n", program);
            return false;
        }
    }
    return true;
}

// An SM in state MASTER at `lid` (priority 10): what a master's plugin says in Hello.
inline SmInfo master_sm(Guid g, uint16_t lid) {
    SmInfo s;
    s.port_guid = g;
    s.lid = lid;
    s.priority = 10;
    s.state = SmState::Master;
    return s;
}

}  // namespace ibf::bench
