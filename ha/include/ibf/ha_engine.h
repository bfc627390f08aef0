// The SM high-availability engine: what this node's agent (ibfabricd) knows about every Subnet
// Manager of its subnet, and what it decides to do when the master dies. Pure: no clocks, no MADs,
// no files; every time is passed in (Unix ms) and every action is returned, never run. The daemon
// feeds it the plugins' messages and the SMInfo probes' answers, runs the actions it returns
// (a fence command, a SubnSet(SMInfo)) and feeds back their outcome. docs/ha.md.
//
// Owned by ibfabricd's io thread (docs/threading.md), so nothing in it is proportional to the
// fabric per message: a snapshot is read through its port LIDs (Snapshot::port_lids, sorted by
// GUID, made on the decode thread by wire::Decoder) by a binary search per known SM, and the
// engine keeps the last master's by shared_ptr; only a master change costs one merge of two such
// lists (lid_changes(): 0.07-0.26 ms at 48k LIDs, bench/bench_ha.cpp).
//
//   ibf::ha::HaEngine e(cfg);                       // cfg.local_sm = this node's SM port GUID
//   e.on_plugin(info, /*connected=*/true, now);     // Hello / Heartbeat / Snapshot.self
//   e.on_probe(lid, reply, now);                    // SubnGet(SMInfo) answer or timeout
//   for (const Action& a : e.tick(now)) run(a);     // Fence{argv} then Promote{lid, HANDOVER}
//   e.on_fence_done(ok, detail, now);  e.on_promote_sent(reply, now);
//
// Safety rules, derived from the failure model in docs/ha.md (each has a test in
// tests/ha/engine_test.cpp named after the rule or the scenario it comes from):
// - never promote while the master's last SMInfo answer says MASTER;
// - one witness is never a failover, and the management network is one witness: the plugin's
//   connection closing or its heartbeats stopping (plugin gone) proves death only together with
//   `fast_failures` consecutive SMInfo failures that either span `flap_window_ms` (longer than a
//   cable flap) or come with the master's process seen gone (on_process_gone: a host this daemon
//   sees); on SMInfo alone only after `slow_failures` failures spanning `slow_min_ms`;
// - no decision from stale evidence: failures expire when no probe has failed for a probe window,
//   an answer resets them, failures counted while this node's own port was not Active are
//   discarded, and a plugin that resumes after a silence with its connection open (a thawed
//   freeze) restarts the count; master() never returns a dead SM, and a dead master that comes
//   back MASTER is learnt afresh;
// - only the designated successor's agent acts (OpenSM's ranking among the live STANDBYs), and
//   only for its own SM, and only while its own port is Active (an isolated standby never
//   promotes itself into an island);
// - a configured fence command must succeed before the promotion;
// - a MASTER whose plugin heartbeats but which has owed a sweep (it became MASTER, started a heavy
//   sweep, or reported a trap) for `sweep_timeout_ms` without SUBNET UP is not sweeping: its own
//   agent forces heavy sweeps (at most `heal_attempts`), then the successor takes over through the
//   fence (the same rules: the old master must not answer as MASTER after it); never without one;
// - every decision is a FailoverRecord with its evidence;
// - a split brain that heals (two masters of one subnet answering each other over InfiniBand) is
//   resolved by forcing a heavy sweep of each master (each agent its own), in which OpenSM's
//   arbitration leaves one; after `heal_attempts` such sweeps it is escalated, not retried;
// - an SM that lost the mastership while its own port was down steps aside before the port comes
//   back: its agent lowers its sm_priority below the new master's, so it returns as a STANDBY that
//   does not outrank its master (a STANDBY that does sends trap 144, and a failback); once it is
//   MASTER again and swept, its priority is restored (a MASTER sends no trap), so a restarted
//   former master does not outrank it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/ha_rank.h"
#include "ibf/port_lids.h"
#include "ibf/sm_table.h"
#include "ibf/smp.h"
#include "ibf/snapshot.h"

namespace ibf::ha {

enum class Mode : uint8_t { off, monitor, act };
std::string_view to_string(Mode m);  // "off", "monitor", "act"

// The `ha:` section of ibfabricd's configuration (docs/daemon.md lists defaults and reasons).
struct HaConfig {
    Mode mode = Mode::off;
    Guid local_sm = 0;            // this node's SM port GUID; 0 = the SM whose plugin uses the Unix socket
    std::string mad_ca;           // CA for MADs, "" = first
    int mad_port = 0;             // 0 = first active port
    int poll_ms = 100;            // SubnGet(SMInfo) to every known SM this often
    int mad_timeout_ms = 100;     // one probe gives up after this long
    int heartbeat_timeout_ms = 400;  // plugin heartbeats older than this = a silent plugin
    int fast_failures = 2;        // consecutive SMInfo failures that, with the plugin gone, prove death ...
    int flap_window_ms = 1500;    // ... once they span this long (or the master's process is seen gone)
    int slow_failures = 10;       // consecutive SMInfo failures alone ...
    int slow_min_ms = 2000;       // ... spanning at least this long
    // SMInfo attribute modifier of the promotion: HANDOVER (1), DISCOVER (5), or 0 = auto: HANDOVER
    // on the fast path (two witnesses: MASTER at once), DISCOVER on the slow path (SMInfo alone:
    // the standby's own discovery re-checks that no master answers before it becomes one).
    uint32_t promote_with = 0;
    int promote_timeout_ms = 3000;  // the local SM must say MASTER within this after the Set
    int retry_after_ms = 2000;    // after a failed attempt (fence or promotion), wait this long
    std::vector<std::string> fence;  // argv run before promoting ({guid} {lid} replaced); empty = none
    int fence_timeout_ms = 10000;
    int stall_ms = 30000;         // ActCount unchanged this long: sm_stalled / sm_standby_not_polling
    int sweep_timeout_ms = 20000; // a MASTER owing a sweep this long without SUBNET UP: sm_stalled "not sweeping"
    int heal_attempts = 3;        // forced heavy sweeps (split brain, not sweeping) before escalating
    std::string guid2lid_file;    // local OpenSM's guid2lid, kept current while it is STANDBY ("" = off)
    std::string track_file;       // keepalived track_file: "0" while the local SM is MASTER, else "1"
    std::string opensm_conf;      // local opensm.conf (sm_priority is rewritten there for switchover)
    std::string sm_helper;        // the root helper's socket: sm_priority and guid2lid go through it ("" = direct)
    std::vector<Guid> expected_sms;             // the SMs that belong here (empty = not checked)
    std::map<Guid, int> expected_priorities;    // configured priorities (not checked when absent)
};

// An SM's sweep as its plugin reports it.
enum class SweepEvent : uint8_t {
    heavy_start,    // OSM_EVENT_ID_HEAVY_SWEEP_START
    subnet_up,      // OSM_EVENT_ID_SUBNET_UP (the heartbeat's sweep_seq moved)
    fabric_change,  // a trap it received (128 link state, 144 capability, 64/65 GID in/out)
};

// Two masters that stayed two after `heal_attempts` forced sweeps: escalated, no more retries.
struct SplitBrain {
    Guid a = 0, b = 0;            // this node's SM and the other master
    int attempts = 0;             // forced heavy sweeps sent
    int64_t first_ms = 0, last_ms = 0;
    std::string tried;            // one line: what was sent and how often
};

enum class Phase : uint8_t { watching, suspecting, fencing, promoting, cooldown };
std::string_view to_string(Phase p);

struct Action {
    // set_priority: rewrite this node's sm_priority (ha.opensm_conf) and SIGHUP its opensm.
    enum class Kind : uint8_t { fence, promote, log, set_priority } kind = Kind::log;
    std::vector<std::string> argv;  // fence: the command, placeholders filled
    uint16_t lid = 0;               // promote: the LID to send SubnSet(SMInfo) to (the local SM)
    uint32_t attr_mod = 0;          // promote: HANDOVER or DISCOVER
    Guid target = 0;                // the SM acted on (fence: the old master; promote: local)
    int priority = 0;               // set_priority: the new sm_priority (0..15)
    bool running = true;            // set_priority: false = the SM is not running: write it for its next start, no SIGHUP
    std::string text;               // log: one line with the evidence
    static Action log(std::string line) {
        Action x;
        x.text = std::move(line);
        return x;
    }
};

// One master change or one attempt, with why. Kept in the engine (bounded) and by the daemon.
struct FailoverRecord {
    int64_t detected_ms = 0;      // first evidence of the old master's death (0 = not a death)
    int64_t decided_ms = 0;       // when the decision was taken / the change was seen
    int64_t promoted_ms = 0;      // Set sent (0 = none)
    int64_t master_ms = 0;        // new master seen as MASTER (0 = not yet / failed)
    Guid from = 0, to = 0;
    std::string cause;            // "master dead: plugin connection closed + 2 SMInfo timeouts", "handover", ...
    std::string evidence;         // the numbers behind it
    std::string outcome;          // "promoted", "failed: ...", "observed", "fence failed: ..."
    bool by_this_node = false;    // this agent sent the promotion
    double duration_ms() const { return master_ms && detected_ms ? double(master_ms - detected_ms) : 0; }
};

class HaEngine {
public:
    // `sms`: the SM table to share (ControllerState's, sm_table.h: the daemon's one table of the
    // SMs, whose plugin messages it feeds here once); null = a table of the engine's own (tests).
    explicit HaEngine(HaConfig cfg, SmTable* sms = nullptr);

    // --- signals (time passed in) ---
    // An SM's plugin said something (Hello, Heartbeat, Snapshot.self); `local` = over the Unix socket.
    void on_plugin(const SmInfo& sm, bool local, int64_t now_ms);
    void on_plugin_closed(Guid sm, int64_t now_ms);  // its last plugin connection closed
    // Its opensm process exited on a host this daemon can see (the Hello's pid is gone): a witness
    // independent of the management network.
    void on_process_gone(Guid sm, int64_t now_ms);
    void on_sweep(Guid sm, SweepEvent e, int64_t now_ms);  // its plugin's sweep events
    void on_conf(Guid sm, const SmConf& c, int64_t now_ms);  // its opensm.conf settings (Hello)
    // A master's snapshot: the SMs it knows and the port GUIDs of its fabric (subnet grouping).
    // Reads the fabric only through s.port_lids (a binary search per known SM; once per master
    // change, a merge of two masters' LIDs for lid_changes()). When the snapshot has none (built by
    // hand: tests, tools) it computes them, a pass over the fabric; the daemon's snapshots come
    // from wire::Decoder, which sets them on the decode thread (docs/threading.md).
    void on_snapshot(const Snapshot& s, int64_t now_ms);
    // A SubnGet(SMInfo) probe to the SM believed to be at `lid` (`guid`) came back (or did not).
    void on_probe(Guid guid, uint16_t lid, const SmInfoReply& r, int64_t now_ms);
    void on_local_port(const LocalPort& p, int64_t now_ms);
    void on_fence_done(bool ok, const std::string& detail, int64_t now_ms);
    void on_promote_sent(const SmInfoReply& r, int64_t now_ms);
    // The daemon's SM table (ControllerState) dropped SMs whose plugin left long ago
    // (health.forget_sm_after_s): forgets every SM whose plugin was seen and that `known` no longer
    // holds, unless it is this node's SM, is alive by the engine's own evidence (it answers SMInfo)
    // or is the master of an attempt in progress. Returns how many it forgot.
    template <class Known>
    size_t forget_silent(const Known& known, int64_t now_ms) {
        std::vector<Guid> gone;
        for (const auto& [g, v] : views())
            if (v.plugin_seen && !known(g) && forgettable(v, now_ms)) gone.push_back(g);
        for (Guid g : gone) table().erase(g);
        return gone.size();
    }

    // Decides. Returns the actions to run now (never the same action twice for one attempt).
    std::vector<Action> tick(int64_t now_ms);

    // --- reads ---
    const HaConfig& config() const { return cfg_; }
    Guid local_sm() const { return local_; }
    const SmTable::Map& sms() const { return table().all(); }
    Phase phase() const { return phase_; }
    // The SM currently believed MASTER: never one that is dead by the evidence at the latest time
    // passed in; of several, the one that became MASTER last.
    std::optional<Guid> master() const;
    std::optional<Guid> successor(int64_t now_ms) const;  // who takes over if the master dies now
    bool alive(const SmView& v, int64_t now_ms) const;
    // A witness says this SM may be dead (plugin gone or SMInfo failing): probe it urgently.
    bool suspect(Guid sm, int64_t now_ms) const;
    bool dead(Guid sm, int64_t now_ms) const;      // the evidence proves it dead (fast or slow path)
    // A live MASTER that has owed a sweep for sweep_timeout_ms without SUBNET UP (its evidence in
    // `why` when given).
    bool not_sweeping(const SmView& v, int64_t now_ms, std::string* why = nullptr) const;
    const std::optional<SplitBrain>& split_brain() const { return split_brain_; }
    // SMs grouped by subnet (SMs seen in one fabric share a group; sticky).
    int group_of(Guid sm) const;
    const std::vector<FailoverRecord>& history() const { return history_; }
    uint64_t records_total() const { return records_total_; }  // ever recorded (history() keeps the last kMaxHistory)
    uint64_t master_changes() const { return master_changes_; }
    uint64_t failovers_by_this_node() const { return failovers_by_us_; }
    // "0" / "1" for keepalived's track_file: 0 while the local SM is MASTER and answering.
    bool local_is_master(int64_t now_ms) const;
    // Ports whose LID differs between the last master snapshot before the latest master change
    // and the new master's first snapshot (kept until the next master change).
    struct LidChange {
        Guid port_guid = 0;
        uint16_t before = 0, after = 0;
        int64_t seen_ms = 0;
    };
    const std::vector<LidChange>& lid_changes() const { return lid_changes_; }

    static constexpr size_t kMaxHistory = 256;
    static constexpr size_t kMaxSms = SmTable::kMaxSms;

private:
    SmTable& table() { return shared_ ? *shared_ : own_; }
    const SmTable& table() const { return shared_ ? *shared_ : own_; }
    SmTable::Map& views() { return table().all(); }
    const SmTable::Map& views() const { return table().all(); }
    SmView& view(Guid g, int64_t now_ms);
    bool forgettable(const SmView& v, int64_t now_ms) const;
    void seen(int64_t now_ms) { now_ = std::max(now_, now_ms); }
    // How long an SMInfo answer (or failure) stays current: five polls and one timeout.
    int64_t probe_window() const { return 5LL * cfg_.poll_ms + cfg_.mad_timeout_ms; }
    bool plugin_gone(const SmView& v, int64_t now_ms) const;
    void forget_failures(SmView& v);
    void relearn(SmView& v, SmState new_state, int64_t now_ms);  // before new info on a maybe dead SM
    std::vector<Action> unwedge(int64_t now_ms);
    std::vector<Action> wedged_master(Guid m, int64_t now_ms);
    bool may_take_over(Guid m, const std::string& state, int64_t now_ms);
    void unite(Guid a, Guid b);
    struct Evidence {
        bool suspect = false, dead = false, fast = false;
        std::string text;
    };
    Evidence evidence(const SmView& m, int64_t now_ms) const;
    int64_t earliest_evidence_ms(const SmView& m) const;
    void track_master(int64_t now_ms);
    std::vector<Action> step(int64_t now_ms);
    std::vector<Action> watch(int64_t now_ms);
    std::vector<Action> heal_split_brain(int64_t now_ms);
    std::vector<Action> step_aside(int64_t now_ms);
    std::vector<Action> reclaim_priority(const SmView& me, int64_t now_ms);
    std::vector<Action> start_attempt(Guid master, const Evidence& ev, int64_t now_ms);
    std::vector<Action> promote_now(int64_t now_ms);
    void complete(int64_t now_ms);
    void fail(const std::string& why, int64_t now_ms);
    void say(const std::string& key, const std::string& text);  // a log action, once per key
    void record(FailoverRecord r);

    HaConfig cfg_;
    Guid local_ = 0;
    SmTable* shared_ = nullptr;               // the daemon's one table (ControllerState's), or
    SmTable own_;                             // this engine's own when none is shared
    std::map<Guid, Guid> parent_;            // union-find over SM port GUIDs (subnet groups)
    LocalPort local_port_;
    bool local_port_known_ = false;

    Phase phase_ = Phase::watching;
    Guid watched_master_ = 0;                 // the master the current attempt is about
    int64_t phase_since_ms_ = 0;
    FailoverRecord attempt_;                  // the attempt in progress
    bool attempt_fast_ = false;               // the attempt's evidence took the fast path
    std::optional<bool> fence_ok_;            // fence outcome, once reported
    std::string fence_detail_;
    std::vector<Action> pending_;             // log actions produced by on_*(), returned by tick()
    std::string said_;                        // key of the last repeated log line (no repeats)
    int64_t heal_ms_ = 0;                     // last split-brain healing Set (rate limit)
    int64_t step_aside_ms_ = 0;               // last set_priority of step_aside() (rate limit)
    int aside_from_ = -1;                     // the priority it stepped aside from (-1 = none), restored as MASTER
    int aside_written_ = -1;                  // the priority written for a dead SM's next start (-1 = none)
    int heal_count_ = 0;                      // healing Sets of the current episode
    int64_t heal_first_ms_ = 0;
    std::optional<SplitBrain> split_brain_;   // escalated episode
    int64_t now_ = 0;                         // the latest time passed in

    std::optional<Guid> last_master_;         // for master-change records
    std::vector<FailoverRecord> history_;
    uint64_t master_changes_ = 0, failovers_by_us_ = 0, records_total_ = 0;
    // The port LIDs of master snapshots (Snapshot::port_lids, shared with the snapshot; never a
    // copy): the last master sweep's, and the old master's last one across a master change.
    std::shared_ptr<const PortLids> last_lids_, lids_before_;
    Guid last_lids_from_ = 0;                 // the master whose sweep last_lids_ is
    bool pending_lid_compare_ = false;
    std::vector<LidChange> lid_changes_;
};

// The track_file / `ibfabric ha check` verdict as text: "0\n" healthy (local SM is MASTER), "1\n" not.
std::string track_file_text(bool local_is_master);

}  // namespace ibf::ha
