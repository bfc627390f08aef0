// The plan's `scope:`: what the check leaves out (scope.h).
#include "scope.h"

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
