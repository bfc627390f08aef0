#include "ibf/finding.h"

#include <array>

#include "ibf/snapshot.h"

namespace ibf {
namespace {
constexpr std::array<std::string_view, kFindingKindCount> kNames{
    "missing_link", "unexpected_link", "miswired", "missing_node", "unexpected_node", "identity_changed", "rate_mismatch",
    "rate_below_capability", "mtu_mismatch", "missing_uplink", "uneven_bundle", "tier_skip", "intra_tier_link",
    "host_misplaced", "rate_outlier", "host_on_uplink_port", "routing_fallback", "lft_imbalance",
    "sm_split_brain", "sm_master_lid_mismatch", "sm_stalled", "sm_not_sweeping", "sm_unknown", "sm_config_mismatch", "sm_no_standby",
    "sm_standby_not_polling", "sm_conf_drift", "lid_changed", "link_flapping", "port_errors",
    "waiver_expired", "route_unreachable", "route_loop", "credit_loop", "route_non_minimal", "route_via_degraded_link",
    "host_absent",
};

// report_rank's order: the enum's, with the exceptions finding.h names.
constexpr std::array<FindingKind, kFindingKindCount> kReportOrder = [] {
    std::array<FindingKind, kFindingKindCount> o{};
    size_t n = 0;
    for (int i = 0; i < kFindingKindCount; ++i) {
        const auto k = static_cast<FindingKind>(i);
        if (k == FindingKind::identity_changed || k == FindingKind::host_absent) continue;
        o[n++] = k;
        if (k == FindingKind::missing_node) o[n++] = FindingKind::host_absent;
        if (k == FindingKind::mtu_mismatch) o[n++] = FindingKind::identity_changed;
    }
    return o;
}();
}  // namespace

std::string_view to_string(FindingKind k) {
    auto i = static_cast<size_t>(k);
    return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

std::optional<FindingKind> parse_finding_kind(std::string_view s) {
    for (size_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == s) return static_cast<FindingKind>(i);
    return std::nullopt;
}

int report_rank(FindingKind k) {
    for (size_t i = 0; i < kReportOrder.size(); ++i)
        if (kReportOrder[i] == k) return static_cast<int>(i);
    return kFindingKindCount;
}

std::string_view to_string(Severity s) {
    switch (s) {
        case Severity::info: return "info";
        case Severity::warning: return "warning";
        case Severity::critical: return "critical";
        default: return "error";
    }
}

std::optional<Severity> parse_severity(std::string_view s) {
    for (Severity v : {Severity::info, Severity::warning, Severity::error, Severity::critical})
        if (to_string(v) == s) return v;
    return std::nullopt;
}

Severity default_severity(FindingKind k) {
    switch (k) {
        case FindingKind::rate_below_capability:
        case FindingKind::identity_changed:
        case FindingKind::uneven_bundle:
        case FindingKind::host_on_uplink_port:
        case FindingKind::lft_imbalance:
        case FindingKind::sm_standby_not_polling:
        case FindingKind::sm_conf_drift:
        case FindingKind::sm_unknown:
        case FindingKind::link_flapping:
        case FindingKind::port_errors:
        case FindingKind::waiver_expired:
        case FindingKind::host_absent:
            return Severity::warning;
        case FindingKind::intra_tier_link:
        case FindingKind::tier_skip:
        case FindingKind::host_misplaced:
        case FindingKind::rate_outlier:
        case FindingKind::routing_fallback:
        case FindingKind::missing_uplink:
        case FindingKind::route_non_minimal:
        case FindingKind::route_via_degraded_link:
            return Severity::warning;
        case FindingKind::sm_not_sweeping:
            return Severity::critical;
        default:
            return Severity::error;
    }
}

std::string_view to_string(SmState s) {
    switch (s) {
        case SmState::Discovering: return "DISCOVERING";
        case SmState::Standby: return "STANDBY";
        case SmState::Master: return "MASTER";
        default: return "NOTACTIVE";
    }
}

}  // namespace ibf
