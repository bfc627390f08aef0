// What the live fat-tree analysis of one master snapshot found, as ControllerState keeps and the
// API serves it (GET /api/v1/analysis). Data only: the analysis itself is the pipeline's
// (ibf/live_analysis.h, analyze_live()), run on the check thread.
//
//   std::shared_ptr<const ibf::LiveAnalysis> la = state.analysis();
//   la->summary_json;   la->tier_of[node_id];   la->names[node_id];
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/finding.h"

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

}  // namespace ibf
