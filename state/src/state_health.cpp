// ControllerState, link health part: no-data / stale, flapping findings, reloads (docs/metrics.md).
#include <algorithm>
#include <map>

#include "ibf/iso_time.h"
#include "ibf/controller_state.h"

namespace ibf {
namespace {

std::string seconds_text(int64_t ms) { return std::to_string((ms + 500) / 1000) + " s"; }

// "leaf01/3" for an end, "leaf01" (or the GUID) when the port is unknown.
std::string end_text(const FlapEnd& e) {
    std::string n = e.name.empty() ? guid_hex(e.guid) : e.name;
    return e.port ? n + "/" + std::to_string(e.port) : n;
}

}  // namespace

std::string_view to_string(DataState s) {
    switch (s) {
        case DataState::no_data: return "no_data";
        case DataState::stale: return "stale";
        case DataState::fresh: return "fresh";
    }
    return "no_data";
}

void ControllerState::configure(const HealthOptions& h) {
    health_ = h;
    flaps_.set_options(h.flap);
    port_counters_for_write().set_options(h.port_errors);
    pe_memo_.valid = false;  // other thresholds or window
}

void ControllerState::note_reload(bool ok, int64_t now_ms) {
    reload_ok_ = ok;
    if (ok) reload_ok_ms_ = now_ms;
}

DataStatus ControllerState::data_status(int64_t now_ms) const {
    DataStatus d;
    if (!current_) {
        d.message = "no data: no snapshot received yet (is OpenSM running with the ibfabric plugin? docs/plugin.md)";
        return d;
    }
    d.as_of_ms = current_confirmed_ms_;
    if (!have_findings()) {
        d.message = "no data: sweep " + std::to_string(current_->sweep_seq) + " received, its check is not done yet";
        return d;
    }
    if (now_ms - d.as_of_ms > health_.stale_after_ms) {
        d.state = DataState::stale;
        d.message = "stale: the fabric (sweep " + std::to_string(current_->sweep_seq) + " from SM " +
                    guid_hex(*current_source_) + ") was last confirmed " + seconds_text(now_ms - d.as_of_ms) +
                    " ago (health.stale_after_s " + std::to_string(health_.stale_after_ms / 1000) +
                    "): is that SM and its plugin still running and connected?";
        return d;
    }
    d.state = DataState::fresh;
    return d;
}

std::vector<Finding> ControllerState::flapping_findings(int64_t now_ms) const {
    std::vector<Finding> out;
    const auto fl = flaps_.flapping(now_ms);
    if (fl.empty()) return out;
    // Plan labels and the administrator's names from the latest link table (its index of both ends).
    for (const Flapping& f : fl) {
        FlapEnd a = f.a, b = f.b;
        std::string label;
        const LinkRow* row = nullptr;
        if (links_ && a.port)
            if (auto it = links_->row_of.find({a.guid, a.port}); it != links_->row_of.end()) row = &links_->rows[it->second];
        if (row) {
            const LinkRow& r = *row;  // the link is up now: names and label as /metrics has them
            a = {r.local_guid, r.local_port, r.local_name};
            b = {r.remote_guid, r.remote_port, r.remote_name};
            label = r.label;
        }
        Finding fd;
        fd.kind = FindingKind::link_flapping;
        fd.severity = default_severity(fd.kind);
        fd.a = {a.name, a.guid, a.port};
        if (b.guid) fd.b = {b.name, b.guid, b.port};
        fd.label = label;
        fd.expected = "stable";
        fd.actual = std::to_string(f.count) + " flaps, first " + iso_time(f.first_ms) + ", last " + iso_time(f.last_ms);
        if (b.guid)
            fd.message = end_text(a) + " -- " + end_text(b) + (label.empty() ? "" : " (cable " + label + ")") +
                         " went down and up " + std::to_string(f.count) + " times from " + iso_time(f.first_ms) +
                         " to " + iso_time(f.last_ms) +
                         "; reseat the cable and clean the optics, replace the cable if it keeps flapping";
        else
            fd.message = "switch " + end_text(a) + " reported " + std::to_string(f.count) +
                         " link changes (trap 128) that no sweep saw: a port flaps faster than OpenSM sweeps; "
                         "find it with the switch's LinkDownedCounter (perfquery) and reseat its cable";
        out.push_back(std::move(fd));
    }
    return out;
}

std::vector<Finding> ControllerState::all_findings_at(int64_t now_ms) const {
    std::vector<Finding> all = findings_;
    auto fl = flapping_findings(now_ms);
    auto pe = port_error_findings(now_ms);
    if (fl.empty() && pe.empty() && ha_findings_.empty()) return all;
    all.insert(all.end(), std::make_move_iterator(fl.begin()), std::make_move_iterator(fl.end()));
    all.insert(all.end(), std::make_move_iterator(pe.begin()), std::make_move_iterator(pe.end()));
    all.insert(all.end(), ha_findings_.begin(), ha_findings_.end());  // the SMs' own (ha/)
    std::stable_sort(all.begin(), all.end(), [](const Finding& x, const Finding& y) { return x.kind < y.kind; });
    return all;
}

}  // namespace ibf
