// `ibfabric doctor`'s checks: pure functions of Facts (ibf/doctor.h). No I/O here.
#include "ibf/doctor.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "ibf/osm_plugin_options.h"
#include "ibf/text.h"

namespace ibf::doctor {
namespace {

constexpr const char* kPluginName = "ibfabric_osm";
constexpr const char* kDefaultSocket = "/run/ibfabric/osm.sock";

Check make(std::string name, Status s, std::string detail, std::string fix = "") {
    return Check{std::move(name), s, std::move(detail), std::move(fix)};
}

std::string octal(unsigned mode) {
    char b[8];
    std::snprintf(b, sizeof b, "%04o", mode & 07777);
    return b;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::istringstream in{std::string(s)};
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// The Unix socket the plugin sends to, from event_plugin_options ("" = it sends over TCP only).
std::string plugin_socket(const std::optional<std::string>& options) {
    if (!options) return kDefaultSocket;
    bool tcp = false;
    for (const auto& w : words(*options)) {
        if (w.rfind("socket=", 0) == 0) return w.substr(7);
        if (w.rfind("tcp=", 0) == 0) tcp = true;
    }
    return tcp ? "" : kDefaultSocket;
}

std::string read_problem(const FileFact& f) {
    return f.exists ? f.path + ": " + f.error : f.path + " does not exist";
}

}  // namespace

std::string_view to_string(Status s) {
    switch (s) {
        case Status::ok: return "ok";
        case Status::warn: return "warn";
        case Status::fail: return "FAIL";
        case Status::skip: return "skip";
    }
    return "?";
}

std::optional<std::string> conf_value(std::string_view text, std::string_view key) {
    std::optional<std::string> value;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) {
        std::string_view l = line;
        while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
        if (l.empty() || l.front() == '#') continue;
        if (l.substr(0, key.size()) != key || l.size() == key.size() || (l[key.size()] != ' ' && l[key.size()] != '\t'))
            continue;
        std::string v(l.substr(key.size()));
        v.erase(0, v.find_first_not_of(" \t"));
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.pop_back();
        value = v;
    }
    return value;
}

std::string find_osm_version(std::string_view bytes) {
    constexpr std::string_view kPrefix = "OpenSM ";
    for (size_t pos = bytes.find(kPrefix); pos != std::string_view::npos; pos = bytes.find(kPrefix, pos + 1)) {
        size_t end = pos + kPrefix.size();
        size_t dots = 0;
        while (end < bytes.size() && (std::isdigit(static_cast<unsigned char>(bytes[end])) || bytes[end] == '.')) {
            dots += bytes[end] == '.';
            ++end;
        }
        // A vendor's or a source build's suffix: "OpenSM 5.17.0.MLNX20231105.b4a4c2d", "OpenSM 3.3.23-rc1".
        const size_t numeric_end = end;
        auto suffix_char = [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == '+'; };
        while (dots >= 2 && end < bytes.size() && end - numeric_end < 64 && suffix_char(static_cast<unsigned char>(bytes[end]))) ++end;
        const bool terminated = end == bytes.size() || bytes[end] == '\0' || bytes[end] == '"';
        if (dots >= 2 && numeric_end > pos + kPrefix.size() && terminated) return std::string(bytes.substr(pos, end - pos));
    }
    return "";
}

std::vector<std::string> ld_so_conf_dirs(std::string_view text) {
    std::vector<std::string> dirs;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) {
        if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        auto w = words(line);
        if (w.empty() || w[0] == "include") continue;
        for (const auto& d : w)
            if (d.front() == '/') dirs.push_back(d);
    }
    return dirs;
}

Check check_opensm_conf(const Facts& f) {
    const std::string name = "opensm.conf";
    if (!f.opensm_conf.exists || !f.opensm_conf.error.empty())
        return make(name, Status::fail, read_problem(f.opensm_conf),
                    "create it (opensm -c " + f.opensm_conf.path + ") and append /usr/share/ibfabric/opensm-ibfabric.conf");
    const auto names = conf_value(f.opensm_conf.text, "event_plugin_name");
    bool named = false;
    if (names)
        for (const auto& w : words(*names)) named = named || w == kPluginName;
    if (!named)
        return make(name, Status::fail,
                    f.opensm_conf.path + " has no 'event_plugin_name " + kPluginName + "'" +
                        (names ? " (it names: " + terminal_safe(*names) + ")" : ""),
                    "add the lines of /usr/share/ibfabric/opensm-ibfabric.conf (several plugins: names separated by spaces), restart opensm");
    const auto options = conf_value(f.opensm_conf.text, "event_plugin_options");
    const std::string sock = plugin_socket(options);
    if (f.config && !sock.empty() && sock != f.config->socket_path)
        return make(name, Status::fail,
                    "the plugin sends to " + sock + " but ibfabricd listens on " + f.config->socket_path,
                    "make event_plugin_options socket= and the daemon's socket: the same path");
    if (!options)
        return make(name, Status::warn, "loads " + std::string(kPluginName) + " without event_plugin_options (defaults: socket=" + kDefaultSocket + ")",
                    "add 'event_plugin_options socket=" + std::string(kDefaultSocket) + "' to say it explicitly");
    return make(name, Status::ok, f.opensm_conf.path + " loads " + kPluginName + " (" + terminal_safe(*options) + ")");
}

Check check_perfmgr(const Facts& f) {
    const std::string name = "port counters";
    if (!f.opensm_conf.exists || !f.opensm_conf.error.empty()) return make(name, Status::skip, "opensm.conf not read", "");
    auto on = conf_value(f.opensm_conf.text, "perfmgr");
    std::string v = on ? *on : "FALSE";
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (v != "TRUE")
        return make(name, Status::skip,
                    "OpenSM's perfmgr is off in " + f.opensm_conf.path + ": no per-link error counters, no port_errors findings",
                    "for link health set 'perfmgr TRUE' (commented out in /usr/share/ibfabric/opensm-ibfabric.conf) and restart opensm");
    const auto sweep = conf_value(f.opensm_conf.text, "perfmgr_sweep_time_s");
    return make(name, Status::ok,
                "OpenSM's perfmgr reads every port each " + (sweep ? terminal_safe(*sweep) : std::string("180")) +
                    " s; the plugin forwards the counters (per-link /metrics, port_errors)");
}

Check check_plugin_file(const Facts& f) {
    const std::string name = "plugin file";
    if (f.plugin.path.empty()) {
        std::string dirs;
        for (const auto& d : f.plugin_dirs) dirs += (dirs.empty() ? "" : " ") + d;
        return make(name, Status::fail, "libibfabric_osm.so is in none of the loader's directories: " + dirs,
                    "install the ibfabric-opensm-plugin package (or copy the plugin into /usr/lib/<multiarch>/ and run ldconfig)");
    }
    if (!f.plugin.error.empty()) return make(name, Status::fail, read_problem(f.plugin), "reinstall ibfabric-opensm-plugin");
    if (f.plugin.mode & 0022)
        return make(name, Status::fail, f.plugin.path + " is writable by group or others (mode " + octal(f.plugin.mode) + "): it runs inside OpenSM",
                    "chmod 0644 " + f.plugin.path);
    return make(name, Status::ok, f.plugin.path + " (where OpenSM's dlopen(\"libibfabric_osm.so\") finds it)");
}

Check check_plugin_version(const Facts& f) {
    const std::string name = "plugin version";
    if (f.plugin.path.empty()) return make(name, Status::skip, "no plugin file");
    if (f.plugin_osm_version.empty())
        return make(name, Status::fail, f.plugin.path + " names no OpenSM version: not an ibfabric plugin?", "reinstall ibfabric-opensm-plugin");
    if (f.opensm_version.empty())
        return make(name, Status::warn, "the plugin is built for " + f.plugin_osm_version + "; " +
                                            (f.opensm_bin.exists ? f.opensm_bin.path + " names no version" : f.opensm_bin.path + " not found"),
                    "check `opensm --version` says " + f.plugin_osm_version);
    if (f.plugin_osm_version != f.opensm_version)
        return make(name, Status::fail,
                    "the plugin is built for " + f.plugin_osm_version + ", the installed opensm is " + f.opensm_version +
                        ": OpenSM skips it (\"OpenSM version mismatch\")",
                    "rebuild the plugin against this OpenSM's headers: " + osm::rebuild_command(f.opensm_bin.path) +
                        " (docs/packaging.md)");
    return make(name, Status::ok, "built for " + f.plugin_osm_version + ", the installed opensm is " + f.opensm_version);
}

Check check_opensm_log(const Facts& f) {
    const std::string name = "opensm log";
    if (!f.opensm_log.exists || !f.opensm_log.error.empty())
        return make(name, Status::warn, read_problem(f.opensm_log), "pass --opensm-log (opensm -f FILE) or start opensm");
    const std::string& t = f.opensm_log.text;
    const size_t loaded = t.rfind("ibfabric_osm: loaded (");
    struct Marker { const char* text; const char* why; };
    static const Marker kFailures[] = {
        {"Failed to open event plugin \"libibfabric_osm.so\"", "OpenSM could not dlopen the plugin"},
        {"'ibfabric_osm': OpenSM version mismatch", "OpenSM refused the plugin: built for another OpenSM"},
        {"ibfabric_osm: refusing to load", "the plugin refused to load (bad event_plugin_options)"},
        {"symbol in \"libibfabric_osm.so\"", "the plugin has no osm_event_plugin symbol"},
    };
    size_t last_fail = std::string::npos;
    const char* why = nullptr;
    for (const auto& m : kFailures)
        if (size_t p = t.rfind(m.text); p != std::string::npos && (last_fail == std::string::npos || p > last_fail)) {
            last_fail = p;
            why = m.why;
        }
    if (last_fail != std::string::npos && (loaded == std::string::npos || last_fail > loaded)) {
        const size_t bol = t.rfind('\n', last_fail);
        const size_t eol = t.find('\n', last_fail);
        const std::string line = t.substr(bol == std::string::npos ? 0 : bol + 1, eol == std::string::npos ? std::string::npos : eol - bol - 1);
        return make(name, Status::fail, std::string(why) + ": " + terminal_safe(line), "fix the cause above, then restart opensm");
    }
    if (loaded == std::string::npos)
        return make(name, Status::fail, f.opensm_log.path + " never says 'ibfabric_osm: loaded'",
                    "check opensm.conf's event_plugin_name, restart opensm, and look again");
    const size_t eol = t.find('\n', loaded);
    return make(name, Status::ok, terminal_safe(t.substr(loaded, eol == std::string::npos ? std::string::npos : eol - loaded)));
}

Check check_daemon_config(const Facts& f) {
    const std::string name = "daemon config";
    if (!f.daemon_config.exists) return make(name, Status::fail, f.daemon_config.path + " does not exist", "install the ibfabric package or pass --config");
    if (!f.config) return make(name, Status::fail, terminal_safe(f.daemon_config.error), "fix the file (docs/daemon.md), then restart ibfabricd");
    return make(name, Status::ok, f.daemon_config.path + " (socket " + f.config->socket_path + ", ha " + std::string(ha::to_string(f.config->ha.mode)) + ")");
}

Check check_daemon(const Facts& f) {
    const std::string name = "daemon";
    if (!f.daemon_error.empty())
        return make(name, Status::fail, "ibfabricd at " + f.daemon_url + " does not answer: " + f.daemon_error,
                    "systemctl status ibfabricd; journalctl -u ibfabricd");
    size_t connected = 0;
    if (f.daemon_sm.contains("sms") && f.daemon_sm["sms"].is_array())
        for (const auto& s : f.daemon_sm["sms"])
            connected += s.value("connected", false) ? 1 : 0;
    const auto sweeps = f.daemon_fabric.value("sweeps_ingested", uint64_t{0});
    if (connected == 0)
        return make(name, Status::fail, "ibfabricd at " + f.daemon_url + " answers but no OpenSM plugin is connected",
                    "see the opensm log check; the plugin's socket= must be the daemon's socket");
    if (sweeps == 0)
        return make(name, Status::warn, std::to_string(connected) + " plugin(s) connected, no snapshot yet", "wait for OpenSM's next heavy sweep");
    return make(name, Status::ok, "ibfabricd at " + f.daemon_url + ": " + std::to_string(connected) + " plugin(s) connected, " +
                                      std::to_string(sweeps) + " sweep(s) received");
}

Check check_socket(const Facts& f) {
    const std::string name = "socket";
    if (!f.config) return make(name, Status::skip, "no daemon config");
    if (!f.socket.exists) return make(name, Status::fail, f.socket.path + " does not exist", "start ibfabricd (it creates the socket)");
    if (!f.socket.is_socket) return make(name, Status::fail, f.socket.path + " is not a socket", "remove it and restart ibfabricd");
    if (f.socket.mode & 0002)
        return make(name, Status::fail, f.socket.path + " is world-writable (mode " + octal(f.socket.mode) + ")", "set socket_mode: 0660");
    if ((f.socket.mode & 0777) != (f.config->socket_mode & 0777))
        return make(name, Status::warn, f.socket.path + " mode " + octal(f.socket.mode) + ", the config says " + octal(f.config->socket_mode),
                    "restart ibfabricd");
    return make(name, Status::ok, f.socket.path + " mode " + octal(f.socket.mode) + " " + f.socket.owner + ":" + f.socket.group);
}

Check check_token(const Facts& f) {
    const std::string name = "token";
    if (!f.config) return make(name, Status::skip, "no daemon config");
    if (f.token.path.empty()) return make(name, Status::skip, "no token_file configured (POST /api/v1/reload is refused)");
    if (!f.token.exists) return make(name, Status::fail, f.token.path + " does not exist", "create it with a random token, mode 0600");
    const unsigned m = f.token.mode & 0777;
    if (m != 0600 && m != 0640)
        return make(name, Status::fail, f.token.path + " has mode " + octal(m) + ": ibfabricd refuses it", "chmod 0600 " + f.token.path);
    return make(name, Status::ok, f.token.path + " mode " + octal(m) + " " + f.token.owner + ":" + f.token.group);
}

Check check_history(const Facts& f) {
    const std::string name = "history db";
    if (!f.config) return make(name, Status::skip, "no daemon config");
    if (f.history.path.empty()) return make(name, Status::skip, "no history configured");
    if (!f.history.exists) return make(name, Status::warn, f.history.path + " does not exist yet", "ibfabricd creates it at start");
    if (f.history.mode & 0077)
        return make(name, Status::fail, f.history.path + " has mode " + octal(f.history.mode) + " (findings readable by others)",
                    "chmod 0600 " + f.history.path);
    return make(name, Status::ok, f.history.path + " mode " + octal(f.history.mode) + " " + f.history.owner + ":" + f.history.group);
}

Check check_keepalived(const Facts& f) {
    const std::string name = "keepalived";
    if (!f.config || f.config->ha.mode == ha::Mode::off) return make(name, Status::skip, "ha is off in the daemon config");
    if (!f.keepalived_conf.exists || !f.keepalived_conf.error.empty())
        return make(name, Status::fail, read_problem(f.keepalived_conf), "start from /usr/share/ibfabric/keepalived.conf (docs/ha.md)");
    const std::string& t = f.keepalived_conf.text;
    const std::string& track = f.config->ha.track_file;
    if (!track.empty() && t.find(track) == std::string::npos)
        return make(name, Status::fail, f.keepalived_conf.path + " does not track " + track + " (the daemon's ha.track_file)",
                    "add a track_file block with file \"" + track + "\" and weight 0 (docs/ha.md)");
    if (t.find("ibfabric ha notify") == std::string::npos)
        return make(name, Status::warn, f.keepalived_conf.path + " has no 'ibfabric ha notify' notify scripts", "see config/templates/keepalived.conf");
    return make(name, Status::ok, f.keepalived_conf.path + " tracks " + (track.empty() ? "the SM" : track) + " and notifies ibfabric");
}

std::vector<Check> run_checks(const Facts& f) {
    return {check_opensm_conf(f), check_plugin_file(f), check_plugin_version(f), check_opensm_log(f), check_perfmgr(f),
            check_daemon_config(f), check_daemon(f),    check_socket(f),         check_token(f),      check_history(f),
            check_keepalived(f), check_mad_access(f), check_guid2lid(f), check_priority_path(f)};
}

bool all_passed(const std::vector<Check>& checks) {
    for (const auto& c : checks)
        if (c.status == Status::fail) return false;
    return true;
}

std::string render_text(const std::vector<Check>& checks) {
    std::string out;
    for (const auto& c : checks) {
        char head[48];
        std::snprintf(head, sizeof head, "%-4s  %-15s ", std::string(to_string(c.status)).c_str(), c.name.c_str());
        out += head + c.detail + (c.fix.empty() || c.status == Status::ok ? "" : "; fix: " + c.fix) + "\n";
    }
    return out;
}

nlohmann::json render_json(const std::vector<Check>& checks) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& c : checks)
        arr.push_back({{"name", c.name}, {"status", c.status == Status::fail ? "fail" : std::string(to_string(c.status))},
                       {"detail", c.detail}, {"fix", c.fix}});
    return {{"ok", all_passed(checks)}, {"checks", arr}};
}

}  // namespace ibf::doctor
