// finding_identity / finding_transitions.
#include "ibf/finding_track.h"

#include <utility>

namespace ibf {
namespace {

std::string end_id(const Endpoint& e) {
    std::string s = !e.name.empty() ? e.name : e.guid ? guid_hex(e.guid) : "";
    if (e.port) s += "/" + std::to_string(e.port);
    return s;
}

}  // namespace

std::string finding_identity(const Finding& f) {
    std::string a = end_id(f.a), b = end_id(f.b);
    if (a.empty()) std::swap(a, b);
    if (!b.empty() && b < a) std::swap(a, b);
    std::string id(to_string(f.kind));
    if (!a.empty()) id += " " + a;
    if (!b.empty()) id += " " + b;
    return id;
}

FindingTransitions finding_transitions(const std::set<std::string>& open, const std::vector<Finding>& now) {
    FindingTransitions t;
    std::set<std::string> seen;
    for (const Finding& f : now) {
        std::string id = finding_identity(f);
        if (!seen.insert(id).second) continue;
        if (!open.count(id)) t.opened.push_back(f);
    }
    for (const std::string& id : open)
        if (!seen.count(id)) t.closed.push_back(id);
    return t;
}

}  // namespace ibf
