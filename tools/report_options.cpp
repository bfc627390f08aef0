// --waivers, --min-severity, --kind and the report with its waived section (report_options.h).
#include "report_options.h"

#include <chrono>

#include "ibf/error.h"
#include "ibf/inputs.h"
#include "ibf/report.h"

namespace ibf::cli {

void add_report_options(CLI::App* cmd, ReportOptions& o) {
    cmd->add_option("--waivers", o.waivers,
                    "Waiver file (YAML, docs/findings.md#waivers): findings declared intended are listed apart under\n"
                    "\"waived\" and do not count in the exit status; an expired waiver is a waiver_expired finding")
        ->type_name("FILE");
    cmd->add_option("--min-severity", o.min_severity, "Only report findings of at least this severity")
        ->check(CLI::IsMember({"info", "warning", "error", "critical"}))
        ->type_name("info|warning|error|critical");
    cmd->add_option("--kind", o.kinds, "Only report these finding kinds (comma-separated, docs/findings.md)")
        ->type_name("K[,K]");
}

Waived scope_findings(std::vector<Finding> fs, const ReportOptions& o, std::vector<WaivedFinding> already_waived) {
    const FindingFilter flt = parse_finding_filter(o.min_severity, o.kinds);
    WaiverSet ws;
    if (!o.waivers.empty()) {
        const std::string text = read_text_file(o.waivers, "waiver file", 1u << 20);
        ws = naming_file(o.waivers, "waiver file", [&] { return parse_waivers(text, o.waivers); });
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    Waived r = apply_waivers(std::move(fs), ws, now);
    r.waived.insert(r.waived.begin(), std::make_move_iterator(already_waived.begin()),
                    std::make_move_iterator(already_waived.end()));
    filter_findings(r, flt);
    return r;
}

nlohmann::json report_json(const Waived& r, const ReportOptions& o) {
    nlohmann::json j = findings_to_json(r.active);
    if (!o.waivers.empty() || !r.waived.empty()) j["waived"] = waived_to_json(r.waived);
    return j;
}

std::string render_report(const Waived& r, bool color) { return render_text(r.active, color) + render_waived_text(r.waived, color); }

void require_one_stdin(const std::vector<std::pair<const char*, const std::string*>>& files) {
    const char* first = nullptr;
    for (const auto& [flag, path] : files) {
        if (*path != "-") continue;
        if (first)
            throw InputError("-", 0, 0, std::string("standard input can be read only once: ") + first + " and " + flag +
                                            " are both '-'; give one of them as a file");
        first = flag;
    }
}

std::vector<WaivedFinding> waived_from_json(const nlohmann::json& arr) {
    std::vector<WaivedFinding> out;
    if (!arr.is_array()) return out;
    for (const nlohmann::json& j : arr) {
        WaivedFinding w;
        w.finding = finding_from_json(j);
        if (j.contains("waiver") && j["waiver"].is_object()) {
            const nlohmann::json& wv = j["waiver"];
            w.reason = wv.value("reason", "");
            w.where = wv.value("where", "");
            if (wv.contains("expires") && wv["expires"].is_string()) w.expires = wv["expires"].get<std::string>();
            if (wv.contains("maintenance") && wv["maintenance"].is_boolean()) w.maintenance = wv["maintenance"].get<bool>();
        }
        out.push_back(std::move(w));
    }
    return out;
}

}  // namespace ibf::cli
