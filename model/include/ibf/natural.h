// Natural string order, the one order every sorted output of ibfabric uses (findings, analysis,
// the drawing): digit runs compare by value, so "leaf2" < "leaf10". Pure.
//
//   ibf::natural_compare("leaf2", "leaf10") < 0;
//   std::sort(names.begin(), names.end(), ibf::natural_less);
//
// Ties: runs of equal value compare by their leading zeros, fewer first ("leaf1" < "leaf01"), so
// the order is strict and total: natural_compare(a, b) == 0 only when a == b. Other bytes compare
// as unsigned char.
#pragma once

#include <string_view>

namespace ibf {

// -1, 0 or 1.
int natural_compare(std::string_view a, std::string_view b);

inline bool natural_less(std::string_view a, std::string_view b) { return natural_compare(a, b) < 0; }

}  // namespace ibf
