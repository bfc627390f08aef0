// `ibfabric check`: compare a fabric dump with its plan (a YAML plan or a known-good dump).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "ibf/analysis.h"
#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/inputs.h"
#include "ibf/report.h"
#include "report_options.h"

namespace ibf::cli {
namespace {

struct CheckArgs {
    std::string expected;
    std::string actual;
    std::string node_name_map;
    bool json = false;
    bool no_color = false;
    bool no_capability = false;
    ReportOptions report;
};

int run_check(const CheckArgs& a) {
    // The plan: a YAML plan, or a known-good dump; the node-name-map from --node-name-map or the plan.
    require_one_stdin({{"--expected", &a.expected},
                       {"--actual", &a.actual},
                       {"--node-name-map", &a.node_name_map},
                       {"--waivers", &a.report.waivers}});
    Expected e = load_expected(a.expected, a.node_name_map);
    Fabric actual = load_dump_file(a.actual, e.names);
    // A golden ibnetdiscover dump names CAs by node GUID, an iblinkinfo dump by port GUID: align them.
    if (e.golden) align_golden_guids(e.plan, *e.golden, actual);
    const Plan& plan = e.plan;

    CheckOptions opt;
    opt.rate_below_capability = !a.no_capability;
    opt.tier_of = analyze(actual).tier_of;  // names: "leaf-cfb0" as `analyze` calls it (ibf/names.h)
    const Waived fs = scope_findings(check(plan, actual, opt), a.report);
    const std::vector<std::string> unchecked = unchecked_fields(plan, actual);

    if (a.json) {
        nlohmann::json j = report_json(fs, a.report);
        j["unchecked"] = unchecked;
        std::cout << json_text(j, 2) << "\n";
    } else {
        const bool color = !a.no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(STDOUT_FILENO) == 1;
        std::cout << "checked " << a.actual << " (" << actual.size() << " nodes, " << actual.link_count()
                  << " links) against " << a.expected << " (" << plan.nodes.size() << " nodes, " << plan.links.size()
                  << " links)\n"
                  << render_unchecked(unchecked) << render_report(fs, color);
    }
    std::cout.flush();
    return fs.active.empty() ? kExitClean : kExitFindings;
}

}  // namespace

void register_check(CLI::App& app, Runner& run) {
    auto args = std::make_shared<CheckArgs>();
    CLI::App* cmd = app.add_subcommand(
        "check",
        "Compare a fabric dump with its plan, port by port: cabling (missing, unexpected and miswired\n"
        "cables, missing and unexpected nodes), link rate (width x speed) and MTU.");
    cmd->add_option("-e,--expected", args->expected,
                    "The plan: a YAML plan file (docs/plan.md), or a dump of the fabric when it was known to be\n"
                    "good (ibnetdiscover, iblinkinfo or ibdiagnet .net; nodes are then matched by GUID); - reads stdin")
        ->required()
        ->type_name("PLAN|DUMP");
    cmd->add_option("-a,--actual", args->actual,
                    "The fabric as it is now: output of `ibnetdiscover`, `iblinkinfo` or ibdiagnet's .net dump;\n"
                    "- reads standard input (`ibnetdiscover | ibfabric check -e plan.yaml -a -`)")
        ->required()
        ->type_name("DUMP");
    cmd->add_option("--node-name-map", args->node_name_map,
                    "OpenSM/infiniband-diags node-name-map (lines `<guid> \"<name>\"`) applied to the dumps,\n"
                    "so nodes carry the names the plan uses (default: the plan's `node_name_map:`, if any)")
        ->type_name("FILE");
    cmd->add_flag("--json", args->json, "Print the findings as JSON (schema: docs/findings.md) instead of text");
    cmd->add_flag("--no-color", args->no_color,
                  "Never colour the text report (it is coloured only when stdout is a terminal; NO_COLOR works too)");
    cmd->add_flag("--no-capability", args->no_capability,
                  "Do not warn about links that run slower than both ends could (rate_below_capability)");
    add_report_options(cmd, args->report);
    cmd->footer(
        "Examples:\n"
        "  # after an expansion: does the fabric match the plan?\n"
        "  ibnetdiscover > now.txt\n"
        "  ibfabric check --expected plan.yaml --actual now.txt\n"
        "\n"
        "  # what changed since the fabric was last known good? (machine-readable)\n"
        "  ibfabric check --expected golden-ibnetdiscover.txt --actual now.txt --json\n"
        "\n"
        "  # hosts are named by a node-name-map, as OpenSM does\n"
        "  ibfabric check -e plan.yaml -a now.txt --node-name-map /etc/opensm/ib-node-name-map\n"
        "\n"
        "  # straight from the fabric; intended deviations waived, only errors\n"
        "  ibnetdiscover | ibfabric check -e plan.yaml -a - --waivers waivers.yaml --min-severity error\n"
        "\n"
        "Exit status: 0 no findings, 1 findings reported, 2 bad input or usage (the message names\n"
        "file:line:column).\n");
    cmd->callback([&run, args] { run = [args] { return run_check(*args); }; });
}

}  // namespace ibf::cli
