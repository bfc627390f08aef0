// Absent hosts of one switch as one finding (ibf/absent_group.h).
#include "ibf/absent_group.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ibf/hostlist.h"
#include "ibf/natural.h"

namespace ibf {
namespace {

// The switches a host's planned cables go to, sorted: "leaf03", "leaf03+leaf04" (dual rail).
std::string switches_of(const Finding& f) {
    std::set<std::string> names;
    for (const FindingLink& l : f.links)
        if (!l.planned.name.empty()) names.insert(l.planned.name);
    std::string key;
    for (const std::string& n : names) key += (key.empty() ? "" : "+") + n;
    return key;
}

bool single_absent(const Finding& f) { return f.kind == FindingKind::host_absent && f.members.empty(); }

Finding absent_group(const std::string& key, std::vector<Finding> g) {
    std::sort(g.begin(), g.end(), [](const Finding& x, const Finding& y) { return natural_compare(x.a.name, y.a.name) < 0; });
    std::vector<std::string> hosts;  // a host with two absent HCAs on these switches is one host
    for (const Finding& m : g)
        if (hosts.empty() || hosts.back() != m.a.name) hosts.push_back(m.a.name);
    const std::string list = hostlist_compress(hosts);
    std::string where = key;
    for (char& c : where)
        if (c == '+') c = ',';
    Finding fd;
    fd.kind = FindingKind::host_absent;
    fd.severity = g.front().severity;
    // The switch the hosts hang off (the first, for hosts on several): reports group under it.
    for (const FindingLink& l : g.front().links)
        if (l.planned.name == key.substr(0, key.find('+'))) fd.a = {l.planned.name, l.planned.guid, 0};
    fd.expected = std::to_string(hosts.size()) + " hosts";
    fd.actual = list;
    fd.message = std::to_string(hosts.size()) + " hosts of " + where + " are absent (" + list +
                 "; a rack powered off or drained?); if they are in maintenance: ibfabric maintenance add '" + list +
                 "' --until DATE --reason TEXT, else power them on and check their cables";
    for (Finding& m : g) {
        for (const FindingLink& l : m.links) fd.links.push_back(l);
        fd.members.push_back(std::move(m));
    }
    return fd;
}

}  // namespace

std::vector<Finding> group_absent_hosts(std::vector<Finding> fs) {
    std::map<std::string, std::vector<size_t>> by_switches;
    for (size_t i = 0; i < fs.size(); ++i)
        if (single_absent(fs[i]) && !fs[i].links.empty()) by_switches[switches_of(fs[i])].push_back(i);
    std::vector<bool> taken(fs.size(), false);
    std::map<size_t, Finding> group_at;  // first member's index -> the group
    for (auto& [key, idx] : by_switches) {
        if (idx.size() < kAbsentGroupMin || key.empty()) continue;
        std::vector<Finding> g;
        for (size_t i : idx) {
            taken[i] = true;
            g.push_back(std::move(fs[i]));
        }
        group_at.emplace(idx.front(), absent_group(key, std::move(g)));
    }
    if (group_at.empty()) return fs;
    std::vector<Finding> out;
    for (size_t i = 0; i < fs.size(); ++i) {
        if (auto it = group_at.find(i); it != group_at.end()) out.push_back(std::move(it->second));
        else if (!taken[i]) out.push_back(std::move(fs[i]));
    }
    return out;
}

std::vector<Finding> ungroup_absent_hosts(Finding f) {
    if (f.kind != FindingKind::host_absent || f.members.empty()) return {std::move(f)};
    return std::move(f.members);
}

}  // namespace ibf
