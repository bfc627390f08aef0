// `ibfabric hosts HOSTLIST`: the cables a job's hosts use, worst health first, and the all-to-all
// bound they allow (docs/cli.md).
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
    bool json = false;
};

int run_hosts(const HostsArgs& a) {
    const RouteInputs in = load_route_inputs(a.dump, a.lfts, a.expected, a.node_name_map);
    const Fabric& f = in.fabric;
    std::vector<NodeId> hosts;
    for (const std::string& h : hostlist_expand(a.hostlist)) {
        const std::vector<NodeId> ids = f.find_by_name(h);
        NodeId id = kNoNode;
        for (NodeId n : ids)
            if (f.node(n).type == NodeType::CA) id = n;
        if (id == kNoNode) throw InputError("hostlist", 0, 0, "no host '" + h + "' in " + a.dump);
        hosts.push_back(id);
    }
    const JobPaths j = job_paths(RouteGraph(f, in.lfts), in.analysis.names, hosts, in.notes);
    if (a.json) std::cout << job_paths_json(f, in.analysis.names, j).dump(2) << "\n";
    else std::cout << render_job_paths(f, in.analysis.names, j);
    std::cout.flush();
    bool issues = j.unrouted > 0;
    for (const JobLink& l : j.links) issues = issues || !l.issues.empty();
    return issues ? kExitFindings : kExitClean;
}

}  // namespace

void register_hosts(CLI::App& app, Runner& run) {
    auto args = std::make_shared<HostsArgs>();
    CLI::App* cmd = app.add_subcommand(
        "hosts",
        "The cables a job's hosts use (every ordered pair traced through the forwarding tables), those\n"
        "with findings first, then the busiest, and the all-to-all bandwidth per host they allow.");
    cmd->add_option("HOSTLIST", args->hostlist, "Slurm hostlist of the job's nodes: node[001-032],gpu07")->required();
    cmd->add_option("-d,--dump", args->dump, "The fabric: ibnetdiscover, iblinkinfo or ibdiagnet .net dump")
        ->required()
        ->type_name("DUMP");
    cmd->add_option("-l,--lfts", args->lfts, "The forwarding tables: dump_lfts / ibroute output, opensm-lfts.dump, opensm.fdbs")
        ->required()
        ->type_name("FILE");
    cmd->add_option("-e,--expected", args->expected, "A plan: planned rates, cable labels, rate_mismatch")->type_name("PLAN");
    cmd->add_option("--node-name-map", args->node_name_map, "node-name-map applied to the dump")->type_name("FILE");
    cmd->add_flag("--json", args->json, "Print the cables and the bound as JSON (docs/cli.md)");
    cmd->footer(
        "Examples:\n"
        "  ibfabric hosts 'node[001-032]' --dump now.txt --lfts lfts.txt\n"
        "  ibfabric hosts \"$SLURM_JOB_NODELIST\" -d now.txt -l /var/log/opensm-lfts.dump --json\n"
        "\n"
        "Exit status: 0 every pair arrives over cables without findings, 1 otherwise, 2 bad input.\n");
    cmd->callback([&run, args] { run = [args] { return run_hosts(*args); }; });
}

}  // namespace ibf::cli
