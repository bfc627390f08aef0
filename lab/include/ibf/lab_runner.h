// The lab's processes: ibsim, OpenSM (under umad2sim, with the ibfabric plugin) and ibfabricd,
// started in one lab directory and stopped by PID. This is the part of lab/ that does I/O.
//
//   ibf::LabOptions o{.dir = "/tmp/ibfabric-lab-me", .bin_dir = ".../build/bin", ...};
//   ibf::LabState s = ibf::lab_up(net, o);      // throws ibf::LabError (with a log tail)
//   ibf::lab_console(s, "Unlink \"leaf01\"[3]");
//   ibf::lab_down(s.dir);                       // kills exactly the PIDs in <dir>/state.json
//
// Never runs a shell: children are fork()+execve() with an argv. Every child is in its own
// session (setsid) so it survives the CLI that started it; its PID goes into <dir>/state.json.
// ibsim reads its console from <dir>/console (a FIFO the lab keeps open read-write in ibsim's
// own stdin, so ibsim never sees EOF); answers go to <dir>/ibsim.log.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ibf/lab_ha.h"
#include "ibf/lab_net.h"

namespace ibf {

// A lab process failed to start or the lab is not usable. `log_tail` holds the end of the
// failing process's log (may be empty).
class LabError : public std::runtime_error {
public:
    LabError(const std::string& what, std::string log_tail = {})
        : std::runtime_error(what), log_tail_(std::move(log_tail)) {}
    const std::string& log_tail() const { return log_tail_; }

private:
    std::string log_tail_;
};

struct LabOptions {
    std::string dir;                  // lab directory (created; must not hold a running lab)
    std::string opensm_template;      // config/templates/opensm.conf
    std::string ibfabricd;            // path of ibfabricd; "" = no daemon and no plugin
    std::string plugin_dir;           // directory holding libibfabric_osm.so ("" = no plugin)
    std::string expected;             // plan or dump the daemon checks against ("" = none)
    std::string plugin_options;       // extra event_plugin_options (e.g. "log=debug"), after socket=
    std::string sm_host;              // ibsim node id OpenSM attaches to; "" = net.default_sm_host()
    LabSmOptions sms;                 // --sms N (> 1: SMs in <dir>/sm<i>/, lab_ha.h); hosts[0]
                                      // overrides sm_host
    int ha_heartbeat_ms = 100;        // plugin heartbeat_ms with several SMs
    int sweep_interval_s = 2;         // OpenSM light sweep period
    int perfmgr_sweep_s = 5;          // OpenSM perfmgr_sweep_time_s; 0 = perfmgr off (`lab up`: off with several SMs, docs/lab.md)
    double start_timeout_s = 60;      // per step
    std::string umad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";
    // libibf_umad_kernel.so, preloaded into OpenSM before umad2sim so that a request without a
    // response times out as the kernel times it out (lab/umad-kernel); "" = none (under umad2sim
    // alone such a MAD stays outstanding forever). lab_umad_kernel_beside() finds the built one.
    std::string umad_kernel;
    // The daemon's `metrics.per_link: all` (every link's series: `lab fault errors` waits for a
    // port's baseline reading in them); false: the shipped default (deviating links only), as
    // ibf_lab_bench measures the scrape.
    bool metrics_all_links = true;
    std::function<void(const std::string&)> progress;  // one line per step, may be empty
};

// One SM node of the lab: OpenSM on a CA and (with a daemon) the ibfabricd acting as its agent.
// With one SM its files are the lab's own (osm.log, ibfabricd.yaml, work/ in <dir>); with several,
// each has <dir>/sm<i>/ (opensm.conf, osm.log, opensm.out, cache/, ibfabricd.*, ingest.sock,
// sm-state).
struct LabSm {
    std::string host;          // ibsim node id (SIM_HOST)
    std::string port_guid;     // "0x..." ("" when not known)
    int lid = 0;               // base LID after the first SUBNET UP (0 = not known)
    int priority = 15;
    int pid = 0;               // opensm
    std::string dir;           // working directory of its processes (umad2sim's sys-<pid>)
    std::string conf, log, out, cache;  // opensm.conf, OpenSM's log, its stdout/stderr, OSM_CACHE_DIR
    int daemon_pid = 0, api_port = 0, tcp_port = 0;  // 0 = none
    std::string daemon_log, ingest_socket;
};

struct LabState {
    std::string dir;
    std::string sockname;     // IBSIM_SOCKNAME
    std::string sm_host;      // SIM_HOST of OpenSM and of lab clients
    int ibsim_pid = 0, opensm_pid = 0, daemon_pid = 0;  // 0 = not started
    int watchdog_pid = 0;        // lab_arm_watchdog(), 0 = none
    std::string watchdog_exe;    // its program's file name (checked before it is signalled)
    int api_port = 0;         // ibfabricd's HTTP port, 0 = no daemon
    std::string ingest_socket;  // the plugin -> daemon socket
    std::string expected;     // what findings are checked against
    std::string source;       // plan or dump the lab was built from
    std::vector<std::string> faults;  // --fault specs applied at generation
    int64_t started_unix_ms = 0;
    std::vector<LabSm> sms;   // SM 1 first; the single-SM fields above mirror SM 1
    LabHa ha = LabHa::Single;
    std::string key_file;     // shared TCP ingest key (several SMs with daemons)
    std::string plugin_dir;   // LD_LIBRARY_PATH for OpenSM ("" = no plugin)
    std::string umad2sim;     // LD_PRELOAD of OpenSM and clients
    std::string umad_kernel;  // preloaded into OpenSM before umad2sim ("" = none), LabOptions

    std::string path(const std::string& name) const { return dir + "/" + name; }
};

// The lab's MAD timeout shim built beside the programs in bin_dir (<bin_dir>/../lib), or "" when
// it is not there or $IBF_LAB_NO_UMAD_KERNEL is set (to compare with umad2sim alone).
std::string lab_umad_kernel_beside(const std::string& bin_dir);

// Default lab directory: /tmp/ibfabric-lab-<user>.
std::string default_lab_dir();

// Writes net.txt, opensm.conf (and ibfabricd.yaml), starts ibsim, OpenSM and ibfabricd, waits
// for OpenSM's SUBNET UP (and the daemon's HTTP port). On failure stops what it started and
// throws LabError with the failing log's tail.
LabState lab_up(const Net& net, const LabOptions& opt);

// Forks a watchdog (in its own session) that runs lab_down() on this lab after `ttl_s` seconds
// unless the lab was stopped before; records it in the state so lab_down() stops it too. For
// tests and scripts, so a lab never outlives a crashed caller for long.
void lab_arm_watchdog(LabState& s, double ttl_s);

// Reads <dir>/state.json; nullopt when there is none. InputError when it is unreadable, or not
// trusted: the directory and the file must belong to this user and be writable by nobody else
// (its pids are signalled and its api_port gets the bearer token).
std::optional<LabState> lab_load_state(const std::string& dir);

// InputError naming `path` unless it belongs to this user (geteuid) and neither group nor others
// may write it. `what` names it in the message ("lab directory", "lab state file").
void require_trusted_lab_path(const std::string& path, const char* what);
void lab_save_state(const LabState& s);

struct LabProcessStatus {
    std::string name;  // "ibsim", "opensm", "ibfabricd"
    int pid = 0;
    bool alive = false;
    std::string log;   // its log file
};
std::vector<LabProcessStatus> lab_status(const LabState& s);

// SIGTERM, then SIGKILL after `grace_s`, to each PID in the state that still runs the program it
// started (checked through /proc/<pid>/exe, so a reused PID is left alone); removes state.json
// and the console FIFO. Returns the names of the processes it stopped.
std::vector<std::string> lab_down(const LabState& s, double grace_s = 3.0);

// Writes one console line to ibsim (<= 128 characters) and returns what ibsim printed in
// answer within `wait_s` (read from ibsim.log).
std::string lab_console(const LabState& s, const std::string& line, double wait_s = 0.3);

// Count of "SUBNET UP" lines in the SMs' logs (all of them: whichever is master sweeps), and
// waiting for it to grow.
int lab_subnet_up_count(const LabState& s);
bool lab_wait_subnet_up(const LabState& s, int more_than, double timeout_s);

// Runs a diagnostic client (e.g. {"ibnetdiscover"}) attached at the lab's SM host (or at `host`)
// under umad2sim, in <dir>/work; returns its stdout. LabError on timeout or non-zero exit.
std::string lab_run_client(const LabState& s, const std::vector<std::string>& argv, double timeout_s = 30,
                           const std::string& umad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
                           const std::string& host = "");

// ---- several SMs (lab/src/sms.cpp) ----

// What one SM is doing now. `state` comes from its own daemon (GET /api/v1/sm, `state_from`
// "ibfabricd") or else from the last "Entering ... state" line of its log ("log"); "" unknown.
struct LabSmStatus {
    std::string state;
    std::string state_from;   // "ibfabricd" | "log" | ""
    bool alive = false;       // the process exists
    bool frozen = false;      // stopped (SIGSTOP)
};
std::vector<LabSmStatus> lab_sm_status(const LabState& s, bool ask_daemons = true);

// `lab fault kill-sm|freeze-sm|thaw-sm|restart-sm TARGET` (TARGET as pick_sm() in lab_ha.h:
// master, standby, sm<i>, a port GUID). kill = SIGKILL, freeze = SIGSTOP, thaw = SIGCONT, restart
// = the dead OpenSM's ibsim client slot freed (console `X <n>`; ibsim may have dropped it already),
// its log kept as <log>.1, then the same opensm command again.
// Updates and saves the state (new PID). LabError when the target cannot be found or acted on.
struct LabSmFault {
    size_t index = 0;          // which SM (0-based)
    int pid = 0;               // the PID signalled (restart: the new one)
    int64_t unix_ms = 0;       // when the signal was sent / the new OpenSM was spawned
    std::vector<int> freed_clients;  // ibsim client numbers freed before a restart
};
LabSmFault lab_sm_fault(LabState& s, const std::string& action, const std::string& target);

// After an ibfabricd of the lab was restarted (killed and started again with the lab's config, by
// `lab fault` or by hand): finds the new process (an ibfabricd whose command line names that
// config) and the port it listens on, records both and saves the state. `lab status`, `lab
// findings` and `lab fault` call it first. Returns true when something changed.
bool lab_follow_daemons(LabState& s);

// ibsim never times a MAD out, and OpenSM answers SMInfo only once it has discovered its own port
// (osm_sminfo_rcv.c): a master whose SMInfo query raced a starting SM waits for the answer forever
// and never completes a sweep again (docs/ha-facts.md section 5). True once SM `i` has finished a
// heavy sweep started by this call (SIGHUP); false after `timeout_s`.
bool lab_sm_sweeps(const LabState& s, size_t i, double timeout_s);
// Restarts the running SM `i` (SIGKILL, its ibsim client freed, the same command) and waits for
// its SUBNET UP. LabError when it does not come within `timeout_s`.
void lab_restart_sm(LabState& s, size_t i, double timeout_s);

// Waits until exactly one running (alive, not frozen) SM has MASTER as the last state in its log
// and that stays so for `stable_s`; returns its index, nullopt on timeout. (No SUBNET UP is
// required: a master whose sweep ibsim wedged, above, logs none.)
std::optional<size_t> lab_wait_one_master(const LabState& s, double timeout_s, double stable_s = 0);

// OpenSM's perfmgr_sweep_time_s in the lab's opensm.conf (SM 1), 0 when its perfmgr is off.
int lab_perfmgr_sweep_s(const LabState& s);

// The port counter samples (`ibfabric_link_*_total` lines) of a `/metrics` text of the link one of
// whose ends (local or remote) is <name>/<port>, in text order; "" when there is none. Non-empty: ibfabricd holds a perfmgr
// reading (a baseline) of that port; a different string later: a newer reading changed it.
// `family` (e.g. "ibfabric_link_symbol_errors_total"): only that family's sample.
std::string metrics_port_counters(const std::string& metrics, const std::string& name, int port,
                                  const std::string& family = "");

// The `/metrics` family that carries an ibsim PortCounters field (`SymbolErrorCounter` ->
// "ibfabric_link_symbol_errors_total", case as ibsim: any); "" for a field ibfabricd does not
// export (PortXmitConstraintErrors, PortRcvConstraintErrors) or does not know.
std::string counter_family(const std::string& ibsim_field);

// Waits until the lab's daemon holds a perfmgr reading of <name>/<port> (metrics_port_counters non-empty);
// false after `timeout_s`. So a counter set afterwards shows as growth, not as the baseline.
bool lab_wait_port_counted(const LabState& s, const std::string& name, int port, double timeout_s);

// The port's counter samples as the lab's daemon serves them now (metrics_port_counters; "" when
// no daemon answers), and a wait until they differ from `before`: false after `timeout_s`.
std::string lab_port_counters(const LabState& s, const std::string& name, int port, const std::string& family = "");
bool lab_wait_port_counters_change(const LabState& s, const std::string& name, int port, const std::string& before,
                                   double timeout_s, const std::string& family = "");

// GET http://127.0.0.1:<port><target>: {status, body}. LabError when nothing answers.
struct HttpReply {
    int status = 0;
    std::string body;
};
HttpReply http_get(int port, const std::string& target, double timeout_s = 5);

// The last `max_lines` lines of a file ("" when it cannot be read).
std::string tail_file(const std::string& path, int max_lines = 20);

// Fills `{{KEY}}` placeholders in a template; InputError for a placeholder without a value.
std::string fill_template(const std::string& text, const std::vector<std::pair<std::string, std::string>>& vars,
                          const std::string& file);

}  // namespace ibf
