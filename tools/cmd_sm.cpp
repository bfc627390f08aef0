// `ibfabric sm status|switchover` and `ibfabric ha check|notify`: the Subnet Managers as the HA
// agents (ibfabricd with `ha:`) see them, the maintenance switchover, and keepalived's hooks.
// docs/ha.md, docs/cli.md.
//
//   ibfabric sm status [--url URL] [--json]
//   ibfabric sm switchover [--to GUID|NAME] [--url URL] [--token-file F] [--timeout S] [--json]
//   ibfabric ha check [--url URL]                 # vrrp_script: exit 0 while this node's SM is MASTER
//   ibfabric ha notify MASTER|BACKUP|FAULT|STOP   # notify_*: records keepalived's state
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "commands.h"
#include "ibf/atomic_file.h"
#include "ibf/text.h"
#include "ibf/error.h"
#include "ibf/ha_ops.h"
#include "ibf/http_client.h"
#include "ibf/report.h"

namespace ibf::cli {
namespace {

using nlohmann::json;

struct SmOptions {
    std::string url, lab, to, token_file, state_file = "/run/ibfabric/vrrp-state";
    bool json = false;
    double timeout = 10;
    std::vector<std::string> args;
};

std::string resolve(const SmOptions& o) { return daemon_url(o.url, o.lab); }

// An agent that answered, but not 200: its status kept, so a refusal (409) is told from a failure.
struct AgentAnswered : std::runtime_error {
    int status;
    AgentAnswered(int s, const std::string& what) : std::runtime_error(what), status(s) {}
};

// One request; throws std::runtime_error with a one-line reason (exit 3 for the caller).
json call(const std::string& base, const std::string& method, const std::string& path, const std::string& body = "",
          const std::string& token = "") {
    auto url = parse_http_url(base);
    if (!url) throw std::invalid_argument("bad daemon URL '" + base + "' (expected http://host:port)");
    HttpResult r;
    try {
        r = http_request(*url, method, path, body, token.empty() ? "" : "Bearer " + token);
    } catch (const HttpUnavailable& e) {
        throw std::runtime_error(base + " is unreachable: " + e.what());
    }
    json j = json::parse(r.body, nullptr, false);
    if (r.status != 200)
        throw AgentAnswered(r.status, base + path + " answered " + std::to_string(r.status) + ": " +
                                 (j.is_object() && j.contains("error") ? j["error"].get<std::string>() : r.body));
    if (j.is_discarded()) throw std::runtime_error(base + path + " did not answer with JSON");
    return j;
}

std::string s(const json& j, const char* k, const char* none = "-") {
    if (!j.is_object() || !j.contains(k) || j[k].is_null()) return none;
    return j[k].is_string() ? j[k].get<std::string>() : j[k].dump();
}

// What makes the SMs unhealthy as GET /api/v1/sm shows them, one line each; empty = healthy: one
// live MASTER that sweeps, a live standby to take over, no escalated split brain.
std::vector<std::string> sm_problems(const json& ha) {
    std::vector<std::string> out;
    int live_masters = 0;
    for (const json& x : ha.value("sms", json::array())) {
        const bool alive = x.value("alive", false);
        live_masters += alive && s(x, "state") == "MASTER";
        if (x.contains("not_sweeping") && x["not_sweeping"].is_string())
            out.push_back("CRITICAL: master " + s(x, "port_guid") + " is " + x["not_sweeping"].get<std::string>());
    }
    if (live_masters == 0) out.push_back("no live master");
    if (live_masters > 1) out.push_back(std::to_string(live_masters) + " live masters");
    const json& sb = ha.value("split_brain_escalated", json(nullptr));
    if (sb.is_object())
        out.push_back("CRITICAL: two masters after " + s(sb, "tried") + ": stop the SM that must not be master");
    if (ha.value("designated_successor", json(nullptr)).is_null()) out.push_back("no live standby to take over");
    return out;
}

int print_status(const json& sm, const std::string& base) {
    const json& ha = sm["ha"];
    if (ha.is_null()) {
        std::cout << "ibfabricd at " << base << " has no 'ha:' section: SMs as its plugins report them\n";
        for (const json& x : sm.value("sms", json::array()))
            std::cout << "  " << s(x, "port_guid") << "  LID " << s(x, "lid") << "  priority " << s(x, "priority")
                      << "  " << s(x, "state") << (x.value("connected", false) ? "" : "  (disconnected)") << "\n";
        return sm["master"].is_null() ? kExitFindings : kExitClean;
    }
    std::cout << "HA agent at " << base << " (" << s(ha, "mode") << "), this node's SM " << s(ha, "local_sm") << "\n";
    for (const json& x : ha.value("sms", json::array())) {
        const bool alive = x.value("alive", false);
        std::cout << "  " << s(x, "port_guid") << "  LID " << s(x, "lid") << "  priority " << s(x, "priority") << "  "
                  << s(x, "state") << (alive ? "" : " (not answering)") << (x.value("local", false) ? "  [this node]" : "")
                  << "  SMInfo " << s(x, "sminfo", "not probed") << "\n";
    }
    std::cout << "master " << s(ha, "master", "none") << ", designated successor "
              << s(ha, "designated_successor", "none (no live standby)") << "\n";
    const json& last = ha["last_failover"];
    if (last.is_object())
        std::cout << "last master change " << s(last, "master") << ": " << s(last, "from") << " -> " << s(last, "to")
                  << ", " << s(last, "cause") << (last["duration_ms"].is_null() ? "" : ", " + s(last, "duration_ms") + " ms")
                  << " (" << s(last, "outcome") << ")\n";
    else
        std::cout << "no master change seen\n";
    const auto problems = sm_problems(ha);
    for (const std::string& p : problems) std::cout << p << "\n";
    return problems.empty() ? kExitClean : kExitFindings;
}

int run_status(const SmOptions& o) {
    const std::string base = resolve(o);
    json sm = call(base, "GET", "/api/v1/sm");
    if (o.json) {
        std::cout << json_text(sm, 2) << "\n";
        const json& ha = sm["ha"];
        return ha.is_object() && sm_problems(ha).empty() ? kExitClean : kExitFindings;
    }
    return print_status(sm, base);
}

// The SMs as `sm` (GET /api/v1/sm of one agent) shows them: SMInfo state, priority, alive.
std::map<Guid, ha::SwitchoverSm> views(const json& sm) {
    std::map<Guid, ha::SwitchoverSm> out;
    for (const json& x : sm["ha"].value("sms", json::array()))
        if (auto g = parse_guid(s(x, "port_guid", ""))) {
            const auto st = s(x, "state", "");
            const SmState state = st == "MASTER"    ? SmState::Master
                                  : st == "STANDBY" ? SmState::Standby
                                  : st == "DISCOVERING" ? SmState::Discovering
                                                        : SmState::NotActive;
            out[*g] = {*g, x.value("priority", -1), state, x.value("alive", false)};
        }
    return out;
}

std::string describe(const std::map<Guid, ha::SwitchoverSm>& v) {
    std::string out;
    for (const auto& [g, x] : v)
        out += (out.empty() ? "" : ", ") + guid_hex(g) + " " + std::string(to_string(x.state)) + " priority " +
               std::to_string(x.priority) + (x.alive ? "" : " (not answering)");
    return out;
}

// The target named by --to (a GUID or a node name), else the designated successor. Exit 2 on an
// unknown or ambiguous name (std::invalid_argument).
Guid pick_target(const SmOptions& o, const json& ha) {
    if (o.to.empty()) {
        auto g = parse_guid(s(ha, "designated_successor", ""));
        if (!g) throw std::runtime_error("no live standby to switch to");
        return *g;
    }
    std::vector<ha::SmName> names;
    for (const json& x : ha.value("sms", json::array()))
        if (auto g = parse_guid(s(x, "port_guid", ""))) names.push_back({*g, s(x, "description", "")});
    auto hit = ha::find_sm(o.to, names);
    if (auto* err = std::get_if<std::string>(&hit)) throw std::invalid_argument(*err);
    return std::get<Guid>(hit);
}

// Prints the steps of `sw` (ha.switchover of GET /api/v1/sm) that took effect since `printed`.
void print_steps(const json& sw, size_t& printed) {
    const json& steps = sw.value("steps", json::array());
    for (; printed < steps.size(); ++printed)
        std::cout << "  " << s(steps[printed], "step") << ": " << s(steps[printed], "ms") << " ms\n" << std::flush;
}

// The daemon runs the switchover (and its rollback, whatever happens to this client): this asks
// for it, then follows it in GET /api/v1/sm until it ends.
int run_switchover(const SmOptions& o) {
    const std::string base = resolve(o);
    const auto token_or = bearer_token(o.token_file, o.lab);
    if (!token_or) throw std::invalid_argument("a switchover needs the daemons' token: --token-file F or $IBFABRIC_TOKEN");
    const std::string token = *token_or;
    json sm = call(base, "GET", "/api/v1/sm");
    const json& ha = sm["ha"];
    if (!ha.is_object()) throw std::invalid_argument(base + " is not an HA agent (no 'ha:' in its config)");
    if (!(o.timeout >= 1 && o.timeout <= 600)) throw std::invalid_argument("--timeout must be 1 to 600 seconds");
    const Guid target = pick_target(o, ha);
    const json ask{{"to", guid_hex(target)}, {"step_timeout_ms", std::lround(o.timeout * 1000)}};
    json sw;
    try {
        sw = call(base, "POST", "/api/v1/sm/switchover", ask.dump(), token);
    } catch (const AgentAnswered& e) {
        if (e.status != 409) throw;
        std::fprintf(stderr, "ibfabric: %s\n", terminal_safe(e.what()).c_str());  // refused: nothing changed
        return kExitFindings;
    }
    const auto id = sw.value("id", uint64_t{0});
    if (!o.json) std::cout << "switchover: " << s(sw, "summary") << "\n" << std::flush;
    size_t printed = 0;
    while (!sw.value("finished", false)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        sm = call(base, "GET", "/api/v1/sm");
        sw = sm["ha"].value("switchover", json(nullptr));
        if (!sw.is_object() || sw.value("id", uint64_t{0}) != id)
            throw std::runtime_error(base + " no longer shows switchover " + std::to_string(id) + " (restarted?): check `ibfabric sm status`");
        if (!o.json) print_steps(sw, printed);
    }
    const std::string state = s(sw, "state");
    if (o.json) {
        std::cout << json_text(sw, 2) << "\n";
    } else if (state == "done") {
        std::cout << "master is now " << guid_hex(target) << " (" << s(sw, "ms") << " ms): " << describe(views(sm)) << "\n";
    } else {
        std::fprintf(stderr, "ibfabric: switchover %s: %s; now: %s\n", state.c_str(), terminal_safe(s(sw, "outcome")).c_str(),
                     describe(views(sm)).c_str());
    }
    return state == "done" ? kExitClean : kExitFindings;
}

int run_check(const SmOptions& o) {
    json sm = call(resolve(o), "GET", "/api/v1/sm");
    const bool master = sm["ha"].is_object() && sm["ha"].value("local_is_master", false);
    if (!o.json) std::cout << (master ? "this node's SM is MASTER\n" : "this node's SM is not MASTER\n");
    return master ? kExitClean : kExitFindings;
}

int run_notify(const SmOptions& o) {
    auto n = ha::parse_notify(o.args);
    if (auto* err = std::get_if<std::string>(&n)) {
        std::fprintf(stderr, "ibfabric ha notify: %s\n", err->c_str());
        return kExitBadInput;
    }
    const auto& v = std::get<ha::Notify>(n);
    try {  // 0644 when new: keepalived writes it as root, the daemon reads it as its own user
        write_file_atomic(o.state_file, v.state + "\n", {.mode_if_new = 0644});
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "ibfabric ha notify: %s\n", terminal_safe(e.what()).c_str());
        return kExitUnavailable;
    }
    std::fprintf(stderr, "ibfabric ha notify: keepalived says %s%s\n", v.state.c_str(),
                 v.name.empty() ? "" : (" for " + v.name).c_str());
    return kExitClean;
}

// Wraps a runner: std::runtime_error (unreachable, refused) is exit 3 with one line.
Runner guarded(std::function<int()> f) {
    return [f] {
        try {
            return f();
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "ibfabric: %s\n", terminal_safe(e.what()).c_str());
            return kExitBadInput;
        } catch (const InputError& e) {  // a --lab without a daemon, or not this user's
            std::fprintf(stderr, "ibfabric: %s\n", terminal_safe(e.what()).c_str());
            return kExitBadInput;
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "ibfabric: %s\n", terminal_safe(e.what()).c_str());
            return kExitUnavailable;
        }
    };
}

}  // namespace

void register_sm(CLI::App& app, Runner& run) {
    CLI::App* sm = app.add_subcommand("sm", "The Subnet Managers: state, successor, failovers, switchover\nExample: ibfabric sm status");
    sm->require_subcommand(1);
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = sm->add_subcommand("status", "Every SM with its state, the master, the designated successor and "
                                                   "the last master change, and what is wrong.\nExit: 0 one live master "
                                                   "that sweeps, with a live standby; 1 otherwise (no master, two "
                                                   "masters, a master not sweeping, no standby); 3 agent unreachable.\n"
                                                   "Example: ibfabric sm status --url http://10.0.0.1:8639");
        add_daemon_options(c, o->url, o->lab, "HA agent");
        c->add_flag("--json", o->json, "print GET /api/v1/sm");
        c->callback([&run, o] { run = guarded([o] { return run_status(*o); }); });
    }
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = sm->add_subcommand(
            "switchover",
            "Make another SM master without losing a LID (maintenance), through the SM nodes' HA agents: the master's "
            "sm_priority goes just below the target's and OpenSM hands over by itself; then the new master gets the "
            "old master's priority, and the old master the target's (docs/ha.md). The agent at --url runs it and "
            "rolls it back to one MASTER with every other SM STANDBY when a step does not take effect within "
            "--timeout, an SM stops answering, or it is aborted; killing this command changes nothing of that. "
            "Run it again with --to the old master to switch back.\nExit: 0 switched, 1 refused before any change "
            "(the target is not a live STANDBY, another switchover runs) or rolled back, 2 bad or ambiguous --to, "
            "3 an agent unreachable.\n"
            "Example: ibfabric sm switchover --to node002 --token-file /etc/ibfabric/token");
        c->add_option("--to", o->to,
                      "target SM: port GUID, node description (\"node002 mlx5_0\") or its first word when unique "
                      "(default: the designated successor)");
        c->add_flag("--json", o->json, "print the steps and their times as JSON");
        add_daemon_options(c, o->url, o->lab, "HA agent");
        c->add_option("--token-file", o->token_file, "bearer token of the agents (default: $IBFABRIC_TOKEN, with --lab the lab's own)");
        c->add_option("--timeout", o->timeout, "seconds each step may take to show in SMInfo (default 10)");
        c->callback([&run, o] { run = guarded([o] { return run_switchover(*o); }); });
    }
    CLI::App* ha = app.add_subcommand("ha", "keepalived hooks: health check and notify\nExample: ibfabric ha check || echo not master");
    ha->require_subcommand(1);
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = ha->add_subcommand("check", "Exit 0 while this node's SM is the live InfiniBand MASTER, 1 when "
                                                  "not, 3 when the agent is unreachable (keepalived vrrp_script).\n"
                                                  "Example: ibfabric ha check --url http://127.0.0.1:8639");
        add_daemon_options(c, o->url, o->lab, "HA agent");
        c->add_flag("--quiet", o->json, "print nothing");
        c->callback([&run, o] { run = guarded([o] { return run_check(*o); }); });
    }
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = ha->add_subcommand(
            "notify", "Record keepalived's VRRP state (notify_master/backup/fault): STATE, or TYPE NAME STATE "
                      "PRIORITY as keepalived's generic notify passes them. Never promotes an SM: the InfiniBand "
                      "master decides where the VIP goes, not the other way round.\n"
                      "Example: notify_master \"/usr/bin/ibfabric ha notify MASTER\"");
        c->add_option("args", o->args, "STATE, or TYPE NAME STATE PRIORITY")->required();
        c->add_option("--state-file", o->state_file, "where the state is written (default /run/ibfabric/vrrp-state)");
        c->callback([&run, o] { run = [o] { return run_notify(*o); }; });
    }
}

}  // namespace ibf::cli
