// The daemon's web page and picture (ui_page.h).
#include "ibf/ui_page.h"

#include "ibf/analysis.h"
#include "ibf/api.h"
#include "ibf/page.h"

namespace ibf {
namespace {

std::string state_text(const SmRecord& r) { return std::string(to_string(r.info.state)); }

draw::Table sm_table(const ControllerState& st) {
    draw::Table t{.id = "sms", .caption = "Subnet Managers",
                  .head = {"port GUID", "LID", "priority", "state", "role", "plugin connection", "last heartbeat",
                           "snapshots", "events dropped"},
                  .empty = "no Subnet Manager has connected to this daemon yet"};
    const auto master = st.master();
    for (const auto& [guid, r] : st.sms()) {
        std::string role = master && *master == guid ? "master" : "";
        if (st.current_source() && *st.current_source() == guid) role += role.empty() ? "source of the fabric" : ", source of the fabric";
        t.rows.push_back({guid_hex(guid), std::to_string(r.info.lid), std::to_string(r.info.priority), state_text(r), role,
                          r.connected() ? "connected" : "disconnected",
                          r.last_heartbeat_ms ? iso_time(r.last_heartbeat_ms) : "never",
                          std::to_string(r.snapshots_received),
                          r.counters ? std::to_string(r.counters->events_dropped) : "-"});
    }
    return t;
}

// Per-link error counters: none reach this daemon yet, so the panel says so instead of showing an
// empty (healthy-looking) table. Flapping links are findings and appear in the findings table.
draw::Table counters_table() {
    return {.id = "counters", .caption = "Link error counters",
            .head = {"link", "counter", "value"},
            .empty = "no counter data: this daemon has received no port error counters (symbol errors, link "
                     "downed, ...); links that flap are findings above, link state and rate per link are in /metrics"};
}

}  // namespace

draw::DrawInput ui_draw_input(const ControllerState& st, int64_t now_ms) {
    draw::DrawInput in;
    const auto& cur = st.current();
    if (!cur) return in;
    const Fabric& f = cur->fabric;
    in.fabric = &f;
    const auto& la = st.analysis();
    const bool same = la && st.analysis_sweep_seq() == cur->sweep_seq && la->tier_of.size() == f.size() &&
                      la->names.size() == f.size();
    if (same) {
        in.tier_of = la->tier_of;
        in.names = la->names;  // the NameBook names the findings use (plan names, node-name-map)
    } else {                   // the analysis failed or is of another sweep: analyze here
        Analysis a = analyze(f);
        in.tier_of = std::move(a.tier_of);
        in.names = std::move(a.names);
    }
    in.findings = st.findings_at(now_ms);
    if (same && !st.checked()) in.findings.insert(in.findings.end(), la->findings.begin(), la->findings.end());
    return in;
}

std::string ui_fabric_svg(const ControllerState& st, int64_t now_ms) {
    draw::DrawInput in = ui_draw_input(st, now_ms);
    if (!in.fabric) return "";
    const std::string title = "sweep " + std::to_string(st.current()->sweep_seq) + " at " + iso_time(now_ms);
    return draw::render_svg(draw::layout(in), {.title = title});
}

std::string ui_page_html(const ControllerState& st, int64_t now_ms, bool topology_configured) {
    draw::Page p;
    p.title = "ibfabricd: the fabric";
    const DataStatus d = st.data_status(now_ms);
    p.facts.push_back({"data", std::string(to_string(d.state))});
    if (const auto& cur = st.current()) {
        const Fabric& f = cur->fabric;
        p.facts.push_back({"sweep", std::to_string(cur->sweep_seq)});
        p.facts.push_back({"switches", std::to_string(f.count(NodeType::Switch))});
        p.facts.push_back({"CAs", std::to_string(f.count(NodeType::CA))});
        p.facts.push_back({"links", std::to_string(f.link_count())});
    }
    if (auto m = st.master()) p.facts.push_back({"master SM", guid_hex(*m)});
    p.facts.push_back({"checked against a plan", st.have_findings() ? (st.checked() ? "yes" : "no (no topology)")
                                                                    : (topology_configured ? "not yet" : "no (no topology)")});
    p.facts.push_back({"page time", iso_time(now_ms)});
    if (d.state != DataState::fresh) p.warning = d.message;
    draw::DrawInput in = ui_draw_input(st, now_ms);
    if (in.fabric) p.svg = draw::render_svg(draw::layout(in));
    p.no_picture = "no fabric yet: no Subnet Manager has sent a snapshot";
    p.findings = in.fabric ? in.findings : st.findings_at(now_ms);
    p.findings_empty = d.state == DataState::no_data ? "no data yet: not checked" : "no findings";
    p.tables.push_back(sm_table(st));
    p.tables.push_back(counters_table());
    return draw::render_page(p);
}

}  // namespace ibf
