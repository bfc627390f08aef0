// HistoryStore: SQLite, WAL, one writer connection and one reader connection; schema migrations,
// change lists and keyframes, finding open/close, retention.
#include "ibf/history.h"

#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ibf/iso_time.h"
#include "ibf/change_json.h"
#include "ibf/fabric.h"
#include "ibf/finding_track.h"
#include "ibf/report.h"

namespace ibf {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : "error";
        sqlite3_free(err);
        throw std::runtime_error(path + ": " + msg);
    }
}

sqlite3* open(const std::string& path, int flags) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        throw std::runtime_error(path + ": cannot open history database: " + msg);
    }
    sqlite3_busy_timeout(db, 2000);
    return db;
}

struct Stmt {
    sqlite3_stmt* s = nullptr;
    Stmt(sqlite3* db, const std::string& path, const char* sql) {
        if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) fail(db, path, "prepare");
    }
    ~Stmt() { sqlite3_finalize(s); }
};

// Creates the database file mode 0600 before SQLite does (SQLite would use 0644 less the umask);
// its -wal and -shm files take the same mode. An existing file keeps its mode.
void create_private(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
    else if (errno != EEXIST) throw std::runtime_error(path + ": cannot create history database: " + std::strerror(errno));
}

// The columns of a row but the findings, as JSON (the SELECTs below list them in this order).
nlohmann::json row_meta(sqlite3_stmt* s) {
    auto i64 = [&](int c) { return static_cast<int64_t>(sqlite3_column_int64(s, c)); };
    const unsigned char* guid = sqlite3_column_text(s, 4);
    nlohmann::json row;
    row["id"] = i64(0);
    row["sweep_seq"] = i64(1);
    row["time"] = iso_time(i64(2));
    row["unix_ms"] = i64(2);
    row["published"] = iso_time(i64(3));
    row["sm_guid"] = guid ? std::string(reinterpret_cast<const char*>(guid), sqlite3_column_bytes(s, 4)) : "";
    row["nodes"] = i64(5);
    row["switches"] = i64(6);
    row["cas"] = i64(7);
    row["links"] = i64(8);
    row["findings_count"] = i64(9);
    row["checked"] = i64(10) != 0;
    row["check_ms"] = sqlite3_column_double(s, 11);
    return row;
}

std::string column_text(sqlite3_stmt* s, int c) {
    const unsigned char* t = sqlite3_column_text(s, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, c)))
             : std::string();
}

// A write transaction: BEGIN IMMEDIATE now, ROLLBACK unless commit() ran.
struct Tx {
    sqlite3* db;
    const std::string& path;
    bool done = false;
    Tx(sqlite3* d, const std::string& p) : db(d), path(p) { exec(db, path, "BEGIN IMMEDIATE"); }
    void commit() {
        exec(db, path, "COMMIT");
        done = true;
    }
    ~Tx() {
        if (!done) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    }
};

// The first column of the first row as an integer; nullopt when there is no row or it is NULL.
std::optional<int64_t> scalar(sqlite3* db, const std::string& path, const char* sql, std::optional<int64_t> arg = {}) {
    Stmt st(db, path, sql);
    if (arg) sqlite3_bind_int64(st.s, 1, *arg);
    const int rc = sqlite3_step(st.s);
    if (rc == SQLITE_ROW && sqlite3_column_type(st.s, 0) != SQLITE_NULL) return sqlite3_column_int64(st.s, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail(db, path, "select");
    return std::nullopt;
}

// Schema 1 (no user_version): the tables of ibfabricd before schema versions.
constexpr const char* kSchema1 =
    "CREATE TABLE IF NOT EXISTS sweeps ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " sweep_seq INTEGER NOT NULL, taken_unix_ms INTEGER NOT NULL, published_unix_ms INTEGER NOT NULL,"
    " sm_guid TEXT NOT NULL, nodes INTEGER NOT NULL, switches INTEGER NOT NULL, cas INTEGER NOT NULL,"
    " links INTEGER NOT NULL, findings_count INTEGER NOT NULL, checked INTEGER NOT NULL,"
    " check_ms REAL NOT NULL, findings_json TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS ha_events ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, unix_ms INTEGER NOT NULL, record_json TEXT NOT NULL);";
// 1 -> 2: change lists, keyframes, findings opened/closed.
constexpr const char* kMigrate1to2 =
    "CREATE TABLE sweep_changes (sweep_id INTEGER PRIMARY KEY, changes_count INTEGER NOT NULL,"
    " summary TEXT NOT NULL, by_kind TEXT NOT NULL, changes_json TEXT NOT NULL,"
    " findings_opened INTEGER NOT NULL, findings_closed INTEGER NOT NULL);"
    "CREATE TABLE fabric_states (sweep_id INTEGER PRIMARY KEY, state_json TEXT NOT NULL);"
    "CREATE TABLE findings (id INTEGER PRIMARY KEY AUTOINCREMENT, identity TEXT NOT NULL, kind TEXT NOT NULL,"
    " severity TEXT NOT NULL, finding_json TEXT NOT NULL, opened_sweep INTEGER NOT NULL,"
    " opened_unix_ms INTEGER NOT NULL, closed_sweep INTEGER, closed_unix_ms INTEGER);"
    "CREATE INDEX findings_open ON findings(identity) WHERE closed_sweep IS NULL;"
    "CREATE INDEX findings_opened ON findings(opened_sweep);"
    "CREATE INDEX findings_closed ON findings(closed_sweep);"
    "CREATE INDEX sweeps_taken ON sweeps(taken_unix_ms);"
    "CREATE INDEX ha_events_time ON ha_events(unix_ms);";

std::vector<std::string> column_strings(sqlite3* db, const std::string& path, const char* sql, int64_t arg) {
    Stmt st(db, path, sql);
    sqlite3_bind_int64(st.s, 1, arg);
    std::vector<std::string> out;
    while (sqlite3_step(st.s) == SQLITE_ROW) out.push_back(column_text(st.s, 0));
    return out;
}

SweepRow sweep_row(sqlite3_stmt* s) {
    return {sqlite3_column_int64(s, 0), static_cast<uint64_t>(sqlite3_column_int64(s, 1)), sqlite3_column_int64(s, 2),
            column_text(s, 3)};
}

}  // namespace

HistoryStore::HistoryStore(const std::string& path, HistoryRetention retention) : path_(path), retention_(retention) {
    create_private(path);
    writer_ = open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    try {
        exec(writer_, path, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
        migrate();
        load_writer_state();
        reader_ = open(path, SQLITE_OPEN_READONLY);
    } catch (...) {
        sqlite3_close(writer_);
        sqlite3_close(reader_);
        throw;
    }
}

HistoryStore::~HistoryStore() {
    sqlite3_close(reader_);
    sqlite3_close(writer_);
}

namespace {

// Inserts the sweeps row unless it repeats its SM's newest; false then.
bool insert_sweep(sqlite3* db, const std::string& path, const HistoryRow& r) {
    const std::string guid = guid_hex(r.sm_guid);
    {
        Stmt last(db, path, "SELECT sweep_seq, taken_unix_ms FROM sweeps WHERE sm_guid = ? ORDER BY id DESC LIMIT 1");
        sqlite3_bind_text(last.s, 1, guid.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(last.s) == SQLITE_ROW &&
            static_cast<uint64_t>(sqlite3_column_int64(last.s, 0)) == r.sweep_seq &&
            sqlite3_column_int64(last.s, 1) == r.taken_unix_ms)
            return false;
    }
    Stmt st(db, path,
            "INSERT INTO sweeps (sweep_seq, taken_unix_ms, published_unix_ms, sm_guid, nodes, switches, cas, links,"
            " findings_count, checked, check_ms, findings_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    sqlite3_bind_int64(st.s, 1, static_cast<sqlite3_int64>(r.sweep_seq));
    sqlite3_bind_int64(st.s, 2, r.taken_unix_ms);
    sqlite3_bind_int64(st.s, 3, r.published_unix_ms);
    sqlite3_bind_text(st.s, 4, guid.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st.s, 5, static_cast<sqlite3_int64>(r.nodes));
    sqlite3_bind_int64(st.s, 6, static_cast<sqlite3_int64>(r.switches));
    sqlite3_bind_int64(st.s, 7, static_cast<sqlite3_int64>(r.cas));
    sqlite3_bind_int64(st.s, 8, static_cast<sqlite3_int64>(r.links));
    sqlite3_bind_int64(st.s, 9, static_cast<sqlite3_int64>(r.findings));
    sqlite3_bind_int(st.s, 10, r.checked ? 1 : 0);
    sqlite3_bind_double(st.s, 11, r.check_ms);
    sqlite3_bind_text(st.s, 12, r.findings_json.c_str(), static_cast<int>(r.findings_json.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(st.s) != SQLITE_DONE) fail(db, path, "insert");
    return true;
}

}  // namespace

template <class F>
auto HistoryStore::noted_write(F&& write) {
    std::lock_guard lk(wmu_);
    try {
        auto out = write();
        std::lock_guard sl(smu_);
        status_.writable = true;
        return out;
    } catch (const std::exception& e) {
        std::lock_guard sl(smu_);
        status_.writable = false;
        status_.last_error = e.what();
        ++status_.failed_writes;
        throw;
    }
}

HistoryWriteStatus HistoryStore::write_status() const {
    std::lock_guard sl(smu_);
    return status_;
}

bool HistoryStore::append(const HistoryRow& r) {
    return noted_write([&] {
        Tx tx(writer_, path_);
        if (!insert_sweep(writer_, path_, r)) return false;
        tx.commit();
        return true;
    });
}

nlohmann::json HistoryStore::recent(int limit) const {
    std::lock_guard lk(rmu_);
    Stmt st(reader_, path_,
            "SELECT id, sweep_seq, taken_unix_ms, published_unix_ms, sm_guid, nodes, switches, cas, links,"
            " findings_count, checked, check_ms, findings_json FROM sweeps ORDER BY id DESC LIMIT ?");
    sqlite3_bind_int(st.s, 1, limit);
    nlohmann::json out = nlohmann::json::array();
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        nlohmann::json row = row_meta(st.s);
        row["findings"] = nlohmann::json::parse(column_text(st.s, 12), nullptr, /*allow_exceptions=*/false);
        out.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) fail(reader_, path_, "select");
    return out;
}

HistoryPage HistoryStore::page(int limit, int64_t before, size_t max_bytes) const {
    std::lock_guard lk(rmu_);
    Stmt st(reader_, path_,
            "SELECT id, sweep_seq, taken_unix_ms, published_unix_ms, sm_guid, nodes, switches, cas, links,"
            " findings_count, checked, check_ms, length(findings_json) FROM sweeps WHERE id < ?"
            " ORDER BY id DESC LIMIT ?");
    Stmt body(reader_, path_, "SELECT findings_json FROM sweeps WHERE id = ?");
    sqlite3_bind_int64(st.s, 1, before > 0 ? before : std::numeric_limits<sqlite3_int64>::max());
    sqlite3_bind_int(st.s, 2, limit + 1);  // one more: are there older rows?
    HistoryPage p;
    p.rows = "[";
    int rc;
    int64_t last_id = 0;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        const int64_t id = sqlite3_column_int64(st.s, 0);
        if (static_cast<int>(p.count) == limit) {
            p.next_before = last_id;
            break;
        }
        std::string meta = row_meta(st.s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        meta.pop_back();  // '}': the findings follow
        const size_t findings_len = static_cast<size_t>(sqlite3_column_int64(st.s, 12));
        const size_t need = meta.size() + findings_len + 32;
        if (p.rows.size() + need > max_bytes && p.count > 0) {
            p.next_before = last_id;  // the rest on the next page
            break;
        }
        std::string findings;
        if (p.rows.size() + need <= max_bytes) {
            sqlite3_reset(body.s);
            sqlite3_bind_int64(body.s, 1, id);
            if (sqlite3_step(body.s) == SQLITE_ROW) findings = column_text(body.s, 0);
            // Stored by append() from findings_to_json(); a damaged row must not break the answer.
            if (!nlohmann::json::accept(findings)) findings = "null";
        }
        p.rows += p.count ? ",\n" : "\n";
        p.rows += meta;
        p.rows += findings.empty() ? ",\"findings\":null,\"findings_omitted\":true}" : ",\"findings\":" + findings + "}";
        ++p.count;
        last_id = id;
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail(reader_, path_, "select");
    p.rows += p.count ? "\n]" : "]";
    return p;
}

size_t HistoryStore::count() const {
    std::lock_guard lk(rmu_);
    Stmt st(reader_, path_, "SELECT COUNT(*) FROM sweeps");
    if (sqlite3_step(st.s) != SQLITE_ROW) fail(reader_, path_, "count");
    return static_cast<size_t>(sqlite3_column_int64(st.s, 0));
}

void HistoryStore::append_ha_event(int64_t unix_ms, const std::string& record_json) {
    noted_write([&] {
        Stmt st(writer_, path_, "INSERT INTO ha_events (unix_ms, record_json) VALUES (?,?)");
        sqlite3_bind_int64(st.s, 1, unix_ms);
        sqlite3_bind_text(st.s, 2, record_json.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st.s) != SQLITE_DONE) fail(writer_, path_, "insert");
        return true;
    });
}

nlohmann::json HistoryStore::recent_ha_events(int limit) const {
    std::lock_guard lk(rmu_);
    Stmt st(reader_, path_, "SELECT record_json FROM ha_events ORDER BY id DESC LIMIT ?");
    sqlite3_bind_int(st.s, 1, limit);
    nlohmann::json out = nlohmann::json::array();
    while (sqlite3_step(st.s) == SQLITE_ROW) {
        nlohmann::json j = nlohmann::json::parse(column_text(st.s, 0), nullptr, false);
        if (!j.is_discarded()) out.push_back(std::move(j));
    }
    return out;
}

int HistoryStore::schema_version() const {
    std::lock_guard lk(wmu_);
    return static_cast<int>(scalar(writer_, path_, "PRAGMA user_version").value_or(0));
}

void HistoryStore::migrate() {
    const int64_t v = scalar(writer_, path_, "PRAGMA user_version").value_or(0);
    if (v > kSchemaVersion)
        throw std::runtime_error(path_ + ": history schema " + std::to_string(v) + " was written by a newer ibfabricd (this one knows " +
                                 std::to_string(kSchemaVersion) + "); use that version or move the file away");
    if (v == kSchemaVersion) return;
    Tx tx(writer_, path_);
    if (v == 0) exec(writer_, path_, kSchema1);  // new, or made before schema versions
    exec(writer_, path_, kMigrate1to2);
    exec(writer_, path_, "PRAGMA user_version = 2");
    tx.commit();
}

void HistoryStore::load_writer_state() {
    if (auto last = scalar(writer_, path_, "SELECT MAX(sweep_id) FROM sweep_changes")) last_state_ = state_at_locked(writer_, *last);
    Stmt st(writer_, path_, "SELECT identity FROM findings WHERE closed_sweep IS NULL");
    while (sqlite3_step(st.s) == SQLITE_ROW) open_findings_.insert(column_text(st.s, 0));
    const int64_t key = scalar(writer_, path_, "SELECT MAX(sweep_id) FROM fabric_states").value_or(0);
    changed_since_keyframe_ = static_cast<int>(
        scalar(writer_, path_, "SELECT COUNT(*) FROM sweep_changes WHERE changes_count > 0 AND sweep_id > ?", key).value_or(0));
}

int64_t HistoryStore::record(const HistoryRow& r, const FabricState& state, const std::vector<Finding>& findings) {
    return noted_write([&] { return record_locked(r, state, findings); });
}

int64_t HistoryStore::record_locked(const HistoryRow& r, const FabricState& state, const std::vector<Finding>& findings) {
    Tx tx(writer_, path_);
    if (!insert_sweep(writer_, path_, r)) return 0;
    const int64_t id = sqlite3_last_insert_rowid(writer_);
    const std::vector<Change> cs = last_state_ ? diff_states(*last_state_, state) : std::vector<Change>{};
    const bool keyframe = !last_state_ || (!cs.empty() && changed_since_keyframe_ + 1 >= kKeyframeEvery);
    if (keyframe) {
        Stmt k(writer_, path_, "INSERT INTO fabric_states (sweep_id, state_json) VALUES (?,?)");
        const std::string text = state_to_json(state).dump();
        sqlite3_bind_int64(k.s, 1, id);
        sqlite3_bind_text(k.s, 2, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        if (sqlite3_step(k.s) != SQLITE_DONE) fail(writer_, path_, "insert keyframe");
    }
    const FindingTransitions t = finding_transitions(open_findings_, findings);
    {
        Stmt o(writer_, path_,
               "INSERT INTO findings (identity, kind, severity, finding_json, opened_sweep, opened_unix_ms) VALUES (?,?,?,?,?,?)");
        for (const Finding& f : t.opened) {
            const std::string ident = finding_identity(f), text = finding_to_json(f).dump();
            sqlite3_reset(o.s);
            sqlite3_bind_text(o.s, 1, ident.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(o.s, 2, std::string(to_string(f.kind)).c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(o.s, 3, std::string(to_string(f.severity)).c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(o.s, 4, text.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(o.s, 5, id);
            sqlite3_bind_int64(o.s, 6, r.taken_unix_ms);
            if (sqlite3_step(o.s) != SQLITE_DONE) fail(writer_, path_, "insert finding");
        }
        Stmt c(writer_, path_,
               "UPDATE findings SET closed_sweep = ?, closed_unix_ms = ? WHERE identity = ? AND closed_sweep IS NULL");
        for (const std::string& ident : t.closed) {
            sqlite3_reset(c.s);
            sqlite3_bind_int64(c.s, 1, id);
            sqlite3_bind_int64(c.s, 2, r.taken_unix_ms);
            sqlite3_bind_text(c.s, 3, ident.c_str(), -1, SQLITE_TRANSIENT);
            if (sqlite3_step(c.s) != SQLITE_DONE) fail(writer_, path_, "close finding");
        }
    }
    const std::string summary = last_state_ ? summarize(cs)
                                            : "first recorded fabric: " + std::to_string(state.nodes.size()) + " nodes, " +
                                                  std::to_string(state.links.size()) + " links";
    const std::string changes = changes_to_json(cs).dump(), by_kind = nlohmann::json(count_by_kind(cs)).dump();
    Stmt st(writer_, path_,
            "INSERT INTO sweep_changes (sweep_id, changes_count, summary, by_kind, changes_json, findings_opened,"
            " findings_closed) VALUES (?,?,?,?,?,?,?)");
    sqlite3_bind_int64(st.s, 1, id);
    sqlite3_bind_int64(st.s, 2, static_cast<sqlite3_int64>(cs.size()));
    sqlite3_bind_text(st.s, 3, summary.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 4, by_kind.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 5, changes.c_str(), static_cast<int>(changes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(st.s, 6, static_cast<sqlite3_int64>(t.opened.size()));
    sqlite3_bind_int64(st.s, 7, static_cast<sqlite3_int64>(t.closed.size()));
    if (sqlite3_step(st.s) != SQLITE_DONE) fail(writer_, path_, "insert changes");
    tx.commit();
    // Committed: now the writer's memory follows.
    last_state_ = state;
    changed_since_keyframe_ = keyframe ? 0 : changed_since_keyframe_ + (cs.empty() ? 0 : 1);
    for (const Finding& f : t.opened) open_findings_.insert(finding_identity(f));
    for (const std::string& ident : t.closed) open_findings_.erase(ident);
    if ((retention_.retention_days || retention_.max_sweeps) && ++since_prune_ >= kPruneEvery) {
        since_prune_ = 0;
        prune_locked(r.published_unix_ms);
    }
    return id;
}

std::optional<FabricState> HistoryStore::state_at_locked(sqlite3* db, int64_t id) const {
    if (!scalar(db, path_, "SELECT 1 FROM sweep_changes WHERE sweep_id = ?", id)) return std::nullopt;
    Stmt k(db, path_, "SELECT sweep_id, state_json FROM fabric_states WHERE sweep_id <= ? ORDER BY sweep_id DESC LIMIT 1");
    sqlite3_bind_int64(k.s, 1, id);
    if (sqlite3_step(k.s) != SQLITE_ROW) return std::nullopt;
    const int64_t key = sqlite3_column_int64(k.s, 0);
    FabricState s;
    try {
        s = state_from_json(nlohmann::json::parse(column_text(k.s, 1)));
        Stmt c(db, path_, "SELECT changes_json FROM sweep_changes WHERE sweep_id > ? AND sweep_id <= ? ORDER BY sweep_id");
        sqlite3_bind_int64(c.s, 1, key);
        sqlite3_bind_int64(c.s, 2, id);
        while (sqlite3_step(c.s) == SQLITE_ROW) s = apply_changes(std::move(s), changes_from_json(nlohmann::json::parse(column_text(c.s, 0))));
    } catch (const std::exception& e) {
        throw std::runtime_error(path_ + ": the fabric of row " + std::to_string(id) + " does not read back: " + e.what());
    }
    return s;
}

std::optional<FabricState> HistoryStore::state_at(int64_t id) const {
    std::lock_guard lk(rmu_);
    return state_at_locked(reader_, id);
}

void HistoryStore::prune(int64_t now_ms) {
    std::lock_guard lk(wmu_);
    prune_locked(now_ms);
}

void HistoryStore::prune_locked(int64_t now_ms) {
    const auto newest = scalar(writer_, path_, "SELECT MAX(id) FROM sweeps");
    if (!newest) return;
    int64_t keep_from = 0;
    if (retention_.max_sweeps)
        keep_from = scalar(writer_, path_, "SELECT id FROM sweeps ORDER BY id DESC LIMIT 1 OFFSET ?",
                           static_cast<int64_t>(retention_.max_sweeps) - 1).value_or(0);
    const int64_t cutoff_ms = now_ms - int64_t{retention_.retention_days} * 86400000;
    if (retention_.retention_days && now_ms > 0)
        keep_from = std::max(keep_from, scalar(writer_, path_, "SELECT MIN(id) FROM sweeps WHERE taken_unix_ms >= ?", cutoff_ms)
                                            .value_or(*newest));  // none that recent: keep the newest
    if (keep_from <= scalar(writer_, path_, "SELECT MIN(id) FROM sweeps").value_or(0)) return;
    Tx tx(writer_, path_);
    // The oldest kept sweep must stay diffable: give it a keyframe when it has none.
    if (!scalar(writer_, path_, "SELECT 1 FROM fabric_states WHERE sweep_id = ?", keep_from))
        if (auto st = state_at_locked(writer_, keep_from)) {
            Stmt k(writer_, path_, "INSERT INTO fabric_states (sweep_id, state_json) VALUES (?,?)");
            const std::string text = state_to_json(*st).dump();
            sqlite3_bind_int64(k.s, 1, keep_from);
            sqlite3_bind_text(k.s, 2, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
            if (sqlite3_step(k.s) != SQLITE_DONE) fail(writer_, path_, "insert keyframe");
        }
    for (const char* sql : {"DELETE FROM sweeps WHERE id < ?", "DELETE FROM sweep_changes WHERE sweep_id < ?",
                            "DELETE FROM fabric_states WHERE sweep_id < ?",
                            "DELETE FROM findings WHERE closed_sweep IS NOT NULL AND closed_sweep < ?"}) {
        Stmt d(writer_, path_, sql);
        sqlite3_bind_int64(d.s, 1, keep_from);
        if (sqlite3_step(d.s) != SQLITE_DONE) fail(writer_, path_, "prune");
    }
    if (retention_.retention_days && now_ms > 0) {
        Stmt d(writer_, path_, "DELETE FROM ha_events WHERE unix_ms < ?");
        sqlite3_bind_int64(d.s, 1, cutoff_ms);
        if (sqlite3_step(d.s) != SQLITE_DONE) fail(writer_, path_, "prune");
    }
    tx.commit();
}

namespace {
constexpr const char* kRowSelect = "SELECT id, sweep_seq, taken_unix_ms, sm_guid FROM sweeps ";

std::optional<SweepRow> one_row(sqlite3* db, const std::string& path, const std::string& sql, std::optional<int64_t> arg) {
    Stmt st(db, path, (kRowSelect + sql).c_str());
    if (arg) sqlite3_bind_int64(st.s, 1, *arg);
    if (sqlite3_step(st.s) == SQLITE_ROW) return sweep_row(st.s);
    return std::nullopt;
}
}  // namespace

std::optional<SweepRow> HistoryStore::find_row(int64_t id) const {
    std::lock_guard lk(rmu_);
    return one_row(reader_, path_, "WHERE id = ?", id);
}

std::optional<SweepRow> HistoryStore::row_at_time(int64_t unix_ms) const {
    std::lock_guard lk(rmu_);
    return one_row(reader_, path_, "WHERE taken_unix_ms <= ? ORDER BY taken_unix_ms DESC, id DESC LIMIT 1", unix_ms);
}

std::optional<SweepRow> HistoryStore::latest_row() const {
    std::lock_guard lk(rmu_);
    return one_row(reader_, path_, "ORDER BY id DESC LIMIT 1", std::nullopt);
}

std::optional<SweepRow> HistoryStore::first_row() const {
    std::lock_guard lk(rmu_);
    return one_row(reader_, path_, "ORDER BY id ASC LIMIT 1", std::nullopt);
}

ChangesPage HistoryStore::changes(int limit, int64_t before, int64_t since_ms, bool detail) const {
    std::lock_guard lk(rmu_);
    Stmt st(reader_, path_,
            "SELECT s.id, s.sweep_seq, s.taken_unix_ms, s.sm_guid, s.nodes, s.links, s.findings_count,"
            " c.sweep_id IS NOT NULL, c.changes_count, c.summary, c.by_kind, c.findings_opened, c.findings_closed,"
            " c.changes_json FROM sweeps s LEFT JOIN sweep_changes c ON c.sweep_id = s.id"
            " WHERE s.id < ? AND s.taken_unix_ms >= ? ORDER BY s.id DESC LIMIT ?");
    sqlite3_bind_int64(st.s, 1, before > 0 ? before : std::numeric_limits<sqlite3_int64>::max());
    sqlite3_bind_int64(st.s, 2, since_ms);
    sqlite3_bind_int(st.s, 3, limit + 1);
    ChangesPage p;
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        const int64_t id = sqlite3_column_int64(st.s, 0);
        if (static_cast<int>(p.rows.size()) == limit) {
            p.next_before = p.rows.back()["id"].get<int64_t>();
            break;
        }
        auto i64 = [&](int c) { return static_cast<int64_t>(sqlite3_column_int64(st.s, c)); };
        const bool recorded = i64(7) != 0;
        nlohmann::json row{{"id", id}, {"sweep_seq", i64(1)}, {"time", iso_time(i64(2))}, {"unix_ms", i64(2)},
                           {"sm_guid", column_text(st.s, 3)}, {"nodes", i64(4)}, {"links", i64(5)},
                           {"findings_count", i64(6)}, {"recorded", recorded}};
        row["changes_count"] = recorded ? nlohmann::json(i64(8)) : nlohmann::json(nullptr);
        row["summary"] = recorded ? column_text(st.s, 9) : "not recorded (before change tracking)";
        row["by_kind"] = recorded ? nlohmann::json::parse(column_text(st.s, 10), nullptr, false) : nlohmann::json::object();
        row["findings_opened"] = recorded ? nlohmann::json(i64(11)) : nlohmann::json(nullptr);
        row["findings_closed"] = recorded ? nlohmann::json(i64(12)) : nlohmann::json(nullptr);
        if (detail) {
            row["changes"] = recorded ? nlohmann::json::parse(column_text(st.s, 13), nullptr, false) : nlohmann::json::array();
            row["opened"] = column_strings(reader_, path_, "SELECT identity FROM findings WHERE opened_sweep = ? ORDER BY id", id);
            row["closed"] = column_strings(reader_, path_, "SELECT identity FROM findings WHERE closed_sweep = ? ORDER BY id", id);
        }
        p.rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail(reader_, path_, "select");
    return p;
}

}  // namespace ibf
