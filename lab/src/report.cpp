#include "ibf/lab_report.h"

#include <nlohmann/json.hpp>

#include "ibf/dumps.h"
#include "ibf/report.h"
#include "ibf/lab_process.h"

namespace ibf {

std::optional<LabFindings> lab_findings_via_daemon(const LabState& s, int64_t after_seq) {
    if (s.api_port <= 0) throw LabError("this lab runs without ibfabricd");
    HttpReply r = http_get(s.api_port, "/api/v1/findings");
    if (r.status != 200) throw LabError("ibfabricd answered " + std::to_string(r.status) + " to GET /api/v1/findings", r.body);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(r.body);
    } catch (const nlohmann::json::exception& e) {
        throw LabError(std::string("ibfabricd sent JSON the lab cannot read: ") + e.what(), r.body.substr(0, 400));
    }
    if (!j.contains("sweep_seq") || j["sweep_seq"].is_null()) return std::nullopt;
    int64_t seq = j["sweep_seq"].get<int64_t>();
    if (seq <= after_seq) return std::nullopt;
    if (j.value("route_validation", nlohmann::json()) == "validating") return std::nullopt;  // the route findings follow
    LabFindings f;
    f.sweep_seq = seq;
    f.via = "ibfabricd";
    f.findings = findings_from_json(j);
    return f;
}

std::optional<LabFindings> lab_wait_findings(const LabState& s, int64_t after_seq, double timeout_s) {
    const double deadline = lab_detail::now_s() + timeout_s;
    for (;;) {
        if (auto f = lab_findings_via_daemon(s, after_seq)) return f;
        if (lab_detail::now_s() > deadline) return std::nullopt;
        lab_detail::sleep_s(0.02);
    }
}

LabFindings lab_findings_via_discover(const LabState& s, const Plan& expected, CheckOptions opt) {
    std::string text = lab_run_client(s, {"ibnetdiscover"}, 60);
    Fabric f = parse_dump(text, s.path("work/ibnetdiscover.txt"));
    LabFindings r;
    r.via = "ibnetdiscover";
    r.findings = check(expected, f, opt);
    return r;
}

}  // namespace ibf
