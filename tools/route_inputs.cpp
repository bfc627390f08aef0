// load_route_inputs (route_inputs.h).
#include "route_inputs.h"

#include "ibf/check.h"
#include "ibf/inputs.h"
#include "ibf/lft_dump.h"

namespace ibf::cli {

RouteInputs load_route_inputs(const std::string& dump, const std::string& lfts, const std::string& expected,
                              const std::string& node_name_map) {
    RouteInputs in;
    std::vector<PlannedCable> planned;
    std::vector<Finding> plan_findings;
    if (expected.empty()) {
        in.fabric = load_dump_file(dump, node_name_map.empty() ? NodeNameMap{} : load_node_name_map(node_name_map));
    } else {
        Expected e = load_expected(expected, node_name_map);
        in.fabric = load_dump_file(dump, e.names);
        if (e.golden) align_golden_guids(e.plan, *e.golden, in.fabric);
        std::vector<LinkMatch> matches;
        plan_findings = check(e.plan, in.fabric, {}, &matches);
        for (const LinkMatch& m : matches) {
            const PlannedLink& l = e.plan.links[m.planned];
            planned.push_back({m.a, m.pa, m.b, m.pb, l.rate ? to_string(*l.rate) : "", l.label});
        }
    }
    in.lfts = parse_lft_dump(read_text_file(lfts, "LFT dump"), lfts);
    in.analysis = analyze(in.fabric);
    std::vector<Finding> findings = in.analysis.findings;
    findings.insert(findings.end(), plan_findings.begin(), plan_findings.end());
    in.notes = link_notes(in.fabric, findings, planned);
    return in;
}

}  // namespace ibf::cli
