// The sweep history: one SQLite row per ingested master sweep (sequence, time, counts, findings
// JSON), what changed versus the previous sweep (ibf/fabric_diff.h), and when each finding
// opened and closed; written as soon as the sweep's findings are published so a crash loses
// nothing already checked.
//
//   HistoryStore h("/var/lib/ibfabric/history.db", {.retention_days = 30});  // creates or migrates
//   h.record(row, fabric_state(...), findings);        // from the check worker thread: one transaction
//   nlohmann::json rows = h.recent(20);                // from the io thread, newest first
//   HistoryPage p = h.page(20, 0, 16 << 20);           // the same as bounded JSON text, paged
//   ChangesPage c = h.changes(20, 0, since_ms, true);  // sweeps with their change lists
//   std::optional<FabricState> s = h.state_at(41);     // the fabric as row 41 recorded it
//
// Schema (docs/api.md, "The history database"): PRAGMA user_version 2. A database without
// user_version (the schema before it: sweeps, ha_events) is migrated in place at open, in one
// transaction; a newer one is refused. Each sweep's changes are a row of sweep_changes; the full
// fabric state is stored as a keyframe in fabric_states for the first recorded sweep and then
// every kKeyframeEvery sweeps that changed something, so state_at() applies at most that many
// change lists. Retention (max_sweeps, retention_days) deletes the oldest sweeps, their changes,
// keyframes no sweep needs, closed findings and failover events, every kPruneEvery records and
// at open; the oldest kept sweep gets a keyframe first, so every kept sweep can be diffed.
//
// A resent snapshot (the plugin resends its latest one after the daemon restarts) is not a new
// row: append() skips a row whose SM, sweep sequence and snapshot time equal that SM's newest.
// The database file is created mode 0600 (the findings name every host of the fabric).
//
// Thread-safe: the writer and readers use separate connections (WAL mode), each behind its own
// mutex, so a reader never waits for a writer's fsync. Errors: std::runtime_error naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/fabric_diff.h"
#include "ibf/history_row.h"
#include "ibf/finding.h"

struct sqlite3;

namespace ibf {

// One page of GET /api/v1/history (docs/api.md).
struct HistoryPage {
    std::string rows;          // a JSON array, newest first, one row per line
    size_t count = 0;          // rows in it
    int64_t next_before = 0;   // older rows remain: pass as before= to continue; 0 = none
};

// One page of GET /api/v1/history/changes (docs/api.md): rows newest first.
struct ChangesPage {
    nlohmann::json rows = nlohmann::json::array();
    int64_t next_before = 0;  // 0 = no older row
};

// `history:` bounds (docs/daemon.md); 0 = unbounded.
struct HistoryRetention {
    uint32_t retention_days = 0;
    uint64_t max_sweeps = 0;
};

// A history row id resolved from a sweep reference (ibf/sweep_ref.h).
struct SweepRow {
    int64_t id = 0;
    uint64_t sweep_seq = 0;
    int64_t unix_ms = 0;
    std::string sm_guid;
};

// Whether the history database takes writes: a full disk (SQLITE_FULL) or any other write error
// makes writable false with that error until a write succeeds again (GET /api/v1/history's
// "writable", the gauge ibfabric_history_writable).
struct HistoryWriteStatus {
    bool writable = true;
    std::string last_error;      // the latest write error ("" = none since the start)
    uint64_t failed_writes = 0;  // since the start
};

class HistoryStore {
public:
    static constexpr int kSchemaVersion = 2;
    static constexpr int kKeyframeEvery = 256;  // changed sweeps between two full fabric states
    static constexpr int kPruneEvery = 64;     // records between two retention passes

    explicit HistoryStore(const std::string& path, HistoryRetention retention = {});
    ~HistoryStore();
    HistoryStore(const HistoryStore&) = delete;
    HistoryStore& operator=(const HistoryStore&) = delete;

    // False when the row repeats the SM's newest (same sweep_seq and taken_unix_ms): not stored.
    bool append(const HistoryRow& r);
    // append() plus, in the same transaction, the change list versus the previous recorded sweep
    // (none for the first), a keyframe when due, and the findings that opened and closed (by
    // finding_identity). Returns the row id, 0 when the row repeats the SM's newest.
    int64_t record(const HistoryRow& r, const FabricState& state, const std::vector<Finding>& findings);
    // Sweeps newest first with id < before (0: from the newest) and taken at or after since_ms:
    // {"id", "sweep_seq", "time", "unix_ms", "sm_guid", "nodes", "links", "findings_count",
    //  "recorded": bool (false: before change tracking), "changes_count", "summary", "by_kind",
    //  "findings_opened", "findings_closed"} and, with detail, "changes": [...] and
    // "opened": [identity...], "closed": [identity...].
    ChangesPage changes(int limit, int64_t before, int64_t since_ms, bool detail) const;
    // The newest row taken at or before unix_ms / with that id / the newest; nullopt when none.
    std::optional<SweepRow> find_row(int64_t id) const;
    std::optional<SweepRow> row_at_time(int64_t unix_ms) const;
    std::optional<SweepRow> latest_row() const;
    std::optional<SweepRow> first_row() const;  // the oldest kept row; nullopt when none
    // The fabric as row `id` recorded it; nullopt when that row has none (recorded before schema 2,
    // or without change tracking).
    std::optional<FabricState> state_at(int64_t id) const;
    // Applies the retention bounds now (record() does every kPruneEvery rows); `now_ms` for days.
    void prune(int64_t now_ms);
    int schema_version() const;
    // [{"id", "sweep_seq", "time", "unix_ms", "published", "sm_guid", "nodes", "switches", "cas",
    //   "links", "findings_count", "checked", "check_ms", "findings": {...}}], newest first.
    nlohmann::json recent(int limit) const;
    // At most `limit` rows with id < `before` (0: from the newest), stopping before the text
    // passes `max_bytes`; a first row larger than that alone comes with "findings": null and
    // "findings_omitted": true, so paging always moves on.
    HistoryPage page(int limit, int64_t before, size_t max_bytes) const;
    size_t count() const;
    const std::string& path() const { return path_; }
    // Any thread: the outcome of the latest record(), append() or append_ha_event().
    HistoryWriteStatus write_status() const;

    // SM master changes and failover attempts (docs/ha.md), one JSON object each (the shape of
    // GET /api/v1/ha/history's records), so they outlive a daemon restart. Newest first.
    void append_ha_event(int64_t unix_ms, const std::string& record_json);
    nlohmann::json recent_ha_events(int limit) const;

private:
    void migrate();
    void load_writer_state();
    std::optional<FabricState> state_at_locked(sqlite3* db, int64_t id) const;
    void prune_locked(int64_t now_ms);
    int64_t record_locked(const HistoryRow& r, const FabricState& state, const std::vector<Finding>& findings);
    // Runs a write (under wmu_), noting its success or its error in status_ (the error rethrown).
    template <class F>
    auto noted_write(F&& write);

    std::string path_;
    HistoryRetention retention_;
    // Writer state (under wmu_): the last recorded fabric, the open findings, counters.
    std::optional<FabricState> last_state_;
    std::set<std::string> open_findings_;
    int changed_since_keyframe_ = 0;
    int since_prune_ = 0;
    sqlite3* writer_ = nullptr;
    sqlite3* reader_ = nullptr;
    HistoryWriteStatus status_;  // under smu_
    mutable std::mutex wmu_, rmu_, smu_;
};

}  // namespace ibf
