// HaEngine's decisions: the master's health from two witnesses, the successor rule, and the
// attempt's phases watching -> suspecting -> [fencing ->] promoting -> watching | cooldown.
// Pure (ha_engine.h): every time is passed in, every action is returned.
#include <algorithm>

#include "ibf/ha_engine.h"
#include "ibf/ha_rank.h"

namespace ibf::ha {
namespace {

Action log_action(std::string text) { return Action::log(std::move(text)); }

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

// Two witnesses (docs/ha.md, "Failure model"): the plugin (over the management network) and
// SMInfo (over InfiniBand, from this node's port). The plugin's absence alone proves nothing the
// network could not also cause, so with it the SMInfo failures must outlast a cable flap, unless
// the master's process is seen gone.
HaEngine::Evidence HaEngine::evidence(const SmView& m, int64_t now_ms) const {
    Evidence e;
    const bool gone = plugin_gone(m, now_ms);
    // Failures expire a probe window after the last one (probing stopped: nothing current).
    const bool failing = m.probe_failures > 0 && now_ms - m.last_failure_ms <= probe_window();
    e.suspect = gone || failing;
    std::string plugin;
    if (m.plugin_seen && !m.plugin_connected)
        plugin = "its plugin's connection closed " + std::to_string(now_ms - m.plugin_closed_ms) + " ms ago";
    else if (gone)
        plugin = "its plugin silent for " + std::to_string(now_ms - m.plugin_ms) + " ms";
    else if (m.plugin_seen)
        plugin = "its plugin still heartbeating";
    else
        plugin = "no plugin seen";
    if (m.process_gone_ms) plugin += ", its process gone " + std::to_string(now_ms - m.process_gone_ms) + " ms ago";
    const int64_t span = now_ms - m.first_failure_ms;
    std::string mad = failing ? std::to_string(m.probe_failures) + " consecutive SMInfo failures over " +
                                    std::to_string(span) + " ms (last: " + std::string(to_string(m.probe)) + ")"
                      : m.probe_failures ? "SMInfo failures expired (none for " + std::to_string(now_ms - m.last_failure_ms) + " ms)"
                      : (m.answer_ms ? "SMInfo answers" : "SMInfo not probed yet");
    e.text = plugin + "; " + mad;
    // The master left the mastership itself: it says DISCOVERING (its own port went down, it
    // re-sweeps its island) and no SM is MASTER. The subnet has no master; after slow_min_ms the
    // successor takes over on the slow path (DISCOVER), as OpenSM's own polling would, only later.
    // A flap shorter than that leaves it to the old master, which sweeps again once its port is up.
    if (m.discovering_since_ms && m.info.state == SmState::Discovering && !master()) {
        const int64_t for_ms = now_ms - m.discovering_since_ms;
        e.suspect = true;
        e.text += "; it says DISCOVERING for " + std::to_string(for_ms) + " ms and no SM is MASTER";
        if (for_ms >= cfg_.slow_min_ms) {
            e.dead = true;  // not dead: not master, and nobody is (the slow path's DISCOVER)
            return e;
        }
    }
    if (!failing) return e;  // answering, never probed, or only stale failures: never dead
    const bool witness = m.process_gone_ms || span >= cfg_.flap_window_ms;
    // A plugin message since the failures began (a Hello through a TCP cut it reconnected across)
    // proves the process alive: the failures are InfiniBand's (an isolated master), not a death.
    const bool silent_throughout = m.plugin_ms < m.first_failure_ms;
    if (gone && !silent_throughout) e.text += "; its plugin spoke " + std::to_string(now_ms - m.plugin_ms) + " ms ago, after the failures began";
    e.fast = gone && silent_throughout && m.probe_failures >= cfg_.fast_failures && witness;
    const bool slow = m.probe_failures >= cfg_.slow_failures && span >= cfg_.slow_min_ms;
    e.dead = e.fast || slow;
    return e;
}

bool HaEngine::suspect(Guid sm, int64_t now_ms) const {
    auto it = views().find(sm);
    return it != views().end() && evidence(it->second, now_ms).suspect;
}

bool HaEngine::dead(Guid sm, int64_t now_ms) const {
    auto it = views().find(sm);
    return it != views().end() && evidence(it->second, now_ms).dead;
}

bool HaEngine::not_sweeping(const SmView& v, int64_t now_ms, std::string* why) const {
    if (v.info.state != SmState::Master || !v.sweep_owed_ms || plugin_gone(v, now_ms) || !v.plugin_seen) return false;
    const int64_t owed = now_ms - v.sweep_owed_ms;
    if (owed < cfg_.sweep_timeout_ms) return false;
    if (why)
        *why = "MASTER and owes a sweep since " + v.sweep_owed_why + " " + std::to_string(owed / 1000) +
               " s ago, no SUBNET UP since (last " +
               (v.subnet_up_ms ? std::to_string((now_ms - v.subnet_up_ms) / 1000) + " s ago" : std::string("never seen")) +
               "); " + std::to_string(v.forced_sweeps) + " forced heavy sweep(s) by its agent";
    return true;
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
    auto it = views().find(*prev);
    const Evidence ev = it != views().end() ? evidence(it->second, now_ms) : Evidence{};
    if (it != views().end() && ev.suspect) {
        r.detected_ms = earliest_evidence_ms(it->second);
        r.cause = "the old master failed (" + ev.text + "); taken over without this agent";
    } else if (it != views().end() && it->second.info.state != SmState::Master) {
        r.cause = "handover: the old master is " + std::string(to_string(it->second.info.state)) + " and alive";
    } else if (auto nw = views().find(*m); it != views().end() && nw != views().end() &&
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
    seen(now_ms);
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
            const SmView& old = views()[watched_master_];
            if (old.probe_failures == 0 && old.answer_ms > phase_since_ms_ && old.answered_state == SmState::Master) {
                fail("the old master answers SMInfo as MASTER after the fence", now_ms);
                return {};
            }
            return promote_now(now_ms);
        }
        case Phase::promoting: {
            auto it = views().find(local_);
            if (it != views().end() && it->second.info.state == SmState::Master && it->second.info_ms >= attempt_.promoted_ms)
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
    if (auto aside = step_aside(now_ms); !aside.empty()) return aside;
    if (auto heal = heal_split_brain(now_ms); !heal.empty()) return heal;
    if (auto sweep = unwedge(now_ms); !sweep.empty()) return sweep;
    // A dead master is not master(); the last one seen stays the one watched.
    const std::optional<Guid> m = master() ? master() : last_master_;
    if (!m || *m == local_ || local_ == 0 || !views().count(*m)) {
        phase_ = Phase::watching;
        return {};
    }
    Evidence ev = evidence(views().at(*m), now_ms);
    if (!ev.suspect) {
        if (phase_ == Phase::suspecting) say("healthy " + guid_hex(*m), "master " + guid_hex(*m) + " healthy again: " + ev.text);
        phase_ = Phase::watching;
        return wedged_master(*m, now_ms);
    }
    if (phase_ == Phase::watching) {
        phase_ = Phase::suspecting;
        phase_since_ms_ = now_ms;
        say("suspect " + guid_hex(*m), "master " + guid_hex(*m) + " suspect: " + ev.text);
    }
    if (!local_port_known_ || !local_port_.ok || local_port_.state != 4) {  // no failure counts meanwhile
        may_take_over(*m, "is suspect (" + ev.text + "; SMInfo failures are not counted meanwhile)", now_ms);
        return {};
    }
    if (!ev.dead) return {};
    if (!may_take_over(*m, "is dead (" + ev.text + ")", now_ms)) return {};
    return start_attempt(*m, ev, now_ms);
}

// Only the designated successor, only with its own port Active (each refusal said once).
bool HaEngine::may_take_over(Guid m, const std::string& state, int64_t now_ms) {
    const std::optional<Guid> succ = successor(now_ms);
    if (succ != local_) {
        say("not successor " + guid_hex(m),
            "master " + guid_hex(m) + " " + state + "; the successor is " +
                (succ ? guid_hex(*succ) : std::string("nobody (no live STANDBY)")) + ", not this node's SM: not acting");
        return false;
    }
    if (!local_port_known_ || !local_port_.ok || local_port_.state != 4) {
        say("port down " + guid_hex(m), "master " + guid_hex(m) + " " + state +
                                        " but this node's own port is not Active (" +
                                        (local_port_.ok ? "state " + std::to_string(local_port_.state) : local_port_.error) +
                                        "): not promoting an isolated SM");
        return false;
    }
    return true;
}

// A live remote master that does not sweep: its own agent forces heavy sweeps first (unwedge());
// after those had their time, the successor takes over, but only through the fence: the master
// answers SMInfo as MASTER, and promoting beside it would make two masters.
std::vector<Action> HaEngine::wedged_master(Guid m, int64_t now_ms) {
    const SmView& v = views().at(m);
    std::string why;
    if (!not_sweeping(v, now_ms, &why)) return {};
    const int64_t grace = int64_t(cfg_.heal_attempts + 1) * cfg_.retry_after_ms;
    if (now_ms - v.sweep_owed_ms < cfg_.sweep_timeout_ms + grace) return {};
    if (!may_take_over(m, "is not sweeping (" + why + ")", now_ms)) return {};
    if (cfg_.fence.empty()) {
        say("wedged no fence " + guid_hex(m), "master " + guid_hex(m) + " is not sweeping (" + why +
                                                  "); this node's SM is the successor, but without ha.fence it does not "
                                                  "take over a master that answers SMInfo as MASTER");
        return {};
    }
    Evidence ev;
    ev.text = why;
    ev.fast = true;  // fenced first: the old master is gone when the promotion is sent
    auto out = start_attempt(m, ev, now_ms);
    out.front().text = "master " + guid_hex(m) + " is not sweeping (" + why + "); this node's SM " + guid_hex(local_) +
                       " is the successor: fencing it before the takeover";
    attempt_.cause = "master not sweeping (fenced)";
    attempt_.detected_ms = v.sweep_owed_ms;
    return out;
}

// This node's port is down (its SM re-sweeps an island, DISCOVERING) and another SM of the subnet
// became MASTER meanwhile (its plugin heartbeats over the management network). When the port comes
// back, OpenSM finds that master and goes STANDBY; outranking it, it then sends trap 144 on every
// poll to claim the mastership back (a failback; on ibsim, which drops every TrapRepress, the
// outstanding trap wedges that SM's every later sweep: docs/ha-facts.md section 5). So, while the
// port is still down, its sm_priority goes just below the new master's (lowering sends no trap).
//
// The same while this node's SM is not running (killed, crashed: its process seen gone, its plugin
// closed) and another SM took over: it would restart with its configured priority, outrank the new
// master, and claim the mastership back (trap 144 on every poll: a failback, a second change of
// master for one fault; on ibsim the trap wedges it). Its opensm.conf gets the priority just below
// the new master for its next start (no SIGHUP: nothing runs), and it is reclaimed as above.
std::vector<Action> HaEngine::step_aside(int64_t now_ms) {
    auto lit = views().find(local_);
    if (lit == views().end() || !local_port_known_) return {};
    const SmView& me = lit->second;
    const bool sm_gone = me.process_gone_ms && !me.plugin_connected;
    if (!sm_gone) aside_written_ = -1;
    if (local_port_.ok && local_port_.state == 4 && !sm_gone) return reclaim_priority(me, now_ms);
    const SmView* m = nullptr;
    for (const auto& [g, v] : views()) {
        const bool heard = v.plugin_connected && now_ms - v.plugin_ms <= cfg_.heartbeat_timeout_ms;
        if (g != local_ && v.info.state == SmState::Master && heard && group_of(g) == group_of(local_) &&
            sm_outranks(me.info.priority, local_, v.info.priority, g))
            m = &v;
    }
    if (!m) return {};
    // The highest priority the new master still outranks (a tie goes to the lower GUID).
    const int prio = m->info.port_guid < local_ ? m->info.priority : m->info.priority - 1;
    if (sm_gone && aside_written_ == prio) return {};  // written for its next start already
    const std::string why = std::string(sm_gone ? "this node's SM is not running" : "this node's port is down") + " and " +
                            guid_hex(m->info.port_guid) + " (priority " +
                            std::to_string(m->info.priority) + ") became MASTER; this node's SM (priority " +
                            std::to_string(me.info.priority) + ") would come back outranking it";
    if (prio < 0 || cfg_.opensm_conf.empty()) {
        say("aside " + guid_hex(m->info.port_guid), why + (prio < 0 ? ", and no priority ranks below it" : ", and ha.opensm_conf is not set") +
                                                        ": it will claim the mastership back (trap 144)");
        return {};
    }
    if (step_aside_ms_ && now_ms - step_aside_ms_ < cfg_.retry_after_ms) return {};
    step_aside_ms_ = now_ms;
    if (aside_from_ < 0) aside_from_ = me.info.priority;
    Action a;
    a.kind = Action::Kind::set_priority;
    a.target = local_;
    a.priority = prio;
    a.running = !sm_gone;
    if (sm_gone) aside_written_ = prio;
    a.text = why + ": sm_priority " + std::to_string(prio) +
             (sm_gone ? " for its next start (no failback, no trap 144)" : " before the port comes back (no failback, no trap 144)");
    return {log_action(a.text), a};
}

// After step_aside(): this node's SM is MASTER again (taken over, its port Active, one sweep done,
// no other master): its priority back to what it stepped aside from, so the SM it took over from,
// restarted with its own (lower) priority, does not outrank it and preempt.
std::vector<Action> HaEngine::reclaim_priority(const SmView& me, int64_t now_ms) {
    if (aside_from_ < 0 || me.info.state != SmState::Master || me.subnet_up_ms < me.master_since_ms) return {};
    if (me.info.priority >= aside_from_) {  // restored (or raised by a switchover meanwhile)
        aside_from_ = -1;
        return {};
    }
    for (const auto& [g, v] : views())
        if (g != local_ && v.info.state == SmState::Master && alive(v, now_ms)) return {};
    if (step_aside_ms_ && now_ms - step_aside_ms_ < cfg_.retry_after_ms) return {};
    step_aside_ms_ = now_ms;
    Action a;
    a.kind = Action::Kind::set_priority;
    a.target = local_;
    a.priority = aside_from_;
    a.text = "this node's SM is MASTER again and swept: sm_priority back " + std::to_string(me.info.priority) + " -> " +
             std::to_string(aside_from_) + " (it stepped aside while its port was down; a MASTER sends no trap)";
    return {log_action(a.text), a};
}

// This node's SM is MASTER and does not sweep: force a heavy sweep (SubnSet(SMInfo) HANDOVER in
// MASTER state), at most heal_attempts times, retry_after_ms apart; then say so once.
std::vector<Action> HaEngine::unwedge(int64_t now_ms) {
    auto it = views().find(local_);
    std::string why;
    if (it == views().end() || !not_sweeping(it->second, now_ms, &why)) return {};
    SmView& me = it->second;
    if (me.forced_sweeps >= cfg_.heal_attempts) {
        say("wedged " + guid_hex(local_), "this node's SM " + guid_hex(local_) + " is " + why +
                                              ": giving up forcing; the successor takes over through the fence, "
                                              "or restart this opensm");
        return {};
    }
    if (heal_ms_ && now_ms - heal_ms_ < cfg_.retry_after_ms) return {};
    heal_ms_ = now_ms;
    ++me.forced_sweeps;
    Action p;
    p.kind = Action::Kind::promote;
    p.target = local_;
    p.lid = me.info.lid;
    p.attr_mod = kSmInfoHandover;
    p.text = "this node's SM " + guid_hex(local_) + " is " + why + ": SubnSet(SMInfo) HANDOVER to it forces heavy sweep " +
             std::to_string(me.forced_sweeps) + " of " + std::to_string(cfg_.heal_attempts);
    return {log_action(p.text), p};
}

// Two live masters of one subnet that reach each other over InfiniBand again (a partition healed):
// OpenSM resolves that in the heavy sweep that finds the other master (C14-60.2.1), but nothing
// may trigger that sweep. Each master's agent forces one of its own SM with a SubnSet(SMInfo)
// HANDOVER (legal in MASTER state: "force a heavy sweep"), at most once per retry_after_ms.
// Measured on ibsim (isolated master, relink): forcing only the lower master's sweep left two
// masters in about 1 run in 10; forcing both: 0 in 18.
std::vector<Action> HaEngine::heal_split_brain(int64_t now_ms) {
    auto lit = views().find(local_);
    const SmView* other = nullptr;
    if (lit != views().end() && lit->second.info.state == SmState::Master && alive(lit->second, now_ms))
        for (const auto& [g, v] : views()) {
            if (g == local_ || v.info.state != SmState::Master || group_of(g) != group_of(local_)) continue;
            const bool answers_as_master = v.probe_failures == 0 && v.answer_ms &&
                                           now_ms - v.answer_ms <= probe_window() && v.answered_state == SmState::Master;
            if (answers_as_master) other = &v;
        }
    if (!other) {  // resolved (or never was): a new episode starts from zero
        heal_count_ = 0;
        split_brain_.reset();
        return {};
    }
    if (heal_ms_ && now_ms - heal_ms_ < cfg_.retry_after_ms) return {};
    const Guid g = other->info.port_guid;
    const SmView& me = lit->second;
    const SmView& v = *other;
    if (heal_count_ >= cfg_.heal_attempts) {  // the forced sweeps did not end it: escalate, stop
        if (!split_brain_) {
            split_brain_ = SplitBrain{local_, g, heal_count_, heal_first_ms_, heal_ms_,
                                      std::to_string(heal_count_) + " SubnSet(SMInfo) HANDOVER to " + guid_hex(local_) +
                                          " (forced heavy sweeps, " + std::to_string(cfg_.retry_after_ms) + " ms apart)"};
            pending_.push_back(log_action("split brain persists: " + guid_hex(local_) + " and " + guid_hex(g) +
                                          " are both MASTER after " + split_brain_->tried +
                                          "; not retrying: stop the SM that must not be master"));
        }
        return {};
    }
    if (heal_count_++ == 0) heal_first_ms_ = now_ms;
    heal_ms_ = now_ms;
    Action p;
    p.kind = Action::Kind::promote;
    p.target = local_;
    p.lid = me.info.lid;
    p.attr_mod = kSmInfoHandover;
    p.text = "split brain: " + guid_hex(g) + " (priority " + std::to_string(v.info.priority) +
             ") answers SMInfo as MASTER like this node's SM " + guid_hex(local_) + " (priority " +
             std::to_string(me.info.priority) + "): SubnSet(SMInfo) HANDOVER to it forces heavy sweep " +
             std::to_string(heal_count_) + " of " + std::to_string(cfg_.heal_attempts) +
             ", in which OpenSM's arbitration leaves one master";
    return {log_action(p.text), p};
}

std::vector<Action> HaEngine::start_attempt(Guid master, const Evidence& ev, int64_t now_ms) {
    attempt_ = FailoverRecord{};
    attempt_.detected_ms = earliest_evidence_ms(views()[master]);
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
    for (const std::string& a : cfg_.fence) f.argv.push_back(fill_arg(a, master, views()[master].info.lid));
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
    p.lid = views()[local_].info.lid;
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
    else if (r.status == SmpStatus::no_sm)
        fail("SubnSet(SMInfo) found no SM at this node's port (MAD status " + std::to_string(r.mad_status) + ")", now_ms);
    else if (r.status == SmpStatus::error)
        fail("SubnSet(SMInfo) not sent: " + r.error, now_ms);
    // ok, or timeout (the answer may be lost while the SM acted): wait for MASTER or the timeout.
}

}  // namespace ibf::ha
