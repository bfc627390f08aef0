// Synthetic fat-trees for tests and benchmarks, and helpers that inject faults into a fabric.
// Pure: no I/O, no clocks, no randomness (same spec -> same fabric, same GUIDs).
//
//   ibf::FatTreeSpec spec{.levels = 3, .radix = 64, .hosts = 32768};
//   ibf::Fabric f = ibf::synth_fat_tree(spec);     // finalize()d
//   ibf::FatTreeShape s = ibf::fat_tree_shape(spec);  // counts, without building
//   ibf::move_cable(f, leaf, 33, 40);              // faults for a check to find
//
// Layout (k = radix, h = k/2):
//   2 levels: L = ceil(hosts/h) leaves (L <= k), h spines. Leaf l: ports 1..h hosts, port h+u -> spine u
//             (u = 1..h) at spine port l+1.
//   3 levels: L = ceil(hosts/h) leaves in P = ceil(L/h) pods of h leaves; each pod has h spines
//             (the middle tier); h*h cores. Leaf i of pod p: port h+u -> spine u of pod p, at that
//             spine's port i+1. Spine j (1-based) of pod p: port h+u -> core (j-1)*h+u, at core port p+1.
//             Requires P <= k. Cores: k ports, only P of them used in a partial tree.
// Hosts fill leaves in order: host n (0-based) sits on leaf n/h, port n%h + 1, its port 1.
// Names: leaves "MF0;leafNNNN:<model>/U1", spines "MF0;spineNNNN:<model>/U1", cores
// "MF0;coreNNNN:<model>/U1" (NNNN 1-based, 4 digits), hosts "nodeNNNNN <hca>" (5 digits, 1-based).
// GUIDs: switches 0x7cfe900300000000 | tier << 24 | index (tier 1 leaf, 2 spine, 3 core; index
// 1-based), hosts 0x0c42a10300000000 | index << 4 (port GUID = node GUID + 1). LIDs: switches first
// (leaves, spines, cores), then hosts, from 1. Every link Active/LinkUp at spec.rate and spec.mtu;
// enabled and supported masks are the spec's (defaults: exactly the active rate).
#pragma once

#include <cstdint>
#include <string>

#include "ibf/fabric.h"
#include "ibf/rate.h"
#include "ibf/snapshot.h"

namespace ibf {

struct FatTreeSpec {
    int levels = 2;                           // 2 or 3
    int radix = 40;                           // ports per switch (k), even, 4..254
    int hosts = 0;                            // number of hosts; 0 = every leaf port (the full tree)
    Rate rate{Width::X4, Speed::HDR};         // active rate of every link
    WidthMask width_supported = 0;            // 0 = only rate.width
    SpeedMask speed_supported = 0;            // 0 = only rate.speed
    int mtu = 4096;                           // mtu_active and mtu_cap of every port
    std::string switch_model = "QM8700";
    std::string hca = "mlx5_0";
};

struct FatTreeShape {
    int leaves = 0, spines = 0, cores = 0, hosts = 0;
    size_t links = 0;
};

// Counts for a spec; throws std::invalid_argument when the spec cannot be built (odd or tiny radix,
// levels not 2 or 3, too many hosts for the radix).
FatTreeShape fat_tree_shape(const FatTreeSpec& spec);

// The fabric for a spec (finalize()d). Throws std::invalid_argument like fat_tree_shape().
Fabric synth_fat_tree(const FatTreeSpec& spec);

// Node ids by name in a synthetic tree ("leaf0001", "node00042"), via find_by_name; kNoNode if absent.
NodeId synth_node(const Fabric& f, const std::string& name);

// Minimum-hop forwarding tables for every switch of `f` (any topology; on a fat-tree these are
// up/down routes): the egress towards every LID in use (CA ports, switch port 0) is a port to a
// neighbour one hop closer, chosen among those by LID modulo their number (d-mod-k spreading);
// 255 where the LID cannot be reached. One BFS per destination switch.
std::vector<SwitchLft> synth_lfts(const Fabric& f);

// A re-route of 1 % of the switches (every 100th table of `lfts`, synth_lfts' order) as OpenSM's
// rebalancing would make it on a fat-tree of `f`: entries that go up move to the next up port (the
// route stays minimal). `every`: which CA LIDs move (every `every`-th of them in LID order; 0: one
// LID per table, the first one that table sends up from a spread start). The changed tables get
// their lft_hash, as the snapshot decoder sets it.
void synth_reroute(const Fabric& f, std::vector<SwitchLft>& lfts, size_t every);

// ---- faults (work on any finalize()d fabric) ----

// Unplugs the cable at (n, port) (both ends become Down/Polling).
void remove_cable(Fabric& f, NodeId n, int port);
// Moves the far end of the cable at (n, port) to port `to` of the same far node (must be free).
void move_far_end(Fabric& f, NodeId n, int port, int to);
// Crosses two cables of switch `sw`: the far ends at ports p1 and p2 swap.
void cross_cables(Fabric& f, NodeId sw, int p1, int p2);
// Sets the active rate of both ends of the cable at (n, port).
void set_link_rate(Fabric& f, NodeId n, int port, Rate r);
// Sets mtu_active of both ends of the cable at (n, port).
void set_link_mtu(Fabric& f, NodeId n, int port, int mtu);
// Adds a host "<name> <hca>" with GUID `guid` cabled to (sw, port) at `rate` (port must be free).
NodeId add_host(Fabric& f, const std::string& name, Guid guid, NodeId sw, int port,
                Rate rate = {Width::X4, Speed::HDR}, int mtu = 4096);
// A copy of `f` without node `n` (its links gone; other NodeIds above n shift down by one).
Fabric without_node(const Fabric& f, NodeId n);

}  // namespace ibf
