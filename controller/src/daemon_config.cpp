// Parses ibfabricd.yaml (see docs/daemon.md).
#include "ibf/daemon_config.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <limits>

#include "ibf/error.h"

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
};

// health: {stale_after_s, flap_threshold, flap_window_s, flap_quiet_s} (docs/daemon.md).
void parse_health(const Ctx& ctx, const YAML::Node& v, DaemonConfig& c) {
    if (!v.IsMap()) ctx.fail(v, "'health' must be a mapping");
    for (const auto& hk : v) {
        const std::string k = hk.first.Scalar();
        uint32_t* field = k == "stale_after_s"    ? &c.stale_after_s
                          : k == "flap_threshold" ? &c.flap_threshold
                          : k == "flap_window_s"  ? &c.flap_window_s
                          : k == "flap_quiet_s"   ? &c.flap_quiet_s
                                                  : nullptr;
        if (!field)
            ctx.fail(hk.first, "unknown key 'health." + k +
                                   "' (expected stale_after_s, flap_threshold, flap_window_s, flap_quiet_s)");
        const uint64_t max = k == "flap_threshold" ? 1000 : 7 * 86400;
        const uint64_t n = ctx.unsigned_value(hk.second, k, max);
        const uint64_t min = k == "flap_threshold" ? 2 : 1;
        if (n < min) ctx.fail(hk.second, "'health." + k + "' must be at least " + std::to_string(min));
        *field = static_cast<uint32_t>(n);
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
            } else if (key == "tcp") {
                std::string s = ctx.scalar(v, key);
                if (s.empty() || s == "~" || s == "null") {
                    c.tcp_bind.clear();
                } else {
                    c.tcp_bind = "0.0.0.0";
                    parse_host_port(s, c.tcp_bind, c.tcp_port, "'tcp'");
                }
            } else if (key == "http") {
                parse_host_port(ctx.scalar(v, key), c.http_bind, c.http_port, "'http'");
            } else if (key == "topology") {
                c.topology = ctx.path(v, key);
            } else if (key == "node_name_map") {
                c.node_name_map = ctx.path(v, key);
            } else if (key == "history") {
                c.history_db = ctx.path(v, key);
            } else if (key == "token_file") {
                c.token_file = ctx.path(v, key);
            } else if (key == "log_level") {
                std::string s = ctx.scalar(v, key);
                if (s != "trace" && s != "debug" && s != "info" && s != "warn" && s != "error" && s != "off")
                    ctx.fail(v, "'log_level' must be one of trace, debug, info, warn, error, off");
                c.log_level = s;
            } else if (key == "limits") {
                if (!v.IsMap()) ctx.fail(v, "'limits' must be a mapping");
                for (const auto& lk : v) {
                    const std::string k = lk.first.Scalar();
                    if (k == "max_plugin_connections" || k == "max_http_connections") {
                        size_t n = ctx.unsigned_value(lk.second, k, 100000);
                        if (n < 1) ctx.fail(lk.second, "'limits." + k + "' must be at least 1");
                        (k == "max_plugin_connections" ? c.max_plugin_connections : c.max_http_connections) = n;
                        continue;
                    }
                    if (k == "max_message_bytes")
                        c.max_message_bytes = ctx.unsigned_value(lk.second, k, std::numeric_limits<uint32_t>::max());
                    else if (k == "max_request_bytes")
                        c.max_request_bytes = ctx.unsigned_value(lk.second, k, 64u << 20);
                    else
                        ctx.fail(lk.first, "unknown key 'limits." + k +
                                               "' (expected max_message_bytes, max_request_bytes, "
                                               "max_plugin_connections, max_http_connections)");
                    if ((k == "max_message_bytes" ? c.max_message_bytes : c.max_request_bytes) < 1024)
                        ctx.fail(lk.second, "'limits." + k + "' must be at least 1024");
                }
            } else if (key == "checks") {
                if (!v.IsMap()) ctx.fail(v, "'checks' must be a mapping");
                for (const auto& ck : v) {
                    const std::string k = ck.first.Scalar();
                    if (k == "rate_below_capability")
                        c.check_rate_below_capability = ctx.boolean(ck.second, k);
                    else
                        ctx.fail(ck.first, "unknown key 'checks." + k + "' (expected rate_below_capability)");
                }
            } else if (key == "health") {
                parse_health(ctx, v, c);
            } else {
                ctx.fail(kv.first, "unknown key '" + key +
                                       "' (expected socket, socket_mode, tcp, http, topology, node_name_map, "
                                       "history, token_file, log_level, limits, checks, health)");
            }
        } catch (const InputError& e) {
            if (!e.file().empty()) throw;
            // parse_host_port does not know where it is: add the position.
            ctx.fail(v, e.message());
        }
    }
    return c;
}

}  // namespace ibf
