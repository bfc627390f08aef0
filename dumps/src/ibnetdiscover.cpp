// Reader for `ibnetdiscover` output and for ibdiagnet2's ibnetdiscover-like dump (same grammar, ports may
// carry "(p)" or "(guid)" after the port number, spaces instead of tabs). See docs/dump-formats.md.
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

struct PendingLink {
    NodeId local;
    uint8_t port;
    uint8_t rport;
    char rtype;          // 'S', 'H', 'R' or 0 when the id carries no type
    Guid rguid;
    Guid rportguid;      // 0 = not given
    uint16_t rlid;       // 0 = not given
    Rate rate;
    int line;
    int col_remote;      // column of the remote id
    int col_rport;       // column of the remote port number
    int free_id = -1;    // index into free_refs_ when the remote id is not "S-<guid>"-like
};

// Attributes from the key=value lines that precede a node header.
struct PendingAttrs {
    uint16_t vendor = 0, device = 0;
    Guid sysimg = 0;
    Guid node_guid = 0;  // from switchguid= / caguid= / rtguid=
    Guid port_guid = 0;  // switchguid=0x..(portguid)
    bool have_node_guid = false;
};

char type_char(NodeType t) {
    switch (t) {
        case NodeType::Switch: return 'S';
        case NodeType::CA: return 'H';
        case NodeType::Router: return 'R';
        default: return '?';
    }
}

// Parses a node id: "S-<hex>", "H-<hex>", "R-<hex>"; returns the GUID or nullopt when the id is not of
// that form (ibsim net files may name nodes freely). `type` receives 'S'/'H'/'R'.
std::optional<Guid> guid_from_id(std::string_view id, char& type) {
    type = 0;
    if (id.size() < 3 || id[1] != '-') return std::nullopt;
    char c = id[0];
    if (c != 'S' && c != 'H' && c != 'R') return std::nullopt;
    auto g = parse_guid(id.substr(2));
    if (!g) return std::nullopt;
    type = c;
    return g;
}

class NetParser {
public:
    NetParser(std::string_view text, const std::string& file, bool ibdiag) : text_(text), file_(file), ibdiag_(ibdiag) {}

    Fabric run() {
        detail::Lines lines(text_);
        std::string_view raw;
        int ln = 0;
        f_ = Fabric();
        links_.reserve(text_.size() / 80);
        while (lines.next(raw, ln)) line(raw, ln);
        if (!seen_node_) throw InputError(file_, 0, 0, std::string("no node found: expected ") +
                                                           (ibdiag_ ? "an ibdiagnet2 ibnetdiscover-like dump" : "ibnetdiscover output") +
                                                           " with \"Switch\"/\"Ca\" node headers");
        resolve();
        f_.finalize();
        return std::move(f_);
    }

private:
    void line(std::string_view raw, int ln) {
        // Leading blanks are tolerated (tabs turned into spaces, indented copies).
        size_t lead = 0;
        while (lead < raw.size() && is_space(raw[lead])) ++lead;
        std::string_view t = raw.substr(lead);
        if (t.empty()) return;
        Cursor c(raw, file_, ln);
        c.set_pos(lead);
        char first = t[0];
        if (first == '#') return;
        if (first == '[' && t.size() > 1 && is_digit(t[1])) {
            if (cur_ == kNoNode) {
                if (!seen_node_ && !started_) return;  // noise before the dump
                c.fail("port line outside a node section (expected a \"Switch\"/\"Ca\" header before it)");
            }
            port_line(c);
            started_ = true;
            return;
        }
        if (auto eq = t.find('='); eq != std::string_view::npos && eq < 12 && attr_line(c, t, eq)) {
            started_ = true;
            return;
        }
        std::string_view w = t.substr(0, t.find_first_of(" \t"));
        if (w == "Switch" || w == "Ca" || w == "Hca" || w == "Rt") {
            if (t.size() > w.size() && (is_space(t[w.size()]))) {
                node_header(c, w);
                started_ = true;
                return;
            }
        }
        // ibnetdiscover -g grouping headings
        if (w == "Chassis" || w == "Non-Chassis" || starts_with(t, "Non Chassis")) return;
        if (!seen_node_) return;  // shell prompt, command echo, warnings before the dump
        if (detail::looks_like_prompt(t)) return;
        c.fail("expected a node header (Switch/Ca/Rt), a port line \"[n] ...\", a key=value line or a # comment");
    }

    bool attr_line(Cursor& c, std::string_view t, size_t eq) {
        std::string_view key = t.substr(0, eq);
        size_t vpos = c.pos() + eq + 1;
        auto value = [&](std::string_view what) {
            c.set_pos(vpos);
            uint64_t v = c.hex(what);
            return v;
        };
        if (key == "vendid") {
            uint64_t v = value("a vendor id");
            if (v > 0xffffff) c.fail_at(vpos, "vendor id out of range (24 bits)");
            // Node::vendor_id has 16 bits: a wider OUI is recorded as 0 (not known) rather than cut.
            attrs_.vendor = v <= 0xffff ? static_cast<uint16_t>(v) : 0;
        } else if (key == "devid") {
            uint64_t v = value("a device id");
            if (v > 0xffff) c.fail_at(vpos, "device id out of range");
            attrs_.device = static_cast<uint16_t>(v);
        } else if (key == "sysimgguid") {
            attrs_.sysimg = value("a system image GUID");
        } else if (key == "switchguid" || key == "caguid" || key == "rtguid") {
            attrs_.node_guid = value("a node GUID");
            attrs_.have_node_guid = true;
            if (c.eat('(')) {
                attrs_.port_guid = c.hex("a port GUID");
                c.expect(')', "')' after the port GUID");
            }
        } else {
            // width=, speed=, extspeed= (ibsim net files) and unknown keys: accepted and ignored.
            if (key.find_first_of(" \t\"[") != std::string_view::npos) return false;
        }
        return true;
    }

    void node_header(Cursor& c, std::string_view w) {
        NodeType type = w == "Switch" ? NodeType::Switch : w == "Rt" ? NodeType::Router : NodeType::CA;
        c.word();
        c.skip_ws();
        int nports = static_cast<int>(c.number("the number of ports after \"" + printable(w) + "\"", 255));
        if (nports < 1) c.fail_at(c.pos() - 1, "a node needs at least one port");
        c.skip_ws();
        size_t id_pos = c.pos();
        std::string_view id = c.quoted("a node id such as \"S-0002c90300a1b2c3\"");
        char tc = 0;
        auto g = guid_from_id(id, tc);
        Guid guid = 0;
        if (g) {
            if (tc != type_char(type))
                c.fail_at(id_pos, "node id \"" + printable(id) + "\" does not match node type " + std::string(w) +
                                      " (expected a \"" + type_char(type) + "-\" prefix)");
            guid = *g;
        } else if (attrs_.have_node_guid && !id.empty()) {
            guid = attrs_.node_guid;
            if (!ids_.emplace(std::string(id), guid).second)
                c.fail_at(id_pos, "duplicate node id \"" + printable(id) + "\"");
        } else {
            c.fail_at(id_pos, "expected a node id such as \"" + std::string(1, type_char(type)) +
                                  "-0002c90300a1b2c3\" (or a switchguid=/caguid= line before the header)");
        }
        if (auto prev = f_.find(guid)) {
            c.fail_at(id_pos, "duplicate node GUID " + guid_hex(guid) + " (first defined at line " +
                                  std::to_string(def_line_[*prev]) + ")");
        }
        Node n;
        n.type = type;
        n.guid = guid;
        n.system_guid = attrs_.sysimg;
        n.vendor_id = attrs_.vendor;
        n.device_id = attrs_.device;
        c.skip_ws();
        uint16_t lid = 0;
        uint8_t lmc = 0;
        if (c.eat('#')) {
            c.skip_ws();
            if (c.peek() == '"') n.description = std::string(c.quoted_to_last("node description"));
            // Switch: "enhanced port 0 lid 128 lmc 0" / "base port 0 lid 18 lmc 0"
            lid_lmc(c, lid, lmc);
        } else if (!c.at_end()) {
            c.fail("expected '#' and the node description after the node id");
        }
        cur_ = f_.add_node(std::move(n), nports);
        def_line_.push_back(ln_of(c));
        seen_ports_.assign(static_cast<size_t>(nports) + 1, false);
        Node& node = f_.node(cur_);
        if (type == NodeType::Switch) {
            Guid pg = attrs_.port_guid ? attrs_.port_guid : guid;
            for (auto& p : node.ports) p.guid = pg;
            node.ports[0].lid = lid;
            node.ports[0].lmc = lmc;
            node.lid = lid;
        }
        attrs_ = PendingAttrs{};
        seen_node_ = true;
    }

    static int ln_of(const Cursor& c) { return c.lineno(); }

    // Reads optional "lid <n>" and "lmc <n>" tokens (in any words around them) until the end of the line.
    void lid_lmc(Cursor& c, uint16_t& lid, uint8_t& lmc) {
        while (true) {
            c.skip_ws();
            if (c.at_end()) return;
            size_t b = c.pos();
            std::string_view w = c.word();
            if (w == "lid") {
                c.skip_ws();
                lid = static_cast<uint16_t>(c.number("a LID after \"lid\"", 0xffff));
            } else if (w == "lmc") {
                c.skip_ws();
                lmc = static_cast<uint8_t>(c.number("an LMC after \"lmc\"", 7));
            } else if (w != "enhanced" && w != "base" && w != "port" && w != "0") {
                c.fail_at(b, "expected \"enhanced port 0 lid <lid> lmc <lmc>\" after the switch description");
            }
        }
    }

    void port_line(Cursor& c) {
        Node& node = f_.node(cur_);
        c.expect('[', "'[' and a port number");
        size_t port_pos = c.pos();
        int port = static_cast<int>(c.number("a port number", 255));
        c.expect(']', "']' after the port number");
        if (port < 1 || port > node.num_ports())
            c.fail_at(port_pos, "port " + std::to_string(port) + " is beyond the node's port count " +
                                    std::to_string(node.num_ports()) + " (expected 1.." + std::to_string(node.num_ports()) + ")");
        if (seen_ports_[static_cast<size_t>(port)])
            c.fail_at(port_pos, "port " + std::to_string(port) + " of " + guid_hex(node.guid) +
                                    " is listed twice (duplicate cable or port)");
        seen_ports_[static_cast<size_t>(port)] = true;
        Port& p = node.ports[static_cast<size_t>(port)];
        // "[1][ext 1]" (grouping) and "(portguid)" (CA ports; ibdiagnet: "(p)" on every port)
        if (c.peek() == '[') {
            size_t e = c.line().find(']', c.pos());
            if (e == std::string_view::npos) c.fail("unterminated '[' after the port number");
            c.set_pos(e + 1);
        }
        if (c.eat('(')) {
            Guid g = c.hex("a port GUID");
            c.expect(')', "')' after the port GUID");
            if (!(ibdiag_ && g < 0x100) && node.type != NodeType::Switch) p.guid = g;  // ibdiagnet "(p)": a port number, not a GUID
        }
        c.skip_ws();
        PendingLink l{};
        l.local = cur_;
        l.port = static_cast<uint8_t>(port);
        l.line = c.lineno();
        l.col_remote = c.column();
        size_t id_pos = c.pos();
        std::string_view id = c.quoted("the remote node id such as \"S-0002c90300a1b2c3\"");
        auto rg = guid_from_id(id, l.rtype);
        if (rg) {
            l.rguid = *rg;
        } else {
            // ibsim-style free-form id ("sw1"): resolved by name once every header is known
            if (id.empty()) c.fail_at(id_pos, "expected a remote node id such as \"S-0002c90300a1b2c3\", found \"\"");
            l.free_id = static_cast<int>(free_refs_.size());
            free_refs_.emplace_back(id);
        }
        c.expect('[', "'[' and the remote port number");
        l.col_rport = c.column();
        l.rport = static_cast<uint8_t>(c.number("the remote port number", 255));
        c.expect(']', "']' after the remote port number");
        if (c.peek() == '[') {
            size_t e = c.line().find(']', c.pos());
            if (e == std::string_view::npos) c.fail("unterminated '[' after the remote port number");
            c.set_pos(e + 1);
        }
        if (c.eat('(')) {
            l.rportguid = c.hex("the remote port GUID");
            c.expect(')', "')' after the remote port GUID");
        }
        c.skip_ws();
        if (c.eat('#')) {
            c.skip_ws();
            // CA/router side: "lid <lid> lmc <lmc>" of this port first
            if (c.eat("lid")) {
                c.skip_ws();
                p.lid = static_cast<uint16_t>(c.number("this port's LID after \"lid\"", 0xffff));
                c.skip_ws();
                if (c.eat("lmc")) {
                    c.skip_ws();
                    p.lmc = static_cast<uint8_t>(c.number("an LMC after \"lmc\"", 7));
                }
                c.skip_ws();
            }
            if (c.peek() == '"') c.quoted_to_last("remote node description");
            c.skip_ws();
            if (c.eat("lid")) {
                c.skip_ws();
                l.rlid = static_cast<uint16_t>(c.number("the remote LID after \"lid\"", 0xffff));
                c.skip_ws();
            }
            std::string_view rate = detail::trim(c.rest());
            if (!rate.empty()) {
                auto r = rates_.parse(rate);
                if (!r)
                    c.fail("unknown link rate \"" + printable(rate) +
                           "\" (expected width x speed such as 4xQDR, 4xFDR10, 2xNDR)");
                l.rate = *r;
            }
        } else if (!c.at_end()) {
            c.fail("expected '#' and the remote description, LID and rate after the remote port");
        }
        links_.push_back(l);
    }

    void resolve() {
        for (PendingLink& l : links_) {
            if (l.free_id >= 0) {
                auto it = ids_.find(free_refs_[static_cast<size_t>(l.free_id)]);
                if (it == ids_.end())
                    throw InputError(file_, l.line, l.col_remote,
                                     "link to node \"" + free_refs_[static_cast<size_t>(l.free_id)] +
                                         "\" which the dump never defines (truncated dump?)");
                l.rguid = it->second;
            }
            auto rid = f_.find(l.rguid);
            if (!rid) {
                throw InputError(file_, l.line, l.col_remote,
                                 "link to node " + std::string(1, l.rtype ? l.rtype : '?') + "-" + guid_hex(l.rguid).substr(2) +
                                     " which the dump never defines (truncated dump?); expected a \"" +
                                     (l.rtype == 'S' ? "Switch" : l.rtype == 'R' ? "Rt" : "Ca") + "\" section for it");
            }
            Node& rn = f_.node(*rid);
            if (l.rtype && l.rtype != type_char(rn.type))
                throw InputError(file_, l.line, l.col_remote,
                                 "remote id says node type '" + std::string(1, l.rtype) + "' but " + guid_hex(rn.guid) +
                                     " is defined as " + std::string(to_string(rn.type)) + " at line " +
                                     std::to_string(def_line_[*rid]));
            if (l.rport < 1 || l.rport > rn.num_ports())
                throw InputError(file_, l.line, l.col_rport,
                                 "remote port " + std::to_string(l.rport) + " is beyond the port count " +
                                     std::to_string(rn.num_ports()) + " of " + guid_hex(rn.guid) +
                                     " (defined at line " + std::to_string(def_line_[*rid]) + ")");
            if (*rid == l.local && l.rport == l.port)
                throw InputError(file_, l.line, l.col_rport, "port " + std::to_string(l.port) + " is linked to itself");
            Port& lp = f_.node(l.local).ports[l.port];
            Port& rp = rn.ports[l.rport];
            if (lp.linked()) {
                if (lp.peer != *rid || lp.peer_port != l.rport)
                    throw InputError(file_, l.line, l.col_remote,
                                     "the two ends of this link disagree: " + guid_hex(f_.node(l.local).guid) + " port " +
                                         std::to_string(l.port) + " is already linked to " + guid_hex(f_.node(lp.peer).guid) +
                                         " port " + std::to_string(lp.peer_port) + " by the other end");
                if (l.rate.known() && lp.rate().known() && !(l.rate == lp.rate()))
                    throw InputError(file_, l.line, l.col_remote,
                                     "the two ends of this link disagree on the rate: " + to_string(l.rate) + " here, " +
                                         to_string(lp.rate()) + " at the other end");
            } else if (rp.linked()) {
                throw InputError(file_, l.line, l.col_rport,
                                 "the two ends of this link disagree: remote " + guid_hex(rn.guid) + " port " +
                                     std::to_string(l.rport) + " is linked to " + guid_hex(f_.node(rp.peer).guid) + " port " +
                                     std::to_string(rp.peer_port) + ", not to this port");
            } else {
                f_.connect(l.local, l.port, *rid, l.rport);
            }
            for (Port* p : {&lp, &rp}) {
                if (l.rate.width != Width::Unknown) p->width_active = l.rate.width;
                if (l.rate.speed != Speed::Unknown) p->speed_active = l.rate.speed;
                p->state = PortState::Active;
                p->phys = PhysState::LinkUp;
            }
            if (l.rportguid && rn.type != NodeType::Switch && !rp.guid) rp.guid = l.rportguid;
            if (l.rlid && rn.type != NodeType::Switch && !rp.lid) rp.lid = l.rlid;
            if (l.rlid && rn.type == NodeType::Switch && !rn.ports[0].lid) {
                rn.ports[0].lid = l.rlid;
                rn.lid = l.rlid;
            }
        }
        for (NodeId i = 0; i < f_.size(); ++i) {
            Node& n = f_.node(i);
            if (n.type == NodeType::Switch || n.lid) continue;
            for (int p = 1; p <= n.num_ports() && !n.lid; ++p)
                if (n.ports[p].linked() && n.ports[p].lid) n.lid = n.ports[p].lid;
            for (int p = 1; p <= n.num_ports() && !n.lid; ++p) n.lid = n.ports[p].lid;
        }
    }

    std::string_view text_;
    const std::string& file_;
    bool ibdiag_;
    Fabric f_;
    NodeId cur_ = kNoNode;
    bool seen_node_ = false, started_ = false;
    PendingAttrs attrs_;
    std::vector<int> def_line_;        // by NodeId: line of the header
    std::vector<bool> seen_ports_;     // ports of the current node already listed
    std::vector<PendingLink> links_;
    std::unordered_map<std::string, Guid> ids_;  // free-form ids ("sw1") -> GUID from switchguid=/caguid=
    std::vector<std::string> free_refs_;
    detail::RateCache rates_;
};

}  // namespace

Fabric parse_ibnetdiscover(std::string_view text, const std::string& file) {
    return NetParser(text, file, false).run();
}

Fabric parse_ibdiagnet_net(std::string_view text, const std::string& file) {
    return NetParser(text, file, true).run();
}

}  // namespace ibf
