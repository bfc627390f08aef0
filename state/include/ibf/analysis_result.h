// What the live fat-tree analysis of one master snapshot found, as ControllerState keeps and the
// API serves it (GET /api/v1/analysis). Data only: the analysis itself is the pipeline's
// (ibf/live_analysis.h, analyze_live()), run on the check thread.
//
//   std::shared_ptr<const ibf::LiveAnalysis> la = state.analysis();
//   la->summary_json;   la->tier_of[node_id];   la->names[node_id];   la->switches_json();
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/finding.h"

namespace ibf {

struct LiveAnalysis {
    std::vector<Finding> findings;
    nlohmann::json summary_json = nlohmann::json::object();
    // The per-switch array, one shared, immutable object per switch: a sweep that re-routed some
    // tables shares the other switches' with the last sweep's analysis (pipeline/live_analysis.h).
    std::vector<std::shared_ptr<const nlohmann::json>> switches;
    bool routing_fallback = false;
    int lft_switches = 0;            // switches with an exported LFT (0: not exported)
    int lft_imbalanced = 0;          // switches with an lft_imbalance finding
    std::vector<int> tier_of;        // per NodeId: 1 leaf, 2 spine, ...; 0 hosts and unknown (Analysis::tier_of)
    std::vector<std::string> names;  // per NodeId: the display name (ibf::NameBook; Analysis::names)

    // `switches` as one JSON array (GET /api/v1/analysis?per_switch=1).
    nlohmann::json switches_json() const {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& sw : switches) a.push_back(*sw);
        return a;
    }
};

}  // namespace ibf
