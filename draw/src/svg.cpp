// SVG text of a Layout, and the escaping every drawn name goes through (draw.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ibf/draw.h"
#include "ibf/text.h"

namespace ibf::draw {

std::string xml_escape(std::string_view s) {
    const std::string safe = terminal_safe(s);
    std::string out;
    out.reserve(safe.size() + 8);
    for (char c : safe) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

// A coordinate: one decimal, without a trailing ".0".
std::string num(double v) {
    char buf[32];
    const double r = std::round(v * 10) / 10;
    if (r == std::floor(r)) std::snprintf(buf, sizeof buf, "%.0f", r);
    else std::snprintf(buf, sizeof buf, "%.1f", r);
    return buf;
}

// Cuts a name to `max` characters (UTF-8 aware) with "..." at the end.
std::string shorten(const std::string& s, int max) {
    int chars = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xc0) == 0x80) continue;
        if (++chars == max) return i + 3 < s.size() ? s.substr(0, i) + "..." : s;
    }
    return s;
}

constexpr const char* kStyle =
    ".ibf-fabric .bundle{stroke:#8796ad;stroke-width:1;fill:none}"
    ".ibf-fabric .count{fill:#44536b;font-size:10px}"
    ".ibf-fabric .node rect{fill:#eef2f8;stroke:#44536b;stroke-width:1}"
    ".ibf-fabric .node.hostgroup rect{fill:#f7f7f2;stroke:#9a9a86}"
    ".ibf-fabric .node.host rect{fill:#fff;stroke:#c62828}"
    ".ibf-fabric .node.sharp rect{fill:#e8f1e4;stroke:#7d9a70}.ibf-fabric .node.sharp text{font-size:9px}"
    ".ibf-fabric .node.fault rect{stroke:#c62828;stroke-width:2.5}"
    ".ibf-fabric .node text{fill:#17202e;text-anchor:middle}"
    ".ibf-fabric .link.fault path{stroke:#d32f2f;stroke-width:2.5;fill:none}"
    ".ibf-fabric .link.fault.missing path{stroke-dasharray:7 4}"
    ".ibf-fabric .fault-label{fill:#b71c1c;font-weight:bold;paint-order:stroke;stroke:#fff;stroke-width:3px}"
    ".ibf-fabric .row-label{fill:#44536b;font-weight:bold}"
    ".ibf-fabric .legend{fill:#17202e}"
    ".ibf-fabric .legend.fault{fill:#b71c1c}";

// The path of an edge (its geometry comes from the layout): a line, or a curve below one row.
std::string edge_path(const Edge& e) {
    if (e.curved)
        return "M" + num(e.x1) + " " + num(e.y1) + " Q" + num((e.x1 + e.x2) / 2) + " " +
               num(e.y1 + 40 + 8.0 * std::abs(e.lane)) + " " + num(e.x2) + " " + num(e.y2);
    return "M" + num(e.x1) + " " + num(e.y1) + " L" + num(e.x2) + " " + num(e.y2);
}

void render_box(std::string& out, const Box& b, const SvgOptions& opt) {
    const char* cls = b.kind == BoxKind::Switch ? "node switch"
                      : b.kind == BoxKind::Host ? "node host"
                      : b.aggregation           ? "node hostgroup sharp"
                                                : "node hostgroup";
    std::string text = b.kind == BoxKind::HostGroup
                           ? std::to_string(b.hosts) + (b.aggregation ? (b.hosts == 1 ? " SHARP node" : " SHARP nodes")
                                                                      : (b.hosts == 1 ? " host" : " hosts"))
                           : shorten(b.name, opt.max_name_chars);
    out += "<g class=\"" + std::string(cls) + (b.fault ? " fault" : "") + "\"";
    if (b.kind != BoxKind::HostGroup) out += " data-name=\"" + xml_escape(b.name) + "\"";
    else out += std::string(b.aggregation ? " data-aggregation-nodes=\"" : " data-hosts=\"") + std::to_string(b.hosts) + "\"";
    out += "><title>" + xml_escape(b.title) + "</title><rect x=\"" + num(b.x) + "\" y=\"" + num(b.y) + "\" width=\"" +
           num(b.w) + "\" height=\"" + num(b.h) + "\" rx=\"3\"/><text x=\"" + num(b.cx()) + "\" y=\"" +
           num(b.cy() + (b.aggregation ? 3 : 4)) + "\">" + xml_escape(text) + "</text></g>\n";
}

void render_fault(std::string& out, const Edge& e) {
    out += "<g class=\"link fault" + std::string(e.missing ? " missing" : "") + "\" data-kind=\"" + xml_escape(e.kinds) +
           "\" data-a=\"" + xml_escape(e.a) + "\" data-b=\"" + xml_escape(e.b) + "\" data-label=\"" + xml_escape(e.label) +
           "\"><title>" + xml_escape(e.title) + "</title><path d=\"" + edge_path(e) + "\"/>";
    out += "<text class=\"fault-label\" x=\"" + num(e.label_x) + "\" y=\"" + num(e.label_y) + "\">" + xml_escape(e.text) +
           "</text></g>\n";
}

std::string summary_line(const Layout& l) {
    const std::string agg = l.aggregation_nodes == 0 ? ""
                            : std::to_string(l.aggregation_nodes) +
                                  (l.aggregation_nodes == 1 ? " SHARP aggregation node, " : " SHARP aggregation nodes, ");
    return std::to_string(l.switches) + " switches, " + std::to_string(l.hosts) + " hosts, " + agg + std::to_string(l.links) +
           " links; " + std::to_string(l.findings) + " findings, " + std::to_string(l.faults) +
           " drawn in red (grey lines: cable bundles, xN = N cables)";
}

void render_legend(std::string& out, const Layout& l) {
    double y = l.height - 20 - 14.0 * static_cast<double>(std::min<size_t>(l.not_drawn.size(), 20));
    out += "<g class=\"legend-box\"><text class=\"legend\" x=\"20\" y=\"" + num(y) + "\">" + summary_line(l) + "</text>\n";
    for (size_t i = 0; i < l.not_drawn.size() && i < 20; ++i) {
        const Finding& f = l.not_drawn[i];
        y += 14;
        out += "<text class=\"legend fault not-drawn\" data-kind=\"" + std::string(to_string(f.kind)) + "\" x=\"20\" y=\"" +
               num(y) + "\">not drawn: " + xml_escape(std::string(to_string(f.kind)) + ": " + f.message) + "</text>\n";
    }
    if (l.not_drawn.size() > 20)
        out += "<text class=\"legend\" x=\"20\" y=\"" + num(y + 14) + "\">... and " +
               std::to_string(l.not_drawn.size() - 20) + " more not drawn</text>\n";
    out += "</g>\n";
}

}  // namespace

std::string render_svg(const Layout& l, const SvgOptions& opt) {
    // The title and the summary line fit (not-drawn lines may run over: their text is in the DOM).
    const double width = std::max({l.width, 40 + 6.7 * static_cast<double>(opt.title.size()),
                                   40 + 6.7 * static_cast<double>(summary_line(l).size())});
    std::string out;
    out.reserve(256 + l.boxes.size() * 260 + l.edges.size() * 80);
    out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ibf-fabric\" width=\"" + num(width) + "\" height=\"" +
           num(l.height) + "\" viewBox=\"0 0 " + num(width) + " " + num(l.height) + "\" data-findings=\"" +
           std::to_string(l.findings) + "\" data-faults=\"" + std::to_string(l.faults) +
           "\" font-family=\"DejaVu Sans Mono,monospace\" font-size=\"11\">\n<style>" + kStyle + "</style>\n";
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
    if (!opt.title.empty()) out += "<text class=\"row-label\" x=\"20\" y=\"22\">" + xml_escape(opt.title) + "</text>\n";
    for (const Row& r : l.rows)
        out += "<text class=\"row-label\" x=\"20\" y=\"" + num(r.y + 15) + "\">" + xml_escape(r.name) + "</text>\n";
    out += "<g class=\"bundles\">\n";
    for (const Edge& e : l.edges) {
        if (e.fault) continue;
        out += "<path class=\"bundle\" d=\"" + edge_path(e) + "\"";
        if (e.cables > 1) out += " stroke-width=\"" + num(std::min(1.0 + 0.5 * (e.cables - 1), 4.0)) + "\"";
        out += "/>";
        if (e.cables > 1)
            out += "<text class=\"count\" x=\"" + num(e.label_x) + "\" y=\"" + num(e.label_y) + "\">x" +
                   std::to_string(e.cables) + "</text>";
        out += "\n";
    }
    out += "</g>\n<g class=\"nodes\">\n";
    for (const Box& b : l.boxes) render_box(out, b, opt);
    out += "</g>\n<g class=\"faults\">\n";
    for (const Edge& e : l.edges)
        if (e.fault) render_fault(out, e);
    out += "</g>\n";
    render_legend(out, l);
    out += "</svg>\n";
    return out;
}

}  // namespace ibf::draw
