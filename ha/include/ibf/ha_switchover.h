// A graceful switchover as the daemon runs it: the steps of switchover_plan() (ha_ops.h) carried
// out one at a time, each sent again until SMInfo shows it, and a rollback to "one MASTER, every
// other SM STANDBY (polling)" when a step does not take effect in time, an SM of the pair stops
// answering, or the run is aborted. Nothing depends on the client that asked: a client killed
// mid-way leaves the daemon to finish or roll back. Pure: the SMs' views and the time are passed in,
// what to send is returned (docs/ha.md, "Graceful switchover").
//
//   auto r = ibf::ha::SwitchoverRun::start(master, target, views, {}, now);   // or an error text
//   auto& run = std::get<ibf::ha::SwitchoverRun>(r);
//   while (!run.finished()) { auto todo = run.next(views, now); if (todo.send) send(*todo.send); ... }
//   run.state();   // done, rolled_back or failed; run.outcome() says why
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "ibf/ha_engine.h"
#include "ibf/ha_ops.h"

namespace ibf::ha {

struct SwitchoverTiming {
    int step_timeout_ms = 10000;      // each step must show in SMInfo within this
    int resend_ms = 1000;             // a step not in effect yet is sent again this often (idempotent)
    int rollback_timeout_ms = 30000;  // the rollback must settle within this
    // "one MASTER, the other STANDBY" must hold this long before the rollback ends: a thawed SM
    // answers the probes queued while it was stopped before its queued Sets apply.
    int settle_ms = 1000;
};

class SwitchoverRun {
public:
    enum class State : uint8_t { running, rolling_back, done, rolled_back, failed };
    struct Todo {
        std::optional<SwitchoverStep> send;  // have its SM's agent carry this out now
        std::string log;                     // one line for the log ("" = nothing new)
    };

    // Refused before any change (error text) unless `master` is a live MASTER and `target` a
    // STANDBY that answers now (views: `alive` = answered SMInfo within the probe window).
    static std::variant<SwitchoverRun, std::string> start(Guid master, Guid target,
                                                          const std::map<Guid, SwitchoverSm>& now,
                                                          SwitchoverTiming timing, int64_t now_ms);

    Todo next(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms);
    void abort(const std::string& why, int64_t now_ms);  // roll back from wherever it is

    State state() const { return state_; }
    bool finished() const { return state_ == State::done || state_ == State::rolled_back || state_ == State::failed; }
    const SwitchoverPlan& plan() const { return plan_; }
    size_t step() const { return step_; }          // index of the step in progress
    const std::string& outcome() const { return outcome_; }  // why it rolled back or failed

private:
    SwitchoverRun() = default;
    Todo run(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms);
    Todo roll_back(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms);
    Todo rollback_started(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms);
    // The one step that brings the pair nearer "one MASTER, the other STANDBY"; nullopt with
    // `settled` set when it is there.
    std::optional<SwitchoverStep> rollback_step(const std::map<Guid, SwitchoverSm>& now, bool& settled) const;
    Todo send_if_due(const SwitchoverStep& s, int64_t now_ms, std::string log);

    Guid master_ = 0, target_ = 0;
    int master_priority_ = 0;  // before the run
    SwitchoverPlan plan_;
    SwitchoverTiming t_;
    State state_ = State::running;
    size_t step_ = 0;
    int64_t step_since_ms_ = 0, sent_ms_ = 0, rollback_since_ms_ = 0, settled_since_ms_ = 0;
    std::string sent_text_;  // the step last sent (a different one is sent at once)
    std::string outcome_;
};

std::string_view to_string(SwitchoverRun::State s);  // "running", "rolling_back", "done", "rolled_back", "failed"

// The SMs as a switchover sees them in the engine at `now_ms`: SMInfo state and priority, and
// whether each answers (HaEngine::alive).
std::map<Guid, SwitchoverSm> switchover_views(const HaEngine& e, int64_t now_ms);

// A NOT_ACTIVE SM polls nobody, so nothing can fail over to it, and OpenSM never leaves that state
// by itself. This node's SM found NOT_ACTIVE (a switchover's DISABLE whose run died, timed out, or
// was applied late by a frozen SM) is told STANDBY again once it has been NOT_ACTIVE for
// `after_ms`, counted from the later of when it was first seen so and the last DISABLE this node
// was asked for, while no switchover run is active here and a live master other than it exists.
// Returns the master it must poll, or nullopt (nothing to do).
struct StrandedSm {
    SwitchoverSm local;            // this node's SM as seen now
    int64_t not_active_since_ms = 0;  // first seen NOT_ACTIVE (0 = not NOT_ACTIVE)
    int64_t last_disable_ms = 0;   // last POST /api/v1/sm/state {"set": "disable"} (0 = never)
    bool run_active = false;       // a switchover run of this daemon is in progress
    std::optional<SwitchoverSm> master;  // the live master, if any
};
std::optional<Guid> stranded_standby_master(const StrandedSm& s, int64_t now_ms, int after_ms);

}  // namespace ibf::ha
