// ibfabricd as a library: binds the ingest sockets and the HTTP API, runs checks, until stopped.
// The threads and who owns what are described in docs/threading.md.
//
//   ibf::DaemonOptions o{.config = cfg, .port_file = "", .handle_signals = false};
//   ibf::Daemon d(o);                 // loads topology + token, opens history, binds; throws
//   std::thread t([&] { d.run(); });  // serves until stop() (or SIGTERM/SIGINT if handle_signals)
//   ... d.http_port() ...
//   d.stop(); t.join();               // removes the socket file
//
// Constructor errors: ibf::InputError for a bad topology / node-name-map / token file
// (file:line:column), std::runtime_error for sockets and the history database.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ibf/daemon_config.h"
#include "ibf/dumps.h"
#include "ibf/plan.h"
#include "ibf/waivers.h"

namespace ibf {

struct DaemonOptions {
    DaemonConfig config;
    std::string port_file;        // write the bound HTTP port here (atomically), "" = don't
    bool handle_signals = false;  // SIGTERM/SIGINT stop, SIGHUP reloads the topology
    // A reload (SIGHUP, POST /api/v1/reload) re-reads the configuration with this (the config file
    // and the command line's overrides, as at start; InputError naming file:line refuses the
    // reload); null = the configuration stays, only the files it names are re-read.
    std::function<DaemonConfig()> reread_config;
};

class Daemon {
public:
    explicit Daemon(DaemonOptions opt);
    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // Serves on the calling thread until stop(); may be called once.
    void run();
    // Thread-safe; returns at once. run() returns soon after and the socket file is removed.
    void stop();

    uint16_t http_port() const;
    uint16_t tcp_port() const;  // 0 when the TCP listener is off
    const std::string& socket_path() const;

    struct Impl;  // opaque (daemon.cpp)

private:
    std::unique_ptr<Impl> impl_;
};

// The declared topology as the daemon loads it (file reads happen here).
struct Topology {
    std::shared_ptr<const Plan> plan;          // null when no topology is configured
    std::shared_ptr<const NodeNameMap> names;  // null when no node_name_map is configured
    std::shared_ptr<const WaiverSet> waivers;  // null when no waivers file is configured
};
Topology load_topology(const DaemonConfig& c);
// The bearer token from c.token_file (surrounding whitespace trimmed); nullopt when none is
// configured. InputError for an unreadable or empty file.
std::optional<std::string> load_token(const DaemonConfig& c);

}  // namespace ibf
