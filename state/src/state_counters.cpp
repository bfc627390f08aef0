// ControllerState, port counter part: PortCounters from the master's plugin, port_errors findings
// (docs/findings.md, docs/metrics.md "Port counters").
#include <map>
#include <tuple>

#include "ibf/iso_time.h"
#include "ibf/controller_state.h"

namespace ibf {
namespace {

std::string remediation(wire::PortCounter c) {
    using C = wire::PortCounter;
    switch (c) {
        case C::link_downed:
            return "the link went down without a sweep-visible cause; reseat the cable and clean the optics, replace "
                   "the cable if it persists";
        case C::rcv_switch_relay_errors:
        case C::xmit_discards:
        case C::vl15_dropped:
        case C::xmit_constraint_errors:
        case C::rcv_constraint_errors:
            return "packets dropped at this port: check routing (LFTs) and partitions, and for congestion upstream";
        default: return "clean or reseat the optics; replace the cable if it persists";
    }
}

}  // namespace

bool ControllerState::on_port_counters(ConnId c, const wire::PortCounters& pc, int64_t now_ms) {
    ++ingest_.messages[static_cast<size_t>(wire::MsgType::PortCounters)];
    if (!sm_of(c)) return false;
    const Guid sm = conn_sm_[c];
    const std::optional<Guid> m = master();
    const std::optional<Guid> trusted = m ? m : current_source_;
    if (trusted != sm) {
        pc_rows_ignored_ += pc.ports.size();  // a standby's (or an unknown SM's) view of the counters
        return true;
    }
    PortCounterTracker& t = port_counters_for_write();
    for (const wire::PortCounterRow& r : pc.ports) t.on_row(sm, r, now_ms);
    t.forget_absent(now_ms);
    return true;
}

PortCounterTracker& ControllerState::port_counters_for_write() {
    // Only this (the io) thread drops references (a render hands its copy back by posting), so the
    // count cannot fall to 1 while another thread still reads the tracker. The copy shares every
    // shard and log chunk with the held one (pointers only); the writes that follow copy the
    // shards they touch (port_counters.h).
    if (port_counters_.use_count() > 1) port_counters_ = std::make_shared<PortCounterTracker>(*port_counters_);
    return *port_counters_;
}

// Which ports with counter state the new fabric has (a node with that port number), and drop those
// out of it for counters.window_s (port_counters.h).
void ControllerState::note_counter_ports(const Snapshot& s, int64_t now_ms) {
    if (port_counters_->empty()) return;
    PortCounterTracker& t = port_counters_for_write();
    if (s.port_states && s.port_states->unique) {  // the decode thread's digest: O(changes)
        t.mark_present(s.port_states, now_ms);
        t.forget_absent(now_ms);
        return;
    }
    const Fabric& f = s.fabric;
    t.mark_present(
        [&f](Guid g, int port) {
            const auto id = f.find(g);
            return id && f.node(*id).port(port) != nullptr;
        },
        now_ms);
    t.forget_absent(now_ms);
}

// One finding per link and counter: both ends, the plan's cable label, the growth at each end
// that went over the threshold.
std::vector<Finding> ControllerState::port_error_findings(int64_t now_ms) const {
    PortErrorMemo& m = pe_memo_;
    if (m.valid && m.version == port_counters_->version() && m.links == links_.get() && m.fabric == current_.get() &&
        now_ms >= m.from_ms && now_ms < m.until_ms)
        return m.findings;
    ++m.passes;
    m.valid = true;
    m.version = port_counters_->version();
    m.links = links_.get();
    m.fabric = current_.get();
    m.from_ms = now_ms;
    m.findings.clear();
    const auto over = port_counters_->over_threshold(now_ms, &m.until_ms);
    if (over.empty()) return m.findings;
    std::vector<Finding>& out = m.findings;
    // Each end's row (the link table's index of both ends): names and cable label.
    auto row_of = [this](Guid g, int port) -> const LinkRow* {
        if (!links_) return nullptr;
        auto it = links_->row_of.find({g, port});
        return it == links_->row_of.end() ? nullptr : &links_->rows[it->second];
    };
    // (link's local end, counter) -> the ends over the threshold
    std::map<std::tuple<Guid, int, int>, std::vector<const PortErrorGrowth*>> groups;
    for (const PortErrorGrowth& g : over) {
        const LinkRow* r = row_of(g.guid, g.port);
        const Guid lg = r ? r->local_guid : g.guid;
        const int lp = r ? r->local_port : g.port;
        groups[{lg, lp, static_cast<int>(g.counter)}].push_back(&g);
    }
    auto name_of = [&](Guid g) -> std::string {
        if (current_)
            if (auto n = current_->fabric.find(g)) return current_->fabric.node(*n).name;
        return "";
    };
    const int64_t window = port_counters_->options().window_ms;
    for (const auto& [key, ends] : groups) {
        const PortErrorGrowth& g0 = *ends.front();
        Finding fd;
        fd.kind = FindingKind::port_errors;
        fd.severity = default_severity(fd.kind);
        if (const LinkRow* row = row_of(g0.guid, g0.port)) {
            const LinkRow& r = *row;
            fd.a = {r.local_name, r.local_guid, r.local_port};
            fd.b = {r.remote_name, r.remote_guid, r.remote_port};
            fd.label = r.label;
        } else {
            fd.a = {name_of(g0.guid), g0.guid, g0.port};
        }
        auto end_text = [](const Endpoint& e) {
            return (e.name.empty() ? guid_hex(e.guid) : e.name) + "/" + std::to_string(e.port);
        };
        std::string counts;
        int64_t first = g0.first_ms, last = g0.last_ms;
        for (const PortErrorGrowth* g : ends) {
            const Endpoint& e = (g->guid == fd.b.guid && g->port == fd.b.port) ? fd.b : fd.a;
            counts += (counts.empty() ? "" : ", ") + ("+" + std::to_string(g->increase) + " at " + end_text(e));
            first = std::min(first, g->first_ms);
            last = std::max(last, g->last_ms);
        }
        const std::string name(iba_name(g0.counter));
        fd.expected = g0.threshold == 0 ? name + " unchanged"
                                        : name + " +" + std::to_string(g0.threshold) + " or less per " + duration_text(window);
        fd.actual = counts + " within " + duration_text(window) + " (" + iso_time(first) + " .. " + iso_time(last) + ")";
        fd.message = end_text(fd.a) + (fd.b.guid ? " -- " + end_text(fd.b) : "") +
                     (fd.label.empty() ? "" : " (cable " + fd.label + ")") + ": " + name + " " + counts + " within " +
                     duration_text(window) + " (threshold " + std::to_string(g0.threshold) + "); " +
                     remediation(g0.counter);
        out.push_back(std::move(fd));
    }
    return m.findings;
}

}  // namespace ibf
