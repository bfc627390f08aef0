// A live snapshot from one Subnet Manager: the fabric as that SM last swept it, plus the SM's
// own view (state, priority, sweep sequence, the SMs it knows). Sent by sm-plugin/ over wire/,
// held per SM by controller/. Pure data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/port_lids.h"
#include "ibf/port_states.h"

namespace ibf {

// SMInfo SMState values (IBA 14.2.5.13).
enum class SmState : uint8_t { NotActive = 0, Discovering = 1, Standby = 2, Master = 3 };
std::string_view to_string(SmState s);  // "NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER"

// The opensm.conf settings that must agree on every SM node of one subnet (sm_conf_drift).
struct SmConf {
    std::string routing_engine;             // routing_engine as configured ("" = OpenSM's default)
    std::string root_guid_file, cn_guid_file;
    uint8_t lmc = 0;
    bool honor_guid2lid = false;
    std::string sm_key_digest;              // 16 hex digits of SHA-256 of the sm_key (never the key)
    friend bool operator==(const SmConf&, const SmConf&) = default;
};

struct SmInfo {
    Guid port_guid = 0;
    uint16_t lid = 0;
    uint8_t priority = 0;
    SmState state = SmState::NotActive;
    uint32_t act_count = 0;
};

// One switch's linear forwarding table as OpenSM programmed it: the egress port for every
// destination LID (index = LID, 0..max LID in use; 255 = no path). Exported by the plugin after
// routing (optional, plugin option lft=1), consumed by routing/lft.h (lft_balance).
//
// The bytes are immutable and shared: a copy of a SwitchLft references the same buffer, so the
// snapshot decoder's kept tables, consecutive snapshots with an unchanged table and the route
// validation's last tables (route_check.h) hold one copy of it (185 MB per full set at 48k LIDs).
// Snapshots are read by several threads (docs/threading.md): a table is changed only by giving
// the SwitchLft new bytes, never by writing into the shared ones.
//   ibf::SwitchLft t(guid, std::vector<uint8_t>(max_lid + 1, ibf::kLftNoPath));
//   uint8_t port = t.port_by_lid()[lid];
//   t.edit([&](std::vector<uint8_t>& b) { b[lid] = 3; });   // a copy changed; hash reset to 0
struct SwitchLft {
    using Bytes = std::vector<uint8_t>;

    SwitchLft() = default;
    SwitchLft(Guid guid, Bytes port_by_lid, uint64_t hash = 0);
    SwitchLft(Guid guid, std::shared_ptr<const Bytes> port_by_lid, uint64_t hash = 0);  // shares them (null: none)

    // index = destination LID; 255 = unreachable. Empty when there are none.
    const Bytes& port_by_lid() const { return bytes_ ? *bytes_ : kNone; }
    // The shared buffer itself (null for a table without bytes), to keep or to compare identity.
    const std::shared_ptr<const Bytes>& shared_port_by_lid() const { return bytes_; }
    // New bytes for this table alone (other holders keep the old ones); the hash becomes `h`.
    void set_port_by_lid(Bytes port_by_lid, uint64_t h = 0);
    // set_port_by_lid(a copy of the bytes changed by edit(Bytes&)): the hash becomes 0.
    template <class F>
    void edit(F&& fn) {
        Bytes b = port_by_lid();
        fn(b);
        set_port_by_lid(std::move(b));
    }

    Guid switch_guid = 0;                // node GUID of the switch
    // lft_hash(port_by_lid()) when known, 0 = not known. The snapshot decoder sets it (hashing only
    // the tables that came in full, keeping the hash of an "unchanged" one: docs/wire.md), so the
    // route validation finds the changed tables without reading the others (route_check.h). New
    // bytes reset it to 0 unless given: equal nonzero hashes are taken as equal tables.
    uint64_t hash = 0;

private:
    static inline const Bytes kNone{};
    std::shared_ptr<const Bytes> bytes_;
};
inline constexpr uint8_t kLftNoPath = 255;

// A 64-bit hash of a table's bytes and length (the snapshot protocol's per-table hash, wire.h).
uint64_t lft_hash(const std::vector<uint8_t>& port_by_lid);
// t.hash when set, else lft_hash(t.port_by_lid()).
inline uint64_t lft_hash_of(const SwitchLft& t) { return t.hash ? t.hash : lft_hash(t.port_by_lid()); }

struct Snapshot {
    std::string osm_version;          // "OpenSM 3.3.23"
    SmInfo self;                      // the SM that produced this snapshot
    uint16_t master_lid = 0;          // master SM LID as this SM knows it
    uint64_t sweep_seq = 0;           // increments at every SUBNET_UP the plugin saw
    int64_t taken_unix_ms = 0;        // wall clock at copy time (set by the plugin, not by pure code)
    bool initialization_error = false;  // subn.subnet_initialization_error at that sweep
    std::string routing_engine;       // engine actually used ("ftree", "minhop", ...) "" if unknown
    std::string routing_engine_configured;  // opensm.conf routing_engine as given ("ftree,minhop"), "" = default/unknown
    std::vector<SmInfo> other_sms;    // remote SMs this SM knows (sm_guid_tbl)
    Fabric fabric;
    std::vector<SwitchLft> lfts;      // per switch, when the plugin exports them (empty: not exported)
    // port_lids(fabric), not on the wire: set by the receiver's wire::Decoder on ibfabricd's decode
    // thread, so the io thread never walks the fabric for it (ha::HaEngine::on_snapshot;
    // docs/threading.md). Null for a snapshot built otherwise (tests, tools): a reader that needs
    // it computes it then. Describes `fabric`: code that changes the fabric after it is set resets it.
    std::shared_ptr<const PortLids> port_lids;
    // port_states(fabric, the previous one), not on the wire either: set by the same decoder with
    // the changes since the last snapshot of its connection, so that ControllerState::on_snapshot
    // applies a master sweep to the flap detector and the port counter state in O(changes)
    // (docs/threading.md). Null for a snapshot built otherwise: they walk the fabric then.
    std::shared_ptr<const PortStates> port_states;
};

}  // namespace ibf
