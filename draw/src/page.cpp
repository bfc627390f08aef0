// The self-contained HTML page: picture, findings, SM and counter tables (page.h).
#include "ibf/page.h"

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
    "tr.sev-warning td.sev{color:#a05a00;font-weight:bold}"
    ".picture{overflow:auto;border:1px solid #d5dbe5;background:#fff;max-height:80vh}"
    "#fit:checked~.picture svg{width:100%;height:auto}"
    ".note{color:#44536b;font-size:12px;margin-top:4px}";

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
    if (t.rows.empty()) {
        out += "<p class=\"nodata\">" + xml_escape(t.empty) + "</p>\n";
    } else {
        out += "<table>\n<tr>";
        for (const auto& h : t.head) out += "<th>" + xml_escape(h) + "</th>";
        out += "</tr>\n";
        for (const auto& row : t.rows) {
            out += "<tr>";
            for (const auto& c : row) out += cell(c);
            out += "</tr>\n";
        }
        out += "</table>\n";
    }
    if (!t.note.empty()) out += "<p class=\"note\">" + xml_escape(t.note) + "</p>\n";
    return out + "</section>\n";
}

}  // namespace

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
