// Slurm hostlists: "node[001-018,020],gpu[1-4]" from and to host names, as Slurm writes them in
// topology.conf and accepts on its command lines. Pure.
//
//   hostlist_compress({"node001", "node002", "node003", "gpu1"})  -> "gpu1,node[001-003]"
//   hostlist_expand("node[01-03],login")                          -> {"node01", "node02", "node03", "login"}
//
// Compression groups names by the text before their trailing number and by that number's width
// when it has leading zeros ("node009" and "node010" are one group, "node9" and "node10" another;
// a number of that width without leading zeros joins it: "leaf09" and "leaf10" are "leaf[09-10]"),
// sorts numerically and merges consecutive numbers into ranges; names without a trailing number
// are kept as they are. Groups come out sorted by prefix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ibf {

std::string hostlist_compress(std::vector<std::string> names);

// One bracket per name part ("rack[1-2]-node[01-04]" is refused). ibf::InputError (naming
// `source`, column) for an unbalanced bracket, a bad or reversed range, or more than 1,000,000 names.
std::vector<std::string> hostlist_expand(std::string_view list, const std::string& source = "hostlist");

}  // namespace ibf
