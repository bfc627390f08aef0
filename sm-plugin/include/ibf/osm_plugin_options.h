// Options of the OpenSM event plugin (libibfabric_osm.so), read from opensm.conf's
// `event_plugin_options` line, and the OpenSM version check. Pure: no I/O. docs/plugin.md.
//
//   auto r = ibf::osm::parse_options("socket=/run/ibfabric/osm.sock tcp=10.0.0.2:8640 key_file=/etc/ibfabric/ingest.key");
//   if (auto* err = std::get_if<std::string>(&r)) { /* refuse to load, log *err */ }
//   const ibf::osm::Options& o = std::get<ibf::osm::Options>(r);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ibf::osm {

enum class LogLevel : uint8_t { error = 0, warn = 1, info = 2, debug = 3 };

inline constexpr const char* kDefaultSocket = "/run/ibfabric/osm.sock";
inline constexpr size_t kMaxTcpEndpoints = 8;

// One ibfabricd to send to: a Unix socket path, or TCP host:port (IPv4 literal or "localhost").
struct Endpoint {
    std::string socket_path;              // set for a Unix endpoint
    std::string tcp_host;                 // set for a TCP endpoint
    uint16_t tcp_port = 0;

    bool tcp() const { return !tcp_host.empty(); }
    std::string name() const;             // "unix:/path" or "tcp:host:port", for log lines
};

struct Options {
    // socket= (at most one) first, then every tcp= in the order given (up to 8). Neither given:
    // the default socket alone. Never empty after parse_options().
    std::vector<Endpoint> endpoints{Endpoint{kDefaultSocket, "", 0}};
    std::string key_file;                 // key_file=PATH: shared key for TCP endpoints, "" = none
    std::string key;                      // its content, filled by the plugin (wire::read_key_file)
    size_t queue = 256;                   // event queue capacity (1..65536); overflow is counted, not blocked
    LogLevel log = LogLevel::info;
    int heartbeat_ms = 1000;              // Heartbeat + Counters period (100..60000)
    int send_timeout_ms = 5000;           // a controller that reads nothing for this long is dropped (100..600000)
    int backoff_max_ms = 2000;            // reconnect backoff cap (10..60000)
    bool lft = true;                      // lft=1|0: export the switches' LFTs in each snapshot
    size_t counter_queue = 16384;         // counters=N: perfmgr counter events queued per endpoint (0 = off, .. 1048576)
    int wire = 2;                         // wire=2|1: snapshots as binary v2 parts (default) or v1 JSON (older daemons)

    std::string endpoint() const;         // every endpoint's name, ", "-separated, for log lines
};

// Parses "key=value" items separated by spaces or commas. A null or empty text gives the defaults.
// Returns the error text (naming the item) for an unknown key, a bad value, a second socket=, more
// than 8 tcp= or the same endpoint twice. The key file is not read here (see wire::read_key_file).
std::variant<Options, std::string> parse_options(const char* text);

// nullopt when the running OpenSM is the one the plugin was built against, else the reason.
std::optional<std::string> check_version(const char* running, const char* built);

// The command that rebuilds the plugin against the OpenSM installed as `opensm_exe`, whose prefix
// (the directory above its bin/ or sbin/) holds that OpenSM's headers and libraries (docs/packaging.md):
//   rebuild_command("/usr/sbin/opensm") == "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/usr "
//       "-DIBF_BUILD_TESTS=OFF && cmake --build build-osm --target package"
// An empty or relative path gives the system prefix /usr.
std::string rebuild_command(std::string_view opensm_exe);

}  // namespace ibf::osm
