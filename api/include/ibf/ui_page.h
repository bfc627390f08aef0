// The daemon's web page (GET / and /ui) and its picture (GET /ui/fabric.svg): the fabric it
// believes in drawn by tier with the current findings in red (draw/), the findings table, the SM
// states, and the links whose error counters counted, worst first (counter_panel.h), or "N ports
// counted, no errors", or a clear "no counter data" (docs/api.md, "The page"). The page's text is
// built on the io thread from ControllerState at request time (linear in the findings shown, at
// most kUiMaxFindings); the picture, whose layout grows with the fabric, is drawn by the daemon on
// a thread of its own from a UiDrawJob and cached per check (ibfabricd passes it in). Pure (time
// passed in).
//
//   std::string html = ibf::ui_page_html(state, now_ms, true);
//   std::string svg = ibf::ui_fabric_svg(state, now_ms);   // "" when there is no fabric yet
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibf/controller_state.h"
#include "ibf/draw.h"

namespace ibf {

// The picture's input for the current fabric: tiers and names (ibf::NameBook: plan names,
// node-name-map) from the live analysis of that sweep (else analyzed here), and the findings at
// `now_ms` (the check's, link_flapping and the SMs' own; the analysis findings too when no plan is
// configured). Empty (fabric null) before the first snapshot.
draw::DrawInput ui_draw_input(const ControllerState& st, int64_t now_ms);

std::string ui_fabric_svg(const ControllerState& st, int64_t now_ms);
// Findings listed on the page and drawn in the picture; the rest are counted ("500 of 50306
// (every one: GET /api/v1/findings, ibfabric findings)").
inline constexpr size_t kUiMaxFindings = 500;

// What drawing the picture needs, taken on the io thread (references and at most kUiMaxFindings
// findings), drawn on any thread by ui_draw_svg().
struct UiDrawJob {
    std::shared_ptr<const Snapshot> snapshot;      // null: no fabric yet
    std::shared_ptr<const LiveAnalysis> analysis;  // of that sweep, else null (analyzed when drawn)
    std::vector<Finding> findings;
    std::string title;
};
UiDrawJob ui_draw_job(const ControllerState& st, int64_t now_ms);
std::string ui_draw_svg(const UiDrawJob& job);  // "" without a fabric

// `picture`: the SVG drawn elsewhere (null: drawn here, as the tests and the CLI do); "" shows
// `picture_note` instead (e.g. "the picture is being drawn"). The SM named MASTER is
// ControllerState::master(), the one verdict every reader shows.
std::string ui_page_html(const ControllerState& st, int64_t now_ms, bool topology_configured,
                         const std::string* picture = nullptr,
                         const std::string& picture_note = "");

}  // namespace ibf
