// `ibfabric lab`: real OpenSM on a simulated ibsim fabric, generated from a plan (or a dump), with
// faults injected at generation or at run time. docs/lab.md.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <tuple>
#include <sstream>
#include <string>
#include <thread>

#include "commands.h"
#include "ibf/text.h"
#include "ibf/check.h"
#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/lab_fault.h"
#include "ibf/lab_ha.h"
#include "ibf/lab_net.h"
#include "ibf/lab_plan.h"
#include "ibf/inputs.h"
#include "ibf/lab_report.h"
#include "ibf/lab_runner.h"
#include "ibf/plan_yaml.h"
#include "ibf/report.h"

namespace fs = std::filesystem;

namespace ibf::cli {
namespace {

constexpr const char* kFaultHelp =
    "Fault specs (--fault, repeatable; <port> is <node>/<n>, <node> an ibsim node id or a plan name,\n"
    "a host with several HCAs as host:hca):\n"
    "  move:<port>:<free port>        plug the cable at the first port into the second (free) port\n"
    "  cross:<port>,<port>            swap the far ends of two cables (a crossed pair: 2 miswired)\n"
    "  remove:<port>                  remove the cable at that port (missing_link)\n"
    "  width:<port>=<1x|2x|4x|8x|12x> the link at that port trains at that width (rate_mismatch)\n"
    "  speed:<port>=<SDR|DDR|QDR|FDR|EDR|HDR>  the link runs at that speed (rate_mismatch)\n"
    "e.g. --fault move:leaf01/19:leaf01/30 --fault cross:leaf02/19,leaf02/20 --fault width:leaf03/22=1x\n";

struct UpArgs {
    std::string plan;
    std::string fabric;
    std::string expected;
    std::vector<std::string> faults;
    std::string dir;
    std::vector<std::string> sm_hosts;
    int sms = 1;
    std::string sm_priority;
    std::string sm_polling;
    std::string ha;
    std::string opensm_template;
    bool json = false;
    bool no_color = false;
    bool no_daemon = false;
    int sweep_interval = 2;
    int perfmgr_sweep = -1;  // -1: the default (5 s with one SM, off with several: docs/lab.md)
    double timeout = 120;
    double ttl = 0;
};

struct DirArgs {
    std::string dir;
    bool json = false;
    bool no_color = false;
};

struct FaultArgs {
    std::string dir;
    std::vector<std::string> words;
    bool no_wait = false;
    bool json = false;
    bool no_color = false;
    double timeout = 60;
};

std::string exe_dir() {
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : p.parent_path().string();
}

std::string lab_dir(const std::string& d) { return d.empty() ? default_lab_dir() : d; }

// --opensm-template, else $IBFABRIC_DATA_DIR/opensm.conf, else <bin>/../share/ibfabric/opensm.conf
// (an install; the build tree mirrors it), else config/templates/opensm.conf under the current
// directory. No path of the build machine is compiled in.
std::string find_template(const std::string& given) {
    if (!given.empty()) return given;
    std::vector<std::string> candidates;
    if (const char* d = std::getenv("IBFABRIC_DATA_DIR"); d && *d) candidates.push_back(std::string(d) + "/opensm.conf");
    candidates.push_back(exe_dir() + "/../share/ibfabric/opensm.conf");
    candidates.push_back("config/templates/opensm.conf");
    for (auto& c : candidates)
        if (fs::exists(c)) return fs::absolute(c).string();
    throw InputError("lab", 0, 0,
                     "cannot find the OpenSM template (looked in $IBFABRIC_DATA_DIR, " + exe_dir() +
                         "/../share/ibfabric and ./config/templates): pass --opensm-template FILE");
}

void progress(const std::string& s) { std::fprintf(stderr, "lab: %s\n", s.c_str()); }

bool use_color(bool no_color) { return !no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(STDOUT_FILENO) == 1; }

int print_findings(const LabState& s, const LabFindings& f, bool json, bool no_color) {
    if (json) {
        auto j = findings_to_json(f.findings);
        j["via"] = f.via;
        if (f.sweep_seq >= 0) j["sweep_seq"] = f.sweep_seq;
        j["lab"] = s.dir;
        std::cout << json_text(j, 2) << "\n";
    } else {
        std::cout << "lab " << s.dir << ": " << s.source;
        if (!s.faults.empty()) {
            std::cout << " with faults";
            for (auto& x : s.faults) std::cout << " " << x;
        }
        std::cout << "\nchecked the fabric OpenSM swept (via " << f.via
                  << (f.sweep_seq >= 0 ? ", sweep " + std::to_string(f.sweep_seq) : std::string()) << ") against "
                  << (s.expected.empty() ? std::string("nothing") : s.expected) << "\n"
                  << render_text(f.findings, use_color(no_color));
    }
    std::cout.flush();
    return f.findings.empty() ? kExitClean : kExitFindings;
}

int report_lab_error(const LabError& e) {
    std::fprintf(stderr, "ibfabric lab: %s\n", terminal_safe(e.what()).c_str());
    if (!e.log_tail().empty()) std::fprintf(stderr, "---- log tail ----\n%s", e.log_tail().c_str());
    return kExitUnavailable;
}

// Findings now: from the daemon (newer than after_seq) or, without one, by ibnetdiscover.
LabFindings current_findings(const LabState& s, int64_t after_seq, double timeout_s) {
    if (s.api_port > 0) {
        auto f = lab_wait_findings(s, after_seq, timeout_s);
        if (!f) throw LabError("ibfabricd served no findings within " + std::to_string(static_cast<int>(timeout_s)) + " s",
                               tail_file(s.path("ibfabricd.log")));
        return *f;
    }
    if (s.expected.empty()) throw LabError("this lab has no plan to check against");
    Plan plan = load_plan(read_text_file(s.expected, "plan"), s.expected);
    return lab_findings_via_discover(s, plan);
}

int64_t daemon_seq(const LabState& s) {
    if (s.api_port <= 0) return -1;
    try {
        auto f = lab_findings_via_daemon(s);
        return f ? f->sweep_seq : -1;
    } catch (const LabError&) {
        return -1;
    }
}

void print_sms_progress(const LabState& s) {
    const auto st = lab_sm_status(s, false);
    for (size_t i = 0; i < s.sms.size(); ++i) {
        const LabSm& m = s.sms[i];
        progress("sm" + std::to_string(i + 1) + " \"" + m.host + "\" port " + m.port_guid + " lid " + std::to_string(m.lid) +
                 " priority " + std::to_string(m.priority) + ": " + (st[i].state.empty() ? "?" : st[i].state) +
                 " (opensm pid " + std::to_string(m.pid) +
                 (m.api_port > 0 ? ", ibfabricd http " + std::to_string(m.api_port) + " tcp " + std::to_string(m.tcp_port) : "") +
                 ")");
    }
    progress(std::string("failover: ") + (s.ha == LabHa::Ibfabric ? "ibfabricd (ha: act)" : "OpenSM's own polling (ha: monitor)"));
}

int run_up(const UpArgs& a) {
    if (a.plan.empty() == a.fabric.empty())
        throw InputError("lab", 0, 0, "lab up needs a plan file or --fabric <dump> (one of them)");
    const std::string dir = lab_dir(a.dir);
    fs::create_directories(dir);
    Net net;
    std::string expected;
    std::string source;
    if (!a.plan.empty()) {
        const std::string text = read_text_file(a.plan, "plan");
        Plan plan = load_plan(text, a.plan);
        net = net_from_plan(plan);
        expected = a.expected.empty() ? fs::absolute(a.plan).string() : fs::absolute(a.expected).string();
        if (a.expected.empty()) {
            // MTU 4096 / NDR cannot be simulated: check against the same plan with what ibsim can do.
            LabExpectation ex = lab_expectation(plan);
            for (const auto& w : ex.warnings) std::fprintf(stderr, "ibfabric lab: warning: %s\n", w.c_str());
            if (ex.adjusted) {
                expected = fs::absolute(dir + "/expected-plan.yaml").string();
                std::ofstream(expected) << ex.yaml;
            }
        }
        source = a.plan;
    } else {
        Fabric f = parse_dump(read_text_file(a.fabric, "dump"), a.fabric);
        net = net_from_fabric(f, a.fabric);
        source = a.fabric;
        if (!a.expected.empty()) {
            expected = fs::absolute(a.expected).string();
        } else {
            // The dump is its own plan, with the speeds ibsim cannot simulate mapped down the same way.
            for (NodeId i = 0; i < f.size(); ++i)
                for (auto& p : f.node(i).ports) {
                    if (p.speed_active == Speed::NDR || p.speed_active == Speed::XDR) p.speed_active = Speed::HDR;
                    if (p.speed_active == Speed::FDR10) p.speed_active = Speed::FDR;
                }
            expected = fs::absolute(dir + "/expected.ibnetdiscover").string();
            std::ofstream(expected) << write_ibnetdiscover(f);
        }
    }
    std::vector<std::string> applied;
    for (const auto& spec : a.faults) {
        apply_fault(net, parse_fault(spec));
        applied.push_back(spec);
    }
    for (const auto& w : net.warnings) std::fprintf(stderr, "ibfabric lab: warning: %s\n", w.c_str());

    LabOptions o;
    o.dir = dir;
    o.opensm_template = find_template(a.opensm_template);
    o.expected = expected;
    o.sms.count = a.sms;
    o.sms.hosts = a.sm_hosts;
    if (!a.sm_priority.empty()) o.sms.priorities = parse_int_list(a.sm_priority, "--sm-priority");
    if (!a.sm_polling.empty()) std::tie(o.sms.polling_ms, o.sms.polling_retries) = parse_sm_polling(a.sm_polling);
    if (!a.ha.empty()) {
        if (a.sms < 2) throw InputError("lab", 0, 0, "--ha needs --sms 2 or more");
        o.sms.ha = parse_lab_ha(a.ha);
    }
    // Validate before anything starts (a bad --sm-host or priority list is a usage error).
    choose_sm_hosts(net, a.sms, a.sm_hosts);
    sm_priorities(a.sms, o.sms.priorities);
    o.sweep_interval_s = a.sweep_interval;
    o.perfmgr_sweep_s = a.perfmgr_sweep >= 0 ? a.perfmgr_sweep : (a.sms > 1 ? 0 : 5);
    o.start_timeout_s = a.timeout;
    o.progress = progress;
    const std::string bin = exe_dir();
    const std::string daemon = bin + "/ibfabricd";
    const std::string plugin_dir = fs::weakly_canonical(bin + "/../lib").string();
    if (!a.no_daemon) {
        if (fs::exists(daemon) && fs::exists(plugin_dir + "/libibfabric_osm.so")) {
            o.ibfabricd = daemon;
            o.plugin_dir = plugin_dir;
        } else {
            progress("ibfabricd or libibfabric_osm.so not built next to this ibfabric: findings come from ibnetdiscover");
        }
    }
    o.umad_kernel = lab_umad_kernel_beside(bin);
    if (o.umad_kernel.empty() && !getenv("IBF_LAB_NO_UMAD_KERNEL"))
        progress("libibf_umad_kernel.so not built beside this ibfabric: OpenSM's MADs without a response never time out");
    LabState s;
    bool started = false;  // lab_up() stops what it started when it fails; after that it is ours to stop
    try {
        s = lab_up(net, o);
        started = true;
        s.faults = applied;
        lab_save_state(s);
        if (s.api_port > 0) progress("waiting for the plugin's first snapshot to be checked by ibfabricd (port " +
                                     std::to_string(s.api_port) + ")");
        else progress("discovering the fabric with ibnetdiscover");
        LabFindings f = current_findings(s, -1, a.timeout);
        // The TTL counts from a lab that is up and reported: on a loaded machine discovery alone
        // can take longer than a short TTL, which would stop the lab under the caller's feet.
        if (a.ttl > 0) lab_arm_watchdog(s, a.ttl);
        if (s.sms.size() > 1) print_sms_progress(s);
        progress(std::string("lab running in ") + s.dir + " (ask its daemon: `ibfabric findings --lab " + s.dir +
                 "`; stop it with `ibfabric lab down" +
                 (a.dir.empty() ? "" : " --dir " + a.dir) + "`)");
        return print_findings(s, f, a.json, a.no_color);
    } catch (const LabError& e) {
        // Leave nothing half-started behind (but never a lab this command did not start).
        if (started) lab_down(s, 1.0);
        return report_lab_error(e);
    }
}

LabState need_lab(const std::string& d) {
    const std::string dir = lab_dir(d);
    auto s = lab_load_state(dir);
    if (!s) throw LabError("no lab in " + dir + " (start one with `ibfabric lab up <plan>`)");
    lab_follow_daemons(*s);  // a restarted ibfabricd: its new PID and port
    return *s;
}

int run_status(const DirArgs& a) {
    LabState s;
    try {
        s = need_lab(a.dir);
    } catch (const LabError& e) {
        return report_lab_error(e);
    }
    auto ps = lab_status(s);
    bool all = true;
    for (auto& p : ps)
        if (p.pid > 0 && !p.alive) all = false;
    int ups = lab_subnet_up_count(s);
    const auto sst = lab_sm_status(s);
    if (a.json) {
        nlohmann::json j{{"dir", s.dir}, {"ibsim_sockname", s.sockname}, {"sm_host", s.sm_host},
                         {"api_port", s.api_port}, {"source", s.source}, {"expected", s.expected},
                         {"faults", s.faults}, {"subnet_up_count", ups}, {"processes", nlohmann::json::array()}};
        for (auto& p : ps)
            if (p.pid > 0) j["processes"].push_back({{"name", p.name}, {"pid", p.pid}, {"alive", p.alive}, {"log", p.log}});
        j["ha"] = std::string(to_string(s.ha));
        j["sms"] = nlohmann::json::array();
        for (size_t i = 0; i < s.sms.size(); ++i) {
            const LabSm& m = s.sms[i];
            j["sms"].push_back({{"host", m.host}, {"port_guid", m.port_guid}, {"lid", m.lid}, {"priority", m.priority},
                                {"pid", m.pid}, {"log", m.log}, {"state", sst[i].state}, {"state_from", sst[i].state_from},
                                {"alive", sst[i].alive}, {"frozen", sst[i].frozen}, {"daemon_pid", m.daemon_pid},
                                {"api_port", m.api_port}, {"tcp_port", m.tcp_port}, {"dir", m.dir}});
        }
        std::cout << json_text(j, 2) << "\n";
    } else {
        std::cout << "lab " << s.dir << " (" << s.source << ")\n";
        std::cout << "  IBSIM_SOCKNAME=" << s.sockname << "  SIM_HOST=\"" << s.sm_host << "\"\n";
        for (auto& p : ps) {
            if (p.pid <= 0) continue;
            std::cout << "  " << p.name << std::string(10 - p.name.size(), ' ') << "pid " << p.pid << "  "
                      << (p.alive ? "running" : "NOT RUNNING") << "  log " << p.log << "\n";
        }
        for (size_t i = 0; s.sms.size() > 1 && i < s.sms.size(); ++i) {
            const LabSm& m = s.sms[i];
            std::cout << "  sm" << i + 1 << " \"" << m.host << "\" " << m.port_guid << " lid " << m.lid << " priority "
                      << m.priority << ": " << (sst[i].state.empty() ? "?" : sst[i].state)
                      << (sst[i].state_from.empty() ? "" : " (from " + sst[i].state_from + ")")
                      << (!sst[i].alive ? ", NOT RUNNING" : sst[i].frozen ? ", FROZEN" : "") << "\n";
        }
        std::cout << "  OpenSM SUBNET UP " << ups << " time(s)";
        if (s.api_port > 0) std::cout << "; API http://127.0.0.1:" << s.api_port << "/api/v1/findings";
        std::cout << "\n";
    }
    return all ? kExitClean : kExitUnavailable;
}

int run_down(const DirArgs& a) {
    const std::string dir = lab_dir(a.dir);
    auto s = lab_load_state(dir);
    if (!s) {
        std::cout << "no lab running in " << dir << "\n";
        return kExitClean;
    }
    auto stopped = lab_down(*s);
    std::cout << "lab " << dir << ": stopped";
    if (stopped.empty()) std::cout << " nothing (no process was still running)";
    for (auto& n : stopped) std::cout << " " << n;
    std::cout << "\n";
    return kExitClean;
}

int run_findings(const DirArgs& a) {
    try {
        LabState s = need_lab(a.dir);
        return print_findings(s, current_findings(s, -1, 30), a.json, a.no_color);
    } catch (const LabError& e) {
        return report_lab_error(e);
    }
}

// ibsim answers a command it cannot carry out with a "# ..." line (or "command ... unknown");
// ibwarn lines are its routine chatter. Returns the refusal, "" when there is none.
std::string console_refusal(const std::string& answer) {
    std::istringstream in(answer);
    std::string line;
    while (std::getline(in, line)) {
        while (line.rfind("sim> ", 0) == 0) line.erase(0, 5);
        if (line.rfind("ibwarn", 0) == 0) continue;
        if (line.rfind("#", 0) == 0 || line.find("unknown - skipped") != std::string::npos) return line;
    }
    return {};
}

std::string console_port(const Net& net, const PortRef& r) {
    auto i = net.find(r.node);
    if (!i) {
        std::string hint;
        for (const auto& n : net.nodes)
            if (n.name == r.node || derive_name(n.type, n.description) == r.node) hint += (hint.empty() ? "" : ", ") + ("\"" + n.id + "\"");
        throw InputError("lab", 0, 0,
                         hint.empty() ? "no node '" + r.node + "' in the lab fabric"
                                      : "'" + r.node + "' names several nodes: " + hint + " (write host:hca)");
    }
    const NetNode& n = net.nodes[*i];
    if (r.port < 1 || r.port > n.num_ports)
        throw InputError("lab", 0, 0, "'" + n.id + "' has no port " + std::to_string(r.port));
    return "\"" + n.id + "\"[" + std::to_string(r.port) + "]";
}

// kill-sm|freeze-sm|thaw-sm|restart-sm TARGET: signals one OpenSM; prints what was done and when.
int run_sm_fault(LabState& s, const FaultArgs& a) {
    if (a.words.size() != 2)
        throw InputError("lab", 0, 0, "usage: ibfabric lab fault kill-sm|freeze-sm|thaw-sm|restart-sm master|standby|sm<i>|GUID");
    const std::string& what = a.words[0];
    if (what != "kill-sm" && what != "freeze-sm" && what != "thaw-sm" && what != "restart-sm")
        throw InputError("lab", 0, 0, "unknown lab fault action '" + what + "' (kill-sm, freeze-sm, thaw-sm, restart-sm)");
    try {
        LabSmFault f = lab_sm_fault(s, what, a.words[1]);
        const LabSm& m = s.sms[f.index];
        static const std::map<std::string, std::string> verbs = {
            {"kill-sm", "killed (SIGKILL)"}, {"freeze-sm", "froze (SIGSTOP)"}, {"thaw-sm", "thawed (SIGCONT)"},
            {"restart-sm", "restarted"}};
        if (a.json) {
            nlohmann::json j{{"action", what},        {"sm", f.index + 1}, {"host", m.host},      {"port_guid", m.port_guid},
                             {"pid", f.pid},          {"unix_ms", f.unix_ms}, {"log", m.log},
                             {"freed_sim_clients", f.freed_clients}};
            std::cout << json_text(j, 2) << "\n";
        } else {
            std::cout << verbs.at(what) << " sm" << f.index + 1 << " \"" << m.host << "\" " << m.port_guid << " pid " << f.pid
                      << " at unix_ms " << f.unix_ms;
            if (!f.freed_clients.empty()) {
                std::cout << " (freed ibsim client";
                for (int c : f.freed_clients) std::cout << " " << c;
                std::cout << ")";
            }
            std::cout << "\n";
        }
        return kExitClean;
    } catch (const LabError& e) {
        return report_lab_error(e);
    }
}

int run_fault(const FaultArgs& a) {
    LabState s;
    try {
        s = need_lab(a.dir);
    } catch (const LabError& e) {
        return report_lab_error(e);
    }
    if (a.words.empty()) throw InputError("lab", 0, 0, "lab fault needs an action: unlink, relink, move, errors or kill-sm...");
    const std::string& what = a.words[0];
    if (what.size() > 3 && what.compare(what.size() - 3, 3, "-sm") == 0) return run_sm_fault(s, a);
    const std::string net_path = fs::exists(s.path("net-current.txt")) ? s.path("net-current.txt") : s.path("net.txt");
    Net net = parse_net(read_text_file(net_path, "lab net file"), net_path);
    std::vector<std::string> lines;
    bool sweeps = true;
    auto need = [&](size_t n, const char* usage) {
        if (a.words.size() != n) throw InputError("lab", 0, 0, std::string("usage: ibfabric lab fault ") + usage);
    };
    if (what == "unlink" || what == "relink") {
        need(2, "unlink|relink <node>/<port>");
        lines.push_back(std::string(what == "unlink" ? "Unlink " : "ReLink ") + console_port(net, parse_port_ref(a.words[1])));
    } else if (what == "move") {
        need(3, "move <node>/<port> <node>/<free port>");
        PortRef from = parse_port_ref(a.words[1]), to = parse_port_ref(a.words[2]);
        auto i = net.find(from.node);
        if (!i || !net.nodes[*i].ports.count(from.port)) throw InputError("lab", 0, 0, "no cable at " + a.words[1]);
        NetPort cable = net.nodes[*i].ports.at(from.port);
        std::string target = console_port(net, to);
        Fault f{.kind = Fault::Kind::Move, .a = from, .b = to};
        apply_fault(net, f);  // validates that the target is free
        lines.push_back("Unlink " + console_port(net, from));
        lines.push_back("Link " + target + " \"" + cable.peer + "\"[" + std::to_string(cable.peer_port) + "]");
    } else if (what == "errors") {
        need(3, "errors <node>/<port> <Counter>=<n>   (e.g. SymbolErrorCounter=55)");
        std::string c = a.words[2];
        auto eq = c.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == c.size() ||
            c.find_first_not_of("0123456789", eq + 1) != std::string::npos ||
            c.find_first_of(" \"\t") != std::string::npos)
            throw InputError("lab", 0, 0, "counter must be <Name>=<number>, e.g. SymbolErrorCounter=55");
        if (c.rfind("PortCounters.", 0) != 0) c = "PortCounters." + c;
        lines.push_back("PerformanceSet " + console_port(net, parse_port_ref(a.words[1])) + " " + c);
        sweeps = false;
    } else {
        throw InputError("lab", 0, 0, "unknown lab fault action '" + what + "' (unlink, relink, move, errors, kill-sm, freeze-sm, thaw-sm, restart-sm)");
    }
    try {
        if (what == "errors") {
            // A counter set before OpenSM's perfmgr first read the port would be its baseline, not
            // growth: wait for that first reading (docs/lab.md, "lab fault errors").
            const PortRef at = parse_port_ref(a.words[1]);
            if (auto i = net.find(at.node); i && !net.nodes[*i].ports.count(at.port))
                throw InputError("lab", 0, 0, "no cable at " + a.words[1] + ": ibfabricd keeps port counters per link");
            if (const int sweep = lab_perfmgr_sweep_s(s); sweep == 0) {
                progress("warning: OpenSM's perfmgr is off in this lab (lab up --perfmgr-sweep 0): nothing reads this counter");
            } else if (s.api_port > 0 && !a.no_wait) {
                progress("waiting for OpenSM's perfmgr (every " + std::to_string(sweep) + " s) to read " + a.words[1] +
                         " once: the baseline the counter grows from");
                if (!lab_wait_port_counted(s, at.node, at.port, 2.0 * sweep + 10))
                    throw LabError("ibfabricd holds no perfmgr reading of " + a.words[1] + " after " +
                                   std::to_string(2 * sweep + 10) + " s (ibfabric_perfmgr_rows_total in /metrics)",
                                   tail_file(s.path("osm.log")));
            }
        }
        const int ups = lab_subnet_up_count(s);
        const int64_t seq = daemon_seq(s);
        const PortRef counted = what == "errors" ? parse_port_ref(a.words[1]) : PortRef{};
        // The family of the counter set: data counters change with every MAD ibsim forwards, so a
        // change of the whole port would not say that the perfmgr read the new value.
        const std::string family = what == "errors" ? counter_family(a.words[2].substr(0, a.words[2].find('='))) : "";
        const std::string counters_before =
            what == "errors" && !family.empty() ? lab_port_counters(s, counted.node, counted.port, family) : "";
        for (auto& l : lines) {
            std::string answer = lab_console(s, l, 0.2);
            std::fprintf(stderr, "lab: ibsim> %s\n", l.c_str());
            if (auto refusal = console_refusal(answer); !refusal.empty())
                throw LabError("ibsim refused `" + l + "`: " + refusal);
        }
        if (what == "move") {
            std::ofstream(s.path("net-current.txt")) << write_net(net);
        }
        if (what == "errors" && !a.no_wait && family.empty())
            progress("ibfabricd keeps no series of " + a.words[2].substr(0, a.words[2].find('=')) +
                     " (docs/metrics.md, \"Port counters\"): not waiting for the perfmgr to read it");
        if (what == "errors" && !a.no_wait && !counters_before.empty()) {
            // No sweep: the perfmgr's next reading of the port carries the change; then the findings.
            const int sweep = lab_perfmgr_sweep_s(s);
            progress("waiting for OpenSM's perfmgr to read " + a.words[1] + " again (every " + std::to_string(sweep) + " s)");
            if (!lab_wait_port_counters_change(s, counted.node, counted.port, counters_before, 2.0 * sweep + 10, family))
                throw LabError("ibfabricd's counters of " + a.words[1] + " did not change within " +
                               std::to_string(2 * sweep + 10) + " s (the value set may equal the port's current one)");
            auto f = lab_findings_via_daemon(s);
            if (!f) throw LabError("ibfabricd served no findings", tail_file(s.path("ibfabricd.log")));
            return print_findings(s, *f, a.json, a.no_color);
        }
        if (!sweeps || a.no_wait) return kExitClean;
        progress("waiting for OpenSM's heavy sweep");
        if (!lab_wait_subnet_up(s, ups, a.timeout)) throw LabError("no SUBNET UP after the change", tail_file(s.path("osm.log")));
        // Let a second sweep (move: Unlink then Link) land before reading findings.
        int last = lab_subnet_up_count(s);
        for (int i = 0; i < 25; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            int now = lab_subnet_up_count(s);
            if (now != last) { last = now; i = 0; }
            if (i >= 10) break;
        }
        LabFindings f = current_findings(s, seq, a.timeout);
        if (s.api_port > 0) {
            // the newest snapshot wins: wait briefly for a later one
            for (int i = 0; i < 10; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(30));
                if (auto g = lab_findings_via_daemon(s, f.sweep_seq)) { f = *g; i = 0; }
            }
        }
        return print_findings(s, f, a.json, a.no_color);
    } catch (const LabError& e) {
        return report_lab_error(e);
    }
}

}  // namespace

void register_lab(CLI::App& app, Runner& run) {
    CLI::App* lab = app.add_subcommand(
        "lab",
        "A simulated fabric: real OpenSM (with the ibfabric plugin) on ibsim, built from a plan, with\n"
        "faults injected; ibfabricd checks every sweep against the plan. docs/lab.md.\n"
        "Example: ibfabric lab up config/examples/small-plan.yaml && ibfabric lab fault unlink leaf01/1");
    lab->require_subcommand(1);

    auto up = std::make_shared<UpArgs>();
    CLI::App* cup = lab->add_subcommand(
        "up",
        "Generate an ibsim fabric from a plan (or a dump), start ibsim, OpenSM + plugin and ibfabricd,\n"
        "wait for the first snapshot and print its findings (as `ibfabric check` does). The lab keeps\n"
        "running until `ibfabric lab down`.");
    cup->add_option("plan", up->plan, "YAML plan (docs/plan.md) to build the fabric from")->type_name("PLAN");
    cup->add_option("--fabric", up->fabric, "Build the fabric from a dump (ibnetdiscover, iblinkinfo, ibdiagnet .net) instead")
        ->type_name("DUMP");
    cup->add_option("--expected", up->expected,
                    "What to check against (default: the plan; with --fabric, the dump itself)")->type_name("PLAN|DUMP");
    cup->add_option("--fault", up->faults, "Inject a fault before the fabric starts (repeatable), see below")->type_name("SPEC");
    cup->add_option("--dir", up->dir, "Lab directory (default /tmp/ibfabric-lab-$USER)")->type_name("DIR");
    cup->add_option("--sm-host", up->sm_hosts,
                    "CA an OpenSM attaches to, repeatable (one per SM; default: the first CA with a cable, then\n"
                    "CAs on other leaves)")->type_name("NODE");
    cup->add_option("--sms", up->sms, "Number of OpenSMs, each on its own CA with its own ibfabricd (1..3, default 1)")
        ->check(CLI::Range(1, kMaxLabSms));
    cup->add_option("--sm-priority", up->sm_priority, "sm_priority of each SM, comma-separated (default 15,14,13: SM 1 is master)")
        ->type_name("P1,P2,..");
    cup->add_option("--sm-polling", up->sm_polling,
                    "OpenSM's sminfo_polling_timeout,polling_retry_number (default OpenSM's 10000,4)")->type_name("MS,RETRIES");
    cup->add_option("--ha", up->ha,
                    "With --sms > 1: who fails over. ibfabric (default): each ibfabricd acts for its SM (ha: act);\n"
                    "native: OpenSM's own polling only, the daemons watch (ha: monitor)")->type_name("ibfabric|native");
    cup->add_option("--sweep-interval", up->sweep_interval, "OpenSM sweep_interval in seconds (default 2)")->check(CLI::Range(1, 3600));
    cup->add_option("--perfmgr-sweep", up->perfmgr_sweep,
                    "OpenSM perfmgr_sweep_time_s: port counters every N seconds (default 5 with one SM, off with --sms > 1: docs/lab.md; 0 = off)")
        ->check(CLI::Range(0, 3600));
    cup->add_option("--timeout", up->timeout, "Seconds to wait for each step (default 120)")->check(CLI::Range(1.0, 3600.0));
    cup->add_option("--opensm-template", up->opensm_template, "OpenSM config template (default: $IBFABRIC_DATA_DIR/opensm.conf, else\n<bin>/../share/ibfabric/opensm.conf, else ./config/templates/opensm.conf)")
        ->type_name("FILE");
    cup->add_option("--ttl", up->ttl, "Stop the lab by itself after this many seconds (default: never)")
        ->check(CLI::Range(1.0, 1e7));
    cup->add_flag("--no-daemon", up->no_daemon, "Run OpenSM without the plugin and ibfabricd; findings come from ibnetdiscover");
    cup->add_flag("--json", up->json, "Print the findings as JSON (docs/findings.md)");
    cup->add_flag("--no-color", up->no_color, "Never colour the report");
    cup->footer(std::string(kFaultHelp) +
                "\nExamples:\n"
                "  ibfabric lab up config/examples/small-plan.yaml\n"
                "  ibfabric lab up config/examples/fat-tree-2tier-324.yaml --fault cross:leaf01/19,leaf01/20\n"
                "  ibfabric lab up --fabric ibnetdiscover.txt\n"
                "  ibfabric lab up config/examples/small-plan.yaml --sms 2            # master + standby, ibfabric HA\n"
                "  ibfabric lab up config/examples/small-plan.yaml --sms 2 --ha native --sm-polling 1000,2\n"
                "\nExit status: 0 no findings, 1 findings, 2 bad input, 3 a lab process failed to start\n"
                "(the tail of its log is printed).");
    cup->callback([&run, up] { run = [up] { return run_up(*up); }; });

    auto fa = std::make_shared<FaultArgs>();
    CLI::App* cfault = lab->add_subcommand(
        "fault",
        "Change the running fabric through ibsim's console, wait for OpenSM's sweep and print the findings:\n"
        "  unlink <node>/<port>            pull the cable (both ends go down)\n"
        "  relink <node>/<port>            plug it back\n"
        "  move <node>/<port> <node>/<q>   move the cable at the first port to free port q\n"
        "  errors <node>/<port> <Counter>=<n>   set a PortCounters value (e.g. SymbolErrorCounter=55)\n"
        "SM faults (lab up --sms N; TARGET is master, standby, sm<i> or a port GUID; prints the time in unix ms):\n"
        "  kill-sm TARGET      kill -9 that OpenSM\n"
        "  freeze-sm TARGET    SIGSTOP (a hung SM); thaw-sm TARGET: SIGCONT\n"
        "  restart-sm TARGET   start a killed OpenSM again with the same config (its stale ibsim client is freed)\n"
        "Example: ibfabric lab fault move leaf01/1 leaf01/30");
    cfault->add_option("action", fa->words, "unlink|relink|move|errors|kill-sm|freeze-sm|thaw-sm|restart-sm and its arguments")
        ->required()->expected(1, 3);
    cfault->add_option("--dir", fa->dir, "Lab directory (default /tmp/ibfabric-lab-$USER)")->type_name("DIR");
    cfault->add_flag("--no-wait", fa->no_wait, "Return once ibsim took the command (no sweep wait, no report)");
    cfault->add_option("--timeout", fa->timeout, "Seconds to wait for the sweep and the findings (default 60)");
    cfault->add_flag("--json", fa->json, "Print the findings as JSON");
    cfault->add_flag("--no-color", fa->no_color, "Never colour the report");
    cfault->callback([&run, fa] { run = [fa] { return run_fault(*fa); }; });

    auto st = std::make_shared<DirArgs>();
    CLI::App* cst = lab->add_subcommand("status", "Show the lab's processes, their PIDs and logs (exit 3 when one is not running)\nExample: ibfabric lab status --json");
    cst->add_option("--dir", st->dir, "Lab directory (default /tmp/ibfabric-lab-$USER)")->type_name("DIR");
    cst->add_flag("--json", st->json, "JSON output");
    cst->callback([&run, st] { run = [st] { return run_status(*st); }; });

    auto fi = std::make_shared<DirArgs>();
    CLI::App* cfi = lab->add_subcommand("findings", "Print the running lab's current findings\nExample: ibfabric lab findings --dir /tmp/mylab");
    cfi->add_option("--dir", fi->dir, "Lab directory (default /tmp/ibfabric-lab-$USER)")->type_name("DIR");
    cfi->add_flag("--json", fi->json, "JSON output");
    cfi->add_flag("--no-color", fi->no_color, "Never colour the report");
    cfi->callback([&run, fi] { run = [fi] { return run_findings(*fi); }; });

    auto dn = std::make_shared<DirArgs>();
    CLI::App* cdn = lab->add_subcommand("down", "Stop exactly the processes `lab up` started (by PID) and free the simulator\nExample: ibfabric lab down --dir /tmp/mylab");
    cdn->add_option("--dir", dn->dir, "Lab directory (default /tmp/ibfabric-lab-$USER)")->type_name("DIR");
    cdn->callback([&run, dn] { run = [dn] { return run_down(*dn); }; });
}

}  // namespace ibf::cli
