// Options every findings-reporting subcommand shares (check, analyze, findings): --waivers,
// --min-severity, --kind; and the report they print (active findings, then "waived (N)").
//
//   ReportOptions ro;  add_report_options(cmd, ro);
//   Waived r = scope_findings(std::move(fs), ro);   // reads the waiver file, applies it at the current time
//   std::cout << (json ? json_text(report_json(r), 2) : render_report(r, color));
//   return r.active.empty() ? kExitClean : kExitFindings;
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ibf/waivers.h"

namespace ibf::cli {

struct ReportOptions {
    std::string waivers;       // waiver file ("" = none)
    std::string min_severity;  // "" = info
    std::string kinds;         // "k1,k2", "" = all
};

void add_report_options(CLI::App* cmd, ReportOptions& o);

// Applies the waiver file (now = the system clock) and the filters. `already_waived` are findings
// a daemon waived before (kept, filtered too). InputError on a bad file or filter.
Waived scope_findings(std::vector<Finding> fs, const ReportOptions& o, std::vector<WaivedFinding> already_waived = {});

// findings_to_json(active) + "waived": [...] (when a waiver file was given, or anything is waived).
nlohmann::json report_json(const Waived& r, const ReportOptions& o);
// render_text(active) then render_waived_text(waived).
std::string render_report(const Waived& r, bool color);

// Standard input can be read once: InputError when more than one of `files` ({flag, path}) is `-`.
void require_one_stdin(const std::vector<std::pair<const char*, const std::string*>>& files);

// Waived findings in a JSON array as report_json writes it (from a daemon); InputError when bad.
std::vector<WaivedFinding> waived_from_json(const nlohmann::json& arr);

}  // namespace ibf::cli
