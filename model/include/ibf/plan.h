// The declared topology ("plan"): the nodes and cables an administrator expects.
//
// Produced by config/ (YAML plan files, compact fat-tree or explicit cables) or from a
// known-good dump (checks/golden.h); consumed by the check engine (checks/) and the lab (lab/).
// Pure data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ibf/fabric.h"

namespace ibf {

// Where a plan element was declared, so findings and errors can point back at it.
struct SourceLoc {
    std::string file;
    int line = 0;    // 1-based; 0 = unknown
    int column = 0;  // 1-based; 0 = unknown
};

// A node as the plan names it. Identity: by GUID when `guid` is set, else by name (and HCA for
// hosts with several adapters: name "gpu01", hca "mlx5_1").
struct PlannedNode {
    std::string name;
    std::string hca;               // CAs only; "" = any / the only one
    std::optional<Guid> guid;
    NodeType type = NodeType::Unknown;
    int num_ports = 0;             // 0 = not declared
    std::string tier;              // "leaf", "spine", "hosts", ... as declared ("" for explicit cables)
    SourceLoc where;
};

struct PlannedEnd {
    size_t node = 0;  // index into Plan::nodes
    int port = 0;
};

struct PlannedLink {
    PlannedEnd a, b;
    std::string label;             // cable label, "" = none
    std::optional<Rate> rate;      // expected active rate; a half may be Unknown (width only, speed only)
    std::optional<int> mtu;        // expected MTU in bytes
    SourceLoc where;
};

// What the check leaves out (`scope:` in a YAML plan, docs/plan.md).
struct PlanScope {
    bool ignore_hosts = false;             // `hosts: ignore`: CAs the plan does not name are no findings
    std::vector<std::string> ignore;       // `ignore:` shell patterns (*, ?, [..]) on node names: left out
    SourceLoc where;
};

struct Plan {
    std::vector<PlannedNode> nodes;
    std::vector<PlannedLink> links;
    std::string source;            // file it came from, for messages
    std::string node_name_map;     // `node_name_map:` path as written in a YAML plan ("" = none);
                                   // the caller resolves it (relative to the plan) and loads it
    PlanScope scope;
};

}  // namespace ibf
