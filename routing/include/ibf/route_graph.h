// The switches' forwarding tables as a compact graph, and the walk that follows them to one
// destination LID from every switch at once (memoised: each switch is visited once per LID).
// Shared by lft_paths (lft.h), the routing validation (route_check.h) and `ibfabric route`.
// Pure: no I/O.
//
//   ibf::RouteGraph g(fabric, snapshot.lfts);        // O(switches x ports + LIDs)
//   ibf::DestWalk w(g);
//   for (const ibf::RouteDest& d : g.dests()) {
//       w.reset(d);
//       int v = w.verdict(g.sw_of(leaf));             // >= 0: cables from leaf to the host; < 0: why not
//   }
//
// Switches are numbered 0..switches()-1 (sw_of / node_of convert). A destination is every LID of
// a linked CA port (base .. base + 2^LMC - 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/snapshot.h"

namespace ibf {

struct RouteDest {
    uint32_t lid = 0;
    NodeId node = kNoNode;  // the CA
    uint8_t port = 0;       // its port
    int32_t sw = -1;        // the switch that port is cabled to (-1: not a switch)
    uint8_t sw_port = 0;    // that switch's port
};

// Where a switch port leads (RouteGraph::hop).
inline constexpr int32_t kHopDead = -1;  // no such port, port 0, not linked, or a router/unknown node
inline constexpr int32_t kHopCa = -2;    // a CA

class RouteGraph {
public:
    // Tables of unknown GUIDs or of non-switches are ignored; a second table of one switch too.
    RouteGraph(const Fabric& f, const std::vector<SwitchLft>& lfts);

    const Fabric& fabric() const { return *f_; }
    int switches() const { return static_cast<int>(nodes_.size()); }
    NodeId node_of(int sw) const { return nodes_[sw]; }
    int sw_of(NodeId n) const { return n < sw_of_.size() ? sw_of_[n] : -1; }
    bool has_table(int sw) const { return tables_[sw] != nullptr; }
    const SwitchLft* table(int sw) const { return tables_[sw]; }  // null: none
    int ports(int sw) const { return base_[sw + 1] - base_[sw] - 1; }
    // The entries of the table of `sw`, index = LID (empty: no table). The graph reads where each
    // table's bytes are when it is made (one array to look in: a table's own bytes are two
    // pointers away, misses at 48k LIDs): a table given new bytes needs a new graph.
    std::span<const uint8_t> entries(int sw) const { return entries_[sw]; }
    // Egress port of `sw` for `lid`; kLftNoPath when the table has no entry (or there is no table).
    uint8_t port(int sw, uint32_t lid) const {
        const std::span<const uint8_t> e = entries(sw);
        return lid < e.size() ? e[lid] : kLftNoPath;
    }
    // What port p of `sw` leads to: a switch number, kHopCa or kHopDead.
    int32_t hop(int sw, int p) const { return p > 0 && p <= ports(sw) ? hop_[base_[sw] + p] : kHopDead; }
    // hop(sw, p) for p = 0..ports(sw), as one row (entry 0: kHopDead).
    const int32_t* hop_row(int sw) const { return hop_.data() + base_[sw]; }
    // The far port number of port p of `sw` (0 when it leads nowhere).
    uint8_t hop_port(int sw, int p) const { return p > 0 && p <= ports(sw) ? far_port_[base_[sw] + p] : 0; }
    // hop_port(sw, p) for p = 0..ports(sw), as one row.
    const uint8_t* hop_port_row(int sw) const { return far_port_.data() + base_[sw]; }
    // A dense index of (sw, p), 0 <= channel < channels(): per-port counters.
    uint32_t channel(int sw, int p) const { return base_[sw] + static_cast<uint32_t>(p); }
    uint32_t channels() const { return base_.back(); }
    // The (switch, port) of a channel.
    std::pair<int, int> channel_port(uint32_t ch) const;

    // The switches in breadth-first order from `from` over the cables between switches, into
    // `order` (returned: how many were reached), and each one's distance in cables into `dist`
    // (switches() entries; -1: not reached). What DestWalk::settle takes, and the shortest paths.
    size_t breadth_first(int from, std::span<int16_t> dist, std::vector<int32_t>& order) const;

    const std::vector<RouteDest>& dests() const { return dests_; }  // in LID order
    // The CA ports cabled to `sw` (node, port), in port order.
    const std::vector<std::pair<NodeId, uint8_t>>& cas_on(int sw) const { return cas_[sw]; }
    // The CA port or switch that owns a LID: (node, port; 0 for a switch), nullopt when none.
    std::optional<std::pair<NodeId, int>> owner(uint32_t lid) const;

private:
    const Fabric* f_;
    std::vector<NodeId> nodes_;
    std::vector<int32_t> sw_of_;
    std::vector<const SwitchLft*> tables_;
    std::vector<std::span<const uint8_t>> entries_;  // per switch: its table's bytes (empty: none)
    std::vector<uint32_t> base_;  // per switch, first channel; base_[switches()] = channels()
    std::vector<int32_t> hop_;
    std::vector<uint8_t> far_port_;
    // Per switch, its switch neighbours (parallel cables once), in port order: adj_[adj_start_[s]..]
    std::vector<uint32_t> adj_start_;
    std::vector<int32_t> adj_;
    std::vector<RouteDest> dests_;
    std::vector<std::vector<std::pair<NodeId, uint8_t>>> cas_;
    std::vector<std::pair<uint32_t, std::pair<NodeId, int>>> owners_;  // sorted by LID
};

// Verdicts of DestWalk::verdict (>= 0 is a hop count).
enum RouteVerdict : int32_t {
    kRouteDeadEnd = -3,  // a table entry to port 0, a missing or unlinked port, a wrong CA, a router
    kRouteLoop = -4,     // the walk came back to a switch it had passed
    kRouteNoTable = -5,  // the walk reached a switch without a table (no verdict)
    kRouteNoEntry = -6,  // the walk reached a switch whose table has no entry for the LID (255)
};

class DestWalk {
public:
    // `block`: LIDs loaded at a time (1..64): 64 for destinations in LID order, 1 for a few
    // scattered ones (RouteCheckCache: loading 64 LIDs of every table for one costs ~20 walks).
    explicit DestWalk(const RouteGraph& g, uint32_t block = kMaxBlock);
    static constexpr uint32_t kMaxBlock = 64;
    // Starts a new destination (O(1): memo entries of earlier destinations go stale; every 64th
    // LID copies 64 entries of every table).
    void reset(const RouteDest& d);
    // Cables from `sw` to the destination CA (1 = it hangs off `sw`), or a RouteVerdict. Memoised.
    int32_t verdict(int sw) {
        const Memo m = memo_[sw];
        return m.stamp == gen_ ? (m.verdict == kOnWalk ? kRouteLoop : m.verdict) : walk(sw);
    }
    // The switch where the walk from `sw` broke (the loop's first repeated switch for kRouteLoop);
    // -1 for a route that arrives. Valid after verdict(sw).
    int32_t broke_at(int sw) const { return memo_[sw].stamp == gen_ ? end_[sw] : -1; }
    // The next switch on the route from `sw` (-1 at the last switch or a break). After verdict(sw).
    int32_t next(int sw) const;
    // Gives a verdict, in one pass over `order`, to every switch whose next switch already has
    // one when its turn comes (and to every break: no table, no entry, a dead end): `order` is
    // the switches as a breadth-first search from dest().sw lists them, so that every minimal
    // route settles here instead of in a walk. The rest (routes that go up again, loops) are
    // walked on demand by verdict(), as without it. Any order gives the same verdicts; a graph of
    // kNarrow switches or more (16-bit codes do not fit) settles nothing here.
    // With `routes`: table_route() of every switch with a table, counted on the way (complete
    // when the pass settled every switch; else count them with table_route()).
    struct TableRoutes;
    void settle(std::span<const uint16_t> order, TableRoutes* routes = nullptr);
    static constexpr int kNarrow = 0xFFFC;
    // Every switch given a verdict since reset(), each after the switches its route passes
    // (read backwards: every switch before those its route leads to).
    const std::vector<int32_t>& settled() const { return settled_; }
    const RouteDest& dest() const { return d_; }
    // RouteGraph::port(sw, dest().lid), from the cached block of the tables.
    uint8_t port(int sw) const { return row_[sw]; }
    // RouteGraph::hop(sw, port(sw)): the switch that entry leads to, kHopCa or kHopDead.
    int32_t hop(int sw) const { return hop_at(static_cast<size_t>(row_ - block_.data()), sw); }
    // The LIDs whose entries the last reset() loaded: block_first() .. + block_size() - 1; port()
    // and hop() of any of them.
    uint32_t block_first() const { return block_first_; }
    uint32_t block_size() const { return block_size_; }
    uint8_t port_of(uint32_t lid, int sw) const { return block_[cell(lid, sw)]; }
    int32_t hop_of(uint32_t lid, int sw) const { return hop_at(cell(lid, 0), sw); }

private:
    static constexpr int32_t kOnWalk = -2;
    // hop() in 16 bits, and why there is none: a switch number, or one of these (graphs of fewer
    // than kNarrow switches). No table and no entry are kHopDead to hop().
    static constexpr uint16_t kCodeNoTable = kNarrow, kCodeNoEntry = 0xFFFD, kCodeCa = 0xFFFE, kCodeDead = 0xFFFF;
    int32_t walk(int sw);
    void load_block(uint32_t first);
    size_t cell(uint32_t lid, int sw) const { return static_cast<size_t>(lid - block_first_) * g_.switches() + sw; }
    // hop() of `sw` in the block's row that starts at `row`.
    int32_t hop_at(size_t row, int sw) const {
        if (!hops_.empty()) {
            const uint16_t c = hops_[row + sw];
            return c < kCodeNoTable ? c : c == kCodeCa ? kHopCa : kHopDead;
        }
        const uint8_t p = block_[row + sw];
        return p != kLftNoPath && p <= g_.ports(sw) ? g_.hop_row(sw)[p] : kHopDead;  // hop_row(sw)[0]: kHopDead
    }

    const RouteGraph& g_;
    RouteDest d_;
    // The tables' entries for block_size_ consecutive LIDs, LID-major (one row of switches per
    // LID): a walk reads one contiguous row instead of one cache line per switch. Destinations in
    // LID order load each block once.
    // With it, where each entry leads (hop(), 16-bit codes): the walk's next step without a look
    // into the graph's 1 MB of port rows at 48k LIDs (the load reads them a switch at a time).
    uint32_t block_size_;
    std::vector<uint8_t> block_;
    std::vector<uint16_t> hops_;  // empty: kNarrow switches or more, hop() asks the graph
    uint32_t block_first_ = UINT32_MAX;
    const uint8_t* row_ = nullptr;
    uint32_t gen_ = 0;
    // Per switch, the generation its verdict belongs to beside the verdict: one load per lookup
    // (the walk's loop and every verdict() of the validation).
    struct Memo {
        uint32_t stamp = 0;
        int32_t verdict = 0;
    };
    std::vector<Memo> memo_;
    std::vector<int32_t> end_;
    std::vector<int32_t> walk_, settled_;
};

// DestWalk::settle's count of table_route() over the switches with a table.
struct DestWalk::TableRoutes {
    static constexpr int32_t kHops = 16;
    static constexpr size_t kLanes = 4;  // consecutive switches count into different lanes
    uint32_t routed[kLanes][kHops] = {};  // by cables to the CA (below kHops)
    uint32_t unrouted = 0, broken = 0;
    bool complete = false;  // every switch was settled, no route of kHops or more
    // Routes of `hops` cables (< kHops), the lanes added up.
    uint32_t routed_at(int32_t hops) const {
        uint32_t n = 0;
        for (const auto& lane : routed) n += lane[hops];
        return n;
    }
};

// What the table of `sw` (a switch with a table) does with the walk's destination: no entry
// there (unrouted), a route of `hops` cables to the CA (routed), a dead end or loop (broken), or
// a walk into a switch without a table (unverified). The one rule of lft_paths (lft.h) and of the
// route validation's switch routes (route_check.h).
enum class TableRoute { unrouted, routed, broken, unverified };
inline TableRoute table_route(DestWalk& w, int sw, int32_t& hops) {
    if (w.port(sw) == kLftNoPath) return TableRoute::unrouted;
    hops = w.verdict(sw);
    if (hops >= 0) return TableRoute::routed;
    return hops == kRouteNoTable ? TableRoute::unverified : TableRoute::broken;
}

// One route as the tables send it, hop by hop (what ibtracert prints): from a CA port (or a
// switch, src_port 0) to a destination LID.
struct RouteHop {
    NodeId node = kNoNode;  // a switch
    int in_port = 0;        // 0 at the source switch
    int out_port = 0;       // kLftNoPath when the table has no entry
};
struct RouteTrace {
    NodeId src = kNoNode;
    int src_port = 0;
    uint32_t lid = 0;          // the destination LID
    NodeId dst = kNoNode;      // who owns it (kNoNode: nobody)
    int dst_port = 0;          // its port (0 for a switch)
    std::vector<RouteHop> hops;
    bool arrived = false;
    std::string why;           // when not arrived: "leaf01 has no LFT entry for LID 7", ...
};
// `name(n)` gives a node's display name for `why`.
RouteTrace trace_route(const RouteGraph& g, NodeId src, int src_port, uint32_t lid,
                       const std::vector<std::string>& names);

}  // namespace ibf
