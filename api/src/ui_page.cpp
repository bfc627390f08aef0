// The daemon's web page and picture (ui_page.h).
#include "ibf/ui_page.h"

#include <cstdio>

#include "ibf/analysis.h"
#include "ibf/api.h"
#include "ibf/counter_panel.h"
#include "ibf/page.h"

namespace ibf {
namespace {

draw::Table sm_table(const ControllerState& st, std::optional<Guid> master) {
    draw::Table t{.id = "sms", .caption = "Subnet Managers",
                  .head = {"port GUID", "LID", "priority", "state", "role", "plugin connection", "last heartbeat",
                           "snapshots", "events dropped"},
                  .empty = "no Subnet Manager has connected to this daemon yet"};
    for (const auto& [guid, r] : st.sms()) {
        const SmInfo info = st.sm_info(guid);
        std::string role = master && *master == guid ? "master" : "";
        if (st.current_source() && *st.current_source() == guid) role += role.empty() ? "source of the fabric" : ", source of the fabric";
        t.rows.push_back({guid_hex(guid), std::to_string(st.sm_lid(guid)), std::to_string(info.priority), std::string(to_string(info.state)), role,
                          r.connected() ? "connected" : "disconnected",
                          r.last_heartbeat_ms ? iso_time(r.last_heartbeat_ms) : "never",
                          std::to_string(r.snapshots_received),
                          r.counters ? std::to_string(r.counters->events_dropped) : "-"});
    }
    return t;
}

std::string count_text(uint64_t v) { return std::to_string(v); }

std::string rate_text(std::optional<double> v) {
    if (!v) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, *v >= 100 ? "%.0f" : *v >= 10 ? "%.1f" : "%.2f", *v);
    return buf;
}

std::string threshold_text(const std::optional<uint64_t>& t) {
    if (!t) return "not watched";
    return *t == 0 ? "any increase" : "> " + std::to_string(*t);
}

std::string ends_text(const CounterPanelRow& r) {
    std::string s;
    for (const CounterEnd& e : r.ends)
        s += (s.empty() ? "" : ", ") + e.name + " " + std::to_string(e.total) +
             (e.growth ? " (+" + std::to_string(e.growth) + ")" : "");
    return s;
}

draw::Sparkline trend_line(const CounterPanelRow& r) {
    draw::Sparkline sp;
    if (r.trend.empty()) return sp;
    for (const CounterTrendPoint& p : r.trend)
        sp.points.push_back({static_cast<double>(p.at_ms - r.trend.front().at_ms), static_cast<double>(p.total)});
    sp.title = std::string(iba_name(r.counter)) + " " + std::to_string(r.trend.front().total) + " -> " +
               std::to_string(r.trend.back().total) + " over " + std::to_string(r.trend.size()) + " readings, " +
               iso_time(r.trend.front().at_ms) + " .. " + iso_time(r.trend.back().at_ms);
    return sp;
}

std::string panel_summary(const CounterPanel& p) {
    std::string s = std::to_string(p.ports) + (p.ports == 1 ? " port" : " ports") + " counted";
    if (p.links_with_errors == 0 && p.other_ports_with_errors == 0) return s + ", no errors";
    s += ": " + std::to_string(p.links_with_errors) + " of " + std::to_string(p.links) + " links with errors";
    if (p.other_ports_with_errors) s += ", " + std::to_string(p.other_ports_with_errors) + " ports on no current link";
    return s + "; worst first (red: over its threshold, a port_errors finding)";
}

// Per-link error counters from OpenSM's perfmgr (counter_panel.h), or why there are none.
draw::Table counters_table(const ControllerState& st, const std::vector<std::string>& names, int64_t now_ms) {
    const Fabric* f = st.current() ? &st.current()->fabric : nullptr;
    auto name_of = [&](Guid g) -> std::string {
        const auto id = f ? f->find(g) : std::nullopt;
        if (!id) return "";
        return *id < names.size() && !names[*id].empty() ? names[*id] : f->node(*id).name;
    };
    const CounterPanel p = counter_panel(st.port_counters(), st.links().get(), now_ms, 50, name_of);
    const std::string window = duration_text(p.window_ms);
    draw::Table t{.id = "counters", .caption = "Link error counters",
                  .head = {"link", "cable", "counter", "total", "+ within " + window, "per hour (trend)", "by end",
                           "threshold per " + window, "trend"},
                  .empty = "no counter data: this daemon has received no port counters from the master's plugin "
                           "(OpenSM's perfmgr is off: `perfmgr TRUE` in opensm.conf, or has not read the ports yet: "
                           "one reading per perfmgr_sweep_time_s); links that flap are findings above, link state "
                           "and rate per link are in /metrics"};
    if (p.ports == 0) return t;
    t.summary = panel_summary(p);
    for (const CounterPanelRow& r : p.rows) {
        t.rows.push_back({r.link(), r.label, std::string(iba_name(r.counter)), count_text(r.total),
                          "+" + count_text(r.growth), rate_text(r.per_hour), ends_text(r), threshold_text(r.threshold)});
        t.row_class.push_back(r.over ? "counter over" : "counter");
        t.sparks.push_back(trend_line(r));
    }
    if (p.more)
        t.note = std::to_string(p.more) + " more rows not shown (the " + std::to_string(p.rows.size()) +
                 " worst are; every link's totals are in /metrics)";
    return t;
}

}  // namespace

UiDrawJob ui_draw_job(const ControllerState& st, int64_t now_ms) {
    UiDrawJob j;
    j.snapshot = st.current();
    if (!j.snapshot) return j;
    const Fabric& f = j.snapshot->fabric;
    const auto& la = st.analysis();
    const bool same = la && st.analysis_sweep_seq() == j.snapshot->sweep_seq && la->tier_of.size() == f.size() &&
                      la->names.size() == f.size();
    if (same) j.analysis = la;
    j.findings = st.findings_at(now_ms);
    if (same && !st.checked()) j.findings.insert(j.findings.end(), la->findings.begin(), la->findings.end());
    if (j.findings.size() > kUiMaxFindings) j.findings.resize(kUiMaxFindings);
    j.title = "sweep " + std::to_string(j.snapshot->sweep_seq) + " at " + iso_time(now_ms);
    return j;
}

namespace {
draw::DrawInput draw_input(const UiDrawJob& j) {
    draw::DrawInput in;
    if (!j.snapshot) return in;
    in.fabric = &j.snapshot->fabric;
    if (j.analysis) {
        in.tier_of = j.analysis->tier_of;
        in.names = j.analysis->names;  // the NameBook names the findings use (plan names, node-name-map)
    } else {                           // the analysis failed or is of another sweep: analyze here
        Analysis a = analyze(*in.fabric);
        in.tier_of = std::move(a.tier_of);
        in.names = std::move(a.names);
    }
    in.findings = j.findings;
    return in;
}
}  // namespace

std::string ui_draw_svg(const UiDrawJob& j) {
    if (!j.snapshot) return "";
    return draw::render_svg(draw::layout(draw_input(j)), {.title = j.title});
}

draw::DrawInput ui_draw_input(const ControllerState& st, int64_t now_ms) {
    UiDrawJob j = ui_draw_job(st, now_ms);
    draw::DrawInput in = draw_input(j);
    if (in.fabric) in.fabric = &st.current()->fabric;  // the job's reference dies here; the state's lives on
    return in;
}

std::string ui_fabric_svg(const ControllerState& st, int64_t now_ms) { return ui_draw_svg(ui_draw_job(st, now_ms)); }

std::string ui_page_html(const ControllerState& st, int64_t now_ms, bool topology_configured, const std::string* picture,
                         const std::string& picture_note) {
    const std::optional<Guid> master = st.master();
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
    if (master) p.facts.push_back({"master SM", guid_hex(*master)});
    p.facts.push_back({"checked against a plan", st.have_findings() ? (st.checked() ? "yes" : "no (no topology)")
                                                                    : (topology_configured ? "not yet" : "no (no topology)")});
    p.facts.push_back({"page time", iso_time(now_ms)});
    if (d.state != DataState::fresh) p.warning = d.message;
    UiDrawJob job = ui_draw_job(st, now_ms);  // its findings: those shown, at most kUiMaxFindings
    size_t total = job.findings.size();
    if (total == kUiMaxFindings) {  // how many there are in all (counted, not copied twice)
        total = st.findings_at(now_ms).size();
        if (job.analysis && !st.checked()) total += job.analysis->findings.size();
    }
    if (picture) p.svg = *picture;
    else if (job.snapshot) p.svg = ui_draw_svg(job);
    p.no_picture = !job.snapshot ? "no fabric yet: no Subnet Manager has sent a snapshot" : picture_note;
    p.findings = job.snapshot ? std::move(job.findings) : st.findings_at(now_ms);
    if (p.findings.size() > kUiMaxFindings) {
        total = p.findings.size();
        p.findings.resize(kUiMaxFindings);
    }
    if (total > p.findings.size())
        p.facts.push_back({"findings shown", std::to_string(p.findings.size()) + " of " + std::to_string(total) +
                                                 " (every one: GET /api/v1/findings, ibfabric findings)"});
    p.findings_empty = d.state == DataState::no_data ? "no data yet: not checked" : "no findings";
    p.tables.push_back(sm_table(st, master));
    const std::vector<std::string> no_names;
    p.tables.push_back(counters_table(st, job.analysis ? job.analysis->names : no_names, now_ms));
    return draw::render_page(p);
}

}  // namespace ibf
