// Copying OpenSM's subnet into an ibf::Snapshot. Only the plugin (and its tests) include this.
// The caller includes OpenSM's headers (sm-plugin/src/osm_headers.h) and holds osm->lock for the
// copy; everything that only reshapes the copy runs after the lock is released:
//
//   ibf::osm::SubnetCopy raw;            // kept between sweeps (its capacity is reused)
//   cl_plock_acquire(&osm->lock);
//   ibf::osm::copy_subnet(osm, raw);    // flat records of OpenSM's own fields, nothing more
//   lfts.refresh(osm, raw.lids, marks.take());  // only the tables LFT_CHANGE named (lft_marks.h)
//   cl_plock_release(&osm->lock);
//   ibf::osm::build_snapshot(raw, snap);  // the Fabric: ports mapped, links, names, indexes
//   lfts.fill(snap);                    // every switch's table into snap.lfts
#pragma once

#include <memory>
#include <vector>

#include "ibf/lft_marks.h"
#include "ibf/snapshot.h"

struct osm_opensm;
struct osm_physp;

namespace ibf::osm {

// One physical port. `ext_speeds` = the IsExtendedSpeedsSupported capability (for a switch port:
// the switch's port 0 capability mask). Fills everything but num/valid/peer.
void copy_port(const struct osm_physp* p, bool ext_speeds, bool is_switch, Port& out);

// What is read under the lock: OpenSM's fields as they are (one record per node and per valid
// port, the remote end as a node index and port number), the SM's own state, the SMs it knows.
struct SubnetCopy {
    struct RawNode {
        uint8_t type = 0, num_physp = 0;
        Guid guid = 0, system_guid = 0;
        uint16_t vendor_id = 0, device_id = 0;
        char desc[64] = {};            // NodeDescription, not NUL-terminated when 64 bytes long
        std::string print_desc;        // OpenSM's display name when it differs (node-name-map)
        uint32_t first_port = 0, ports = 0;  // into `ports`
        uintptr_t physp_base = 0;      // address of OpenSM's physp_table[0]: never dereferenced
        bool ext_speeds = false;       // a switch's port 0 IsExtendedSpeedsSupported
    };
    struct RawPort {
        uint8_t num = 0;
        // p_remote_physp as an address (0 = none), resolved after the lock by the address ranges of
        // the nodes' physp tables: reading the remote node under the lock would be a cache miss
        // per port in a random place of OpenSM's memory.
        uintptr_t remote = 0;
        Guid guid = 0;
        uint8_t port_info[64];              // ib_port_info_t as OpenSM holds it
        uint8_t mlnx_speed[3];              // ExtendedPortInfo link_speed_supported/_enabled/_active
    };
    Snapshot head;                     // every Snapshot field but the fabric and the LFTs
    std::vector<RawNode> nodes;
    std::vector<RawPort> ports;
    size_t lids = 0;                   // LFT length: LIDs 0..the highest in use (base + 2^LMC - 1)
    size_t physp_size = 0;             // sizeof(osm_physp_t), to map `remote` to a port number
};

// Caller holds osm->lock (shared is enough): walks the node, port and SM tables into `out`,
// replacing what it held. Does not set sweep_seq or taken_unix_ms (the caller's). Keep one
// SubnetCopy between sweeps: its vectors keep their capacity, so the ~100 bytes per port are not
// allocated and faulted in again under the lock (at 48k LIDs ~30 MB).
void copy_subnet(struct osm_opensm* osm, SubnetCopy& out);
// No lock needed: the Snapshot (Fabric with every port mapped, links, names derived) from the copy.
void build_snapshot(const SubnetCopy& raw, Snapshot& out);

// What one LftCache::refresh() did.
struct LftRefresh {
    size_t switches = 0;      // tables held after it (every switch in sw_guid_tbl)
    size_t compared = 0;      // tables read (compared with the cached copy)
    size_t copied = 0;        // of those, the ones that differed or were new: copied
    size_t audit_found = 0;   // tables the rolling audit found changed although nothing named them
    LftWhy scope = LftWhy::Reuse;  // why every table was read; Reuse: only what lft_compare_why() chose
};

// The switches' forwarding tables as of the last sweep, kept by the plugin between sweeps, so
// that under the lock only the tables OpenSM reported changed (LFT_CHANGE, via LftMarks) are
// read, and only those that differ are copied. lft_compare_why() (lft_marks.h) is the rule.
class LftCache {
public:
    // Caller holds osm->lock (shared), at SUBNET_UP. `lids`: the table length (SubnetCopy::lids;
    // 0 = subn.max_ucast_lid_ho + 1). `changes`: LftMarks::take() under the same lock hold; the
    // default (untracked) compares every table.
    LftRefresh refresh(struct osm_opensm* osm, size_t lids, const LftChanges& changes = {});
    // No lock needed: appends every switch's table (as of the last refresh) to snap.lfts, egress
    // ports beyond the switch's ports replaced by kLftNoPath (the wire decoder would refuse them).
    // A table is shared, not copied: the snapshot references the cache's bytes (OpenSM never
    // programs such a port, so they are sent as they are; else a corrected copy, made once per
    // change of the table), so a sweep that changed nothing allocates no table.
    void fill(Snapshot& snap) const;

private:
    struct Entry {
        uint64_t key = 0;                           // sw_guid_tbl key (ascending in table order)
        Guid guid = 0;
        uint8_t num_ports = 0;                      // the switch's ports 0..num_ports-1
        uintptr_t sw = 0, lft = 0;                  // OpenSM's addresses then: compared, never dereferenced
        size_t n = 0;                               // entries read: min(LIDs, max_lid_ho + 1, lft_size)
        std::shared_ptr<std::vector<uint8_t>> raw;  // OpenSM's bytes, LIDs 0..max (never written once made)
        // What fill() sends for `raw` (raw itself unless it names a port beyond the switch's), made
        // by the first fill() after raw changed, kept while raw is.
        mutable std::shared_ptr<const std::vector<uint8_t>> sent;
    };
    std::vector<Entry> order_, spare_;              // sw_guid_tbl order of the last refresh
    size_t lids_ = 0;
    uint64_t refreshes_ = 0;
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
