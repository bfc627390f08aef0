// The check of one master sweep, from the job the io thread queued to what it publishes: the
// node-name-map applied to a copy, nodes matched with the plan (one naming for the check, the
// analysis and the link table), the live analysis, ibf::check, the /metrics link table and the
// history row. Pure: no I/O, no threads; the clock that times the steps is passed in. ibfabricd's
// check thread only pops a job, calls run_check(), stores the history row and posts the result
// (docs/threading.md).
//
//   ibf::WorkItem w{.job = *state.on_snapshot(id, std::move(snap), now), .plan = plan};
//   w.memo = memo;                                   // kept across sweeps: an unchanged one is reused
//   ibf::CheckRun run = ibf::run_check(w);
//   if (run.result) state.publish(std::move(*run.result), now);   // else run.error says why
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibf/check.h"
#include "ibf/controller_state.h"
#include "ibf/dumps.h"
#include "ibf/fabric_diff.h"
#include "ibf/history_row.h"
#include "ibf/live_analysis.h"
#include "ibf/live_routes.h"
#include "ibf/plan.h"

namespace ibf {

// The last sweep's check, analysis and link table, kept by the check thread between sweeps (like
// LiveRouteCheck; touched by run_check only). A sweep whose inputs equal the last one's — the
// same fabric node for node and port for port (every field), the same tables (by SwitchLft
// hash), routing engines and SM, and the very same plan, node-name-map and options — reuses
// them instead of mapping, matching, checking and analysing again (O(fabric): 0.7 s at 48k LIDs);
// the link table too while the route findings beside it are the same validation's. The route
// step and the history row run as usual. A sweep in which only the tables' contents changed (a
// re-route: the same switches' tables, in the same order) reuses the check and the fabric's
// analysis too, and counts the LFT balance again for the changed tables only (LiveAnalysisKeep);
// the link table is made again only when the lft_imbalance findings name other ends.
struct CheckMemo {
    std::shared_ptr<const Snapshot> snapshot;  // the last inputs (null: nothing kept)
    std::shared_ptr<const Plan> plan;
    std::shared_ptr<const NodeNameMap> names;
    CheckOptions options;
    std::shared_ptr<const Fabric> mapped;      // the fabric as checked when a map applied, else null
    CheckResult base;                          // before the route step: the cabling and analysis findings
    std::vector<LinkMatch> matches;            // the check's exact matches, for the link table
    std::string analysis_error;
    // The link table of these inputs, and the ends (GUID, port) its findings named: a sweep whose
    // findings (route findings included) name the same ends reuses it (mark_deviating_links).
    std::vector<std::pair<Guid, int>> link_ends;
    std::shared_ptr<const LinkTable> links;
    std::optional<RouteKeyHint> route_key;     // the route step's key and degraded links of these inputs
    LiveAnalysisKeep analysis_keep;            // the fabric's analysis and the balance per table
    uint64_t reused = 0;                       // sweeps that reused it
};

// One queued check.
struct WorkItem {
    CheckJob job;
    std::shared_ptr<const Plan> plan;          // null: not checked (no topology)
    std::shared_ptr<const NodeNameMap> names;  // null or empty: the snapshot's names
    CheckOptions options;
    bool record_history = false;               // build `CheckRun::history` for a new sweep
    // The route validation kept between sweeps (live_routes.h); null: the LFTs are not validated.
    std::shared_ptr<LiveRouteCheck> routes;
    unsigned route_threads = 1;                // RouteCheckOptions::threads of a full validation
    std::shared_ptr<CheckMemo> memo;           // null: every sweep checked and analysed afresh
    const std::atomic<bool>* cancel = nullptr; // RouteCheckOptions::cancel of its route validation
    // Link health the state knows at submit time (link_flapping, port_errors): routes over
    // those links are route_via_degraded_link too.
    std::vector<Finding> link_health;
};

// What the history database records for a new sweep (HistoryStore::record's arguments).
struct HistoryRecord {
    HistoryRow row;                  // published_unix_ms is left 0: the caller stamps it
    FabricState fabric;              // the fabric as checked (node-name-map applied)
    std::vector<Finding> findings;
};

struct CheckRun {
    std::optional<CheckResult> result;      // nullopt: the check failed, `error` says why
    std::string error;                      // "check of sweep 41 failed: ..."
    std::string analysis_error;             // "analysis of sweep 41 failed: ..." (the check still ran)
    std::optional<HistoryRecord> history;   // when the item asked for it and the check ran
    // The route validation to run after `result` is published (finish_routes): the sweep changed
    // what routes depend on. Until then `result` carries the last validation's route findings.
    // `history` then has the result's findings: finish_history() gives it the new ones.
    std::optional<RouteJob> routes_pending;
    bool reused = false;                    // the inputs equalled the memo's: check and analysis reused
    // Only tables changed since the memo's inputs: the check and the fabric's analysis reused, the
    // LFT balance recomputed for the changed tables only (CheckMemo).
    bool tables_only = false;
};

// StepClock (live_routes.h) times the analysis and the check (CheckResult::analyze_ms, check_ms).

CheckRun run_check(const WorkItem& w, const StepClock& clock = {});

// The history row of a run whose route validation finished later: its findings become `d`'s.
void finish_history(HistoryRecord& h, const RoutesDone& d);

}  // namespace ibf
