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

// A rail-optimized NVIDIA DGX SuperPOD compute fabric (HDR, after NVIDIA's DGX A100 SuperPOD
// reference architecture): scalable units (SU) of DGX nodes with one compute HCA per rail, one
// 40-port leaf per rail and SU, spine groups per rail, and a core tier joining the rails.
//
//   ibf::Fabric f = ibf::synth_superpod({.units = 4});   // 80 DGX slots, 32 leaves, 32 spines, 16 cores
//
// Leaf "MF0;su<s>-leaf-r<r>:<model>/U1" (s, r 1-based): ports 1..20 DGX slot d of SU s (HCA r-1 of
// the DGX, "dgx-a100-<nnn> mlx5_<r-1>", nnn = (s-1)*20+d, 3 digits), ports 21..40 to the spines of
// rail group r. Rail group r has `units` spines "MF0;spine-r<r>-<j>:..." (j 1-based); each leaf of
// the rail has 20/units cables to each of them (spine ports 1..20). With a core: spine j of every
// rail has 5 cables (ports 21..40) to each core of core group j, 4 cores "MF0;core-<j>-<c>:..."
// (core port 5*(r-1)+1..5*r). Without a core (.core = false): two tiers, every leaf cabled to
// every spine "MF0;spine<nn>:..." (40/leaves cables per pair; no rail groups, like the 2-tier DGX
// H100 design). The last `service_slots` DGX slots of the last SU hold the service nodes instead,
// one per rail: "ufm01/02" (UFM appliances), "mgmt01/02" (head nodes), "stor01.." (storage).
// With .sharp every switch has a 41st port cabled to its SHARP aggregation node ("Mellanox
// Technologies Aggregation Node", ibf::is_aggregation_node). Every link 4xHDR (spec.rate).
// GUIDs: switches 0x7cfe900300000000 | tier << 24 | index, their aggregation nodes the same | 1 << 20;
// HCAs 0x0c42a10300000000 | dgx << 8 | rail << 4, service nodes | 0xf00000 | index << 4.
struct SuperPodSpec {
    int units = 4;               // scalable units: 1, 2, 4 or 5 (20 / units cables per leaf-spine pair); 2 without a core
    bool core = true;            // spine groups per rail joined by a core tier; false: 2 tiers, no rail groups
    bool sharp = true;           // a SHARP aggregation node on every switch (port 41)
    int service_slots = 1;       // DGX slots of the last SU that hold UFM/management/storage nodes
    std::string switch_model = "MQM8700";
    std::string dgx_prefix = "dgx-a100-";
    Rate rate{Width::X4, Speed::HDR};
};

struct SuperPodShape {
    int dgx = 0, hcas = 0, service_nodes = 0, leaves = 0, spines = 0, cores = 0, aggregation_nodes = 0;
    size_t links = 0;
};

inline constexpr int kSuperPodRails = 8, kSuperPodDgxPerUnit = 20;

// Counts for a spec; throws std::invalid_argument when it cannot be built.
SuperPodShape superpod_shape(const SuperPodSpec& spec);
// The fabric for a spec (finalize()d). Throws std::invalid_argument like superpod_shape().
Fabric synth_superpod(const SuperPodSpec& spec);

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
