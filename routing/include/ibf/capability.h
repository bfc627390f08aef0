// Links that run below what both their ends can do, without a plan: `ibfabric analyze` and the
// daemon's live analysis (docs/analysis.md, "Links below capability"). Pure.
//
//   std::vector<ibf::Finding> fs = ibf::capability_findings(fabric, analysis.names);
//
// A link is below capability when its two ends run the same active rate and both support — and
// enable, where the enabled masks are known — a faster common width or speed (from iblinkinfo's
// "Could be" notes, ibdiagnet's port masks, or a live snapshot's PortInfo). Masks of 0 (unknown)
// are never guessed at: ibnetdiscover dumps carry none, so they give no such finding. A width of 8x
// or 12x is not held against a link of 4 lanes or fewer (CXP ports are rare, and ibsim claims 12x on
// every port): such a link is below capability only for its speed or for fewer than 4 lanes.
// A supported mask that does not contain the active width (speed) is not believed for the width (speed).
// One rate_below_capability finding per link (a = the switch end), except that `group_min` or
// more links of one switch with the same active and possible rate become one finding for that
// switch (a = the switch, port 0; the message lists the ports): a shared cause (the switch's port
// speed configuration or firmware) is likelier than that many bad cables.
#pragma once

#include <string>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"

namespace ibf {

struct CapabilityOptions {
    int group_min = 4;  // links of one switch sharing active and possible rate that become one finding
};

// The best rate both ports support and enable (where known); the active rate when nothing faster
// is known. Only meaningful when both ports run the same known active rate.
Rate best_common_rate(const Port& a, const Port& b);

// `names`: a display name per NodeId (Analysis::names); node names when empty.
std::vector<Finding> capability_findings(const Fabric& f, const std::vector<std::string>& names,
                                         const CapabilityOptions& opt = {});

}  // namespace ibf
