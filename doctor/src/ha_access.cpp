// `ibfabric doctor`'s HA deployment checks: can the unit's user, under the unit's sandbox, open a
// MAD device, rewrite the guid2lid file and change OpenSM's sm_priority? Pure: the unit's text,
// the account and the files' stat() come in as Facts (probe.cpp). docs/ha.md "Privileges under the packaged unit".
#include <algorithm>
#include <sstream>

#include "ibf/doctor.h"

namespace ibf::doctor {
namespace {

Check make(std::string name, Status s, std::string detail, std::string fix = "") {
    return Check{std::move(name), s, std::move(detail), std::move(fix)};
}

std::string trimmed(std::string s) {
    s.erase(0, s.find_first_not_of(" \t\r"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
    return s;
}

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

bool yes(const std::string& v) { return v == "yes" || v == "true" || v == "1" || v == "on"; }

// `path` is `dir` or below it.
bool under(const std::string& path, const std::string& dir) {
    if (dir.empty()) return false;
    const std::string d = dir.back() == '/' ? dir.substr(0, dir.size() - 1) : dir;
    return path == d || path.rfind(d + "/", 0) == 0 || d.empty();
}

// Why ProtectSystem= leaves `path` read-only ("" = writable as far as the sandbox goes).
std::string read_only_by_unit(const UnitFact& u, const std::string& path) {
    for (const auto& rw : u.read_write_paths)
        if (under(path, rw)) return "";
    if (u.protect_system == "strict") return "ProtectSystem=strict makes " + path + " read-only (no ReadWritePaths= for it)";
    if (u.protect_system == "full" && under(path, "/etc")) return "ProtectSystem=full makes /etc read-only";
    if ((yes(u.protect_system) || u.protect_system == "full") && under(path, "/usr"))
        return "ProtectSystem= makes /usr read-only";
    return "";
}

std::string mode_text(const FileFact& f) {
    char b[8];
    std::snprintf(b, sizeof b, "%04o", f.mode & 07777);
    return f.path + " (" + b + " " + f.owner + ":" + f.group + ")";
}

bool ha_on(const Facts& f) { return f.config && f.config->ha.mode != ha::Mode::off; }

}  // namespace

UnitFact parse_unit(const std::string& path, const std::vector<std::string>& texts) {
    UnitFact u;
    u.path = path;
    for (const auto& text : texts) {
        std::istringstream in(text);
        std::string section;
        for (std::string line; std::getline(in, line);) {
            line = trimmed(line);
            if (line.empty() || line[0] == '#' || line[0] == ';') continue;
            if (line.front() == '[') {
                section = line;
                continue;
            }
            const size_t eq = line.find('=');
            if (section != "[Service]" || eq == std::string::npos) continue;
            const std::string key = trimmed(line.substr(0, eq)), value = trimmed(line.substr(eq + 1));
            auto list = [&value](std::vector<std::string>& l, bool whole) {
                if (value.empty()) l.clear();
                else if (whole) l.push_back(value);
                else
                    for (auto& w : split_words(value)) l.push_back(w[0] == '-' ? w.substr(1) : w);
            };
            if (key == "User") u.user = value.empty() ? "root" : value;
            else if (key == "PrivateDevices") u.private_devices = value;
            else if (key == "DevicePolicy") u.device_policy = value;
            else if (key == "ProtectSystem") u.protect_system = value;
            else if (key == "ProtectProc") u.protect_proc = value;
            else if (key == "DeviceAllow") list(u.device_allow, true);
            else if (key == "ReadWritePaths") list(u.read_write_paths, false);
            else if (key == "SupplementaryGroups") list(u.supplementary_groups, false);
            else if (key == "AmbientCapabilities") list(u.ambient_capabilities, false);
            else if (key == "ExecStart") list(u.exec_start, true);
        }
    }
    return u;
}

std::optional<std::string> exec_option(const UnitFact& u, std::string_view option) {
    if (u.exec_start.empty()) return std::nullopt;
    const auto words = split_words(u.exec_start.back());
    for (size_t i = 0; i + 1 < words.size(); ++i)
        if (words[i] == option) return words[i + 1];
    const std::string joined = std::string(option) + "=";
    for (const auto& w : words)
        if (w.rfind(joined, 0) == 0) return w.substr(joined.size());
    return std::nullopt;
}

bool may_access(const FileFact& f, const Account& account, const std::vector<std::string>& extra_groups, unsigned bits) {
    if (!f.exists) return false;
    if (account.name == "root") return true;
    if (f.owner == account.name) return ((f.mode >> 6) & bits) == bits;
    const bool in_group = std::find(account.groups.begin(), account.groups.end(), f.group) != account.groups.end() ||
                          std::find(extra_groups.begin(), extra_groups.end(), f.group) != extra_groups.end();
    if (in_group) return ((f.mode >> 3) & bits) == bits;
    return (f.mode & bits) == bits;
}

Check check_mad_access(const Facts& f) {
    const std::string name = "MAD access";
    if (!ha_on(f)) return make(name, Status::skip, "ha is off in the daemon config");
    const UnitFact& u = f.unit;
    const std::string fix_unit = "in the unit (systemctl edit " + std::string(u.path.empty() ? "ibfabricd" : u.path.substr(u.path.rfind('/') + 1)) +
                                 "): PrivateDevices=no, DevicePolicy=closed, DeviceAllow=char-infiniband_mad rw (docs/ha.md \"Privileges under the packaged unit\")";
    if (!u.path.empty() && yes(u.private_devices))
        return make(name, Status::fail, u.path + ": PrivateDevices=" + u.private_devices + " hides /dev/infiniband/umad*: no SMInfo probes, no failover", fix_unit);
    if (!u.path.empty() && (u.device_policy == "closed" || u.device_policy == "strict")) {
        const bool allowed = std::any_of(u.device_allow.begin(), u.device_allow.end(), [](const std::string& d) {
            return (d.find("infiniband_mad") != std::string::npos || d.find("/dev/infiniband/umad") != std::string::npos) &&
                   d.find("rw") != std::string::npos;
        });
        if (!allowed)
            return make(name, Status::fail, u.path + ": DevicePolicy=" + u.device_policy + " without DeviceAllow=char-infiniband_mad rw", fix_unit);
    }
    if (f.umad_devices.empty())
        return make(name, Status::fail, "no /dev/infiniband/umad* on this node", "load the kernel module: modprobe ib_umad");
    if (!f.unit_user.exists)
        return make(name, Status::fail, "the unit's user " + f.unit_user.name + " does not exist", "install the ibfabric package (it creates the user)");
    for (const auto& d : f.umad_devices)
        if (may_access(d, f.unit_user, u.supplementary_groups, 6))
            return make(name, Status::ok, f.unit_user.name + " can open " + d.path + " (read and write) under " + (u.path.empty() ? "no unit" : u.path));
    return make(name, Status::fail, f.unit_user.name + " cannot read and write " + mode_text(f.umad_devices.front()),
                "the package's udev rule /usr/lib/udev/rules.d/70-ibfabric-umad.rules (GROUP=\"rdma\", MODE=\"0660\"; "
                "udevadm trigger --subsystem-match=infiniband_mad) and SupplementaryGroups=rdma in the unit");
}

namespace {

const char* const kUseTheHelper =
    "ha.sm_helper: /run/ibfabric-sm-helper.sock in the daemon config and systemctl enable --now "
    "ibfabric-sm-helper.socket (the root helper), not a wider unit (docs/ha.md \"Privileges under the packaged unit\")";

// With ha.sm_helper the daemon writes neither file itself: the helper's socket must be there and
// the unit's user must be able to connect to it (write permission on the socket). The helper
// writes the file its own ExecStart= names (`option`), which must be `expected` (`expected_why`
// says whose path that is): else the agent's writes go where OpenSM never reads them.
Check helper_check(const std::string& name, const Facts& f, const std::string& what, std::string_view option,
                   const std::string& expected, const std::string& expected_why) {
    const FileFact& s = f.sm_helper;
    if (!s.exists)
        return make(name, Status::fail, s.path + " (ha.sm_helper) does not exist: " + what + " fails",
                    "systemctl enable --now ibfabric-sm-helper.socket");
    if (!s.is_socket)
        return make(name, Status::fail, s.path + " (ha.sm_helper) is not a socket", "point ha.sm_helper at ibfabric-sm-helper.socket's ListenStream=");
    if (!may_access(s, f.unit_user, f.unit.supplementary_groups, 2))
        return make(name, Status::fail, f.unit_user.name + " cannot connect to " + mode_text(s) + ": " + what + " fails",
                    "SocketGroup=ibfabric and SocketMode=0660 in ibfabric-sm-helper.socket");
    const std::string reach = f.unit_user.name + " reaches the root helper at " + mode_text(s) + ": " + what + " goes through it";
    const UnitFact& h = f.helper_unit;
    if (h.path.empty())
        return make(name, Status::warn, reach + ", but its unit was not found: which file it writes is not known",
                    "install the ibfabric package (ibfabric-sm-helper@.service), or give doctor --helper-unit");
    const auto written = exec_option(h, option);
    if (!written)
        return make(name, Status::fail, h.path + ": its ExecStart= has no " + std::string(option) + ": " + what + " fails",
                    "restore " + std::string(option) + " " + expected + " on the ExecStart= line (systemctl edit " +
                        h.path.substr(h.path.rfind('/') + 1) + ")");
    if (*written != expected)
        return make(name, Status::fail,
                    h.path + " writes " + *written + " (" + std::string(option) + ") but " + expected_why + " is " + expected +
                        ": " + what + " never reaches OpenSM",
                    "make them the same file: " + std::string(option) + " in the helper's ExecStart= (systemctl edit " +
                        h.path.substr(h.path.rfind('/') + 1) + ") or " + expected_why);
    return make(name, Status::ok, reach + " (it writes " + *written + ")");
}

// The HA agent rewrites `file` with write_file_atomic() (fsio/: FILE.tmp.XXXXXXXX beside it, then a
// rename): the directory must be writable and searchable by the user, and the sandbox must leave
// it writable.
Check rewrite_check(const std::string& name, const Facts& f, const FileFact& file, const FileFact& dir, const std::string& what) {
    if (const std::string ro = read_only_by_unit(f.unit, file.path); !ro.empty() && !f.unit.path.empty())
        return make(name, Status::fail, f.unit.path + ": " + ro + ": " + what + " fails", kUseTheHelper);
    if (!dir.exists) return make(name, Status::fail, dir.path + " does not exist", "create it (OpenSM's package does)");
    if (!may_access(dir, f.unit_user, f.unit.supplementary_groups, 3))
        return make(name, Status::fail, f.unit_user.name + " cannot create files in " + mode_text(dir) + ": " + what + " fails",
                    "give the directory to the HA agent's group (chgrp + chmod g+w) or run the agent as its owner (docs/ha.md \"Privileges under the packaged unit\")");
    // The agent replaces the file keeping its owner (write_file_atomic), which only root may give
    // another user's file: a file of someone else's is never replaced, whatever its mode.
    if (file.exists && f.unit_user.name != "root" && file.owner != f.unit_user.name)
        return make(name, Status::fail,
                    mode_text(file) + " is not " + f.unit_user.name + "'s: the agent replaces it keeping its owner, which only root may do: " +
                        what + " fails",
                    "chown " + f.unit_user.name + " " + file.path + " (its mode is kept), or " + kUseTheHelper);
    if (file.exists && !may_access(file, f.unit_user, f.unit.supplementary_groups, 4))
        return make(name, Status::fail, f.unit_user.name + " cannot read " + mode_text(file), "chmod u+r " + file.path);
    return make(name, Status::ok, f.unit_user.name + " can rewrite " + file.path + (file.exists ? "" : " (not there yet)"));
}

}  // namespace

Check check_guid2lid(const Facts& f) {
    const std::string name = "guid2lid";
    if (!ha_on(f)) return make(name, Status::skip, "ha is off in the daemon config");
    if (f.config->ha.guid2lid_file.empty()) return make(name, Status::skip, "ha.guid2lid_file is not set: the standby's LIDs are not kept");
    if (!f.config->ha.sm_helper.empty())
        return helper_check(name, f, "keeping the standby's guid2lid current", "--guid2lid", f.config->ha.guid2lid_file,
                            "ha.guid2lid_file");
    return rewrite_check(name, f, f.guid2lid, f.guid2lid_dir, "keeping the standby's guid2lid current");
}

Check check_priority_path(const Facts& f) {
    const std::string name = "sm priority";
    if (!ha_on(f)) return make(name, Status::skip, "ha is off in the daemon config");
    if (!f.config->ha.sm_helper.empty())
        return helper_check(name, f, "setting sm_priority", "--opensm-conf", f.opensm_conf.path,
                            "the opensm.conf OpenSM reads (doctor --opensm-conf)");
    if (f.config->ha.opensm_conf.empty()) return make(name, Status::skip, "ha.opensm_conf is not set: no switchover from this node");
    Check c = rewrite_check(name, f, f.ha_opensm_conf, f.ha_opensm_conf_dir, "rewriting sm_priority");
    if (c.status != Status::ok || f.unit_user.name == "root" || f.unit.path.empty()) return c;
    // Then OpenSM must re-read it: SIGHUP from a non-root user to a root opensm needs CAP_KILL
    // (AmbientCapabilities=), and the agent reads /proc/<pid>/exe first.
    const auto& amb = f.unit.ambient_capabilities;
    const bool kill_cap = std::find(amb.begin(), amb.end(), "CAP_KILL") != amb.end();
    if (!kill_cap)
        return make(name, Status::fail, f.unit.path + ": " + f.unit_user.name + " without CAP_KILL cannot SIGHUP a root opensm: sm_priority is written but not applied",
                    kUseTheHelper);
    if (f.unit.protect_proc == "invisible" || f.unit.protect_proc == "noaccess")
        return make(name, Status::fail, f.unit.path + ": ProtectProc=" + f.unit.protect_proc + " hides the opensm process (/proc/<pid>/exe)",
                    kUseTheHelper);
    return make(name, Status::ok, c.detail + " and signal opensm");
}

}  // namespace ibf::doctor
