// The live fat-tree analysis of the daemon: what `ibfabric analyze` says about a dump, said about
// every master snapshot, plus what only a live snapshot can tell — the routing engine OpenSM
// actually used (routing_fallback) and how evenly the switches' LFTs spread the hosts over the
// uplinks (lft_imbalance). Pure: no I/O, no clocks (the caller times it). Runs on the daemon's
// check thread next to ibf::check (docs/threading.md); served at GET /api/v1/analysis (docs/api.md).
//
//   ibf::LiveAnalysis la = ibf::analyze_live(snapshot, fabric);   // fabric: node-name-mapped copy or snapshot.fabric
//   la.findings;         // analysis findings + lft_imbalance + routing_fallback, sorted like check's
//   la.summary_json;     // analysis_to_json(per_switch=false) + "routing" + findings_to_json(findings)
//   la.switches_json;    // the per-switch array (analysis_to_json's "switches") + LFT loads per switch
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/snapshot.h"

namespace ibf {

struct LiveAnalysis {
    std::vector<Finding> findings;
    nlohmann::json summary_json = nlohmann::json::object();
    nlohmann::json switches_json = nlohmann::json::array();
    bool routing_fallback = false;
    int lft_switches = 0;            // switches with an exported LFT (0: not exported)
    int lft_imbalanced = 0;          // switches with an lft_imbalance finding
    std::vector<int> tier_of;        // per NodeId: 1 leaf, 2 spine, ...; 0 hosts and unknown (Analysis::tier_of)
    std::vector<std::string> names;  // per NodeId: the display name (ibf::NameBook; Analysis::names)
};

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
// nodes as the check does.
LiveAnalysis analyze_live(const Snapshot& s, const Fabric& f, const std::vector<std::string>& plan_names = {});

}  // namespace ibf
