// The live fat-tree analysis of the daemon: what `ibfabric analyze` says about a dump, said about
// every master snapshot, plus what only a live snapshot can tell — the routing engine OpenSM
// actually used (routing_fallback) and how evenly the switches' LFTs spread the hosts over the
// uplinks (lft_imbalance). Pure: no I/O, no clocks (the caller times it). Runs on the daemon's
// check thread next to ibf::check (docs/threading.md); served at GET /api/v1/analysis (docs/api.md).
//
//   ibf::LiveAnalysis la = ibf::analyze_live(snapshot, fabric);   // fabric: node-name-mapped copy or snapshot.fabric
//   la.findings;         // analysis findings + lft_imbalance + routing_fallback, sorted like check's
//   la.summary_json;     // analysis_to_json(per_switch=false) + "routing" + findings_to_json(findings)
//   la.switches_json();  // the per-switch array (analysis_to_json's "switches") + LFT loads per switch
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/analysis_result.h"
#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/lft.h"
#include "ibf/snapshot.h"

namespace ibf {

// The first engine of opensm.conf's routing_engine list ("ftree,minhop" -> "ftree"), lower case;
// "minhop" (OpenSM's default) when nothing is configured.
std::string first_configured_engine(const std::string& configured);

// The routing_fallback finding when the engine OpenSM used is not the first configured one
// (e.g. ftree configured, minhop used: ftree refused the topology). nullopt when they agree, when
// the used engine is unknown (""), or when nothing is configured (the default is minhop).
std::optional<Finding> routing_fallback_finding(const Snapshot& s, const Fabric& f);

// The whole live analysis. `f` is the fabric to analyze (the snapshot's, or a copy with the
// node-name-map applied); LFTs and routing engines come from `s`. `plan_names`: per NodeId, the
// plan's name of the node ("" = none; ibf::plan_names in checks/identity.h), so the analysis names
// nodes as the check does. `declared`: the links cabled as the plan says (ibf::declared_links):
// what the plan declares is not an anomaly (routing/declared.h). Links below both ends'
// capability come from the snapshot's masks. `follow_tables`: routing.lft also gets where the
// tables lead (lft_paths: max_hops, hop_histogram, routes, routes_unrouted, routes_broken); false
// leaves that to the route validation (RouteCheck::switch_routes), which the daemon runs after the
// cabling findings are out: O(switches x LIDs), 4.8 s at 48k LIDs, is then off the critical path.
LiveAnalysis analyze_live(const Snapshot& s, const Fabric& f, const std::vector<std::string>& plan_names = {},
                          const std::vector<Link>& declared = {}, bool follow_tables = true);

// What analyze_live made of the last sweep's fabric and tables, kept for a sweep in which only
// tables changed (a re-route; the daemon's CheckMemo).
struct LiveAnalysisKeep {
    Analysis analysis;                       // analyze(f) with the plan's names and declared links
    nlohmann::json summary;                  // analysis_to_json(f, analysis, false)
    std::vector<int> row_of_table;           // per table: its switch's index in LiveAnalysis::switches (-1 none)
    LftBalanceKeep lft;                      // the last sweep's balance per table
    std::shared_ptr<const LiveAnalysis> last;  // what that call gave (null: nothing kept)
};

// analyze_live, keeping what it made in `keep`. Nothing kept: analysed in full. Something kept:
// the caller vouches that `f`, `plan_names`, `declared`, the snapshot's routing engines and SM
// are the kept call's (a re-route); then, when the tables are the same switches' in the same
// order, the fabric's analysis and JSON are reused and only the changed tables' LFT balance is
// counted again (O(changed tables x LIDs); the other switches' JSON is shared). Either way the
// result is what analyze_live without `keep` gives.
std::shared_ptr<const LiveAnalysis> analyze_live(const Snapshot& s, const Fabric& f, const std::vector<std::string>& plan_names,
                                                 const std::vector<Link>& declared, bool follow_tables, LiveAnalysisKeep& keep);

}  // namespace ibf
