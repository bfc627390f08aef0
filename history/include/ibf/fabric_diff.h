// What changed in a fabric from one sweep to the next: links added, removed or changed (ends,
// width, speed, MTU), nodes added or removed, LIDs, and SM states. Pure: no I/O, no clocks.
//
//   FabricState before = fabric_state(old_snapshot.fabric, old_snapshot.self, old_snapshot.other_sms);
//   FabricState after  = fabric_state(new_snapshot.fabric, new_snapshot.self, new_snapshot.other_sms);
//   std::vector<Change> cs = diff_states(before, after);   // sorted: nodes, links, LIDs, SMs
//   summarize(cs) == "1 link removed, 1 link changed"
//   apply_changes(before, cs) == after                     // the history stores keyframes + changes
//
// A FabricState is keyed by GUIDs, never by names: a renamed host is not a removed one. A cable
// moved from one port to another is one link removed and one added. Ports are compared by the
// node GUID and port number of both ends; a link "changes" when its ends stay and its active
// width, speed or MTU differ.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/snapshot.h"

namespace ibf {

struct PortRef {
    Guid node = 0;
    int port = 0;
    friend auto operator<=>(const PortRef&, const PortRef&) = default;
};

struct NodeRec {
    Guid guid = 0;
    NodeType type = NodeType::Unknown;
    std::string name;  // Node::name at that sweep (display only)
    int ports = 0;
    friend bool operator==(const NodeRec&, const NodeRec&) = default;
};

struct LinkRec {
    PortRef a, b;  // a < b
    Rate rate;
    int mtu = 0;   // bytes, 0 = unknown
    friend bool operator==(const LinkRec&, const LinkRec&) = default;
};

struct SmRec {
    Guid guid = 0;
    uint16_t lid = 0;
    uint8_t priority = 0;
    SmState state = SmState::NotActive;
    friend bool operator==(const SmRec&, const SmRec&) = default;
};

using LinkKey = std::pair<PortRef, PortRef>;

struct FabricState {
    std::map<Guid, NodeRec> nodes;
    std::map<LinkKey, LinkRec> links;
    std::map<PortRef, uint16_t> lids;  // switch port 0 and CA ports with a LID
    std::map<Guid, SmRec> sms;
    friend bool operator==(const FabricState&, const FabricState&) = default;
};

// The comparable state of a swept fabric; `self` and `others` are the snapshot's SMs (the
// reporting SM wins over another SM's view of the same GUID).
FabricState fabric_state(const Fabric& f, const SmInfo& self, const std::vector<SmInfo>& others);

enum class ChangeKind : uint8_t {
    node_added, node_removed, link_added, link_removed, link_changed, lid_changed, sm_added, sm_removed, sm_changed
};
inline constexpr int kChangeKindCount = 9;
std::string_view to_string(ChangeKind k);  // "link_added", ...
std::optional<ChangeKind> parse_change_kind(std::string_view s);

// One change. Which members are set depends on `kind`: node_* use node_before/node_after,
// link_* link_before/link_after, lid_changed port + lid_before/lid_after (0 = none), sm_* sm_before/sm_after.
// a_name/b_name name the ends (or the node, the port's node) for people, from whichever state has them.
struct Change {
    ChangeKind kind{};
    std::optional<NodeRec> node_before, node_after;
    std::optional<LinkRec> link_before, link_after;
    PortRef port;
    uint16_t lid_before = 0, lid_after = 0;
    std::optional<SmRec> sm_before, sm_after;
    std::string a_name, b_name;
    friend bool operator==(const Change&, const Change&) = default;
};

std::vector<Change> diff_states(const FabricState& before, const FabricState& after);
// `s` with `cs` applied (the inverse of diff_states); a change that does not fit is applied anyway.
FabricState apply_changes(FabricState s, const std::vector<Change>& cs);

// One line for people: "leaf07/25 -- spine04/13: 4xEDR -> 1xEDR", "node003 (0x...) added",
// "LID of node001/1: 5 -> 9", "SM 0x...0001: MASTER -> STANDBY".
std::string describe(const Change& c);
// "no changes", or counts in kind order: "2 links removed, 1 link added, 3 LIDs changed"; with a
// single change, its description follows: "1 link changed: leaf07/25 -- spine04/13: 4xEDR -> 1xEDR".
std::string summarize(const std::vector<Change>& cs);
// Counts by kind name, for JSON ({"link_removed": 2, ...}); kinds with no change are absent.
std::map<std::string, int> count_by_kind(const std::vector<Change>& cs);

}  // namespace ibf
