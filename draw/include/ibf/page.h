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

struct Table {
    std::string id;                                // element id ("sms", "counters")
    std::string caption;                           // heading above the table
    std::vector<std::string> head;                 // column names
    std::vector<std::vector<std::string>> rows;
    std::string empty;                             // shown instead of the table when rows is empty
    std::string note;                              // one line under the table, "" none
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
