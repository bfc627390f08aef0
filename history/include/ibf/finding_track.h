// When each finding opened and closed: a stable identity per finding (kind + its ends) and the
// transitions between one sweep's findings and the set still open. Pure.
//
//   finding_identity(f) == "miswired leaf03/19 spine01/6"     // ends sorted: either order matches
//   FindingTransitions t = finding_transitions(open_ids, sweep_findings);
//   // t.opened: findings not open before (first of each identity); t.closed: identities gone
//
// An end is the node's name, or its GUID when it has none, and "/port" when the finding is about
// a port; a finding without a b end has one end. Severity and message are not part of the
// identity: a rate that degrades further stays one open finding.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ibf/finding.h"

namespace ibf {

std::string finding_identity(const Finding& f);

struct FindingTransitions {
    std::vector<Finding> opened;       // in the order of the sweep's findings, one per identity
    std::vector<std::string> closed;   // sorted
};

FindingTransitions finding_transitions(const std::set<std::string>& open, const std::vector<Finding>& now);

}  // namespace ibf
