#include "ibf/lab_fault.h"

#include <charconv>

#include "ibf/error.h"

namespace ibf {

namespace {

const std::string kFile = "--fault";

[[noreturn]] void bad(std::string_view spec, size_t col, const std::string& msg) {
    throw InputError(kFile, 0, 0, "'" + std::string(spec) + "' (column " + std::to_string(col + 1) + "): " + msg);
}

NetNode& node_of(Net& net, const PortRef& r) {
    auto i = net.find(r.node);
    if (!i) throw InputError(kFile, 0, 0, "no node '" + r.node + "' in the lab fabric (or the name is ambiguous)");
    NetNode& n = net.nodes[*i];
    if (r.port < 1 || r.port > n.num_ports)
        throw InputError(kFile, 0, 0, "'" + n.id + "' has no port " + std::to_string(r.port) + " (ports 1.." +
                                          std::to_string(n.num_ports) + ")");
    return n;
}

NetPort& cable_at(Net& net, const PortRef& r) {
    NetNode& n = node_of(net, r);
    auto it = n.ports.find(r.port);
    if (it == n.ports.end()) throw InputError(kFile, 0, 0, "no cable at " + to_string(r));
    return it->second;
}

NetPort& far_end(Net& net, const NetPort& p) {
    auto i = net.find(p.peer);
    return net.nodes[*i].ports.at(p.peer_port);
}

}  // namespace

PortRef parse_port_ref(std::string_view s, const std::string& what) {
    auto slash = s.rfind('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size())
        throw InputError(kFile, 0, 0, what + " '" + std::string(s) + "' is not <node>/<port>");
    PortRef r;
    r.node = std::string(s.substr(0, slash));
    auto num = s.substr(slash + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), r.port);
    if (ec != std::errc{} || ptr != num.data() + num.size() || r.port < 1 || r.port > 254)
        throw InputError(kFile, 0, 0, what + " '" + std::string(s) + "': port must be a number 1..254");
    return r;
}

std::string to_string(const PortRef& p) { return p.node + "/" + std::to_string(p.port); }

Fault parse_fault(std::string_view spec) {
    auto colon = spec.find(':');
    if (colon == std::string_view::npos)
        bad(spec, 0, "expected <kind>:<args>, kind one of move, cross, remove, width, speed");
    auto kind = spec.substr(0, colon);
    auto args = spec.substr(colon + 1);
    const size_t at = colon + 1;
    Fault f;
    auto ref = [&](std::string_view s, size_t col) {
        try {
            return parse_port_ref(s);
        } catch (const InputError& e) {
            bad(spec, col, e.message());
        }
    };
    if (kind == "move") {
        // the port's last ':' separates the two ends (node names may hold ':' but not the port)
        auto sep = args.rfind(':');
        if (sep == std::string_view::npos) bad(spec, at, "move needs <node>/<port>:<node>/<port>");
        f.kind = Fault::Kind::Move;
        f.a = ref(args.substr(0, sep), at);
        f.b = ref(args.substr(sep + 1), at + sep + 1);
        if (f.a == f.b) bad(spec, at, "move to the same port");
    } else if (kind == "cross") {
        auto sep = args.find(',');
        if (sep == std::string_view::npos) bad(spec, at, "cross needs <node>/<port>,<node>/<port>");
        f.kind = Fault::Kind::Cross;
        f.a = ref(args.substr(0, sep), at);
        f.b = ref(args.substr(sep + 1), at + sep + 1);
        if (f.a == f.b) bad(spec, at, "cross needs two different ports");
    } else if (kind == "remove") {
        f.kind = Fault::Kind::Remove;
        f.a = ref(args, at);
    } else if (kind == "width" || kind == "speed") {
        auto eq = args.rfind('=');
        if (eq == std::string_view::npos) bad(spec, at, std::string(kind) + " needs <node>/<port>=<value>");
        f.a = ref(args.substr(0, eq), at);
        auto v = args.substr(eq + 1);
        if (kind == "width") {
            f.kind = Fault::Kind::Width;
            auto w = parse_width(v);
            if (!w) bad(spec, at + eq + 1, "width must be 1x, 2x, 4x, 8x or 12x");
            f.width = *w;
        } else {
            f.kind = Fault::Kind::Speed;
            auto s = parse_speed(v);
            if (!s || *s == Speed::NDR || *s == Speed::XDR || *s == Speed::FDR10)
                bad(spec, at + eq + 1, "speed must be SDR, DDR, QDR, FDR, EDR or HDR (what ibsim 0.10 can simulate)");
            f.speed = *s;
        }
    } else {
        bad(spec, 0, "unknown fault kind '" + std::string(kind) + "' (move, cross, remove, width, speed)");
    }
    return f;
}

std::string to_string(const Fault& f) {
    switch (f.kind) {
        case Fault::Kind::Move: return "move:" + to_string(f.a) + ":" + to_string(f.b);
        case Fault::Kind::Cross: return "cross:" + to_string(f.a) + "," + to_string(f.b);
        case Fault::Kind::Remove: return "remove:" + to_string(f.a);
        case Fault::Kind::Width: return "width:" + to_string(f.a) + "=" + std::string(to_string(f.width));
        case Fault::Kind::Speed: return "speed:" + to_string(f.a) + "=" + std::string(to_string(f.speed));
    }
    return {};
}

void apply_fault(Net& net, const Fault& f) {
    switch (f.kind) {
        case Fault::Kind::Remove: {
            NetNode& n = node_of(net, f.a);
            NetPort cable = cable_at(net, f.a);
            far_end(net, cable);  // exists
            auto i = net.find(cable.peer);
            net.nodes[*i].ports.erase(cable.peer_port);
            n.ports.erase(f.a.port);
            return;
        }
        case Fault::Kind::Move: {
            NetNode& from = node_of(net, f.a);
            NetNode& to = node_of(net, f.b);
            NetPort cable = cable_at(net, f.a);
            if (to.ports.count(f.b.port)) throw InputError(kFile, 0, 0, "cannot move to " + to_string(f.b) + ": it already has a cable");
            NetPort& far = far_end(net, cable);
            far.peer = to.id;
            far.peer_port = f.b.port;
            from.ports.erase(f.a.port);
            to.ports[f.b.port] = cable;
            return;
        }
        case Fault::Kind::Cross: {
            NetNode& na = node_of(net, f.a);
            NetNode& nb = node_of(net, f.b);
            NetPort ca = cable_at(net, f.a);
            NetPort cb = cable_at(net, f.b);
            if (ca.peer == nb.id && ca.peer_port == f.b.port)
                throw InputError(kFile, 0, 0, to_string(f.a) + " and " + to_string(f.b) + " are the two ends of one cable");
            // a's cable now reaches b's far end and vice versa; each link keeps the masks of the
            // cable it now is (take a's for the first, b's for the second).
            NetPort& fa = far_end(net, ca);
            NetPort& fb = far_end(net, cb);
            fa.peer = nb.id;
            fa.peer_port = f.b.port;
            fb.peer = na.id;
            fb.peer_port = f.a.port;
            na.ports[f.a.port] = NetPort{cb.peer, cb.peer_port, cb.masks};
            nb.ports[f.b.port] = NetPort{ca.peer, ca.peer_port, ca.masks};
            // masks: the far ends keep theirs; make both ends of each new link agree
            fa.masks = nb.ports[f.b.port].masks;
            fb.masks = na.ports[f.a.port].masks;
            return;
        }
        case Fault::Kind::Width:
        case Fault::Kind::Speed: {
            NetPort& here = cable_at(net, f.a);
            NetPort& far = far_end(net, here);
            NetMasks m = here.masks;
            if (f.kind == Fault::Kind::Width) {
                m.w = static_cast<uint8_t>(f.width);
            } else {
                NetMasks s = masks_for_rate(Rate{Width::Unknown, f.speed});
                m.s = s.s;
                m.e = s.e;
            }
            here.masks = m;
            far.masks = m;
            return;
        }
    }
}

}  // namespace ibf
