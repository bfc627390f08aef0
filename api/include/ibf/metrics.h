// GET /metrics: the daemon's state in the Prometheus text format 0.0.4 (docs/metrics.md lists
// every family). Pure: the caller passes the time.
//
//   std::string text = ibf::metrics_text({.state = &st, .now_ms = now});
//
// In two halves for ibfabricd (docs/threading.md, "Metrics"): metrics_job() on the io thread, which
// owns the state, writes the families whose size is bounded by the SMs and takes what is
// proportional to the fabric (link table, counter state, snapshot) by shared_ptr<const ...>, with
// the findings of that moment; metrics_render() on any thread writes the rest, in table order.
// metrics_text() is both on the caller's thread.
//
//   ibf::MetricsJob job = ibf::metrics_job({.state = &st, .now_ms = now});   // io thread: cheap
//   std::string text = ibf::metrics_render(job);                             // render thread
//
// Every family is one row of the table in metrics.cpp: name, type, help and the function that
// writes its samples. To add a family (HA metrics: failovers, successor, ...), add a row there
// and a line to docs/metrics.md; the rendering, HELP/TYPE lines and the promtool/OpenMetrics
// tests (tests/api/metrics_test.cpp) cover it without further changes.
// Fabric gauges (findings, links, data_fresh, ...) carry role="active"|"standby" so that an HA
// pair's alerts and dashboards count one copy (docs/metrics.md, "One copy per HA pair").
// Naming (Prometheus practices): prefix ibfabric_, base units (seconds, bytes, bits), counters end
// in _total, times are Unix-time `_timestamp_seconds` gauges, labels bounded and stable (values such
// as rate or MTU are values, never labels), series that will exist are exported as 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ibf/controller_state.h"
#include "ibf/history.h"

namespace ibf {
namespace ha {
class HaEngine;
struct RoleDecision;
}

struct MetricsInput {
    const ControllerState* state = nullptr;
    int64_t now_ms = 0;
    // The HA engine (null without `ha:`): decides the role label of the fabric gauges, "active" on
    // one daemon of an HA pair and "standby" on the others (ha/fabric_role.h).
    const ha::HaEngine* ha = nullptr;
    // The role published (the daemon's ha::RoleHold); null: fabric_role() of `ha` at `now_ms`.
    const ha::RoleDecision* role = nullptr;
    // Whether the history database takes writes; null without `history:` (no sample then).
    const HistoryWriteStatus* history = nullptr;
    // metrics.per_link (docs/metrics.md, "Bounded by default"): false (default, "deviating"):
    // per-link series only for links that deviate, plus per-tier and per-switch aggregates;
    // true ("all"): every link.
    bool all_links = false;
};

// The state's parts that a render reads off the io thread: immutable, or a copy.
struct MetricsFabric {
    int64_t now_ms = 0;
    bool all_links = false;
    std::shared_ptr<const Snapshot> current;
    std::shared_ptr<const LinkTable> links;  // its per-family text caches are the render thread's
    std::shared_ptr<const PortCounterTracker> counters;  // ControllerState::port_counters_shared()
    std::vector<Finding> findings;            // findings_at(now_ms)
    size_t waived = 0;                        // waived_at() + analysis_waived_at()
    bool have_analysis = false;
    std::vector<Finding> analysis_findings;   // analysis_findings_at(now_ms)
    std::vector<Flapping> flapping;           // flaps().flapping(now_ms)
};

struct MetricsJob {
    // Per family of the table: its text (HELP, TYPE, samples), or "" for those left to
    // metrics_render() (and for a family that is not written: HA ones without `ha:`).
    std::vector<std::string> text;
    std::vector<bool> deferred;  // per family: rendered by metrics_render() from `fabric`
    const char* role = "active";  // the role label (a literal)
    MetricsFabric fabric;
};

MetricsJob metrics_job(const MetricsInput& in);  // the io thread's half
std::string metrics_render(const MetricsJob& job);  // the rest, on any thread (one at a time per link table)
std::string metrics_text(const MetricsInput& in);

// Names of every family, in output order (for tests and docs).
std::vector<std::string> metric_family_names();

}  // namespace ibf
