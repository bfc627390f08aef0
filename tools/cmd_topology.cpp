// `ibfabric topology slurm`: Slurm's topology.conf (tree or block) from a fabric dump (docs/cli.md).
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "ibf/analysis.h"
#include "ibf/inputs.h"
#include "ibf/slurm_topology.h"

namespace ibf::cli {
namespace {

struct TopologyArgs {
    std::string dump, node_name_map, output;
    bool block = false;
};

int run_slurm(const TopologyArgs& a) {
    const Fabric f = load_dump_file(a.dump, a.node_name_map.empty() ? NodeNameMap{} : load_node_name_map(a.node_name_map));
    const Analysis an = analyze(f);
    const std::string conf = slurm_topology(f, an, {.block = a.block, .source = a.dump == "-" ? "stdin" : a.dump});
    if (a.output.empty() || a.output == "-") std::cout << conf << std::flush;
    else write_text_file(a.output, conf);
    return kExitClean;
}

}  // namespace

void register_topology(CLI::App& app, Runner& run) {
    auto args = std::make_shared<TopologyArgs>();
    CLI::App* top = app.add_subcommand("topology", "The fabric's topology for other tools");
    top->require_subcommand(1);
    top->footer(
        "Examples:\n"
        "  ibfabric topology slurm now.txt -o /etc/slurm/topology.conf\n"
        "  ibfabric topology slurm now.txt --block --node-name-map ib-node-name-map");
    CLI::App* cmd = top->add_subcommand(
        "slurm",
        "Slurm's topology.conf from a dump: topology/tree (leaves with their hosts, higher tiers with\n"
        "the switches below them, hostlist-compressed) or, with --block, topology/block (one block per\n"
        "leaf group: leaves cabled to the same switches one tier up).");
    cmd->add_option("DUMP", args->dump, "ibnetdiscover, iblinkinfo or ibdiagnet .net dump; - reads stdin")->required();
    cmd->add_option("--node-name-map", args->node_name_map,
                    "node-name-map applied first, so hosts carry the names Slurm's NodeName uses")
        ->type_name("FILE");
    cmd->add_flag("--block", args->block, "Write topology/block (BlockName=...) instead of topology/tree");
    cmd->add_option("-o,--output", args->output, "Write to FILE instead of standard output")->type_name("FILE");
    cmd->footer(
        "Examples:\n"
        "  ibnetdiscover > now.txt\n"
        "  ibfabric topology slurm now.txt --node-name-map /etc/opensm/ib-node-name-map -o /etc/slurm/topology.conf\n"
        "  ibfabric topology slurm now.txt --block\n"
        "\n"
        "Exit status: 0 written, 2 bad input or usage.\n");
    cmd->callback([&run, args] { run = [args] { return run_slurm(*args); }; });
}

}  // namespace ibf::cli
