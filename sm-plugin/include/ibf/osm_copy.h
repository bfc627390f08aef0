// Copying OpenSM's subnet into an ibf::Snapshot. Only the plugin (and its tests) include this.
// The caller includes OpenSM's headers (sm-plugin/src/osm_headers.h) and holds osm->lock for the
// copy; everything that only reshapes the copy runs after the lock is released:
//
//   cl_plock_acquire(&osm->lock);
//   ibf::osm::copy_subnet(osm, snap);   // a copy, nothing more: no I/O, no names derived
//   lfts.refresh(osm, snap);            // only the tables that differ from the last sweep's
//   cl_plock_release(&osm->lock);
//   ibf::osm::finish_copy(snap);        // names and indexes (Fabric::finalize)
//   lfts.fill(snap);                    // every switch's table into snap.lfts
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "ibf/snapshot.h"

struct osm_opensm;
struct osm_physp;

namespace ibf::osm {

// One physical port. `ext_speeds` = the IsExtendedSpeedsSupported capability (for a switch port:
// the switch's port 0 capability mask). Fills everything but num/valid/peer.
void copy_port(const struct osm_physp* p, bool ext_speeds, bool is_switch, Port& out);

// Nodes, ports, links, LIDs, the SM's own state and the SMs it knows. Does not set sweep_seq or
// taken_unix_ms (the caller's). Caller holds osm->lock (shared is enough). The fabric is not
// finalized: call finish_copy() once the lock is released.
void copy_subnet(struct osm_opensm* osm, Snapshot& out);
void finish_copy(Snapshot& out);  // no lock needed: derives names and indexes of the copy

// The switches' forwarding tables as of the last sweep, kept by the plugin between sweeps, so
// that under the lock only tables that changed are copied (a compare of each table with its copy:
// reads, no allocation, for a sweep that changed no routes).
class LftCache {
public:
    // Caller holds osm->lock (shared), at SUBNET_UP, after copy_subnet(osm, snap) (the highest LID
    // in use comes from its ports). Returns the number of tables copied (changed or new).
    size_t refresh(struct osm_opensm* osm, const Snapshot& snap);
    // No lock needed: appends every switch's table (as of the last refresh) to snap.lfts, egress
    // ports beyond the switch's ports replaced by kLftNoPath (the wire decoder would refuse them).
    void fill(Snapshot& snap) const;

private:
    struct Entry {
        Guid guid = 0;
        uint8_t num_ports = 0;                      // the switch's ports 0..num_ports-1
        std::shared_ptr<std::vector<uint8_t>> raw;  // OpenSM's bytes, LIDs 0..max
    };
    std::vector<Entry> order_;                      // sw_guid_tbl order of the last refresh
    std::unordered_map<Guid, std::shared_ptr<std::vector<uint8_t>>> by_guid_;
};

// The switches' linear forwarding tables after routing (osm_switch_t::lft, what the switches
// acknowledged), one SwitchLft per switch, LIDs 0..the highest LID in use (from the ports already
// in out.fabric: call after copy_subnet; subn.max_ucast_lid_ho when there are none).
// Appends to out.lfts. Caller holds osm->lock (shared) — at SUBNET_UP only, never in LFT_CHANGE.
// A fresh LftCache's refresh() + fill(): every table is copied.
void copy_lfts(struct osm_opensm* osm, Snapshot& out);

// The SM's own SmInfo read without the lock (word-sized atomic loads): for the heartbeat.
SmInfo poll_self(struct osm_opensm* osm);

}  // namespace ibf::osm
