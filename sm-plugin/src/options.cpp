#include "ibf/osm_plugin_options.h"

#include <charconv>
#include <cstring>
#include <vector>

namespace ibf::osm {

std::string Endpoint::name() const {
    if (tcp()) return "tcp:" + tcp_host + ":" + std::to_string(tcp_port);
    return "unix:" + socket_path;
}

std::string Options::endpoint() const {
    std::string out;
    for (const Endpoint& e : endpoints) out += (out.empty() ? "" : ", ") + e.name();
    return out;
}

namespace {

std::optional<long> to_long(std::string_view v) {
    long x = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) return std::nullopt;
    return x;
}

}  // namespace

std::variant<Options, std::string> parse_options(const char* text) {
    Options o;
    if (!text) return o;
    std::string_view s(text);
    std::optional<Endpoint> sock;
    std::vector<Endpoint> tcps;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != ',') ++j;
        if (j == i) break;
        std::string_view item = s.substr(i, j - i);
        i = j;
        auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0)
            return "event_plugin_options: \"" + std::string(item) + "\" is not key=value";
        std::string_view key = item.substr(0, eq), val = item.substr(eq + 1);
        auto bad = [&](const char* why) {
            return "event_plugin_options: " + std::string(key) + "=\"" + std::string(val) + "\": " + why;
        };
        auto ranged = [&](long lo, long hi) -> std::optional<long> {
            auto x = to_long(val);
            if (!x || *x < lo || *x > hi) return std::nullopt;
            return x;
        };
        if (key == "socket") {
            if (val.empty() || val.size() >= 108) return bad("needs a path shorter than 108 bytes");
            if (sock) return bad("socket= may be given once (the local daemon); use tcp= for the others");
            sock = Endpoint{std::string(val), "", 0};
        } else if (key == "tcp") {
            auto colon = val.rfind(':');
            if (colon == std::string_view::npos || colon == 0) return bad("needs host:port");
            auto port = to_long(val.substr(colon + 1));
            if (!port || *port < 1 || *port > 65535) return bad("port must be 1..65535");
            Endpoint e{"", std::string(val.substr(0, colon)), static_cast<uint16_t>(*port)};
            for (const Endpoint& t : tcps)
                if (t.tcp_host == e.tcp_host && t.tcp_port == e.tcp_port) return bad("given twice");
            if (tcps.size() >= kMaxTcpEndpoints) return bad("at most 8 tcp= endpoints");
            tcps.push_back(std::move(e));
        } else if (key == "key_file") {
            if (val.empty() || val.front() != '/') return bad("needs an absolute path");
            o.key_file = std::string(val);
        } else if (key == "queue") {
            auto x = ranged(1, 65536);
            if (!x) return bad("must be an integer 1..65536");
            o.queue = static_cast<size_t>(*x);
        } else if (key == "log") {
            if (val == "error") o.log = LogLevel::error;
            else if (val == "warn") o.log = LogLevel::warn;
            else if (val == "info") o.log = LogLevel::info;
            else if (val == "debug") o.log = LogLevel::debug;
            else return bad("must be error, warn, info or debug");
        } else if (key == "heartbeat_ms") {
            auto x = ranged(100, 60000);
            if (!x) return bad("must be an integer 100..60000");
            o.heartbeat_ms = static_cast<int>(*x);
        } else if (key == "send_timeout_ms") {
            auto x = ranged(100, 600000);
            if (!x) return bad("must be an integer 100..600000");
            o.send_timeout_ms = static_cast<int>(*x);
        } else if (key == "backoff_max_ms") {
            auto x = ranged(10, 60000);
            if (!x) return bad("must be an integer 10..60000");
            o.backoff_max_ms = static_cast<int>(*x);
        } else if (key == "lft") {
            if (val == "1" || val == "true" || val == "on") o.lft = true;
            else if (val == "0" || val == "false" || val == "off") o.lft = false;
            else return bad("must be 1 or 0");
        } else if (key == "counters") {
            auto x = ranged(0, 1048576);
            if (!x) return bad("must be an integer 0..1048576 (0 = do not forward perfmgr counters)");
            o.counter_queue = static_cast<size_t>(*x);
        } else if (key == "wire") {
            if (val == "1") o.wire = 1;
            else if (val == "2") o.wire = 2;
            else return bad("must be 1 or 2 (1 = JSON snapshots, for daemons from before protocol version 2)");
        } else {
            return "event_plugin_options: unknown option \"" + std::string(key) +
                   "\" (known: socket, tcp, key_file, queue, log, heartbeat_ms, send_timeout_ms, backoff_max_ms, lft, "
                   "counters, wire)";
        }
    }
    // tcp= alone keeps its old meaning (no local socket); neither keeps the default socket.
    if (sock || !tcps.empty()) {
        o.endpoints.clear();
        if (sock) o.endpoints.push_back(std::move(*sock));
        for (Endpoint& e : tcps) o.endpoints.push_back(std::move(e));
    }
    return o;
}

std::optional<std::string> check_version(const char* running, const char* built) {
    if (!running || !built) return std::string("OpenSM version unknown");
    if (std::strcmp(running, built) != 0)
        return "built for \"" + std::string(built) + "\" but loaded into \"" + std::string(running) + "\"";
    return std::nullopt;
}

std::string rebuild_command(std::string_view opensm_exe) {
    std::string_view prefix = "/usr";
    if (!opensm_exe.empty() && opensm_exe.front() == '/') {
        std::string_view dir = opensm_exe.substr(0, opensm_exe.rfind('/'));  // /usr/sbin
        if (const size_t up = dir.rfind('/'); up != std::string_view::npos) {
            const std::string_view leaf = dir.substr(up + 1);
            if (leaf == "sbin" || leaf == "bin") prefix = up == 0 ? std::string_view("/") : dir.substr(0, up);
            else prefix = dir;
        }
    }
    return "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=" + std::string(prefix) +
           " -DIBF_BUILD_TESTS=OFF && cmake --build build-osm --target package";
}

}  // namespace ibf::osm
