// Fat-tree analysis without a plan: tiers, bundles, oversubscription, bisection estimate, and
// findings about what breaks the fabric's own regularity (docs/analysis.md).
//
//   ibf::Fabric f = ibf::parse_dump(text, "fabric.txt");
//   ibf::Analysis a = ibf::analyze(f);
//   for (const ibf::TierInfo& t : a.tiers) ...        // leaf, spine, core: counts, links, bundles
//   a.tier_of[node_id];                               // 1 = leaf, 2 = spine, 3 = core, 0 = not a switch / unknown
//   a.findings;                                       // ibf::Finding, same JSON as `check` (checks/report.h)
//   nlohmann::json j = ibf::analysis_to_json(f, a);   // tiers + switches (findings: findings_to_json)
//
// Tiers are inferred from the distance to compute hosts, corrected by the majority structure:
// a switch with a few hosts but mostly links to leaves is a spine; a host-less switch that only
// hangs off spines of one pod is a host-less leaf, not a core; SHARP aggregation nodes ("Aggregation
// Node" in the description) are not hosts. Pure: no I/O.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/fabric.h"
#include "ibf/finding.h"
#include "ibf/names.h"

namespace ibf {

// A group of parallel cables from a switch to one switch of the next tier up.
struct Bundle {
    NodeId peer = kNoNode;
    int cables = 0;
    std::vector<int> ports;       // local port numbers, ascending
    std::vector<int> peer_ports;  // the peer's port numbers, same order
};

struct SwitchInfo {
    NodeId node = kNoNode;
    int tier = 0;               // 1 leaf, 2 spine, 3 core, ...; 0 = unknown (no path to hosts)
    int hosts = 0;              // links to compute hosts
    int other_cas = 0;          // links to aggregation nodes and other non-compute CAs
    int down_links = 0;         // hosts (leaves) + links to tier-1
    int up_links = 0;           // links to tier+1
    int intra_links = 0;        // links within the tier
    int skip_links = 0;         // links to tiers two or more apart
    double down_gbps = 0, up_gbps = 0;
    double oversubscription = 0;  // down_gbps / up_gbps; 0 when there are no uplinks
    std::vector<Bundle> up_bundles;  // by peer node id
    std::string chassis;        // shared system GUID (0x...) when several switches carry it, else ""
};

struct TierInfo {
    int level = 0;              // 1 = leaf
    std::string name;           // "leaf", "spine", "core", "tier4", ...
    int switches = 0;
    int hosts = 0;              // compute host links on this tier
    int down_links = 0, up_links = 0, intra_links = 0;
    std::map<int, int> bundle_sizes;  // uplink bundle size -> number of bundles
    double down_gbps = 0, up_gbps = 0;
    double oversub_min = 0, oversub_max = 0;  // over the tier's switches that have uplinks
};

struct Analysis {
    std::vector<int> tier_of;            // per NodeId; 0 for CAs, routers and unknown switches
    std::vector<TierInfo> tiers;         // index = level - 1
    std::vector<SwitchInfo> switches;    // every switch, by node id
    std::vector<NodeId> compute_hosts;   // CAs that are compute hosts (not aggregation nodes)
    std::vector<NodeId> aggregation_nodes;
    int host_links = 0;                  // links from compute hosts to switches
    double host_gbps = 0;                // their summed rate
    double bisection_gbps = 0;           // estimate: min(host_gbps, min over tiers of up_gbps) / 2
    std::vector<Finding> findings;       // sorted (kind, a.name, a.port)
    std::vector<std::string> names;      // display_name() of every node, by NodeId

    const SwitchInfo* info(NodeId n) const;
    int levels() const { return static_cast<int>(tiers.size()); }
};

struct AnalyzeOptions {
    // A group of host links (one adapter model) or a switch's uplinks below this fraction of the
    // majority rate is a rate_outlier; 1.0 = any slower link.
    double rate_outlier_fraction = 1.0;
    // Links whose two ends both support (and enable) a faster common rate: rate_below_capability
    // (capability.h). Needs the ports' masks: iblinkinfo "Could be", ibdiagnet, live snapshots.
    bool capability = true;
    // Links cabled as a plan declares them (actual node ids and ports, e.g. from ibf::check's
    // LinkMatch): findings about them are not anomalies (declared.h). Mirrored attachments on a
    // redundant switch pair become one info finding either way.
    std::vector<Link> declared;
    // Per NodeId, the plan's name of the node ("" = none): names come from one ibf::NameBook (plan
    // names first, see ibf/names.h and ibf::plan_names in checks/identity.h).
    std::vector<std::string> preferred_names;
};

// is_aggregation_node(): ibf/names.h.

std::string tier_name(int level);  // 1 "leaf", 2 "spine", 3 "core", n "tier<n>", 0 "unknown"

Analysis analyze(const Fabric& f, const AnalyzeOptions& opt = {});

// {"levels", "compute_hosts", "aggregation_nodes", "host_links", "host_gbps", "bisection_gbps",
//  "tiers": [...], "switches": [...]} (docs/analysis.md). `per_switch` = false leaves out
// "switches" (a few hundred bytes instead of ~200 bytes per switch and bundle).
// Findings are not included: serialize them with findings_to_json (checks/report.h).
nlohmann::json analysis_to_json(const Fabric& f, const Analysis& a, bool per_switch = true);

// The tier table as plain text (one line per tier with its oversubscription range, then totals).
std::string render_tier_table(const Fabric& f, const Analysis& a);
// One line per switch (by tier, then name): hosts, down/up links, bundle sizes, oversubscription.
std::string render_switch_table(const Fabric& f, const Analysis& a);

// A node's display name: ibf::NameBook's (ibf/names.h) — its name when unique in the fabric, a
// chassis ASIC's "sw01/L05/U1", a host adapter's "gpu01:mlx5_1", else "<tier>-<last 4 GUID hex
// digits>" (e.g. "spine-8098"). From Analysis::names when filled (analyze() fills it).
std::string display_name(const Fabric& f, const Analysis& a, NodeId n);
// display_name() of every node at once (linear time).
std::vector<std::string> display_names(const Fabric& f, const std::vector<int>& tier_of);

}  // namespace ibf
