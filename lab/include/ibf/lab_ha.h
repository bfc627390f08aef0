// Several SMs in one lab (`ibfabric lab up --sms N`): the pure part. Which CAs the SMs attach to,
// their priorities and polling, the files each SM node gets (daemon config with its `ha:` section,
// the plugin's endpoints), and reading what OpenSM and ibsim print (log times, SM states, guid2lid,
// the console's `Attached` list). No I/O, no clocks: lab/src/sms.cpp does the processes.
//
//   auto hosts = ibf::choose_sm_hosts(net, 2, {});           // first CA, then a CA on another leaf
//   auto prio  = ibf::sm_priorities(2, ibf::parse_int_list("15,14", "--sm-priority"));
//   auto t     = ibf::parse_osm_log_time("Dec 01 00:58:36 515246 [8F3EA6C0] 0x80 -> Entering MASTER state", 2026);
//   // t == unix microseconds of that line (OpenSM logs local time with microseconds, no year)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/lab_net.h"

namespace ibf {

// How the SMs of a lab fail over. Single: one SM (today's lab). Native: OpenSM's own polling only,
// the daemons watch (`ha: {mode: monitor}`). Ibfabric: each daemon acts for its node's SM
// (`ha: {mode: act}`).
enum class LabHa { Single, Native, Ibfabric };
std::string_view to_string(LabHa h);
// "native" | "ibfabric"; InputError otherwise.
LabHa parse_lab_ha(std::string_view s);

inline constexpr int kMaxLabSms = 3;

struct LabSmOptions {
    int count = 1;                       // 1..3
    std::vector<std::string> hosts;      // --sm-host (node ids or plan names); empty = chosen
    std::vector<int> priorities;         // --sm-priority; empty = 15, 14, 13
    int polling_ms = 10000;              // OpenSM's sminfo_polling_timeout (its default)
    int polling_retries = 4;             // OpenSM's polling_retry_number (its default)
    LabHa ha = LabHa::Single;            // Single when count == 1
};

// "15,14,13" -> {15, 14, 13}. InputError naming `what` for anything but comma-separated integers.
std::vector<int> parse_int_list(std::string_view s, const std::string& what);
// "--sm-polling MS,RETRIES": {ms, retries}; ms 100..600000, retries 1..100.
std::pair<int, int> parse_sm_polling(std::string_view s);

// The CAs the SMs attach to (indices into net.nodes), `n` distinct CAs with a cable. `given`
// names them (ids or plan names, as Net::find); missing ones are chosen: the first CA with a cable
// (Net::default_sm_host, so one SM is today's lab), then CAs whose leaf (the switch at port 1)
// differs from the chosen ones', then any other CA. InputError when not possible.
std::vector<size_t> choose_sm_hosts(const Net& net, int n, const std::vector<std::string>& given);

// Priorities for `n` SMs: `given` (0..15, exactly n values) or 15, 14, 13, ... (SM 1 is master).
std::vector<int> sm_priorities(int n, const std::vector<int>& given);

// One SM node's ibfabricd config.
struct LabDaemonConfig {
    std::string socket;              // Unix socket its local plugin sends to
    std::string expected;            // topology ("" = none)
    int http_port = 0;               // 0 = ephemeral (the port file says which)
    int tcp_port = 0;                // 0 = no TCP ingest (single SM)
    std::string key_file;            // tcp_key_file
    std::string token_file;          // bearer token for mutating calls ("" = none)
    std::string history;             // the history database (`history:`; "" = none): ibfabric history/diff --lab
    LabHa ha = LabHa::Single;        // Single = no `ha:` section
    std::string local_sm_guid;       // "0x..." (ha)
    std::string guid2lid_file;       // <sm dir>/cache/guid2lid (ha)
    std::string track_file;          // <sm dir>/sm-state (ha)
    std::string opensm_conf;         // this node's opensm.conf (ha: switchover rewrites sm_priority)
    std::vector<int> agent_ports;    // the other daemons' HTTP ports (ha.agents)
    std::vector<std::pair<std::string, int>> expect;  // every SM: port GUID, priority (ha.expect)
    int poll_ms = 100, mad_timeout_ms = 100, heartbeat_timeout_ms = 400;
    bool metrics_all_links = true;   // `metrics.per_link: all` (LabOptions::metrics_all_links)
};
std::string lab_daemon_yaml(const LabDaemonConfig& c);

// event_plugin_options: `socket=<local> [tcp=127.0.0.1:<peer>]... [key_file=<f>] [heartbeat_ms=<n>] [extra]`.
std::string lab_plugin_options(const std::string& socket, const std::vector<int>& peer_tcp_ports,
                               const std::string& key_file, int heartbeat_ms, const std::string& extra);

// OpenSM's log line prefix "Dec 01 00:58:36 515246 [...]" (local time, microseconds, no year) as
// unix microseconds, the year given by the caller; `utc_offset_s` is the local zone's offset
// (seconds east of UTC). nullopt when the line does not start with such a time.
std::optional<int64_t> parse_osm_log_time(std::string_view line, int year, long utc_offset_s = 0);

// The SM state OpenSM last logged ("Entering MASTER state" -> "MASTER"; also STANDBY,
// DISCOVERING, NOT-ACTIVE); "" when it logged none.
std::string osm_log_state(std::string_view log);

// The first line of `log` at or after byte `from` containing `needle`: its time (unix µs, as
// parse_osm_log_time) and its end offset. nullopt when there is none (yet).
struct OsmLogHit {
    int64_t unix_us = 0;
    size_t end = 0;
};
std::optional<OsmLogHit> find_osm_log_line(std::string_view log, size_t from, std::string_view needle, int year,
                                           long utc_offset_s = 0);


// ibsim's console answer to `Attached`: "Client 0: pid 8490 connected at "h1" port 0x100001, ...".
struct SimClient {
    int num = 0;
    int pid = 0;
    std::string node;
};
std::vector<SimClient> parse_attached(std::string_view text);

// One SM as seen now, for picking a fault target.
struct LabSmView {
    std::string port_guid;  // "0x..."
    std::string state;      // MASTER, STANDBY, ... ("" unknown)
    bool running = false;   // process alive and not stopped
};
// "master": the SM in MASTER state, "standby": the first in STANDBY, both among the SMs whose
// `running` equals `running` (kill/freeze pick a running SM, thaw/restart a stopped one: its
// state is then the last one it logged); otherwise a port GUID (any spelling parse_guid accepts)
// or "sm<i>" (1-based), running or not. Returns the index, or nullopt with the reason in `err`
// (none, or two masters).
std::optional<size_t> pick_sm(const std::vector<LabSmView>& sms, std::string_view target, bool running,
                              std::string& err);

}  // namespace ibf
