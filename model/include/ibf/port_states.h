// The port states of one fabric, and what changed since another one: what ibfabricd's io thread
// needs of a master sweep for the flap detector (state/flap_detector.h: which ports went down or
// came up, with which peer) and the port counter state (state/port_counters.h: which ports the
// fabric has) without a pass over the fabric. Immutable once built; pure.
//
// Built once per snapshot, off the io thread: the receiver's wire::Decoder makes it on the decode
// thread (Snapshot::port_states), with the changes since the last snapshot decoded on the same
// connection (`base`). The io thread applies only those changes when that base is the snapshot it
// applied last (the master's previous sweep), and otherwise compares or walks as before
// (docs/threading.md). Shared read-only afterwards.
//
//   auto d = std::make_shared<const ibf::PortStates>(ibf::port_states(fabric, previous));
//   if (d->diff_from(*previous)) for (const ibf::PortStates::Change& c : d->changes) ...
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ibf/fabric.h"

namespace ibf {

struct PortStates {
    // One per port of a node (n.port(p) != null, p = 0..num_ports: a switch's port 0 too).
    struct Entry {
        Guid guid = 0;          // the node's GUID
        Guid peer = 0;          // while up: the peer node's GUID, else 0
        NodeId node = kNoNode;  // index in the fabric
        uint8_t port = 0;
        uint8_t peer_port = 0;  // while up
        bool up = false;        // linked and not Down (FlapDetector's rule); false for port 0
        friend bool operator==(const Entry&, const Entry&) = default;
    };
    std::vector<Entry> entries;  // sorted by (guid, port)
    // (LID, switch node GUID) of every switch with a LID, sorted by LID; of switches sharing a LID
    // the last in node order (the trap issuer the flap detector names).
    std::vector<std::pair<uint16_t, Guid>> switch_lids;
    // Node GUIDs are unique and nonzero. False: the consumers walk the fabric as before.
    bool unique = true;
    // (node GUID, name) of every node, sorted by GUID.
    std::vector<std::pair<Guid, std::string>> names;

    // Changes since `base` (the previous digest given to port_states(); expired or empty: none).
    struct Change {
        enum class Kind : uint8_t { state, appeared, vanished };
        Kind kind = Kind::state;
        uint32_t entry = 0;  // index in `entries` (state, appeared) or in the base's (vanished)
    };
    std::weak_ptr<const PortStates> base;
    // In the new fabric's node and port order (state: ports 1..N whose up/peer differ; appeared:
    // ports not in the base, port 0 included), then the vanished ones in the base's entry order.
    std::vector<Change> changes;
    bool has_changes_from_base = false;  // `changes` describes the difference from `base`
    bool same_names = false;             // every node in both fabrics has the same name in both

    const Entry* find(Guid g, int port) const;  // binary search; null when the fabric has no such port
    bool has_port(Guid g, int port) const { return find(g, port) != nullptr; }
    // `changes` is the difference from `prev` (this digest was made with it as its base).
    bool diff_from(const std::shared_ptr<const PortStates>& prev) const;
};

// O(ports log ports). With a base (the previous snapshot's digest): also `changes` from it, when
// both have unique GUIDs.
PortStates port_states(const Fabric& f, const std::shared_ptr<const PortStates>& base = nullptr);

}  // namespace ibf
