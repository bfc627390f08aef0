// ibfabricd.yaml parsing: defaults, every key, relative paths, errors with file:line:column.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "ibf/daemon_fixture.h"
#include "ibf/daemon_config.h"
#include "ibf/error.h"

using namespace ibf;

namespace {

std::string error_of(const std::string& text, const std::string& file = "/etc/ibfabric/ibfabricd.yaml") {
    try {
        parse_daemon_config(text, file);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(ControllerConfig, EmptyFileGivesDefaults) {
    DaemonConfig c = parse_daemon_config("", "x.yaml");
    EXPECT_EQ(c.socket_path, "/run/ibfabric/osm.sock");
    EXPECT_EQ(c.socket_mode, 0660u);
    EXPECT_EQ(c.http_bind, "127.0.0.1");
    EXPECT_EQ(c.http_port, 8639);
    EXPECT_TRUE(c.tcp_bind.empty());
    EXPECT_TRUE(c.topology.empty());
    EXPECT_TRUE(c.token_file.empty());
    EXPECT_TRUE(c.history_db.empty());
    EXPECT_TRUE(c.check_rate_below_capability);
    EXPECT_TRUE(c.tcp_key_file.empty());
    EXPECT_EQ(c.hello_timeout_ms, 5000);
    EXPECT_EQ(c.stale_connection_ms, 30000);
}

TEST(ControllerConfig, IngestLimitsAreRangeChecked) {
    EXPECT_EQ(error_of("limits:\n  hello_timeout_ms: 50\n", "c.yaml"), "c.yaml:2:21: 'limits.hello_timeout_ms' must be at least 100");
    EXPECT_EQ(error_of("limits:\n  stale_connection_ms: 10\n", "c.yaml"),
              "c.yaml:2:24: 'limits.stale_connection_ms' must be at least 1000");
    EXPECT_EQ(error_of("\nlimits:\n  hello_timeout_ms: soon\n", "c.yaml"),
              "c.yaml:3:21: 'hello_timeout_ms' must be an integer from 0 to 3600000, got 'soon'");
    EXPECT_EQ(error_of("tcp_key_file: [a]\n", "c.yaml"), "c.yaml:1:15: 'tcp_key_file' must be a scalar");
}

// issue 19 Deliver 3 and item 2: who may connect to the Unix socket, and the pre-Hello pool's
// per-source limit; both read only at start.
TEST(ControllerConfig, SocketUsersAndThePreHelloPerSourceLimit) {
    const DaemonConfig d = parse_daemon_config("", "c.yaml");
    EXPECT_TRUE(d.socket_users.empty());  // root and the daemon's own user
    EXPECT_EQ(d.max_pre_hello_per_source, 8u);
    DaemonConfig c = parse_daemon_config("socket_users: [root, opensm, 1001]\nlimits:\n  max_pre_hello_per_source: 3\n",
                                         "c.yaml");
    EXPECT_EQ(c.socket_users, (std::vector<std::string>{"root", "opensm", "1001"}));
    EXPECT_EQ(c.max_pre_hello_per_source, 3u);
    EXPECT_EQ(parse_daemon_config("socket_users: ibfabric\n", "c.yaml").socket_users,
              (std::vector<std::string>{"ibfabric"}));
    EXPECT_EQ(error_of("socket_users: []\n", "c.yaml"), "c.yaml:1:15: 'socket_users' must name 1 to 64 users (names or uids)");
    EXPECT_EQ(error_of("socket_users: [root, \"a b\"]\n", "c.yaml"),
              "c.yaml:1:22: 'socket_users': 'a b' is not a user name or uid");
    EXPECT_EQ(error_of("socket_users: [-1]\n", "c.yaml"), "c.yaml:1:16: 'socket_users': '-1' is not a user name or uid");
    EXPECT_EQ(error_of("socket_users: [[root]]\n", "c.yaml"), "c.yaml:1:16: 'socket_users' must be a scalar");
    EXPECT_EQ(error_of("limits:\n  max_pre_hello_per_source: 0\n", "c.yaml"),
              "c.yaml:2:29: 'limits.max_pre_hello_per_source' must be at least 1");
    EXPECT_EQ(keys_needing_restart(d, c),
              (std::vector<std::string>{"socket_users", "limits.max_pre_hello_per_source"}));
}

// A reload names the changed keys that only a restart applies (issue 19 item 5), each once, and
// none of those it applies (topology, log_level, token_for_reads).
TEST(ControllerConfig, KeysNeedingARestartAreNamedOnce) {
    const DaemonConfig running = parse_daemon_config("topology: a.yaml\n", "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_TRUE(keys_needing_restart(running, running).empty());
    const DaemonConfig next = parse_daemon_config(
        "topology: b.yaml\nlog_level: debug\nhttp: \"127.0.0.1:9000\"\nlimits:\n  max_http_connections: 8\n"
        "health:\n  stale_after_s: 60\n  flap_threshold: 5\n",
        "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_EQ(keys_needing_restart(running, next),
              (std::vector<std::string>{"http", "limits.max_http_connections", "health"}));
}

TEST(ControllerConfig, HealthDefaults) {
    DaemonConfig c = parse_daemon_config("", "x.yaml");
    EXPECT_EQ(c.stale_after_s, 30u);
    EXPECT_EQ(c.flap_threshold, 3u);
    EXPECT_EQ(c.flap_window_s, 600u);
    EXPECT_EQ(c.flap_quiet_s, 1800u);
}

TEST(ControllerConfig, HealthKeys) {
    DaemonConfig c = parse_daemon_config(
        "health:\n  stale_after_s: 90\n  flap_threshold: 5\n  flap_window_s: 300\n  flap_quiet_s: 3600\n", "x.yaml");
    EXPECT_EQ(c.stale_after_s, 90u);
    EXPECT_EQ(c.flap_threshold, 5u);
    EXPECT_EQ(c.flap_window_s, 300u);
    EXPECT_EQ(c.flap_quiet_s, 3600u);
    EXPECT_EQ(error_of("health:\n  flap_threshold: 1\n", "c.yaml"), "c.yaml:2:19: 'health.flap_threshold' must be at least 2");
    EXPECT_EQ(error_of("health:\n  stale_after_s: 0\n", "c.yaml"), "c.yaml:2:18: 'health.stale_after_s' must be at least 1");
    EXPECT_EQ(error_of("health:\n  stale_after: 5\n", "c.yaml"),
              "c.yaml:2:3: unknown key 'health.stale_after'; did you mean 'stale_after_s'? (expected one of: "
              "stale_after_s, flap_threshold, flap_window_s, flap_quiet_s, forget_sm_after_s)");
    EXPECT_EQ(error_of("health: 5\n", "c.yaml"), "c.yaml:1:9: 'health' must be a mapping");
}

TEST(ControllerConfig, ForgetSmAfterAndMetricsPerLink) {
    const DaemonConfig d = parse_daemon_config("", "x.yaml");
    EXPECT_EQ(d.forget_sm_after_s, 3600u);
    EXPECT_FALSE(d.metrics_all_links);
    const DaemonConfig c =
        parse_daemon_config("health:\n  forget_sm_after_s: 600\nmetrics:\n  per_link: all\n", "x.yaml");
    EXPECT_EQ(c.forget_sm_after_s, 600u);
    EXPECT_TRUE(c.metrics_all_links);
    EXPECT_EQ(error_of("metrics:\n  per_link: some\n", "c.yaml"),
              "c.yaml:2:13: 'metrics.per_link' must be deviating or all");
    EXPECT_EQ(error_of("metrics:\n  links: all\n", "c.yaml"), "c.yaml:2:3: unknown key 'metrics.links' (expected one of: per_link)");
    EXPECT_EQ(keys_needing_restart(d, c), (std::vector<std::string>{"health", "metrics.per_link"}));
}

TEST(ControllerConfig, EveryKeyAndRelativePaths) {
    const std::string text =
        "socket: /run/x/ibf.sock\n"
        "socket_mode: \"0600\"\n"
        "tcp: 0.0.0.0:8640\n"
        "tcp_key_file: keys/ingest.key\n"
        "http: 0.0.0.0:0\n"
        "topology: plans/cluster.yaml\n"
        "node_name_map: /etc/opensm/node-name-map\n"
        "history: history.db\n"
        "token_file: token\n"
        "log_level: debug\n"
        "limits:\n"
        "  max_message_bytes: 1048576\n"
        "  max_request_bytes: 65536\n"
        "  hello_timeout_ms: 250\n"
        "  stale_connection_ms: 9000\n"
        "checks:\n"
        "  rate_below_capability: false\n"
        "  route_threads: 3\n";
    DaemonConfig c = parse_daemon_config(text, "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_EQ(c.socket_path, "/run/x/ibf.sock");
    EXPECT_EQ(c.socket_mode, 0600u);
    EXPECT_EQ(c.tcp_bind, "0.0.0.0");
    EXPECT_EQ(c.tcp_port, 8640);
    EXPECT_EQ(c.tcp_key_file, "/etc/ibfabric/keys/ingest.key");
    EXPECT_EQ(c.hello_timeout_ms, 250);
    EXPECT_EQ(c.stale_connection_ms, 9000);
    EXPECT_EQ(c.http_bind, "0.0.0.0");
    EXPECT_EQ(c.http_port, 0);
    EXPECT_EQ(c.topology, "/etc/ibfabric/plans/cluster.yaml");
    EXPECT_EQ(c.node_name_map, "/etc/opensm/node-name-map");
    EXPECT_EQ(c.history_db, "/etc/ibfabric/history.db");
    EXPECT_EQ(c.token_file, "/etc/ibfabric/token");
    EXPECT_EQ(c.log_level, "debug");
    EXPECT_EQ(c.max_message_bytes, 1048576u);
    EXPECT_EQ(c.max_request_bytes, 65536u);
    EXPECT_FALSE(c.check_rate_below_capability);
    EXPECT_EQ(c.route_threads, 3u);
}

// checks.route_threads: 0 (the default) is min(4, cores); a set count is kept; 65 is refused.
TEST(ControllerConfig, RouteThreadsDefaultToTheCoresUpToFour) {
    EXPECT_EQ(parse_daemon_config("", "a.yaml").route_threads, 0u);
    EXPECT_EQ(route_threads_for(0, 0), 1u);  // hardware_concurrency() may not know
    EXPECT_EQ(route_threads_for(0, 2), 2u);
    EXPECT_EQ(route_threads_for(0, 64), 4u);
    EXPECT_EQ(route_threads_for(8, 2), 8u);
    EXPECT_THROW(parse_daemon_config("checks:\n  route_threads: 65\n", "a.yaml"), InputError);
}

TEST(ControllerConfig, UnquotedOctalModeAccepted) {
    EXPECT_EQ(parse_daemon_config("socket_mode: 0660\n", "a.yaml").socket_mode, 0660u);
    EXPECT_EQ(parse_daemon_config("socket_mode: 660\n", "a.yaml").socket_mode, 0660u);
}

TEST(ControllerConfig, WorldWritableSocketRefusedWithPosition) {
    EXPECT_EQ(error_of("http: 127.0.0.1:1\nsocket_mode: \"0666\"\n", "d.yaml"),
              "d.yaml:2:14: socket_mode must not give any access to others (world): use e.g. 0660");
    EXPECT_NE(error_of("socket_mode: 0777\n").find("ibfabricd.yaml:1:14"), std::string::npos);
    EXPECT_NE(error_of("socket_mode: 0969\n").find("in octal"), std::string::npos);
}

// The keys `limits:` takes, as an unknown one's message lists them.
const std::string kLimitKeys =
    "(expected one of: max_message_bytes, max_request_bytes, max_plugin_connections, max_pre_hello_per_source, "
    "max_http_connections, hello_timeout_ms, stale_connection_ms, http_header_timeout_ms, max_history_bytes)";

TEST(ControllerConfig, UnknownKeyNamesFileLineColumn) {
    const std::string e = error_of("socket: /tmp/a.sock\n\ntopolgy: plan.yaml\n", "cfg.yaml");
    EXPECT_EQ(e.rfind("cfg.yaml:3:1: unknown key 'topolgy'", 0), 0u) << e;
    EXPECT_EQ(error_of("limits:\n  max_messages: 5\n", "c.yaml"),
              "c.yaml:2:3: unknown key 'limits.max_messages' " + kLimitKeys);
    EXPECT_NE(error_of("checks:\n  rate_below_capability: maybe\n").find(":2:26: "), std::string::npos);
}

// The daemon config suggests the closest key as the plan reader and the waiver file do, in their
// one wording (ibf/suggest.h unknown_key), in every section, and says nothing when no key is close.
TEST(ControllerConfig, UnknownKeySuggestsTheClosestKeyOfItsSection) {
    const std::pair<std::string, std::string> cases[] = {  // {the file, its error}
        {"topolgy: plan.yaml\n",
         "c.yaml:1:1: unknown key 'topolgy'; did you mean 'topology'? (expected one of: socket, socket_mode, "
         "socket_users, tcp, tcp_key_file, http, topology, node_name_map, waivers, history, token_file, "
         "token_for_reads, log_level, limits, checks, health, counters, metrics, ha)"},
        {"history:\n  path: h.db\n  retension_days: 3\n",
         "c.yaml:3:3: unknown key 'history.retension_days'; did you mean 'retention_days'? (expected one of: path, "
         "retention_days, max_sweeps)"},
        {"ha:\n  pol_ms: 100\n",
         "c.yaml:2:3: unknown key 'ha.pol_ms'; did you mean 'poll_ms'? (expected one of: mode, local_sm, mad_ca, "
         "mad_port, poll_ms, mad_timeout_ms, heartbeat_timeout_ms, fast_failures, slow_failures, slow_min_ms, "
         "promote_with, promote_timeout_ms, retry_after_ms, fence, fence_timeout_ms, stall_ms, flap_window_ms, "
         "sweep_timeout_ms, heal_attempts, guid2lid_file, track_file, opensm_conf, sm_helper, agents, expect)"},
        {"ha:\n  expect:\n    sm: []\n",
         "c.yaml:3:5: unknown key 'ha.expect.sm'; did you mean 'sms'? (expected one of: sms, priorities)"},
        {"counters:\n  symbol_error: 5\n",
         "c.yaml:2:3: unknown key 'counters.symbol_error'; did you mean 'symbol_errors'? (expected one of: window_s, "
         "symbol_errors, link_error_recovery, link_downed, rcv_errors, rcv_remote_phys_errors, "
         "rcv_switch_relay_errors, xmit_discards, xmit_constraint_errors, rcv_constraint_errors, "
         "link_integrity_errors, excessive_buffer_overruns, vl15_dropped, xmit_wait, xmit_data, rcv_data, xmit_pkts, "
         "rcv_pkts)"},
        {"limits:\n  max_message_byte: 5000\n",
         "c.yaml:2:3: unknown key 'limits.max_message_byte'; did you mean 'max_message_bytes'? " + kLimitKeys},
        {"checks:\n  rate_below_capabilty: true\n",
         "c.yaml:2:3: unknown key 'checks.rate_below_capabilty'; did you mean 'rate_below_capability'? (expected "
         "one of: rate_below_capability, route_threads)"},
        {"metrics:\n  per_lnk: all\n",
         "c.yaml:2:3: unknown key 'metrics.per_lnk'; did you mean 'per_link'? (expected one of: per_link)"},
        {"health:\n  colour: 5\n",  // nothing close: no suggestion
         "c.yaml:2:3: unknown key 'health.colour' (expected one of: stale_after_s, flap_threshold, flap_window_s, "
         "flap_quiet_s, forget_sm_after_s)"},
    };
    for (const auto& [yaml, error] : cases) EXPECT_EQ(error_of(yaml, "c.yaml"), error) << yaml;
}

TEST(ControllerConfig, BadValuesNamePosition) {
    EXPECT_NE(error_of("http: localhost:99999\n", "c.yaml").find("c.yaml:1:7: 'http': expected host:port"),
              std::string::npos)
        << error_of("http: localhost:99999\n", "c.yaml");
    EXPECT_NE(error_of("log_level: loud\n", "c.yaml").find("c.yaml:1:12:"), std::string::npos);
    EXPECT_NE(error_of("socket: [a, b]\n", "c.yaml").find("c.yaml:1:9: 'socket' must be a scalar"), std::string::npos);
    EXPECT_NE(error_of("limits:\n  max_request_bytes: 10\n", "c.yaml").find("at least 1024"), std::string::npos);
    EXPECT_NE(error_of("- a\n- b\n", "c.yaml").find("c.yaml:1:1: the daemon config must be a mapping"),
              std::string::npos);
    // A YAML syntax error keeps yaml-cpp's position.
    const std::string syntax = error_of("socket: /a\nhttp: [1, 2\n", "c.yaml");
    EXPECT_EQ(syntax.rfind("c.yaml:", 0), 0u) << syntax;
}

TEST(ControllerConfig, HostPort) {
    std::string h = "127.0.0.1";
    uint16_t p = 1;
    parse_host_port(":0", h, p, "--http");
    EXPECT_EQ(h, "127.0.0.1");
    EXPECT_EQ(p, 0);
    parse_host_port("[::1]:8639", h, p, "--http");
    EXPECT_EQ(h, "::1");
    EXPECT_EQ(p, 8639);
    parse_host_port("9000", h, p, "--http");
    EXPECT_EQ(p, 9000);
    EXPECT_THROW(parse_host_port("host:", h, p, "--http"), InputError);
    EXPECT_THROW(parse_host_port("[::1]8639", h, p, "--http"), InputError);
}

TEST(ControllerConfig, ShippedExampleParsesAndNamesAnExistingTopology) {
    const std::string path = std::string(IBF_SOURCE_DIR) + "/config/examples/ibfabricd.yaml";
    const std::string text = ibf::test::read_file(path);
    ASSERT_FALSE(text.empty());
    DaemonConfig c = parse_daemon_config(text, path);
    EXPECT_EQ(c.socket_mode, 0660u);
    EXPECT_EQ(c.http_bind, "127.0.0.1");
    EXPECT_EQ(c.http_port, 8639);
    EXPECT_TRUE(std::filesystem::exists(c.topology)) << c.topology;
}

TEST(ControllerConfig, HardeningKeys) {
    DaemonConfig d = parse_daemon_config("", "x.yaml");
    EXPECT_FALSE(d.token_for_reads);
    EXPECT_EQ(d.http_header_timeout_ms, 10000u);
    EXPECT_EQ(d.max_history_bytes, 16u << 20);
    DaemonConfig c = parse_daemon_config("token_file: token\ntoken_for_reads: true\nlimits:\n  http_header_timeout_ms: 2500\n"
                                         "  max_history_bytes: 1048576\n",
                                         "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_TRUE(c.token_for_reads);
    EXPECT_EQ(c.http_header_timeout_ms, 2500u);
    EXPECT_EQ(c.max_history_bytes, 1048576u);
    EXPECT_EQ(error_of("token_for_reads: true\n"),
              "/etc/ibfabric/ibfabricd.yaml: token_for_reads needs a token_file (the token the readers must send)");
    EXPECT_EQ(error_of("limits:\n  http_header_timeout_ms: 5\n"),
              "/etc/ibfabric/ibfabricd.yaml:2:27: 'limits.http_header_timeout_ms' must be at least 100");
}

// The failure model's windows (docs/ha.md "Failure model") are configuration, range-checked.
TEST(ControllerConfig, HaFailureModelKeys) {
    const ha::HaConfig d = parse_daemon_config("ha:\n  mode: monitor\n", "x.yaml").ha;
    EXPECT_EQ(d.flap_window_ms, 1500);
    EXPECT_EQ(d.sweep_timeout_ms, 20000);
    EXPECT_EQ(d.heal_attempts, 3);
    const ha::HaConfig c =
        parse_daemon_config("ha:\n  mode: act\n  flap_window_ms: 2500\n  sweep_timeout_ms: 8000\n  heal_attempts: 1\n", "x.yaml").ha;
    EXPECT_EQ(c.flap_window_ms, 2500);
    EXPECT_EQ(c.sweep_timeout_ms, 8000);
    EXPECT_EQ(c.heal_attempts, 1);
    EXPECT_EQ(error_of("ha:\n  sweep_timeout_ms: 10\n", "c.yaml"),
              "c.yaml:2:21: 'ha.sweep_timeout_ms' must be an integer from 1000 to 86400000, got '10'");
    EXPECT_EQ(error_of("ha:\n  heal_attempts: many\n", "c.yaml"),
              "c.yaml:2:18: 'ha.heal_attempts' must be an integer from 0 to 100, got 'many'");
    EXPECT_NE(error_of("ha:\n  flap_window: 5\n", "c.yaml").find("flap_window_ms, sweep_timeout_ms, heal_attempts"),
              std::string::npos);
}

// ha.sm_helper: the root helper's socket, a path like the others (relative to the config's directory).
TEST(ControllerConfig, HaSmHelperIsAPath) {
    EXPECT_TRUE(parse_daemon_config("", "x.yaml").ha.sm_helper.empty());
    const DaemonConfig c = parse_daemon_config("ha:\n  mode: act\n  sm_helper: /run/ibfabric-sm-helper.sock\n", "/etc/ibfabric/ibfabricd.yaml");
    EXPECT_EQ(c.ha.sm_helper, "/run/ibfabric-sm-helper.sock");
    EXPECT_NE(error_of("ha:\n  sm_helpr: /x\n").find("opensm_conf, sm_helper, agents"), std::string::npos) << error_of("ha:\n  sm_helpr: /x\n");
}
