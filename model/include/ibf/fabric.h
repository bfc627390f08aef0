// The fabric model: nodes, their ports, and the links between ports.
//
// Every reader (dumps/), the OpenSM plugin (sm-plugin/) and the wire decoder (wire/) produce
// an ibf::Fabric; the checks (checks/) and the fat-tree analysis (routing/) consume one.
// Pure data and pure functions: no I/O, no clocks.
//
//   Fabric f;
//   NodeId sw = f.add_node({.type = NodeType::Switch, .guid = 0x1, .description = "MF0;leaf01:SX6036/U1"}, 36);
//   NodeId ca = f.add_node({.type = NodeType::CA, .guid = 0x2, .description = "node001 HCA-1"}, 1);
//   f.connect(sw, 1, ca, 1);           // both ends learn their peer
//   f.finalize();                      // derives names and indexes; call after building
//   for (const Link& l : f.links()) ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ibf/rate.h"

namespace ibf {

using Guid = uint64_t;
using NodeId = uint32_t;  // index into Fabric::nodes()
inline constexpr NodeId kNoNode = UINT32_MAX;

enum class NodeType : uint8_t { Unknown = 0, CA = 1, Switch = 2, Router = 3 };
std::string_view to_string(NodeType t);  // "CA", "Switch", "Router", "Unknown"

// PortInfo PortState (IBA): 1 Down, 2 Init, 3 Armed, 4 Active.
enum class PortState : uint8_t { Unknown = 0, Down = 1, Init = 2, Armed = 3, Active = 4 };
// PortInfo PortPhysicalState: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining,
// 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.
enum class PhysState : uint8_t {
    Unknown = 0, Sleep = 1, Polling = 2, Disabled = 3, Training = 4, LinkUp = 5, ErrorRecovery = 6, PhyTest = 7
};
std::string_view to_string(PortState s);  // "Active", "Down", ...
std::string_view to_string(PhysState s);  // "LinkUp", "Polling", ...

struct Port {
    uint8_t num = 0;
    bool valid = false;          // the node has this port (switch port 0 is valid)
    Guid guid = 0;               // port GUID (switch ports share port 0's)
    uint16_t lid = 0;            // base LID (a switch's LID is on port 0)
    uint8_t lmc = 0;
    PortState state = PortState::Unknown;
    PhysState phys = PhysState::Unknown;

    Width width_active = Width::Unknown;
    Speed speed_active = Speed::Unknown;
    WidthMask width_enabled = 0, width_supported = 0;  // 0 = not known
    SpeedMask speed_enabled = 0, speed_supported = 0;  // 0 = not known

    int mtu_cap = 0;        // bytes, 0 = not known
    int mtu_active = 0;     // NeighborMTU in bytes, 0 = not known
    uint16_t master_sm_lid = 0;  // PortInfo.MasterSMLID (CA ports, switch port 0), 0 = not known

    NodeId peer = kNoNode;  // linked node, or kNoNode
    uint8_t peer_port = 0;

    Rate rate() const { return {width_active, speed_active}; }
    bool linked() const { return peer != kNoNode; }
    friend bool operator==(const Port&, const Port&) = default;  // every field
};

struct Node {
    NodeType type = NodeType::Unknown;
    Guid guid = 0;             // node GUID
    Guid system_guid = 0;      // 0 = not known
    std::string description;   // NodeDescription as the fabric reports it
    std::string name;          // derived by Fabric::finalize(), see derive_name()
    uint16_t vendor_id = 0, device_id = 0;
    uint16_t lid = 0;          // switch: port 0 LID; CA: LID of its first linked port
    std::vector<Port> ports;   // index = port number; size = num_ports + 1 (index 0 is a CA's unused slot)

    int num_ports() const { return static_cast<int>(ports.size()) - 1; }
    const Port* port(int n) const {
        return n >= 0 && n < static_cast<int>(ports.size()) && ports[n].valid ? &ports[n] : nullptr;
    }
    Port* port(int n) {
        return n >= 0 && n < static_cast<int>(ports.size()) && ports[n].valid ? &ports[n] : nullptr;
    }
    friend bool operator==(const Node&, const Node&) = default;  // every field, every port
};

// One physical cable, stored once: (a, pa) < (b, pb) in (NodeId, port) order.
struct Link {
    NodeId a = kNoNode;
    uint8_t pa = 0;
    NodeId b = kNoNode;
    uint8_t pb = 0;
};

// The host or switch name an administrator uses, from a NodeDescription:
//   "MF0;leaf03:MSB7800/U1" -> "leaf03"      (managed Mellanox/NVIDIA switch)
//   "node018 HCA-1"         -> "node018"     (CA: first word)
//   "gpu01 mlx5_0"          -> "gpu01"
//   "SX6036 Mellanox"       -> "SX6036 Mellanox" for a switch (unmanaged: whole description)
// An empty description gives "".
std::string derive_name(NodeType type, std::string_view description);
// The HCA part of a CA description ("gpu01 mlx5_1" -> "mlx5_1"), "" when there is none.
std::string derive_hca(NodeType type, std::string_view description);

class Fabric {
public:
    // Adds a node with ports 1..num_ports (and port 0 for a switch), all unlinked.
    // The node's `ports` member is replaced. Returns its id. A GUID already present is an error
    // the caller must avoid (check find()).
    NodeId add_node(Node n, int num_ports);

    // Links (a, pa) with (b, pb); both ports must exist. Any previous link of either port is undone.
    void connect(NodeId a, int pa, NodeId b, int pb);
    void disconnect(NodeId a, int pa);

    // Derives Node::name (derive_name) for nodes that have none and rebuilds the name index.
    void finalize();

    const std::vector<Node>& nodes() const { return nodes_; }
    Node& node(NodeId id) { return nodes_[id]; }
    const Node& node(NodeId id) const { return nodes_[id]; }
    size_t size() const { return nodes_.size(); }

    std::optional<NodeId> find(Guid node_guid) const;
    // All nodes whose derived name equals `name` (several when descriptions are shared).
    std::vector<NodeId> find_by_name(std::string_view name) const;

    // Every link once, in (a, pa) order.
    std::vector<Link> links() const;
    size_t link_count() const;
    size_t count(NodeType t) const;

private:
    std::vector<Node> nodes_;
    std::unordered_map<Guid, NodeId> by_guid_;
    std::unordered_multimap<std::string, NodeId> by_name_;
};

// A name that identifies one port for people: "leaf03/19", "node001/1", or "0x0002c90300a1b2c3/1"
// when the node's name is not unique in the fabric.
std::string port_label(const Fabric& f, NodeId n, int port);
std::string guid_hex(Guid g);  // "0x0002c90300a1b2c3" (always 16 digits)
std::optional<Guid> parse_guid(std::string_view s);  // "0x2c903..." or bare hex

}  // namespace ibf
