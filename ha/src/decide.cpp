// HaEngine's decisions: the master's health from two witnesses, the successor rule, and the
// attempt's phases watching -> suspecting -> [fencing ->] promoting -> watching | cooldown.
// Pure (ha_engine.h): every time is passed in, every action is returned.
#include <algorithm>

#include "ibf/ha_engine.h"
#include "ibf/ha_rank.h"

namespace ibf::ha {
namespace {

Action log_action(std::string text) {
    Action a;
    a.kind = Action::Kind::log;
    a.text = std::move(text);
    return a;
}

std::string fill_arg(const std::string& arg, Guid guid, uint16_t lid) {
    std::string out;
    for (size_t i = 0; i < arg.size();) {
        if (arg.compare(i, 6, "{guid}") == 0) {
            out += guid_hex(guid);
            i += 6;
        } else if (arg.compare(i, 5, "{lid}") == 0) {
            out += std::to_string(lid);
            i += 5;
        } else {
            out += arg[i++];
        }
    }
    return out;
}

}  // namespace

HaEngine::Evidence HaEngine::evidence(const SmView& m, int64_t now_ms) const {
    Evidence e;
    const bool plugin_gone =
        m.plugin_seen && (!m.plugin_connected || now_ms - m.plugin_ms > cfg_.heartbeat_timeout_ms);
    e.suspect = plugin_gone || m.probe_failures > 0;
    std::string plugin;
    if (m.plugin_seen && !m.plugin_connected)
        plugin = "its plugin's connection closed " + std::to_string(now_ms - m.plugin_closed_ms) + " ms ago";
    else if (plugin_gone)
        plugin = "its plugin silent for " + std::to_string(now_ms - m.plugin_ms) + " ms";
    else if (m.plugin_seen)
        plugin = "its plugin still heartbeating";
    else
        plugin = "no plugin seen";
    std::string mad = m.probe_failures
                          ? std::to_string(m.probe_failures) + " consecutive SMInfo failures over " +
                                std::to_string(now_ms - m.first_failure_ms) + " ms (last: " +
                                std::string(to_string(m.probe)) + ")"
                          : (m.answer_ms ? "SMInfo answers" : "SMInfo not probed yet");
    e.text = plugin + "; " + mad;
    if (m.probe_failures == 0) return e;  // answering (or never probed): never dead
    e.fast = plugin_gone && m.probe_failures >= cfg_.fast_failures;
    const bool slow = m.probe_failures >= cfg_.slow_failures && now_ms - m.first_failure_ms >= cfg_.slow_min_ms;
    e.dead = e.fast || slow;
    return e;
}

bool HaEngine::suspect(Guid sm, int64_t now_ms) const {
    auto it = sms_.find(sm);
    return it != sms_.end() && evidence(it->second, now_ms).suspect;
}

int64_t HaEngine::earliest_evidence_ms(const SmView& m) const {
    int64_t t = 0;
    auto take = [&](int64_t x) {
        if (x && (!t || x < t)) t = x;
    };
    take(m.plugin_closed_ms);
    take(m.first_failure_ms);
    if (m.plugin_seen && m.plugin_connected) take(m.plugin_ms + cfg_.heartbeat_timeout_ms);
    return t;
}

void HaEngine::say(const std::string& key, const std::string& text) {
    if (key == said_) return;
    said_ = key;
    pending_.push_back(log_action(text));
}

void HaEngine::track_master(int64_t now_ms) {
    const std::optional<Guid> m = master();
    // No SM says MASTER (an isolated master re-sweeping its island says DISCOVERING): the last
    // master stays the one watched.
    if (!m || m == last_master_) return;
    const std::optional<Guid> prev = last_master_;
    last_master_ = m;
    if (!m) return;
    if (!prev) {
        pending_.push_back(log_action("master is " + guid_hex(*m) + " (first master seen)"));
        return;
    }
    ++master_changes_;
    lids_before_ = last_lids_;
    pending_lid_compare_ = true;
    if (phase_ == Phase::promoting && *m == local_) {
        complete(now_ms);
        return;
    }
    FailoverRecord r;
    r.decided_ms = r.master_ms = now_ms;
    r.from = *prev;
    r.to = *m;
    auto it = sms_.find(*prev);
    const Evidence ev = it != sms_.end() ? evidence(it->second, now_ms) : Evidence{};
    if (it != sms_.end() && ev.suspect) {
        r.detected_ms = earliest_evidence_ms(it->second);
        r.cause = "the old master failed (" + ev.text + "); taken over without this agent";
    } else if (it != sms_.end() && it->second.info.state != SmState::Master) {
        r.cause = "handover: the old master is " + std::string(to_string(it->second.info.state)) + " and alive";
    } else if (auto nw = sms_.find(*m); it != sms_.end() && nw != sms_.end() &&
               sm_outranks(nw->second.info.priority, *m, it->second.info.priority, *prev)) {
        // The old master's last answer may predate its handover (a switchover lowers its priority
        // first): the next probe tells, and split brain is its own finding (sm_split_brain).
        r.cause = "handover: the new master outranks the old one, which said MASTER at its last answer";
    } else {
        r.cause = "a second master appeared while the old one is alive (split brain?)";
    }
    r.evidence = ev.text;
    r.outcome = "observed";
    pending_.push_back(log_action("master changed " + guid_hex(r.from) + " -> " + guid_hex(r.to) + ": " + r.cause));
    record(std::move(r));
}

std::vector<Action> HaEngine::tick(int64_t now_ms) {
    track_master(now_ms);
    std::vector<Action> out;
    if (cfg_.mode == Mode::act) out = step(now_ms);
    if (!pending_.empty()) {
        out.insert(out.begin(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
        pending_.clear();
    }
    return out;
}

std::vector<Action> HaEngine::step(int64_t now_ms) {
    switch (phase_) {
        case Phase::cooldown:
            if (now_ms - phase_since_ms_ < cfg_.retry_after_ms) return {};
            phase_ = Phase::watching;
            said_.clear();
            return watch(now_ms);
        case Phase::fencing: {
            if (!fence_ok_) {
                if (now_ms - phase_since_ms_ > cfg_.fence_timeout_ms + 1000) fail("the fence command did not report", now_ms);
                return {};
            }
            if (!*fence_ok_) {
                fail("fence failed: " + fence_detail_, now_ms);
                return {};
            }
            const SmView& old = sms_[watched_master_];
            if (old.probe_failures == 0 && old.answer_ms > phase_since_ms_ && old.answered_state == SmState::Master) {
                fail("the old master answers SMInfo as MASTER after the fence", now_ms);
                return {};
            }
            return promote_now(now_ms);
        }
        case Phase::promoting: {
            auto it = sms_.find(local_);
            if (it != sms_.end() && it->second.info.state == SmState::Master && it->second.info_ms >= attempt_.promoted_ms)
                complete(now_ms);
            else if (now_ms - attempt_.promoted_ms > cfg_.promote_timeout_ms)
                fail("the local SM did not become MASTER within " + std::to_string(cfg_.promote_timeout_ms) + " ms", now_ms);
            return {};
        }
        default:
            return watch(now_ms);
    }
}

std::vector<Action> HaEngine::watch(int64_t now_ms) {
    if (auto heal = heal_split_brain(now_ms); !heal.empty()) return heal;
    const std::optional<Guid> m = master() ? master() : last_master_;
    if (!m || *m == local_ || local_ == 0) {
        phase_ = Phase::watching;
        return {};
    }
    const Evidence ev = evidence(sms_.at(*m), now_ms);
    if (!ev.suspect) {
        if (phase_ == Phase::suspecting) say("healthy " + guid_hex(*m), "master " + guid_hex(*m) + " healthy again: " + ev.text);
        phase_ = Phase::watching;
        return {};
    }
    if (phase_ == Phase::watching) {
        phase_ = Phase::suspecting;
        phase_since_ms_ = now_ms;
        say("suspect " + guid_hex(*m), "master " + guid_hex(*m) + " suspect: " + ev.text);
    }
    if (!ev.dead) return {};
    const std::optional<Guid> succ = successor(now_ms);
    if (succ != local_) {
        say("not successor " + guid_hex(*m),
            "master " + guid_hex(*m) + " is dead (" + ev.text + "); the successor is " +
                (succ ? guid_hex(*succ) : std::string("nobody (no live STANDBY)")) + ", not this node's SM: not acting");
        return {};
    }
    if (!local_port_known_ || !local_port_.ok || local_port_.state != 4) {
        say("port down " + guid_hex(*m), "master " + guid_hex(*m) + " is dead (" + ev.text +
                                        ") but this node's own port is not Active (" +
                                        (local_port_.ok ? "state " + std::to_string(local_port_.state) : local_port_.error) +
                                        "): not promoting an isolated SM");
        return {};
    }
    return start_attempt(*m, ev, now_ms);
}

// Two live masters of one subnet that reach each other over InfiniBand again (a partition healed):
// OpenSM resolves that in the heavy sweep that finds the other master (C14-60.2.1), but nothing
// may trigger that sweep. Each master's agent forces one of its own SM with a SubnSet(SMInfo)
// HANDOVER (legal in MASTER state: "force a heavy sweep"), at most once per retry_after_ms.
// Measured on ibsim (isolated master, relink): forcing only the lower master's sweep left two
// masters in about 1 run in 10; forcing both: 0 in 18.
std::vector<Action> HaEngine::heal_split_brain(int64_t now_ms) {
    auto lit = sms_.find(local_);
    if (lit == sms_.end() || lit->second.info.state != SmState::Master || !alive(lit->second, now_ms)) return {};
    if (heal_ms_ && now_ms - heal_ms_ < cfg_.retry_after_ms) return {};
    const SmView& me = lit->second;
    for (const auto& [g, v] : sms_) {
        if (g == local_ || v.info.state != SmState::Master || group_of(g) != group_of(local_)) continue;
        const bool answers_as_master = v.probe_failures == 0 && v.answer_ms && now_ms - v.answer_ms <= 5LL * cfg_.poll_ms +
                                       cfg_.mad_timeout_ms && v.answered_state == SmState::Master;
        if (!answers_as_master) continue;
        heal_ms_ = now_ms;
        Action p;
        p.kind = Action::Kind::promote;
        p.target = local_;
        p.lid = me.info.lid;
        p.attr_mod = kSmInfoHandover;
        p.text = "split brain: " + guid_hex(g) + " (priority " + std::to_string(v.info.priority) +
                 ") answers SMInfo as MASTER like this node's SM " + guid_hex(local_) + " (priority " +
                 std::to_string(me.info.priority) +
                 "): SubnSet(SMInfo) HANDOVER to it forces a heavy sweep, in which OpenSM's arbitration "
                 "leaves one master";
        return {log_action(p.text), p};
    }
    return {};
}

std::vector<Action> HaEngine::start_attempt(Guid master, const Evidence& ev, int64_t now_ms) {
    attempt_ = FailoverRecord{};
    attempt_.detected_ms = earliest_evidence_ms(sms_[master]);
    attempt_.decided_ms = now_ms;
    attempt_.from = master;
    attempt_.to = local_;
    attempt_.cause = std::string("master dead (") + (ev.fast ? "plugin + SMInfo" : "SMInfo alone, slow path") + ")";
    attempt_.evidence = ev.text;
    attempt_.by_this_node = true;
    attempt_fast_ = ev.fast;
    watched_master_ = master;
    said_.clear();
    std::vector<Action> out{log_action("master " + guid_hex(master) + " is dead: " + ev.text + "; this node's SM " +
                                       guid_hex(local_) + " is the successor")};
    if (cfg_.fence.empty()) {
        auto p = promote_now(now_ms);
        out.insert(out.end(), p.begin(), p.end());
        return out;
    }
    phase_ = Phase::fencing;
    phase_since_ms_ = now_ms;
    fence_ok_.reset();
    Action f;
    f.kind = Action::Kind::fence;
    f.target = master;
    for (const std::string& a : cfg_.fence) f.argv.push_back(fill_arg(a, master, sms_[master].info.lid));
    out.push_back(std::move(f));
    return out;
}

std::vector<Action> HaEngine::promote_now(int64_t now_ms) {
    phase_ = Phase::promoting;
    phase_since_ms_ = now_ms;
    attempt_.promoted_ms = now_ms;
    Action p;
    p.kind = Action::Kind::promote;
    p.target = local_;
    p.lid = sms_[local_].info.lid;
    p.attr_mod = cfg_.promote_with ? cfg_.promote_with : (attempt_fast_ ? kSmInfoHandover : kSmInfoDiscover);
    p.text = std::string("SubnSet(SMInfo) ") + (p.attr_mod == kSmInfoDiscover ? "DISCOVER" : "HANDOVER") +
             " to this node's SM " + guid_hex(local_) + " at LID " + std::to_string(p.lid);
    return {log_action("promoting: " + p.text), p};
}

void HaEngine::complete(int64_t now_ms) {
    attempt_.master_ms = now_ms;
    attempt_.outcome = "promoted";
    ++failovers_by_us_;
    pending_.push_back(log_action("this node's SM " + guid_hex(local_) + " is MASTER, " +
                                  std::to_string(now_ms - attempt_.detected_ms) + " ms after the first evidence"));
    record(attempt_);
    phase_ = Phase::watching;
    said_.clear();
}

void HaEngine::fail(const std::string& why, int64_t now_ms) {
    attempt_.outcome = "failed: " + why;
    pending_.push_back(log_action("takeover of " + guid_hex(attempt_.from) + " abandoned: " + why + "; retrying after " +
                                  std::to_string(cfg_.retry_after_ms) + " ms"));
    record(attempt_);
    phase_ = Phase::cooldown;
    phase_since_ms_ = now_ms;
}

void HaEngine::on_fence_done(bool ok, const std::string& detail, int64_t) {
    if (phase_ != Phase::fencing) return;
    fence_ok_ = ok;
    fence_detail_ = detail;
}

void HaEngine::on_promote_sent(const SmInfoReply& r, int64_t now_ms) {
    if (phase_ != Phase::promoting) return;
    if (r.status == SmpStatus::refused)
        fail("SubnSet(SMInfo) refused with MAD status " + std::to_string(r.mad_status), now_ms);
    else if (r.status == SmpStatus::error)
        fail("SubnSet(SMInfo) not sent: " + r.error, now_ms);
    // ok, or timeout (the answer may be lost while the SM acted): wait for MASTER or the timeout.
}

}  // namespace ibf::ha
