// The port LIDs of one fabric, sorted by port GUID: what the HA engine needs of a snapshot (which
// known SMs' ports are in it and their LIDs; the LIDs a failover moved) without a pass over the
// fabric. Immutable once built; pure.
//
// Built once per snapshot, off ibfabricd's io thread: the receiver's wire::Decoder computes it on
// the decode thread and the Snapshot carries it (Snapshot::port_lids) to the io thread, where
// ha::HaEngine reads it by binary search (docs/threading.md). Shared read-only afterwards.
//
//   auto d = std::make_shared<const ibf::PortLids>(ibf::port_lids(snapshot.fabric));
//   if (const ibf::PortLids::Entry* e = d->find(sm_port_guid)) ... e->first_lid ...
#pragma once

#include <cstdint>
#include <vector>

#include "ibf/fabric.h"

namespace ibf {

struct PortLids {
    // One per port GUID of a valid port (switch ports share their port 0's GUID: one entry).
    struct Entry {
        Guid guid = 0;
        // The LID OpenSM's guid2lid keys by this GUID: a CA or router port's, a switch's port 0's;
        // of several ports with this GUID (a duplicated GUID), the last one in node and port
        // order. 0 = none (no such port has a LID).
        uint16_t lid = 0;
        // The first nonzero LID of any valid port with this GUID in node and port order, 0 = none.
        uint16_t first_lid = 0;
        friend bool operator==(const Entry&, const Entry&) = default;
    };
    std::vector<Entry> entries;  // sorted by guid, GUIDs unique

    const Entry* find(Guid g) const;  // binary search; null when no valid port has this GUID
    friend bool operator==(const PortLids&, const PortLids&) = default;
};

// O(ports + GUIDs log GUIDs). Ports that are not valid or have GUID 0 are left out.
PortLids port_lids(const Fabric& f);

// A port whose `lid` differs between two digests (present with a LID in both).
struct PortLidMove {
    Guid guid = 0;
    uint16_t before = 0, after = 0;
    friend bool operator==(const PortLidMove&, const PortLidMove&) = default;
};
// Every such port, by GUID: one merge of the two sorted lists, O(before + after).
std::vector<PortLidMove> lid_moves(const PortLids& before, const PortLids& after);

}  // namespace ibf
