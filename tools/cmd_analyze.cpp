// `ibfabric analyze`, `ibfabric plan from-dump` and `ibfabric routing-files`: fat-tree reasoning
// without a plan (routing/), see docs/analysis.md.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "commands.h"
#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/ftree_files.h"
#include "ibf/plan_infer.h"
#include "ibf/inputs.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"

namespace ibf::cli {
namespace {

Fabric load_dump(const std::string& path, const std::string& map_path) {
    return load_dump_file(path, map_path.empty() ? NodeNameMap{} : load_node_name_map(map_path));
}

// A fabric with the nodes and cables of a plan. Every planned node needs a GUID (the files name
// GUIDs); a host port's GUID is taken as node GUID + port number, the Mellanox/NVIDIA convention.
Fabric fabric_from_plan(const Plan& p) {
    Fabric f;
    std::vector<int> ports(p.nodes.size(), 1);
    for (const PlannedLink& l : p.links) {
        ports[l.a.node] = std::max(ports[l.a.node], l.a.port);
        ports[l.b.node] = std::max(ports[l.b.node], l.b.port);
    }
    std::vector<NodeId> ids;
    for (size_t i = 0; i < p.nodes.size(); ++i) {
        const PlannedNode& n = p.nodes[i];
        if (!n.guid)
            throw InputError(n.where.file.empty() ? p.source : n.where.file, n.where.line, n.where.column,
                             "routing files from a plan need a GUID for every node; '" + n.name +
                                 "' has none (give it in the plan's nodes: section, or use a dump)");
        Node node;
        node.type = n.type == NodeType::Unknown ? NodeType::CA : n.type;
        node.guid = *n.guid;
        node.description = n.type == NodeType::Switch ? "MF0;" + n.name + ":plan/U1" : n.name + (n.hca.empty() ? "" : " " + n.hca);
        ids.push_back(f.add_node(std::move(node), std::max(ports[i], n.num_ports)));
    }
    for (const PlannedLink& l : p.links) {
        f.connect(ids[l.a.node], l.a.port, ids[l.b.node], l.b.port);
        for (const PlannedEnd& e : {l.a, l.b}) {
            Port* pt = f.node(ids[e.node]).port(e.port);
            if (l.rate) pt->width_active = l.rate->width, pt->speed_active = l.rate->speed;
            if (f.node(ids[e.node]).type != NodeType::Switch) pt->guid = f.node(ids[e.node]).guid + static_cast<Guid>(e.port);
        }
    }
    f.finalize();
    return f;
}

struct AnalyzeArgs {
    std::string dump, node_name_map;
    bool json = false, no_color = false, switches = false;
};

int run_analyze(const AnalyzeArgs& args) {
    Fabric f = load_dump(args.dump, args.node_name_map);
    Analysis a = analyze(f);
    if (args.json) {
        nlohmann::json j = findings_to_json(a.findings);
        j["analysis"] = analysis_to_json(f, a);
        std::cout << json_text(j, 2) << "\n";
    } else {
        const bool color = !args.no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(STDOUT_FILENO) == 1;
        auto count = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
        std::cout << "analyzed " << args.dump << " (" << count(f.count(NodeType::Switch), "switch", "switches") << ", "
                  << count(f.count(NodeType::CA), "CA", "CAs") << ", " << count(f.link_count(), "link", "links") << "): "
                  << (a.levels() > 0 ? std::to_string(a.levels()) + "-level fat tree" : std::string("no tiers (no hosts)")) << "\n\n"
                  << render_tier_table(f, a) << "\n"
                  << (args.switches ? render_switch_table(f, a) + "\n" : std::string())
                  << render_text(a.findings, color);
    }
    std::cout.flush();
    return a.findings.empty() ? kExitClean : kExitFindings;
}

struct PlanArgs {
    std::string dump, node_name_map, out;
    bool pin_guids = false;
};

int run_plan_from_dump(const PlanArgs& args) {
    Fabric f = load_dump(args.dump, args.node_name_map);
    Analysis a = analyze(f);
    InferOptions opt;
    opt.pin_all_guids = args.pin_guids;
    InferredPlan p = infer_plan_yaml(f, a, args.dump, opt);
    if (args.out.empty() || args.out == "-") {
        std::cout << p.yaml;
        std::cout.flush();
    } else {
        write_text_file(args.out, p.yaml);
        std::fprintf(stderr, "wrote %s: %d switches and %d hosts in compact form, %d explicit cables\n", args.out.c_str(),
                     p.compact_switches, p.compact_hosts, p.explicit_cables);
    }
    return kExitClean;
}

struct FilesArgs {
    std::string input, node_name_map, out_dir;
};

int run_routing_files(const FilesArgs& args) {
    const std::string text = read_text_file(args.input, "dump or plan");
    Fabric f;
    if (detect_dump_format(text)) {
        f = parse_dump(text, args.input);
        if (!args.node_name_map.empty())
            apply_node_name_map(f, load_node_name_map(args.node_name_map));
    } else {
        f = fabric_from_plan(parse_plan_yaml(text, args.input));
    }
    Analysis a = analyze(f);
    FtreeFiles files = ftree_files(f, a);
    std::error_code ec;
    std::filesystem::create_directories(args.out_dir, ec);
    if (ec) throw InputError(args.out_dir, 0, 0, "cannot create the output directory: " + ec.message());
    const std::filesystem::path dir(args.out_dir);
    write_text_file((dir / "root_guid_file").string(), files.root_guids);
    write_text_file((dir / "cn_guid_file").string(), files.cn_guids);
    write_text_file((dir / "ib-node-name-map").string(), files.node_name_map);
    std::cout << "wrote " << (dir / "root_guid_file").string() << " (" << files.roots << " " << tier_name(a.levels())
              << " switches), " << (dir / "cn_guid_file").string() << " (" << files.compute_ports << " compute node ports";
    if (files.skipped_ports) std::cout << ", " << files.skipped_ports << " without a port GUID skipped";
    std::cout << "), " << (dir / "ib-node-name-map").string() << "\n"
              << "opensm.conf: routing_engine ftree, root_guid_file " << (dir / "root_guid_file").string()
              << ", cn_guid_file " << (dir / "cn_guid_file").string() << ", node_name_map_name "
              << (dir / "ib-node-name-map").string() << "\n";
    return kExitClean;
}

}  // namespace

void register_analyze(CLI::App& app, Runner& run) {
    auto aa = std::make_shared<AnalyzeArgs>();
    CLI::App* an = app.add_subcommand(
        "analyze",
        "Analyse a fabric as a fat tree, without a plan: tiers (leaf, spine, core), uplink bundles,\n"
        "oversubscription, a bisection bandwidth estimate, and findings about what breaks the fabric's\n"
        "own regularity (missing uplinks, uneven bundles, links that skip or stay in a tier, hosts on\n"
        "spines or on uplink ports, rate outliers). docs/analysis.md explains every finding.");
    an->add_option("dump", aa->dump, "ibnetdiscover, iblinkinfo or ibdiagnet .net dump")->required()->type_name("DUMP");
    an->add_option("--node-name-map", aa->node_name_map, "node-name-map (lines `<guid> \"<name>\"`) applied to the dump")
        ->type_name("FILE");
    an->add_flag("--json", aa->json,
                 "Print JSON: the findings object of `check --json` (docs/findings.md) plus \"analysis\" (tiers, switches)");
    an->add_flag("--switches", aa->switches,
                 "Also list every switch: tier, hosts, links, uplink bundles, oversubscription (down/up bandwidth)");
    an->add_flag("--no-color", aa->no_color, "Never colour the text report");
    an->footer(
        "Examples:\n"
        "  ibnetdiscover > fabric.txt && ibfabric analyze fabric.txt\n"
        "  ibfabric analyze fabric.txt --switches     # per-leaf oversubscription\n"
        "  ibfabric analyze fabric.txt --json | jq '.analysis.tiers'\n"
        "\n"
        "Exit status: 0 no findings, 1 findings reported, 2 bad input or usage.");
    an->callback([&run, aa] { run = [aa] { return run_analyze(*aa); }; });

    auto pa = std::make_shared<PlanArgs>();
    CLI::App* plan = app.add_subcommand("plan", "Write plans (docs/plan.md)\nExample: ibfabric plan from-dump golden.txt -o plan.yaml");
    plan->require_subcommand(1);
    CLI::App* fd = plan->add_subcommand(
        "from-dump",
        "Infer a compact YAML plan (docs/plan.md) from a known-good dump: tiers and host groups where a\n"
        "rule describes the cabling, explicit cables for the irregular parts, rates.\n"
        "`ibfabric check --expected plan.yaml --actual <the same dump>` is then clean.");
    fd->add_option("dump", pa->dump, "the known-good dump")->required()->type_name("DUMP");
    fd->add_option("-o,--output", pa->out, "write the plan here (default: stdout)")->type_name("FILE");
    fd->add_option("--node-name-map", pa->node_name_map, "node-name-map applied to the dump first")->type_name("FILE");
    fd->add_flag("--pin-guids", pa->pin_guids,
                 "Pin every node by GUID (a golden snapshot: a replaced switch or HCA is then a finding). Default: nodes\n"
                 "are matched by name; only nodes without a usable name of their own are pinned by GUID");
    fd->footer("Example:\n  ibfabric plan from-dump golden.txt -o plan.yaml && ibfabric check -e plan.yaml -a now.txt");
    fd->callback([&run, pa] { run = [pa] { return run_plan_from_dump(*pa); }; });

    auto fa = std::make_shared<FilesArgs>();
    CLI::App* rf = app.add_subcommand(
        "routing-files",
        "Write OpenSM ftree routing files from a dump or a plan: root_guid_file (top-tier switch GUIDs),\n"
        "cn_guid_file (compute-node port GUIDs) and an ib-node-name-map.");
    rf->add_option("input", fa->input, "a dump, or a YAML plan whose nodes all carry GUIDs")->required()->type_name("DUMP|PLAN");
    rf->add_option("--out-dir", fa->out_dir, "directory to write the three files into (created if needed)")
        ->required()
        ->type_name("DIR");
    rf->add_option("--node-name-map", fa->node_name_map, "node-name-map applied to a dump first")->type_name("FILE");
    rf->footer(
        "Example:\n"
        "  ibfabric routing-files fabric.txt --out-dir /etc/opensm/ftree\n"
        "  # opensm.conf: routing_engine ftree; root_guid_file /etc/opensm/ftree/root_guid_file;\n"
        "  #              cn_guid_file /etc/opensm/ftree/cn_guid_file");
    rf->callback([&run, fa] { run = [fa] { return run_routing_files(*fa); }; });
}

}  // namespace ibf::cli
