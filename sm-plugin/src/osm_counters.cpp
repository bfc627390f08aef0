// counter_event(): OpenSM's perfmgr event structs -> CounterEvent (a copy of plain integers).
#include "ibf/osm_counters.h"

#include "osm_headers.h"

namespace ibf::osm {

CounterEvent counter_event(const osm_epi_pe_event_t& e) {
    CounterEvent c;
    c.node_guid = e.port_id.node_guid;
    c.port = e.port_id.port_num;
    c.data = false;
    c.d = {e.symbol_err_cnt, e.link_err_recover, e.link_downed, e.rcv_err, e.rcv_rem_phys_err,
           e.rcv_switch_relay_err, e.xmit_discards, e.xmit_constraint_err, e.rcv_constraint_err,
           e.link_integrity, e.buffer_overrun, e.vl15_dropped, e.xmit_wait};
    return c;
}

CounterEvent counter_event(const osm_epi_dc_event_t& e) {
    CounterEvent c;
    c.node_guid = e.port_id.node_guid;
    c.port = e.port_id.port_num;
    c.data = true;
    c.d[0] = e.xmit_data;
    c.d[1] = e.rcv_data;
    c.d[2] = e.xmit_pkts;
    c.d[3] = e.rcv_pkts;
    return c;
}

}  // namespace ibf::osm
