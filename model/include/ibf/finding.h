// A finding: one thing about the fabric an administrator should look at, with both endpoints,
// what was expected, what is there, and a one-line remediation.
//
// Produced by checks/ (plan vs actual) and routing/ (analysis without a plan); serialized by
// checks/report.h as the JSON object documented in docs/findings.md. Pure data.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"

namespace ibf {

enum class FindingKind : uint8_t {
    // plan vs actual (checks/)
    missing_link,
    unexpected_link,
    miswired,
    missing_node,
    unexpected_node,
    identity_changed,        // a planned node found by its cabling or name under another name or GUID
    rate_mismatch,
    rate_below_capability,
    mtu_mismatch,
    // fat-tree analysis without a plan (routing/)
    missing_uplink,
    uneven_bundle,
    tier_skip,
    intra_tier_link,
    host_misplaced,
    rate_outlier,
    host_on_uplink_port,
    routing_fallback,
    lft_imbalance,
    // Subnet Manager high availability (ha/, docs/ha.md)
    sm_split_brain,          // two MASTER SMs in one subnet
    sm_master_lid_mismatch,  // ports whose MasterSMLID is not the master's LID
    sm_stalled,              // the master's ActCount stopped increasing
    sm_not_sweeping,         // a MASTER that owes a sweep and reached no SUBNET UP (critical)
    sm_unknown,              // an SM whose GUID is not configured
    sm_config_mismatch,      // an SM's priority or sm_key disagrees with the configuration
    sm_no_standby,           // an HA pair with one SM left
    sm_standby_not_polling,  // a STANDBY whose ActCount does not move (it does not poll the master)
    sm_conf_drift,           // SM nodes whose opensm.conf settings drift apart
    lid_changed,             // a port's LID changed across a failover
    // link health over time (port counters and link state)
    link_flapping,           // a port that went down and up repeatedly within a window
    port_errors,             // error counters growing faster than their threshold
    // waivers (checks/waivers.h)
    waiver_expired,          // a waiver past its expiry date (it waives nothing any more)
    // routing validation from the switches' LFTs (routing/route_check.h)
    route_unreachable,       // CA->CA pairs whose route ends in a dead end (black hole)
    route_loop,              // CA->CA pairs whose route runs in a forwarding loop
    credit_loop,             // a cycle in the channel dependency graph of the unicast routes
    route_non_minimal,       // routes longer than the fabric's shortest path between their switches
    route_via_degraded_link, // CA->CA routes crossing a degraded, below-plan, flapping or erroring link
    // appended (the enum's values are kept); report_rank() lists each beside its family
    host_absent,             // a planned host (CA) absent from the fabric: powered off or drained? (warning)
};
inline constexpr int kFindingKindCount = 37;

std::string_view to_string(FindingKind k);  // "missing_link", ...
std::optional<FindingKind> parse_finding_kind(std::string_view s);

// The order reports list kinds in: the enum's, except that identity_changed follows every other
// plan-vs-actual kind (a renamed or replaced node is a naming matter; the faults come first),
// and host_absent follows missing_node.
int report_rank(FindingKind k);

// critical: the fabric is not being managed (no sweeping master, two masters after healing):
// every change of the fabric goes unhandled until a person acts.
enum class Severity : uint8_t { info = 0, warning = 1, error = 2, critical = 3 };
std::string_view to_string(Severity s);     // "info", "warning", "error", "critical"
std::optional<Severity> parse_severity(std::string_view s);
Severity default_severity(FindingKind k);   // error for cabling/rate/MTU below plan, warning for rate_below_capability, ...

struct Endpoint {
    std::string name;  // node name ("leaf03"), or "" when unknown
    Guid guid = 0;     // node GUID, 0 when unknown (e.g. a planned node that is absent)
    int port = 0;      // port number, 0 when the finding is about a whole node
};

// One cable a finding is about, seen from its end `a`: `b` is where the cable at `a` goes (empty when
// nothing is cabled there), `planned` where the plan puts the far end of a's cable (empty when the
// plan has no cable at `a`; equal to `b` when the cable is where the plan says).
//   miswired leaf01/3: {a leaf01/3, b spine02/5, planned spine02/3, label "C-0117", rate "4xHDR"}
struct FindingLink {
    Endpoint a, b, planned;
    std::string label;  // the plan's cable label, "" when unknown
    std::string rate;   // the cable's active rate ("4xEDR"), "" when unknown or nothing is cabled
};

struct Finding {
    FindingKind kind{};
    Severity severity = Severity::error;
    Endpoint a, b;           // b may be empty (name "", guid 0) for node findings
    std::string expected;    // e.g. "spine02/3", "4xHDR", "4096"
    std::string actual;      // e.g. "spine02/5", "4xEDR", "2048", "" for nothing
    std::string label;       // cable label from the plan, "" when unknown
    std::string message;     // one line: what is wrong and what to do about it
    // Every cable the finding is about, each with both ends (a crossed pair: both cables; a group:
    // each member; a missing node: each planned cable). Every port `message` names is an end here
    // or in a / b. Empty for findings about a whole node or an SM.
    std::vector<FindingLink> links;
    // A group (one rule across many nodes, e.g. a node-name-map that renamed 200 switches): the
    // findings it stands for, each complete. Empty for a single finding.
    std::vector<Finding> members;
};

}  // namespace ibf
