// Reports of findings: the JSON object (docs/findings.md) and the human text report.
//
//   nlohmann::json j = ibf::findings_to_json(fs);     // {"summary": {...}, "findings": [...]}
//   std::string t = ibf::render_text(fs, /*color=*/isatty(1));
//
// JSON: GUIDs are "0x"-prefixed 16-digit hex strings, ports are integers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ibf/finding.h"

namespace ibf {

nlohmann::json finding_to_json(const Finding& f);
Finding finding_from_json(const nlohmann::json& j);  // throws InputError on a bad object
// {"summary": {"<kind>": count, ...}, "findings": [...]}; summary lists only kinds that occur.
nlohmann::json findings_to_json(const std::vector<Finding>& fs);
std::vector<Finding> findings_from_json(const nlohmann::json& j);

// Grouped by kind, then by switch (a.name); colour only when `color`; ends with one summary line
// such as "3 findings: 2 miswired, 1 rate_mismatch" or "no findings".
std::string render_text(const std::vector<Finding>& fs, bool color);

// One line per field check() could not compare (ibf::unchecked_fields), "" when there is none:
//   render_unchecked({"mtu"}) ==
//   "notice  MTU not checked: the plan gives it, the fabric's input carries none (ibnetdiscover, iblinkinfo and .net dumps carry no MTU; ibfabricd checks it live)\n"
std::string render_unchecked(const std::vector<std::string>& fields);

// JSON text with invalid UTF-8 replaced by U+FFFD: fabrics carry whatever bytes their node
// descriptions hold (Latin-1 host names happen), and JSON output must never fail on them.
// Every JSON ibfabric prints or serves goes through this.
std::string json_text(const nlohmann::json& j, int indent = -1);

}  // namespace ibf
