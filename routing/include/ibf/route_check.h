// Routing validation from the switches' LFTs: does every CA reach every CA, without loops, credit
// loops or detours, and which routes cross a bad link? Pure: no I/O (docs/analysis.md, "Routing
// validation").
//
//   ibf::RouteGraph g(fabric, snapshot.lfts);
//   ibf::RouteCheckOptions opt;
//   opt.degraded = ibf::degraded_links(fabric, analysis.findings);   // rate_outlier, port_errors, ...
//   ibf::RouteCheck rc = ibf::check_routes(g, analysis, opt);
//   rc.findings;   // route_unreachable, route_loop, credit_loop, route_non_minimal, route_via_degraded_link
//   rc.port_pairs[g.channel(sw, port)];   // CA->CA pairs routed out of that switch port
//
// A pair is (source CA port, destination LID): every linked CA port cabled to a switch is a source,
// every LID of such a port (base .. base + 2^LMC - 1) a destination; a port is not its own source.
// Cost: one BFS over the switch graph per destination switch (kept: the distances for
// route_non_minimal, the order to settle in), then per destination LID one pass over the switches
// in that order that settles the minimal routes, and a memoised walk for the rest (route_graph.h,
// DestWalk::settle); O(LIDs x switches).
//
// Findings, one per fault rather than per pair (each with the pair count and a sample pair):
//   route_unreachable   per switch where routes end and why (no entry / port 0 / unlinked port / a
//                       wrong CA); routes into a switch without a table are "unverified", no finding
//   route_loop          per forwarding cycle of switches
//   credit_loop         per cycle (strongly connected set) of the channel dependency graph: channel
//                       (t -> u) depends on (u -> v) when a routed pair goes t -> u -> v. SL2VL tables
//                       are not exported, so every route is taken to use one VL (VL0); the message says so
//   route_non_minimal   per source switch whose routes are longer than the shortest switch path
//   route_via_degraded_link  per link in RouteCheckOptions::degraded that routed pairs cross
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/analysis.h"
#include "ibf/finding.h"
#include "ibf/lft.h"
#include "ibf/route_graph.h"

namespace ibf {

// A link to report routes over: either end (node, port), and why it is bad ("1xEDR, plan says
// 4xEDR (rate_mismatch)").
struct DegradedLink {
    NodeId node = kNoNode;
    int port = 0;
    std::string why;
    friend bool operator==(const DegradedLink&, const DegradedLink&) = default;
};

// The links the findings are about: rate_mismatch, rate_below_capability, rate_outlier,
// link_flapping, port_errors (endpoint a, else b, found by GUID and port). One entry per link
// (the first finding's reason, the others' kinds appended).
std::vector<DegradedLink> degraded_links(const Fabric& f, const std::vector<Finding>& findings);

struct RouteCheckOptions {
    std::vector<DegradedLink> degraded;
    bool non_minimal = true;  // detours (the BFS per destination switch runs either way: its order)
    bool credit_loops = true;
    // Also follow every switch's route to every CA LID in the same pass (RouteCheck::switch_routes,
    // what lft_paths computes): the daemon's live analysis leaves it to this validation, off the
    // critical path and incremental.
    bool switch_routes = true;
    // Threads for a full validation (incremental ones use the caller's alone): the destinations
    // split in runs of 64-LID blocks, one State each, merged. Any count gives the same result; at
    // most one per min_dests_per_thread destinations. Neither is part of route_inputs_hash.
    unsigned threads = 1;
    size_t min_dests_per_thread = 1024;  // below, threads cost more than they save
    // Set (by another thread): the validation stops within 64 destination LIDs per thread and
    // throws RouteCheckCancelled (a daemon that is stopping: seconds at 48k LIDs otherwise).
    const std::atomic<bool>* cancel = nullptr;
};

struct RouteCheckCancelled : std::runtime_error {
    RouteCheckCancelled() : std::runtime_error("route validation cancelled") {}
};

struct RouteCheck {
    long pairs = 0;        // (source CA port, destination LID) pairs looked at
    long routed = 0;       // ... that arrive
    long unreachable = 0;  // ... that end in a dead end or a missing entry
    long looping = 0;      // ... caught in a forwarding loop
    long unverified = 0;   // ... that reach a switch without a table
    long non_minimal = 0;  // routed pairs longer than the shortest path
    int max_hops = 0;      // longest routed pair, in cables from CA to CA
    std::vector<long> hop_histogram;  // index = cables CA to CA, value = routed pairs
    int credit_loops = 0;  // cycles (strongly connected sets) in the channel dependency graph
    std::vector<long> port_pairs;     // per RouteGraph::channel: routed pairs leaving that switch port
    std::vector<Finding> findings;    // sorted by kind, then a.name
    // With RouteCheckOptions::switch_routes: equal to lft_paths(fabric, lfts) (from every switch
    // with a table, not only the CAs' switches); else nullopt.
    std::optional<LftPaths> switch_routes;
};

RouteCheck check_routes(const RouteGraph& g, const Analysis& a, const RouteCheckOptions& opt = {});

// What the validation depends on, hashed: every node's GUID, type and name, every port's LID, LMC
// and peer, every table (by its SwitchLft::hash when set, else its bytes), the degraded links.
// Equal hashes: the same RouteCheck.
uint64_t route_inputs_hash(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts,
                           const RouteCheckOptions& opt);

// The validation kept between sweeps, re-validating only what changed (docs/analysis.md,
// "Incremental validation"):
//   - the same fabric (nodes, names, ports, LIDs, cables: route_inputs_hash without the tables),
//     the same degraded links and options, the same switches with a table: only the destination
//     LIDs whose entry changed in some table are walked again, once over the last sweep's tables
//     to take their pairs, counts and channel dependencies out, once over the new ones to put them
//     back. A destination's routes read nothing but its own entry of every table and that fabric,
//     so every other destination's share is still what a full validation would find. A table
//     whose bytes are the last one's (the same shared buffer: snapshot.h) or whose SwitchLft::hash
//     equals the last one's is not read; the changed ones are compared entry by entry with the
//     last tables, kept here. More than half the destinations changed: in full.
//   - anything else changed: in full.
// The result equals check_routes(RouteGraph(f, lfts), a, opt) (route_check_test, randomized).
// Memory: the per-port counts and the last tables, kept by reference (SwitchLft shares its bytes:
// no copy of the snapshot's 184 MB at 48k LIDs; a table that changed keeps its old bytes alive
// until the next check).
//   ibf::RouteCheckCache cache;   // per SM, on the thread that runs the analysis
//   const ibf::RouteCheck& rc = cache.check(fabric, analysis, snapshot.lfts, opt);
class RouteCheckCache {
public:
    enum class Mode { full, incremental, unchanged };
    RouteCheckCache();
    ~RouteCheckCache();
    RouteCheckCache(RouteCheckCache&&) noexcept;
    RouteCheckCache& operator=(RouteCheckCache&&) noexcept;

    // RouteCheckCancelled (opt.cancel): nothing is kept, the next check is in full.
    const RouteCheck& check(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts,
                            const RouteCheckOptions& opt = {});
    Mode last_mode() const { return mode_; }
    bool last_was_cached() const { return mode_ == Mode::unchanged; }
    size_t last_revalidated() const { return revalidated_; }  // destination LIDs walked by the last check
    size_t last_tables_changed() const { return tables_changed_; }

    struct State;  // route_check.cpp

private:
    const RouteCheck& run(const Fabric& f, const Analysis& a, const std::vector<SwitchLft>& lfts, const RouteCheckOptions& opt);
    std::unique_ptr<State> state_;
    Mode mode_ = Mode::full;
    size_t revalidated_ = 0, tables_changed_ = 0;
};
std::string_view to_string(RouteCheckCache::Mode m);  // "full", "incremental", "unchanged"

// {"pairs", "routed", "unreachable", "looping", "unverified", "non_minimal", "max_hops",
//  "hop_histogram", "credit_loops", "vl": "VL0 only (no SL2VL)"} (docs/analysis.md; no findings),
// and with RouteCheckOptions::switch_routes "switch_routes": switch_routes_json(rc.switch_routes).
nlohmann::json route_check_json(const RouteCheck& rc);
// {"max_hops", "hop_histogram", "routes", "routes_unrouted", "routes_broken"}: the live analysis'
// routing.lft members that come from following the tables (docs/api.md).
nlohmann::json switch_routes_json(const LftPaths& p);

}  // namespace ibf
