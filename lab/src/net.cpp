#include "ibf/lab_net.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "ibf/error.h"

namespace ibf {

namespace {

constexpr size_t kMaxId = 64;
constexpr size_t kMaxDesc = 63;

std::string hex16(Guid g) {
    static const char* digits = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, g >>= 4) s[static_cast<size_t>(i)] = digits[g & 0xf];
    return s;
}

bool bad_chars(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) { return c == '"' || c == '\n' || c == '\r' || c == '#'; });
}

}  // namespace

std::optional<size_t> Net::find(std::string_view node) const {
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].id == node) return i;
    if (auto colon = node.find(':'); colon != std::string_view::npos) {  // the plan's "host:hca"
        std::string spaced(node);
        spaced[colon] = ' ';
        for (size_t i = 0; i < nodes.size(); ++i)
            if (nodes[i].id == spaced) return i;
    }
    std::optional<size_t> hit;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto& n = nodes[i];
        if (n.name == node || derive_name(n.type, n.description) == node) {
            if (hit) return std::nullopt;  // ambiguous
            hit = i;
        }
    }
    return hit;
}

std::optional<size_t> Net::default_sm_host() const {
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].type == NodeType::CA && !nodes[i].ports.empty()) return i;
    return std::nullopt;
}

size_t Net::count(NodeType t) const {
    return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [t](const NetNode& n) { return n.type == t; }));
}

size_t Net::port_count() const {
    size_t p = 0;
    for (const auto& n : nodes) p += static_cast<size_t>(n.num_ports) + (n.type == NodeType::Switch ? 1 : 0);
    return p;
}

size_t Net::link_count() const {
    size_t ends = 0;
    for (const auto& n : nodes) ends += n.ports.size();
    return ends / 2;
}

NetMasks masks_for_rate(const Rate& r, std::vector<std::string>* warnings) {
    NetMasks m;
    if (r.width != Width::Unknown) m.w = static_cast<uint8_t>(r.width);
    Speed s = r.speed;
    if (s == Speed::NDR || s == Speed::XDR) {
        if (warnings) warnings->push_back(std::string("ibsim 0.10 cannot simulate ") + std::string(to_string(s)) +
                                          ": links planned at " + to_string(r) + " run at " +
                                          std::string(to_string(r.width)) + "HDR in the lab");
        s = Speed::HDR;
    } else if (s == Speed::FDR10) {
        if (warnings) warnings->push_back("ibsim has no FDR10 enable mask: links planned at " + to_string(r) +
                                          " run at " + std::string(to_string(r.width)) + "FDR in the lab");
        s = Speed::FDR;
    }
    switch (s) {
        case Speed::SDR: m.s = 1; m.e = 0; break;
        case Speed::DDR: m.s = 2; m.e = 0; break;
        case Speed::QDR: m.s = 4; m.e = 0; break;
        case Speed::FDR: m.s = 4; m.e = 1; break;
        case Speed::EDR: m.s = 4; m.e = 2; break;
        case Speed::HDR: m.s = 4; m.e = 4; break;
        default: break;
    }
    return m;
}

Rate rate_for_masks(const NetMasks& m) {
    Rate r;
    if (m.w) r.width = max_width(*m.w);
    if (m.e && *m.e) {
        r.speed = (*m.e & 4) ? Speed::HDR : (*m.e & 2) ? Speed::EDR : Speed::FDR;
    } else if (m.s) {
        r.speed = (*m.s & 4) ? Speed::QDR : (*m.s & 2) ? Speed::DDR : (*m.s & 1) ? Speed::SDR : Speed::Unknown;
    }
    return r;
}

Net net_from_plan(const Plan& plan) {
    Net net;
    net.source = plan.source;
    const std::string file = plan.source;
    // Ports each node uses, to size nodes that declare none.
    std::vector<int> max_port(plan.nodes.size(), 0);
    std::vector<int> used(plan.nodes.size(), 0);
    for (const auto& l : plan.links) {
        for (const PlannedEnd* e : {&l.a, &l.b}) {
            if (e->node >= plan.nodes.size())
                throw InputError(l.where.file.empty() ? file : l.where.file, l.where.line, l.where.column,
                                 "link names a node that is not in the plan");
            max_port[e->node] = std::max(max_port[e->node], e->port);
            ++used[e->node];
        }
    }
    std::unordered_map<std::string, size_t> ids;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlannedNode& p = plan.nodes[i];
        const std::string& f = p.where.file.empty() ? file : p.where.file;
        NetNode n;
        n.name = p.name;
        n.guid = p.guid;
        NodeType t = p.type;
        if (t == NodeType::Router) throw InputError(f, p.where.line, p.where.column, "ibsim cannot simulate router '" + p.name + "'");
        if (t == NodeType::Unknown) t = (!p.hca.empty() || (p.num_ports <= 1 && used[i] <= 1)) ? NodeType::CA : NodeType::Switch;
        n.type = t;
        if (p.name.empty()) throw InputError(f, p.where.line, p.where.column, "a planned node has no name");
        if (t == NodeType::Switch) {
            n.id = p.name;
            n.description = p.name;
        } else {
            n.id = p.hca.empty() ? p.name : p.name + " " + p.hca;
            n.description = p.name + " " + (p.hca.empty() ? std::string("HCA-1") : p.hca);
        }
        if (bad_chars(n.id))
            throw InputError(f, p.where.line, p.where.column, "node name '" + n.id + "' has a character ibsim net files cannot carry (\" or #)");
        if (n.id.size() > kMaxId)
            throw InputError(f, p.where.line, p.where.column,
                             "node id '" + n.id + "' is longer than ibsim's 64 characters");
        if (n.description.size() > kMaxDesc)
            throw InputError(f, p.where.line, p.where.column,
                             "node description '" + n.description + "' is longer than ibsim's 63 characters");
        n.num_ports = p.num_ports > 0 ? p.num_ports : std::max(1, max_port[i]);
        if (n.num_ports > 254) throw InputError(f, p.where.line, p.where.column, "node '" + p.name + "' has more than 254 ports");
        if (!ids.emplace(n.id, i).second)
            throw InputError(f, p.where.line, p.where.column, "node '" + n.id + "' is declared twice");
        net.nodes.push_back(std::move(n));
    }
    std::set<std::string> warned;
    for (const auto& l : plan.links) {
        const std::string& f = l.where.file.empty() ? file : l.where.file;
        std::vector<std::string> w;
        NetMasks m = l.rate ? masks_for_rate(*l.rate, &w) : NetMasks{};
        for (auto& s : w)
            if (warned.insert(s).second) net.warnings.push_back(s);
        NetNode& a = net.nodes[l.a.node];
        NetNode& b = net.nodes[l.b.node];
        for (auto [n, port] : {std::pair{&a, l.a.port}, std::pair{&b, l.b.port}}) {
            if (port < 1 || port > n->num_ports)
                throw InputError(f, l.where.line, l.where.column,
                                 "port " + std::to_string(port) + " of '" + n->name + "' does not exist (it has " +
                                     std::to_string(n->num_ports) + ")");
            if (n->ports.count(port))
                throw InputError(f, l.where.line, l.where.column,
                                 "port " + n->name + "/" + std::to_string(port) + " is cabled twice in the plan");
        }
        if (&a == &b && l.a.port == l.b.port)
            throw InputError(f, l.where.line, l.where.column, "a cable connects " + a.name + "/" + std::to_string(l.a.port) + " to itself");
        a.ports[l.a.port] = NetPort{b.id, l.b.port, m};
        b.ports[l.b.port] = NetPort{a.id, l.a.port, m};
    }
    return net;
}

Net net_from_fabric(const Fabric& f, const std::string& source) {
    Net net;
    net.source = source;
    std::set<std::string> warned;
    std::vector<std::string> id_of(f.size());
    for (NodeId i = 0; i < f.size(); ++i) {
        const Node& n = f.node(i);
        id_of[i] = (n.type == NodeType::Switch ? "S-" : "H-") + hex16(n.guid);
    }
    for (NodeId i = 0; i < f.size(); ++i) {
        const Node& src = f.node(i);
        if (src.type != NodeType::Switch && src.type != NodeType::CA) {
            std::string w = "ibsim cannot simulate " + std::string(to_string(src.type)) + " nodes: " + guid_hex(src.guid) +
                            " ('" + src.description + "') and its links are left out";
            net.warnings.push_back(w);
            continue;
        }
        NetNode n;
        n.type = src.type;
        n.id = id_of[i];
        n.guid = src.guid;
        n.name = src.name;
        n.description = src.description;
        std::replace(n.description.begin(), n.description.end(), '"', '\'');
        if (n.description.size() > kMaxDesc) {
            net.warnings.push_back("description of " + n.id + " cut to ibsim's 63 characters");
            n.description.resize(kMaxDesc);
        }
        n.num_ports = std::max(1, src.num_ports());
        for (int p = 1; p <= src.num_ports(); ++p) {
            const Port* port = src.port(p);
            if (!port || !port->linked()) continue;
            const Node& peer = f.node(port->peer);
            if (peer.type != NodeType::Switch && peer.type != NodeType::CA) continue;
            std::vector<std::string> w;
            // Both ends report the same active rate; take the lower end's view for stability.
            const Port* pp = peer.port(port->peer_port);
            Rate r = port->rate();
            if (pp && pp->rate().known() && (!r.known() || pp->rate().gbps() < r.gbps())) r = pp->rate();
            NetMasks m = masks_for_rate(r, &w);
            // Rate strings are per port; key the masks on the link so both ends agree.
            for (auto& s : w)  // one warning per mapped speed
                if (warned.insert(std::string(to_string(r.speed))).second) net.warnings.push_back(s);
            n.ports[p] = NetPort{id_of[port->peer], port->peer_port, m};
        }
        net.nodes.push_back(std::move(n));
    }
    // Both ends must carry identical masks: recompute from the lower-numbered end.
    std::unordered_map<std::string, size_t> idx;
    for (size_t i = 0; i < net.nodes.size(); ++i) idx[net.nodes[i].id] = i;
    for (auto& n : net.nodes)
        for (auto& [p, np] : n.ports) {
            auto it = idx.find(np.peer);
            if (it == idx.end()) continue;
            auto& other = net.nodes[it->second].ports;
            auto op = other.find(np.peer_port);
            if (op != other.end()) op->second.masks = np.masks;
        }
    return net;
}

std::string write_net(const Net& net) {
    std::string out;
    out += "# ibsim net file generated by `ibfabric lab`";
    if (!net.source.empty()) out += " from " + net.source;
    out += "\n# " + std::to_string(net.count(NodeType::Switch)) + " switches, " +
           std::to_string(net.count(NodeType::CA)) + " CAs, " + std::to_string(net.link_count()) + " links\n";
    for (const auto& w : net.warnings) out += "# warning: " + w + "\n";
    // Defaults for every port without masks of its own: everything enabled. A free port then has
    // masks in common with any cable plugged into it at run time (console Link); ibsim aborts on
    // a link whose ends have no enabled speed in common.
    out += "width=31\nspeed=7\nextspeed=7\n";
    auto opt = [](std::string& o, const char* k, const std::optional<uint8_t>& v) {
        if (v) o += std::string(" ") + k + "=" + std::to_string(*v);
    };
    // Switches first, then CAs: ibsim wants a node declared before others reference it? It does
    // not, but this order gives switches the lower LIDs, as on a real fabric.
    for (NodeType t : {NodeType::Switch, NodeType::CA}) {
        for (const auto& n : net.nodes) {
            if (n.type != t) continue;
            out += "\n";
            if (n.guid) out += std::string(t == NodeType::Switch ? "switchguid=0x" : "caguid=0x") + hex16(*n.guid) + "\n";
            out += std::string(t == NodeType::Switch ? "Switch " : "Hca ") + std::to_string(n.num_ports) + " \"" + n.id +
                   "\"  # \"" + n.description + "\"\n";
            for (const auto& [p, np] : n.ports) {
                out += "[" + std::to_string(p) + "] \"" + np.peer + "\"[" + std::to_string(np.peer_port) + "]";
                opt(out, "w", np.masks.w);
                opt(out, "s", np.masks.s);
                opt(out, "e", np.masks.e);
                out += "\n";
            }
        }
    }
    return out;
}

namespace {

std::string_view trim_ws(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// `"text"` at the start of s (after blanks): the text, and s advanced past it.
std::optional<std::string> take_quoted(std::string_view& s) {
    s = trim_ws(s);
    if (s.empty() || s.front() != '"') return std::nullopt;
    auto end = s.find('"', 1);
    if (end == std::string_view::npos) return std::nullopt;
    std::string q(s.substr(1, end - 1));
    s.remove_prefix(end + 1);
    return q;
}

}  // namespace

Net parse_net(std::string_view text, const std::string& file) {
    Net net;
    net.source = file;
    std::optional<Guid> guid;
    int lineno = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        auto eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        std::string_view line = trim_ws(text.substr(pos, eol - pos));
        pos = eol + 1;
        ++lineno;
        if (line.empty()) {
            if (eol == text.size()) break;
            continue;
        }
        auto fail = [&](const std::string& m) -> void { throw InputError(file, lineno, 1, m); };
        if (line.front() == '#') continue;
        if (line.rfind("width=", 0) == 0 || line.rfind("speed=", 0) == 0 || line.rfind("extspeed=", 0) == 0) continue;
        if (line.rfind("switchguid=", 0) == 0 || line.rfind("caguid=", 0) == 0) {
            auto g = parse_guid(line.substr(line.find('=') + 1));
            if (!g) fail("bad GUID");
            guid = g;
            continue;
        }
        if (line.rfind("Switch ", 0) == 0 || line.rfind("Hca ", 0) == 0) {
            NetNode n;
            n.type = line.front() == 'S' ? NodeType::Switch : NodeType::CA;
            std::string_view rest = line.substr(line.find(' ') + 1);
            rest = trim_ws(rest);
            n.num_ports = std::atoi(std::string(rest.substr(0, rest.find(' '))).c_str());
            rest.remove_prefix(std::min(rest.size(), rest.find(' ')));
            auto id = take_quoted(rest);
            if (!id || n.num_ports < 1) fail("expected Switch|Hca <ports> \"<id>\"");
            n.id = *id;
            rest = trim_ws(rest);
            n.description = n.id;
            if (!rest.empty() && rest.front() == '#') {
                rest.remove_prefix(1);
                if (auto d = take_quoted(rest)) n.description = *d;
            }
            n.name = derive_name(n.type, n.description);
            n.guid = guid;
            guid.reset();
            net.nodes.push_back(std::move(n));
            continue;
        }
        if (line.front() == '[') {
            if (net.nodes.empty()) fail("port line before any node");
            auto close = line.find(']');
            if (close == std::string_view::npos) fail("expected [<port>]");
            int p = std::atoi(std::string(line.substr(1, close - 1)).c_str());
            std::string_view rest = line.substr(close + 1);
            auto peer = take_quoted(rest);
            if (!peer || rest.empty() || rest.front() != '[') fail("expected [<port>] \"<peer>\"[<port>]");
            auto close2 = rest.find(']');
            if (close2 == std::string_view::npos) fail("expected [<peer port>]");
            NetPort np;
            np.peer = *peer;
            np.peer_port = std::atoi(std::string(rest.substr(1, close2 - 1)).c_str());
            rest.remove_prefix(close2 + 1);
            while (!(rest = trim_ws(rest)).empty()) {
                auto sp = rest.find(' ');
                std::string_view tok = rest.substr(0, sp);
                rest.remove_prefix(std::min(rest.size(), sp));
                if (tok.size() < 3 || tok[1] != '=') fail("unexpected '" + std::string(tok) + "'");
                auto v = static_cast<uint8_t>(std::atoi(std::string(tok.substr(2)).c_str()));
                if (tok[0] == 'w') np.masks.w = v;
                else if (tok[0] == 's') np.masks.s = v;
                else if (tok[0] == 'e') np.masks.e = v;
                else fail("unexpected '" + std::string(tok) + "'");
            }
            NetNode& n = net.nodes.back();
            if (p < 1 || p > n.num_ports) fail("port " + std::to_string(p) + " out of range");
            n.ports[p] = np;
            continue;
        }
        fail("unexpected line");
    }
    return net;
}

SimLimits sim_limits_for(const Net& net) {
    SimLimits l;
    l.nodes = std::max(l.nodes, net.nodes.size() + 16);
    l.switches = std::max(l.switches, net.count(NodeType::Switch) + 16);
    l.ports = std::max(l.ports, net.port_count() + 64);
    return l;
}

}  // namespace ibf
