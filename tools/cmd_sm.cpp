// `ibfabric sm status|switchover` and `ibfabric ha check|notify`: the Subnet Managers as the HA
// agents (ibfabricd with `ha:`) see them, the maintenance switchover, and keepalived's hooks.
// docs/ha.md, docs/cli.md.
//
//   ibfabric sm status [--url URL] [--json]
//   ibfabric sm switchover [--to GUID] [--url URL] [--token-file F]
//   ibfabric ha check [--url URL]                 # vrrp_script: exit 0 while this node's SM is MASTER
//   ibfabric ha notify MASTER|BACKUP|FAULT|STOP   # notify_*: records keepalived's state
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "commands.h"
#include "ibf/ha_ops.h"
#include "ibf/http_client.h"
#include "ibf/report.h"

namespace ibf::cli {
namespace {

using nlohmann::json;

constexpr const char* kDefaultUrl = "http://127.0.0.1:8639";

struct SmOptions {
    std::string url, to, token_file, state_file = "/run/ibfabric/vrrp-state";
    bool json = false;
    double timeout = 10;
    std::vector<std::string> args;
};

std::string resolve(const std::string& url) {
    if (!url.empty()) return url;
    if (const char* env = std::getenv("IBFABRIC_URL"); env && *env) return env;
    return kDefaultUrl;
}

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
        throw std::runtime_error(base + path + " answered " + std::to_string(r.status) + ": " +
                                 (j.is_object() && j.contains("error") ? j["error"].get<std::string>() : r.body));
    if (j.is_discarded()) throw std::runtime_error(base + path + " did not answer with JSON");
    return j;
}

std::string s(const json& j, const char* k, const char* none = "-") {
    if (!j.is_object() || !j.contains(k) || j[k].is_null()) return none;
    return j[k].is_string() ? j[k].get<std::string>() : j[k].dump();
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
    int live_masters = 0;
    for (const json& x : ha.value("sms", json::array())) {
        const bool alive = x.value("alive", false);
        live_masters += alive && s(x, "state") == "MASTER";
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
    return live_masters == 1 && !ha["designated_successor"].is_null() ? kExitClean : kExitFindings;
}

int run_status(const SmOptions& o) {
    const std::string base = resolve(o.url);
    json sm = call(base, "GET", "/api/v1/sm");
    if (o.json) {
        std::cout << json_text(sm, 2) << "\n";
        const json& ha = sm["ha"];
        return ha.is_object() && !ha["master"].is_null() ? kExitClean : kExitFindings;
    }
    return print_status(sm, base);
}

std::string read_token(const SmOptions& o) {
    if (o.token_file.empty()) {
        if (const char* env = std::getenv("IBFABRIC_TOKEN"); env && *env) return env;
        throw std::invalid_argument("a switchover needs the daemons' token: --token-file F or $IBFABRIC_TOKEN");
    }
    std::ifstream f(o.token_file);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string t = ss.str();
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (!f || t.empty()) throw std::invalid_argument(o.token_file + ": cannot read a token");
    return t;
}

// True once `agent` reports SM `sm` with `priority` (its plugin's heartbeats carry it).
bool wait_priority(const std::string& agent, const std::string& sm, int priority, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        json j = call(agent, "GET", "/api/v1/sm");
        if (j["ha"].is_object())
            for (const json& x : j["ha"].value("sms", json::array()))
                if (s(x, "port_guid") == sm && x.value("priority", -1) == priority) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

int run_switchover(const SmOptions& o) {
    const std::string base = resolve(o.url);
    const std::string token = read_token(o);
    json sm = call(base, "GET", "/api/v1/sm");
    const json& ha = sm["ha"];
    if (!ha.is_object()) throw std::invalid_argument(base + " is not an HA agent (no 'ha:' in its config)");
    const std::string master = s(ha, "master", ""), target = o.to.empty() ? s(ha, "designated_successor", "") : o.to;
    if (master.empty()) throw std::runtime_error("no master is known");
    if (target.empty()) throw std::runtime_error("no live standby to switch to");
    // Which agent runs which SM: every agent names its own node's SM.
    std::map<std::string, std::string> agent_of;
    std::map<std::string, int> prio;
    std::vector<std::string> agents = ha.value("agents", std::vector<std::string>{});
    agents.insert(agents.begin(), base);
    for (const std::string& a : agents) {
        json j = a == base ? sm : call(a, "GET", "/api/v1/sm");
        if (j["ha"].is_object() && !j["ha"]["local_sm"].is_null()) agent_of[j["ha"]["local_sm"].get<std::string>()] = a;
    }
    for (const json& x : ha.value("sms", json::array())) prio[s(x, "port_guid")] = x.value("priority", 0);
    auto guid = [](const std::string& g) { return std::stoull(g, nullptr, 16); };
    if (!prio.count(target)) throw std::invalid_argument("unknown SM " + target + " (see ibfabric sm status)");
    auto plan = ha::switchover_plan({guid(master), prio[master]}, {guid(target), prio[target]});
    if (auto* err = std::get_if<std::string>(&plan)) throw std::invalid_argument(*err);
    const auto& p = std::get<ha::SwitchoverPlan>(plan);
    std::cout << "switchover: " << p.summary << "\n";
    const auto t0 = std::chrono::steady_clock::now();
    for (const ha::SmPriority& st : p.steps) {
        auto it = agent_of.find(guid_hex(st.sm));
        if (it == agent_of.end())
            throw std::runtime_error("no HA agent runs SM " + guid_hex(st.sm) + ": list it in ha.agents of " + base);
        call(it->second, "POST", "/api/v1/sm/priority", json{{"priority", st.priority}}.dump(), token);
        std::cout << "  " << guid_hex(st.sm) << ": sm_priority " << st.priority << " (via " << it->second << ")\n";
        // OpenSM applies a SIGHUP asynchronously: the next step (the target's trap 144) must find
        // this priority in effect, or the master compares with its old one and keeps mastership.
        if (!wait_priority(base, guid_hex(st.sm), st.priority, o.timeout))
            throw std::runtime_error(guid_hex(st.sm) + " does not report sm_priority " + std::to_string(st.priority) +
                                     " after " + std::to_string(o.timeout) + " s");
    }
    for (;;) {
        json now = call(base, "GET", "/api/v1/sm");
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (s(now["ha"], "master", "") == target) {
            std::cout << "master is now " << target << " (" << static_cast<int>(ms) << " ms)\n";
            return kExitClean;
        }
        if (ms > o.timeout * 1000) {
            std::cerr << "ibfabric: " << target << " is not master after " << o.timeout << " s (master: "
                      << s(now["ha"], "master", "none") << ")\n";
            return kExitFindings;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

int run_check(const SmOptions& o) {
    json sm = call(resolve(o.url), "GET", "/api/v1/sm");
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
    const std::string tmp = o.state_file + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << v.state << "\n";
        if (!f.flush()) {
            std::fprintf(stderr, "ibfabric ha notify: cannot write %s\n", tmp.c_str());
            return kExitUnavailable;
        }
    }
    if (std::rename(tmp.c_str(), o.state_file.c_str()) != 0) {
        std::fprintf(stderr, "ibfabric ha notify: cannot replace %s\n", o.state_file.c_str());
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
            std::fprintf(stderr, "ibfabric: %s\n", e.what());
            return kExitBadInput;
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "ibfabric: %s\n", e.what());
            return kExitUnavailable;
        }
    };
}

}  // namespace

void register_sm(CLI::App& app, Runner& run) {
    const std::string url_help = "HA agent URL (default: $IBFABRIC_URL, else " + std::string(kDefaultUrl) + ")";
    CLI::App* sm = app.add_subcommand("sm", "The Subnet Managers: state, successor, failovers, switchover\nExample: ibfabric sm status");
    sm->require_subcommand(1);
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = sm->add_subcommand("status", "Every SM with its state, the master, the designated successor and "
                                                   "the last master change.\nExit: 0 one live master with a live "
                                                   "standby, 1 otherwise, 3 agent unreachable.\n"
                                                   "Example: ibfabric sm status --url http://10.0.0.1:8639");
        c->add_option("--url", o->url, url_help);
        c->add_flag("--json", o->json, "print GET /api/v1/sm");
        c->callback([&run, o] { run = guarded([o] { return run_status(*o); }); });
    }
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = sm->add_subcommand(
            "switchover",
            "Make another SM master without losing a LID (maintenance): swaps the sm_priority of the master and the "
            "target through their HA agents, then waits until the target is master. Run it again with --to the old "
            "master to switch back.\nExample: ibfabric sm switchover --to 0x0002c90300000002 --token-file "
            "/etc/ibfabric/token");
        c->add_option("--to", o->to, "target SM port GUID (default: the designated successor)");
        c->add_option("--url", o->url, url_help);
        c->add_option("--token-file", o->token_file, "bearer token of the agents (default: $IBFABRIC_TOKEN)");
        c->add_option("--timeout", o->timeout, "seconds to wait for the new master (default 10)");
        c->callback([&run, o] { run = guarded([o] { return run_switchover(*o); }); });
    }
    CLI::App* ha = app.add_subcommand("ha", "keepalived hooks: health check and notify\nExample: ibfabric ha check || echo not master");
    ha->require_subcommand(1);
    {
        auto o = std::make_shared<SmOptions>();
        CLI::App* c = ha->add_subcommand("check", "Exit 0 while this node's SM is the live InfiniBand MASTER, 1 when "
                                                  "not, 3 when the agent is unreachable (keepalived vrrp_script).\n"
                                                  "Example: ibfabric ha check --url http://127.0.0.1:8639");
        c->add_option("--url", o->url, url_help);
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
