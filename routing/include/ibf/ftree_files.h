// Files for OpenSM's ftree routing engine, and a node-name-map, from an analysed fabric.
// Pure: returns the text; the caller writes the files.
//
//   ibf::Analysis a = ibf::analyze(fabric);
//   ibf::FtreeFiles files = ibf::ftree_files(fabric, a);
//   // files.root_guids -> root_guid_file  (opensm.conf: root_guid_file)
//   // files.cn_guids   -> cn_guid_file    (opensm.conf: cn_guid_file)
//   // files.node_name_map -> ib-node-name-map (node_name_map_name)
//
// root_guids: node GUIDs of the switches of the top tier (spines of a 2-level tree, cores of a
//   3-level one), one "0x%016x" per line, ascending.
// cn_guids: port GUIDs of the compute hosts' ports cabled to leaves, ascending. Aggregation nodes
//   and hosts cabled to spines or cores (storage, management) are left out: ftree then treats them
//   as non-compute nodes. Ports whose GUID is unknown (0) are skipped and counted.
// node_name_map: `0x<node guid> "<name>"` for every switch (display_name: "ib1", "spine-8098",
//   "sw01/L05/U1") and for every CA whose derived name is unique (its description as the fabric
//   reports it), sorted by tier and name; comments start with '#'.
#pragma once

#include <string>

#include "ibf/analysis.h"
#include "ibf/fabric.h"

namespace ibf {

struct FtreeFiles {
    std::string root_guids;
    std::string cn_guids;
    std::string node_name_map;
    int roots = 0, compute_ports = 0, skipped_ports = 0;
};

FtreeFiles ftree_files(const Fabric& f, const Analysis& a);

}  // namespace ibf
