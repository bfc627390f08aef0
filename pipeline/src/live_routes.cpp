// The live route validation (ibf/live_routes.h).
#include "ibf/live_routes.h"

#include <cmath>

#include "ibf/analysis.h"
#include "ibf/report.h"
#include "ibf/route_graph.h"

namespace ibf {
namespace {

double now_or_zero(const StepClock& clock) { return clock ? clock() : 0.0; }

// An Analysis that names nodes as the live analysis did (all check_routes and the hash read of it).
Analysis named(const std::vector<std::string>& names) {
    Analysis a;
    a.names = names;
    return a;
}

}  // namespace

RouteJob route_job(std::shared_ptr<const Snapshot> snapshot, const Fabric& f, const std::vector<std::string>& names,
                   const std::vector<Finding>& findings, const RouteKeyHint* same_but_degraded) {
    RouteJob j;
    j.snapshot = std::move(snapshot);
    j.names = names;
    j.options.degraded = degraded_links(f, findings);
    j.key = same_but_degraded && same_but_degraded->degraded == j.options.degraded
                ? same_but_degraded->key
                : route_inputs_hash(j.snapshot->fabric, named(j.names), j.snapshot->lfts, j.options);
    return j;
}

const RouteOutcome& LiveRouteCheck::validate(const RouteJob& j, const StepClock& clock) {
    const double t0 = now_or_zero(clock);
    const Fabric& f = j.snapshot->fabric;
    const RouteCheck& rc = cache_.check(f, named(j.names), j.snapshot->lfts, j.options);
    RouteOutcome o;
    o.sweep_seq = j.snapshot->sweep_seq;
    o.findings = rc.findings;
    o.summary = route_check_json(rc);
    o.summary["sweep_seq"] = o.sweep_seq;
    o.summary["validate_ms"] = std::round((now_or_zero(clock) - t0) * 100) / 100;
    o.summary["mode"] = to_string(cache_.last_mode());
    o.summary["revalidated_lids"] = cache_.last_revalidated();
    last_ = std::move(o);
    key_ = j.key;
    valid_ = true;
    ++validations_;
    return last_;
}

nlohmann::json routes_summary(const RouteOutcome& o, const char* state, bool cached) {
    nlohmann::json j = o.summary;
    j["state"] = state;
    j["cached"] = cached;
    return j;
}

RoutesDone finish_routes(const RouteJob& j, LiveRouteCheck& c, const StepClock& clock) {
    const RouteOutcome& o = c.validate(j, clock);
    RoutesDone d;
    d.generation = j.generation;
    d.findings = j.other_findings;
    d.findings.insert(d.findings.end(), o.findings.begin(), o.findings.end());
    d.findings_json = findings_to_json(d.findings);
    d.routes_json = routes_summary(o, "done", false);
    return d;
}

}  // namespace ibf
