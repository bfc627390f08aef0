// `ibfabric impact NODE[/PORT]...`: what taking switches or ports out would do (docs/cli.md).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "ibf/analysis.h"
#include "ibf/error.h"
#include "ibf/impact.h"
#include "ibf/inputs.h"

namespace ibf::cli {
namespace {

struct ImpactArgs {
    std::vector<std::string> targets;
    std::string dump, node_name_map;
    std::string url, lab, token_file;  // --url / --lab: the daemon's live fabric
    bool json = false;
};

// The daemon runs the same code on its live fabric (GET /api/v1/impact, docs/api.md).
int run_impact_live(const ImpactArgs& a) {
    std::string nodes;
    for (const std::string& t : a.targets) nodes += (nodes.empty() ? "" : ",") + url_escape(t);
    nlohmann::json j;
    if (int rc = fetch_daemon_json(daemon_url(a.url, a.lab), a.token_file, "/api/v1/impact?node=" + nodes, j)) return rc;
    Impact im;
    try {
        im = impact_from_json(j);
    } catch (const nlohmann::json::exception& e) {
        std::fprintf(stderr, "ibfabric: the daemon's /api/v1/impact is not an impact: %s\n", e.what());
        return kExitUnavailable;
    }
    if (a.json) std::cout << j.dump(2) << "\n";
    else std::cout << render_impact(im);
    std::cout.flush();
    return im.unreachable > 0 ? kExitFindings : kExitClean;
}

int run_impact(const ImpactArgs& a) {
    const bool live = !a.url.empty() || !a.lab.empty();
    if (live && !a.dump.empty()) throw InputError("impact", 0, 0, "--url/--lab asks the daemon, --dump reads a file: give one");
    if (live) return run_impact_live(a);
    if (a.dump.empty()) throw InputError("impact", 0, 0, "give --dump (a file) or --url / --lab (the daemon's live fabric)");
    const Fabric f = load_dump_file(a.dump, a.node_name_map.empty() ? NodeNameMap{} : load_node_name_map(a.node_name_map));
    const Analysis an = analyze(f);
    std::vector<ImpactTarget> targets;
    for (const std::string& t : a.targets) {
        ImpactTarget it;
        std::string error;
        if (!parse_impact_target(f, an, t, it, error)) throw InputError(a.dump, 0, 0, error);
        targets.push_back(it);
    }
    const Impact im = impact(f, targets);
    if (a.json) std::cout << impact_json(im).dump(2) << "\n";
    else std::cout << render_impact(im);
    std::cout.flush();
    return im.unreachable > 0 ? kExitFindings : kExitClean;
}

}  // namespace

void register_impact(CLI::App& app, Runner& run) {
    auto args = std::make_shared<ImpactArgs>();
    CLI::App* cmd = app.add_subcommand(
        "impact",
        "What taking switches or ports out would do, before touching them: host pairs left without a\n"
        "path, pairs with fewer or longer shortest paths, hosts cut off, per-tier oversubscription and\n"
        "the bisection estimate before and after. Assumes minimal up/down rerouting (shortest paths of\n"
        "what is left, as ftree, updn and minhop route a fat-tree).");
    cmd->add_option("TARGET", args->targets, "A switch or host (spine01), or one port (leaf03/19); several allowed")
        ->required();
    cmd->add_option("-d,--dump", args->dump, "The fabric: ibnetdiscover, iblinkinfo or ibdiagnet .net dump")
        ->type_name("DUMP");
    add_daemon_options(cmd, args->url, args->lab);
    cmd->add_option("--token-file", args->token_file, "bearer token for a daemon with token_for_reads (else $IBFABRIC_TOKEN)")
        ->type_name("FILE");
    cmd->add_option("--node-name-map", args->node_name_map, "node-name-map applied to the dump")->type_name("FILE");
    cmd->add_flag("--json", args->json, "Print the impact as JSON (docs/cli.md)");
    cmd->footer(
        "Examples:\n"
        "  ibfabric impact spine07 --dump now.txt             # can spine07 go down for maintenance?\n"
        "  ibfabric impact leaf03/19 leaf03/20 -d now.txt --json\n"
        "  ibfabric impact spine01 --url http://sm1:8639           # the daemon's live fabric\n"
        "\n"
        "Exit status: 0 every host pair keeps a path, 1 some pair would be unreachable, 2 bad input,\n"
        "3 the daemon could not be asked.\n");
    cmd->callback([&run, args] { run = [args] { return run_impact(*args); }; });
}

}  // namespace ibf::cli
