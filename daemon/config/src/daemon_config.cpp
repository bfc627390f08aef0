// Parses ibfabricd.yaml (see docs/daemon.md).
#include "ibf/daemon_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <limits>
#include <tuple>

#include "ibf/error.h"
#include "ibf/suggest.h"

namespace ibf {
namespace {

struct Ctx {
    const std::string& file;
    std::filesystem::path dir;

    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
        const YAML::Mark m = n.Mark();
        if (m.is_null()) throw InputError(file, 0, 0, msg);
        throw InputError(file, m.line + 1, m.column + 1, msg);
    }

    std::string scalar(const YAML::Node& n, const std::string& key) const {
        if (!n.IsScalar()) fail(n, "'" + key + "' must be a scalar");
        return n.Scalar();
    }

    std::string path(const YAML::Node& n, const std::string& key) const {
        std::string s = scalar(n, key);
        if (s.empty() || n.Tag() == "tag:yaml.org,2002:null" || s == "~" || s == "null") return "";
        std::filesystem::path p(s);
        if (p.is_relative() && !dir.empty()) p = dir / p;
        return p.lexically_normal().string();
    }

    uint64_t unsigned_value(const YAML::Node& n, const std::string& key, uint64_t max, int base = 10) const {
        std::string s = scalar(n, key);
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
        if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > max)
            fail(n, "'" + key + "' must be an integer from 0 to " + std::to_string(max) +
                        (base == 8 ? " in octal" : "") + ", got '" + s + "'");
        return v;
    }

    bool boolean(const YAML::Node& n, const std::string& key) const {
        std::string s = scalar(n, key);
        if (s == "true" || s == "yes" || s == "on") return true;
        if (s == "false" || s == "no" || s == "off") return false;
        fail(n, "'" + key + "' must be true or false, got '" + s + "'");
    }

    int int_value(const YAML::Node& n, const std::string& key, int lo, int hi) const {
        const uint64_t v = unsigned_value(n, key, static_cast<uint64_t>(hi));
        if (v < static_cast<uint64_t>(lo))
            fail(n, "'" + key + "' must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                        ", got '" + n.Scalar() + "'");
        return static_cast<int>(v);
    }

    Guid guid(const YAML::Node& n, const std::string& key) const {
        std::string s = scalar(n, key);
        std::string_view d = s;
        if (d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) d.remove_prefix(2);
        Guid g = 0;
        auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), g, 16);
        if (d.empty() || d.size() > 16 || ec != std::errc() || p != d.data() + d.size() || g == 0)
            fail(n, "'" + key + "' must be a port GUID such as 0x0002c90300a1b2c3, got '" + s + "'");
        return g;
    }
};

// `socket_users`: one user (name or uid) or a list of them; names are looked up at start.
std::vector<std::string> parse_socket_users(const Ctx& ctx, const YAML::Node& v) {
    std::vector<YAML::Node> items;
    if (v.IsSequence())
        for (const auto& n : v) items.push_back(n);
    else
        items.push_back(v);
    if (items.empty() || items.size() > 64) ctx.fail(v, "'socket_users' must name 1 to 64 users (names or uids)");
    std::vector<std::string> out;
    for (const YAML::Node& n : items) {
        std::string u = ctx.scalar(n, "socket_users");
        const bool ok = !u.empty() && u.size() <= 32 && u[0] != '-' &&
                        std::all_of(u.begin(), u.end(), [](unsigned char ch) {
                            return std::isalnum(ch) || ch == '_' || ch == '-' || ch == '.';
                        });
        if (!ok) ctx.fail(n, "'socket_users': '" + u + "' is not a user name or uid");
        out.push_back(std::move(u));
    }
    return out;
}

// The `ha:` section (docs/daemon.md, "ha"; docs/ha.md explains each default).
void parse_ha(const Ctx& ctx, const YAML::Node& v, DaemonConfig& c) {
    if (!v.IsMap()) ctx.fail(v, "'ha' must be a mapping");
    ha::HaConfig& h = c.ha;
    h.mode = ha::Mode::monitor;  // a present `ha:` section monitors unless it says otherwise
    for (const auto& kv : v) {
        const std::string k = kv.first.Scalar();
        const YAML::Node& n = kv.second;
        const std::string key = "ha." + k;
        if (k == "mode") {
            const std::string m = ctx.scalar(n, key);
            if (m == "off") h.mode = ha::Mode::off;
            else if (m == "monitor") h.mode = ha::Mode::monitor;
            else if (m == "act") h.mode = ha::Mode::act;
            else ctx.fail(n, "'ha.mode' must be off, monitor or act, got '" + m + "'");
        } else if (k == "local_sm") {
            h.local_sm = ctx.scalar(n, key) == "auto" ? 0 : ctx.guid(n, key);
        } else if (k == "mad_ca") {
            h.mad_ca = ctx.scalar(n, key);
        } else if (k == "mad_port") {
            h.mad_port = ctx.int_value(n, key, 0, 254);
        } else if (k == "poll_ms") {
            h.poll_ms = ctx.int_value(n, key, 10, 60000);
        } else if (k == "mad_timeout_ms") {
            h.mad_timeout_ms = ctx.int_value(n, key, 1, 10000);
        } else if (k == "heartbeat_timeout_ms") {
            h.heartbeat_timeout_ms = ctx.int_value(n, key, 50, 600000);
        } else if (k == "fast_failures") {
            h.fast_failures = ctx.int_value(n, key, 1, 1000);
        } else if (k == "slow_failures") {
            h.slow_failures = ctx.int_value(n, key, 1, 100000);
        } else if (k == "slow_min_ms") {
            h.slow_min_ms = ctx.int_value(n, key, 0, 3600000);
        } else if (k == "promote_with") {
            const std::string m = ctx.scalar(n, key);
            if (m == "auto") h.promote_with = 0;
            else if (m == "handover") h.promote_with = ha::kSmInfoHandover;
            else if (m == "discover") h.promote_with = ha::kSmInfoDiscover;
            else ctx.fail(n, "'ha.promote_with' must be auto, handover or discover, got '" + m + "'");
        } else if (k == "promote_timeout_ms") {
            h.promote_timeout_ms = ctx.int_value(n, key, 100, 600000);
        } else if (k == "retry_after_ms") {
            h.retry_after_ms = ctx.int_value(n, key, 0, 3600000);
        } else if (k == "fence") {
            if (!n.IsSequence()) ctx.fail(n, "'ha.fence' must be a list: the command and its arguments (no shell)");
            h.fence.clear();
            for (const auto& a : n) h.fence.push_back(ctx.scalar(a, key));
            if (!h.fence.empty() && (h.fence[0].empty() || h.fence[0][0] != '/'))
                ctx.fail(n, "'ha.fence' must start with an absolute program path, got '" + h.fence[0] + "'");
        } else if (k == "fence_timeout_ms") {
            h.fence_timeout_ms = ctx.int_value(n, key, 100, 600000);
        } else if (k == "stall_ms") {
            h.stall_ms = ctx.int_value(n, key, 1000, 86400000);
        } else if (k == "flap_window_ms") {
            h.flap_window_ms = ctx.int_value(n, key, 0, 600000);
        } else if (k == "sweep_timeout_ms") {
            h.sweep_timeout_ms = ctx.int_value(n, key, 1000, 86400000);
        } else if (k == "heal_attempts") {
            h.heal_attempts = ctx.int_value(n, key, 0, 100);
        } else if (k == "guid2lid_file") {
            h.guid2lid_file = ctx.path(n, key);
        } else if (k == "track_file") {
            h.track_file = ctx.path(n, key);
        } else if (k == "opensm_conf") {
            h.opensm_conf = ctx.path(n, key);
        } else if (k == "sm_helper") {
            h.sm_helper = ctx.path(n, key);
        } else if (k == "agents") {
            if (!n.IsSequence()) ctx.fail(n, "'ha.agents' must be a list of URLs (http://host:port)");
            for (const auto& a : n) {
                std::string u = ctx.scalar(a, key);
                if (u.rfind("http://", 0) != 0) ctx.fail(a, "'ha.agents' entries must start with http://, got '" + u + "'");
                c.ha_agents.push_back(u);
            }
        } else if (k == "expect") {
            if (!n.IsMap()) ctx.fail(n, "'ha.expect' must be a mapping (sms, priorities)");
            for (const auto& ek : n) {
                const std::string e = ek.first.Scalar();
                if (e == "sms") {
                    if (!ek.second.IsSequence()) ctx.fail(ek.second, "'ha.expect.sms' must be a list of port GUIDs");
                    for (const auto& g : ek.second) h.expected_sms.push_back(ctx.guid(g, "ha.expect.sms"));
                } else if (e == "priorities") {
                    if (!ek.second.IsMap()) ctx.fail(ek.second, "'ha.expect.priorities' must map port GUIDs to 0..15");
                    for (const auto& pk : ek.second)
                        h.expected_priorities[ctx.guid(pk.first, "ha.expect.priorities")] =
                            ctx.int_value(pk.second, "ha.expect.priorities", 0, 15);
                } else {
                    ctx.fail(ek.first, unknown_key("ha.expect.", e, {"sms", "priorities"}));
                }
            }
        } else {
            ctx.fail(kv.first, unknown_key("ha.", k,
                                           {"mode", "local_sm", "mad_ca", "mad_port", "poll_ms", "mad_timeout_ms",
                                            "heartbeat_timeout_ms", "fast_failures", "slow_failures", "slow_min_ms",
                                            "promote_with", "promote_timeout_ms", "retry_after_ms", "fence",
                                            "fence_timeout_ms", "stall_ms", "flap_window_ms", "sweep_timeout_ms",
                                            "heal_attempts", "guid2lid_file", "track_file", "opensm_conf", "sm_helper",
                                            "agents", "expect"}));
        }
    }
    if (h.slow_failures < h.fast_failures)
        ctx.fail(v, "'ha.slow_failures' (" + std::to_string(h.slow_failures) + ") must be at least 'ha.fast_failures' (" +
                        std::to_string(h.fast_failures) + ")");
    if (h.mad_timeout_ms > h.poll_ms * 10)
        ctx.fail(v, "'ha.mad_timeout_ms' must be at most ten times 'ha.poll_ms'");
}

// health: {stale_after_s, flap_threshold, flap_window_s, flap_quiet_s, forget_sm_after_s} (docs/daemon.md).
void parse_health(const Ctx& ctx, const YAML::Node& v, DaemonConfig& c) {
    if (!v.IsMap()) ctx.fail(v, "'health' must be a mapping");
    for (const auto& hk : v) {
        const std::string k = hk.first.Scalar();
        uint32_t* field = k == "stale_after_s"    ? &c.stale_after_s
                          : k == "flap_threshold" ? &c.flap_threshold
                          : k == "flap_window_s"  ? &c.flap_window_s
                          : k == "flap_quiet_s"   ? &c.flap_quiet_s
                          : k == "forget_sm_after_s" ? &c.forget_sm_after_s
                                                  : nullptr;
        if (!field)
            ctx.fail(hk.first, unknown_key("health.", k,
                                           {"stale_after_s", "flap_threshold", "flap_window_s", "flap_quiet_s",
                                            "forget_sm_after_s"}));
        const uint64_t max = k == "flap_threshold" ? 1000 : 7 * 86400;
        const uint64_t n = ctx.unsigned_value(hk.second, k, max);
        const uint64_t min = k == "flap_threshold" ? 2 : 1;
        if (n < min) ctx.fail(hk.second, "'health." + k + "' must be at least " + std::to_string(min));
        *field = static_cast<uint32_t>(n);
    }
}

// counters: {window_s, <counter>: N | off} (docs/daemon.md, "counters"): N is the largest increase
// of that port counter within the window that raises no port_errors finding; off = not watched.
void parse_counters(const Ctx& ctx, const YAML::Node& v, DaemonConfig& c) {
    if (!v.IsMap()) ctx.fail(v, "'counters' must be a mapping");
    for (const auto& ck : v) {
        const std::string k = ck.first.Scalar();
        if (k == "window_s") {
            const uint64_t n = ctx.unsigned_value(ck.second, k, 7 * 86400);
            if (n < 1) ctx.fail(ck.second, "'counters.window_s' must be at least 1");
            c.port_errors.window_ms = static_cast<int64_t>(n) * 1000;
            continue;
        }
        size_t idx = wire::kPortCounterCount;
        std::vector<std::string> names{"window_s"};
        for (size_t i = 0; i < wire::kPortCounterCount; ++i) {
            const auto name = wire::to_string(static_cast<wire::PortCounter>(i));
            if (name == k) idx = i;
            names.emplace_back(name);
        }
        if (idx == wire::kPortCounterCount) ctx.fail(ck.first, unknown_key("counters.", k, names));
        if (ck.second.IsScalar() && ck.second.Scalar() == "off")
            c.port_errors.max_per_window[idx].reset();
        else
            c.port_errors.max_per_window[idx] = ctx.unsigned_value(ck.second, k, UINT64_MAX);
    }
}

}  // namespace

void validate_socket_mode(unsigned mode, const std::string& file, int line, int column) {
    if (mode > 0777)
        throw InputError(file, line, column, "socket_mode must be permission bits (at most 0777)");
    if (mode & 0007)
        throw InputError(file, line, column,
                         "socket_mode must not give any access to others (world): use e.g. 0660");
}

std::string http_exposure_warning(const DaemonConfig& c) {
    const std::string& a = c.http_bind;
    const bool loopback = a.rfind("127.", 0) == 0 || a == "::1" || a.rfind("::ffff:127.", 0) == 0;
    if (loopback || !c.token_file.empty()) return "";
    return "http: the API listens on " + a + " (beyond loopback) and no token_file is configured: anyone who can "
           "reach port " + std::to_string(c.http_port) + " reads the fabric and its findings; set token_file and "
           "token_for_reads: true, or bind 127.0.0.1 behind a reverse proxy (docs/security.md)";
}

void parse_host_port(std::string_view s, std::string& host, uint16_t& port, const std::string& what) {
    std::string_view h, p;
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
            throw InputError("", 0, 0, what + ": expected [address]:port, got '" + std::string(s) + "'");
        h = s.substr(1, close - 1);
        p = s.substr(close + 2);
    } else if (auto colon = s.rfind(':'); colon != std::string_view::npos) {
        h = s.substr(0, colon);
        p = s.substr(colon + 1);
    } else {
        p = s;
    }
    unsigned v = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || v > 65535)
        throw InputError("", 0, 0, what + ": expected host:port with a port from 0 to 65535, got '" +
                                       std::string(s) + "'");
    if (!h.empty()) host = std::string(h);
    port = static_cast<uint16_t>(v);
}

// `history: {path, retention_days, max_sweeps}` (the short form `history: FILE` is the path).
template <class Ctx>
void parse_history(Ctx& ctx, const YAML::Node& v, DaemonConfig& c) {
    for (const auto& hk : v) {
        const std::string k = hk.first.Scalar();
        if (k == "path") c.history_db = ctx.path(hk.second, "history.path");
        else if (k == "retention_days") c.history_retention_days = static_cast<uint32_t>(ctx.unsigned_value(hk.second, k, 36500));
        else if (k == "max_sweeps") c.history_max_sweeps = ctx.unsigned_value(hk.second, k, uint64_t{1} << 40);
        else ctx.fail(hk.first, unknown_key("history.", k, {"path", "retention_days", "max_sweeps"}));
    }
    if (c.history_db.empty()) ctx.fail(v, "'history' needs 'path' (the SQLite file)");
}

namespace {

template <auto Member>
bool same(const DaemonConfig& a, const DaemonConfig& b) {
    return a.*Member == b.*Member;
}

bool same_ha(const DaemonConfig& a, const DaemonConfig& b) {
    auto tie = [](const ha::HaConfig& h) {
        return std::tie(h.mode, h.local_sm, h.mad_ca, h.mad_port, h.poll_ms, h.mad_timeout_ms, h.heartbeat_timeout_ms,
                        h.fast_failures, h.flap_window_ms, h.slow_failures, h.slow_min_ms, h.promote_with,
                        h.promote_timeout_ms, h.retry_after_ms, h.fence, h.fence_timeout_ms, h.stall_ms,
                        h.sweep_timeout_ms, h.heal_attempts, h.guid2lid_file, h.track_file, h.opensm_conf,
                        h.expected_sms, h.expected_priorities);
    };
    return tie(a.ha) == tie(b.ha) && a.ha_agents == b.ha_agents;
}

bool same_counters(const DaemonConfig& a, const DaemonConfig& b) {
    return a.port_errors.window_ms == b.port_errors.window_ms &&
           a.port_errors.max_per_window == b.port_errors.max_per_window;
}

// What ibfabricd reads only at start: sockets, listeners, limits, history, HA, health, counters.
struct StartOnlyKey {
    const char* name;
    bool (*same)(const DaemonConfig&, const DaemonConfig&);
};
const StartOnlyKey kStartOnly[] = {
    {"socket", same<&DaemonConfig::socket_path>},
    {"socket_mode", same<&DaemonConfig::socket_mode>},
    {"socket_users", same<&DaemonConfig::socket_users>},
    {"tcp", same<&DaemonConfig::tcp_bind>},
    {"tcp", same<&DaemonConfig::tcp_port>},
    {"tcp_key_file", same<&DaemonConfig::tcp_key_file>},
    {"http", same<&DaemonConfig::http_bind>},
    {"http", same<&DaemonConfig::http_port>},
    {"history", same<&DaemonConfig::history_db>},
    {"history", same<&DaemonConfig::history_retention_days>},
    {"history", same<&DaemonConfig::history_max_sweeps>},
    {"limits.max_message_bytes", same<&DaemonConfig::max_message_bytes>},
    {"limits.max_request_bytes", same<&DaemonConfig::max_request_bytes>},
    {"limits.max_plugin_connections", same<&DaemonConfig::max_plugin_connections>},
    {"limits.max_pre_hello_per_source", same<&DaemonConfig::max_pre_hello_per_source>},
    {"limits.max_http_connections", same<&DaemonConfig::max_http_connections>},
    {"limits.hello_timeout_ms", same<&DaemonConfig::hello_timeout_ms>},
    {"limits.stale_connection_ms", same<&DaemonConfig::stale_connection_ms>},
    {"limits.http_header_timeout_ms", same<&DaemonConfig::http_header_timeout_ms>},
    {"limits.max_history_bytes", same<&DaemonConfig::max_history_bytes>},
    {"ha", same_ha},
    {"health", same<&DaemonConfig::stale_after_s>},
    {"health", same<&DaemonConfig::flap_threshold>},
    {"health", same<&DaemonConfig::flap_window_s>},
    {"health", same<&DaemonConfig::flap_quiet_s>},
    {"health", same<&DaemonConfig::forget_sm_after_s>},
    {"counters", same_counters},
    {"metrics.per_link", same<&DaemonConfig::metrics_all_links>},
};

}  // namespace

std::vector<std::string> keys_needing_restart(const DaemonConfig& running, const DaemonConfig& next) {
    std::vector<std::string> out;
    for (const StartOnlyKey& k : kStartOnly)
        if (!k.same(running, next) && (out.empty() || out.back() != k.name)) out.push_back(k.name);
    return out;
}

unsigned route_threads_for(unsigned configured, unsigned cores) {
    if (configured) return configured;
    return std::clamp(cores, 1u, 4u);
}

DaemonConfig parse_daemon_config(std::string_view text, const std::string& file) {
    DaemonConfig c;
    c.source = file;
    Ctx ctx{file, std::filesystem::path(file).parent_path()};
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                         e.msg);
    }
    if (!root || root.IsNull()) return c;  // empty file: all defaults
    if (!root.IsMap()) ctx.fail(root, "the daemon config must be a mapping of keys (see docs/daemon.md)");

    for (const auto& kv : root) {
        const std::string key = kv.first.Scalar();
        const YAML::Node& v = kv.second;
        try {
            if (key == "socket") {
                c.socket_path = ctx.path(v, key);
                if (c.socket_path.empty()) ctx.fail(v, "'socket' must name a path");
            } else if (key == "socket_mode") {
                c.socket_mode = static_cast<unsigned>(ctx.unsigned_value(v, key, 07777, 8));
                const YAML::Mark m = v.Mark();
                validate_socket_mode(c.socket_mode, file, m.line + 1, m.column + 1);
            } else if (key == "socket_users") {
                c.socket_users = parse_socket_users(ctx, v);
            } else if (key == "tcp") {
                std::string s = ctx.scalar(v, key);
                if (s.empty() || s == "~" || s == "null") {
                    c.tcp_bind.clear();
                } else {
                    c.tcp_bind = "0.0.0.0";
                    parse_host_port(s, c.tcp_bind, c.tcp_port, "'tcp'");
                }
            } else if (key == "tcp_key_file") {
                c.tcp_key_file = ctx.path(v, key);
            } else if (key == "http") {
                parse_host_port(ctx.scalar(v, key), c.http_bind, c.http_port, "'http'");
            } else if (key == "topology") {
                c.topology = ctx.path(v, key);
            } else if (key == "node_name_map") {
                c.node_name_map = ctx.path(v, key);
            } else if (key == "waivers") {
                c.waivers = ctx.path(v, key);
            } else if (key == "history" && v.IsMap()) {
                parse_history(ctx, v, c);
            } else if (key == "history") {
                c.history_db = ctx.path(v, key);
            } else if (key == "token_file") {
                c.token_file = ctx.path(v, key);
            } else if (key == "token_for_reads") {
                c.token_for_reads = ctx.boolean(v, key);
            } else if (key == "log_level") {
                std::string s = ctx.scalar(v, key);
                if (s != "trace" && s != "debug" && s != "info" && s != "warn" && s != "error" && s != "off")
                    ctx.fail(v, "'log_level' must be one of trace, debug, info, warn, error, off");
                c.log_level = s;
            } else if (key == "limits") {
                if (!v.IsMap()) ctx.fail(v, "'limits' must be a mapping");
                for (const auto& lk : v) {
                    const std::string k = lk.first.Scalar();
                    if (k == "max_plugin_connections" || k == "max_http_connections" ||
                        k == "max_pre_hello_per_source") {
                        size_t n = ctx.unsigned_value(lk.second, k, 100000);
                        if (n < 1) ctx.fail(lk.second, "'limits." + k + "' must be at least 1");
                        (k == "max_plugin_connections" ? c.max_plugin_connections
                         : k == "max_http_connections" ? c.max_http_connections
                                                       : c.max_pre_hello_per_source) = n;
                        continue;
                    }
                    if (k == "http_header_timeout_ms") {
                        c.http_header_timeout_ms = static_cast<unsigned>(ctx.unsigned_value(lk.second, k, 600000));
                        if (c.http_header_timeout_ms < 100) ctx.fail(lk.second, "'limits." + k + "' must be at least 100");
                        continue;
                    }
                    if (k == "max_history_bytes") {
                        c.max_history_bytes = ctx.unsigned_value(lk.second, k, size_t{1} << 30);
                        if (c.max_history_bytes < 65536) ctx.fail(lk.second, "'limits." + k + "' must be at least 65536");
                        continue;
                    }
                    if (k == "hello_timeout_ms" || k == "stale_connection_ms") {
                        const bool hello = k == "hello_timeout_ms";
                        const uint64_t lo = hello ? 100 : 1000;
                        const uint64_t n = ctx.unsigned_value(lk.second, k, 3600000);
                        if (n < lo) ctx.fail(lk.second, "'limits." + k + "' must be at least " + std::to_string(lo));
                        (hello ? c.hello_timeout_ms : c.stale_connection_ms) = static_cast<int64_t>(n);
                        continue;
                    }
                    if (k == "max_message_bytes")
                        c.max_message_bytes = ctx.unsigned_value(lk.second, k, std::numeric_limits<uint32_t>::max());
                    else if (k == "max_request_bytes")
                        c.max_request_bytes = ctx.unsigned_value(lk.second, k, 64u << 20);
                    else
                        ctx.fail(lk.first, unknown_key("limits.", k,
                                                       {"max_message_bytes", "max_request_bytes",
                                                        "max_plugin_connections", "max_pre_hello_per_source",
                                                        "max_http_connections", "hello_timeout_ms",
                                                        "stale_connection_ms", "http_header_timeout_ms",
                                                        "max_history_bytes"}));
                    if ((k == "max_message_bytes" ? c.max_message_bytes : c.max_request_bytes) < 1024)
                        ctx.fail(lk.second, "'limits." + k + "' must be at least 1024");
                }
            } else if (key == "ha") {
                parse_ha(ctx, v, c);
            } else if (key == "checks") {
                if (!v.IsMap()) ctx.fail(v, "'checks' must be a mapping");
                for (const auto& ck : v) {
                    const std::string k = ck.first.Scalar();
                    if (k == "rate_below_capability")
                        c.check_rate_below_capability = ctx.boolean(ck.second, k);
                    else if (k == "route_threads")
                        c.route_threads = static_cast<unsigned>(ctx.unsigned_value(ck.second, k, 64));
                    else
                        ctx.fail(ck.first, unknown_key("checks.", k, {"rate_below_capability", "route_threads"}));
                }
            } else if (key == "health") {
                parse_health(ctx, v, c);
            } else if (key == "counters") {
                parse_counters(ctx, v, c);
            } else if (key == "metrics") {
                if (!v.IsMap()) ctx.fail(v, "'metrics' must be a mapping");
                for (const auto& mk : v) {
                    const std::string k = mk.first.Scalar();
                    if (k != "per_link") ctx.fail(mk.first, unknown_key("metrics.", k, {"per_link"}));
                    const std::string val = mk.second.IsScalar() ? mk.second.Scalar() : "";
                    if (val != "deviating" && val != "all")
                        ctx.fail(mk.second, "'metrics.per_link' must be deviating or all");
                    c.metrics_all_links = val == "all";
                }
            } else {
                ctx.fail(kv.first, unknown_key("", key,
                                               {"socket", "socket_mode", "socket_users", "tcp", "tcp_key_file", "http",
                                                "topology", "node_name_map", "waivers", "history", "token_file",
                                                "token_for_reads", "log_level", "limits", "checks", "health",
                                                "counters", "metrics", "ha"}));
            }
        } catch (const InputError& e) {
            if (!e.file().empty()) throw;
            // parse_host_port does not know where it is: add the position.
            ctx.fail(v, e.message());
        }
    }
    if (c.token_for_reads && c.token_file.empty())
        throw InputError(file, 0, 0, "token_for_reads needs a token_file (the token the readers must send)");
    return c;
}

}  // namespace ibf
