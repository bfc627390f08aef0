// What the analysis leaves to the plan, and what it says once for a redundant pair
// (docs/analysis.md, "With a plan" and "Mirrored attachments"). Pure; analyze() calls both.
//
//   std::vector<ibf::Link> planned = ...;   // links cabled as the plan says (ibf::check's LinkMatch)
//   fs = ibf::drop_declared(std::move(fs), fabric, planned);   // a host the plan puts on a spine is no anomaly
//   fs = ibf::group_mirrored(std::move(fs), fabric);           // mgmt01/02 on spine01/35,36 and spine02/35,36: one finding
#pragma once

#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"

namespace ibf {

// Drops findings whose two ends are the two ends of a declared link (either order).
std::vector<Finding> drop_declared(std::vector<Finding> fs, const Fabric& f, const std::vector<Link>& declared);

// host_misplaced and host_on_uplink_port findings whose host (by node name, so a host's two
// adapters count as one) sits on the same port number of two or more switches, or whose hosts of
// one role (the name without its trailing number) sit one per switch on the same port number and
// are numbered in a row (pg-slurm-mgmt001 on sp80/33, pg-slurm-mgmt002 on sp79/33), are mirrored
// attachments: the findings that share one set of switches become one finding of severity info
// (a, b = the first two switches, port 0; the message lists every host and port; `members` the
// findings it stands for). Others stay.
std::vector<Finding> group_mirrored(std::vector<Finding> fs, const Fabric& f);

}  // namespace ibf
