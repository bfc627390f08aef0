// The sweep history: one SQLite row per ingested master sweep (sequence, time, counts, findings
// JSON), written as soon as its findings are published so a crash loses nothing already checked.
//
//   HistoryStore h("/var/lib/ibfabric/history.db");   // creates the file and table if needed
//   h.append(row);                                     // from the check worker thread
//   nlohmann::json rows = h.recent(20);                // from the io thread, newest first
//   HistoryPage p = h.page(20, 0, 16 << 20);           // the same as bounded JSON text, paged
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

#include <nlohmann/json.hpp>

struct sqlite3;

namespace ibf {

struct HistoryRow {
    uint64_t sweep_seq = 0;
    int64_t taken_unix_ms = 0;      // the snapshot's time
    int64_t published_unix_ms = 0;  // when its findings were published
    uint64_t sm_guid = 0;           // the SM that produced it
    size_t nodes = 0, switches = 0, cas = 0, links = 0, findings = 0;
    bool checked = false;           // false: no topology was configured
    double check_ms = 0;
    std::string findings_json;      // ibf::findings_to_json(...).dump()
};

// One page of GET /api/v1/history (docs/api.md).
struct HistoryPage {
    std::string rows;          // a JSON array, newest first, one row per line
    size_t count = 0;          // rows in it
    int64_t next_before = 0;   // older rows remain: pass as before= to continue; 0 = none
};

class HistoryStore {
public:
    explicit HistoryStore(const std::string& path);
    ~HistoryStore();
    HistoryStore(const HistoryStore&) = delete;
    HistoryStore& operator=(const HistoryStore&) = delete;

    // False when the row repeats the SM's newest (same sweep_seq and taken_unix_ms): not stored.
    bool append(const HistoryRow& r);
    // [{"id", "sweep_seq", "time", "unix_ms", "published", "sm_guid", "nodes", "switches", "cas",
    //   "links", "findings_count", "checked", "check_ms", "findings": {...}}], newest first.
    nlohmann::json recent(int limit) const;
    // At most `limit` rows with id < `before` (0: from the newest), stopping before the text
    // passes `max_bytes`; a first row larger than that alone comes with "findings": null and
    // "findings_omitted": true, so paging always moves on.
    HistoryPage page(int limit, int64_t before, size_t max_bytes) const;
    size_t count() const;
    const std::string& path() const { return path_; }

    // SM master changes and failover attempts (docs/ha.md), one JSON object each (the shape of
    // GET /api/v1/ha/history's records), so they outlive a daemon restart. Newest first.
    void append_ha_event(int64_t unix_ms, const std::string& record_json);
    nlohmann::json recent_ha_events(int limit) const;

private:
    std::string path_;
    sqlite3* writer_ = nullptr;
    sqlite3* reader_ = nullptr;
    mutable std::mutex wmu_, rmu_;
};

}  // namespace ibf
