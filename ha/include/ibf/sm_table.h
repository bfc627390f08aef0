// The Subnet Managers of one subnet, one entry per SM port GUID: what each SM's plugin said and,
// with `ha:` on, the HA engine's evidence about it (SMInfo answers, sweeps owed, ActCount). One
// table, fed once: ibfabricd's ControllerState owns it and hands it every plugin message
// (Hello, Heartbeat, Snapshot.self, StateChange, a closed connection); the HaEngine, when there is
// one, reads and writes the same entries (ha_engine.h), so the SM list, /metrics, the page and the
// failover rules read one LID, one state and one "connected". Pure: times passed in (Unix ms).
// Owned and used by the io thread only (docs/threading.md).
//
//   ibf::ha::SmTable t;
//   t.on_plugin(hello.sm, now);                  // what a plugin said (engine-less; with an engine
//                                                // HaEngine::on_plugin() does this and its rules)
//   t.on_plugin_closed(guid, now);               // its last plugin connection closed
//   if (auto m = t.plugin_master()) ...          // without an engine: the connected SM whose plugin says MASTER
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ibf/smp.h"
#include "ibf/snapshot.h"

namespace ibf::ha {

// Where the latest idea of an SM came from.
enum class Source : uint8_t { none, plugin, probe, snapshot };

// Everything known about one SM.
struct SmView {
    SmInfo info;                  // freshest guid, lid, priority, state, act_count from any source
    Source source = Source::none;
    int64_t info_ms = 0;          // when `info` was last updated
    // witness 1: its plugin (ControllerState's connections: open while any is open)
    bool plugin_seen = false, plugin_connected = false;
    int64_t plugin_ms = 0;        // last Hello/Heartbeat/Snapshot from its plugin
    int64_t plugin_closed_ms = 0; // when its last plugin connection closed (0 = open or never)
    // witness 2: SubnGet(SMInfo) over InfiniBand (the HA engine's probes)
    int64_t probe_ms = 0;         // last probe outcome
    SmpStatus probe = SmpStatus::error;
    int probe_failures = 0;       // consecutive timeouts/errors (a `refused` answer is an answer)
    int64_t first_failure_ms = 0; // first of those failures
    int64_t last_failure_ms = 0;  // last of those failures (they expire a probe window after it)
    int64_t answer_ms = 0;        // last answer
    SmState answered_state = SmState::NotActive;
    // ActCount progress (for stalls)
    uint32_t act_count_seen = 0;
    int64_t act_count_changed_ms = 0;
    int64_t master_since_ms = 0;  // when it was last seen becoming MASTER (0 = not master)
    int64_t discovering_since_ms = 0;  // when it was last seen entering DISCOVERING (0 = not so)
    uint64_t sm_key = 0;          // as its SMInfo answered (OpenSM 3.3.23 gives it to anyone), 0 = unknown
    std::optional<SmConf> conf;   // its opensm.conf settings, as its plugin's Hello sent them
    int64_t process_gone_ms = 0;  // its opensm process seen gone by this daemon (0 = not seen)
    // sweeping, from its plugin's events (SUBNET UP ends every heavy sweep)
    int64_t subnet_up_ms = 0;     // its last SUBNET UP
    int64_t sweep_owed_ms = 0;    // earliest reason to sweep since then (0 = none owed)
    std::string sweep_owed_why;   // "became MASTER", "heavy sweep started", "trap 128"
    int forced_sweeps = 0;        // forced by its own agent since its last SUBNET UP
};

class SmTable {
public:
    // At most this many SMs: a new one makes the least recently heard one give way, never `keep`
    // (this node's SM) and never one whose plugin connection is open.
    static constexpr size_t kMaxSms = 64;

    using Map = std::map<Guid, SmView>;
    const Map& all() const { return sms_; }
    Map& all() { return sms_; }
    const SmView* find(Guid g) const;
    SmView* find(Guid g);
    // The entry of `g`, made (info.port_guid, info_ms) when new.
    SmView& view(Guid g, int64_t now_ms, Guid keep = 0);
    size_t erase(Guid g) { return sms_.erase(g); }

    // What an SM's plugin said (Hello, Heartbeat, Snapshot.self) into `v`: its plugin is connected
    // and spoke now; LID (a 0 keeps the one known: a STANDBY's plugin says 0), priority, ActCount,
    // state. HaEngine::on_plugin() runs it between its own rules.
    static void note_plugin(SmView& v, const SmInfo& sm, int64_t now_ms);
    // The same on the entry of sm.port_guid (made when new), with no engine.
    void on_plugin(const SmInfo& sm, int64_t now_ms);
    // Its last plugin connection closed.
    void on_plugin_closed(Guid g, int64_t now_ms);
    // A new state: becoming MASTER starts master_since_ms and owes a sweep; DISCOVERING starts
    // discovering_since_ms; STANDBY / NOT_ACTIVE owe none.
    static void set_state(SmView& v, SmState s, int64_t now_ms);
    static void note_act_count(SmView& v, uint32_t ac, int64_t now_ms);

    // The plugins' master (the rule without an HA engine): a connected SM whose plugin says MASTER;
    // of several, the one that became MASTER last.
    std::optional<Guid> plugin_master() const;

private:
    Map sms_;
};

}  // namespace ibf::ha
