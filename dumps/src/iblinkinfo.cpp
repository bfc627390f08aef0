// Reader for `iblinkinfo` output, default form (node headers + port lines) and `-l` line form.
// Identity rules (see docs/dump-formats.md):
//  - Switch: the node GUID from "Switch: 0x<guid> <desc>:" (default) or the line's GUID (-l).
//  - CA, default form: iblinkinfo prints no CA node GUID, only port GUIDs; the node GUID is taken to be
//    the port GUID of the CA's lowest-numbered printed port. -l form: the printed node GUID.
//  - Remote ends are found by (remote LID, remote port): a switch answers on every port with its port-0
//    LID, a CA port has its own LID. In -l form the printed remote GUID is tried next.
//  - A remote never printed as a node of its own becomes a placeholder node keyed by its LID (GUID from
//    the -l line, or 0xffff'ffff'0000'<lid> in the default form), with the remote description.
#include <algorithm>
#include <map>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include "ibf/dumps.h"
#include "rate_cache.h"
#include "text.h"

namespace ibf {
namespace {

using detail::Cursor;
using detail::is_digit;
using detail::is_space;
using detail::starts_with;
using detail::trim;

constexpr Guid kPlaceholderBase = 0xffffffff00000000ull;

struct LPort {
    size_t node;               // index into nodes_
    int line;
    int col_port, col_remote;
    uint8_t port;
    Guid guid = 0;             // port GUID (default form CA), 0 otherwise
    uint16_t lid = 0;
    PortState state = PortState::Unknown;
    PhysState phys = PhysState::Unknown;
    Rate rate;
    WidthMask could_w = 0;     // "Could be 4X"
    SpeedMask could_s = 0;     // "Could be 14.0625 Gbps"
    bool has_remote = false;
    Guid rguid = 0;            // -l form only
    uint16_t rlid = 0;
    uint8_t rport = 0;
    std::string_view rdesc;
};

struct LNode {
    NodeType type = NodeType::Unknown;
    Guid guid = 0;
    bool guid_known = false;   // false for a default-form CA until its first port line
    std::string_view desc;
    int line = 0;
    std::vector<size_t> ports; // indexes into ports_
    bool merged = false;       // -l form: folded into nodes_[merged_into] (another port of the same HCA)
    size_t merged_into = 0;
};

class LinkInfoParser {
public:
    LinkInfoParser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

    Fabric run() {
        detail::Lines lines(text_);
        std::string_view raw;
        int ln = 0;
        while (lines.next(raw, ln)) line(raw, ln);
        if (nodes_.empty())
            throw InputError(file_, 0, 0, "no node found: expected iblinkinfo output (\"CA: ...:\" / \"Switch: 0x... ...:\" "
                                          "headers or -l lines with \"==( ... )==>\")");
        build();
        f_.finalize();
        return std::move(f_);
    }

private:
    void line(std::string_view raw, int ln) {
        size_t lead = 0;
        while (lead < raw.size() && is_space(raw[lead])) ++lead;
        std::string_view t = raw.substr(lead);
        if (t.empty()) return;
        Cursor c(raw, file_, ln);
        c.set_pos(lead);
        const bool has_arrow = t.find("==(") != std::string_view::npos;
        if (!has_arrow) {
            if (starts_with(t, "CA: ") || starts_with(t, "Switch: ") || starts_with(t, "Router: ")) {
                header(c, t);
                return;
            }
            if (t[0] == '#' || nodes_.empty() || detail::looks_like_prompt(t)) return;  // noise
            c.fail("expected a node header (\"CA: <desc>:\" or \"Switch: 0x<guid> <desc>:\") or a port line with \"==( ... )==>\"");
        }
        // -l form: 0x<guid> "<desc>" <lid> <port>[..] ==( ... )==> ...
        if (starts_with(t, "0x") || starts_with(t, "0X")) {
            size_t save = c.pos();
            c.hex("a GUID");
            c.skip_ws();
            if (c.peek() == '"') {
                c.set_pos(save);
                line_form(c);
                return;
            }
            c.set_pos(save);
        }
        if (cur_ == SIZE_MAX) c.fail("port line before any \"CA:\" or \"Switch:\" header");
        port_line(c, cur_, nodes_[cur_].type != NodeType::Switch);
    }

    void header(Cursor& c, std::string_view t) {
        LNode n;
        n.line = c.lineno();
        size_t colon = t.find(':');
        std::string_view kind = t.substr(0, colon);
        n.type = kind == "Switch" ? NodeType::Switch : kind == "Router" ? NodeType::Router : NodeType::CA;
        c.set_pos(c.pos() + colon + 1);
        c.skip_ws();
        if (n.type == NodeType::Switch) {
            n.guid = c.hex("the switch GUID after \"Switch:\"");
            n.guid_known = true;
            c.skip_ws();
        }
        std::string_view rest = trim(c.rest());
        if (rest.empty() || rest.back() != ':') {
            c.set_pos(c.line().size());
            c.fail("expected the node description followed by ':' at the end of the header");
        }
        n.desc = trim(rest.substr(0, rest.size() - 1));
        if (n.guid_known) {
            if (auto it = by_guid_.find(n.guid); it != by_guid_.end())
                c.fail("duplicate node GUID " + guid_hex(n.guid) + " (first printed at line " +
                       std::to_string(nodes_[it->second].line) + ")");
            by_guid_.emplace(n.guid, nodes_.size());
        }
        cur_ = nodes_.size();
        nodes_.push_back(n);
    }

    void line_form(Cursor& c) {
        size_t gpos = c.pos();
        Guid g = c.hex("the node GUID");
        c.skip_ws();
        std::string_view desc = trim(c.quoted("node description"));
        size_t idx;
        if (auto it = by_guid_.find(g); it != by_guid_.end()) {
            idx = it->second;
            if (nodes_[idx].desc != desc)
                c.fail_at(gpos, "node " + guid_hex(g) + " is printed with two descriptions (\"" + printable(nodes_[idx].desc) +
                                    "\" at line " + std::to_string(nodes_[idx].line) + ")");
        } else {
            LNode n;
            n.guid = g;
            n.guid_known = true;
            n.desc = desc;
            n.line = c.lineno();
            idx = nodes_.size();
            by_guid_.emplace(g, idx);
            nodes_.push_back(n);
        }
        line_form_ = true;
        cur_ = SIZE_MAX;
        port_line(c, idx, false);
    }

    // [0x<portguid>] <lid> <port>[ext] ==( <width> <speed> <state>/ <phys>)==> <remote> "<rdesc>" ( <msgs> )
    void port_line(Cursor& c, size_t node, bool ca_default) {
        LPort p;
        p.node = node;
        p.line = c.lineno();
        c.skip_ws();
        if (ca_default && (c.peek() == '0' && (c.rest().substr(0, 2) == "0x" || c.rest().substr(0, 2) == "0X"))) {
            p.guid = c.hex("the port GUID");
            c.skip_ws();
        }
        p.lid = static_cast<uint16_t>(c.number("the port's LID", 0xffff));
        c.skip_ws();
        p.col_port = c.column();
        int port = static_cast<int>(c.number("the port number", 255));
        if (port < 1) c.fail_at(c.pos() - 1, "port 0 is not a link port (expected 1..255)");
        p.port = static_cast<uint8_t>(port);
        skip_brackets(c);
        c.skip_ws();
        if (!c.eat("==(")) c.fail("expected \"==(\" and the link state");
        size_t close = c.line().find(")==>", c.pos());
        if (close == std::string_view::npos) c.fail("expected \")==>\" after the link state");
        link_state(c, c.line().substr(c.pos(), close - c.pos()), c.pos(), p);
        c.set_pos(close + 4);
        c.skip_ws();
        p.col_remote = c.column();
        // remote: "[0x<guid>] <lid> <port>[ext]" or, when there is none, just "[  ]"
        if (c.peek() != '[') {
            if (line_form_ && (c.rest().substr(0, 2) == "0x" || c.rest().substr(0, 2) == "0X")) {
                p.rguid = c.hex("the remote GUID");
                c.skip_ws();
            }
            p.rlid = static_cast<uint16_t>(c.number("the remote LID", 0xffff));
            c.skip_ws();
            int rport = static_cast<int>(c.number("the remote port number", 255));
            if (rport < 1) c.fail_at(c.pos() - 1, "remote port 0 is not a link port (expected 1..255)");
            p.rport = static_cast<uint8_t>(rport);
            p.has_remote = true;
        }
        skip_brackets(c);
        c.skip_ws();
        if (c.peek() == '"') {
            // The remote description is followed by " ( ... )": take up to the last '"' before the last '('.
            size_t b = c.pos();
            size_t paren = c.line().rfind('(');
            size_t e = c.line().rfind('"', paren == std::string_view::npos || paren < b ? std::string_view::npos : paren);
            if (e == b) c.fail("unterminated quoted remote description");
            p.rdesc = c.line().substr(b + 1, e - b - 1);
            c.set_pos(e + 1);
        } else if (p.has_remote) {
            c.fail("expected the remote description in double quotes");
        }
        c.skip_ws();
        if (c.eat('(')) {
            size_t e = c.line().find(')', c.pos());
            if (e == std::string_view::npos) c.fail("expected ')' closing the capability note");
            could_be(c, c.line().substr(c.pos(), e - c.pos()), c.pos(), p);
        }
        if (p.has_remote && p.state == PortState::Down)
            c.fail_at(static_cast<size_t>(p.col_remote - 1), "a Down port cannot have a remote end");
        nodes_[node].ports.push_back(ports_.size());
        ports_.push_back(p);
    }

    static void skip_brackets(Cursor& c) {
        if (c.peek() != '[') return;
        size_t e = c.line().find(']', c.pos());
        if (e == std::string_view::npos) c.fail("unterminated '['");
        c.set_pos(e + 1);
    }

    // " 4X          10.0 Gbps Active/  LinkUp" or "                Down/ Polling"
    void link_state(Cursor& c, std::string_view s, size_t base, LPort& p) {
        size_t slash = s.rfind('/');
        if (slash == std::string_view::npos) c.fail_at(base, "expected \"<state>/<physical state>\" in the link field");
        std::string_view left = trim(s.substr(0, slash));
        std::string_view phys = trim(s.substr(slash + 1));
        size_t sp = left.find_last_of(" \t");
        std::string_view state = sp == std::string_view::npos ? left : left.substr(sp + 1);
        std::string_view rate = sp == std::string_view::npos ? std::string_view() : trim(left.substr(0, sp));
        if (state == "Active") p.state = PortState::Active;
        else if (state == "Down") p.state = PortState::Down;
        else if (state == "Init" || state == "Initialize") p.state = PortState::Init;
        else if (state == "Armed") p.state = PortState::Armed;
        else c.fail_at(base, "unknown port state \"" + printable(state) + "\" (expected Active, Down, Init or Armed)");
        static constexpr std::pair<std::string_view, PhysState> kPhys[] = {
            {"LinkUp", PhysState::LinkUp}, {"Polling", PhysState::Polling}, {"Disabled", PhysState::Disabled},
            {"Sleep", PhysState::Sleep}, {"PortConfigurationTraining", PhysState::Training}, {"Training", PhysState::Training},
            {"LinkErrorRecovery", PhysState::ErrorRecovery}, {"PhyTest", PhysState::PhyTest}, {"NoChange", PhysState::Unknown}};
        bool ok = false;
        for (auto [name, v] : kPhys)
            if (phys == name) {
                p.phys = v;
                ok = true;
            }
        if (!ok) c.fail_at(base + slash + 1, "unknown physical state \"" + printable(phys) + "\" (expected LinkUp, Polling, Disabled, ...)");
        if (!rate.empty()) {
            auto r = rates_.parse(rate);
            if (!r) c.fail_at(base, "unknown link rate \"" + printable(rate) + "\" (expected e.g. \"4X 10.0 Gbps\" or \"4X 53.125 Gbps\")");
            p.rate = *r;
        }
    }

    // "Could be 4X", "Could be 14.0625 Gbps", "Could be FDR10" (several may follow each other)
    void could_be(Cursor& c, std::string_view s, size_t base, LPort& p) {
        size_t at = 0;
        while ((at = s.find("Could be", at)) != std::string_view::npos) {
            size_t b = at + 8;
            size_t next = s.find("Could be", b);
            std::string_view what = trim(s.substr(b, next == std::string_view::npos ? std::string_view::npos : next - b));
            at = b;
            if (what.empty()) continue;
            if (auto w = parse_width(what)) {
                p.could_w |= width_bit(*w);
                continue;
            }
            std::string_view num = what;
            if (size_t sp = num.find_first_of(" \t"); sp != std::string_view::npos) num = num.substr(0, sp);
            if (auto sp = parse_speed(num)) {
                p.could_s |= speed_bit(*sp);
                continue;
            }
            if (auto r = rates_.parse(what)) {
                if (r->width != Width::Unknown) p.could_w |= width_bit(r->width);
                if (r->speed != Speed::Unknown) p.could_s |= speed_bit(r->speed);
                continue;
            }
            c.fail_at(base + b, "unknown capability \"" + printable(what) + "\" after \"Could be\" (expected a width such as 4X or a lane speed such as 14.0625 Gbps)");
        }
    }

    static bool switchy(std::string_view d) {
        return starts_with(d, "MF0;") || d.find("witch") != std::string_view::npos || d.find("Infiniscale") != std::string_view::npos ||
               d.find("SwitchX") != std::string_view::npos || d.find("Quantum") != std::string_view::npos;
    }

    struct RemoteKey {
        Guid guid;      // placeholder GUID
        int max_port = 0;
        std::vector<uint8_t> ports;
        bool from_ca = false;
        std::string_view desc;
    };

    // -l form: no node type is printed. A switch prints every port (more than two), answers on several
    // ports with one LID, or has a switch-like description. CA lines carry port GUIDs: the ports of one
    // HCA (same description, GUIDs less than 8 apart, different port numbers) are merged into one node.
    void infer_line_form_types() {
        std::unordered_map<uint16_t, std::vector<uint8_t>> rports;  // remote LID -> remote ports seen
        for (const LPort& p : ports_)
            if (p.has_remote && p.rlid) {
                auto& v = rports[p.rlid];
                if (std::find(v.begin(), v.end(), p.rport) == v.end()) v.push_back(p.rport);
            }
        std::vector<size_t> cas;
        for (size_t i = 0; i < nodes_.size(); ++i) {
            LNode& n = nodes_[i];
            if (n.type != NodeType::Unknown) continue;
            int maxp = 0;
            bool shared_lid = false;
            std::vector<uint16_t> lids;
            for (size_t pi : n.ports) {
                const LPort& p = ports_[pi];
                maxp = std::max<int>(maxp, p.port);
                if (p.lid) {
                    if (std::find(lids.begin(), lids.end(), p.lid) != lids.end()) shared_lid = true;
                    lids.push_back(p.lid);
                    if (auto it = rports.find(p.lid); it != rports.end() && it->second.size() > 1) shared_lid = true;
                }
            }
            n.type = (maxp > 2 || shared_lid || switchy(n.desc)) ? NodeType::Switch : NodeType::CA;
            if (n.type == NodeType::CA) {
                for (size_t pi : n.ports) ports_[pi].guid = n.guid;
                n.guid_known = false;
                cas.push_back(i);
            }
        }
        std::sort(cas.begin(), cas.end(), [&](size_t a, size_t b) {
            return std::pair(nodes_[a].desc, nodes_[a].guid) < std::pair(nodes_[b].desc, nodes_[b].guid);
        });
        for (size_t k = 1; k < cas.size(); ++k) {
            LNode& prev = nodes_[cas[k - 1]];
            LNode& n = nodes_[cas[k]];
            LNode& head = prev.merged ? nodes_[prev.merged_into] : prev;
            size_t head_idx = prev.merged ? prev.merged_into : cas[k - 1];
            if (n.desc != prev.desc || n.guid - prev.guid >= 8) continue;
            bool clash = false;
            for (size_t a : n.ports)
                for (size_t b : head.ports)
                    if (ports_[a].port == ports_[b].port) clash = true;
            if (clash) continue;
            head.ports.insert(head.ports.end(), n.ports.begin(), n.ports.end());
            for (size_t a : n.ports) ports_[a].node = head_idx;
            n.ports.clear();
            n.merged = true;
            n.merged_into = head_idx;
        }
    }

    void build() {
        infer_line_form_types();
        // Node GUIDs for CAs: the port GUID of their lowest printed port (the default form prints no CA
        // node GUID; the -l form prints port GUIDs too).
        std::unordered_map<Guid, size_t> final_guid;
        for (size_t i = 0; i < nodes_.size(); ++i) {
            LNode& n = nodes_[i];
            if (n.merged) continue;
            if (n.ports.empty()) {
                if (!n.guid_known)
                    throw InputError(file_, n.line, 1, "node \"" + printable(n.desc) + "\" has no port lines (truncated dump?)");
            } else if (!n.guid_known) {
                const LPort* low = nullptr;
                for (size_t pi : n.ports)
                    if (!low || ports_[pi].port < low->port) low = &ports_[pi];
                n.guid = low->guid;
                if (n.guid == 0) throw InputError(file_, low->line, 1, "CA port line without a port GUID (expected \"0x<port guid> <lid> <port>[  ] ==(...\")");
                n.guid_known = true;
            }
            if (auto [it, fresh] = final_guid.emplace(n.guid, i); !fresh)
                throw InputError(file_, n.line, 1, "duplicate node GUID " + guid_hex(n.guid) + " (first printed at line " +
                                                       std::to_string(nodes_[it->second].line) + ")");
        }
        // Create nodes.
        std::vector<NodeId> ids(nodes_.size(), kNoNode);
        for (size_t i = 0; i < nodes_.size(); ++i) {
            LNode& n = nodes_[i];
            if (n.merged) continue;
            int maxp = 0;
            for (size_t pi : n.ports) maxp = std::max<int>(maxp, ports_[pi].port);
            std::vector<bool> seen(static_cast<size_t>(maxp) + 1, false);
            for (size_t pi : n.ports) {
                const LPort& p = ports_[pi];
                if (seen[p.port])
                    throw InputError(file_, p.line, p.col_port, "port " + std::to_string(p.port) + " of " + guid_hex(n.guid) +
                                                                    " is listed twice (duplicate cable or port)");
                seen[p.port] = true;
            }
            Node node;
            node.type = n.type;
            node.guid = n.guid;
            node.description = std::string(n.desc);
            ids[i] = f_.add_node(std::move(node), std::max(maxp, 1));
            Node& fn = f_.node(ids[i]);
            for (size_t pi : n.ports) {
                const LPort& p = ports_[pi];
                Port& fp = fn.ports[p.port];
                fp.lid = n.type == NodeType::Switch ? 0 : p.lid;
                fp.guid = n.type == NodeType::Switch ? n.guid : p.guid;
                fp.state = p.state;
                fp.phys = p.phys;
                fp.width_active = p.rate.width;
                fp.speed_active = p.rate.speed;
                if (n.type == NodeType::Switch) {
                    fn.ports[0].guid = n.guid;
                    if (!fn.lid && p.lid) {
                        fn.ports[0].lid = p.lid;
                        fn.lid = p.lid;
                        lid_index_.emplace(p.lid, std::pair<NodeId, uint8_t>{ids[i], 0});
                    }
                } else if (p.lid) {
                    lid_index_.emplace(p.lid, std::pair<NodeId, uint8_t>{ids[i], p.port});
                    if (!fn.lid) fn.lid = p.lid;
                }
                if (p.guid && n.type != NodeType::Switch) port_guid_index_.emplace(p.guid, ids[i]);
            }
        }
        // Resolve remotes; gather placeholders.
        struct Ref { NodeId node; uint8_t port; };
        std::vector<Ref> remote(ports_.size(), Ref{kNoNode, 0});
        // (lid, printed guid, description when the LID is 0) -> placeholder
        using Key = std::tuple<uint16_t, Guid, std::string_view>;
        auto key_of = [](const LPort& p) { return Key{p.rlid, p.rguid, p.rlid ? std::string_view() : p.rdesc}; };
        std::map<Key, RemoteKey> unknown;
        for (size_t i = 0; i < ports_.size(); ++i) {
            const LPort& p = ports_[i];
            if (!p.has_remote) continue;
            auto r = find_remote(p);
            if (r) {
                remote[i] = Ref{r->first, r->second};
                continue;
            }
            auto& k = unknown[key_of(p)];
            k.max_port = std::max<int>(k.max_port, p.rport);
            if (std::find(k.ports.begin(), k.ports.end(), p.rport) == k.ports.end()) k.ports.push_back(p.rport);
            if (nodes_[p.node].type != NodeType::Switch) k.from_ca = true;
            if (k.desc.empty()) k.desc = p.rdesc;
        }
        std::map<Key, NodeId> placeholder;
        for (auto& [key, k] : unknown) {
            const uint16_t lid = std::get<0>(key);
            Guid g = std::get<1>(key) ? std::get<1>(key) : kPlaceholderBase | lid;
            for (Guid extra = 0x10000u; f_.find(g); extra += 0x10000u) g = kPlaceholderBase | (extra + lid);
            Node n;
            n.type = (k.from_ca || k.ports.size() > 1 || k.max_port > 2 || switchy(k.desc)) ? NodeType::Switch : NodeType::CA;
            n.guid = g;
            n.description = std::string(k.desc);
            NodeId id = f_.add_node(std::move(n), k.max_port);
            Node& fn = f_.node(id);
            if (fn.type == NodeType::Switch) {
                fn.ports[0].lid = lid;
                fn.lid = lid;
            } else {
                for (uint8_t pn : k.ports) fn.ports[pn].lid = lid;
                fn.lid = lid;
            }
            placeholder[key] = id;
        }
        for (size_t i = 0; i < ports_.size(); ++i) {
            const LPort& p = ports_[i];
            if (!p.has_remote) continue;
            Ref r = remote[i];
            if (r.node == kNoNode) r = Ref{placeholder.at(key_of(p)), p.rport};
            connect(ids[p.node], p, r.node, r.port);
        }
    }

    std::optional<std::pair<NodeId, uint8_t>> find_remote(const LPort& p) {
        if (p.rlid == 0 && !p.rguid) {
            // No SM has assigned LIDs: the description is all there is; use it when it is unique.
            if (desc_index_.empty())
                for (NodeId i = 0; i < f_.size(); ++i) desc_index_.emplace(f_.node(i).description, i);
            if (desc_index_.count(std::string(p.rdesc)) == 1) return std::pair{desc_index_.find(std::string(p.rdesc))->second, p.rport};
            return std::nullopt;
        }
        auto [b, e] = lid_index_.equal_range(p.rlid);
        for (auto it = b; it != e; ++it) {
            auto [node, port] = it->second;
            if (port == 0 || port == p.rport) return std::pair{node, p.rport};
        }
        if (p.rguid) {
            if (auto id = f_.find(p.rguid)) return std::pair{*id, p.rport};
            if (auto it = port_guid_index_.find(p.rguid); it != port_guid_index_.end()) return std::pair{it->second, p.rport};
        }
        return std::nullopt;
    }

    void connect(NodeId a, const LPort& p, NodeId b, uint8_t bp) {
        Node& na = f_.node(a);
        Node& nb = f_.node(b);
        if (bp > nb.num_ports())
            throw InputError(file_, p.line, p.col_remote,
                             "remote port " + std::to_string(bp) + " is beyond the port count " + std::to_string(nb.num_ports()) +
                                 " of " + guid_hex(nb.guid) + " \"" + nb.description + "\"");
        if (a == b && p.port == bp)
            throw InputError(file_, p.line, p.col_remote, "port " + std::to_string(p.port) + " is linked to itself");
        Port& pa = na.ports[p.port];
        Port& pb = nb.ports[bp];
        if (pa.linked()) {
            if (pa.peer != b || pa.peer_port != bp)
                throw InputError(file_, p.line, p.col_remote,
                                 "the two ends of this link disagree: " + guid_hex(na.guid) + " port " + std::to_string(p.port) +
                                     " is already linked to " + guid_hex(f_.node(pa.peer).guid) + " port " +
                                     std::to_string(pa.peer_port) + " by the other end");
        } else if (pb.linked()) {
            throw InputError(file_, p.line, p.col_remote,
                             "the two ends of this link disagree: remote " + guid_hex(nb.guid) + " port " + std::to_string(bp) +
                                 " is linked to " + guid_hex(f_.node(pb.peer).guid) + " port " + std::to_string(pb.peer_port) +
                                 ", not to this port");
        } else {
            f_.connect(a, p.port, b, bp);
        }
        // The remote end: adopt this end's view where the remote printed nothing.
        if (pb.width_active == Width::Unknown && pb.speed_active == Speed::Unknown) {
            pb.width_active = p.rate.width;
            pb.speed_active = p.rate.speed;
        } else if (pa.width_active == Width::Unknown && pa.speed_active == Speed::Unknown) {
            pa.width_active = pb.width_active;
            pa.speed_active = pb.speed_active;
        } else if (p.rate.known() && pb.rate().known() && !(pb.rate() == p.rate)) {
            throw InputError(file_, p.line, p.col_remote,
                             "the two ends of this link disagree on the rate: " + to_string(p.rate) + " here, " +
                                 to_string(pb.rate()) + " at the other end");
        }
        if (pb.state == PortState::Unknown) {
            pb.state = p.state;
            pb.phys = p.phys;
        }
        // Capability: "Could be" names what both ends could run; without it the link runs at its best.
        WidthMask wm = p.rate.width != Width::Unknown ? width_bit(p.rate.width) : 0;
        SpeedMask sm = p.rate.speed != Speed::Unknown ? speed_bit(p.rate.speed) : 0;
        wm |= p.could_w;
        sm |= p.could_s;
        for (Port* q : {&pa, &pb}) {
            q->width_supported |= wm;
            q->width_enabled |= wm;
            q->speed_supported |= sm;
            q->speed_enabled |= sm;
        }
    }

    std::string_view text_;
    const std::string& file_;
    std::vector<LNode> nodes_;
    std::vector<LPort> ports_;
    std::unordered_map<Guid, size_t> by_guid_;
    size_t cur_ = SIZE_MAX;
    bool line_form_ = false;
    Fabric f_;
    std::unordered_multimap<uint16_t, std::pair<NodeId, uint8_t>> lid_index_;
    std::unordered_map<Guid, NodeId> port_guid_index_;
    std::unordered_multimap<std::string, NodeId> desc_index_;  // built on first need (LID-0 remotes)
    detail::RateCache rates_;
};

}  // namespace

Fabric parse_iblinkinfo(std::string_view text, const std::string& file) { return LinkInfoParser(text, file).run(); }

}  // namespace ibf
