// GET /api/v1/route, /api/v1/hosts, /api/v1/impact and /api/v1/topology/slurm (ibf/routing_api.h).
#include "ibf/routing_api.h"

#include <cctype>
#include <cstdio>

#include "ibf/analysis.h"
#include "ibf/dumps.h"
#include "ibf/identity.h"
#include "ibf/impact.h"
#include "ibf/job_paths.h"
#include "ibf/link_table.h"
#include "ibf/report.h"
#include "ibf/route_report.h"
#include "ibf/slurm_topology.h"

namespace ibf {
namespace {

using nlohmann::json;

ApiResponse ok(json j) {
    ApiResponse r;
    r.body = json_text(j, 2);
    r.body += '\n';
    return r;
}

// A query value with %XX and '+' decoded (names may hold blanks: "node001 HCA-1"); a bad escape
// stays as it is.
std::string decoded(const std::string& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '+') {
            out += ' ';
        } else if (v[i] == '%' && i + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
                   std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
            out += static_cast<char>(std::stoi(v.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += v[i];
        }
    }
    return out;
}

// The names the live analysis gave the current fabric's nodes (it is of the same sweep), else
// the fabric's own display names.
Analysis live_names(const ControllerState& st, const Snapshot& s) {
    Analysis a;
    const auto& la = st.analysis();
    if (la && la->names.size() == s.fabric.size() && st.analysis_sweep_seq() == s.sweep_seq) a.names = la->names;
    else a.names = display_names(s.fabric, {});
    return a;
}

// Planned rate and cable label per cable from the /metrics link table (the plan's, as matched by
// the last check), and every published finding but the route ones (a route is not its own issue).
LinkNotes live_notes(const ControllerState& st, const Fabric& f, int64_t now_ms) {
    std::vector<PlannedCable> planned;
    if (const auto& t = st.links())
        for (const LinkRow& r : t->rows) {
            if (r.planned_rate_bps <= 0 && r.label.empty()) continue;
            auto a = f.find(r.local_guid), b = f.find(r.remote_guid);
            if (!a || !b) continue;
            char rate[32] = "";
            if (r.planned_rate_bps > 0) std::snprintf(rate, sizeof rate, "%g Gb/s", r.planned_rate_bps / 1e9);
            planned.push_back({*a, r.local_port, *b, r.remote_port, rate, r.label});
        }
    std::vector<Finding> findings;
    for (std::vector<Finding> part : {st.findings_at(now_ms), st.analysis_findings_at(now_ms)})
        for (Finding& fd : part)
            if (fd.kind < FindingKind::route_unreachable) findings.push_back(std::move(fd));
    return link_notes(f, findings, planned);
}

}  // namespace

ApiResponse route_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"src", "dst"}, q)) return *bad;
    for (auto& [k, v] : q) v = decoded(v);
    if (q["src"].empty() || q["dst"].empty())
        return api_error(400, "src and dst are required: a host or switch name (node001/1 for a port), a GUID or a LID");
    const auto& s = ctx.state->current();
    if (!s) return api_error(404, "no fabric yet: no Subnet Manager has sent a snapshot");
    if (s->lfts.empty()) return api_error(404, "the snapshot has no LFTs: load the plugin with lft=1 (docs/plugin.md)");
    const Fabric& f = s->fabric;
    const Analysis a = live_names(*ctx.state, *s);
    std::string error;
    const auto src = resolve_route_end(f, a.names, q["src"], error);
    if (!src) return api_error(400, "src: " + error);
    const auto dst = resolve_route_end(f, a.names, q["dst"], error);
    if (!dst) return api_error(400, "dst: " + error);
    const LinkNotes notes = live_notes(*ctx.state, f, ctx.now_ms);
    const RouteGraph g(f, s->lfts);
    const RouteTrace there = trace_route(g, src->node, src->port, dst->lid, a.names);
    const RouteTrace back = trace_route(g, dst->node, dst->port, src->lid, a.names);
    return ok({{"forward", route_json(f, a.names, there, notes)},
               {"reverse", route_json(f, a.names, back, notes)},
               {"clean", route_clean(f, there, notes) && route_clean(f, back, notes)},
               {"sweep_seq", s->sweep_seq}});
}

ApiResponse hosts_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"nodes"}, q)) return *bad;
    for (auto& [k, v] : q) v = decoded(v);
    if (q["nodes"].empty()) return api_error(400, "nodes is required: the job's hosts as a Slurm hostlist (node[001-032],gpu07)");
    const auto& s = ctx.state->current();
    if (!s) return api_error(404, "no fabric yet: no Subnet Manager has sent a snapshot");
    if (s->lfts.empty()) return api_error(404, "the snapshot has no LFTs: load the plugin with lft=1 (docs/plugin.md)");
    const Fabric& f = s->fabric;
    std::string error;
    const auto hosts = job_hosts(f, q["nodes"], error);
    if (!hosts) return api_error(400, "nodes: " + error);
    const Analysis a = live_names(*ctx.state, *s);
    const JobPaths j = job_paths(RouteGraph(f, s->lfts), a.names, *hosts, live_notes(*ctx.state, f, ctx.now_ms));
    json out = job_paths_json(f, a.names, j);
    out["sweep_seq"] = s->sweep_seq;
    return ok(std::move(out));
}

ApiResponse impact_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"node", "port"}, q)) return *bad;
    for (auto& [k, v] : q) v = decoded(v);
    if (q["node"].empty()) return api_error(400, "node is required: a switch or host name or GUID (node=spine01,leaf03/19 for several)");
    const auto& s = ctx.state->current();
    if (!s) return api_error(404, "no fabric yet: no Subnet Manager has sent a snapshot");
    const Fabric& f = s->fabric;
    const Analysis a = live_names(*ctx.state, *s);
    std::vector<std::string> whats;
    for (size_t b = 0; b <= q["node"].size();) {
        size_t e = q["node"].find(',', b);
        if (e == std::string::npos) e = q["node"].size();
        if (e > b) whats.push_back(q["node"].substr(b, e - b));
        b = e + 1;
    }
    if (q.count("port")) {
        if (whats.size() != 1 || whats[0].find('/') != std::string::npos)
            return api_error(400, "port goes with one node (or write node=leaf03/19)");
        whats[0] += "/" + q["port"];
    }
    std::vector<ImpactTarget> targets;
    for (const std::string& w : whats) {
        ImpactTarget t;
        std::string error;
        if (!parse_impact_target(f, a, w, t, error)) return api_error(400, error);
        targets.push_back(t);
    }
    json j = impact_json(impact(f, targets));
    j["sweep_seq"] = s->sweep_seq;
    return ok(std::move(j));
}

ApiResponse slurm_topology_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"block"}, q)) return *bad;
    bool block = false;
    if (q.count("block")) {
        const std::string& v = q["block"];
        if (v == "1" || v == "true" || v.empty()) block = true;
        else if (v != "0" && v != "false") return api_error(400, "block must be 0 or 1");
    }
    const auto& s = ctx.state->current();
    if (!s) return api_error(404, "no fabric yet: no Subnet Manager has sent a snapshot");
    // Named as the check names them: the node-name-map applied to a copy (snapshots stay as sent),
    // the plan's names first, for switches (the analysis) and hosts (their NodeName) alike.
    Fabric f = s->fabric;
    if (ctx.names && !ctx.names->empty()) apply_node_name_map(f, *ctx.names);
    SlurmTopologyOptions opt{.block = block, .source = "ibfabricd, sweep " + std::to_string(s->sweep_seq)};
    AnalyzeOptions ao;
    if (ctx.plan) opt.host_names = ao.preferred_names = plan_names(*ctx.plan, match_nodes(*ctx.plan, f), f.size());
    const std::string conf = slurm_topology(f, analyze(f, ao), opt);
    return ok({{"conf", conf}, {"form", block ? "block" : "tree"}, {"sweep_seq", s->sweep_seq}});
}

}  // namespace ibf
