// One self-contained HTML page about a fabric: a status banner, the picture (inline SVG from
// draw.h), the findings table, and tables of SM states and link counters, or a clear "no data"
// line where there is none (never an empty panel that looks healthy). No external assets and no
// script: inline CSS only, and a Content-Security-Policy that forbids loading anything. Every text
// is escaped (xml_escape). Pure.
//
//   ibf::draw::Page p;
//   p.title = "fabric (sweep 12)";
//   p.svg = ibf::draw::render_svg(layout);
//   p.findings = findings;
//   p.sms = {.caption = "Subnet Managers", .head = {"GUID", "state"}, .rows = {{"0x...", "MASTER"}},
//            .empty = "no SM has connected"};
//   std::string html = ibf::draw::render_page(p);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ibf/finding.h"

namespace ibf::draw {

// A small line of values for a table cell: inline SVG without axes, x and y scaled to the box
// (a flat line in the middle when every y is equal), a dot on the last point, `title` as its
// tooltip. No points: "".
//
//   render_sparkline({.points = {{0, 3}, {60, 3}, {120, 57}}, .title = "3 -> 57"})
//   // <svg class="spark" width="96" height="20" viewBox="0 0 96 20" role="img"><title>3 -&gt; 57</title>...
struct Sparkline {
    std::vector<std::pair<double, double>> points;  // (x, y), x ascending
    std::string title;                              // tooltip, escaped
};
std::string render_sparkline(const Sparkline& s, int width = 96, int height = 20);

struct Table {
    std::string id;                                // element id ("sms", "counters")
    std::string caption;                           // heading above the table
    std::vector<std::string> head;                 // column names (one more for `sparks`)
    std::vector<std::vector<std::string>> rows;
    std::string empty;                             // shown instead of the table when rows is empty
    std::string note;                              // one line under the table, "" none
    std::string summary;                           // one line above the table, "" none; with no rows it
                                                   // stands alone instead of `empty` ("40 ports, no errors")
    std::vector<std::string> row_class;            // per row, the <tr> class ("" or missing: none)
    std::vector<Sparkline> sparks;                 // per row, drawn in a last cell (empty: no such column)
};

struct Page {
    std::string title;                             // <title> and heading
    std::vector<std::pair<std::string, std::string>> facts;  // "sweep" -> "12", shown under the heading
    std::string warning;                           // a banner (no data, stale), "" none
    std::string svg;                               // render_svg() output, inserted as is; "" none
    std::string no_picture;                        // shown when svg is "" ("no fabric yet")
    std::vector<Finding> findings;
    std::string findings_empty = "no findings";    // shown when findings is empty
    std::vector<Table> tables;                     // after the findings: SMs, counters, ...
};

std::string render_page(const Page& p);

// The findings table alone (<table id="findings">, one <tr class="finding sev-error"
// data-kind="miswired"> per finding).
std::string render_findings_table(const std::vector<Finding>& fs, const std::string& empty);

}  // namespace ibf::draw
