// `ibfabric history`, `ibfabric diff` and `ibfabric accept`: the daemon's sweep history
// (docs/api.md, GET /api/v1/history/changes and /diff) and adopting the current fabric as the
// plan (POST /api/v1/accept).
//
//   ibfabric history [--since T] [--limit N] [--json]   one line per sweep: what changed
//   ibfabric diff FROM [TO] [--json]                     the changes as findings (TO: latest)
//   ibfabric accept [--scope NAME]... [--accept-kind K]... [--dry-run|--yes] [--token-file F]
//                                                         edit what the fabric adds into the daemon's plan
//   ibfabric accept --plan plan.yaml --actual now.txt ...  the same edit of a plan file, offline
//
// URL: --url, else the daemon of the lab in --lab DIR, else $IBFABRIC_URL, else
// http://127.0.0.1:8639 (commands.h daemon_url). Token: --token-file, else $IBFABRIC_TOKEN, else with --lab the lab's own. Exit codes in each command's help (docs/cli.md).
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "commands.h"
#include "ibf/check.h"
#include "ibf/http_client.h"
#include "ibf/inputs.h"
#include "ibf/plan_accept.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"
#include "ibf/sweep_ref.h"
#include "ibf/text.h"

namespace ibf::cli {
namespace {

using nlohmann::json;

struct HistoryOptions {
    std::string url, lab, since, from, to = "latest", token_file;
    std::vector<std::string> scope, accept_kinds;
    std::string plan, actual, node_name_map;  // accept offline
    int limit = 50;
    bool json = false, dry_run = false, yes = false;
};

std::string base_url(const HistoryOptions& o) { return daemon_url(o.url, o.lab); }

// One request; `out` gets the JSON answer. Returns 0, or the exit code after printing why:
// 2 for a bad URL or a 400/401/403/404 answer (the request or the token is wrong), 3 when the
// daemon cannot be reached or fails otherwise. `refused` (when given) is returned for 409.
int call(const HistoryOptions& o, const std::string& method, const std::string& path, const std::string& body,
         const std::string& token, json& out, int refused = kExitUnavailable) {
    const std::string base = base_url(o);
    auto url = parse_http_url(base);
    if (!url) {
        std::fprintf(stderr, "ibfabric: bad daemon URL '%s' (expected http://host:port)\n", base.c_str());
        return kExitBadInput;
    }
    HttpResult r;
    try {
        r = http_request(*url, method, path, body, token.empty() ? "" : "Bearer " + token, std::chrono::seconds(60));
    } catch (const HttpUnavailable& e) {
        std::fprintf(stderr, "ibfabric: the daemon is unreachable: %s\n", e.what());
        return kExitUnavailable;
    }
    out = json::parse(r.body, nullptr, false);
    if (r.status == 200 && out.is_object()) return kExitClean;
    const std::string msg = out.is_object() && out.contains("error") && out["error"].is_string()
                                ? out["error"].get<std::string>()
                                : r.body;
    std::fprintf(stderr, "ibfabric: %s%s answered %d: %s\n", base.c_str(), path.c_str(), r.status, terminal_safe(msg).c_str());
    if (r.status == 409) return refused;
    return r.status == 400 || r.status == 401 || r.status == 403 || r.status == 404 ? kExitBadInput : kExitUnavailable;
}

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A reference the daemon will understand, checked here so a typo is exit 2 before any request.
bool valid_ref(const std::string& what, const std::string& text, bool time_only) {
    auto r = parse_sweep_ref(text, now_ms());
    if (r && (!time_only || r->kind == SweepRef::Kind::time)) return true;
    std::fprintf(stderr, "ibfabric: %s '%s' is not %s\n", what.c_str(), terminal_safe(text).c_str(),
                 time_only ? "a time: 2026-12-01T03:00:00Z, @unix_ms, or -30m/-2h/-1d"
                           : "a sweep: a history row id (#41 or 41, as ibfabric history prints it), latest, "
                             "2026-12-01T03:00:00Z, @unix_ms, or -2h");
    return false;
}

std::string query_escape(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == ':' || c == '@') out += static_cast<char>(c);
        else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

int run_history(const HistoryOptions& o) {
    if (!o.since.empty() && !valid_ref("--since", o.since, true)) return kExitBadInput;
    std::string path = "/api/v1/history/changes?limit=" + std::to_string(o.limit);
    if (!o.since.empty()) path += "&since=" + query_escape(o.since);
    json j;
    if (int rc = call(o, "GET", path, "", "", j)) return rc;
    bool changed = false;
    for (const json& s : j["sweeps"]) changed |= s["changes_count"].is_number() && s["changes_count"].get<int64_t>() > 0;
    if (o.json) {
        std::cout << json_text(j, 2) << "\n";
        return changed ? kExitFindings : kExitClean;
    }
    if (j["sweeps"].empty()) std::cout << "no sweeps recorded" << (o.since.empty() ? "" : " since " + o.since) << "\n";
    for (const json& s : j["sweeps"]) {
        std::cout << "#" << s["id"].get<int64_t>() << "  " << s["time"].get<std::string>() << "  sweep "
                  << s["sweep_seq"].get<int64_t>() << "  SM " << terminal_safe(s["sm_guid"].get<std::string>()) << "  "
                  << s["links"].get<int64_t>() << " links  " << s["findings_count"].get<int64_t>() << " findings";
        if (s["findings_opened"].is_number() && (s["findings_opened"] != 0 || s["findings_closed"] != 0))
            std::cout << " (+" << s["findings_opened"].get<int64_t>() << " -" << s["findings_closed"].get<int64_t>() << ")";
        std::cout << "  " << terminal_safe(s["summary"].get<std::string>()) << "\n";
    }
    if (!j["next"].is_null()) std::cout << "(older sweeps: --limit " << o.limit * 2 << ")\n";
    return changed ? kExitFindings : kExitClean;
}

int run_diff(const HistoryOptions& o) {
    if (!valid_ref("FROM", o.from, false) || !valid_ref("TO", o.to, false)) return kExitBadInput;
    json j;
    if (int rc = call(o, "GET", "/api/v1/history/diff?from=" + query_escape(o.from) + "&to=" + query_escape(o.to), "", "", j))
        return rc;
    const bool changed = !j["changes"].empty();
    if (o.json) {
        std::cout << json_text(j, 2) << "\n";
        return changed ? kExitFindings : kExitClean;
    }
    auto ref = [](const json& r) {
        return "#" + std::to_string(r["id"].get<int64_t>()) + " (sweep " + std::to_string(r["sweep_seq"].get<int64_t>()) +
               ", " + r["time"].get<std::string>() + ")";
    };
    std::cout << "changes from " << ref(j["from"]) << " to " << ref(j["to"]) << ": "
              << terminal_safe(j["change_summary"].get<std::string>()) << "\n";
    for (const char* k : {"from", "to"})
        if (j[k].contains("note") && j[k]["note"].is_string())
            std::cout << "  (" << k << ": " << terminal_safe(j[k]["note"].get<std::string>()) << ")\n";
    std::vector<Finding> fs = findings_from_json(j);
    if (!fs.empty()) std::cout << "\n" << render_text(fs, ::isatty(1) != 0);
    bool restored_header = false;
    for (const json& c : j["changes"]) {
        if (!c.value("restored", false)) continue;
        if (!restored_header) std::cout << "\nrestored (as planned)\n", restored_header = true;
        std::cout << "  " << terminal_safe(c["text"].get<std::string>()) << "\n";
    }
    bool header = false;
    for (const json& c : j["changes"]) {
        if (c["kind"].get<std::string>().rfind("sm_", 0) != 0) continue;
        if (!header) std::cout << "\nSM changes\n", header = true;
        std::cout << "  " << terminal_safe(c["text"].get<std::string>()) << "\n";
    }
    return changed ? kExitFindings : kExitClean;
}

// What accept did or would do, from its JSON (the daemon's answer or the offline result alike).
void print_accept(const json& j, bool dry_run) {
    auto items = [](const json& list, const char* title) {
        if (!list.is_array() || list.empty()) return;
        std::cout << title << " (" << list.size() << ")\n";
        for (const json& f : list)
            std::cout << "  " << f.value("kind", "") << "  " << terminal_safe(f.value("message", "")) << "\n      "
                      << terminal_safe(f.value("why", "")) << "\n";
    };
    if (j.contains("refused") && !j["refused"].empty()) {
        items(j["refused"], "not adopted, so nothing is written");
        return;
    }
    if (j.value("diff", "").empty()) {
        std::cout << "nothing to accept: " << j.value("differences", 0) << " differences from the plan, none to adopt\n";
    } else {
        std::istringstream diff(j["diff"].get<std::string>());
        for (std::string line; std::getline(diff, line);) std::cout << terminal_safe(line) << "\n";
        const size_t n = j["changes"].size();
        std::cout << n << (n == 1 ? " change" : " changes") << "; the edited plan gives " << j.value("findings_after", 0)
                  << " findings (" << j.value("differences", 0) << " before)\n";
    }
    size_t outside = 0;
    json kept = json::array();
    for (const json& k : j.value("kept", json::array())) {
        if (k.value("why", "") == "outside the scope") ++outside;
        else kept.push_back(k);
    }
    items(kept, "kept as planned");
    if (outside) std::cout << outside << (outside == 1 ? " difference" : " differences") << " outside the scope left as they are\n";
    if (j.value("diff", "").empty()) return;
    if (dry_run) std::cout << "dry run: nothing written; write it with --yes\n";
    else
        std::cout << "accepted into " << terminal_safe(j.value("topology", "")) << "; previous plan kept as "
                  << terminal_safe(j.value("backup", "")) << "\n";
}

// The same edit as POST /api/v1/accept, of a plan file against a dump.
int run_accept_offline(const HistoryOptions& o, bool dry_run) {
    json out;
    try {
        const Expected e = load_expected(o.plan, o.node_name_map);
        if (e.golden) {
            std::fprintf(stderr, "ibfabric: %s is a dump; accept edits YAML plans (`ibfabric plan from-dump` makes one)\n",
                         o.plan.c_str());
            return kExitBadInput;
        }
        const std::string text = read_text_file(o.plan, "plan");
        const Plan plan = parse_plan_yaml(text, o.plan);
        const Fabric f = load_dump_file(o.actual, e.names);
        AcceptOptions ao{.scope = o.scope, .accept_kinds = {}, .source = o.actual};
        for (const std::string& k : o.accept_kinds) ao.accept_kinds.push_back(*parse_finding_kind(k));
        const std::vector<Finding> fs = check(plan, f);
        AcceptResult r;
        try {
            r = accept_into_plan(text, o.plan, plan, f, fs, ao, [&](const Plan& p) { return check(p, f); });
        } catch (const InputError& x) {
            if (x.file() == "scope") throw;
            std::fprintf(stderr, "ibfabric: accept refused: %s\n", terminal_safe(x.what()).c_str());
            return kExitFindings;
        }
        out = accept_result_json(r);
        out["topology"] = o.plan;
        out["scope"] = o.scope;
        out["accept_kind"] = o.accept_kinds;
        out["differences"] = fs.size();
        out["dry_run"] = dry_run;
        out["accepted"] = false;
        if (const std::string why = accept_refusal(r); !why.empty()) {
            out["error"] = why;
            if (o.json) std::cout << json_text(out, 2) << "\n";
            else {
                std::fprintf(stderr, "ibfabric: accept refused: %s\n", terminal_safe(why).c_str());
                print_accept(out, dry_run);
            }
            return kExitFindings;
        }
        if (!r.changes.empty() && !dry_run) {
            out["backup"] = write_plan_keeping_previous(o.plan, r.text);
            out["accepted"] = true;
        }
    } catch (const InputError& x) {
        std::fprintf(stderr, "ibfabric: %s\n", terminal_safe(x.what()).c_str());
        return kExitBadInput;
    }
    if (o.json) std::cout << json_text(out, 2) << "\n";
    else print_accept(out, dry_run);
    return kExitClean;
}

int run_accept(const HistoryOptions& o) {
    for (const std::string& k : o.accept_kinds)
        if (!parse_finding_kind(k)) {
            std::fprintf(stderr, "ibfabric: --accept-kind: unknown finding kind '%s' (docs/findings.md)\n",
                         terminal_safe(k).c_str());
            return kExitBadInput;
        }
    // On a terminal, show the diff first; scripts (and --yes) write.
    const bool dry_run = o.dry_run || (!o.yes && ::isatty(1) != 0);
    if (!o.actual.empty()) return run_accept_offline(o, dry_run);
    const std::string token = bearer_token(o.token_file, o.lab).value_or("");
    if (token.empty()) {
        std::fprintf(stderr, "ibfabric: accept needs the daemon's token: --token-file F or $IBFABRIC_TOKEN\n");
        return kExitBadInput;
    }
    json body = json::object();
    if (!o.scope.empty()) body["scope"] = o.scope;
    if (!o.accept_kinds.empty()) body["accept_kind"] = o.accept_kinds;
    body["dry_run"] = dry_run;
    json j;
    const int rc = call(o, "POST", "/api/v1/accept", body.dump(), token, j, kExitFindings);
    if (rc == kExitFindings && j.is_object() && j.contains("refused")) {
        if (o.json) std::cout << json_text(j, 2) << "\n";
        else print_accept(j, dry_run);
    }
    if (rc) return rc;
    if (o.json) std::cout << json_text(j, 2) << "\n";
    else print_accept(j, dry_run);
    return kExitClean;
}

}  // namespace

void register_history(CLI::App& app, Runner& run) {
    {
        auto o = std::make_shared<HistoryOptions>();
        CLI::App* sub = app.add_subcommand("history", "What changed in the fabric, sweep by sweep (needs history: in ibfabricd)");
        sub->add_option("--since", o->since, "only sweeps taken at or after this time (2026-12-01T03:00:00Z, @unix_ms, -2h)")
            ->type_name("T");
        sub->add_option("--limit", o->limit, "at most this many sweeps, newest first (1..1000, default 50)")
            ->check(CLI::Range(1, 1000));
        add_daemon_options(sub, o->url, o->lab);
        sub->add_flag("--json", o->json, "print GET /api/v1/history/changes's answer (docs/api.md)");
        sub->footer(
            "Examples:\n"
            "  ibfabric history --since -2h\n"
            "  ibfabric history --json | jq '.sweeps[] | select(.changes_count > 0) | .summary'\n"
            "Exit status: 0 no listed sweep changed anything, 1 some did, 2 usage, 3 daemon unreachable.");
        sub->callback([&run, o] { run = [o] { return run_history(*o); }; });
    }
    {
        auto o = std::make_shared<HistoryOptions>();
        CLI::App* sub = app.add_subcommand("diff", "The fabric's changes between two recorded sweeps, as findings");
        sub->add_option("from", o->from, "a history row id (the #N of `ibfabric history`), latest, or a time")
            ->required()
            ->type_name("SWEEP|TIME");
        sub->add_option("to", o->to, "the same forms (default: latest)")->type_name("SWEEP|TIME");
        add_daemon_options(sub, o->url, o->lab);
        sub->add_flag("--json", o->json, "print the findings object (docs/findings.md) plus from, to, changes");
        sub->footer(
            "A time names the newest sweep taken at or before it. The earlier sweep stands in for the plan:\n"
            "a cable gone is missing_link, a new one unexpected_link, a slower link rate_mismatch.\n"
            "Examples:\n"
            "  ibfabric diff -1d latest          # what changed since yesterday\n"
            "  ibfabric diff 40 41 --json\n"
            "Exit status: 0 no changes, 1 changes, 2 usage or no such sweep, 3 daemon unreachable.");
        sub->callback([&run, o] { run = [o] { return run_diff(*o); }; });
    }
    {
        auto o = std::make_shared<HistoryOptions>();
        CLI::App* sub = app.add_subcommand(
            "accept", "After an expansion: edit what the fabric adds into the plan (a diff first; the previous plan is kept)");
        sub->add_option("--scope", o->scope,
                        "adopt only differences that touch these nodes: a name, a plan pattern (leaf[19-20]) or a\n"
                        "shell pattern (node3*); repeat it for several. The rest of the plan is left as it is")
            ->type_name("NAME");
        sub->add_option("--accept-kind", o->accept_kinds,
                        "also adopt faults of this kind (rate_mismatch, mtu_mismatch, miswired, missing_link):\n"
                        "severity error findings are refused unless named; repeat it for several")
            ->type_name("KIND");
        sub->add_flag("--dry-run", o->dry_run, "print the diff and what would change, write nothing (the default on a terminal)");
        sub->add_flag("--yes,--write", o->yes, "write the edited plan (the default when stdout is not a terminal)");
        sub->add_option("--plan", o->plan, "offline: the YAML plan file to edit (with --actual)")->type_name("PLAN");
        sub->add_option("--actual", o->actual, "offline: the fabric to accept, a dump (ibnetdiscover, iblinkinfo, .net)")
            ->type_name("DUMP");
        sub->add_option("--node-name-map", o->node_name_map, "offline: names for the dump's nodes (default: the plan's)")
            ->type_name("F");
        sub->get_option("--plan")->needs("--actual");
        sub->get_option("--actual")->needs("--plan");
        sub->add_option("--token-file", o->token_file, "the daemon's bearer token (default: $IBFABRIC_TOKEN, with --lab the lab's own)")->type_name("F");
        add_daemon_options(sub, o->url, o->lab);
        sub->add_flag("--json", o->json, "print the answer as JSON (POST /api/v1/accept's, docs/api.md)");
        sub->footer(
            "The plan is edited, not rewritten: a new cable or node in the scope is added to cables: (and\n"
            "nodes:), a fault adopted with --accept-kind becomes an override (rate, MTU) or moves or drops\n"
            "an explicit cable; every other line stays byte for byte. The previous file is kept as\n"
            "plan.yaml.1 (.2, ...) and the daemon re-checks. A powered-off host stays in the plan.\n"
            "Examples:\n"
            "  ibfabric accept --scope 'leaf[19-20]' --token-file /etc/ibfabric/token          # the diff, on a terminal\n"
            "  ibfabric accept --scope 'leaf[19-20]' --yes --token-file /etc/ibfabric/token    # write it\n"
            "  ibfabric accept --scope leaf07 --accept-kind rate_mismatch --yes --token-file /etc/ibfabric/token\n"
            "  ibfabric accept --plan plan.yaml --actual now.txt --scope 'node3*' --dry-run    # offline\n"
            "Exit status: 0 accepted, dry run or nothing to accept, 1 refused (a fault not named by\n"
            "--accept-kind, a compact cable that cannot move, every difference outside the scope, no fabric\n"
            "yet, no YAML plan), 2 usage, bad input or token refused, 3 daemon unreachable.");
        sub->callback([&run, o] { run = [o] { return run_accept(*o); }; });
    }
}

}  // namespace ibf::cli
