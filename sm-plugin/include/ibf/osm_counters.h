// OpenSM's perfmgr counter events -> the plugin's CounterEvent. Only the plugin (and its tests)
// include this; the caller includes OpenSM's headers (sm-plugin/src/osm_headers.h).
//
//   case OSM_EVENT_ID_PORT_ERRORS:
//       fanout.submit_counters(ibf::osm::counter_event(*static_cast<const osm_epi_pe_event_t*>(ev)));
//
// What OpenSM hands over (osm_perfmgr_db.c, perfmgr_db_add_err_reading / _add_dc_reading): the
// DIFFERENCE between this perfmgr sweep's reading of the port and the previous one, never the
// counter itself. The first reading of a port after OpenSM starts is measured against zero, so
// it carries the whole counter. OpenSM itself handles resets: a counter read lower than before
// (cleared out of band, e.g. `perfquery -x -R`) and a counter near overflow (which the perfmgr
// clears with a Set) both reset its "previous" to zero, so the deltas never go negative.
#pragma once

#include "ibf/osm_sender.h"

struct osm_epi_pe_event;
struct osm_epi_dc_event;

namespace ibf::osm {

// A plain copy: 13 error deltas (OSM_EVENT_ID_PORT_ERRORS), in wire::PortCounter order.
CounterEvent counter_event(const struct osm_epi_pe_event& e);
// A plain copy: xmit_data, rcv_data (units of 4 bytes), xmit_pkts, rcv_pkts (OSM_EVENT_ID_PORT_DATA_COUNTERS).
// The unicast/multicast packet fields are not read: OpenSM leaves them uninitialised on ports
// without the IETF extension.
CounterEvent counter_event(const struct osm_epi_dc_event& e);

}  // namespace ibf::osm
