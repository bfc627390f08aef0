// The daemon's web page (GET / and /ui) and its picture (GET /ui/fabric.svg): the fabric it
// believes in drawn by tier with the current findings in red (draw/), the findings table, the SM
// states, and the links whose error counters counted, worst first (counter_panel.h), or "N ports
// counted, no errors", or a clear "no counter data" (docs/api.md, "The page"). Built on the io
// thread from ControllerState at request time; pure (time passed in).
//
//   std::string html = ibf::ui_page_html(state, now_ms, true);
//   std::string svg = ibf::ui_fabric_svg(state, now_ms);   // "" when there is no fabric yet
#pragma once

#include <cstdint>
#include <string>

#include "ibf/controller_state.h"
#include "ibf/draw.h"

namespace ibf {

// The picture's input for the current fabric: tiers and names (ibf::NameBook: plan names,
// node-name-map) from the live analysis of that sweep (else analyzed here), and the findings at
// `now_ms` (the check's, link_flapping and the SMs' own; the analysis findings too when no plan is
// configured). Empty (fabric null) before the first snapshot.
draw::DrawInput ui_draw_input(const ControllerState& st, int64_t now_ms);

std::string ui_fabric_svg(const ControllerState& st, int64_t now_ms);
std::string ui_page_html(const ControllerState& st, int64_t now_ms, bool topology_configured);

}  // namespace ibf
