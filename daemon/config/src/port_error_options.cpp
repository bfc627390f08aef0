// PortErrorOptions' defaults (ibf/port_error_options.h).
#include "ibf/port_error_options.h"

namespace ibf {

std::array<std::optional<uint64_t>, wire::kPortCounterCount> PortErrorOptions::defaults() {
    using C = wire::PortCounter;
    std::array<std::optional<uint64_t>, wire::kPortCounterCount> m{};
    auto set = [&](C c, uint64_t n) { m[static_cast<size_t>(c)] = n; };
    set(C::symbol_errors, 10);
    set(C::link_error_recovery, 10);
    set(C::link_downed, 0);  // any increase: the link went down without anyone unplugging it
    set(C::rcv_errors, 10);
    set(C::rcv_remote_phys_errors, 100);
    set(C::rcv_switch_relay_errors, 100);
    set(C::xmit_discards, 100);
    set(C::xmit_constraint_errors, 100);
    set(C::rcv_constraint_errors, 100);
    set(C::link_integrity_errors, 10);
    set(C::excessive_buffer_overruns, 10);
    set(C::vl15_dropped, 100);
    return m;  // xmit_wait (congestion, not a cable) and the data counters: not watched
}

}  // namespace ibf
