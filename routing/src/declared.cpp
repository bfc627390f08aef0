// Analysis findings the plan declares away, and mirrored attachments as one finding (declared.h).
#include "ibf/declared.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace ibf {
namespace {

using End = std::pair<Guid, int>;

bool mirror_kind(FindingKind k) { return k == FindingKind::host_misplaced || k == FindingKind::host_on_uplink_port; }

// The host's name as its description gives it ("mgmt01" for "mgmt01 mlx5_1"), else the finding's.
std::string host_key(const Fabric& f, const Endpoint& e) {
    auto n = e.guid ? f.find(e.guid) : std::nullopt;
    return n && !f.node(*n).name.empty() ? f.node(*n).name : e.name;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return s;
}

}  // namespace

std::vector<Finding> drop_declared(std::vector<Finding> fs, const Fabric& f, const std::vector<Link>& declared) {
    if (declared.empty()) return fs;
    std::set<std::pair<End, End>> links;
    for (const Link& l : declared) {
        End a{f.node(l.a).guid, l.pa}, b{f.node(l.b).guid, l.pb};
        links.insert({a, b});
        links.insert({b, a});
    }
    std::erase_if(fs, [&](const Finding& x) {
        return x.a.port > 0 && x.b.port > 0 && links.count({{x.a.guid, x.a.port}, {x.b.guid, x.b.port}});
    });
    return fs;
}

std::vector<Finding> group_mirrored(std::vector<Finding> fs, const Fabric& f) {
    // (kind, host, switch port) -> the switches it is seen on
    std::map<std::tuple<FindingKind, std::string, int>, std::set<std::string>> seen;
    for (const Finding& x : fs)
        if (mirror_kind(x.kind)) seen[{x.kind, host_key(f, x.b), x.a.port}].insert(x.a.name);
    // (kind, switch set) -> the mirrored findings
    std::map<std::pair<FindingKind, std::set<std::string>>, std::vector<const Finding*>> groups;
    for (const Finding& x : fs) {
        if (!mirror_kind(x.kind)) continue;
        const auto& sws = seen[{x.kind, host_key(f, x.b), x.a.port}];
        if (sws.size() >= 2) groups[{x.kind, sws}].push_back(&x);
    }
    if (groups.empty()) return fs;
    std::vector<Finding> out;
    std::set<const Finding*> grouped;
    for (const auto& [key, g] : groups) {
        const std::vector<std::string> sws(key.second.begin(), key.second.end());
        std::map<std::string, std::set<int>> hosts;  // host -> ports
        for (const Finding* x : g) hosts[host_key(f, x->b)].insert(x->a.port), grouped.insert(x);
        std::vector<std::string> items;
        for (const auto& [h, ports] : hosts) {
            std::string p;
            for (int n : ports) p += (p.empty() ? "" : ",") + std::to_string(n);
            items.push_back(h + " (port " + p + ")");
        }
        Finding m = *g.front();
        m.severity = Severity::info;
        auto ep = [&members = g](const std::string& name) {  // clang 14: no lambda capture of a binding
            for (const Finding* x : members)
                if (x->a.name == name) return Endpoint{name, x->a.guid, 0};
            return Endpoint{name, 0, 0};
        };
        m.a = ep(sws[0]);
        m.b = ep(sws[1]);
        m.actual = "mirrored on " + join(sws);
        m.label.clear();
        m.message = std::to_string(hosts.size()) + (hosts.size() == 1 ? " host attaches" : " hosts attach") +
                    " to the same ports of " + join(sws) + " (a redundant pair): " + join(items) + "; " +
                    (key.first == FindingKind::host_misplaced ? "off the leaves" : "on uplink ports") +
                    " by design? declare them in the plan or waive them, else move them to leaf downlink ports";
        out.push_back(std::move(m));
    }
    for (const Finding& x : fs)
        if (!grouped.count(&x)) out.push_back(x);
    std::stable_sort(out.begin(), out.end(), [](const Finding& x, const Finding& y) { return x.kind < y.kind; });
    return out;
}

}  // namespace ibf
