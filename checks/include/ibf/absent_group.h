// Absent hosts of one switch as one finding: when a rack is powered off, the host_absent findings
// of every host cabled (in the plan) to the same switch or switches become one host_absent finding
// that lists them (members: each host's own finding, complete), like the grouped identity_changed.
// Pure. Used by the check (check.cpp) and again by apply_waivers, which splits a group so that a
// host in maintenance is waived alone and regroups the rest.
//
//   group_absent_hosts({host_absent node001 -- leaf03/1, ... node018 -- leaf03/18, missing_link ...})
//     -> {host_absent "18 hosts of leaf03 are absent (node[001-018]) ...", missing_link ...}
#pragma once

#include <cstddef>
#include <vector>

#include "ibf/finding.h"

namespace ibf {

// This many absent hosts on the same switches are one finding; fewer stay single.
inline constexpr size_t kAbsentGroupMin = 3;

// `fs` with every single host_absent grouped by the switches its planned cables go to (a host on
// two leaves groups with the hosts on the same two); a group takes the place of its first member,
// the other findings keep their order. A group in `fs` is left as it is.
std::vector<Finding> group_absent_hosts(std::vector<Finding> fs);

// A group's members, or `f` itself when it is no group of absent hosts.
std::vector<Finding> ungroup_absent_hosts(Finding f);

}  // namespace ibf
