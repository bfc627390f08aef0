// A picture of the fabric: switches in rows by tier (routing/'s tier inference), parallel cables
// between two switches drawn as one bundle with a count, hosts collapsed into one box per switch
// with a count, and every link a finding names in red with its label (docs/cli.md, `draw`).
// Pure: layout and SVG text only, no I/O, no clocks.
//
//   ibf::Analysis a = ibf::analyze(fabric);
//   ibf::draw::DrawInput in{.fabric = &fabric, .tier_of = a.tier_of, .names = a.names, .findings = fs};
//   ibf::draw::Layout l = ibf::draw::layout(in);       // boxes and edges with coordinates
//   std::string svg = ibf::draw::render_svg(l);        // <svg ...> with class "fault" on red links
//
// Layout: the highest tier on top, leaves at the bottom, each switch's hosts in a box below it
// ("18 hosts"); a host with a faulty link gets a box of its own next to that group (listed by
// name); a switch's SHARP aggregation nodes are a small tag hanging from its box ("1 SHARP
// node"). Switches of tier 0 (no path to hosts) get a row of their own on top. Leaves start in
// natural name order ("leaf2" < "leaf10"); each higher row is ordered by the mean position of its
// links below (so a pod's spines sit over the pod's leaves) and spread over the full width; then
// the leaves are regrouped by the mean position of their links above and the rows above follow
// again (a few rounds), so leaves that share their spines sit together: on a rail-optimized
// fabric (DGX SuperPOD: leaf i of every SU cabled to the spines of rail i) the leaves of a rail
// under their rail's spines, not in SU order with every spine's cables across the whole picture.
// Neighbours in a row that share no switch of the next row get a wider gap (rails, pods).
// A row with more switches than fit in that width wraps into several lines (neighbours in that
// order stacked over each other), so 400 cores over 80 leaves do not make the picture 40k wide.
// Bundle counts and red labels go where they cover no box and no other label when they can.
//
// Findings are placed by their endpoints (GUID first, then name): an end whose port is cabled
// marks that cable red ("fault"); two ends with no cable between them (missing_link) give a
// dashed red line ("fault missing"); a finding about a whole node outlines its box in red; the
// rest (a planned node that is absent) are listed under the picture as not drawn.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/natural.h"

namespace ibf::draw {

struct DrawInput {
    const Fabric* fabric = nullptr;
    std::vector<int> tier_of;          // per NodeId: 1 leaf, 2 spine, ...; 0 hosts and unknown
    std::vector<std::string> names;    // display name per NodeId; "" or missing: Node::name
    std::vector<Finding> findings;     // check or analysis findings about this fabric
};

enum class BoxKind { Switch, HostGroup, Host };

struct Box {
    BoxKind kind = BoxKind::Switch;
    NodeId node = kNoNode;       // the switch or host; for a HostGroup, the switch it hangs off
    std::string name;            // switch or host name; "" for a group
    int row = 0;                 // index into Layout::rows
    int hosts = 0;               // HostGroup: hosts collapsed into it
    bool aggregation = false;    // HostGroup of SHARP aggregation nodes (not hosts; ibf::is_aggregation_node):
                                 // a tag tag_h high right under its switch, in the switch's row, no line to it
    std::vector<std::string> host_names;  // HostGroup: their names (natural order)
    bool fault = false;          // a finding names this node (red outline)
    std::string title;           // tooltip: finding messages, GUID
    double x = 0, y = 0, w = 0, h = 0;  // top-left corner and size, in SVG user units
    double cx() const { return x + w / 2; }
    double cy() const { return y + h / 2; }
};

struct Edge {
    int from = 0, to = 0;        // box indices, `from` is the upper one
    int cables = 1;              // cables in this bundle (healthy bundles), 1 for a red link
    bool fault = false;          // drawn red: a finding names this cable
    bool missing = false;        // fault on a cable that is not there (dashed)
    std::string kinds;           // "miswired" or "miswired rate_mismatch" (fault only)
    std::string a, b;            // port labels of both ends ("leaf03/19"), fault only
    std::string label;           // the plan's cable label(s), "" when unknown
    std::string text;            // the red label drawn next to the link
    std::string title;           // tooltip: the findings' messages
    int lane = 0;                // 0, 1, -1, 2, ...: offset of parallel red links between two boxes
    // Geometry: from the bottom of the upper box (or of its SHARP tag) to the top of the lower
    // one, shifted by the lane (boxes of one row: from bottom to bottom, curved below). The start
    // (baseline) of the red label, or of the count of a bundle of several cables, placed where it
    // overlaps no box and no other label when there is such a place.
    double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
    bool curved = false;
    double label_x = 0, label_y = 0;
};

struct Row {
    std::string name;            // "core", "spine", "leaf", "hosts", "unknown tier"
    double y = 0;
};

struct Layout {
    std::vector<Row> rows;
    std::vector<Box> boxes;
    std::vector<Edge> edges;
    std::vector<Finding> not_drawn;  // findings with no box to put them on
    double width = 0, height = 0;
    int switches = 0, hosts = 0, links = 0, faults = 0;  // faults: red edges and red boxes
    int aggregation_nodes = 0;       // SHARP aggregation nodes: CAs, but not counted as hosts
    size_t findings = 0;             // findings given
};

struct LayoutOptions {
    double box_w = 84, box_h = 22;   // switch and host boxes
    double tag_h = 12;               // the SHARP tag hanging from a switch (its aggregation nodes)
    double gap = 10;                 // between boxes of a row
    double group_gap = 40;           // more between leaves that share no upper switch (rails, pods)
    double row_gap = 170;            // between tier rows
    double host_gap = 70;            // from a switch row down to its host boxes
    double line_gap = 14;            // between the lines of a wrapped row
    double min_width = 1200;         // rows wrap at max(this, the lowest row's width)
    double margin = 20, label_w = 70;  // around the picture; the row names' column on the left
    double lane_gap = 7;             // between parallel red links
    double char_w = 6.7;             // width of one character of a label (11px monospace, bold)
    double count_char_w = 6;         // of a bundle's count ("x5", 10px)
};

Layout layout(const DrawInput& in, const LayoutOptions& opt = {});

struct SvgOptions {
    std::string title;               // drawn on top, "" none
    int max_name_chars = 14;         // longer names are cut with "..." (full name in the tooltip)
};

// A standalone SVG document (also valid inline in HTML5). The root carries
// data-findings="<n>" and data-faults="<n>"; red links are <g class="link fault"> with
// data-kind, data-a, data-b and data-label; healthy bundles are <path class="bundle"> (with <text class="count">xN</text> when N > 1).
std::string render_svg(const Layout& l, const SvgOptions& opt = {});

// Text for XML/HTML content and attribute values: & < > " ' become entities; control bytes,
// C1 controls and invalid UTF-8 become the literal text \xNN first (ibf::terminal_safe), so an
// untrusted NodeDescription can neither break the markup nor make it invalid XML.
//   xml_escape("a<b & \"c\"") -> "a&lt;b &amp; &quot;c&quot;"
std::string xml_escape(std::string_view s);

// Natural order for names: the project's one order (ibf/natural.h).
using ibf::natural_less;

}  // namespace ibf::draw
