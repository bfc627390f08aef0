// Copying OpenSM's subnet into an ibf::Snapshot. Only the plugin (and its tests) include this.
// The caller includes OpenSM's headers (sm-plugin/src/osm_headers.h) and holds osm->lock.
//
//   cl_plock_acquire(&osm->lock);
//   ibf::osm::copy_subnet(osm, snap);   // a copy, nothing more: no I/O, no allocation beyond the copy
//   cl_plock_release(&osm->lock);
#pragma once

#include "ibf/snapshot.h"

struct osm_opensm;
struct osm_physp;

namespace ibf::osm {

// One physical port. `ext_speeds` = the IsExtendedSpeedsSupported capability (for a switch port:
// the switch's port 0 capability mask). Fills everything but num/valid/peer.
void copy_port(const struct osm_physp* p, bool ext_speeds, bool is_switch, Port& out);

// Nodes, ports, links, LIDs, the SM's own state and the SMs it knows. Does not set sweep_seq or
// taken_unix_ms (the caller's). Caller holds osm->lock (shared is enough).
void copy_subnet(struct osm_opensm* osm, Snapshot& out);

// The switches' linear forwarding tables after routing (osm_switch_t::lft, what the switches
// acknowledged), one SwitchLft per switch, LIDs 0..the highest LID in use (from the ports already
// in out.fabric: call after copy_subnet; subn.max_ucast_lid_ho when there are none).
// Appends to out.lfts. Caller holds osm->lock (shared) — at SUBNET_UP only, never in LFT_CHANGE.
void copy_lfts(struct osm_opensm* osm, Snapshot& out);

// The SM's own SmInfo read without the lock (word-sized atomic loads): for the heartbeat.
SmInfo poll_self(struct osm_opensm* osm);

}  // namespace ibf::osm
