// Flapping links, from what OpenSM already tells the daemon: the port states of every master
// sweep and trap 128 ("link state of a switch port changed", issuer = the switch's LID). Pure:
// no I/O, no clocks (every time is passed in, unix ms). ControllerState owns the only instance
// on the daemon's io thread (docs/threading.md); docs/metrics.md and docs/findings.md describe
// what comes out.
//
//   ibf::FlapDetector d({.threshold = 3, .window_ms = 600'000, .quiet_ms = 1'800'000});
//   d.on_sweep(snapshot.fabric, now);      // every snapshot that becomes the fabric
//   d.on_sweep(snapshot.fabric, snapshot.port_states, now);   // the same, O(changes) when it can
//   d.on_trap(128, issuer_lid, now);       // a trap (others than 128 are ignored)
//   d.on_sweep_start(now);                 // OpenSM's HEAVY_SWEEP_START event
//   for (const ibf::Flapping& f : d.flapping(now)) ...   // links flapping right now
//
// A flap is a link that went down and came back up on the same two ports: seen as a port that was
// up in one sweep, down (or gone) in a later one and up again with the same peer. Both ends of a
// link report it in the same sweep: it counts once. A switch that sent trap 128 while none of its
// ports changed state in the first sweep that started after the trap had a port go down and up
// between two sweeps: that counts as one flap of that switch with the port unknown (port 0).
// A link is flapping once `threshold` flaps fall within `window_ms`; it stays flapping until
// `quiet_ms` pass without a flap; a later flap starts a new episode (count from 1 again).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/port_states.h"

namespace ibf {

struct FlapOptions {
    int threshold = 3;            // flaps within window_ms that make a link flapping (>= 2)
    int64_t window_ms = 600'000;  // 10 min
    int64_t quiet_ms = 1'800'000; // 30 min without a flap clears it
};

// One end of a link as last seen: node GUID, port (0 = unknown port of a switch), node name.
struct FlapEnd {
    Guid guid = 0;
    int port = 0;
    std::string name;
};

struct Flapping {
    FlapEnd a, b;          // a < b by (guid, port); b.guid == 0 for a switch-only (trap) record
    int count = 0;         // flaps in this episode
    int64_t first_ms = 0;  // first flap of the episode
    int64_t last_ms = 0;   // latest flap
};

class FlapDetector {
public:
    explicit FlapDetector(FlapOptions o = {}) : opt_(o) {}
    void set_options(FlapOptions o) { opt_ = o; }
    const FlapOptions& options() const { return opt_; }

    void on_sweep(const Fabric& f, int64_t now_ms);
    // The same (the same outcome) from the snapshot's port states too (model/port_states.h, made
    // on ibfabricd's decode thread from `f`): when they were made from the states of the sweep
    // applied last and name every node as it did, only their changes are applied, O(changes) (the
    // io thread's case: a master's next sweep); otherwise `f` is walked. Null states: walks.
    void on_sweep(const Fabric& f, const std::shared_ptr<const PortStates>& states, int64_t now_ms);
    // Sweeps that applied only the changes of their port states (the rest walked the fabric).
    uint64_t sweeps_from_changes() const { return sweeps_from_changes_; }
    void on_trap(uint16_t trap_num, uint16_t issuer_lid, int64_t now_ms);
    void on_sweep_start(int64_t now_ms);

    // Links flapping at `now_ms`, sorted by (a, b).
    std::vector<Flapping> flapping(int64_t now_ms) const;
    // Every flap counted since start (both kinds), and the switch-only ones among them.
    uint64_t flaps_total() const { return flaps_total_; }
    uint64_t trap_flaps_total() const { return trap_flaps_total_; }

private:
    using PortKey = std::pair<Guid, int>;
    using LinkKey = std::pair<PortKey, PortKey>;  // first < second
    struct PortKeyHash {
        size_t operator()(const PortKey& k) const { return std::hash<Guid>()(k.first) * 31 + static_cast<size_t>(k.second); }
    };
    struct PortSeen {
        bool up = false;
        PortKey peer{0, 0};  // last peer seen while up ({0,0}: none)
        std::string name;
        uint64_t gen = 0;    // the sweep that last saw the port
    };
    struct LinkRecord {
        FlapEnd a, b;
        bool down = false;           // went down, waiting to come back on the same ports
        std::deque<int64_t> recent;  // flap times within the window
        int episode = 0;             // flaps in the current episode (0: none)
        int64_t first_ms = 0, last_ms = 0;
        bool raised = false;         // threshold reached in this episode
    };
    struct PendingTrap {
        Guid sw = 0;
        bool sweep_started = false;  // a sweep started after the trap: its snapshot must show it
    };

    void flap(LinkRecord& r, int64_t now_ms);
    static LinkKey link_key(const PortKey& x, const PortKey& y) { return x < y ? LinkKey{x, y} : LinkKey{y, x}; }
    void port_went_down(const PortKey& k, const PortSeen& was);
    void port_came_up(const PortKey& k, const PortKey& peer, int64_t now_ms);
    void resolve_traps(const std::unordered_map<Guid, bool>& changed, int64_t now_ms);
    void walk(const Fabric& f, std::unordered_map<Guid, bool>& changed, int64_t now_ms);
    void apply_changes(const Fabric& f, const PortStates& states, const PortStates& base,
                       std::unordered_map<Guid, bool>& changed, int64_t now_ms);
    // One port of the new sweep: its state `up` and `peer` against what the last sweep saw.
    void see_port(const PortKey& k, const std::string& name, bool up, const PortKey& peer,
                  std::unordered_map<Guid, bool>& changed, int64_t now_ms);
    void end_sweep(bool first, const std::unordered_map<Guid, bool>& changed, int64_t now_ms);

    FlapOptions opt_;
    uint64_t gen_ = 0;
    std::unordered_map<PortKey, PortSeen, PortKeyHash> ports_;
    std::map<LinkKey, LinkRecord> links_;
    std::unordered_map<uint16_t, Guid> switch_by_lid_;  // from the last sweep walked without states
    // The port states of the last sweep (null: walked without them); then its switch LIDs too.
    std::shared_ptr<const PortStates> states_;
    uint64_t sweeps_from_changes_ = 0;
    std::vector<PendingTrap> traps_;
    uint64_t flaps_total_ = 0, trap_flaps_total_ = 0;
};

}  // namespace ibf
