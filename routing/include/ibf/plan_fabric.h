// The fabric a plan describes, as if every planned cable were up at its planned rate: what the
// fat-tree analysis and `topology slurm --plan` read when there is no fabric yet (before the
// cabling, or to publish the intended topology). The converse of plan_infer.h. Pure: no I/O.
//
//   ibf::Fabric f = ibf::plan_fabric(plan);       // InputError (plan file:line) for a bad cable
//   std::string conf = ibf::slurm_topology(f, ibf::analyze(f));
//
// Nodes: one per planned node, in plan order (NodeId = index into Plan::nodes). A switch's
// NodeDescription is its plan name; a host's "<name> <hca>" (just "<name>" when the plan names no
// HCA), so Node::name is the plan name and the adapters of a dual-rail host share it. A node of
// unknown type is a CA when it has an HCA or at most one cable and one port, else a switch.
// GUIDs: the plan's, else made up (0x0fab000000000001 upwards, skipping planned ones). Ports:
// the declared count, else the highest cabled one. Every cable is Active/LinkUp at its planned rate
// (Unknown where the plan gives none); no LIDs.
#pragma once

#include "ibf/fabric.h"
#include "ibf/plan.h"

namespace ibf {

Fabric plan_fabric(const Plan& plan);

}  // namespace ibf
