// Every live link once, as the rows /metrics exports (docs/metrics.md): both ends named like
// guilbaults/infiniband-exporter (local/remote GUID, name, port), the tier pair, the link's state,
// width, lane speed, rate and MTU, and the planned rate and cable label when the plan has the
// link. Built on the daemon's check thread next to ibf::check (docs/threading.md), so a scrape
// only prints strings. Pure.
//
//   std::vector<ibf::LinkMatch> m; ibf::check(plan, fabric, opt, &m);
//   ibf::LinkTable t = ibf::link_table(fabric, analysis.tier_of, &plan, m);
//   for (const ibf::LinkRow& r : t.rows) ... r.labels ...   // local_guid="0x...",local_name="leaf01",...
//
// Which end is "local": the switch end of a switch-host link (the port infiniband-exporter
// reports), the lower tier end of a switch-switch link (the leaf of leaf-spine), else the lower
// (GUID, port). Tier: "host-leaf", "leaf-spine", "spine-core", ... from routing/'s tiers; an end
// whose tier is unknown is "unknown".
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ibf/check.h"
#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/plan.h"

namespace ibf {

struct LinkRow {
    Guid local_guid = 0, remote_guid = 0;
    int local_port = 0, remote_port = 0;
    std::string local_name, remote_name, tier;
    int state = 0;                  // PortState of the local end (IBA: 1 Down .. 4 Active; 0 unknown)
    int lanes = 0;                  // active width in lanes (1, 2, 4, 8, 12; 0 unknown)
    double lane_bps = 0;            // data rate of one lane, bit/s (EDR: 25e9; 0 unknown)
    double rate_bps = 0;            // lanes x lane_bps
    int mtu_bytes = 0;              // active (neighbor) MTU of the local end, 0 unknown
    double planned_rate_bps = 0;    // 0: the plan gives no complete rate for this link (or no plan)
    std::string label;              // cable label from the plan, "" unknown
    std::string labels;             // the Prometheus label set, escaped, without braces
    // The link deviates (docs/metrics.md "Bounded by default"): its local end not Active, its rate
    // below the plan's, or a finding names one of its ends (mark_deviating_links). Flapping and
    // port errors are told at each scrape. Only deviating links get per-link series by default.
    bool deviates = false;
};

struct LinkTable {
    std::vector<LinkRow> rows;      // in Fabric::links() order
    // /metrics' samples of the per-link families that depend on the rows alone, by family name,
    // role and row selection, rendered at the first scrape after each check (by metrics_render()
    // only: ibfabricd's metrics thread, docs/threading.md; by default only the deviating rows).
    mutable std::map<std::string, std::string> rendered;
    // (local GUID, port) and (remote GUID, port) -> row index (the flapping links' rows).
    std::map<std::pair<Guid, int>, size_t> row_of;
    // For the per-tier and per-switch aggregates, summed in one pass over the rows without a
    // lookup: each row's tier (index into `tiers`, sorted) and local node (into `local_nodes`).
    std::vector<std::string> tiers;
    std::vector<uint32_t> tier_of_row;
    std::vector<std::string> local_node_labels;  // switch_guid="0x..",switch_name="leaf01", by GUID
    std::vector<uint32_t> local_node_of_row;
    // The same for the port counter families, which also change with each PortCounters batch:
    // by family name, (the counter state's version it was rendered at, samples).
    mutable std::map<std::string, std::pair<uint64_t, std::string>> rendered_counters;
    // What those were rendered from, per row, so that after a batch only the rows of the ports
    // that changed are read again (PortCounterTracker::changed_since) and the aggregates move by
    // their difference. metrics_render()'s, like the texts.
    struct CounterRows {
        static constexpr size_t kFamilies = 15;  // the link counter families of /metrics
        bool valid = false;
        uint64_t version = 0;
        bool all_links = false;
        std::vector<std::array<uint64_t, kFamilies>> v;  // per row: each family's value
        std::vector<uint8_t> has;                        // per row: 1 local end counted, 2 either end
        std::vector<uint32_t> emitted;                   // rows with per-link samples, ascending
        std::vector<std::array<uint64_t, kFamilies>> tier;
        struct Switch {
            uint64_t errors = 0, xmit = 0, rcv = 0;
            uint32_t rows = 0;  // its rows with counter data at either end
        };
        std::vector<Switch> sw;
    };
    mutable CounterRows counter_rows;
};

// `tier_of`: per NodeId, 1 leaf, 2 spine, ... (routing/analysis.h), may be shorter (then unknown).
// `plan` may be null; `matches` are ibf::check's exactly cabled links for that plan and fabric.
// `names`: per NodeId, the display name (ibf::NameBook, LiveAnalysis::names); empty = Node::name.
LinkTable link_table(const Fabric& f, const std::vector<int>& tier_of, const Plan* plan,
                     const std::vector<LinkMatch>& matches, const std::vector<std::string>& names = {});

// Sets LinkRow::deviates: not Active, below the plan's rate, or an end named by one of `findings`
// (their a, b and links' ends with a port, members included).
void mark_deviating_links(LinkTable& t, const std::vector<Finding>& findings);
// The ends (GUID, port) that mark_deviating_links() looks up for `findings`, appended to `out`
// (sort and unique it to compare): with the same fabric, equal ends give equal rows.
void deviating_ends(const std::vector<Finding>& findings, std::vector<std::pair<Guid, int>>& out);

// A Prometheus label value with \\, \" and \n escaped.
std::string escape_label_value(const std::string& s);

}  // namespace ibf
