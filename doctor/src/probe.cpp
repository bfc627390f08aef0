// `ibfabric doctor`'s probe: gathers Facts from files, binaries and the daemon's API. All I/O of
// the doctor is here; the verdicts are in doctor.cpp.
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "ibf/doctor.h"
#include "ibf/error.h"
#include "ibf/http_client.h"

namespace ibf::doctor {
namespace {

std::string user_name(uid_t uid) {
    if (const passwd* p = ::getpwuid(uid)) return p->pw_name;
    return std::to_string(uid);
}

std::string group_name(gid_t gid) {
    if (const group* g = ::getgrgid(gid)) return g->gr_name;
    return std::to_string(gid);
}

// stat() `path`; with max_bytes > 0 also reads a regular file: the whole of it, or its last
// max_bytes when `tail` (a log), else an error when it is larger.
FileFact look(const std::string& path, size_t max_bytes = 0, bool tail = false) {
    FileFact f;
    f.path = path;
    if (path.empty()) return f;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        f.exists = errno != ENOENT;
        if (f.exists) f.error = std::strerror(errno);
        return f;
    }
    f.exists = true;
    f.mode = st.st_mode & 07777;
    f.is_socket = S_ISSOCK(st.st_mode);
    f.is_regular = S_ISREG(st.st_mode);
    f.owner = user_name(st.st_uid);
    f.group = group_name(st.st_gid);
    if (max_bytes == 0) return f;
    if (!f.is_regular) {
        f.error = "not a regular file";
        return f;
    }
    if (!tail && static_cast<size_t>(st.st_size) > max_bytes) {
        f.error = "larger than " + std::to_string(max_bytes) + " bytes";
        return f;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        f.error = std::strerror(errno);
        return f;
    }
    const off_t start = tail && static_cast<size_t>(st.st_size) > max_bytes ? st.st_size - static_cast<off_t>(max_bytes) : 0;
    f.text.resize(std::min(static_cast<size_t>(st.st_size), max_bytes));
    const ssize_t n = ::pread(fd, f.text.data(), f.text.size(), start);
    ::close(fd);
    if (n < 0) f.error = std::strerror(errno);
    f.text.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return f;
}

// The loader's directories: /etc/ld.so.conf (following its `include` globs), then /lib, /usr/lib.
std::vector<std::string> loader_dirs(const std::string& ld_so_conf) {
    const FileFact conf = look(ld_so_conf, 1 << 20);
    std::vector<std::string> texts{conf.text};
    std::istringstream in(conf.text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("include", 0) != 0) continue;
        std::string pattern = line.substr(7);
        pattern.erase(0, pattern.find_first_not_of(" \t"));
        if (pattern.empty()) continue;
        if (pattern.front() != '/') pattern = std::filesystem::path(ld_so_conf).parent_path() / pattern;
        glob_t g{};
        if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i) texts.push_back(look(g.gl_pathv[i], 1 << 20).text);
        ::globfree(&g);
    }
    std::vector<std::string> dirs;
    for (const auto& t : texts)
        for (auto& d : ld_so_conf_dirs(t)) dirs.push_back(d);
    for (const char* d : {"/lib", "/usr/lib"}) dirs.emplace_back(d);
    return dirs;
}

void probe_daemon(const Paths& p, Facts& f) {
    std::string url = p.url;
    if (url.empty()) {
        std::string host = f.config ? f.config->http_bind : "127.0.0.1";
        if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
        if (host == "::") host = "::1";
        url = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
              std::to_string(f.config ? f.config->http_port : 8639);
    }
    f.daemon_url = url;
    const auto u = parse_http_url(url);
    if (!u) {
        f.daemon_error = "bad URL '" + url + "'";
        return;
    }
    std::string auth;
    if (f.config && f.config->token_for_reads && f.token.exists) {
        const FileFact t = look(f.token.path, kMaxTokenFileBytes);
        std::string tok = t.text;
        while (!tok.empty() && (tok.back() == '\n' || tok.back() == '\r' || tok.back() == ' ')) tok.pop_back();
        if (!tok.empty()) auth = "Bearer " + tok;
    }
    try {
        for (auto [path, out] : {std::pair{"/api/v1/sm", &f.daemon_sm}, std::pair{"/api/v1/fabric", &f.daemon_fabric}}) {
            const HttpResult r = http_request(*u, "GET", path, "", auth, std::chrono::seconds(3));
            if (r.status != 200) {
                f.daemon_error = std::string(path) + " answered " + std::to_string(r.status);
                return;
            }
            *out = nlohmann::json::parse(r.body, nullptr, false);
        }
    } catch (const HttpUnavailable& e) {
        f.daemon_error = e.what();
    }
}

// The unit file, then its drop-ins (/etc/systemd/system/NAME.d/*.conf, in name order), as systemd
// merges them; an /etc/systemd/system/NAME override replaces the unit file.
UnitFact probe_unit(const std::string& unit) {
    if (unit.empty()) return {};
    const std::string name = std::filesystem::path(unit).filename().string();
    std::string main = "/etc/systemd/system/" + name;
    if (!look(main).exists) main = unit;
    const FileFact u = look(main, 1 << 20);
    if (!u.exists || !u.error.empty()) return {};
    std::vector<std::string> texts{u.text};
    glob_t g{};
    if (::glob(("/etc/systemd/system/" + name + ".d/*.conf").c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) texts.push_back(look(g.gl_pathv[i], 1 << 20).text);
    ::globfree(&g);
    return parse_unit(main, texts);
}

Account probe_account(const std::string& name) {
    Account a;
    a.name = name;
    const passwd* pw = ::getpwnam(name.c_str());
    if (!pw) return a;
    a.exists = true;
    int n = 64;
    std::vector<gid_t> gids(static_cast<size_t>(n));
    if (::getgrouplist(name.c_str(), pw->pw_gid, gids.data(), &n) < 0) {
        gids.resize(static_cast<size_t>(n));
        ::getgrouplist(name.c_str(), pw->pw_gid, gids.data(), &n);
    }
    for (int i = 0; i < n; ++i) a.groups.push_back(group_name(gids[static_cast<size_t>(i)]));
    return a;
}

void probe_ha(const Paths& p, Facts& f) {
    f.unit = probe_unit(p.unit);
    f.unit_user = probe_account(f.unit.path.empty() ? user_name(::geteuid()) : f.unit.user);
    glob_t g{};
    if (::glob(p.umad_glob.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) f.umad_devices.push_back(look(g.gl_pathv[i]));
    ::globfree(&g);
    const auto parent = [](const std::string& file) { return std::filesystem::path(file).parent_path().string(); };
    if (!f.config->ha.guid2lid_file.empty()) {
        f.guid2lid = look(f.config->ha.guid2lid_file);
        f.guid2lid_dir = look(parent(f.config->ha.guid2lid_file));
    }
    if (!f.config->ha.sm_helper.empty()) {
        f.sm_helper = look(f.config->ha.sm_helper);
        f.helper_unit = probe_unit(p.helper_unit);
    }
    if (!f.config->ha.opensm_conf.empty()) {
        f.ha_opensm_conf = look(f.config->ha.opensm_conf);
        f.ha_opensm_conf_dir = look(parent(f.config->ha.opensm_conf));
    }
}

}  // namespace

Facts probe(const Paths& p) {
    Facts f;
    f.opensm_conf = look(p.opensm_conf, 1 << 20);
    f.plugin_dirs = p.plugin_dirs.empty() ? loader_dirs(p.ld_so_conf) : p.plugin_dirs;
    for (const auto& d : f.plugin_dirs) {
        FileFact so = look(d + "/libibfabric_osm.so", 64u << 20);
        if (!so.exists) continue;
        f.plugin_osm_version = find_osm_version(so.text);
        so.text.clear();
        f.plugin = std::move(so);
        break;
    }
    FileFact bin = look(p.opensm_bin, 64u << 20);
    f.opensm_version = find_osm_version(bin.text);
    bin.text.clear();
    f.opensm_bin = std::move(bin);
    f.opensm_log = look(p.opensm_log, 4u << 20, /*tail=*/true);
    f.daemon_config = look(p.daemon_config, kMaxConfigFileBytes);
    if (f.daemon_config.exists && f.daemon_config.error.empty()) {
        try {
            f.config = parse_daemon_config(f.daemon_config.text, p.daemon_config);
        } catch (const InputError& e) {
            f.daemon_config.error = e.what();
        }
    }
    if (f.config) {
        f.socket = look(f.config->socket_path);
        f.token = look(f.config->token_file);
        f.history = look(f.config->history_db);
        if (f.config->ha.mode != ha::Mode::off) {
            f.keepalived_conf = look(p.keepalived_conf, 1 << 20);
            probe_ha(p, f);
        }
    }
    probe_daemon(p, f);
    return f;
}

}  // namespace ibf::doctor
