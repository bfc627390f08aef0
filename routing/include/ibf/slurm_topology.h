// Slurm's topology.conf from the fat-tree analysis: the tree form (topology/tree: leaves with their
// hosts, higher tiers with the switches below them) and the block form (topology/block: one block
// per leaf group). Pure: no I/O.
//
//   std::string conf = ibf::slurm_topology(fabric, ibf::analyze(fabric), {.block = false, .source = "now.txt"});
//
// Tree: "SwitchName=leaf01 Nodes=node[001-018]" per leaf with compute hosts, then per higher tier
// "SwitchName=spine01 Switches=leaf[01-18]" (the switches one tier below it it is cabled to).
// Host names are SlurmTopologyOptions::host_names where given (the plan's names, as the daemon and
// `--plan` give them), else the nodes' names (node-name-map, else the first word of the
// NodeDescription), as Slurm's NodeName; a host cabled to several leaves (rails) is listed under each. Switch names are
// the display names with characters Slurm would split on (blank, ',', '[', ']', '=', '/') turned
// into '_' ("dir1/L12/U1" -> "dir1_L12_U1"). Switches with no tier (no path to hosts) are left out;
// compute hosts cabled to no leaf (a storage node on a spine) are named in a comment line instead.
// Block: leaves that reach the same set of switches one tier up form one group (a pod, or a
// 2-level tree's whole fabric); "BlockName=block01 Nodes=..." per group, in order of their first leaf.
#pragma once

#include <string>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/fabric.h"

namespace ibf {

struct SlurmTopologyOptions {
    bool block = false;
    std::string source;  // named in the header comment ("" = none)
    // Per NodeId, the host's Slurm NodeName ("" or past the end: Node::name), e.g. plan_names()
    // (identity.h) of a checked fabric.
    std::vector<std::string> host_names;
};

std::string slurm_topology(const Fabric& f, const Analysis& a, const SlurmTopologyOptions& opt = {});

}  // namespace ibf
