// A small plan built in code: 2 leaves, 1 spine, 2 parallel 4xHDR cables per leaf, 2 hosts per leaf.
#pragma once

#include "ibf/plan.h"

namespace ibf::test {

inline Plan small_plan() {
    Plan p;
    p.source = "small.yaml";
    auto add = [&](std::string name, NodeType t, int ports, std::string hca = {}) {
        PlannedNode n;
        n.name = std::move(name);
        n.type = t;
        n.num_ports = ports;
        n.hca = std::move(hca);
        n.where = {"small.yaml", static_cast<int>(p.nodes.size()) + 1, 3};
        p.nodes.push_back(n);
        return p.nodes.size() - 1;
    };
    size_t spine = add("spine01", NodeType::Switch, 36);
    size_t leaf1 = add("leaf01", NodeType::Switch, 36);
    size_t leaf2 = add("leaf02", NodeType::Switch, 36);
    size_t h1 = add("node001", NodeType::CA, 1);
    size_t h2 = add("node002", NodeType::CA, 1, "mlx5_0");
    size_t h3 = add("node003", NodeType::CA, 1);
    size_t h4 = add("node004", NodeType::CA, 0);
    auto link = [&](size_t a, int pa, size_t b, int pb, Rate r) {
        PlannedLink l;
        l.a = {a, pa};
        l.b = {b, pb};
        l.rate = r;
        l.where = {"small.yaml", 40 + static_cast<int>(p.links.size()), 5};
        p.links.push_back(l);
    };
    Rate hdr{Width::X4, Speed::HDR};
    link(leaf1, 19, spine, 1, hdr);
    link(leaf1, 20, spine, 2, hdr);
    link(leaf2, 19, spine, 3, hdr);
    link(leaf2, 20, spine, 4, hdr);
    link(leaf1, 1, h1, 1, hdr);
    link(leaf1, 2, h2, 1, hdr);
    link(leaf2, 1, h3, 1, hdr);
    link(leaf2, 2, h4, 1, Rate{Width::X4, Speed::EDR});
    return p;
}

}  // namespace ibf::test
