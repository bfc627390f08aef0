// The self-contained HTML page: picture, findings, SM and counter tables (page.h).
#include "ibf/page.h"

#include <algorithm>
#include <cstdio>

#include "ibf/draw.h"

namespace ibf::draw {
namespace {

// No script at all, nothing loaded from anywhere: styles and the SVG are inline.
constexpr const char* kHead =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
    "img-src data:\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

constexpr const char* kCss =
    "body{font-family:DejaVu Sans,Arial,sans-serif;margin:16px;color:#17202e;background:#fafbfc}"
    "h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 6px}"
    ".facts{color:#44536b;font-size:13px}.facts span{margin-right:16px}"
    ".banner{background:#fff3cd;border:1px solid #e0b000;padding:8px 12px;margin:10px 0;font-weight:bold}"
    ".nodata{color:#8a4b00;background:#fff8e6;border:1px dashed #e0b000;padding:8px 12px;display:inline-block}"
    "table{border-collapse:collapse;font-size:13px;background:#fff}"
    "th,td{border:1px solid #d5dbe5;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#eef2f8}tr.sev-error td.sev{color:#b71c1c;font-weight:bold}"
    "tr.sev-critical td.sev{color:#fff;background:#b71c1c;font-weight:bold}"
    "tr.sev-warning td.sev{color:#a05a00;font-weight:bold}"
    ".picture{overflow:auto;border:1px solid #d5dbe5;background:#fff;max-height:80vh}"
    "#fit:checked~.picture svg{width:100%;height:auto}"
    ".note{color:#44536b;font-size:12px;margin-top:4px}.summary{margin:4px 0}"
    "tr.over td{background:#fdecea}td.spark{padding:1px 4px}"
    ".spark polyline{fill:none;stroke:#3b5b92;stroke-width:1.5}.spark circle{fill:#3b5b92}"
    "tr.over .spark polyline{stroke:#b71c1c}tr.over .spark circle{fill:#b71c1c}";

std::string end_text(const Endpoint& e) {
    if (e.name.empty() && e.guid == 0) return "";
    std::string s = e.name.empty() ? guid_hex(e.guid) : e.name;
    return e.port ? s + "/" + std::to_string(e.port) : s;
}

std::string cell(const std::string& s, const char* cls = nullptr) {
    return std::string("<td") + (cls ? std::string(" class=\"") + cls + "\"" : "") + ">" + xml_escape(s) + "</td>";
}

std::string render_table(const Table& t) {
    std::string out = "<section id=\"" + xml_escape(t.id) + "\">\n<h2>" + xml_escape(t.caption) + "</h2>\n";
    if (!t.summary.empty()) out += "<p class=\"summary\">" + xml_escape(t.summary) + "</p>\n";
    if (t.rows.empty()) {
        if (t.summary.empty()) out += "<p class=\"nodata\">" + xml_escape(t.empty) + "</p>\n";
    } else {
        out += "<table>\n<tr>";
        for (const auto& h : t.head) out += "<th>" + xml_escape(h) + "</th>";
        out += "</tr>\n";
        for (size_t i = 0; i < t.rows.size(); ++i) {
            const bool cls = i < t.row_class.size() && !t.row_class[i].empty();
            out += cls ? "<tr class=\"" + xml_escape(t.row_class[i]) + "\">" : std::string("<tr>");
            for (const auto& c : t.rows[i]) out += cell(c);
            if (!t.sparks.empty()) out += "<td class=\"spark\">" + (i < t.sparks.size() ? render_sparkline(t.sparks[i]) : "") + "</td>";
            out += "</tr>\n";
        }
        out += "</table>\n";
    }
    if (!t.note.empty()) out += "<p class=\"note\">" + xml_escape(t.note) + "</p>\n";
    return out + "</section>\n";
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

}  // namespace

std::string render_sparkline(const Sparkline& s, int width, int height) {
    if (s.points.empty()) return "";
    const double pad = 2, w = width - 2 * pad, h = height - 2 * pad;
    double x0 = s.points.front().first, x1 = s.points.back().first, y0 = s.points.front().second, y1 = y0;
    for (const auto& [x, y] : s.points) {
        y0 = std::min(y0, y);
        y1 = std::max(y1, y);
    }
    auto px = [&](double x) { return x1 > x0 ? pad + (x - x0) / (x1 - x0) * w : pad + w; };
    auto py = [&](double y) { return y1 > y0 ? pad + h - (y - y0) / (y1 - y0) * h : pad + h / 2; };
    const std::string W = std::to_string(width), H = std::to_string(height);
    std::string out = "<svg class=\"spark\" width=\"" + W + "\" height=\"" + H + "\" viewBox=\"0 0 " + W + " " + H +
                      "\" role=\"img\"><title>" + xml_escape(s.title) + "</title>";
    if (s.points.size() > 1) {
        out += "<polyline points=\"";
        for (size_t i = 0; i < s.points.size(); ++i)
            out += (i ? " " : "") + num(px(s.points[i].first)) + "," + num(py(s.points[i].second));
        out += "\"/>";
    }
    const auto& [lx, ly] = s.points.back();
    return out + "<circle cx=\"" + num(px(lx)) + "\" cy=\"" + num(py(ly)) + "\" r=\"2\"/></svg>";
}

std::string render_findings_table(const std::vector<Finding>& fs, const std::string& empty) {
    if (fs.empty()) return "<p class=\"nodata\" id=\"findings\">" + xml_escape(empty) + "</p>\n";
    std::string out =
        "<table id=\"findings\">\n<tr><th>severity</th><th>kind</th><th>end A</th><th>end B</th><th>expected</th>"
        "<th>actual</th><th>cable label</th><th>what to do</th></tr>\n";
    for (const Finding& f : fs) {
        const std::string sev(to_string(f.severity));
        out += "<tr class=\"finding sev-" + sev + "\" data-kind=\"" + std::string(to_string(f.kind)) + "\">" +
               cell(sev, "sev") + cell(std::string(to_string(f.kind))) + cell(end_text(f.a)) + cell(end_text(f.b)) +
               cell(f.expected) + cell(f.actual) + cell(f.label) + cell(f.message) + "</tr>\n";
    }
    return out + "</table>\n";
}

std::string render_page(const Page& p) {
    std::string out = kHead;
    out += "<title>" + xml_escape(p.title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n";
    out += "<h1>" + xml_escape(p.title) + "</h1>\n<div class=\"facts\">";
    for (const auto& [k, v] : p.facts) out += "<span>" + xml_escape(k) + ": <b>" + xml_escape(v) + "</b></span>";
    out += "</div>\n";
    if (!p.warning.empty()) out += "<div class=\"banner\" id=\"warning\">" + xml_escape(p.warning) + "</div>\n";
    out += "<section id=\"picture\">\n<h2>Fabric</h2>\n";
    if (p.svg.empty()) {
        out += "<p class=\"nodata\">" + xml_escape(p.no_picture) + "</p>\n";
    } else {
        out += "<input type=\"checkbox\" id=\"fit\"><label for=\"fit\"> fit to the window</label>\n"
               "<div class=\"picture\">\n" + p.svg + "</div>\n";
    }
    out += "</section>\n<section id=\"findings-section\">\n<h2>Findings (" + std::to_string(p.findings.size()) +
           ")</h2>\n" + render_findings_table(p.findings, p.findings_empty) + "</section>\n";
    for (const Table& t : p.tables) out += render_table(t);
    out += "</body>\n</html>\n";
    return out;
}

}  // namespace ibf::draw
