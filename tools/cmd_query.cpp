// `ibfabric status` and `ibfabric findings`: ask a running ibfabricd (docs/api.md).
//
//   ibfabric status   [--url URL] [--token-file F] [--json]   fabric counts, SMs, last sweep, findings count
//   ibfabric findings [--url URL] [--token-file F] [--json]   the daemon's findings, as `ibfabric check` prints them
//
// A daemon with `token_for_reads` (docs/security.md) wants the bearer token on reads too:
// --token-file, else $IBFABRIC_TOKEN.
//
// URL: --url, else the daemon of the lab in --lab DIR (only when asked: commands.h daemon_url),
// else $IBFABRIC_URL, else http://127.0.0.1:8639.
// Exit: 0 no findings, 1 findings, 2 usage (bad URL), 3 the daemon cannot be reached, answers
// with an error, or has no current data (no snapshot yet, or stale: one line on stderr says which).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "ibf/error.h"
#include "ibf/http_client.h"
#include "ibf/report.h"
#include "ibf/text.h"
#include "report_options.h"

namespace ibf::cli {
namespace {

using nlohmann::json;

struct QueryOptions {
    std::string url;
    std::string lab;  // --lab DIR
    std::string token_file;  // --token-file (else $IBFABRIC_TOKEN)
    bool json = false;
    ReportOptions report;  // findings only
};

// `o` with its URL resolved (once per command: the lab's state is read once).
QueryOptions resolved(const QueryOptions& in) {
    QueryOptions o = in;
    o.url = daemon_url(in.url, in.lab);
    return o;
}

// GET `path` and parse the JSON; returns an exit code != 0 on failure (message printed).
int fetch_json(const QueryOptions& o, const std::string& path, json& out) {
    return fetch_daemon_json(o.url, o.token_file, path, out);  // o.url: resolved()
}

// The daemon's data_state (docs/api.md, "No data"): prints its one-line reason and returns 3
// unless the findings describe the fabric as it is now. Daemons without data_state count as fresh.
int data_rc(const json& j) {
    if (!j.is_object() || !j.contains("data_state") || j["data_state"] == "fresh") return kExitClean;
    const std::string msg = j.contains("data_message") && j["data_message"].is_string()
                                ? j["data_message"].get<std::string>()
                                : j["data_state"].dump();
    std::fprintf(stderr, "ibfabric: %s\n", msg.c_str());
    return kExitUnavailable;
}

std::string str(const json& j, const char* key, const char* none = "-") {
    if (!j.contains(key) || j[key].is_null()) return none;
    return terminal_safe(j[key].is_string() ? j[key].get<std::string>() : j[key].dump());
}

int run_status(const QueryOptions& in) {
    const QueryOptions o = resolved(in);
    json fabric, sms;
    if (int rc = fetch_json(o, "/api/v1/fabric", fabric)) return rc;
    if (int rc = fetch_json(o, "/api/v1/sm", sms)) return rc;
    const size_t findings = fabric.value("findings", size_t{0});
    if (o.json) {
        std::cout << json_text(json{{"fabric", fabric}, {"sm", sms}}, 2) << "\n";
    } else {
        std::cout << "ibfabricd at " << o.url << "\n";
        std::cout << "fabric:   " << str(fabric, "switches") << " switches, " << str(fabric, "cas") << " CAs, "
                  << str(fabric, "links") << " links";
        if (!fabric["last_sweep_seq"].is_null())
            std::cout << " (sweep " << str(fabric, "last_sweep_seq") << " at " << str(fabric, "last_sweep_time")
                      << " from SM " << str(fabric, "source_sm") << ")";
        else
            std::cout << " (no snapshot yet)";
        std::cout << "\n";
        std::cout << "topology: " << str(fabric, "topology", "none configured") << " (" << str(fabric, "plan_nodes")
                  << " nodes, " << str(fabric, "plan_links") << " links planned)\n";
        std::cout << "SMs:      " << str(fabric, "sm_count") << " known, " << str(fabric, "sms_connected")
                  << " connected, master " << str(sms, "master", "unknown") << "\n";
        for (const json& s : sms.value("sms", json::array()))
            std::cout << "  " << str(s, "port_guid") << "  LID " << str(s, "lid") << "  priority "
                      << str(s, "priority") << "  " << str(s, "state") << "  "
                      << (s.value("connected", false) ? "connected" : "disconnected") << "  last heartbeat "
                      << str(s, "last_heartbeat", "never") << "\n";
        std::cout << "data:     " << str(fabric, "data_state", "unknown (older daemon)");
        if (!fabric["data_as_of"].is_null()) std::cout << " (last confirmed " << str(fabric, "data_as_of") << ")";
        std::cout << "\n";
        std::cout << "findings: " << findings;
        if (!fabric["last_findings_time"].is_null()) std::cout << " (checked " << str(fabric, "last_findings_time") << ")";
        std::cout << "\n";
    }
    if (int rc = data_rc(fabric)) return rc;
    return findings ? kExitFindings : kExitClean;
}

int run_findings(const QueryOptions& in) {
    const QueryOptions o = resolved(in);
    json j;
    if (int rc = fetch_json(o, "/api/v1/findings", j)) return rc;
    if (!o.json && j.is_object() && j.value("data_state", "fresh") == "no_data") return data_rc(j);  // not "no findings"
    std::vector<Finding> fs;
    std::vector<WaivedFinding> waived;  // by the daemon's waiver file
    try {
        fs = findings_from_json(j);
        if (j.contains("waived")) waived = waived_from_json(j["waived"]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ibfabric: the daemon's findings do not parse: %s\n", terminal_safe(e.what()).c_str());
        return kExitUnavailable;
    }
    // This command's own --waivers, --min-severity and --kind on top of the daemon's waivers.
    const Waived r = scope_findings(std::move(fs), o.report, std::move(waived));
    if (o.json) {
        nlohmann::json out = report_json(r, o.report);
        for (const char* k : {"sweep_seq", "generated_at", "checked", "data_state", "data_message", "data_as_of"})
            if (j.contains(k)) out[k] = j[k];
        std::cout << json_text(out, 2) << "\n";
    } else {
        std::cout << render_report(r, ::isatty(1) != 0);
    }
    if (int rc = data_rc(j)) return rc;
    return r.active.empty() ? kExitClean : kExitFindings;
}

}  // namespace

void register_daemon_queries(CLI::App& app, Runner& run) {
    const std::string token_help = "bearer token for a daemon with token_for_reads (default: $IBFABRIC_TOKEN)";
    {
        auto o = std::make_shared<QueryOptions>();
        CLI::App* sub = app.add_subcommand("status", "Ask ibfabricd about the fabric, its SMs and findings count\nExample: ibfabric status --url http://10.0.0.1:8639");
        add_daemon_options(sub, o->url, o->lab);
        sub->add_option("--token-file", o->token_file, token_help)->type_name("FILE");
        sub->add_flag("--json", o->json, "print the daemon's JSON ({\"fabric\": ..., \"sm\": ...})");
        sub->callback([&run, o] { run = [o] { return run_status(*o); }; });
    }
    {
        auto o = std::make_shared<QueryOptions>();
        CLI::App* sub = app.add_subcommand("findings", "Print ibfabricd's latest findings (same report as check)\nExample: ibfabric findings --json | jq '.findings | length'");
        add_daemon_options(sub, o->url, o->lab);
        sub->add_option("--token-file", o->token_file, token_help)->type_name("FILE");
        sub->add_flag("--json", o->json, "print the findings JSON (docs/findings.md) instead of text");
        add_report_options(sub, o->report);
        sub->callback([&run, o] { run = [o] { return run_findings(*o); }; });
    }
}

}  // namespace ibf::cli
