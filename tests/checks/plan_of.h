// Test helper: a plan that expects exactly `f` (what config's plan_from_fabric does), built here so
// the check tests do not depend on ibf_config. `by_guid` false gives a name-only plan.
#pragma once

#include "ibf/fabric.h"
#include "ibf/plan.h"

namespace ibf::test {

inline Plan plan_of(const Fabric& f, bool by_guid = true, bool with_rate = true, bool with_mtu = true) {
    Plan p;
    p.source = "test";
    for (const Node& n : f.nodes()) {
        PlannedNode pn;
        pn.name = n.name;
        pn.type = n.type;
        if (by_guid) pn.guid = n.guid;
        else pn.hca = derive_hca(n.type, n.description);
        pn.num_ports = n.num_ports();
        p.nodes.push_back(pn);
    }
    for (const Link& l : f.links()) {
        PlannedLink pl;
        pl.a = {l.a, l.pa};
        pl.b = {l.b, l.pb};
        const Port& pa = *f.node(l.a).port(l.pa);
        if (with_rate && pa.rate().known()) pl.rate = pa.rate();
        if (with_mtu && pa.mtu_active) pl.mtu = pa.mtu_active;
        p.links.push_back(pl);
    }
    return p;
}

}  // namespace ibf::test
