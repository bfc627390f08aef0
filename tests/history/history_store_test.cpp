// HistoryStore (history/store/src/history.cpp): change lists and keyframes, findings opened and
// closed, retention, the migration of a database made before schema versions (a fixture written
// by main at df7806e, tests/data/history/), and a writer killed with SIGKILL mid-stream.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "ibf/daemon_fixture.h"
#include "ibf/change_json.h"
#include "ibf/daemon_config.h"
#include "ibf/error.h"
#include "ibf/history.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

using nlohmann::json;
using test::TempDir;

HistoryRow row(uint64_t seq, size_t findings = 0) {
    HistoryRow r;
    r.sweep_seq = seq;
    r.taken_unix_ms = 1796090000000 + static_cast<int64_t>(seq) * 10000;
    r.published_unix_ms = r.taken_unix_ms + 20;
    r.sm_guid = 0x100;
    r.nodes = 16;
    r.findings = findings;
    r.checked = true;
    r.findings_json = R"({"summary":{},"findings":[]})";
    return r;
}

FabricState state_of(const Fabric& f) { return fabric_state(f, SmInfo{.port_guid = 0x100, .lid = 1, .state = SmState::Master}, {}); }

Finding miswired(const char* a, int pa) {
    return Finding{.kind = FindingKind::miswired, .a = {a, 0, pa}, .b = {"spine0001", 0, 3}, .message = "m"};
}

// Issue 19 item 6: a write that fails (a full disk; here another connection holds the write lock)
// is noted, not only thrown, and the next write that succeeds clears it.
TEST(HistoryStore, AFailedWriteIsNotedUntilAWriteSucceeds) {
    TempDir dir;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8});
    HistoryStore h(dir.file("h.db"));
    EXPECT_TRUE(h.write_status().writable);
    ASSERT_GT(h.record(row(1), state_of(f), {}), 0);
    sqlite3* blocker = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("h.db").c_str(), &blocker), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(blocker, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_THROW(h.record(row(2), state_of(f), {}), std::runtime_error);
    HistoryWriteStatus w = h.write_status();
    EXPECT_FALSE(w.writable);
    EXPECT_EQ(w.failed_writes, 1u);
    EXPECT_NE(w.last_error.find(dir.file("h.db") + ": "), std::string::npos) << w.last_error;
    EXPECT_NE(w.last_error.find("locked"), std::string::npos) << w.last_error;
    sqlite3_exec(blocker, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(blocker);
    ASSERT_GT(h.record(row(2), state_of(f), {}), 0);
    w = h.write_status();
    EXPECT_TRUE(w.writable);
    EXPECT_EQ(w.failed_writes, 1u);
    EXPECT_EQ(h.count(), 2u);
}

TEST(HistoryStore, RecordsChangesVersusThePreviousSweepAndStatesReadBack) {
    TempDir dir;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8});
    Fabric g = f;
    remove_cable(g, synth_node(g, "leaf0001"), 5);
    HistoryStore h(dir.file("h.db"));
    EXPECT_EQ(h.schema_version(), 2);
    const int64_t a = h.record(row(1), state_of(f), {});
    const int64_t b = h.record(row(2), state_of(g), {});
    const int64_t c = h.record(row(3), state_of(g), {});
    EXPECT_EQ(h.record(row(3), state_of(g), {}), 0) << "a resent sweep is not a second row";
    ChangesPage p = h.changes(10, 0, 0, true);
    ASSERT_EQ(p.rows.size(), 3u);
    EXPECT_EQ(p.rows[2]["summary"], "first recorded fabric: 14 nodes, 16 links");
    EXPECT_EQ(p.rows[1]["summary"], "1 link removed: leaf0001/5 -- spine0001/1 removed (was 4xHDR MTU 4096)");
    EXPECT_EQ(p.rows[1]["by_kind"], json({{"link_removed", 1}}));
    EXPECT_EQ(p.rows[1]["changes"][0]["kind"], "link_removed");
    EXPECT_EQ(p.rows[0]["summary"], "no changes");
    EXPECT_EQ(p.rows[0]["changes_count"], 0);
    EXPECT_EQ(*h.state_at(a), state_of(f));
    EXPECT_EQ(*h.state_at(b), state_of(g));
    EXPECT_EQ(*h.state_at(c), state_of(g));
    EXPECT_EQ(h.row_at_time(row(2).taken_unix_ms + 5)->id, b);
    EXPECT_EQ(h.latest_row()->id, c);
    EXPECT_FALSE(h.row_at_time(1000));
    // since: only rows taken at or after it; paging.
    EXPECT_EQ(h.changes(10, 0, row(2).taken_unix_ms, false).rows.size(), 2u);
    ChangesPage first = h.changes(2, 0, 0, false);
    EXPECT_EQ(first.next_before, b);
    EXPECT_EQ(h.changes(2, first.next_before, 0, false).rows.size(), 1u);
}

TEST(HistoryStore, ChangesSurviveARestart) {
    TempDir dir;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8});
    Fabric g = f;
    set_link_rate(g, synth_node(g, "leaf0002"), 6, {Width::X1, Speed::HDR});
    { HistoryStore(dir.file("h.db")).record(row(1), state_of(f), {miswired("leaf0001", 5)}); }
    HistoryStore h(dir.file("h.db"));  // the restarted daemon diffs against the last recorded fabric
    h.record(row(2), state_of(g), {miswired("leaf0001", 5)});
    ChangesPage p = h.changes(1, 0, 0, true);
    EXPECT_EQ(p.rows[0]["summary"], "1 link changed: leaf0002/6 -- spine0002/2: 4xHDR MTU 4096 -> 1xHDR MTU 4096");
    EXPECT_EQ(p.rows[0]["findings_opened"], 0) << "the finding stayed open across the restart";
}

TEST(HistoryStore, FindingsOpenAndCloseByIdentity) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    const FabricState s = state_of(synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8}));
    HistoryStore h(db);
    h.record(row(1), s, {miswired("leaf0001", 5)});
    h.record(row(2), s, {miswired("leaf0001", 5), miswired("leaf0002", 5)});
    h.record(row(3), s, {miswired("leaf0002", 5)});
    ChangesPage p = h.changes(10, 0, 0, true);
    EXPECT_EQ(p.rows[2]["opened"], json({"miswired leaf0001/5 spine0001/3"}));
    EXPECT_EQ(p.rows[1]["opened"], json({"miswired leaf0002/5 spine0001/3"}));
    EXPECT_EQ(p.rows[0]["closed"], json({"miswired leaf0001/5 spine0001/3"}));
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw, "SELECT identity, opened_unix_ms, closed_unix_ms FROM findings ORDER BY id", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(st, 1), row(1).taken_unix_ms);
    EXPECT_EQ(sqlite3_column_int64(st, 2), row(3).taken_unix_ms);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_type(st, 2), SQLITE_NULL) << "still open";
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

TEST(HistoryStore, KeyframesEveryNChangedSweepsAndStatesStillExact) {
    TempDir dir;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8});
    HistoryStore h(dir.file("h.db"));
    std::vector<std::pair<int64_t, FabricState>> written;
    for (int i = 0; i < HistoryStore::kKeyframeEvery * 2 + 3; ++i) {
        Fabric g = f;
        g.node(synth_node(g, "node00001")).ports[1].lid = static_cast<uint16_t>(100 + i);  // a change every sweep
        written.emplace_back(h.record(row(static_cast<uint64_t>(i + 1)), state_of(g), {}), state_of(g));
    }
    for (const auto& [id, st] : written) EXPECT_EQ(*h.state_at(id), st) << "row " << id;
}

TEST(HistoryStore, RetentionKeepsMaxSweepsAndTheOldestKeptStaysDiffable) {
    TempDir dir;
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8});
    HistoryStore h(dir.file("h.db"), {.max_sweeps = 10});
    std::vector<std::pair<int64_t, FabricState>> written;
    for (int i = 0; i < 100; ++i) {
        Fabric g = f;
        g.node(synth_node(g, "node00001")).ports[1].lid = static_cast<uint16_t>(100 + i % 7);
        written.emplace_back(h.record(row(static_cast<uint64_t>(i + 1)), state_of(g), {}), state_of(g));
    }
    h.prune(0);
    EXPECT_EQ(h.count(), 10u);
    for (size_t i = 90; i < 100; ++i) EXPECT_EQ(*h.state_at(written[i].first), written[i].second);
    EXPECT_FALSE(h.find_row(written[89].first));
}

TEST(HistoryStore, RetentionDaysDropsOlderSweepsAndFailoverEvents) {
    TempDir dir;
    const FabricState s = state_of(synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8}));
    HistoryStore h(dir.file("h.db"), {.retention_days = 1});
    const int64_t day = 86400000;
    HistoryRow old = row(1), recent = row(2);
    recent.taken_unix_ms = old.taken_unix_ms + 2 * day;
    h.record(old, s, {});
    h.append_ha_event(old.taken_unix_ms, R"({"outcome":"observed"})");
    const int64_t kept = h.record(recent, s, {});
    h.prune(recent.taken_unix_ms + 1000);
    EXPECT_EQ(h.count(), 1u);
    EXPECT_EQ(h.latest_row()->id, kept);
    EXPECT_EQ(*h.state_at(kept), s);
    EXPECT_EQ(h.recent_ha_events(10).size(), 0u);
}

// A database written by ibfabricd before schema versions (main at df7806e; see
// tests/data/history/make_v1_fixture.cpp) opens, is migrated in place, keeps its rows, and records.
TEST(HistoryMigration, DatabaseFromBeforeSchemaVersionsIsMigrated) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    std::filesystem::copy_file(IBF_TEST_DATA "/history/history-v1.db", db);
    HistoryStore h(db);
    EXPECT_EQ(h.schema_version(), 2);
    EXPECT_EQ(h.count(), 3u);
    json old = h.recent(3);
    EXPECT_EQ(old[0]["sweep_seq"], 42);
    EXPECT_EQ(old[0]["findings"]["summary"]["rate_mismatch"], 1);
    EXPECT_EQ(h.recent_ha_events(5).size(), 1u);
    ChangesPage p = h.changes(10, 0, 0, false);
    ASSERT_EQ(p.rows.size(), 3u);
    EXPECT_EQ(p.rows[0]["recorded"], false);
    EXPECT_EQ(p.rows[0]["summary"], "not recorded (before change tracking)");
    EXPECT_FALSE(h.state_at(p.rows[0]["id"].get<int64_t>()));
    const FabricState s = state_of(synth_fat_tree({.levels = 2, .radix = 8, .hosts = 8}));
    HistoryRow r = row(43);
    r.sm_guid = 0x0002c90300000001;
    const int64_t id = h.record(r, s, {});
    EXPECT_EQ(id, 4);
    EXPECT_EQ(*h.state_at(id), s);
}

TEST(HistoryMigration, NewerSchemaIsRefused) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    { HistoryStore h(db); }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    sqlite3_exec(raw, "PRAGMA user_version = 9", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    try {
        HistoryStore h(db);
        FAIL() << "opened a schema 9 database";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), db + ": history schema 9 was written by a newer ibfabricd (this one knows 2); "
                                              "use that version or move the file away");
    }
}

// A child process records sweeps of a 324-host tree (a change every sweep) and reports each
// committed row id on a pipe; the parent kills it with SIGKILL while it writes. Every reported row
// is there, with its change list and its fabric, and the database passes integrity_check.
TEST(HistoryCrash, KillDashNineLosesNothingCommitted) {
    TempDir dir;
    const std::string db = dir.file("h.db");
    const Fabric f = synth_fat_tree({.levels = 2, .radix = 36, .hosts = 324});
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(fds[0]);
        try {
            HistoryStore h(db);
            for (uint64_t i = 1;; ++i) {
                Fabric g = f;
                g.node(synth_node(g, "node00001")).ports[1].lid = static_cast<uint16_t>(1000 + i % 500);
                const int64_t id = h.record(row(i), state_of(g), {miswired("leaf0001", static_cast<int>(i % 18 + 1))});
                if (::write(fds[1], &id, sizeof id) != sizeof id) ::_exit(3);
            }
        } catch (...) {
            ::_exit(2);
        }
    }
    ::close(fds[1]);
    std::vector<int64_t> committed;
    int64_t id = 0;
    while (committed.size() < 60 && ::read(fds[0], &id, sizeof id) == sizeof id) committed.push_back(id);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    while (::read(fds[0], &id, sizeof id) == sizeof id) committed.push_back(id);  // reported before the kill
    ::close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer ended by itself: " << status;
    ASSERT_GE(committed.size(), 60u);

    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
    sqlite3_finalize(st);
    sqlite3_close(raw);

    HistoryStore h(db);
    EXPECT_GE(h.count(), committed.size());
    for (int64_t c : committed) {
        ASSERT_TRUE(h.find_row(c)) << "row " << c << " was committed and is gone";
        ASSERT_TRUE(h.state_at(c)) << "row " << c;
    }
    Fabric last = f;
    last.node(synth_node(last, "node00001")).ports[1].lid = static_cast<uint16_t>(1000 + committed.size() % 500);
    EXPECT_EQ(*h.state_at(committed.back()), state_of(last));
}

TEST(HistoryConfig, PathOrMappingWithRetention) {
    DaemonConfig a = parse_daemon_config("history: h.db\n", "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_EQ(a.history_db, "/etc/ibfabric/h.db");
    EXPECT_EQ(a.history_retention_days, 0u);
    DaemonConfig b = parse_daemon_config("history:\n  path: /var/lib/h.db\n  retention_days: 90\n  max_sweeps: 100000\n",
                                         "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_EQ(b.history_db, "/var/lib/h.db");
    EXPECT_EQ(b.history_retention_days, 90u);
    EXPECT_EQ(b.history_max_sweeps, 100000u);
    try {
        parse_daemon_config("history:\n  path: h.db\n  keep_days: 3\n", "d.yaml");
        FAIL() << "an unknown key was accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "d.yaml:3:3: unknown key 'history.keep_days' (expected one of: path, retention_days, max_sweeps)");
    }
    EXPECT_THROW(parse_daemon_config("history:\n  retention_days: 3\n", "d.yaml"), InputError);
    EXPECT_THROW(parse_daemon_config("history:\n  path: h.db\n  retention_days: -1\n", "d.yaml"), InputError);
}

}  // namespace
}  // namespace ibf
