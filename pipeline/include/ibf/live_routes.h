// The route validation of the LFTs the plugin exports (routing/route_check.h), live after every
// master sweep. Kept between sweeps by the daemon's one check thread: a sweep that changed
// nothing the routes depend on (tables, cabling, LIDs, names, degraded links) costs one hash of
// those inputs (the tables by their SwitchLft::hash) and reuses the last findings; a sweep that
// changed only tables re-walks the destination LIDs whose entries changed; any other runs the
// validation in full. Either runs AFTER the
// cabling findings of that sweep are published (run_check leaves it as CheckRun::routes_pending,
// finish_routes() runs it; docs/threading.md). Pure: no I/O, no clock (passed in); no threads but
// a full validation's helpers for the one call (RouteCheckOptions::threads, joined before it returns).
//
//   ibf::CheckRun run = ibf::run_check(w, clock);          // w.routes = the kept LiveRouteCheck
//   state.publish(std::move(*run.result), now);            // cabling findings out first
//   if (run.routes_pending) {
//       ibf::RoutesDone d = ibf::finish_routes(*run.routes_pending, *w.routes, clock);
//       state.publish_routes(d.generation, std::move(d.findings), std::move(d.findings_json), std::move(d.routes_json), now);
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/finding.h"
#include "ibf/route_check.h"
#include "ibf/snapshot.h"

namespace ibf {

// Monotonic milliseconds, to time the steps; null: every time is 0.
using StepClock = std::function<double()>;

// One sweep's route validation, when it has to run in full.
struct RouteJob {
    uint64_t generation = 0;                   // the CheckResult it belongs to
    std::shared_ptr<const Snapshot> snapshot;  // fabric and LFTs
    std::vector<std::string> names;            // display names by NodeId (LiveAnalysis::names)
    RouteCheckOptions options;                 // with the degraded links of the sweep's findings
    uint64_t key = 0;                          // route_inputs_hash of all of it
    std::vector<Finding> other_findings;       // the sweep's findings but the route ones
};

// What one validation found.
struct RouteOutcome {
    uint64_t sweep_seq = 0;          // the sweep validated
    std::vector<Finding> findings;   // route_unreachable, route_loop, credit_loop, route_non_minimal, route_via_degraded_link
    nlohmann::json summary;          // route_check_json + sweep_seq, validate_ms, mode, revalidated_lids
};

class LiveRouteCheck {
public:
    // The last validation when its inputs hashed to `key`, else null.
    const RouteOutcome* cached(uint64_t key) const { return valid_ && key == key_ ? &last_ : nullptr; }
    // The last validation, whatever its inputs; null before the first.
    const RouteOutcome* last() const { return valid_ ? &last_ : nullptr; }
    // Runs it and keeps it: in full, or only the destinations whose table entries changed since
    // the last validation (RouteCheckCache: the same fabric, names and degraded links).
    const RouteOutcome& validate(const RouteJob& j, const StepClock& clock = {});
    uint64_t validations() const { return validations_; }

private:
    uint64_t key_ = 0, validations_ = 0;
    bool valid_ = false;
    RouteOutcome last_;
    RouteCheckCache cache_;
};

// What an earlier job's inputs hashed to, and its degraded links (RouteJob::key, options.degraded).
struct RouteKeyHint {
    std::vector<DegradedLink> degraded;
    uint64_t key = 0;
};

// The degraded links of a sweep (route_check.h's degraded_links over the check's, the analysis'
// and the link health findings: rate_mismatch, rate_below_capability, rate_outlier,
// link_flapping, port_errors), the options and the inputs' hash. `same_but_degraded`: the hint
// of a job whose snapshot (fabric, tables), fabric `f` and names were equal to these (the
// caller knows: pipeline.h's CheckMemo); its key is taken when the degraded links are equal too,
// instead of hashing every node, port and table (4.4 ms at 48k LIDs).
RouteJob route_job(std::shared_ptr<const Snapshot> snapshot, const Fabric& f, const std::vector<std::string>& names,
                   const std::vector<Finding>& findings, const RouteKeyHint* same_but_degraded = nullptr);

// What publish_routes() takes: the sweep's findings with the new route findings, as JSON too,
// and the summary (state "done").
struct RoutesDone {
    uint64_t generation = 0;
    std::vector<Finding> findings;
    nlohmann::json findings_json;
    nlohmann::json routes_json;
};
RoutesDone finish_routes(const RouteJob& j, LiveRouteCheck& c, const StepClock& clock = {});

// The summary a CheckResult carries: `o`'s with "state" ("done", or "validating" when `o` is the
// last validation of an earlier sweep kept until the new one is done) and "cached".
nlohmann::json routes_summary(const RouteOutcome& o, const char* state, bool cached);

}  // namespace ibf
