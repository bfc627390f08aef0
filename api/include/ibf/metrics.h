// GET /metrics: the daemon's state in the Prometheus text format 0.0.4 (docs/metrics.md lists
// every family). Pure: the caller passes the time; runs on the io thread at each scrape.
//
//   std::string text = ibf::metrics_text({.state = &st, .now_ms = now});
//
// Every family is one row of the table in metrics.cpp: name, type, help and the function that
// writes its samples. To add a family (HA metrics: failovers, successor, ...), add a row there
// and a line to docs/metrics.md; the rendering, HELP/TYPE lines and the promtool/OpenMetrics
// tests (tests/controller/metrics_test.cpp) cover it without further changes.
// Fabric gauges (findings, links, data_fresh, ...) carry role="active"|"standby" so that an HA
// pair's alerts and dashboards count one copy (docs/metrics.md, "One copy per HA pair").
// Naming (Prometheus practices): prefix ibfabric_, base units (seconds, bytes, bits), counters end
// in _total, times are Unix-time `_timestamp_seconds` gauges, labels bounded and stable (values such
// as rate or MTU are values, never labels), series that will exist are exported as 0.
#pragma once

#include <cstdint>
#include <string>

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

std::string metrics_text(const MetricsInput& in);

// Names of every family, in output order (for tests and docs).
std::vector<std::string> metric_family_names();

}  // namespace ibf
