// Links below the best rate both ends support and enable (capability.h).
#include "ibf/capability.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace ibf {
namespace {

std::string gbps(const Rate& r) {
    char buf[32];
    const double g = r.gbps();
    if (g == static_cast<double>(static_cast<long long>(g)))
        std::snprintf(buf, sizeof buf, "%lld Gb/s", static_cast<long long>(g));
    else
        std::snprintf(buf, sizeof buf, "%.1f Gb/s", g);
    return buf;
}

std::string rate_text(const Rate& r) { return to_string(r) + " (" + gbps(r) + ")"; }

// What to do, by what is short: lanes (a cable fault) or lane speed (cable rating, port speed
// configuration, firmware).
std::string remedy(const Rate& act, const Rate& best, bool many) {
    std::string s;
    if (best.width != act.width)
        s = "width degraded (" + std::string(to_string(act.width)) + " of " + std::string(to_string(best.width)) +
            "): reseat or replace the cable";
    if (best.speed != act.speed) {
        if (!s.empty()) s += "; ";
        const std::string want(to_string(best.speed));
        s += many ? "speed " + std::string(to_string(act.speed)) + " instead of " + want +
                        " on all of them: check the switch's port speed configuration and firmware first, then that "
                        "the cables are rated for " + want
                  : "speed " + std::string(to_string(act.speed)) + " instead of " + want + ": check that the cable is rated for " +
                        want + ", both ports' enabled speeds (port speed configuration), and both ends' firmware";
    }
    return s;
}

std::string ports_text(std::vector<int> ports) {
    std::sort(ports.begin(), ports.end());
    std::string s;
    for (size_t i = 0; i < ports.size();) {
        size_t j = i;
        while (j + 1 < ports.size() && ports[j + 1] == ports[j] + 1) ++j;
        s += (s.empty() ? "" : ",") + std::to_string(ports[i]) + (j > i ? "-" + std::to_string(ports[j]) : "");
        i = j + 1;
    }
    return s;
}

struct Slow {
    NodeId a, b;
    int pa, pb;
    Rate act, best;
};

}  // namespace

Rate best_common_rate(const Port& pa, const Port& pb) {
    Rate best = pa.rate();
    // Masks that do not hold the active value itself are not believed (a port cannot run what it
    // does not support; synthetic fabrics set rates without masks).
    const bool widths = pa.width_supported && pb.width_supported && (pa.width_supported & width_bit(best.width)) &&
                        (pb.width_supported & width_bit(best.width));
    const bool speeds = pa.speed_supported && pb.speed_supported && (pa.speed_supported & speed_bit(best.speed)) &&
                        (pb.speed_supported & speed_bit(best.speed));
    if (widths) {
        WidthMask m = pa.width_supported & pb.width_supported;
        if (pa.width_enabled) m &= pa.width_enabled;
        if (pb.width_enabled) m &= pb.width_enabled;
        // 8x/12x (CXP ports; every simulated ibsim port claims 12x) is not held against a link of 4
        // lanes or fewer: 4x cables and connectors are the norm, and no reseat makes such a link wider.
        if (lanes(best.width) <= 4) m &= static_cast<WidthMask>(~(width_bit(Width::X8) | width_bit(Width::X12)));
        if (Width w = max_width(m); w != Width::Unknown && lanes(w) > lanes(best.width)) best.width = w;
    }
    if (speeds) {
        SpeedMask m = pa.speed_supported & pb.speed_supported;
        if (pa.speed_enabled) m &= pa.speed_enabled;
        if (pb.speed_enabled) m &= pb.speed_enabled;
        if (Speed s = max_speed(m); s != Speed::Unknown && lane_data_gbps(s) > lane_data_gbps(best.speed)) best.speed = s;
    }
    return best;
}

std::vector<Finding> capability_findings(const Fabric& f, const std::vector<std::string>& names,
                                         const CapabilityOptions& opt) {
    auto name = [&](NodeId n) { return n < names.size() ? names[n] : f.node(n).name; };
    auto label = [&](NodeId n, int p) { return name(n) + "/" + std::to_string(p); };
    std::vector<Slow> slow;
    for (const Link& l : f.links()) {
        const Port& pa = f.node(l.a).ports[l.pa];
        const Port& pb = f.node(l.b).ports[l.pb];
        if (!pa.rate().known() || pb.rate() != pa.rate()) continue;
        const Rate best = best_common_rate(pa, pb);
        if (best.gbps() <= pa.rate().gbps() + 1e-9) continue;
        Slow s{l.a, l.b, l.pa, l.pb, pa.rate(), best};
        // a = the switch end (a host's switch, or the lower-named switch of a switch link)
        const bool a_sw = f.node(l.a).type == NodeType::Switch, b_sw = f.node(l.b).type == NodeType::Switch;
        if ((b_sw && !a_sw) || (a_sw && b_sw && name(l.b) < name(l.a))) std::swap(s.a, s.b), std::swap(s.pa, s.pb);
        slow.push_back(s);
    }
    // Groups: one switch, one active and one possible rate.
    std::map<std::tuple<NodeId, int, int, int, int>, std::vector<const Slow*>> groups;
    for (const Slow& s : slow)
        groups[{s.a, static_cast<int>(s.act.width), static_cast<int>(s.act.speed), static_cast<int>(s.best.width),
                static_cast<int>(s.best.speed)}]
            .push_back(&s);
    // Each slow link with both ends and its rate (no plan here: no label, no planned end).
    auto link_of = [&](const Slow& s) {
        return FindingLink{{name(s.a), f.node(s.a).guid, s.pa}, {name(s.b), f.node(s.b).guid, s.pb}, {}, "", to_string(s.act)};
    };
    std::vector<Finding> out;
    for (const auto& [key, g] : groups) {
        const Slow& s0 = *g.front();
        Finding fd;
        fd.kind = FindingKind::rate_below_capability;
        fd.severity = default_severity(fd.kind);
        fd.expected = to_string(s0.best);
        fd.actual = to_string(s0.act);
        const bool many = static_cast<int>(g.size()) >= opt.group_min && f.node(s0.a).type == NodeType::Switch;
        if (many) {
            std::vector<int> ports;
            for (const Slow* s : g) ports.push_back(s->pa);
            fd.a = {name(s0.a), f.node(s0.a).guid, 0};
            for (const Slow* s : g) fd.links.push_back(link_of(*s));
            fd.message = std::to_string(g.size()) + " links of " + name(s0.a) + " (ports " + ports_text(ports) +
                         ") run at " + rate_text(s0.act) + " but both ends of each can do " + rate_text(s0.best) + "; " +
                         remedy(s0.act, s0.best, true);
            out.push_back(std::move(fd));
            continue;
        }
        for (const Slow* s : g) {
            Finding one = fd;
            one.a = {name(s->a), f.node(s->a).guid, s->pa};
            one.b = {name(s->b), f.node(s->b).guid, s->pb};
            one.links = {link_of(*s)};
            one.message = label(s->a, s->pa) + " -- " + label(s->b, s->pb) + " runs at " + rate_text(s->act) +
                          " but both ends can do " + rate_text(s->best) + "; " + remedy(s->act, s->best, false);
            out.push_back(std::move(one));
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const Finding& x, const Finding& y) {
        return std::tie(x.a.name, x.a.port) < std::tie(y.a.name, y.a.port);
    });
    return out;
}

}  // namespace ibf
