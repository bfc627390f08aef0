// The plan's `scope:`: what the check leaves out (scope.h).
#include "scope.h"

#include "ibf/declared_links.h"

#include <fnmatch.h>

#include <algorithm>

namespace ibf::detail {
namespace {

bool ignored_name(const PlanScope& s, const std::string& name) {
    if (name.empty()) return false;
    return std::any_of(s.ignore.begin(), s.ignore.end(),
                       [&](const std::string& p) { return ::fnmatch(p.c_str(), name.c_str(), 0) == 0; });
}

bool is_ca(const Fabric& f, Guid g) {
    auto id = g ? f.find(g) : std::nullopt;
    return id && f.node(*id).type == NodeType::CA;
}

}  // namespace

std::vector<Finding> apply_plan_scope(const Plan& plan, const Fabric& actual, std::vector<Finding> fs) {
    const PlanScope& s = plan.scope;
    if (!s.ignore_hosts && s.ignore.empty()) return fs;
    std::erase_if(fs, [&](const Finding& f) {
        if (s.ignore_hosts && f.kind == FindingKind::unexpected_node && is_ca(actual, f.a.guid)) return true;
        return ignored_name(s, f.a.name) || ignored_name(s, f.b.name);
    });
    return fs;
}

}  // namespace ibf::detail

namespace ibf {

std::vector<Link> declared_links(const Plan& plan, const Fabric& f, const NodeMatch& m) {
    std::vector<Link> out;
    for (const PlannedLink& l : plan.links) {
        if (l.a.node >= m.resolved.size() || l.b.node >= m.resolved.size()) continue;
        const NodeId a = m.resolved[l.a.node], b = m.resolved[l.b.node];
        if (a == kNoNode || b == kNoNode) continue;
        const Port* pa = f.node(a).port(l.a.port);
        if (!pa || pa->peer != b || pa->peer_port != l.b.port) continue;
        out.push_back({a, static_cast<uint8_t>(l.a.port), b, static_cast<uint8_t>(l.b.port)});
    }
    return out;
}

}  // namespace ibf
