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
// A waiver needs a reason and at least one of kind, ends, labels, name; all it gives must match.
// An expired waiver waives nothing and is itself a finding (waiver_expired, naming file:line).
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

struct WaiverSet {
    std::string source;               // the file, "" = no waivers
    std::vector<Waiver> waivers;
    bool empty() const { return waivers.empty(); }
};

// Refused with file:line:column: a duplicate key (in a waiver or at the top), and a file of more
// than kMaxWaiverYamlNodes YAML nodes with aliases counted as what they stand for (250k labels
// then 70k `- *w` aliases would be 17.5G strings). The caller bounds the bytes (1 MiB).
inline constexpr size_t kMaxWaiverYamlNodes = 100000;
WaiverSet parse_waivers(std::string_view text, const std::string& file);

// Whether `w` covers `f` (ignores expiry).
bool waiver_matches(const Waiver& w, const Finding& f);
// True once `now_unix_ms` is past the expiry day.
bool waiver_expired(const Waiver& w, int64_t now_unix_ms);

struct WaivedFinding {
    Finding finding;
    std::string reason;
    std::string where;                // the waiver's file:line
    std::string expires;              // "" = never
};

struct Waived {
    std::vector<Finding> active;
    std::vector<WaivedFinding> waived;
};

// Splits `fs` by the first live waiver that covers each finding; every expired waiver adds one
// waiver_expired finding to `active` (and waives nothing). Order within each list is kept.
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

// JSON of the waived findings: each finding's object plus "waiver": {"reason", "where", "expires"}.
nlohmann::json waived_to_json(const std::vector<WaivedFinding>& w);
// The text section after a report: "waived (N)", then per waiver reason (file:line) its findings;
// "" when none.
std::string render_waived_text(const std::vector<WaivedFinding>& w, bool color);

}  // namespace ibf
