// ibnetdiscover-format writer: what parse_ibnetdiscover() reads back to an equal fabric and what ibsim
// 0.10 loads as a net file (node ids "S-<16 hex>" / "H-<16 hex>", tabs, the rate at the end of port lines).
#include <cinttypes>
#include <cstdio>

#include "ibf/dumps.h"

namespace ibf {
namespace {

void appendf(std::string& out, const char* fmt, auto... args) {
    char buf[256];
    int n = std::snprintf(buf, sizeof buf, fmt, args...);
    if (n > 0) out.append(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

// Descriptions are written inside double quotes on one line: line breaks become spaces.
std::string clean(const std::string& d) {
    std::string s = d;
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

char id_char(NodeType t) { return t == NodeType::Switch ? 'S' : t == NodeType::Router ? 'R' : 'H'; }
const char* header_word(NodeType t) { return t == NodeType::Switch ? "Switch" : t == NodeType::Router ? "Rt" : "Ca"; }

std::string rate_text(const Port& p) {
    Rate r = p.rate();
    if (r.width == Width::Unknown && r.speed == Speed::Unknown) return {};
    return to_string(r);
}

}  // namespace

std::string write_ibnetdiscover(const Fabric& f) {
    std::string out;
    out.reserve(f.size() * 400);
    out += "#\n# Topology file: written by ibfabric (ibnetdiscover format)\n#\n";
    for (NodeId i = 0; i < f.size(); ++i) {
        const Node& n = f.node(i);
        const bool sw = n.type == NodeType::Switch;
        const unsigned long long guid = n.guid;
        out += '\n';
        appendf(out, "vendid=0x%x\ndevid=0x%x\n", static_cast<unsigned>(n.vendor_id), static_cast<unsigned>(n.device_id));
        appendf(out, "sysimgguid=0x%llx\n", static_cast<unsigned long long>(n.system_guid));
        if (sw) {
            unsigned long long pg = n.ports.empty() ? guid : n.ports[0].guid;
            appendf(out, "switchguid=0x%llx(%llx)\n", guid, pg);
        } else {
            appendf(out, "%s=0x%llx\n", n.type == NodeType::Router ? "rtguid" : "caguid", guid);
        }
        appendf(out, "%s\t%d \"%c-%016llx\"\t\t# \"", header_word(n.type), n.num_ports(), id_char(n.type), guid);
        out += clean(n.description);
        out += '"';
        if (sw) appendf(out, " enhanced port 0 lid %u lmc %u", unsigned(n.ports[0].lid), unsigned(n.ports[0].lmc));
        out += '\n';
        for (int p = 1; p <= n.num_ports(); ++p) {
            const Port& pt = n.ports[static_cast<size_t>(p)];
            if (!pt.valid || !pt.linked()) continue;
            const Node& r = f.node(pt.peer);
            const Port& rp = r.ports[pt.peer_port];
            const unsigned long long rguid = r.guid;
            std::string rate = rate_text(pt);
            if (sw)
                appendf(out, "[%d]\t\"%c-%016llx\"[%u]", p, id_char(r.type), rguid, unsigned(pt.peer_port));
            else
                appendf(out, "[%d](%llx) \t\"%c-%016llx\"[%u]", p, static_cast<unsigned long long>(pt.guid), id_char(r.type),
                        rguid, unsigned(pt.peer_port));
            if (r.type != NodeType::Switch) appendf(out, "(%llx) ", static_cast<unsigned long long>(rp.guid));
            out += "\t\t# ";
            if (!sw) appendf(out, "lid %u lmc %u ", unsigned(pt.lid), unsigned(pt.lmc));
            out += '"';
            out += clean(r.description);
            out += '"';
            uint16_t rlid = r.type == NodeType::Switch ? r.ports[0].lid : rp.lid;
            appendf(out, " lid %u", unsigned(rlid));
            if (!rate.empty()) {
                out += ' ';
                out += rate;
            }
            out += '\n';
        }
    }
    return out;
}

}  // namespace ibf
