// ibfabricd: ingests OpenSM plugin snapshots, checks them against the declared topology and
// serves the findings over HTTP. Configuration: docs/daemon.md. Threads: docs/threading.md.
//
// Exit codes: 0 stopped by SIGTERM/SIGINT, 2 bad configuration or topology (file:line:column),
// 1 any other start-up failure (a socket that cannot be bound, an unwritable history file).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "ibf/daemon.h"
#include "ibf/error.h"
#include "ibf/inputs.h"

#ifndef IBF_VERSION
#define IBF_VERSION "0.1.0"
#endif

int main(int argc, char** argv) {
    CLI::App app{"ibfabricd: live fabric checks from OpenSM plugin snapshots, served over HTTP.", "ibfabricd"};
    app.footer("Example:\n  ibfabricd --config /etc/ibfabric/ibfabricd.yaml\n"
               "  ibfabricd --socket /tmp/osm.sock --http 127.0.0.1:0 --port-file /tmp/port --topology plan.yaml");
    std::string config_file, socket, http, tcp, tcp_key_file, topology, port_file, log_level, history;
    app.add_option("-c,--config", config_file, "YAML config file (docs/daemon.md)");
    app.add_option("--socket", socket, "Unix socket for plugin streams (overrides 'socket')");
    app.add_option("--http", http, "HTTP API address host:port, port 0 = ephemeral (overrides 'http')");
    app.add_option("--tcp", tcp, "also ingest on TCP host:port (overrides 'tcp')");
    app.add_option("--tcp-key-file", tcp_key_file,
                   "shared key file: TCP Hellos must carry its MAC (overrides 'tcp_key_file')");
    app.add_option("--topology", topology, "plan YAML or golden dump (overrides 'topology')");
    app.add_option("--history", history, "SQLite history file (overrides 'history')");
    app.add_option("--port-file", port_file, "write the bound HTTP port to this file");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off (overrides 'log_level')")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    app.set_version_flag("--version", IBF_VERSION);
    CLI11_PARSE(app, argc, argv);

    // Logs go to stderr (journald keeps them), one line per event.
    spdlog::set_default_logger(spdlog::stderr_color_mt("ibfabricd"));
    spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");

    try {
        // The config file, then the command line over it: at start and again on every reload.
        auto load_config = [&] {
            ibf::DaemonConfig cfg;
            if (!config_file.empty()) {
                cfg = ibf::parse_daemon_config(ibf::read_text_file(config_file, "config file", ibf::kMaxConfigFileBytes),
                                               config_file);
            }
            if (!socket.empty()) cfg.socket_path = socket;
            if (!http.empty()) ibf::parse_host_port(http, cfg.http_bind, cfg.http_port, "--http");
            if (!tcp.empty()) {
                cfg.tcp_bind = "0.0.0.0";
                ibf::parse_host_port(tcp, cfg.tcp_bind, cfg.tcp_port, "--tcp");
            }
            if (!tcp_key_file.empty()) cfg.tcp_key_file = tcp_key_file;
            if (!topology.empty()) cfg.topology = topology;
            if (!history.empty()) cfg.history_db = history;
            if (!log_level.empty()) cfg.log_level = log_level;
            return cfg;
        };
        const ibf::DaemonConfig cfg = load_config();
        spdlog::set_level(spdlog::level::from_str(cfg.log_level));

        ibf::Daemon d({.config = cfg, .port_file = port_file, .handle_signals = true, .reread_config = load_config});
        d.run();
        return 0;
    } catch (const ibf::InputError& e) {
        spdlog::critical("{}", e.what());
        return 2;
    } catch (const std::exception& e) {
        spdlog::critical("{}", e.what());
        return 1;
    }
}
