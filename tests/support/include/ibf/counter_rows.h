// Test helpers for perfmgr counter rows (wire::PortCounterRow / PortCounters), shared by the
// port counter, counters panel, metrics and daemon binary tests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "ibf/fabric.h"
#include "ibf/wire.h"

namespace ibf::test {

// One port's row: the named counters set, the rest 0.
inline wire::PortCounterRow counter_row(Guid g, int port,
                                        std::initializer_list<std::pair<wire::PortCounter, uint64_t>> vals = {}) {
    wire::PortCounterRow r;
    r.node_guid = g;
    r.port = static_cast<uint8_t>(port);
    for (auto [c, v] : vals) r.v[static_cast<size_t>(c)] = v;
    return r;
}

// A row for every linked port of `f`, each counter at `each`.
inline wire::PortCounters counters_for_linked_ports(const Fabric& f, int64_t unix_ms, uint64_t each = 0) {
    wire::PortCounters pc{unix_ms, {}};
    for (const Node& n : f.nodes())
        for (int p = 1; p <= n.num_ports(); ++p)
            if (n.port(p) && n.port(p)->linked()) {
                wire::PortCounterRow r = counter_row(n.guid, p);
                r.v.fill(each);
                pc.ports.push_back(r);
            }
    return pc;
}

}  // namespace ibf::test
