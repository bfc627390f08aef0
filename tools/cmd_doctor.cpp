// `ibfabric doctor`: on an SM node, is OpenSM wired to ibfabric? One line per check, exit 0 when
// no check fails, 1 otherwise; --json for scripts. The checks: doctor/include/ibf/doctor.h.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "ibf/doctor.h"

namespace ibf::cli {

void register_doctor(CLI::App& app, Runner& run) {
    auto paths = std::make_shared<doctor::Paths>();
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand(
        "doctor",
        "Check this SM node: opensm.conf loads the plugin, the plugin file is where OpenSM looks and\n"
        "matches the installed OpenSM, OpenSM's log shows it loaded, ibfabricd answers and receives,\n"
        "socket/token/database permissions, keepalived when HA is on, and for the unit's user under its\n"
        "sandbox: MAD access, the guid2lid file and the sm_priority path. Exit 0 all pass, 1 a check failed.\n"
        "Example:\n"
        "  ibfabric doctor\n"
        "  ibfabric doctor --opensm-log /var/log/opensm.log --json");
    cmd->add_option("--opensm-conf", paths->opensm_conf, "OpenSM's config file")->capture_default_str();
    cmd->add_option("--plugin-dir", paths->plugin_dirs,
                    "where to look for libibfabric_osm.so (repeatable; default: the loader's directories from --ld-so-conf, /lib, /usr/lib)");
    cmd->add_option("--ld-so-conf", paths->ld_so_conf, "the dynamic loader's config")->capture_default_str();
    cmd->add_option("--opensm-bin", paths->opensm_bin, "the installed opensm binary")->capture_default_str();
    cmd->add_option("--opensm-log", paths->opensm_log, "OpenSM's log (opensm -f)")->capture_default_str();
    cmd->add_option("--config", paths->daemon_config, "ibfabricd's config")->capture_default_str();
    cmd->add_option("--keepalived-conf", paths->keepalived_conf, "keepalived's config (checked when ha is on)")->capture_default_str();
    cmd->add_option("--url", paths->url, "the daemon's API (default: from the config's http:)");
    cmd->add_option("--unit", paths->unit,
                    "the daemon's systemd unit whose user and sandbox the HA checks use (its drop-ins in /etc/systemd/system/NAME.d/ too)")
        ->capture_default_str();
    cmd->add_option("--helper-unit", paths->helper_unit,
                    "the root SM helper's unit (when ha.sm_helper is set): its ExecStart= names the files it writes")
        ->capture_default_str();
    cmd->add_option("--umad", paths->umad_glob, "the MAD devices (a glob)")->capture_default_str();
    cmd->add_flag("--json", *json, "one JSON object: {\"ok\", \"checks\": [{name, status, detail, fix}]}");
    cmd->callback([&run, paths, json] {
        run = [paths, json] {
            const auto checks = doctor::run_checks(doctor::probe(*paths));
            if (*json)
                std::cout << doctor::render_json(checks).dump(2) << "\n";
            else
                std::cout << doctor::render_text(checks);
            return doctor::all_passed(checks) ? kExitClean : kExitFindings;
        };
    });
}

}  // namespace ibf::cli
