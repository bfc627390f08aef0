// ibfabricd's configuration file (YAML, every key documented in docs/daemon.md and
// config/examples/ibfabricd.yaml).
//
//   ibf::DaemonConfig c = ibf::parse_daemon_config(text, "/etc/ibfabric/ibfabricd.yaml");
//   c.socket_path, c.http_port, c.topology, ...
//
// Relative paths in the file are resolved against the file's directory. Unknown keys, wrong
// types and unsafe values (a world-writable socket mode) are ibf::InputError naming
// file:line:column. Pure: no I/O (the caller reads the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/ha_engine.h"
#include "ibf/port_error_options.h"

namespace ibf {

struct DaemonConfig {
    std::string source;                                      // the config file, "" = defaults
    std::string socket_path = "/run/ibfabric/osm.sock"; // plugin ingest (Unix socket)
    unsigned socket_mode = 0660;                              // never world-writable
    std::vector<std::string> socket_users;                    // who may connect to it; none = root + our euid
    std::string tcp_bind;                                     // optional TCP ingest, "" = off
    uint16_t tcp_port = 0;                                    // 0 = ephemeral (when tcp_bind set)
    std::string tcp_key_file;                                 // shared key: TCP Hellos must carry its MAC
    std::string http_bind = "127.0.0.1";
    uint16_t http_port = 8639;                                // 0 = ephemeral
    std::string topology;                                     // plan YAML or golden dump, "" = none
    std::string node_name_map;                                // "" = none
    std::string waivers;                                      // waiver file (checks/waivers.h), "" = none
    std::string history_db;                                   // SQLite file, "" = no history
    uint32_t history_retention_days = 0;                      // `history.retention_days`, 0 = keep all
    uint64_t history_max_sweeps = 0;                          // `history.max_sweeps`, 0 = no bound
    std::string token_file;                                   // bearer token for POST, "" = refuse
    bool token_for_reads = false;                             // GETs need the token too (not /healthz)
    std::string log_level = "info";                           // trace debug info warn error off
    size_t max_message_bytes = 256u << 20;                    // largest wire payload accepted
    size_t max_request_bytes = 1u << 20;                      // largest HTTP request accepted
    size_t max_plugin_connections = 16;                       // per transport: said Hello, and a pool without
    size_t max_pre_hello_per_source = 8;                      // of that pool, from one address / uid
    size_t max_http_connections = 64;                         // open HTTP sessions
    int64_t hello_timeout_ms = 5000;                          // a connection without Hello is closed after this
    int64_t stale_connection_ms = 30000;                      // silent this long: its slot may go to a newcomer
    unsigned http_header_timeout_ms = 10000;                  // a request's headers must arrive within this
    size_t max_history_bytes = 16u << 20;                     // largest GET /api/v1/history answer
    bool check_rate_below_capability = true;                  // CheckOptions::rate_below_capability
    unsigned route_threads = 0;                               // `checks.route_threads`, 0 = route_threads_for(cores)
    ha::HaConfig ha;                                          // `ha:` SM high availability (docs/ha.md)
    std::vector<std::string> ha_agents;                       // `ha.agents`: peer daemons' URLs (switchover)
    // health: (docs/daemon.md): no-data bound and flapping links
    uint32_t stale_after_s = 30;                              // fabric unconfirmed this long = stale
    uint32_t flap_threshold = 3;                              // flaps within flap_window_s = flapping
    uint32_t flap_window_s = 600;
    uint32_t flap_quiet_s = 1800;                             // no flap this long clears it
    uint32_t forget_sm_after_s = 3600;                        // an SM disconnected this long is dropped
    // metrics.per_link (docs/metrics.md, "Bounded by default"): false "deviating" (default), true "all"
    bool metrics_all_links = false;
    // counters: (docs/daemon.md): port_errors thresholds per window (window_ms, max_per_window)
    PortErrorOptions port_errors;
};

// The largest config file and token file read (InputError "<file>: larger than the ... limit").
inline constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;
inline constexpr size_t kMaxTokenFileBytes = 4096;

DaemonConfig parse_daemon_config(std::string_view text, const std::string& file);

// "host:port", "[v6addr]:port" or ":port" / "port" (host unchanged); InputError (`what` names
// the flag or key) otherwise.
void parse_host_port(std::string_view s, std::string& host, uint16_t& port, const std::string& what);

// The warning to log when the HTTP API listens beyond loopback without a token_file (anyone who
// can reach the port reads the fabric); "" when it binds to loopback or a token is configured.
std::string http_exposure_warning(const DaemonConfig& c);

// The config keys ("socket", "limits.max_http_connections", "ha", ...) whose values differ between
// the running config and `next` and that ibfabricd reads only at start, each once, in the order
// of docs/daemon.md's table; a reload
// applies the others (topology, node_name_map, waivers, token_file, token_for_reads, log_level,
// checks) and names these as needing a restart. Pure.
//   keys_needing_restart(running, parse_daemon_config(text, file))  // {"limits.max_http_connections"}
std::vector<std::string> keys_needing_restart(const DaemonConfig& running, const DaemonConfig& next);

// Threads of a full route validation: `configured` when set, else min(4, cores) (at least 1).
unsigned route_threads_for(unsigned configured, unsigned cores);

// Throws InputError when `mode` has any world bit set or bits outside 0777.
void validate_socket_mode(unsigned mode, const std::string& file, int line, int column);

}  // namespace ibf
