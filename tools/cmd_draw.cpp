// `ibfabric draw`: a picture of the fabric by tier with faulty links in red (draw/), from a dump
// (findings of the check with --expected, else of the fat-tree analysis) or from a running
// ibfabricd (its picture and findings: GET /ui/fabric.svg or the page GET /ui).
//
//   ibfabric draw now.txt --expected plan.yaml -o fabric.svg
//   ibfabric draw now.txt --html -o fabric.html
//   ibfabric draw --url http://127.0.0.1:8639 --html -o fabric.html
//
// Exit: 0 nothing drawn in red, 1 findings drawn, 2 bad input or usage, 3 the daemon cannot be
// reached, answers with an error, or has no fabric yet.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "commands.h"
#include "ibf/analysis.h"
#include "ibf/check.h"
#include "ibf/draw.h"
#include "ibf/error.h"
#include "ibf/http_client.h"
#include "ibf/identity.h"
#include "ibf/inputs.h"
#include "ibf/page.h"
#include "ibf/report.h"

namespace ibf::cli {
namespace {

struct DrawArgs {
    std::string dump, expected, node_name_map, url, lab, token_file, output;
    bool svg = false, html = false, json = false;
};

struct Drawn {
    std::string text;
    size_t findings = 0;
};

Drawn draw_dump(const DrawArgs& a) {
    std::vector<Finding> fs;
    Fabric f;
    std::string title = a.dump;
    std::optional<Expected> e;
    if (!a.expected.empty()) {
        e = load_expected(a.expected, a.node_name_map);
        f = load_dump_file(a.dump, e->names);
        if (e->golden) align_golden_guids(e->plan, *e->golden, f);
        title += " checked against " + a.expected;
    } else {
        f = load_dump_file(a.dump, a.node_name_map.empty() ? NodeNameMap{} : load_node_name_map(a.node_name_map));
    }
    Analysis an = analyze(f);
    std::vector<std::string> names = an.names;
    if (e) {
        fs = check(e->plan, f, {.tier_of = an.tier_of});        // names as `check` and `analyze` give them
        names = plan_name_book(e->plan, f, an.tier_of).all();  // the names the check's findings use
    } else {
        fs = an.findings;
        title += " (fat-tree analysis, no plan)";
    }
    const draw::Layout l = draw::layout({.fabric = &f, .tier_of = an.tier_of, .names = names, .findings = fs});
    Drawn d{.findings = fs.size()};
    if (!a.html) {
        d.text = draw::render_svg(l, {.title = title});
        return d;
    }
    draw::Page p;
    p.title = "ibfabric: " + title;
    p.facts = {{"switches", std::to_string(l.switches)}, {"hosts", std::to_string(l.hosts)},
               {"links", std::to_string(l.links)}, {"findings", std::to_string(fs.size())}};
    p.svg = draw::render_svg(l);
    p.findings = fs;
    d.text = draw::render_page(p);
    return d;
}

// The daemon's picture or page; the findings count from the SVG root's data-findings.
int draw_daemon(const DrawArgs& a, Drawn& d) {
    const std::string base = daemon_url(a.url, a.lab);
    const std::string path = a.html ? "/ui" : "/ui/fabric.svg";
    HttpResult r;
    if (int rc = daemon_get(base, a.token_file, path, r)) return rc;
    if (r.status != 200) {
        std::fprintf(stderr, "ibfabric: %s%s answered %d: %s", base.c_str(), path.c_str(), r.status, r.body.c_str());
        return kExitUnavailable;
    }
    d.text = std::move(r.body);
    const size_t at = d.text.find("data-findings=\"");
    if (at == std::string::npos) {
        std::fprintf(stderr, "ibfabric: %s has no picture yet (no snapshot from a Subnet Manager)\n", base.c_str());
        return kExitUnavailable;
    }
    d.findings = std::strtoul(d.text.c_str() + at + 15, nullptr, 10);
    return kExitClean;
}

int usage(const char* msg) {
    std::fprintf(stderr, "ibfabric: draw: %s\n", msg);
    return kExitBadInput;
}

int run_draw(const DrawArgs& a) {
    const bool daemon = !a.url.empty() || !a.lab.empty();
    if (a.dump.empty() == !daemon) return usage("give a dump or --url/--lab (not both); see `ibfabric draw --help`");
    if (a.json && a.output.empty()) return usage("--json needs -o FILE (the picture goes to the file)");
    Drawn d;
    if (daemon) {
        if (!a.expected.empty() || !a.node_name_map.empty())
            return usage("--expected and --node-name-map are for dumps; the daemon uses its own plan");
        if (int rc = draw_daemon(a, d); rc != kExitClean) {
            if (rc == kExitUnavailable && !d.text.empty() && !a.output.empty()) write_text_file(a.output, d.text);
            return rc;
        }
    } else {
        d = draw_dump(a);
    }
    if (a.output.empty() || a.output == "-") {
        std::cout << d.text;
    } else {
        write_text_file(a.output, d.text);
        if (a.json)
            std::cout << json_text(nlohmann::json{{"output", a.output}, {"format", a.html ? "html" : "svg"},
                                                  {"bytes", d.text.size()}, {"findings", d.findings}},
                                   2)
                      << "\n";
    }
    std::cout.flush();
    return d.findings ? kExitFindings : kExitClean;
}

}  // namespace

void register_draw(CLI::App& app, Runner& run) {
    auto a = std::make_shared<DrawArgs>();
    CLI::App* cmd = app.add_subcommand(
        "draw",
        "Draw the fabric by tier (SVG or a self-contained HTML page): cable bundles with counts, hosts\n"
        "collapsed per switch, every link a finding names in red with its label.");
    cmd->add_option("dump", a->dump, "ibnetdiscover, iblinkinfo or ibdiagnet .net dump of the fabric")->type_name("DUMP");
    cmd->add_option("-e,--expected", a->expected,
                    "Check the dump against this plan (YAML or a known-good dump) and draw the findings;\n"
                    "without it the fat-tree analysis' findings are drawn")
        ->type_name("PLAN|DUMP");
    cmd->add_option("--node-name-map", a->node_name_map, "node-name-map applied to the dump (as for check)")->type_name("FILE");
    auto* url = cmd->add_option("--url", a->url, "draw what a running ibfabricd sees instead of a dump (http://host:port)");
    cmd->add_option("--lab", a->lab, "draw what the daemon of the lab in this directory sees (`ibfabric lab up --dir DIR`)")
        ->type_name("DIR")
        ->excludes(url);
    cmd->add_option("--token-file", a->token_file,
                    "bearer token for a daemon with token_for_reads (default: $IBFABRIC_TOKEN)")->type_name("FILE");
    auto* svg = cmd->add_flag("--svg", a->svg, "write an SVG picture (the default)");
    cmd->add_flag("--html", a->html, "write a self-contained HTML page: picture and findings table\n"
                                      "(from --url: the daemon's page with SM states and counters)")
        ->excludes(svg);
    cmd->add_option("-o,--output", a->output, "write to FILE instead of standard output")->type_name("FILE");
    cmd->add_flag("--json", a->json, "with -o: print {\"output\", \"format\", \"bytes\", \"findings\"} on stdout");
    cmd->footer(
        "Examples:\n"
        "  ibfabric draw now.txt --expected plan.yaml -o fabric.svg     # cabling faults in red\n"
        "  ibfabric draw now.txt --html -o fabric.html                  # no plan: analysis findings\n"
        "  ibfabric draw --url http://127.0.0.1:8639 --html -o live.html  # the daemon's page\n"
        "\n"
        "Exit status: 0 nothing in red, 1 findings drawn, 2 bad input or usage, 3 daemon unreachable\n"
        "or without a fabric yet.\n");
    cmd->callback([&run, a] { run = [a] { return run_draw(*a); }; });
}

}  // namespace ibf::cli
