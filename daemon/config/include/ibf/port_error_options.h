// The port_errors thresholds of ibfabricd.yaml's `counters:` section (docs/daemon.md): per
// perfmgr counter, the largest increase within the window that is still fine. Read by
// daemon_config, applied by the state's PortCounterTracker (ibf/port_counters.h).
//
//   ibf::PortErrorOptions o;                                   // the defaults below
//   o.max_per_window[size_t(ibf::wire::PortCounter::symbol_errors)] = 5;
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ibf/wire.h"

namespace ibf {

struct PortErrorOptions {
    int64_t window_ms = 3'600'000;  // 1 h
    // Per wire::PortCounter: the largest increase within the window that is still fine;
    // nullopt = not watched. Defaults (docs/daemon.md, "counters"): infiniband-diags'
    // ibqueryerrors thresholds, per hour; any LinkDowned; PortXmitWait and the data counters unwatched.
    std::array<std::optional<uint64_t>, wire::kPortCounterCount> max_per_window = defaults();

    static std::array<std::optional<uint64_t>, wire::kPortCounterCount> defaults();
};

}  // namespace ibf
