// `ibfabric doctor`: is this SM node wired up? Pure checks over facts gathered elsewhere, so every
// verdict is tested without files, OpenSM or a daemon (doctor/src/probe.cpp gathers the facts).
//
//   ibf::doctor::Facts f = ibf::doctor::probe(paths, now_ms);       // files, binaries, the daemon's API
//   std::vector<ibf::doctor::Check> r = ibf::doctor::run_checks(f);  // one verdict per check, in order
//   bool ok = ibf::doctor::all_passed(r);                            // exit 0 / 1
//
// Checks (docs/operators-guide.md, "Troubleshooting"): opensm.conf loads the plugin; the plugin
// file is where OpenSM's dlopen("libibfabric_osm.so") finds it; the plugin was built for the
// installed OpenSM; OpenSM's log shows it loaded; the daemon answers and receives snapshots;
// socket, token and database permissions; keepalived's config when HA is on; and, for the unit's
// user under its sandbox, MAD access, the guid2lid file and the sm_priority path (ha_access.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/daemon_config.h"

namespace ibf::doctor {

enum class Status : uint8_t { ok, warn, fail, skip };
std::string_view to_string(Status s);  // "ok", "warn", "FAIL", "skip"

struct Check {
    std::string name;    // "opensm.conf", "plugin file", ...
    Status status = Status::ok;
    std::string detail;  // what was found
    std::string fix;     // what to do ("" when nothing)
};

// What stat() and a bounded read found at one path.
struct FileFact {
    std::string path;
    bool exists = false;
    std::string error;        // why it could not be read ("" = fine)
    unsigned mode = 0;        // permission bits (07777)
    bool is_socket = false;
    bool is_regular = false;
    std::string owner, group;
    std::string text;         // contents (or the tail of a log), when read
};

// The daemon's systemd unit as systemd merges it (the unit file, then its drop-ins in order): only
// the [Service] settings the HA checks need. Single-valued keys keep the last value; list keys
// accumulate and an empty assignment resets them, as systemd does.
struct UnitFact {
    std::string path;                          // "" = no unit found
    std::string user = "root";                 // User= (systemd's default: root)
    std::string private_devices, device_policy, protect_system, protect_proc;
    std::vector<std::string> device_allow;     // DeviceAllow= entries ("char-infiniband_mad rw")
    std::vector<std::string> read_write_paths; // ReadWritePaths= (a leading '-' dropped)
    std::vector<std::string> supplementary_groups;
    std::vector<std::string> ambient_capabilities;  // AmbientCapabilities= ("CAP_KILL")
    std::vector<std::string> exec_start;       // ExecStart= command lines (an empty one resets), last wins
};
UnitFact parse_unit(const std::string& path, const std::vector<std::string>& texts);
// The value after `option` ("--guid2lid") on the unit's last ExecStart= line, nullopt when absent.
std::optional<std::string> exec_option(const UnitFact& u, std::string_view option);

// A user and the groups it is in (the unit's SupplementaryGroups= added by the check).
struct Account {
    std::string name;
    bool exists = false;
    std::vector<std::string> groups;
};

struct Facts {
    FileFact opensm_conf;
    std::vector<std::string> plugin_dirs;     // searched in order, as the dynamic loader does
    FileFact plugin;                          // the first libibfabric_osm.so found; path "" = none
    std::string plugin_osm_version;           // "OpenSM 3.3.23" built into the plugin, "" = not found
    FileFact opensm_bin;
    std::string opensm_version;               // "OpenSM 3.3.23" in the installed opensm, "" = not found
    FileFact opensm_log;                      // the tail of OpenSM's log
    FileFact daemon_config;
    std::optional<DaemonConfig> config;       // parsed daemon_config; nullopt: missing or bad (error in daemon_config.error)
    FileFact socket, token, history;          // from the config (path "" = not configured)
    FileFact keepalived_conf;
    std::string daemon_url;                   // "http://127.0.0.1:8639"
    std::string daemon_error;                 // "" = it answered
    nlohmann::json daemon_sm;                 // GET /api/v1/sm
    nlohmann::json daemon_fabric;             // GET /api/v1/fabric
    // HA deployment (checked when ha is on): the unit, its user, the MAD devices, the files the HA
    // agent rewrites and their directories (rewritten by rename: the directory must be writable).
    UnitFact unit;
    Account unit_user;
    std::vector<FileFact> umad_devices;       // /dev/infiniband/umad*
    FileFact guid2lid, guid2lid_dir, ha_opensm_conf, ha_opensm_conf_dir;
    FileFact sm_helper;                       // ha.sm_helper's socket (path "" = not configured)
    UnitFact helper_unit;                     // ibfabric-sm-helper@.service: which files it writes (path "" = not found)
};

std::vector<Check> run_checks(const Facts& f);
bool all_passed(const std::vector<Check>& checks);  // no FAIL (warn and skip pass)

// The individual checks (run_checks calls them in this order).
Check check_opensm_conf(const Facts& f);
Check check_plugin_file(const Facts& f);
Check check_plugin_version(const Facts& f);
Check check_opensm_log(const Facts& f);
Check check_perfmgr(const Facts& f);  // "port counters": OpenSM's perfmgr on (ok) or off (skip, how to turn it on)
Check check_daemon_config(const Facts& f);
Check check_daemon(const Facts& f);
Check check_socket(const Facts& f);
Check check_token(const Facts& f);
Check check_history(const Facts& f);
Check check_keepalived(const Facts& f);
// HA deployment, for the unit's user under the unit's sandbox (docs/ha.md "Deployment"):
Check check_mad_access(const Facts& f);     // "MAD access": a umad device the user can open, not hidden by the unit
Check check_guid2lid(const Facts& f);       // "guid2lid": through ha.sm_helper (which must write ha.guid2lid_file), else its directory writable there
Check check_priority_path(const Facts& f);  // "sm priority": through ha.sm_helper (which must edit the opensm.conf OpenSM reads), else opensm.conf writable, opensm signalable
// True when `account` (with `extra_groups`) may access `f` for `bits` (4 read, 2 write, 1 exec/search).
bool may_access(const FileFact& f, const Account& account, const std::vector<std::string>& extra_groups, unsigned bits);

// Helpers, pure and tested.
// The value of the last uncommented `key value...` line of an opensm.conf, nullopt when absent.
std::optional<std::string> conf_value(std::string_view conf_text, std::string_view key);
// The first "OpenSM <digits.digits...>" string (NUL- or quote-terminated) in a binary, "" = none.
std::string find_osm_version(std::string_view bytes);
// Directories named by an ld.so.conf text (comments and `include` lines skipped).
std::vector<std::string> ld_so_conf_dirs(std::string_view text);

// The text report (one line per check) and the JSON one ({"ok":bool,"checks":[...]}).
std::string render_text(const std::vector<Check>& checks);
nlohmann::json render_json(const std::vector<Check>& checks);

// Where probe() looks; every path is an option of `ibfabric doctor` (tests use a temp dir).
struct Paths {
    std::string opensm_conf = "/etc/opensm/opensm.conf";
    std::vector<std::string> plugin_dirs;     // empty: /etc/ld.so.conf's dirs + the system lib dirs
    std::string ld_so_conf = "/etc/ld.so.conf";
    std::string opensm_bin = "/usr/sbin/opensm";
    std::string opensm_log = "/var/log/opensm.log";
    std::string daemon_config = "/etc/ibfabric/ibfabricd.yaml";
    std::string keepalived_conf = "/etc/keepalived/keepalived.conf";
    std::string url;                          // "": from the daemon config's http: (127.0.0.1 when 0.0.0.0)
    std::string unit = "/usr/lib/systemd/system/ibfabricd.service";  // + /etc/systemd/system/<name>.d/*.conf
    std::string umad_glob = "/dev/infiniband/umad*";
    std::string helper_unit = "/usr/lib/systemd/system/ibfabric-sm-helper@.service";  // read when ha.sm_helper is set
};
Facts probe(const Paths& p);

}  // namespace ibf::doctor
