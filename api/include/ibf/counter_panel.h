// What the page's "Link error counters" panel shows (docs/api.md, "The page"), as data: per link
// (both ends as the link rows of /metrics name them, the plan's cable label), each error counter
// (symbol_errors .. vl15_dropped) whose total is above 0 at either end, with its total, its growth
// within counters.window_s, its growth per hour over the trend and the trend itself; worst first,
// at most `max_rows`; and how many ports and links were counted without any error. Pure: no I/O,
// time passed in. ui_page.cpp turns it into a draw::Table.
//
//   ibf::CounterPanel p = ibf::counter_panel(state.port_counters(), state.links().get(), now_ms);
//   p.rows[0].link()   // "leaf01/5 -- spine01/1"      p.rows[0].total   // 57 (both ends)
//
// Worst first: rows over their threshold (a port_errors finding) first, then by growth within the
// window, then by total, then by link and counter (stable order for equal rows). A port with counter
// state on no current link (its cable is down, or it left the fabric less than a window ago) is a
// row of its own, named by `name_of` (else its GUID).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ibf/link_table.h"
#include "ibf/port_counters.h"

namespace ibf {

struct CounterEnd {
    std::string name;     // "leaf01/5"
    uint64_t total = 0;   // this counter's total at this end
    uint64_t growth = 0;  // its growth within the window
};

struct CounterTrendPoint {
    int64_t at_ms = 0;
    uint64_t total = 0;   // both ends
};

struct CounterPanelRow {
    std::string a, b;                      // the link's local and remote end; b "" when on no current link
    std::string label;                     // the plan's cable label, "" unknown
    wire::PortCounter counter{};
    uint64_t total = 0;                    // both ends
    uint64_t growth = 0;                   // both ends, within the window
    std::optional<uint64_t> threshold;     // counters.<name> (per window); nullopt: not watched
    bool over = false;                     // one end's growth is above the threshold
    std::vector<CounterEnd> ends;          // the ends whose total is above 0, a first
    std::vector<CounterTrendPoint> trend;  // both ends' total at each of their last readings, oldest first
    std::optional<double> per_hour;        // growth per hour from the trend's first to last point (>= 10 min apart)

    std::string link() const;              // "leaf01/5 -- spine01/1", or "leaf01/7" alone
};

struct CounterPanel {
    std::vector<CounterPanelRow> rows;  // worst first, at most max_rows
    size_t more = 0;                    // rows left out by max_rows
    size_t ports = 0;                   // ports with counter state
    size_t links = 0;                   // current links with counter state at either end
    size_t links_with_errors = 0;       // of those, with an error total above 0 at either end
    size_t other_ports_with_errors = 0; // ports on no current link with an error total above 0
    int64_t window_ms = 0;              // counters.window_s
};

CounterPanel counter_panel(const PortCounterTracker& t, const LinkTable* links, int64_t now_ms,
                           size_t max_rows = 50, const std::function<std::string(Guid)>& name_of = nullptr);

}  // namespace ibf
