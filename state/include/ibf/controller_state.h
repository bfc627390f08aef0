// The daemon's state, without any I/O: what each SM last said, which SM is MASTER, the fabric the
// daemon believes in, and the latest findings. ibfabricd's io_context thread owns the only
// instance (docs/threading.md); the API (api.h) reads it. Every time is passed in (unix ms).
// Every plugin message comes in here once: the SMs' one table (sm_table(), ha/sm_table.h) is fed
// from it, through the HA engine when one is attached (its rules run on the same entries).
//
//   ControllerState st;
//   st.attach_ha(&engine);           // with `ha:` on: an engine made with &st.sm_table()
//   st.on_connect(7, "unix", now);
//   st.on_hello(7, hello, now);
//   if (auto job = st.on_snapshot(7, std::move(snap), now)) run_check(*job);   // master's sweep
//   st.publish(result, now);                                                   // findings back
//   st.on_disconnect(7, now);
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/finding.h"
#include "ibf/flap_detector.h"
#include "ibf/ha_engine.h"
#include "ibf/link_table.h"
#include "ibf/analysis_result.h"
#include "ibf/port_counters.h"
#include "ibf/snapshot.h"
#include "ibf/waivers.h"
#include "ibf/wire.h"

namespace ibf {

using ConnId = uint64_t;

// What one SM's plugin connections carried, keyed by its port GUID: versions, pid, where from,
// message counts, its counters and last snapshot. Its LID, priority, state and whether its plugin
// is connected are in the SMs' one table (ControllerState::sm_table(), ha/sm_table.h).
struct SmRecord {
    std::string osm_version, plugin_version;
    uint32_t pid = 0;
    std::string peer;                // where its (last) connection came from
    int open_connections = 0;        // connected while > 0
    int64_t disconnected_ms = 0;     // when its last connection closed (0: connected or never): when to forget it
    int64_t first_seen_ms = 0;
    int64_t last_heartbeat_ms = 0;   // 0 = never
    uint64_t heartbeat_sweep_seq = 0;
    int64_t last_snapshot_ms = 0;    // when its last snapshot arrived, 0 = never
    uint64_t snapshots_received = 0;
    uint64_t events_received = 0;
    std::optional<wire::Counters> counters;  // last Counters message
    std::shared_ptr<const Snapshot> latest;  // its last snapshot

    bool connected() const { return open_connections > 0; }
};

// What the check worker must do: check `snapshot` (the fabric the daemon now believes in).
struct CheckJob {
    uint64_t generation = 0;         // increases per job; results of older jobs are ignored
    std::shared_ptr<const Snapshot> snapshot;
    int64_t received_ms = 0;         // when the snapshot arrived (wall clock)
    bool new_sweep = false;          // true: a master sweep (goes to history); false: a re-check
};

// What the check worker returns.
struct CheckResult {
    uint64_t generation = 0;
    std::shared_ptr<const Snapshot> snapshot;
    std::vector<Finding> findings;
    bool checked = false;            // false when no topology is configured
    double check_ms = 0;             // time spent in ibf::check + JSON
    nlohmann::json findings_json;    // ibf::findings_to_json(findings)
    std::shared_ptr<const LiveAnalysis> analysis;  // fat-tree analysis of the same snapshot (null if it failed)
    double analyze_ms = 0;           // time spent in analyze_live (analysis, LFT balance and paths, JSON)
    std::shared_ptr<const LinkTable> links;  // per-link rows for /metrics (null: keep the previous)
    // The route validation of the snapshot's LFTs (pipeline/live_routes.h): route_check_json plus
    // "sweep_seq", "state" ("done" or "validating": the findings above then carry the last
    // validation's route findings until publish_routes()), null when no LFTs were exported.
    nlohmann::json routes_json;
};

// Link health settings (daemon config `health:`, docs/daemon.md).
struct HealthOptions {
    int64_t stale_after_ms = 30'000;  // newest fabric older than this (unconfirmed) = stale
    int64_t forget_sm_after_ms = 3'600'000;  // an SM disconnected this long is dropped (health.forget_sm_after_s)
    FlapOptions flap;
    PortErrorOptions port_errors;     // daemon config `counters:` (port_errors findings)
};

// Whether the findings describe the fabric as it is now (docs/api.md, "No data").
enum class DataState { no_data, stale, fresh };
std::string_view to_string(DataState s);  // "no_data", "stale", "fresh"
struct DataStatus {
    DataState state = DataState::no_data;
    int64_t as_of_ms = 0;  // last time the fabric was known current (snapshot or confirming heartbeat), 0 never
    std::string message;   // one line for people; "" when fresh
};

struct IngestCounters {
    uint64_t connections_total = 0;
    uint64_t connections_open = 0;
    uint64_t ingest_errors = 0;      // connections dropped for malformed/oversized input
    uint64_t refused_peer_uid = 0;   // Unix peers not in socket_users, closed at accept
    uint64_t refused_slots_full = 0; // newcomers or Hellos refused: every Hello slot held by a live plugin
    uint64_t snapshots_ignored = 0;  // snapshots from a non-master while a master is known
    std::array<uint64_t, 7> messages{};  // by wire::MsgType (index 1..6)
};

class ControllerState {
public:
    ControllerState() = default;
    ControllerState(const ControllerState&) = delete;  // the engine attached holds &sm_table()
    ControllerState& operator=(const ControllerState&) = delete;

    void configure(const HealthOptions& h);
    // The HA engine (made with &sm_table()), fed from here with every plugin message; null = none.
    // With one, master() is the engine's verdict.
    void attach_ha(ha::HaEngine* e) { ha_ = e; }
    const ha::SmTable& sm_table() const { return sm_table_; }
    ha::SmTable& sm_table() { return sm_table_; }
    const HealthOptions& health() const { return health_; }

    // Connections. `peer` is for people ("unix", "10.0.0.5:41234").
    void on_connect(ConnId c, const std::string& peer, int64_t now_ms);
    void on_disconnect(ConnId c, int64_t now_ms);
    // A connection closed because its input was malformed (counts an ingest error).
    void on_ingest_error(ConnId c);
    // A connection refused by admission: "peer_uid" or "slots_full" (ibf/ingest_server.h).
    void on_ingest_refused(const std::string& reason);
    // Drops the record (and its last snapshot) of every SM whose last connection closed
    // forget_sm_after_ms or longer before `now_ms`; returns how many. Run by on_connect(),
    // on_heartbeat() and on_snapshot(), so the state of SMs that came and went stays bounded.
    size_t forget_silent_sms(int64_t now_ms);
    uint64_t sms_forgotten_total() const { return sms_forgotten_; }

    // Messages. Hello must come first on a connection: the other on_* return false (protocol
    // error: drop the connection) when the connection has not said Hello.
    bool on_hello(ConnId c, const wire::Hello& h, int64_t now_ms);
    bool on_heartbeat(ConnId c, const wire::Heartbeat& hb, int64_t now_ms);
    bool on_counters(ConnId c, const wire::Counters& k, int64_t now_ms);
    bool on_event(ConnId c, const wire::Event& e, int64_t now_ms);
    // Port counters (perfmgr): kept only from the master SM (or, with no master known, the SM
    // whose snapshot is the fabric); rows from other SMs are counted and ignored.
    bool on_port_counters(ConnId c, const wire::PortCounters& pc, int64_t now_ms);
    // Stores the snapshot as its SM's latest. Returns a job when it becomes the daemon's fabric:
    // it comes from the MASTER SM, or no master is known (then the most recent snapshot wins).
    // Returns nullopt for a protocol error too; `protocol_error` tells which. A snapshot that
    // becomes the fabric also tells the port counter state which ports are in it (port_counters.h:
    // ports out of it for counters.window_s are dropped).
    std::optional<CheckJob> on_snapshot(ConnId c, Snapshot s, int64_t now_ms, bool* protocol_error = nullptr);

    // A job re-checking the current fabric (after a topology reload); nullopt without a fabric.
    std::optional<CheckJob> recheck(int64_t now_ms);

    // Applies a worker's result unless a newer one was already published. Returns true if applied.
    bool publish(CheckResult r, int64_t now_ms);
    // The route validation of a published result, done after it (off the critical path: the
    // cabling findings went out first). Replaces the findings and the route summary when
    // `generation` is still the published one; false (nothing changed) when a newer result came.
    bool publish_routes(uint64_t generation, std::vector<Finding> findings, nlohmann::json findings_json,
                        nlohmann::json routes_json, int64_t now_ms);
    // The route validation summary of the published findings (CheckResult::routes_json).
    const nlohmann::json& routes_json() const { return routes_json_; }

    // The waiver file (config `waivers:`, replaced on reload); null = none. Waived findings leave
    // findings_at() / analysis_findings_at() (and so the exit status of `ibfabric findings` and the
    // metrics) for waived_at() / analysis_waived_at(); an expired waiver is a waiver_expired finding.
    void set_waivers(std::shared_ptr<const WaiverSet> w) { waivers_ = std::move(w); }
    bool have_waivers() const { return waivers_ && !waivers_->empty(); }
    std::vector<WaivedFinding> waived_at(int64_t now_ms) const;
    // The live analysis' findings at `now_ms` without the waived ones (no waiver_expired: those
    // are in findings_at()), and the waived ones.
    std::vector<Finding> analysis_findings_at(int64_t now_ms) const;
    std::vector<WaivedFinding> analysis_waived_at(int64_t now_ms) const;

    // Findings about the SMs themselves (ha/ha_findings.h), replaced by the HA step.
    void set_ha_findings(std::vector<Finding> f) { ha_findings_ = std::move(f); }
    const std::vector<Finding>& ha_findings() const { return ha_findings_; }
    // A topology reload (SIGHUP or POST /api/v1/reload) succeeded or failed.
    void note_reload(bool ok, int64_t now_ms);

    // --- reads ---
    const std::map<Guid, SmRecord>& sms() const { return sms_; }
    // The SM's entry in the one table (null: never said Hello, or it gave way at SmTable::kMaxSms).
    const ha::SmView* sm_view(Guid sm) const { return sm_table_.find(sm); }
    // Its LID, priority, state and ActCount from that entry (SmInfo{port_guid} when there is none).
    SmInfo sm_info(Guid sm) const;
    std::optional<Guid> sm_of_conn(ConnId c) const;       // the SM that said Hello on `c`
    std::string peer_of(ConnId c) const;           // "unix", "10.0.0.5:41234", "" if unknown
    // An SM's LID: the last non-zero one it said (a STANDBY's plugin says 0 when its OpenSM never
    // swept), else its port's LID in the fabric the daemon believes in; 0 when neither. The rule
    // of the HA engine's SmView too, for every reader (the SM list, the page).
    uint16_t sm_lid(Guid sm) const;
    // The master, one verdict for every reader and for which snapshot becomes the fabric: with an
    // engine attached, HaEngine::master() (it also weighs SMInfo answers: never a dead SM); else the
    // connected SM whose plugin says MASTER (of several, the one that became MASTER last).
    std::optional<Guid> master() const;
    // The fabric the daemon believes in (master's, or most recent), and who sent it.
    const std::shared_ptr<const Snapshot>& current() const { return current_; }
    std::optional<Guid> current_source() const { return current_source_; }

    const std::vector<Finding>& findings() const { return findings_; }
    const nlohmann::json& findings_json() const { return findings_json_; }
    bool have_findings() const { return findings_ms_ != 0; }
    bool checked() const { return checked_; }
    uint64_t findings_sweep_seq() const { return findings_seq_; }
    int64_t findings_ms() const { return findings_ms_; }
    // The live analysis of the fabric the findings belong to (null before the first one).
    const std::shared_ptr<const LiveAnalysis>& analysis() const { return analysis_; }
    uint64_t analysis_sweep_seq() const { return analysis_seq_; }
    int64_t analysis_ms() const { return analysis_ms_; }
    double last_analyze_ms() const { return last_analyze_ms_; }

    uint64_t sweeps_ingested() const { return sweeps_ingested_; }
    uint64_t last_sweep_seq() const { return last_sweep_seq_; }
    int64_t last_sweep_ms() const { return last_sweep_ms_; }  // snapshot's taken time (or arrival)
    uint64_t checks_run() const { return checks_run_; }
    uint64_t routes_published() const { return routes_published_; }  // publish_routes() that took
    double last_check_ms() const { return last_check_ms_; }
    double check_ms_sum() const { return check_ms_sum_; }
    double last_publish_lag_ms() const { return last_lag_ms_; }  // snapshot received -> findings published
    const IngestCounters& ingest() const { return ingest_; }

    // No data before the first findings; stale when the fabric was last known current (its
    // snapshot, or a heartbeat of its SM naming the same sweep) more than stale_after_ms ago.
    DataStatus data_status(int64_t now_ms) const;
    // The check's findings plus the link_flapping findings at `now_ms`, sorted by kind, without the
    // waived ones (plus a waiver_expired per expired waiver).
    std::vector<Finding> findings_at(int64_t now_ms) const;
    // findings_at() (`active`) and waived_at() (`waived`) from one pass, for a caller that needs both.
    Waived findings_and_waived_at(int64_t now_ms) const;
    std::vector<Finding> flapping_findings(int64_t now_ms) const;
    const FlapDetector& flaps() const { return flaps_; }
    // port_errors findings at `now_ms` (state_counters.cpp), and the counter state behind them.
    // Computed once per counter state (PortCounterTracker::version()), link table, fabric and
    // options, and kept for as long as the window leaves the answer unchanged: a scrape, a findings
    // request and a check job in between all get the kept copy (port_error_passes() counts the
    // passes over every port).
    std::vector<Finding> port_error_findings(int64_t now_ms) const;
    uint64_t port_error_passes() const { return pe_memo_.passes; }
    const PortCounterTracker& port_counters() const { return *port_counters_; }
    // The counter state for a reader on another thread (a /metrics render, docs/threading.md):
    // copy-on-write, the next change copies it first while such a reference is held, so the state
    // never writes a tracker that another thread may read. Release it on the io thread.
    std::shared_ptr<const PortCounterTracker> port_counters_shared() const { return port_counters_; }
    uint64_t port_counter_rows_ignored() const { return pc_rows_ignored_; }
    const std::shared_ptr<const LinkTable>& links() const { return links_; }
    bool last_reload_ok() const { return reload_ok_; }
    int64_t last_reload_ok_ms() const { return reload_ok_ms_; }  // 0: never (the start-up load is not a reload)
    void note_publish_lag(double ms) { last_lag_ms_ = ms; }
    double last_decode_ms() const { return last_decode_ms_; }  // wire decode of the last snapshot
    void note_decode_ms(double ms) { last_decode_ms_ = ms; }

private:
    SmRecord* sm_of(ConnId c);
    void note_counter_ports(const Snapshot& s, int64_t now_ms);  // state_counters.cpp
    // What a plugin said about its SM (Hello, Heartbeat, Snapshot.self) into the one table.
    void feed_plugin(ConnId c, const SmInfo& sm, int64_t now_ms);

    std::map<Guid, SmRecord> sms_;
    ha::SmTable sm_table_;
    ha::HaEngine* ha_ = nullptr;
    std::map<ConnId, Guid> conn_sm_;        // connections that said Hello
    std::map<ConnId, std::string> conn_peer_;
    std::shared_ptr<const Snapshot> current_;
    std::optional<Guid> current_source_;
    uint64_t generation_ = 0, published_generation_ = 0;

    std::vector<Finding> findings_;
    nlohmann::json findings_json_ = nlohmann::json::object();
    bool checked_ = false;
    uint64_t findings_seq_ = 0;
    int64_t findings_ms_ = 0;
    std::shared_ptr<const LiveAnalysis> analysis_;
    nlohmann::json routes_json_;
    uint64_t analysis_seq_ = 0;
    int64_t analysis_ms_ = 0;
    double last_analyze_ms_ = 0;

    uint64_t sweeps_ingested_ = 0, last_sweep_seq_ = 0, checks_run_ = 0, routes_published_ = 0;
    int64_t last_sweep_ms_ = 0;
    double last_check_ms_ = 0, check_ms_sum_ = 0, last_lag_ms_ = 0, last_decode_ms_ = 0;
    IngestCounters ingest_;
    uint64_t sms_forgotten_ = 0;
    std::vector<Finding> ha_findings_;
    std::shared_ptr<const WaiverSet> waivers_;
    std::vector<Finding> all_findings_at(int64_t now_ms) const;  // before waivers

    HealthOptions health_;
    FlapDetector flaps_;
    std::shared_ptr<PortCounterTracker> port_counters_ = std::make_shared<PortCounterTracker>();
    PortCounterTracker& port_counters_for_write();  // copies it first while another reference is held
    struct PortErrorMemo {
        bool valid = false;
        uint64_t version = 0;
        const void* links = nullptr;    // links_.get() and current_.get() it was made with (names, labels)
        const void* fabric = nullptr;
        int64_t from_ms = 0, until_ms = 0;  // the answer holds for now_ms in [from_ms, until_ms)
        std::vector<Finding> findings;
        uint64_t passes = 0;
    };
    mutable PortErrorMemo pe_memo_;     // io thread, like the rest
    uint64_t pc_rows_ignored_ = 0;
    int64_t current_confirmed_ms_ = 0;      // the current fabric's snapshot arrived, or its SM's heartbeat named it
    std::shared_ptr<const LinkTable> links_;
    bool reload_ok_ = true;
    int64_t reload_ok_ms_ = 0;
};

}  // namespace ibf
