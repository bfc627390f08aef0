// Waivers and filters: what an administrator has declared intended (a waiver file), and which
// findings a report shows (--min-severity, --kind). Pure: no I/O, no clocks (time is passed in).
//
//   ibf::WaiverSet w = ibf::parse_waivers(text, "waivers.yaml");     // InputError names file:line:column
//   ibf::Waived r = ibf::apply_waivers(findings, w, now_unix_ms);
//   r.active;   // what still counts (exit status, metrics), plus a waiver_expired per expired waiver
//   r.waived;   // what a waiver covers, each with the waiver's reason and file:line
//   ibf::FindingFilter flt = ibf::parse_finding_filter("warning", "miswired,rate_mismatch");
//   ibf::filter_findings(r, flt);
//
// The file (docs/findings.md, "Waivers"):
//   waivers:
//     - kind: host_misplaced              # one kind or a list; absent = any kind
//       ends: [spine01/35, storage01]     # node or node/port (or a GUID); each must be one of the ends
//       labels: [C-0117]                  # the planned cable label is one of these
//       name: "mgmt*"                     # shell pattern (*, ?, [..]) on either end's name
//       reason: storage01 sits on the spines by design    # required
//       expires: 2027-06-30               # optional, UTC; the waiver holds through that day
//   maintenance:                        # hosts planned away for a while (ibfabric maintenance add)
//     - hosts: "node[001-004]"            # a Slurm hostlist
//       until: 2026-12-24                 # required, UTC; holds through that day
//       reason: DIMM replacement          # required
// A waiver needs a reason and at least one of kind, ends, labels, name; all it gives must match.
// An expired waiver waives nothing and is itself a finding (waiver_expired, naming file:line).
// A host in maintenance: its host_absent, missing_link and link_flapping findings are listed apart
// ("in maintenance", WaivedFinding::maintenance); an ended maintenance is a waiver_expired.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/finding.h"

namespace ibf {

struct Waiver {
    std::vector<FindingKind> kinds;   // empty = any kind
    std::vector<std::string> ends;    // "node", "node/port" or a GUID; each must match a or b
    std::vector<std::string> labels;  // the finding's cable label is one of these
    std::string name;                 // fnmatch pattern on a.name or b.name ("" = none)
    std::string reason;
    std::string expires;              // "2027-06-30" as written, "" = never
    int64_t expires_unix_ms = 0;      // first millisecond after the expiry day (UTC); 0 = never
    std::string where;                // "waivers.yaml:12" (the list item)
};

struct Maintenance {
    std::string hosts;                // the hostlist as written ("node[001-004]")
    std::vector<std::string> names;   // its hosts, sorted
    std::string until;                // "2026-12-24"
    int64_t until_unix_ms = 0;        // first millisecond after that day (UTC)
    std::string reason;
    std::string where;                // "waivers.yaml:20" (the list item)
};

struct WaiverSet {
    std::string source;               // the file, "" = no waivers
    std::vector<Waiver> waivers;
    std::vector<Maintenance> maintenance;
    bool empty() const { return waivers.empty() && maintenance.empty(); }
};

// Refused with file:line:column: a duplicate key (in a waiver or at the top), and a file of more
// than kMaxWaiverYamlNodes YAML nodes with aliases counted as what they stand for (250k labels
// then 70k `- *w` aliases would be 17.5G strings). The caller bounds the bytes (1 MiB).
inline constexpr size_t kMaxWaiverYamlNodes = 100000;
// Hosts over all maintenance entries (each hostlist expanded), and entries.
inline constexpr size_t kMaxMaintenanceHosts = 100000;
inline constexpr size_t kMaxMaintenanceEntries = 10000;
WaiverSet parse_waivers(std::string_view text, const std::string& file);

// Whether `w` covers `f` (ignores expiry).
bool waiver_matches(const Waiver& w, const Finding& f);
// True once `now_unix_ms` is past the expiry day.
bool waiver_expired(const Waiver& w, int64_t now_unix_ms);

// Whether `m` covers `f`: a host_absent, missing_link or link_flapping with an end on one of its hosts
// (ignores the date).
bool maintenance_matches(const Maintenance& m, const Finding& f);

struct WaivedFinding {
    Finding finding;
    std::string reason;
    std::string where;                // the waiver's file:line
    std::string expires;              // "" = never (a maintenance: its until date)
    bool maintenance = false;         // covered by a maintenance entry, not a waiver
};

struct Waived {
    std::vector<Finding> active;
    std::vector<WaivedFinding> waived;
};

// Splits `fs` by the first live maintenance, else the first live waiver, that covers each finding;
// every expired waiver or ended maintenance adds one waiver_expired finding to `active` (and covers
// nothing). Order within each list is kept.
Waived apply_waivers(std::vector<Finding> fs, const WaiverSet& w, int64_t now_unix_ms);

// "2027-06-30" -> the first millisecond after that day (UTC); nullopt when not such a date.
std::optional<int64_t> end_of_day_unix_ms(std::string_view date);

// --min-severity and --kind.
struct FindingFilter {
    Severity min_severity = Severity::info;
    std::vector<FindingKind> kinds;   // empty = every kind
    bool passes(const Finding& f) const;
};
// `min_severity` "" or info|warning|error; `kinds` "" or "k1,k2". InputError("--min-severity" /
// "--kind", ...) on a bad value, naming the valid ones.
FindingFilter parse_finding_filter(std::string_view min_severity, std::string_view kinds);
void filter_findings(Waived& r, const FindingFilter& flt);

// The waiver file `text` with its top-level `maintenance:` section replaced by `entries` (written
// canonically; appended when the file has none); every other line (waivers, comments) is kept as it
// is. The caller parses the result again before writing it. Pure.
//   with_maintenance("waivers: []\n", {{.hosts = "n[1-2]", .until = "2026-12-24", .reason = "PSU"}})
//     == "waivers: []\nmaintenance:\n  - hosts: \"n[1-2]\"\n    until: 2026-12-24\n    reason: \"PSU\"\n"
std::string with_maintenance(std::string_view text, const std::vector<Maintenance>& entries);

// JSON of one maintenance entry: {"hosts", "count", "until", "reason", "where", "ended"}.
nlohmann::json maintenance_to_json(const Maintenance& m, int64_t now_unix_ms);

// JSON of the waived findings: each finding's object plus "waiver": {"reason", "where", "expires",
// "maintenance"} ("maintenance": true for a host in maintenance; "expires" is then its until date).
nlohmann::json waived_to_json(const std::vector<WaivedFinding>& w);
// The text sections after a report: "in maintenance (N)", then per entry its hosts, date, reason
// (file:line) and findings; "waived (N)", then per waiver reason (file:line) its findings; "" when none.
std::string render_waived_text(const std::vector<WaivedFinding>& w, bool color);

}  // namespace ibf
