// Analysis findings the plan declares away, and mirrored attachments as one finding (declared.h).
#include "ibf/declared.h"

#include <algorithm>
#include <cctype>
#include <string>
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

namespace {

// "pg-slurm-mgmt" and 1 for "pg-slurm-mgmt001"; the whole name and -1 without a trailing number.
std::pair<std::string, long> role_of(const std::string& host) {
    size_t d = host.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(host[d - 1]))) --d;
    if (d == host.size() || d == 0 || host.size() - d > 9) return {host, -1};
    return {host.substr(0, d), std::stol(host.substr(d))};
}

// The hosts of one role at one port across switches (switch -> hosts) are mirrored when they sit on
// two or more switches, one host per switch, and are either one host (its adapters on each switch)
// or that many hosts numbered in a row (mgmt001 on one switch, mgmt002 on the other).
bool mirrored(const std::map<std::string, std::set<std::string>>& by_switch) {
    if (by_switch.size() < 2) return false;
    std::set<std::string> hosts;
    for (const auto& [sw, hs] : by_switch) {
        if (hs.size() != 1) return false;
        hosts.insert(*hs.begin());
    }
    if (hosts.size() == 1) return true;
    if (hosts.size() != by_switch.size()) return false;
    std::vector<long> nums;
    for (const std::string& h : hosts) nums.push_back(role_of(h).second);
    std::sort(nums.begin(), nums.end());
    if (nums.front() < 0) return false;
    for (size_t i = 1; i < nums.size(); ++i)
        if (nums[i] != nums[i - 1] + 1) return false;
    return true;
}

}  // namespace

std::vector<Finding> group_mirrored(std::vector<Finding> fs, const Fabric& f) {
    // (kind, role, switch port) -> switch -> the hosts of that role there
    using Key = std::tuple<FindingKind, std::string, int>;
    std::map<Key, std::map<std::string, std::set<std::string>>> seen;
    auto key_of = [&](const Finding& x) { return Key{x.kind, role_of(host_key(f, x.b)).first, x.a.port}; };
    for (const Finding& x : fs)
        if (mirror_kind(x.kind)) seen[key_of(x)][x.a.name].insert(host_key(f, x.b));
    // (kind, switch set) -> the mirrored findings
    std::map<std::pair<FindingKind, std::set<std::string>>, std::vector<const Finding*>> groups;
    for (const Finding& x : fs) {
        if (!mirror_kind(x.kind)) continue;
        const auto& by_switch = seen[key_of(x)];
        if (!mirrored(by_switch)) continue;
        std::set<std::string> sws;
        for (const auto& [sw, hs] : by_switch) sws.insert(sw);
        groups[{x.kind, sws}].push_back(&x);
    }
    if (groups.empty()) return fs;
    std::vector<Finding> out;
    std::set<const Finding*> grouped;
    for (const auto& [key, g] : groups) {
        const std::vector<std::string> sws(key.second.begin(), key.second.end());
        std::map<std::string, std::map<std::string, std::set<int>>> hosts;  // host -> switch -> ports
        for (const Finding* x : g) hosts[host_key(f, x->b)][x->a.name].insert(x->a.port), grouped.insert(x);
        std::vector<std::string> items;
        for (const auto& [h, at] : hosts) {
            std::set<int> ports;
            for (const auto& [sw, ps] : at) ports.insert(ps.begin(), ps.end());
            std::string p;
            for (int n : ports) p += (p.empty() ? "" : ",") + std::to_string(n);
            // On every switch of the pair (its adapters): the ports; on one of them: switch/ports.
            items.push_back(h + (at.size() == sws.size() ? " (port " + p + ")" : " (" + at.begin()->first + "/" + p + ")"));
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
        m.members.clear();
        for (const Finding* x : g) m.members.push_back(*x);
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
