// `ibfabric topology slurm`: Slurm's topology.conf (tree or block) from a fabric dump, a plan or
// the daemon's live fabric (docs/cli.md).
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "ibf/analysis.h"
#include "ibf/error.h"
#include "ibf/identity.h"
#include "ibf/inputs.h"
#include "ibf/plan_fabric.h"
#include "ibf/slurm_topology.h"

namespace ibf::cli {
namespace {

struct TopologyArgs {
    std::string dump, plan, node_name_map, output;
    std::string url, lab, token_file;  // --url / --lab: the daemon's live fabric
    bool block = false;
};

int write_conf(const TopologyArgs& a, const std::string& conf) {
    if (a.output.empty() || a.output == "-") std::cout << conf << std::flush;
    else write_text_file(a.output, conf);
    return kExitClean;
}

// The daemon runs the same code on its live fabric, named as its check names it (GET
// /api/v1/topology/slurm, docs/api.md).
int run_slurm_live(const TopologyArgs& a) {
    nlohmann::json j;
    const std::string path = std::string("/api/v1/topology/slurm") + (a.block ? "?block=1" : "");
    if (int rc = fetch_daemon_json(daemon_url(a.url, a.lab), a.token_file, path, j)) return rc;
    if (!j.is_object() || !j.contains("conf") || !j["conf"].is_string()) {
        std::fprintf(stderr, "ibfabric: the daemon's /api/v1/topology/slurm has no \"conf\" text\n");
        return kExitUnavailable;
    }
    return write_conf(a, j["conf"].get<std::string>());
}

int run_slurm(const TopologyArgs& a) {
    const bool live = !a.url.empty() || !a.lab.empty();
    if (int(!a.dump.empty()) + int(!a.plan.empty()) + int(live) != 1)
        throw InputError("topology", 0, 0, "give one of: a DUMP, --plan FILE, or --url / --lab (the daemon's live fabric)");
    if (live) {
        if (!a.node_name_map.empty()) throw InputError("topology", 0, 0, "--node-name-map is for a dump or a plan; the daemon uses its own");
        return run_slurm_live(a);
    }
    SlurmTopologyOptions opt{.block = a.block};
    if (!a.plan.empty()) {
        Expected e = load_expected(a.plan, a.node_name_map);
        opt.source = a.plan;
        if (e.golden) {  // a known-good dump given as the plan: its own names, the map applied
            return write_conf(a, slurm_topology(*e.golden, analyze(*e.golden), opt));
        }
        const Fabric f = plan_fabric(e.plan);
        return write_conf(a, slurm_topology(f, analyze(f), opt));
    }
    const Fabric f = load_dump_file(a.dump, a.node_name_map.empty() ? NodeNameMap{} : load_node_name_map(a.node_name_map));
    opt.source = a.dump == "-" ? "stdin" : a.dump;
    return write_conf(a, slurm_topology(f, analyze(f), opt));
}

}  // namespace

void register_topology(CLI::App& app, Runner& run) {
    auto args = std::make_shared<TopologyArgs>();
    CLI::App* top = app.add_subcommand("topology", "The fabric's topology for other tools");
    top->require_subcommand(1);
    top->footer(
        "Examples:\n"
        "  ibfabric topology slurm now.txt -o /etc/slurm/topology.conf\n"
        "  ibfabric topology slurm --plan plan.yaml --block\n"
        "  ibfabric topology slurm --url http://sm1:8639 -o /etc/slurm/topology.conf");
    CLI::App* cmd = top->add_subcommand(
        "slurm",
        "Slurm's topology.conf from a dump, a plan or the daemon's live fabric: topology/tree (leaves\n"
        "with their hosts, higher tiers with the switches below them, hostlist-compressed) or, with\n"
        "--block, topology/block (one block per leaf group: leaves cabled to the same switches one\n"
        "tier up).");
    cmd->add_option("DUMP", args->dump, "ibnetdiscover, iblinkinfo or ibdiagnet .net dump; - reads stdin");
    cmd->add_option("--plan", args->plan,
                    "the plan instead (YAML, docs/plan.md, or a known-good dump): its nodes and cables as if\n"
                    "every cable were up; hosts carry the plan's names")
        ->type_name("FILE");
    add_daemon_options(cmd, args->url, args->lab);
    cmd->add_option("--token-file", args->token_file, "bearer token for a daemon with token_for_reads (else $IBFABRIC_TOKEN)")
        ->type_name("FILE");
    cmd->add_option("--node-name-map", args->node_name_map,
                    "node-name-map applied first, so hosts carry the names Slurm's NodeName uses (with\n"
                    "--plan: instead of the plan's node_name_map)")
        ->type_name("FILE");
    cmd->add_flag("--block", args->block, "Write topology/block (BlockName=...) instead of topology/tree");
    cmd->add_option("-o,--output", args->output, "Write to FILE instead of standard output")->type_name("FILE");
    cmd->footer(
        "Examples:\n"
        "  ibnetdiscover > now.txt\n"
        "  ibfabric topology slurm now.txt --node-name-map /etc/opensm/ib-node-name-map -o /etc/slurm/topology.conf\n"
        "  ibfabric topology slurm now.txt --block\n"
        "  ibfabric topology slurm --plan plan.yaml                    # before the cables are in\n"
        "  ibfabric topology slurm --url http://sm1:8639               # the daemon's live fabric, its plan's names\n"
        "\n"
        "Exit status: 0 written, 2 bad input or usage, 3 the daemon could not be asked.\n");
    cmd->callback([&run, args] { run = [args] { return run_slurm(*args); }; });
}

}  // namespace ibf::cli
