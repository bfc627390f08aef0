// `ibfabric route SRC DST`: the route the switches' forwarding tables give, both directions, every
// cable with its rate, the plan's rate and label, and what is wrong with it (docs/cli.md).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "ibf/error.h"
#include "ibf/route_report.h"
#include "route_inputs.h"

namespace ibf::cli {
namespace {

struct RouteArgs {
    std::string src, dst;
    std::string dump, lfts, expected, node_name_map;
    std::string url, lab, token_file;  // --url / --lab: the daemon's live fabric and LFTs
    bool json = false;
};

RouteEnd end_or_throw(const Fabric& f, const Analysis& an, const std::string& what, const std::string& dump) {
    std::string error;
    auto e = resolve_route_end(f, an.names, what, error);
    if (!e) throw InputError(dump, 0, 0, error);
    return *e;
}

// The daemon traces both ways on its live fabric (GET /api/v1/route, docs/api.md).
int run_route_live(const RouteArgs& a) {
    nlohmann::json j;
    const std::string path = "/api/v1/route?src=" + url_escape(a.src) + "&dst=" + url_escape(a.dst);
    if (int rc = fetch_daemon_json(daemon_url(a.url, a.lab), a.token_file, path, j)) return rc;
    try {
        if (a.json) std::cout << nlohmann::json{{"forward", j.at("forward")}, {"reverse", j.at("reverse")}}.dump(2) << "\n";
        else std::cout << render_route_json(j.at("forward")) << render_route_json(j.at("reverse"));
        std::cout.flush();
        return route_clean_json(j.at("forward")) && route_clean_json(j.at("reverse")) ? kExitClean : kExitFindings;
    } catch (const nlohmann::json::exception& e) {
        std::fprintf(stderr, "ibfabric: the daemon's %s is not a route: %s\n", path.c_str(), e.what());
        return kExitUnavailable;
    }
}

int run_route(const RouteArgs& a) {
    const bool live = !a.url.empty() || !a.lab.empty();
    if (live && (!a.dump.empty() || !a.lfts.empty() || !a.expected.empty()))
        throw InputError("route", 0, 0, "--url/--lab asks the daemon; --dump, --lfts and --expected read files: give one or the other");
    if (live) return run_route_live(a);
    if (a.dump.empty() || a.lfts.empty())
        throw InputError("route", 0, 0, "give --dump and --lfts (files), or --url / --lab (the daemon's live fabric)");
    const RouteInputs in = load_route_inputs(a.dump, a.lfts, a.expected, a.node_name_map);
    const Fabric& f = in.fabric;
    const Analysis& an = in.analysis;
    const LinkNotes& notes = in.notes;
    const RouteEnd s = end_or_throw(f, an, a.src, a.dump), d = end_or_throw(f, an, a.dst, a.dump);
    const RouteGraph g(f, in.lfts);
    const RouteTrace there = trace_route(g, s.node, s.port, d.lid, an.names);
    const RouteTrace back = trace_route(g, d.node, d.port, s.lid, an.names);
    if (a.json) {
        std::cout << nlohmann::json{{"forward", route_json(f, an.names, there, notes)},
                                    {"reverse", route_json(f, an.names, back, notes)}}
                         .dump(2)
                  << "\n";
    } else {
        std::cout << render_route(f, an.names, there, notes) << render_route(f, an.names, back, notes);
    }
    std::cout.flush();
    return route_clean(f, there, notes) && route_clean(f, back, notes) ? kExitClean : kExitFindings;
}

}  // namespace

void register_route(CLI::App& app, Runner& run) {
    auto args = std::make_shared<RouteArgs>();
    CLI::App* cmd = app.add_subcommand(
        "route",
        "The route between two hosts as the switches' forwarding tables (LFTs) send it, both ways\n"
        "(routes are asymmetric): every cable with its rate, the plan's rate and cable label, and\n"
        "the findings about it (rate_mismatch, rate_outlier, rate_below_capability, ...).");
    cmd->add_option("SRC", args->src, "A host or switch name (node001, node001/2 for a port), a node or port GUID, or a LID")
        ->required();
    cmd->add_option("DST", args->dst, "The other end, the same way")->required();
    cmd->add_option("-d,--dump", args->dump, "The fabric: ibnetdiscover, iblinkinfo or ibdiagnet .net dump")
        ->type_name("DUMP");
    cmd->add_option("-l,--lfts", args->lfts,
                    "The forwarding tables: `dump_lfts` / `ibroute` output, OpenSM's opensm-lfts.dump or opensm.fdbs")
        ->type_name("FILE");
    add_daemon_options(cmd, args->url, args->lab);
    cmd->add_option("--token-file", args->token_file, "bearer token for a daemon with token_for_reads (else $IBFABRIC_TOKEN)")
        ->type_name("FILE");
    cmd->add_option("-e,--expected", args->expected, "A plan (YAML or known-good dump): planned rates and cable labels")
        ->type_name("PLAN");
    cmd->add_option("--node-name-map", args->node_name_map, "node-name-map applied to the dump")->type_name("FILE");
    cmd->add_flag("--json", args->json, "Print {\"forward\": ..., \"reverse\": ...} as JSON (docs/cli.md)");
    cmd->footer(
        "Examples:\n"
        "  ibnetdiscover > now.txt; dump_lfts > lfts.txt\n"
        "  ibfabric route node001 node044 --dump now.txt --lfts lfts.txt\n"
        "  ibfabric route 0x0002c903000e0b72 12 -d now.txt -l /var/log/opensm-lfts.dump -e plan.yaml --json\n"
        "  ibfabric route node001 node044 --url http://sm1:8639   # the live fabric, LFTs and findings\n"
        "  ibfabric route node001 node044 --lab /tmp/mylab\n"
        "\n"
        "Exit status: 0 both routes arrive over healthy cables, 1 a route does not arrive or crosses a\n"
        "cable with a finding, 2 bad input or usage, 3 the daemon could not be asked.\n");
    cmd->callback([&run, args] { run = [args] { return run_route(*args); }; });
}

}  // namespace ibf::cli
