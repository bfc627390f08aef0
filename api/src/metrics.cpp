// /metrics: every family in one table (kFamilies), rendered in table order.
#include "ibf/metrics.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <type_traits>

#include "ibf/api.h"
#include "ibf/fabric_role.h"
#include "ibf/ha_engine.h"
#include "ibf/link_table.h"
#include "ibf/wire.h"

namespace ibf {
namespace {

struct Out {
    std::string& s;
    const char* name;
    const char* role = nullptr;  // the role label's value on a fabric family (kRole), else null

    void sample(const std::string& labels, const std::string& value) {
        s += name;
        if (!labels.empty() || role) {
            s += '{';
            s += labels;
            if (role) {
                if (!labels.empty()) s += ',';
                s += "role=\"";
                s += role;
                s += '"';
            }
            s += '}';
        }
        s += ' ';
        s += value;
        s += '\n';
    }
    void count(const std::string& labels, uint64_t v) { sample(labels, std::to_string(v)); }
    void value(const std::string& labels, double v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.10g", v);
        sample(labels, buf);
    }
    // Unix ms as seconds with exactly three decimals (no float rounding); 0 stays 0.
    void time(const std::string& labels, int64_t ms) {
        if (ms <= 0) return sample(labels, "0");
        char buf[64];
        std::snprintf(buf, sizeof buf, "%" PRId64 ".%03d", ms / 1000, static_cast<int>(ms % 1000));
        sample(labels, buf);
    }
};

// How a family's samples are written: from the state, on the io thread (families bounded by the
// SMs: O(1) or O(SMs)), or from the frozen MetricsFabric on the render thread (those that grow with
// the fabric or its findings). A row's lambda says which by the argument it takes.
struct Emit {
    void (*state)(const MetricsInput&, Out&) = nullptr;
    void (*fabric)(const MetricsFabric&, Out&) = nullptr;
    template <class F>
    Emit(F f) {  // NOLINT: implicit, so that a row names just its lambda
        if constexpr (std::is_invocable_v<F, const MetricsFabric&, Out&>)
            fabric = f;
        else
            state = f;
    }
};
// kRole: a gauge about the fabric, which every daemon of an HA pair exports: its samples carry
// role="active" on one daemon, role="standby" on the others (ha/fabric_role.h). Counters never
// do: a role change would split their series and break increase() (the rules take the max).
enum Scope : bool { kDaemon = false, kRole = true };
// kWithHa: the HA agent's families (ibfabric_ha_*), which exist only with `ha:` configured
// (MetricsInput::ha set); without it neither their HELP/TYPE nor a sample is written.
enum Needs : bool { kAlways = false, kWithHa = true };
struct Family {
    const char* name;
    const char* type;  // "gauge" or "counter"
    const char* help;
    Emit emit;
    Scope scope = kDaemon;
    Needs needs = kAlways;
};

const ControllerState& S(const MetricsInput& in) { return *in.state; }
std::string sm_label(Guid g) { return "sm=\"" + guid_hex(g) + "\""; }
std::string kind_label(FindingKind k, Severity s) {
    return "kind=\"" + std::string(to_string(k)) + "\",severity=\"" + std::string(to_string(s)) + "\"";
}

// Every kind in [first, last] with its default severity (0 when absent), plus what occurs.
void findings_by_kind(Out& o, const std::vector<Finding>& fs, int first, int last) {
    std::map<std::pair<int, int>, uint64_t> by;
    for (int k = first; k <= last; ++k)
        by[{k, static_cast<int>(default_severity(static_cast<FindingKind>(k)))}] = 0;
    for (const Finding& f : fs) ++by[{static_cast<int>(f.kind), static_cast<int>(f.severity)}];
    for (const auto& [ks, n] : by)
        o.count(kind_label(static_cast<FindingKind>(ks.first), static_cast<Severity>(ks.second)), n);
}

// A member of GET /api/v1/analysis's routing.lft; nothing when it is not known (no tables, or the
// route validation that follows them not done yet): no sample rather than a 0 that looks healthy.
std::optional<uint64_t> lft_value(const ControllerState& st, const char* key) {
    const nlohmann::json j = routing_lft_json(st);
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() < 0) return std::nullopt;
    return j[key].get<uint64_t>();
}

// Whether a row gets per-link series: every row with metrics.per_link: all, else the deviating
// ones (docs/metrics.md, "Bounded by default").
bool selected(const MetricsFabric& in, const LinkRow& r) { return in.all_links || r.deviates; }

// The same for families that depend on the rows alone: rendered once per link table (i.e. per
// check) and role, then copied at every scrape (by default only the deviating rows: small).
void per_link_cached(const MetricsFabric& in, Out& o, void (*value)(const LinkRow&, Out&)) {
    const auto& t = in.links;
    if (!t) return;
    // Keyed by role too: after a failover the new role's copy is rendered once (both are dropped
    // with the table at the next check).
    auto [it, fresh] = t->rendered.try_emplace(std::string(o.name) + (o.role ? o.role : "") + (in.all_links ? "*" : ""));
    if (fresh) {
        Out x{it->second, o.name, o.role};
        for (const LinkRow& r : t->rows)
            if (selected(in, r)) value(r, x);
    }
    o.s += it->second;
}

// Per-tier aggregates of the rows (every row, whatever the selection), rendered once per table.
void per_tier_cached(const MetricsFabric& in, Out& o, double (*value)(const LinkRow&)) {
    const auto& t = in.links;
    if (!t) return;
    auto [it, fresh] = t->rendered.try_emplace(std::string(o.name) + (o.role ? o.role : ""));
    if (fresh && t->tier_of_row.size() == t->rows.size()) {
        std::vector<double> by(t->tiers.size());
        for (size_t i = 0; i < t->rows.size(); ++i) by[t->tier_of_row[i]] += value(t->rows[i]);
        Out x{it->second, o.name, o.role};
        for (size_t i = 0; i < by.size(); ++i) x.value("tier=\"" + escape_label_value(t->tiers[i]) + "\"", by[i]);
    }
    o.s += it->second;
}

std::set<std::pair<Guid, int>> flapping_ports(const MetricsFabric& in) {
    std::set<std::pair<Guid, int>> s;
    for (const Flapping& f : in.flapping) {
        s.insert({f.a.guid, f.a.port});
        s.insert({f.b.guid, f.b.port});
    }
    return s;
}

uint64_t sm_seq(const SmRecord& r) {
    return std::max<uint64_t>(r.heartbeat_sweep_seq, r.latest ? r.latest->sweep_seq : 0);
}

template <uint64_t wire::Counters::*Field>
void plugin_counter(const MetricsInput& in, Out& o) {
    for (const auto& [g, r] : S(in).sms())
        if (r.counters) o.count(sm_label(g), (*r.counters).*Field);
}

// Port counter families (perfmgr), all rendered in one pass over the link table whenever the
// counter state changed (a row arrived or a port was dropped; perfmgr sweeps are minutes apart,
// scrapes seconds): per link (error counters: both ends' totals added, the errors seen on that
// cable; data counters: the local end), per tier and per switch (the links whose local end it is).
// By default a link's counters are exported when it deviates or either end counted an error;
// metrics.per_link: all exports every link with counter data.
constexpr size_t kCounterFamilies = 15;
struct CounterFamily {
    const char* name;  // as in kFamilies
    wire::PortCounter c;
    bool both_ends;
    uint64_t scale;
};
constexpr CounterFamily kCounterFamily[kCounterFamilies] = {
    {"ibfabric_link_symbol_errors_total", wire::PortCounter::symbol_errors, true, 1},
    {"ibfabric_link_error_recovery_total", wire::PortCounter::link_error_recovery, true, 1},
    {"ibfabric_link_downed_total", wire::PortCounter::link_downed, true, 1},
    {"ibfabric_link_rcv_errors_total", wire::PortCounter::rcv_errors, true, 1},
    {"ibfabric_link_rcv_remote_physical_errors_total", wire::PortCounter::rcv_remote_phys_errors, true, 1},
    {"ibfabric_link_rcv_switch_relay_errors_total", wire::PortCounter::rcv_switch_relay_errors, true, 1},
    {"ibfabric_link_xmit_discards_total", wire::PortCounter::xmit_discards, true, 1},
    {"ibfabric_link_integrity_errors_total", wire::PortCounter::link_integrity_errors, true, 1},
    {"ibfabric_link_excessive_buffer_overruns_total", wire::PortCounter::excessive_buffer_overruns, true, 1},
    {"ibfabric_link_vl15_dropped_total", wire::PortCounter::vl15_dropped, true, 1},
    {"ibfabric_link_xmit_wait_total", wire::PortCounter::xmit_wait, true, 1},
    {"ibfabric_link_xmit_bytes_total", wire::PortCounter::xmit_data, false, 4},
    {"ibfabric_link_rcv_bytes_total", wire::PortCounter::rcv_data, false, 4},
    {"ibfabric_link_xmit_packets_total", wire::PortCounter::xmit_pkts, false, 1},
    {"ibfabric_link_rcv_packets_total", wire::PortCounter::rcv_pkts, false, 1},
};
using CounterRows = LinkTable::CounterRows;
static_assert(CounterRows::kFamilies == kCounterFamilies);

// Row `ri`'s counter values as /metrics exports them, read from the tracker into `c`.
void read_counter_row(const PortCounterTracker& t, const LinkTable& links, size_t ri, CounterRows& c) {
    const LinkRow& r = links.rows[ri];
    const PortCounterState* l = t.find(r.local_guid, r.local_port);
    const PortCounterState* m = t.find(r.remote_guid, r.remote_port);
    c.has[ri] = static_cast<uint8_t>((l ? 1 : 0) | (l || m ? 2 : 0));
    for (size_t i = 0; i < kCounterFamilies; ++i) {
        const CounterFamily& f = kCounterFamily[i];
        const size_t k = static_cast<size_t>(f.c);
        c.v[ri][i] = ((l ? l->total[k] : 0) + (f.both_ends && m ? m->total[k] : 0)) * f.scale;
    }
}

// Whether row `ri` gets per-link counter samples: it has counter data, and every link is
// exported, or it deviates, or either end counted an error.
bool counter_row_emitted(const MetricsFabric& in, const LinkTable& links, size_t ri, const CounterRows& c) {
    if (!(c.has[ri] & 2)) return false;
    if (in.all_links || links.rows[ri].deviates) return true;
    for (size_t i = 0; i < kCounterFamilies; ++i)
        if (kCounterFamily[i].both_ends && c.v[ri][i]) return true;
    return false;
}

// Adds (sign +1) or takes back (-1) row `ri`'s values in the tier and switch aggregates
// (unsigned arithmetic: taking back exactly what was added restores the sum).
void add_counter_row(const LinkTable& links, size_t ri, CounterRows& c, int sign) {
    if (!(c.has[ri] & 2)) return;
    const uint64_t k = sign > 0 ? 1 : ~uint64_t{0};  // x * ~0 == -x modulo 2^64
    auto& tv = c.tier[links.tier_of_row[ri]];
    CounterRows::Switch& s = c.sw[links.local_node_of_row[ri]];
    const auto& v = c.v[ri];
    for (size_t i = 0; i < kCounterFamilies; ++i) {
        tv[i] += k * v[i];
        if (kCounterFamily[i].both_ends) s.errors += k * v[i];
    }
    s.xmit += k * v[11];
    s.rcv += k * v[12];
    s.rows += static_cast<uint32_t>(k);
}

// Brings `c` to the tracker's version: every row after a new table (or mode, or when the
// tracker's log no longer reaches back), else only the rows of the ports that changed.
void update_counter_rows(const MetricsFabric& in, const LinkTable& links, const PortCounterTracker& t, CounterRows& c) {
    const bool indexed = links.tier_of_row.size() == links.rows.size();  // link_table() made it
    std::vector<PortCounterTracker::PortKey> changed;
    if (c.valid && c.all_links == in.all_links && indexed && t.changed_since(c.version, changed)) {
        std::vector<size_t> rows;
        for (const auto& k : changed)
            if (auto it = links.row_of.find(k); it != links.row_of.end()) rows.push_back(it->second);
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        for (size_t ri : rows) {
            const uint32_t r32 = static_cast<uint32_t>(ri);
            auto e = std::lower_bound(c.emitted.begin(), c.emitted.end(), r32);
            const bool was = e != c.emitted.end() && *e == r32;
            add_counter_row(links, ri, c, -1);
            read_counter_row(t, links, ri, c);
            add_counter_row(links, ri, c, +1);
            const bool is = counter_row_emitted(in, links, ri, c);
            if (was && !is) c.emitted.erase(e);
            if (!was && is) c.emitted.insert(e, r32);
        }
    } else {
        const size_t n = indexed ? links.rows.size() : 0;
        c.v.assign(n, {});
        c.has.assign(n, 0);
        c.emitted.clear();
        c.tier.assign(links.tiers.size(), {});
        c.sw.assign(links.local_node_labels.size(), {});
        for (size_t ri = 0; ri < n; ++ri) {
            read_counter_row(t, links, ri, c);
            add_counter_row(links, ri, c, +1);
            if (counter_row_emitted(in, links, ri, c)) c.emitted.push_back(static_cast<uint32_t>(ri));
        }
    }
    c.valid = true;
    c.version = t.version();
    c.all_links = in.all_links;
}

// rendered_counters keys: the family index as text for the link families, "tier", "switch_*".
// Rendered again whenever the counter state changed (from the rows kept in counter_rows: only
// the changed ports' rows are read), the per-link samples only for the rows that have them.
const std::string& counter_text(const MetricsFabric& in, const std::string& key) {
    static const std::string none;
    const auto& links = in.links;
    if (!in.counters || in.counters->empty() || !links) return none;
    const PortCounterTracker& t = *in.counters;
    auto& all = links->rendered_counters;
    CounterRows& c = links->counter_rows;
    if (!c.valid || c.version != t.version() || c.all_links != in.all_links || all.empty()) {
        update_counter_rows(in, *links, t, c);
        const uint64_t version = c.version;
        std::string fam[kCounterFamilies];
        for (size_t i = 0; i < kCounterFamilies; ++i) {
            Out x{fam[i], kCounterFamily[i].name};
            for (uint32_t ri : c.emitted)
                if ((c.has[ri] & 1) || kCounterFamily[i].both_ends)  // else a local end never counted
                    x.count(links->rows[ri].labels, c.v[ri][i]);
            all[std::to_string(i)] = {version, std::move(fam[i])};
        }
        std::string tt;
        for (size_t ti = 0; ti < c.tier.size(); ++ti)
            for (size_t i = 0; i < kCounterFamilies; ++i) {
                Out x{tt, "ibfabric_tier_perfmgr_total"};
                x.count("tier=\"" + escape_label_value(links->tiers[ti]) + "\",counter=\"" +
                            std::string(wire::to_string(kCounterFamily[i].c)) + "\"",
                        c.tier[ti][i]);
            }
        all["tier"] = {version, std::move(tt)};
        std::string se, sx, sr;
        for (size_t n = 0; n < c.sw.size(); ++n) {
            if (!c.sw[n].rows) continue;
            const std::string& labels = links->local_node_labels[n];
            Out{se, "ibfabric_switch_link_errors_total"}.count(labels, c.sw[n].errors);
            Out{sx, "ibfabric_switch_xmit_bytes_total"}.count(labels, c.sw[n].xmit);
            Out{sr, "ibfabric_switch_rcv_bytes_total"}.count(labels, c.sw[n].rcv);
        }
        all["switch_errors"] = {version, std::move(se)};
        all["switch_xmit"] = {version, std::move(sx)};
        all["switch_rcv"] = {version, std::move(sr)};
    }
    return all[key].second;
}

template <size_t I>
void link_counter(const MetricsFabric& in, Out& o) {
    o.s += counter_text(in, std::to_string(I));
}

void counter_aggregate(const MetricsFabric& in, Out& o, const char* key) { o.s += counter_text(in, key); }

// This daemon's role in its HA pair (ha/fabric_role.h): the one the daemon publishes.
ha::FabricRole fabric_role_of(const MetricsInput& in) {
    if (in.role) return in.role->role;
    return ha::fabric_role(in.ha ? ha::role_view(*in.ha, in.now_ms) : ha::RoleView{}).role;
}

// The HA agent's view (families marked kWithHa: only rendered when in.ha is set).
const ha::HaEngine& H(const MetricsInput& in) { return *in.ha; }
// The latest failover record with a new master, or null.
const ha::FailoverRecord* last_master_change(const ha::HaEngine& e) {
    for (auto it = e.history().rbegin(); it != e.history().rend(); ++it)
        if (it->master_ms) return &*it;
    return nullptr;
}

constexpr int kFirstAnalysisKind = static_cast<int>(FindingKind::missing_uplink);
constexpr int kLastAnalysisKind = static_cast<int>(FindingKind::lft_imbalance);

// The families, in output order. Add rows here (and to docs/metrics.md).
const Family kFamilies[] = {
    // --- which copy is this? (docs/metrics.md, "One copy per HA pair") ---
    {"ibfabric_role", "gauge",
     "This daemon's role in its HA pair: 1 for the role it has. The fabric gauges carry the same role label; count "
     "role=\"active\" (the master SM's node), the standby daemons mirror them. Without ha: always active.",
     [](const MetricsInput& in, Out& o) {
         const ha::FabricRole r = fabric_role_of(in);
         for (ha::FabricRole each : {ha::FabricRole::active, ha::FabricRole::standby})
             o.count("role=\"" + std::string(ha::to_string(each)) + "\"", r == each);
     }},

    // --- is there data? (docs/metrics.md, "No data") ---
    {"ibfabric_data_fresh", "gauge",
     "1 when the findings describe the fabric as it is now; 0 before the first findings (no data) or when the fabric "
     "was last confirmed more than health.stale_after_s ago (stale).",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).data_status(in.now_ms).state == DataState::fresh); }, kRole},
    {"ibfabric_data_timestamp_seconds", "gauge",
     "When the fabric was last known current (its snapshot, or a heartbeat of its SM naming that sweep); 0 never.",
     [](const MetricsInput& in, Out& o) { o.time("", S(in).data_status(in.now_ms).as_of_ms); }, kRole},
    {"ibfabric_stale_after_seconds", "gauge", "The staleness bound health.stale_after_s.",
     [](const MetricsInput& in, Out& o) { o.value("", S(in).health().stale_after_ms / 1000.0); }},
    {"ibfabric_history_writable", "gauge",
     "1 while the history database takes writes; 0 after a write failed (a full disk: GET /api/v1/history's "
     "last_error says why) until one succeeds again. No sample without history:.",
     [](const MetricsInput& in, Out& o) {
         if (in.history) o.count("", in.history->writable);
     }},

    // --- findings ---
    {"ibfabric_findings", "gauge",
     "Findings of the latest check plus link_flapping, by kind and severity (every kind listed).",
     [](const MetricsFabric& in, Out& o) { findings_by_kind(o, in.findings, 0, kFindingKindCount - 1); }, kRole},
    {"ibfabric_findings_waived", "gauge",
     "Findings (check and analysis) that the waiver file covers; they are not in ibfabric_findings.",
     [](const MetricsFabric& in, Out& o) { o.count("", in.waived); }, kRole},
    {"ibfabric_analysis_findings", "gauge", "Findings of the latest live fat-tree analysis, by kind and severity.",
     [](const MetricsFabric& in, Out& o) {
         findings_by_kind(o, in.analysis_findings, kFirstAnalysisKind, kLastAnalysisKind);
     }, kRole},
    {"ibfabric_routing_fallback", "gauge", "1 when OpenSM routed with another engine than the first configured one.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).analysis() && S(in).analysis()->routing_fallback); }, kRole},
    {"ibfabric_lft_switches", "gauge", "Switches whose LFT came with the latest snapshot (0: not exported).",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).analysis() ? S(in).analysis()->lft_switches : 0); }, kRole},
    {"ibfabric_lft_switches_imbalanced", "gauge", "Switches whose LFT spreads hosts unevenly over the uplinks.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).analysis() ? S(in).analysis()->lft_imbalanced : 0); }, kRole},
    {"ibfabric_lft_max_hops", "gauge", "Longest switch-to-host route in the LFTs, in cables.",
     [](const MetricsInput& in, Out& o) { if (auto v = lft_value(S(in), "max_hops")) o.count("", *v); }, kRole},
    {"ibfabric_lft_routes_broken", "gauge", "Switch-to-host routes that dead-end or loop in the LFTs.",
     [](const MetricsInput& in, Out& o) { if (auto v = lft_value(S(in), "routes_broken")) o.count("", *v); }, kRole},
    {"ibfabric_analysis_duration_seconds", "gauge", "Duration of the latest live analysis (analysis, LFTs, JSON).",
     [](const MetricsInput& in, Out& o) { o.value("", S(in).last_analyze_ms() / 1000.0); }},

    // --- the fabric and its sweeps ---
    {"ibfabric_nodes", "gauge", "Nodes in the current fabric, by type.",
     [](const MetricsFabric& in, Out& o) {
         const auto& cur = in.current;
         for (NodeType t : {NodeType::Switch, NodeType::CA, NodeType::Router})
             o.count("type=\"" + std::string(to_string(t)) + "\"", cur ? cur->fabric.count(t) : 0);
     }, kRole},
    {"ibfabric_links", "gauge", "Links (cables) in the current fabric.",
     [](const MetricsFabric& in, Out& o) { o.count("", in.current ? in.current->fabric.link_count() : 0); }, kRole},
    {"ibfabric_sweeps_ingested_total", "counter", "Master sweeps (snapshots) taken as the fabric.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).sweeps_ingested()); }},
    {"ibfabric_last_sweep_seq", "gauge",
     "The daemon's sequence number of the current fabric: +1 for every sweep taken as the fabric, whichever SM sent it, "
     "so it never goes back on failover (the SM's own counter: ibfabric_sm_sweep_seq).",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).sweeps_ingested()); }},
    {"ibfabric_last_sweep_timestamp_seconds", "gauge", "When the current fabric was swept (the SM's copy time); 0 never.",
     [](const MetricsInput& in, Out& o) { o.time("", S(in).last_sweep_ms()); }, kRole},
    {"ibfabric_snapshots_ignored_total", "counter", "Snapshots from a non-master SM while a master is known.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).ingest().snapshots_ignored); }},

    // --- checks ---
    {"ibfabric_checks_total", "counter", "Checks published.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).checks_run()); }},
    {"ibfabric_last_check_timestamp_seconds", "gauge", "When the latest findings were published; 0 never.",
     [](const MetricsInput& in, Out& o) { o.time("", S(in).findings_ms()); }},
    {"ibfabric_check_duration_seconds", "gauge", "Duration of the latest check (ibf::check + JSON).",
     [](const MetricsInput& in, Out& o) { o.value("", S(in).last_check_ms() / 1000.0); }},
    {"ibfabric_check_seconds_total", "counter", "Time spent in checks.",
     [](const MetricsInput& in, Out& o) { o.value("", S(in).check_ms_sum() / 1000.0); }},
    {"ibfabric_snapshot_to_findings_seconds", "gauge",
     "Latest time from a snapshot's arrival to its findings being published.",
     [](const MetricsInput& in, Out& o) { o.value("", S(in).last_publish_lag_ms() / 1000.0); }},
    {"ibfabric_snapshot_decode_seconds", "gauge", "Wire decode time of the latest snapshot (decode thread).",
     [](const MetricsInput& in, Out& o) { o.value("", S(in).last_decode_ms() / 1000.0); }},
    {"ibfabric_config_last_reload_successful", "gauge",
     "1 when the latest topology reload (SIGHUP, POST /api/v1/reload) succeeded or none was tried; 0 when it failed.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).last_reload_ok()); }},
    {"ibfabric_config_last_reload_success_timestamp_seconds", "gauge", "When a topology reload last succeeded; 0 never.",
     [](const MetricsInput& in, Out& o) { o.time("", S(in).last_reload_ok_ms()); }},

    // --- per link (labels like infiniband-exporter, plus tier) ---
    {"ibfabric_link_state", "gauge", "Port state of the link's local end (IBA PortState: 1 Down, 2 Init, 3 Armed, 4 Active).",
     [](const MetricsFabric& in, Out& o) { per_link_cached(in, o, [](const LinkRow& r, Out& x) { x.count(r.labels, r.state); }); }, kRole},
    {"ibfabric_link_width_lanes", "gauge", "Active link width in lanes (1, 2, 4, 8, 12; 0 unknown).",
     [](const MetricsFabric& in, Out& o) { per_link_cached(in, o, [](const LinkRow& r, Out& x) { x.count(r.labels, r.lanes); }); }, kRole},
    // Rates in bytes/s (Prometheus' base unit; x8 for Gb/s): 4xHDR = 200 Gb/s = 2.5e10.
    {"ibfabric_link_speed_bytes_per_second", "gauge",
     "Active link speed: data rate of one lane, bytes/s (EDR 3.125e9, HDR 6.25e9).",
     [](const MetricsFabric& in, Out& o) {
         per_link_cached(in, o, [](const LinkRow& r, Out& x) { x.value(r.labels, r.lane_bps / 8); });
     }, kRole},
    {"ibfabric_link_rate_bytes_per_second", "gauge", "Active data rate of the link (lanes x speed), bytes/s.",
     [](const MetricsFabric& in, Out& o) {
         per_link_cached(in, o, [](const LinkRow& r, Out& x) { x.value(r.labels, r.rate_bps / 8); });
     }, kRole},
    {"ibfabric_link_planned_rate_bytes_per_second", "gauge",
     "Data rate the plan declares for the link, bytes/s (only links the plan gives a width and speed).",
     [](const MetricsFabric& in, Out& o) {
         per_link_cached(in, o, [](const LinkRow& r, Out& x) {
             if (r.planned_rate_bps > 0) x.value(r.labels, r.planned_rate_bps / 8);
         });
     }, kRole},
    {"ibfabric_link_mtu_bytes", "gauge", "Active MTU of the link's local end (NeighborMTU), 0 unknown.",
     [](const MetricsFabric& in, Out& o) { per_link_cached(in, o, [](const LinkRow& r, Out& x) { x.count(r.labels, r.mtu_bytes); }); }, kRole},
    {"ibfabric_link_flapping", "gauge", "1 while the link has a link_flapping finding.",
     [](const MetricsFabric& in, Out& o) {
         const auto fl = flapping_ports(in);
         const auto& t = in.links;
         if (!t) return;
         if (in.all_links) {
             for (const LinkRow& r : t->rows) o.count(r.labels, fl.count({r.local_guid, r.local_port}));
             return;
         }
         std::set<size_t> rows;  // by default the flapping links only (and those that deviate, at 0)
         for (const auto& p : fl)
             if (auto it = t->row_of.find(p); it != t->row_of.end()) rows.insert(it->second);
         for (size_t i : rows) o.count(t->rows[i].labels, 1);
     }, kRole},
    {"ibfabric_tier_links", "gauge", "Links of the current fabric by tier (every link, whatever metrics.per_link).",
     [](const MetricsFabric& in, Out& o) { per_tier_cached(in, o, [](const LinkRow&) { return 1.0; }); }, kRole},
    {"ibfabric_tier_links_deviating", "gauge",
     "Links by tier that deviate (not Active, below the plan's rate, or named by a finding): those with per-link "
     "series by default.",
     [](const MetricsFabric& in, Out& o) { per_tier_cached(in, o, [](const LinkRow& r) { return r.deviates ? 1.0 : 0.0; }); }, kRole},
    {"ibfabric_tier_rate_bytes_per_second", "gauge", "Active data rate summed over the tier's links, bytes/s.",
     [](const MetricsFabric& in, Out& o) { per_tier_cached(in, o, [](const LinkRow& r) { return r.rate_bps / 8; }); }, kRole},
    {"ibfabric_links_flapping", "gauge", "Links (or switches, port unknown) with a link_flapping finding.",
     [](const MetricsFabric& in, Out& o) { o.count("", in.flapping.size()); }, kRole},
    {"ibfabric_link_flaps_total", "counter", "Link down-and-up cycles seen (sweeps and unexplained traps 128).",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).flaps().flaps_total()); }},

    // --- per link, port counters from OpenSM's perfmgr (docs/metrics.md, "Port counters") ---
    {"ibfabric_link_symbol_errors_total", "counter", "SymbolErrorCounter of both ends of the link.",
     link_counter<0>},
    {"ibfabric_link_error_recovery_total", "counter", "LinkErrorRecoveryCounter of both ends of the link.",
     link_counter<1>},
    {"ibfabric_link_downed_total", "counter", "LinkDownedCounter of both ends of the link.",
     link_counter<2>},
    {"ibfabric_link_rcv_errors_total", "counter", "PortRcvErrors of both ends of the link.",
     link_counter<3>},
    {"ibfabric_link_rcv_remote_physical_errors_total", "counter", "PortRcvRemotePhysicalErrors of both ends of the link.",
     link_counter<4>},
    {"ibfabric_link_rcv_switch_relay_errors_total", "counter", "PortRcvSwitchRelayErrors of both ends of the link.",
     link_counter<5>},
    {"ibfabric_link_xmit_discards_total", "counter", "PortXmitDiscards of both ends of the link.",
     link_counter<6>},
    {"ibfabric_link_integrity_errors_total", "counter", "LocalLinkIntegrityErrors of both ends of the link.",
     link_counter<7>},
    {"ibfabric_link_excessive_buffer_overruns_total", "counter", "ExcessiveBufferOverrunErrors of both ends of the link.",
     link_counter<8>},
    {"ibfabric_link_vl15_dropped_total", "counter", "VL15Dropped of both ends of the link.",
     link_counter<9>},
    {"ibfabric_link_xmit_wait_total", "counter", "PortXmitWait ticks of both ends of the link (congestion).",
     link_counter<10>},
    {"ibfabric_link_xmit_bytes_total", "counter", "Bytes sent by the link's local end (PortXmitData x 4).",
     link_counter<11>},
    {"ibfabric_link_rcv_bytes_total", "counter", "Bytes received by the link's local end (PortRcvData x 4).",
     link_counter<12>},
    {"ibfabric_link_xmit_packets_total", "counter", "Packets sent by the link's local end (PortXmitPkts).",
     link_counter<13>},
    {"ibfabric_link_rcv_packets_total", "counter", "Packets received by the link's local end (PortRcvPkts).",
     link_counter<14>},
    {"ibfabric_tier_perfmgr_total", "counter",
     "Port counters summed over every link of a tier (error counters: both ends; data counters: the local end).",
     [](const MetricsFabric& in, Out& o) { counter_aggregate(in, o, "tier"); }},
    {"ibfabric_switch_link_errors_total", "counter",
     "Error counters (SymbolErrorCounter .. PortXmitWait, both ends) summed over the links whose local end is the switch.",
     [](const MetricsFabric& in, Out& o) { counter_aggregate(in, o, "switch_errors"); }},
    {"ibfabric_switch_xmit_bytes_total", "counter", "Bytes sent by the switch's ports on its links (PortXmitData x 4).",
     [](const MetricsFabric& in, Out& o) { counter_aggregate(in, o, "switch_xmit"); }},
    {"ibfabric_switch_rcv_bytes_total", "counter", "Bytes received by the switch's ports on its links (PortRcvData x 4).",
     [](const MetricsFabric& in, Out& o) { counter_aggregate(in, o, "switch_rcv"); }},
    {"ibfabric_perfmgr_rows_total", "counter",
     "Port counter rows received from the master's plugin (perfmgr), and from other SMs (ignored).",
     [](const MetricsInput& in, Out& o) {
         o.count("source=\"master\"", S(in).port_counters().rows_total());
         o.count("source=\"other\"", S(in).port_counter_rows_ignored());
     }},
    {"ibfabric_perfmgr_ports", "gauge",
     "Ports with counter state: those of the current fabric, and those out of it for less than counters.window_s.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).port_counters().port_count()); }},
    {"ibfabric_perfmgr_ports_forgotten_total", "counter",
     "Ports whose counter state was dropped after counters.window_s out of the fabric (their totals start afresh).",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).port_counters().forgotten_total()); }},
    {"ibfabric_perfmgr_resets_total", "counter",
     "Port counters that went down (OpenSM restarted): taken as a new baseline, never a negative delta.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).port_counters().resets_total()); }},

    // --- ingest ---
    {"ibfabric_ingest_connections", "gauge", "Open plugin connections.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).ingest().connections_open); }},
    {"ibfabric_ingest_connections_total", "counter", "Plugin connections accepted.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).ingest().connections_total); }},
    {"ibfabric_ingest_errors_total", "counter", "Plugin connections dropped for malformed or oversized input.",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).ingest().ingest_errors); }},
    {"ibfabric_ingest_refused_total", "counter",
     "Plugin connections refused by admission: a Unix peer not in socket_users (peer_uid), every Hello slot held "
     "by a live plugin (slots_full).",
     [](const MetricsInput& in, Out& o) {
         o.count("reason=\"peer_uid\"", S(in).ingest().refused_peer_uid);
         o.count("reason=\"slots_full\"", S(in).ingest().refused_slots_full);
     }},
    {"ibfabric_sms_forgotten_total", "counter",
     "SM records dropped after health.forget_sm_after_s without a connection (with their last snapshot).",
     [](const MetricsInput& in, Out& o) { o.count("", S(in).sms_forgotten_total()); }},
    {"ibfabric_ingest_messages_total", "counter", "Wire messages received, by type.",
     [](const MetricsInput& in, Out& o) {
         for (int t = 1; t <= 6; ++t)
             o.count("type=\"" + std::string(wire::to_string(static_cast<wire::MsgType>(t))) + "\"",
                     S(in).ingest().messages[t]);
     }},

    // --- Subnet Managers (one series per SM GUID, never a state label) ---
    {"ibfabric_sm_state", "gauge",
     "SM state (IBA SMInfo: 0 NOTACTIVE, 1 DISCOVERING, 2 STANDBY, 3 MASTER) while its plugin is connected; 0 when "
     "disconnected.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms()) o.count(sm_label(g), r.connected() ? static_cast<int>(S(in).sm_info(g).state) : 0);
     }},
    {"ibfabric_sm_connected", "gauge", "1 while the SM's plugin is connected.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms()) o.count(sm_label(g), r.connected());
     }},
    {"ibfabric_sm_priority", "gauge", "The SM's priority (0..15) as it last reported it.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms()) o.count(sm_label(g), S(in).sm_info(g).priority);
     }},
    {"ibfabric_sm_sweep_seq", "gauge", "The SM plugin's own sweep counter (restarts at 1 with opensm).",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms()) o.count(sm_label(g), sm_seq(r));
     }},
    {"ibfabric_sm_last_heartbeat_timestamp_seconds", "gauge", "When the SM's plugin last sent a heartbeat; 0 never.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms()) o.time(sm_label(g), r.last_heartbeat_ms);
     }},
    {"ibfabric_plugin_snapshots_taken_total", "counter", "Plugin: SUBNET_UP copies made.",
     plugin_counter<&wire::Counters::snapshots_taken>},
    {"ibfabric_plugin_snapshots_sent_total", "counter", "Plugin: snapshots sent.",
     plugin_counter<&wire::Counters::snapshots_sent>},
    {"ibfabric_plugin_snapshots_superseded_total", "counter", "Plugin: snapshots replaced before sending.",
     plugin_counter<&wire::Counters::snapshots_superseded>},
    {"ibfabric_plugin_events_dropped_total", "counter", "Plugin: events dropped (queue full).",
     plugin_counter<&wire::Counters::events_dropped>},
    {"ibfabric_plugin_send_errors_total", "counter", "Plugin: send errors.",
     plugin_counter<&wire::Counters::send_errors>},
    {"ibfabric_plugin_reconnects_total", "counter", "Plugin: reconnects.", plugin_counter<&wire::Counters::reconnects>},
    {"ibfabric_plugin_encode_errors_total", "counter",
     "Plugin: snapshots its encoder refused (also in send_errors, never sent).",
     plugin_counter<&wire::Counters::encode_errors>},
    {"ibfabric_plugin_last_copy_seconds", "gauge", "Plugin: time under the OpenSM lock for the last copy.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms())
             if (r.counters) o.value(sm_label(g), r.counters->last_copy_us / 1e6);
     }},
    {"ibfabric_plugin_last_send_lag_seconds", "gauge", "Plugin: SUBNET_UP to the last byte of that snapshot written.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, r] : S(in).sms())
             if (r.counters) o.value(sm_label(g), r.counters->last_send_lag_ms / 1e3);
     }},
    {"ibfabric_plugin_queue_depth", "gauge", "Plugin: messages queued.", plugin_counter<&wire::Counters::queue_depth>},
    {"ibfabric_plugin_perfmgr_events_total", "counter", "Plugin: perfmgr counter events handed to the sender.",
     plugin_counter<&wire::Counters::port_counter_events>},
    {"ibfabric_plugin_perfmgr_events_dropped_total", "counter",
     "Plugin: perfmgr counter events dropped (queue full).", plugin_counter<&wire::Counters::port_counter_events_dropped>},

    // --- the HA agent (docs/ha.md; only with `ha:`) ---
    {"ibfabric_ha_sm_state", "gauge",
     "SM state as the HA agent last knew it (0 NOTACTIVE, 1 DISCOVERING, 2 STANDBY, 3 MASTER).",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, v] : H(in).sms()) o.count(sm_label(g), static_cast<uint64_t>(v.info.state));
     },
     kDaemon, kWithHa},
    {"ibfabric_ha_sm_alive", "gauge", "1 while the SM's plugin heartbeats or it answers SMInfo.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, v] : H(in).sms()) o.count(sm_label(g), H(in).alive(v, in.now_ms));
     },
     kDaemon, kWithHa},
    {"ibfabric_ha_sminfo_failures", "gauge", "Consecutive SubnGet(SMInfo) failures to the SM.",
     [](const MetricsInput& in, Out& o) {
         for (const auto& [g, v] : H(in).sms()) o.count(sm_label(g), v.probe_failures);
     },
     kDaemon, kWithHa},
    {"ibfabric_ha_local_sm_master", "gauge", "1 while this node's SM is the live MASTER.",
     [](const MetricsInput& in, Out& o) { o.count("", H(in).local_is_master(in.now_ms)); }, kDaemon, kWithHa},
    {"ibfabric_ha_master_changes_total", "counter", "Master changes seen by this agent.",
     [](const MetricsInput& in, Out& o) { o.count("", H(in).master_changes()); }, kDaemon, kWithHa},
    {"ibfabric_ha_failovers_total", "counter", "Promotions this agent made that succeeded.",
     [](const MetricsInput& in, Out& o) { o.count("", H(in).failovers_by_this_node()); }, kDaemon, kWithHa},
    {"ibfabric_ha_last_master_change_timestamp_seconds", "gauge", "When the latest master change was seen.",
     [](const MetricsInput& in, Out& o) {
         const ha::FailoverRecord* last = last_master_change(H(in));
         o.time("", last ? last->master_ms : 0);
     },
     kDaemon, kWithHa},
    {"ibfabric_ha_last_failover_duration_seconds", "gauge",
     "First evidence of the old master's death to the new MASTER, for the latest master change.",
     [](const MetricsInput& in, Out& o) {
         const ha::FailoverRecord* last = last_master_change(H(in));
         o.value("", last ? last->duration_ms() / 1000.0 : 0);
     },
     kDaemon, kWithHa},
};

}  // namespace

namespace {

void head(std::string& s, const Family& f) {
    s += "# HELP ";
    s += f.name;
    s += ' ';
    s += f.help;
    s += "\n# TYPE ";
    s += f.name;
    s += ' ';
    s += f.type;
    s += '\n';
}

}  // namespace

MetricsJob metrics_job(const MetricsInput& in) {
    const ControllerState& st = *in.state;
    MetricsJob j;
    j.role = ha::to_string(fabric_role_of(in)).data();  // a literal: NUL-terminated
    MetricsFabric& f = j.fabric;
    f.now_ms = in.now_ms;
    f.all_links = in.all_links;
    f.current = st.current();
    f.links = st.links();
    f.counters = st.port_counters_shared();
    // One pass over the findings (port_errors kept per counter state: ControllerState).
    Waived w = st.findings_and_waived_at(in.now_ms);
    f.findings = std::move(w.active);
    f.have_analysis = st.analysis() != nullptr;
    if (f.have_analysis) f.analysis_findings = st.analysis_findings_at(in.now_ms);
    f.waived = w.waived.size() + (st.have_waivers() ? st.analysis_waived_at(in.now_ms).size() : 0);
    f.flapping = st.flaps().flapping(in.now_ms);
    const size_t n = std::size(kFamilies);
    j.text.resize(n);
    j.deferred.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const Family& fam = kFamilies[i];
        if (fam.needs == kWithHa && !in.ha) continue;
        j.deferred[i] = fam.emit.fabric != nullptr;
        if (j.deferred[i]) continue;
        std::string& s = j.text[i];
        head(s, fam);
        Out o{s, fam.name, fam.scope == kRole ? j.role : nullptr};
        fam.emit.state(in, o);
    }
    return j;
}

std::string metrics_render(const MetricsJob& j) {
    std::string s;
    const auto& links = j.fabric.links;
    size_t small = 0;
    for (const std::string& t : j.text) small += t.size();
    s.reserve(small + 8192 + (links && j.fabric.all_links ? links->rows.size() * 7 * 240 : 0));
    for (size_t i = 0; i < j.text.size(); ++i) {
        if (!j.deferred[i]) {
            s += j.text[i];
            continue;
        }
        const Family& fam = kFamilies[i];
        head(s, fam);
        Out o{s, fam.name, fam.scope == kRole ? j.role : nullptr};
        fam.emit.fabric(j.fabric, o);
    }
    return s;
}

std::string metrics_text(const MetricsInput& in) { return metrics_render(metrics_job(in)); }

std::vector<std::string> metric_family_names() {
    std::vector<std::string> v;
    for (const Family& f : kFamilies) v.emplace_back(f.name);
    return v;
}

}  // namespace ibf
