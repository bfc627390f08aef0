// The port LIDs of a fabric, sorted by port GUID (ibf/port_lids.h).
#include "ibf/port_lids.h"

#include <algorithm>

namespace ibf {

namespace {

// `later` (a port after `into`'s ports in node and port order, same GUID) folded into `into`.
void fold(PortLids::Entry& into, const PortLids::Entry& later) {
    if (later.lid) into.lid = later.lid;
    if (!into.first_lid) into.first_lid = later.first_lid;
}

}  // namespace

const PortLids::Entry* PortLids::find(Guid g) const {
    auto it = std::lower_bound(entries.begin(), entries.end(), g, [](const Entry& e, Guid x) { return e.guid < x; });
    return it != entries.end() && it->guid == g ? &*it : nullptr;
}

PortLids port_lids(const Fabric& f) {
    std::vector<PortLids::Entry> v;
    v.reserve(f.size());
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || p.guid == 0) continue;
            const PortLids::Entry e{p.guid, p.lid && (n.type != NodeType::Switch || p.num == 0) ? p.lid : uint16_t(0),
                                    p.lid};
            if (!v.empty() && v.back().guid == p.guid)
                fold(v.back(), e);  // a switch's ports 1..N (its port 0's GUID)
            else
                v.push_back(e);
        }
    // Stable: the ports of a duplicated GUID keep their node and port order for fold().
    std::stable_sort(v.begin(), v.end(), [](const PortLids::Entry& a, const PortLids::Entry& b) { return a.guid < b.guid; });
    PortLids out;
    out.entries.reserve(v.size());
    for (const PortLids::Entry& e : v) {
        if (!out.entries.empty() && out.entries.back().guid == e.guid)
            fold(out.entries.back(), e);
        else
            out.entries.push_back(e);
    }
    return out;
}

std::vector<PortLidMove> lid_moves(const PortLids& before, const PortLids& after) {
    std::vector<PortLidMove> out;
    auto a = after.entries.begin();
    for (const PortLids::Entry& b : before.entries) {
        if (!b.lid) continue;
        while (a != after.entries.end() && a->guid < b.guid) ++a;
        if (a == after.entries.end()) break;
        if (a->guid == b.guid && a->lid && a->lid != b.lid) out.push_back({b.guid, b.lid, a->lid});
    }
    return out;
}

}  // namespace ibf
