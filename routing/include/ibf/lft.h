// LFT balance: how evenly a switch's linear forwarding table spreads the compute hosts over its
// uplinks. Input is plain data (what the OpenSM plugin will export): per switch, the egress port
// for every destination LID. Pure: no I/O.
//
//   std::vector<ibf::SwitchLft> lfts = ...;           // {switch node GUID, port_by_lid}
//   ibf::LftReport r = ibf::lft_balance(fabric, ibf::analyze(fabric), lfts);
//   for (const ibf::LftBalance& b : r.switches) ...   // routes per uplink port
//   r.findings;                                       // lft_imbalance, one per unbalanced switch
//
// Counted: destination LIDs of compute-host ports (base LID .. base + 2^LMC - 1) that the switch
// sends up (to a port of one of its uplink bundles). A switch is unbalanced when the most and
// least loaded uplinks differ by at least `min_spread` routes and by more than `tolerance` x the
// mean. ftree on an intact tree differs by at most 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/snapshot.h"

namespace ibf {

// SwitchLft {switch_guid, port_by_lid} is defined in model/include/ibf/snapshot.h (the plugin
// exports it in ibf::Snapshot::lfts).

struct PortLoad {
    int port = 0;
    NodeId peer = kNoNode;  // the upper switch this port leads to
    int routes = 0;         // compute-host destination LIDs routed through this port
};

struct LftBalance {
    NodeId node = kNoNode;
    int tier = 0;
    std::vector<PortLoad> up_ports;  // every uplink port, ascending
    int min_routes = 0, max_routes = 0;
    double mean = 0;
    bool imbalanced = false;
};

struct LftOptions {
    double tolerance = 0.25;
    int min_spread = 2;
    // The routing engine that computed the tables (the snapshot's SmConf: OpenSM's routing_engine
    // as used, and as configured in opensm.conf). Both "" = not known (offline tables): imbalance is
    // reported and the message says the engine is unknown. An engine that does not aim at balanced
    // uplinks (minhop, OpenSM's default when none is configured) gets no lft_imbalance findings,
    // unless it is a fallback from a configured one that does (ftree, updn, dnup, sssp, dfsssp).
    std::string engine;
    std::string configured;
};

// True when tables from `engine` (configured: `configured`, first entry counts) should spread host
// routes evenly over a fat-tree's uplinks; see LftOptions. "" and "" (unknown) is true.
bool balance_expected(const std::string& engine, const std::string& configured);

struct LftReport {
    std::vector<LftBalance> switches;  // one per known switch with uplinks, in input order
    std::vector<Finding> findings;     // lft_imbalance
};

// Where the tables actually lead: every switch's route to every compute-host LID followed hop by
// hop through the other switches' tables. hops = cables from that switch to the host (1 = the
// host hangs off the switch). A route that meets "no path" (255) after the first switch, port 0,
// a port that does not exist or is not linked, a CA that is not the destination, or a loop is
// broken; "no path" at the first switch is unrouted. Switches without a table end a walk
// without a verdict (not counted). O(switches x host LIDs): one memoised walk per LID (route_graph.h).
struct LftPaths {
    int max_hops = 0;            // longest route (0: none followed)
    long routes = 0;             // (switch, host LID) pairs that reach the host
    long unrouted = 0;           // no path at the first switch
    long broken = 0;             // dead ends and loops
    std::vector<long> hop_histogram;  // index = hops, value = routes
    bool operator==(const LftPaths&) const = default;
};
// The route validation counts the same in its own pass (RouteCheck::switch_routes, route_check.h).
LftPaths lft_paths(const Fabric& f, const std::vector<SwitchLft>& lfts);

LftReport lft_balance(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const LftOptions& opt = {});

// What lft_balance made of each table of the last sweep, kept for the next one (the daemon's
// check thread, CheckMemo): a re-route changes some tables only, and only those are counted again.
// Valid only for the same fabric, analysis and options; the caller starts afresh (clear()) when
// any of them changes.
struct LftBalanceKeep {
    struct Table {
        Guid switch_guid = 0;
        uint64_t hash = 0;                 // lft_hash_of the table counted
        std::optional<LftBalance> balance; // nullopt: not a known switch with uplinks
        std::optional<Finding> finding;    // its lft_imbalance
    };
    std::vector<Table> tables;             // in the lfts' order
    std::vector<size_t> recounted;         // positions counted by the last call (the rest reused)
    void clear() { tables.clear(); recounted.clear(); }
};

// lft_balance, counting again only the tables whose switch or hash differ from `keep`'s at the
// same position (all of them when `keep` is empty), and leaving this sweep's in `keep`. Gives what
// lft_balance(f, a, lfts, opt) gives.
LftReport lft_balance(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const LftOptions& opt,
                      LftBalanceKeep& keep);

}  // namespace ibf
