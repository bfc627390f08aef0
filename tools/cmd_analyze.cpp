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
#include "ibf/check.h"
#include "ibf/declared_links.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/ftree_files.h"
#include "ibf/lft.h"
#include "ibf/lft_dump.h"
#include "ibf/route_check.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"
#include "ibf/inputs.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"
#include "ibf/text.h"
#include "report_options.h"

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
    std::string dump, node_name_map, expected, lfts;
    bool json = false, no_color = false, switches = false;
    ReportOptions report;
};

int run_analyze(const AnalyzeArgs& args) {
    require_one_stdin({{"DUMP", &args.dump},
                       {"--expected", &args.expected},
                       {"--node-name-map", &args.node_name_map},
                       {"--waivers", &args.report.waivers}});
    AnalyzeOptions opt;
    Fabric f;
    if (args.expected.empty()) {
        f = load_dump(args.dump, args.node_name_map);
    } else {  // the node-name-map from --node-name-map or the plan's, as `check` does
        Expected e = load_expected(args.expected, args.node_name_map);
        f = load_dump_file(args.dump, e.names);
        if (e.golden) align_golden_guids(e.plan, *e.golden, f);
        const NodeMatch nm = match_nodes(e.plan, f);
        opt.preferred_names = plan_names(e.plan, nm, f.size());  // the plan's names, as `check` prints them
        opt.declared = declared_links(e.plan, f, nm);            // what it declares is no anomaly
    }
    Analysis a = analyze(f, opt);
    nlohmann::json routes = nullptr;
    if (!args.lfts.empty()) {  // the tables as dumped: balance and routing validation (docs/analysis.md)
        const std::vector<SwitchLft> lfts = parse_lft_dump(read_text_file(args.lfts, "LFT dump"), args.lfts);
        const LftReport bal = lft_balance(f, a, lfts);
        RouteCheckOptions ro;
        ro.degraded = degraded_links(f, a.findings);
        const RouteCheck rc = check_routes(RouteGraph(f, lfts), a, ro);
        routes = route_check_json(rc);
        a.findings.insert(a.findings.end(), bal.findings.begin(), bal.findings.end());
        a.findings.insert(a.findings.end(), rc.findings.begin(), rc.findings.end());
    }
    const Waived r = scope_findings(a.findings, args.report);
    if (args.json) {
        nlohmann::json j = report_json(r, args.report);
        j["analysis"] = analysis_to_json(f, a);
        if (!routes.is_null()) j["analysis"]["routes"] = routes;
        std::cout << json_text(j, 2) << "\n";
    } else {
        const bool color = !args.no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(STDOUT_FILENO) == 1;
        auto count = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
        std::cout << "analyzed " << args.dump << " (" << count(f.count(NodeType::Switch), "switch", "switches") << ", "
                  << count(f.count(NodeType::CA), "CA", "CAs") << ", " << count(f.link_count(), "link", "links") << "): "
                  << (a.levels() > 0 ? std::to_string(a.levels()) + "-level fat tree" : std::string("no tiers (no hosts)"))
                  << (args.expected.empty() ? "" : "; " + std::to_string(opt.declared.size()) + " links as " + args.expected + " declares them")
                  << "\n\n"
                  << render_tier_table(f, a) << "\n"
                  << (args.switches ? render_switch_table(f, a) + "\n" : std::string())
                  << render_report(r, color);
    }
    std::cout.flush();
    return r.active.empty() ? kExitClean : kExitFindings;
}

struct PlanArgs {
    std::string dump, node_name_map, out;
    bool pin_guids = false, accept_anomalies = false;
};

// What the analysis finds in a "known-good" dump would become the plan: listed as YAML comments
// at the top of the plan (with --accept-anomalies), else a refusal.
std::vector<std::string> anomaly_comments(const std::vector<Finding>& fs, const std::string& dump) {
    std::vector<std::string> c{"ibfabric plan from-dump --accept-anomalies: `ibfabric analyze " + dump + "` found " +
                               std::to_string(fs.size()) + (fs.size() == 1 ? " anomaly" : " anomalies") +
                               " that this plan declares as intended:"};
    for (const Finding& f : fs) c.push_back("  " + std::string(to_string(f.kind)) + ": " + terminal_safe(f.message));
    return c;
}

int run_plan_from_dump(const PlanArgs& args) {
    require_one_stdin({{"DUMP", &args.dump}, {"--node-name-map", &args.node_name_map}});
    Fabric f = load_dump(args.dump, args.node_name_map);
    Analysis a = analyze(f);
    std::vector<Finding> anomalies;
    for (const Finding& x : a.findings)
        if (x.severity >= Severity::warning) anomalies.push_back(x);
    if (!anomalies.empty() && !args.accept_anomalies) {
        std::fprintf(stderr, "ibfabric: %s is not clean: the plan would declare %zu %s as intended:\n%s", args.dump.c_str(),
                     anomalies.size(), anomalies.size() == 1 ? "anomaly" : "anomalies",
                     render_text(anomalies, false).c_str());
        std::fprintf(stderr, "fix the fabric, or adopt it as it is with: ibfabric plan from-dump %s%s --accept-anomalies\n",
                     args.dump.c_str(), args.out.empty() ? "" : (" -o " + args.out).c_str());
        return kExitFindings;
    }
    InferOptions opt;
    opt.pin_all_guids = args.pin_guids;
    InferredPlan p = infer_plan(f, a, args.dump, opt);
    if (!anomalies.empty()) {
        const std::vector<std::string> c = anomaly_comments(anomalies, args.dump);
        p.doc.comments.insert(p.doc.comments.begin(), c.begin(), c.end());
        std::fprintf(stderr, "ibfabric: warning: the plan declares %zu %s of %s as intended (listed at its top)\n",
                     anomalies.size(), anomalies.size() == 1 ? "anomaly" : "anomalies", args.dump.c_str());
    }
    const std::string yaml = plan_yaml_text(p.doc);
    if (args.out.empty() || args.out == "-") {
        std::cout << yaml;
        std::cout.flush();
    } else {
        write_text_file(args.out, yaml);
        std::fprintf(stderr, "wrote %s: %d switches in tiers (%d with compact uplinks), %d hosts in host groups, %d explicit cables\n",
                     args.out.c_str(), p.tier_switches, p.compact_switches, p.compact_hosts, p.explicit_cables);
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
    an->add_option("-e,--expected", aa->expected,
                   "The plan (YAML or a known-good dump): what it declares (a host on a spine port, a storage group)\n"
                   "is not an anomaly")
        ->type_name("PLAN|DUMP");
    an->add_option("-l,--lfts", aa->lfts,
                   "The switches' forwarding tables (`dump_lfts` / `ibroute` output, opensm-lfts.dump, opensm.fdbs):\n"
                   "also validate the routing (route_unreachable, route_loop, credit_loop, route_non_minimal,\n"
                   "route_via_degraded_link) and the uplink balance (lft_imbalance)")
        ->type_name("FILE");
    add_report_options(an, aa->report);
    an->footer(
        "Examples:\n"
        "  ibnetdiscover > fabric.txt && ibfabric analyze fabric.txt\n"
        "  ibfabric analyze fabric.txt --switches     # per-leaf oversubscription\n"
        "  ibfabric analyze fabric.txt --json | jq '.analysis.tiers'\n"
        "  ibnetdiscover | ibfabric analyze - --expected plan.yaml --waivers waivers.yaml\n"
        "  dump_lfts > lfts.txt && ibfabric analyze fabric.txt --lfts lfts.txt   # routing validation\n"
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
    fd->add_flag("--accept-anomalies", pa->accept_anomalies,
                 "Write the plan although `ibfabric analyze` finds anomalies (a missing uplink, a host on a spine):\n"
                 "they are listed as comments at the top of the plan. Without it such a dump is refused (exit 1)");
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
