// `ibfabric hosts HOSTLIST`: the cables a job's hosts use, worst health first, and the all-to-all
// bound they allow (docs/cli.md).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "ibf/error.h"
#include "ibf/hostlist.h"
#include "ibf/job_paths.h"
#include "route_inputs.h"

namespace ibf::cli {
namespace {

struct HostsArgs {
    std::string hostlist, dump, lfts, expected, node_name_map;
    std::string url, lab, token_file;  // --url / --lab: the daemon's live fabric and LFTs
    bool json = false;
};

// Prints job_paths_json's object `j`; the exit status says whether every pair arrives cleanly.
int print_job(const nlohmann::json& j, bool as_json) {
    if (as_json) std::cout << j.dump(2) << "\n";
    else std::cout << render_job_paths(j);
    std::cout.flush();
    bool issues = j.at("unrouted").get<long>() > 0;
    for (const auto& l : j.at("links")) issues = issues || !l.at("issues").empty();
    return issues ? kExitFindings : kExitClean;
}

int run_hosts(const HostsArgs& a) {
    const bool live = !a.url.empty() || !a.lab.empty();
    if (live && (!a.dump.empty() || !a.lfts.empty() || !a.expected.empty() || !a.node_name_map.empty()))
        throw InputError("hosts", 0, 0, "--url/--lab asks the daemon; --dump, --lfts, --expected and --node-name-map read files: give one or the other");
    if (live) {  // the daemon traces the pairs on its live fabric (GET /api/v1/hosts, docs/api.md)
        nlohmann::json j;
        const std::string path = "/api/v1/hosts?nodes=" + url_escape(a.hostlist);
        if (int rc = fetch_daemon_json(daemon_url(a.url, a.lab), a.token_file, path, j)) return rc;
        try {
            j.erase("sweep_seq");
            return print_job(j, a.json);
        } catch (const nlohmann::json::exception& e) {
            std::fprintf(stderr, "ibfabric: the daemon's %s is not a job's paths: %s\n", path.c_str(), e.what());
            return kExitUnavailable;
        }
    }
    if (a.dump.empty() || a.lfts.empty())
        throw InputError("hosts", 0, 0, "give --dump and --lfts (files), or --url / --lab (the daemon's live fabric)");
    const RouteInputs in = load_route_inputs(a.dump, a.lfts, a.expected, a.node_name_map);
    std::string error;
    const auto hosts = job_hosts(in.fabric, a.hostlist, error);
    if (!hosts) throw InputError(a.dump, 0, 0, error);
    return print_job(job_paths_json(in.fabric, in.analysis.names, job_paths(RouteGraph(in.fabric, in.lfts), in.analysis.names, *hosts, in.notes)),
                     a.json);
}

}  // namespace

void register_hosts(CLI::App& app, Runner& run) {
    auto args = std::make_shared<HostsArgs>();
    CLI::App* cmd = app.add_subcommand(
        "hosts",
        "The cables a job's hosts use (every ordered pair traced through the forwarding tables), those\n"
        "with findings first, then the busiest, and the all-to-all bandwidth per host they allow.");
    cmd->add_option("HOSTLIST", args->hostlist, "Slurm hostlist of the job's nodes: node[001-032],gpu07")->required();
    add_daemon_options(cmd, args->url, args->lab);
    cmd->add_option("--token-file", args->token_file, "bearer token for a daemon with token_for_reads (else $IBFABRIC_TOKEN)")
        ->type_name("FILE");
    cmd->add_option("-d,--dump", args->dump, "The fabric: ibnetdiscover, iblinkinfo or ibdiagnet .net dump")->type_name("DUMP");
    cmd->add_option("-l,--lfts", args->lfts, "The forwarding tables: dump_lfts / ibroute output, opensm-lfts.dump, opensm.fdbs")
        ->type_name("FILE");
    cmd->add_option("-e,--expected", args->expected, "A plan: planned rates, cable labels, rate_mismatch")->type_name("PLAN");
    cmd->add_option("--node-name-map", args->node_name_map, "node-name-map applied to the dump")->type_name("FILE");
    cmd->add_flag("--json", args->json, "Print the cables and the bound as JSON (docs/cli.md)");
    cmd->footer(
        "Examples:\n"
        "  ibfabric hosts 'node[001-032]' --dump now.txt --lfts lfts.txt\n"
        "  ibfabric hosts \"$SLURM_JOB_NODELIST\" -d now.txt -l /var/log/opensm-lfts.dump --json\n"
        "  ibfabric hosts 'node[001-032]' --url http://sm1:8639   # the live fabric, LFTs and findings\n"
        "  ibfabric hosts 'node[001-032]' --lab /tmp/mylab\n"
        "\n"
        "Exit status: 0 every pair arrives over cables without findings, 1 otherwise, 2 bad input,\n"
        "3 the daemon cannot be asked.\n");
    cmd->callback([&run, args] { run = [args] { return run_hosts(*args); }; });
}

}  // namespace ibf::cli
