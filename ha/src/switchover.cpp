// SwitchoverRun: a switchover's steps, resends and rollback (ha_switchover.h). Pure.
#include "ibf/ha_switchover.h"

#include <algorithm>

namespace ibf::ha {

using Kind = SwitchoverStep::Kind;

namespace {

const SwitchoverSm* find(const std::map<Guid, SwitchoverSm>& now, Guid g) {
    auto it = now.find(g);
    return it == now.end() ? nullptr : &it->second;
}

bool is(const SwitchoverSm* v, SmState s) { return v && v->alive && v->state == s; }

std::string states(const std::map<Guid, SwitchoverSm>& now, Guid a, Guid b) {
    std::string out;
    for (Guid g : {a, b}) {
        const SwitchoverSm* v = find(now, g);
        out += (out.empty() ? "" : ", ") + guid_hex(g) + " " +
               (v ? std::string(to_string(v->state)) + " priority " + std::to_string(v->priority) +
                        (v->alive ? "" : " (not answering)")
                  : std::string("unknown"));
    }
    return out;
}

}  // namespace

std::string_view to_string(SwitchoverRun::State s) {
    switch (s) {
        case SwitchoverRun::State::rolling_back: return "rolling_back";
        case SwitchoverRun::State::done: return "done";
        case SwitchoverRun::State::rolled_back: return "rolled_back";
        case SwitchoverRun::State::failed: return "failed";
        default: return "running";
    }
}

std::variant<SwitchoverRun, std::string> SwitchoverRun::start(Guid master, Guid target,
                                                              const std::map<Guid, SwitchoverSm>& now,
                                                              SwitchoverTiming timing, int64_t now_ms) {
    const SwitchoverSm* m = find(now, master);
    const SwitchoverSm* t = find(now, target);
    if (!m) return "the master " + guid_hex(master) + " is not known";
    if (!t) return "the target " + guid_hex(target) + " is not known";
    auto plan = switchover_plan(*m, *t);  // refuses a target that does not answer, before any change
    if (auto* why = std::get_if<std::string>(&plan)) return *why;
    // The master hands over to the highest-ranked SM it knows that is not NOT_ACTIVE (OpenSM's
    // state_mgr_get_highest_sm()), not to the one we mean: with a third SM that outranks the
    // target, lowering the master hands the mastership to that one (seen in the three-SM soak: the
    // run rolled back, and on ibsim the master was left wedged). Refused before any change.
    for (const auto& [g, o] : now) {
        if (g == master || g == target || !o.alive || o.state == SmState::NotActive) continue;
        if (sm_outranks(static_cast<uint8_t>(o.priority), g, static_cast<uint8_t>(t->priority), target))
            return guid_hex(g) + " (priority " + std::to_string(o.priority) + ", " + std::string(to_string(o.state)) +
                   ") outranks the target " + guid_hex(target) + " (priority " + std::to_string(t->priority) +
                   "): the master would hand over to it, not to the target; switch over to " + guid_hex(g) +
                   " instead, or lower its sm_priority below " + std::to_string(t->priority) + " first";
    }
    SwitchoverRun r;
    r.master_ = master;
    r.target_ = target;
    r.master_priority_ = m->priority;
    r.plan_ = std::get<SwitchoverPlan>(std::move(plan));
    r.t_ = timing;
    r.step_since_ms_ = now_ms;
    return r;
}

SwitchoverRun::Todo SwitchoverRun::next(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms) {
    if (state_ == State::running) return run(now, now_ms);
    if (state_ == State::rolling_back) return roll_back(now, now_ms);
    return {};
}

void SwitchoverRun::abort(const std::string& why, int64_t now_ms) {
    if (state_ != State::running) return;
    state_ = State::rolling_back;
    rollback_since_ms_ = now_ms;
    sent_ms_ = 0;
    outcome_ = why;
}

SwitchoverRun::Todo SwitchoverRun::send_if_due(const SwitchoverStep& s, int64_t now_ms, std::string log) {
    Todo todo;
    todo.log = std::move(log);
    if (s.kind == Kind::await_master) return todo;  // nothing to send: OpenSM's own handover
    if (sent_ms_ && s.text == sent_text_ && now_ms - sent_ms_ < t_.resend_ms) return todo;
    sent_ms_ = now_ms;
    sent_text_ = s.text;
    todo.send = s;
    return todo;
}

// Steps already in effect are passed over (every step is a state, so sending one twice or finding
// it done is the same); one that does not show within step_timeout_ms starts the rollback.
SwitchoverRun::Todo SwitchoverRun::run(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms) {
    std::string log;
    while (step_ < plan_.steps.size() && step_done(plan_.steps[step_], now)) {
        log = plan_.steps[step_].text + ": in effect";
        ++step_;
        step_since_ms_ = now_ms;
        sent_ms_ = 0;
    }
    if (step_ == plan_.steps.size()) {
        state_ = State::done;
        return {std::nullopt, "switchover done: " + states(now, target_, master_)};
    }
    const SwitchoverSm* m = find(now, master_);
    const SwitchoverSm* t = find(now, target_);
    for (const SwitchoverSm* v : {m, t})
        if (!v || !v->alive) {
            abort(guid_hex(v == m ? master_ : target_) + " stopped answering at step " + std::to_string(step_ + 1) +
                      " (" + plan_.steps[step_].text + ")",
                  now_ms);
            return rollback_started(now, now_ms);
        }
    if (now_ms - step_since_ms_ > t_.step_timeout_ms) {
        abort("step " + std::to_string(step_ + 1) + " (" + plan_.steps[step_].text + ") did not take effect within " +
                  std::to_string(t_.step_timeout_ms) + " ms",
              now_ms);
        return rollback_started(now, now_ms);
    }
    return send_if_due(plan_.steps[step_], now_ms, std::move(log));
}

// Who stays master: the target once the handover happened, else the old master. Before the
// handover the old master gets its priority back first: a STANDBY outranking the master it polls
// would send trap 144 (docs/ha-facts.md section 5). Then an SM left NOT_ACTIVE is told STANDBY
// naming the one master, so it polls again and can take over when that one dies.
std::optional<SwitchoverStep> SwitchoverRun::rollback_step(const std::map<Guid, SwitchoverSm>& now,
                                                          bool& settled) const {
    settled = false;
    const SwitchoverSm* m = find(now, master_);
    const SwitchoverSm* t = find(now, target_);
    if (is(m, SmState::Master) && is(t, SmState::Master)) return std::nullopt;  // OpenSM's arbitration is under way
    const bool handed_over = is(t, SmState::Master);
    const Guid boss = handed_over ? target_ : master_, other = handed_over ? master_ : target_;
    const SwitchoverSm* b = handed_over ? t : m;
    const SwitchoverSm* o = handed_over ? m : t;
    if (!handed_over && m && m->alive && m->priority != master_priority_)
        return SwitchoverStep{Kind::set_priority, master_, master_priority_, 0,
                              guid_hex(master_) + ": sm_priority " + std::to_string(master_priority_) + " (rollback: back)"};
    if (o && o->alive && o->state == SmState::NotActive)
        return SwitchoverStep{Kind::standby, other, -1, boss,
                              guid_hex(other) + ": SubnSet(SMInfo) STANDBY, polling " + guid_hex(boss) + " (rollback)"};
    settled = is(b, SmState::Master) && is(o, SmState::Standby);
    return std::nullopt;
}

SwitchoverRun::Todo SwitchoverRun::rollback_started(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms) {
    Todo todo = roll_back(now, now_ms);
    if (todo.log.empty()) todo.log = "switchover rolling back: " + outcome_;
    return todo;
}

SwitchoverRun::Todo SwitchoverRun::roll_back(const std::map<Guid, SwitchoverSm>& now, int64_t now_ms) {
    bool settled = false;
    auto s = rollback_step(now, settled);
    if (!settled) settled_since_ms_ = 0;
    else if (!settled_since_ms_) settled_since_ms_ = now_ms;
    if (settled && now_ms - settled_since_ms_ >= t_.settle_ms) {
        state_ = State::rolled_back;
        return {std::nullopt, "switchover rolled back (" + outcome_ + "): " + states(now, master_, target_)};
    }
    if (now_ms - rollback_since_ms_ > t_.rollback_timeout_ms) {
        state_ = State::failed;
        outcome_ += "; the rollback did not settle within " + std::to_string(t_.rollback_timeout_ms) + " ms";
        return {std::nullopt, "switchover failed (" + outcome_ + "): " + states(now, master_, target_)};
    }
    if (!s) return {};
    return send_if_due(*s, now_ms, "");
}

std::map<Guid, SwitchoverSm> switchover_views(const HaEngine& e, int64_t now_ms) {
    std::map<Guid, SwitchoverSm> out;
    for (const auto& [g, v] : e.sms()) out[g] = {g, v.info.priority, v.info.state, e.alive(v, now_ms)};
    return out;
}

std::optional<Guid> stranded_standby_master(const StrandedSm& s, int64_t now_ms, int after_ms) {
    if (s.run_active || !s.local.alive || s.local.state != SmState::NotActive || !s.not_active_since_ms) return std::nullopt;
    if (!s.master || !s.master->alive || s.master->state != SmState::Master || s.master->sm == s.local.sm)
        return std::nullopt;
    const int64_t since = std::max(s.not_active_since_ms, s.last_disable_ms);
    if (now_ms - since < after_ms) return std::nullopt;
    return s.master->sm;
}

}  // namespace ibf::ha
