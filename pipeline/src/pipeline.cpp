// run_check(): one sweep's check, analysis, link table and history row (ibf/pipeline.h).
#include "ibf/pipeline.h"

#include <algorithm>
#include <exception>

#include "ibf/declared_links.h"
#include "ibf/identity.h"
#include "ibf/link_table.h"
#include "ibf/live_analysis.h"
#include "ibf/report.h"

namespace ibf {
namespace {

double now_or_zero(const StepClock& clock) { return clock ? clock() : 0.0; }

// The check and the analysis of `f` (the fabric with the node-name-map applied): fills
// r.analysis, r.findings, r.checked, r.findings_json, the timings, and `matches` (the planned
// links cabled as planned, for the link table). Throws what ibf::check throws.
void check_and_analyze(const WorkItem& w, const Fabric& f, const StepClock& clock, CheckResult& r,
                       std::vector<LinkMatch>& matches, std::string& analysis_error, LiveAnalysisKeep* keep) {
    // One naming for the check, the analysis and the link table (ibf::NameBook): the plan's
    // names first, tiers from the analysis.
    std::vector<std::string> plan_node_names;  // per NodeId: the plan's name ("" = none)
    std::vector<Link> declared;  // cabled as the plan says: no analysis anomaly (a host it puts on a spine)
    if (w.plan) {
        const NodeMatch nm = match_nodes(*w.plan, f);
        plan_node_names = plan_names(*w.plan, nm, f.size());
        declared = declared_links(*w.plan, f, nm);
    }
    const double t1 = now_or_zero(clock);
    try {
        const bool follow_tables = !w.routes;
        r.analysis = keep ? analyze_live(*w.job.snapshot, f, plan_node_names, declared, follow_tables, *keep)
                          : std::make_shared<const LiveAnalysis>(analyze_live(*w.job.snapshot, f, plan_node_names, declared, follow_tables));
    } catch (const std::exception& e) {
        analysis_error = "analysis of sweep " + std::to_string(w.job.snapshot->sweep_seq) + " failed: " + e.what();
    }
    r.analyze_ms = now_or_zero(clock) - t1;
    const double t0 = now_or_zero(clock);
    if (w.plan) {
        CheckOptions opt = w.options;
        if (r.analysis) opt.tier_of = r.analysis->tier_of;
        r.findings = check(*w.plan, f, opt, &matches);
        r.checked = true;
    }
    r.findings_json = findings_to_json(r.findings);
    r.check_ms = now_or_zero(clock) - t0;
}

// The route validation step of run_check: nothing without LFTs, an analysis or a kept
// LiveRouteCheck. Inputs unchanged since the last validation: its findings (one hash). Else the
// last validation's findings stay on the result (state "validating") and the job is left for
// finish_routes(), after the cabling findings are published.
void routes_step(const WorkItem& w, const Fabric& f, CheckResult& r, CheckRun& run) {
    if (!w.routes || !r.analysis || w.job.snapshot->lfts.empty()) return;
    std::vector<Finding> health = r.findings;
    health.insert(health.end(), r.analysis->findings.begin(), r.analysis->findings.end());
    health.insert(health.end(), w.link_health.begin(), w.link_health.end());
    // Reused inputs (CheckMemo): the same fabric, tables and names as the kept key's.
    const RouteKeyHint* hint = run.reused && w.memo && w.memo->route_key ? &*w.memo->route_key : nullptr;
    RouteJob j = route_job(w.job.snapshot, f, r.analysis->names, health, hint);
    if (w.memo) w.memo->route_key = RouteKeyHint{j.options.degraded, j.key};
    j.options.threads = w.route_threads;
    j.options.cancel = w.cancel;
    j.generation = w.job.generation;
    const RouteOutcome* o = w.routes->cached(j.key);
    if (!o) {
        j.other_findings = r.findings;
        run.routes_pending = std::move(j);
        o = w.routes->last();
    }
    if (o) {
        r.findings.insert(r.findings.end(), o->findings.begin(), o->findings.end());
        r.findings_json = findings_to_json(r.findings);
        r.routes_json = routes_summary(*o, run.routes_pending ? "validating" : "done", !run.routes_pending);
    } else {
        r.routes_json = {{"state", "validating"}, {"sweep_seq", nullptr}};
    }
}

HistoryRecord history_record(const WorkItem& w, const Fabric& f, const CheckResult& r) {
    const Snapshot& s = *w.job.snapshot;
    HistoryRecord h;
    h.fabric = fabric_state(f, s.self, s.other_sms);  // what the history compares with the previous sweep
    h.findings = r.findings;
    HistoryRow& row = h.row;
    row.sweep_seq = s.sweep_seq;
    row.taken_unix_ms = s.taken_unix_ms ? s.taken_unix_ms : w.job.received_ms;
    row.sm_guid = s.self.port_guid;
    row.nodes = s.fabric.size();
    row.switches = s.fabric.count(NodeType::Switch);
    row.cas = s.fabric.count(NodeType::CA);
    row.links = s.fabric.link_count();
    row.findings = r.findings.size();
    row.checked = r.checked;
    row.check_ms = r.check_ms;
    row.findings_json = json_text(r.findings_json);
    return h;
}

// Whether `a` gives what `b` gave to the check and the fabric's analysis: all but the contents of
// the tables (the same switches' tables, in the same order).
bool same_fabric(const Snapshot& a, const Snapshot& b) {
    if (&a == &b) return true;
    if (a.routing_engine != b.routing_engine || a.routing_engine_configured != b.routing_engine_configured ||
        a.self.port_guid != b.self.port_guid || a.lfts.size() != b.lfts.size())
        return false;
    for (size_t i = 0; i < a.lfts.size(); ++i)
        if (a.lfts[i].switch_guid != b.lfts[i].switch_guid) return false;
    return a.fabric.nodes() == b.fabric.nodes();
}

// The contents of the tables too (by hash; same_fabric said they are the same switches').
bool same_tables(const Snapshot& a, const Snapshot& b) {
    if (&a == &b) return true;
    for (size_t i = 0; i < a.lfts.size(); ++i)
        if (lft_hash_of(a.lfts[i]) != lft_hash_of(b.lfts[i])) return false;
    return true;
}

// The plan, names and options of the memo's inputs, and the same fabric (same_fabric).
bool same_fabric_inputs(const WorkItem& w, const CheckMemo& m) {
    return m.snapshot && w.plan == m.plan && w.names == m.names && w.options == m.options &&
           same_fabric(*w.job.snapshot, *m.snapshot);
}

// What the link table's marks depend on beside the fabric: the ends its findings name (the
// check's with the route step's, and the analysis'), sorted, once each.
std::vector<std::pair<Guid, int>> link_ends(const CheckResult& r) {
    std::vector<std::pair<Guid, int>> ends;
    deviating_ends(r.findings, ends);
    if (r.analysis) deviating_ends(r.analysis->findings, ends);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    return ends;
}

}  // namespace

CheckRun run_check(const WorkItem& w, const StepClock& clock) {
    CheckRun run;
    CheckResult r;
    std::shared_ptr<const Fabric> mapped;  // the map applies to a copy: snapshots stay as sent
    std::vector<LinkMatch> fresh_matches;
    const std::vector<LinkMatch>* matches = &fresh_matches;
    CheckMemo* memo = w.memo.get();
    try {
        const bool same_fabric = memo && same_fabric_inputs(w, *memo);
        if (same_fabric && same_tables(*w.job.snapshot, *memo->snapshot)) {
            r = memo->base;
            r.check_ms = r.analyze_ms = 0;
            mapped = memo->mapped;
            matches = &memo->matches;
            run.analysis_error = memo->analysis_error;
            run.reused = true;
            ++memo->reused;
        } else if (same_fabric && memo->base.analysis && memo->analysis_keep.last == memo->base.analysis) {
            // A re-route: the check and the fabric's analysis are the memo's; the LFT-derived
            // parts are made again from the changed tables' balance and the kept ones'.
            r = memo->base;
            r.check_ms = 0;
            mapped = memo->mapped;
            matches = &memo->matches;
            const Fabric& f = mapped ? *mapped : w.job.snapshot->fabric;
            const double t1 = now_or_zero(clock);
            r.analysis = analyze_live(*w.job.snapshot, f, {}, {}, /*follow_tables=*/!w.routes, memo->analysis_keep);
            r.analyze_ms = now_or_zero(clock) - t1;
            memo->base.analysis = r.analysis;
            run.tables_only = true;
        } else {
            if (w.names && !w.names->empty()) {
                auto copy = std::make_shared<Fabric>(w.job.snapshot->fabric);
                apply_node_name_map(*copy, *w.names);
                mapped = std::move(copy);
            }
            LiveAnalysisKeep keep;
            check_and_analyze(w, mapped ? *mapped : w.job.snapshot->fabric, clock, r, fresh_matches, run.analysis_error,
                              memo ? &keep : nullptr);
            if (memo) {
                *memo = CheckMemo{.snapshot = w.job.snapshot, .plan = w.plan, .names = w.names, .options = w.options,
                                  .mapped = mapped, .base = r, .matches = std::move(fresh_matches),
                                  .analysis_error = run.analysis_error, .analysis_keep = std::move(keep), .reused = memo->reused};
                matches = &memo->matches;
            }
        }
        r.generation = w.job.generation;
        r.snapshot = w.job.snapshot;
        if (memo) memo->snapshot = w.job.snapshot;  // equal to the kept one; the older can go
        const double t0 = now_or_zero(clock);
        routes_step(w, mapped ? *mapped : w.job.snapshot->fabric, r, run);
        r.check_ms += now_or_zero(clock) - t0;
    } catch (const std::exception& e) {
        if (memo) *memo = CheckMemo{.reused = memo->reused};  // nothing half made is kept
        run.error = "check of sweep " + std::to_string(w.job.snapshot->sweep_seq) + " failed: " + e.what();
        return run;
    }
    const Fabric& f = mapped ? *mapped : w.job.snapshot->fabric;
    std::vector<std::pair<Guid, int>> ends = link_ends(r);
    if (memo && memo->links && memo->link_ends == ends) {
        r.links = memo->links;  // findings naming the same ends beside the same fabric: the same rows
    } else {
        LinkTable links = link_table(f, r.analysis ? r.analysis->tier_of : std::vector<int>{}, w.plan.get(), *matches,
                                     r.analysis ? r.analysis->names : std::vector<std::string>{});
        mark_deviating_links(links, r.findings);
        if (r.analysis) mark_deviating_links(links, r.analysis->findings);
        r.links = std::make_shared<const LinkTable>(std::move(links));
        if (memo) memo->links = r.links, memo->link_ends = std::move(ends);
    }
    if (w.record_history) run.history = history_record(w, f, r);
    run.result = std::move(r);
    return run;
}

void finish_history(HistoryRecord& h, const RoutesDone& d) {
    h.findings = d.findings;
    h.row.findings = d.findings.size();
    h.row.findings_json = json_text(d.findings_json);
}

}  // namespace ibf
