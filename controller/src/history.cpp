// HistoryStore: SQLite, WAL, one writer connection and one reader connection.
#include "ibf/history.h"

#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ibf/api.h"
#include "ibf/fabric.h"

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

}  // namespace

HistoryStore::HistoryStore(const std::string& path) : path_(path) {
    create_private(path);
    writer_ = open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    try {
        exec(writer_, path, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
        exec(writer_, path,
             "CREATE TABLE IF NOT EXISTS sweeps ("
             " id INTEGER PRIMARY KEY AUTOINCREMENT,"
             " sweep_seq INTEGER NOT NULL, taken_unix_ms INTEGER NOT NULL, published_unix_ms INTEGER NOT NULL,"
             " sm_guid TEXT NOT NULL, nodes INTEGER NOT NULL, switches INTEGER NOT NULL, cas INTEGER NOT NULL,"
             " links INTEGER NOT NULL, findings_count INTEGER NOT NULL, checked INTEGER NOT NULL,"
             " check_ms REAL NOT NULL, findings_json TEXT NOT NULL)");
        exec(writer_, path,
             "CREATE TABLE IF NOT EXISTS ha_events ("
             " id INTEGER PRIMARY KEY AUTOINCREMENT, unix_ms INTEGER NOT NULL, record_json TEXT NOT NULL)");
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

bool HistoryStore::append(const HistoryRow& r) {
    std::lock_guard lk(wmu_);
    const std::string guid = guid_hex(r.sm_guid);
    {
        Stmt last(writer_, path_, "SELECT sweep_seq, taken_unix_ms FROM sweeps WHERE sm_guid = ? ORDER BY id DESC LIMIT 1");
        sqlite3_bind_text(last.s, 1, guid.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(last.s) == SQLITE_ROW &&
            static_cast<uint64_t>(sqlite3_column_int64(last.s, 0)) == r.sweep_seq &&
            sqlite3_column_int64(last.s, 1) == r.taken_unix_ms)
            return false;
    }
    Stmt st(writer_, path_,
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
    if (sqlite3_step(st.s) != SQLITE_DONE) fail(writer_, path_, "insert");
    return true;
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
    std::lock_guard lk(wmu_);
    Stmt st(writer_, path_, "INSERT INTO ha_events (unix_ms, record_json) VALUES (?,?)");
    sqlite3_bind_int64(st.s, 1, unix_ms);
    sqlite3_bind_text(st.s, 2, record_json.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st.s) != SQLITE_DONE) fail(writer_, path_, "insert");
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

}  // namespace ibf
