// The doctor's checks as pure functions of Facts: each verdict, its detail and its fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ibf/doctor.h"

namespace ibf::doctor {
namespace {

FileFact file(const std::string& path, const std::string& text = "", unsigned mode = 0644) {
    FileFact f;
    f.path = path;
    f.exists = true;
    f.is_regular = true;
    f.mode = mode;
    f.owner = f.group = "root";
    f.text = text;
    return f;
}

// A node where everything is right.
Facts healthy() {
    Facts f;
    f.opensm_conf = file("/etc/opensm/opensm.conf",
                         "# OpenSM\nevent_plugin_name ibfabric_osm\nevent_plugin_options socket=/run/ibfabric/osm.sock\nperfmgr TRUE\n");
    f.plugin_dirs = {"/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
    f.plugin = file("/usr/lib/x86_64-linux-gnu/libibfabric_osm.so");
    f.plugin_osm_version = "OpenSM 3.3.23";
    f.opensm_bin = file("/usr/sbin/opensm", "", 0755);
    f.opensm_version = "OpenSM 3.3.23";
    f.opensm_log = file("/var/log/opensm.log",
                        "Dec 01 03:00:00 123 [7F] 0x02 -> ibfabric_osm: loaded (ibfabric 0.1.0, OpenSM 3.3.23), sending to unix:/run/ibfabric/osm.sock\n"
                        "Dec 01 03:00:01 456 [7F] 0x02 -> SUBNET UP\n");
    f.daemon_config = file("/etc/ibfabric/ibfabricd.yaml", "", 0640);
    f.config = DaemonConfig{};
    f.config->token_file = "/etc/ibfabric/token";
    f.config->history_db = "/var/lib/ibfabric/history.db";
    f.socket = file("/run/ibfabric/osm.sock", "", 0660);
    f.socket.is_socket = true;
    f.socket.is_regular = false;
    f.token = file("/etc/ibfabric/token", "", 0600);
    f.history = file("/var/lib/ibfabric/history.db", "", 0600);
    f.daemon_url = "http://127.0.0.1:8639";
    f.daemon_sm = {{"sms", {{{"guid", "0x1"}, {"connected", true}}}}};
    f.daemon_fabric = {{"sweeps_ingested", 3}};
    return f;
}

const Check& find(const std::vector<Check>& r, const std::string& name) {
    for (const auto& c : r)
        if (c.name == name) return c;
    throw std::runtime_error("no check " + name);
}

TEST(Doctor, AHealthyNodePassesEveryCheckInOrder) {
    const auto r = run_checks(healthy());
    std::vector<std::string> names;
    for (const auto& c : r) names.push_back(c.name);
    EXPECT_EQ(names, (std::vector<std::string>{"opensm.conf", "plugin file", "plugin version", "opensm log", "port counters",
                                                "daemon config", "daemon", "socket", "token", "history db", "keepalived",
                                                "MAD access", "guid2lid", "sm priority"}));
    const std::vector<std::string> skipped{"keepalived", "MAD access", "guid2lid", "sm priority"};  // ha is off
    for (const auto& c : r)
        EXPECT_EQ(c.status, std::count(skipped.begin(), skipped.end(), c.name) ? Status::skip : Status::ok) << c.name << ": " << c.detail;
    EXPECT_EQ(find(r, "port counters").detail,
              "OpenSM's perfmgr reads every port each 180 s; the plugin forwards the counters (per-link /metrics, port_errors)");
    EXPECT_TRUE(all_passed(r));
    EXPECT_EQ(find(r, "daemon").detail, "ibfabricd at http://127.0.0.1:8639: 1 plugin(s) connected, 3 sweep(s) received");
    EXPECT_EQ(find(r, "opensm log").detail,
              "ibfabric_osm: loaded (ibfabric 0.1.0, OpenSM 3.3.23), sending to unix:/run/ibfabric/osm.sock");
}

TEST(Doctor, OpensmConfWithoutThePluginOrWithAnotherSocketFails) {
    Facts f = healthy();
    f.opensm_conf.text = "#event_plugin_name ibfabric_osm\nevent_plugin_name osmeventplugin\n";
    Check c = check_opensm_conf(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "/etc/opensm/opensm.conf has no 'event_plugin_name ibfabric_osm' (it names: osmeventplugin)");
    f.opensm_conf.text = "event_plugin_name osmeventplugin ibfabric_osm\nevent_plugin_options socket=/tmp/other.sock\n";
    c = check_opensm_conf(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "the plugin sends to /tmp/other.sock but ibfabricd listens on /run/ibfabric/osm.sock");
    f.opensm_conf.text = "event_plugin_name ibfabric_osm\n";
    EXPECT_EQ(check_opensm_conf(f).status, Status::warn);  // defaults: the same socket
    f.opensm_conf.text = "event_plugin_name ibfabric_osm\nevent_plugin_options tcp=10.0.0.2:8640\n";
    EXPECT_EQ(check_opensm_conf(f).status, Status::ok);  // TCP only: no socket to compare
    f.opensm_conf = FileFact{.path = "/etc/opensm/opensm.conf"};
    c = check_opensm_conf(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "/etc/opensm/opensm.conf does not exist");
}

TEST(Doctor, PluginMissingOrWritableOrBuiltForAnotherOpensm) {
    Facts f = healthy();
    f.plugin.mode = 0664;
    EXPECT_EQ(check_plugin_file(f).status, Status::fail);
    f.plugin = FileFact{};
    Check c = check_plugin_file(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "libibfabric_osm.so is in none of the loader's directories: /usr/lib/x86_64-linux-gnu /lib /usr/lib");
    EXPECT_EQ(check_plugin_version(f).status, Status::skip);

    f = healthy();
    f.opensm_version = "OpenSM 5.17.0.MLNX";  // a vendor OpenSM
    c = check_plugin_version(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "the plugin is built for OpenSM 3.3.23, the installed opensm is OpenSM 5.17.0.MLNX: OpenSM skips it (\"OpenSM version mismatch\")");
    EXPECT_NE(c.fix.find("rebuild the plugin"), std::string::npos);
    f.opensm_bin.path = "/opt/mellanox/sbin/opensm";  // the fix names the rebuild against that OpenSM's prefix
    EXPECT_EQ(check_plugin_version(f).fix,
              "rebuild the plugin against this OpenSM's headers: cmake -S <ibfabric source> -B build-osm "
              "-DOPENSM_ROOT=/opt/mellanox -DIBF_BUILD_TESTS=OFF && cmake --build build-osm --target package (docs/packaging.md)");
    f.opensm_version = "";
    EXPECT_EQ(check_plugin_version(f).status, Status::warn);
}

TEST(Doctor, TheLatestPluginLineOfTheLogDecides) {
    Facts f = healthy();
    f.opensm_log.text += "x 0x01 -> Error loading plugin 'ibfabric_osm': OpenSM version mismatch - plugin was built against OpenSM 3.3.99 version of OpenSM. Skip loading.\n";
    Check c = check_opensm_log(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "OpenSM refused the plugin: built for another OpenSM: x 0x01 -> Error loading plugin 'ibfabric_osm': OpenSM version mismatch - "
                        "plugin was built against OpenSM 3.3.99 version of OpenSM. Skip loading.");
    f.opensm_log.text += "y -> ibfabric_osm: loaded (ibfabric 0.1.0, OpenSM 3.3.23), sending to unix:/x\n";
    EXPECT_EQ(check_opensm_log(f).status, Status::ok);
    f.opensm_log.text += "z -> Failed to open event plugin \"libibfabric_osm.so\" : \"libibfabric_osm.so: cannot open shared object file\"\n";
    EXPECT_EQ(check_opensm_log(f).detail.rfind("OpenSM could not dlopen the plugin: z -> Failed", 0), 0u);
    f.opensm_log.text = "ibfabric_osm: refusing to load: event_plugin_options: unknown key 'sockte'\n";
    EXPECT_EQ(check_opensm_log(f).detail.rfind("the plugin refused to load", 0), 0u);
    f.opensm_log.text = "SUBNET UP\n";
    EXPECT_EQ(check_opensm_log(f).detail, "/var/log/opensm.log never says 'ibfabric_osm: loaded'");
    f.opensm_log.text = "\x1b]0;pwned\x07 ibfabric_osm: refusing to load: \x1b[31m\n";
    EXPECT_EQ(check_opensm_log(f).detail.find('\x1b'), std::string::npos);  // terminal-safe
}

TEST(Doctor, DaemonDownIdleOrWithoutSnapshots) {
    Facts f = healthy();
    f.daemon_error = "connection refused";
    EXPECT_EQ(check_daemon(f).detail, "ibfabricd at http://127.0.0.1:8639 does not answer: connection refused");
    f = healthy();
    f.daemon_sm = {{"sms", {{{"connected", false}}}}};
    EXPECT_EQ(check_daemon(f).status, Status::fail);
    EXPECT_EQ(check_daemon(f).detail, "ibfabricd at http://127.0.0.1:8639 answers but no OpenSM plugin is connected");
    f = healthy();
    f.daemon_fabric = {{"sweeps_ingested", 0}};
    EXPECT_EQ(check_daemon(f).status, Status::warn);
}

TEST(Doctor, PermissionsOfSocketTokenAndDatabase) {
    Facts f = healthy();
    f.socket.mode = 0666;
    EXPECT_EQ(check_socket(f).detail, "/run/ibfabric/osm.sock is world-writable (mode 0666)");
    f.socket.mode = 0600;
    EXPECT_EQ(check_socket(f).status, Status::warn);  // differs from the config's 0660
    f.socket.is_socket = false;
    EXPECT_EQ(check_socket(f).status, Status::fail);
    f.token.mode = 0644;
    EXPECT_EQ(check_token(f).detail, "/etc/ibfabric/token has mode 0644: ibfabricd refuses it");
    f.token.mode = 0640;
    EXPECT_EQ(check_token(f).status, Status::ok);
    f.history.mode = 0644;
    EXPECT_EQ(check_history(f).status, Status::fail);
    f.history.exists = false;
    EXPECT_EQ(check_history(f).status, Status::warn);
    f.config->token_file.clear();
    f.token = FileFact{};
    EXPECT_EQ(check_token(f).status, Status::skip);
    f.config.reset();
    EXPECT_EQ(check_socket(f).status, Status::skip);
}

TEST(Doctor, KeepalivedIsCheckedOnlyWithHa) {
    Facts f = healthy();
    EXPECT_EQ(check_keepalived(f).status, Status::skip);
    f.config->ha.mode = ha::Mode::act;
    f.config->ha.track_file = "/run/ibfabric/sm-state";
    f.keepalived_conf = file("/etc/keepalived/keepalived.conf", "vrrp_instance X {}\n");
    EXPECT_EQ(check_keepalived(f).detail, "/etc/keepalived/keepalived.conf does not track /run/ibfabric/sm-state (the daemon's ha.track_file)");
    f.keepalived_conf.text = "track_file t { file \"/run/ibfabric/sm-state\" }\nnotify_master \"/usr/bin/ibfabric ha notify MASTER\"\n";
    EXPECT_EQ(check_keepalived(f).status, Status::ok);
    f.keepalived_conf = FileFact{.path = "/etc/keepalived/keepalived.conf"};
    EXPECT_EQ(check_keepalived(f).status, Status::fail);
}

TEST(Doctor, PerfmgrOffIsSaidWithHowToTurnItOnButFailsNothing) {
    Facts f = healthy();
    f.opensm_conf.text = "event_plugin_name ibfabric_osm\n#perfmgr TRUE\n";
    Check c = check_perfmgr(f);
    EXPECT_EQ(c.status, Status::skip);
    EXPECT_EQ(c.detail, "OpenSM's perfmgr is off in /etc/opensm/opensm.conf: no per-link error counters, no port_errors findings");
    EXPECT_EQ(c.fix, "for link health set 'perfmgr TRUE' (commented out in /usr/share/ibfabric/opensm-ibfabric.conf) and restart opensm");
    EXPECT_TRUE(all_passed(run_checks(f)));
    f.opensm_conf.text = "perfmgr FALSE\n";
    EXPECT_EQ(check_perfmgr(f).status, Status::skip);
    f.opensm_conf.text = "perfmgr true\nperfmgr_sweep_time_s 30\n";
    EXPECT_EQ(check_perfmgr(f).detail,
              "OpenSM's perfmgr reads every port each 30 s; the plugin forwards the counters (per-link /metrics, port_errors)");
    f.opensm_conf = FileFact{.path = "/etc/opensm/opensm.conf"};
    EXPECT_EQ(check_perfmgr(f).status, Status::skip);
}

TEST(Doctor, Helpers) {
    EXPECT_EQ(conf_value("a 1\n  event_plugin_name  x y \n# event_plugin_name z\nevent_plugin_names q\n", "event_plugin_name"), "x y");
    EXPECT_EQ(conf_value("event_plugin_name\n", "event_plugin_name"), std::nullopt);
    EXPECT_EQ(find_osm_version(std::string("\x7f" "ELF..OpenSM \0OpenSM 3.3.23\0tail", 30)), "OpenSM 3.3.23");
    EXPECT_EQ(find_osm_version("loaded (ibfabric 0.1.0, OpenSM 3.3.23), sending"), "");  // not terminated: a log line
    EXPECT_EQ(find_osm_version(std::string("OpenSM 3.3\0", 11)), "");
    // Vendor and source builds carry a suffix (MLNX_OFED's OpenSM 5.x); a log line still does not match.
    EXPECT_EQ(find_osm_version(std::string("x\0OpenSM 5.17.0.MLNX20231105.b4a4c2d\0y", 38)), "OpenSM 5.17.0.MLNX20231105.b4a4c2d");
    EXPECT_EQ(find_osm_version("#define OSM_VERSION \"OpenSM 3.3.23-other\""), "OpenSM 3.3.23-other");
    EXPECT_EQ(find_osm_version("loaded (ibfabric 0.1.0, OpenSM 3.3.23-other), sending"), "");
    EXPECT_EQ(ld_so_conf_dirs("include /etc/ld.so.conf.d/*.conf\n# c\n/usr/local/lib\n/lib/x86_64-linux-gnu # multiarch\n"),
              (std::vector<std::string>{"/usr/local/lib", "/lib/x86_64-linux-gnu"}));
}

TEST(Doctor, TextIsOneLinePerCheckAndJsonSaysOk) {
    Facts f = healthy();
    f.token.mode = 0644;
    const auto r = run_checks(f);
    const std::string text = render_text(r);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(r.size()));
    EXPECT_NE(text.find("FAIL  token           /etc/ibfabric/token has mode 0644: ibfabricd refuses it; fix: chmod 0600 /etc/ibfabric/token\n"),
              std::string::npos) << text;
    const auto j = render_json(r);
    EXPECT_EQ(j["ok"], false);
    EXPECT_EQ(j["checks"][8]["name"], "token");
    EXPECT_EQ(j["checks"][8]["status"], "fail");
    EXPECT_FALSE(all_passed(r));
}

// HA on, the unit's sandbox given as text: the MAD device crw-rw---- root:rdma, guid2lid in
// /var/cache/opensm and opensm.conf in /etc/opensm, both directories group-writable by "ibfabric"
// and both files ibfabric's (the direct path replaces them keeping their owner).
Facts ha_node(const std::vector<std::string>& unit_texts) {
    Facts f = healthy();
    f.config->ha.mode = ha::Mode::act;
    f.config->ha.guid2lid_file = "/var/cache/opensm/guid2lid";
    f.config->ha.opensm_conf = "/etc/opensm/opensm.conf";
    f.unit = parse_unit("/usr/lib/systemd/system/ibfabricd.service", unit_texts);
    f.unit_user = Account{"ibfabric", true, {"ibfabric"}};
    FileFact umad = file("/dev/infiniband/umad0", "", 0660);
    umad.group = "rdma";
    f.umad_devices = {umad};
    f.guid2lid = file("/var/cache/opensm/guid2lid", "", 0640);
    f.guid2lid.owner = f.guid2lid.group = "ibfabric";
    f.guid2lid_dir = file("/var/cache/opensm", "", 0775);
    f.guid2lid_dir.group = "ibfabric";
    f.ha_opensm_conf = file("/etc/opensm/opensm.conf", "", 0640);
    f.ha_opensm_conf.owner = f.ha_opensm_conf.group = "ibfabric";
    f.ha_opensm_conf_dir = file("/etc/opensm", "", 0775);
    f.ha_opensm_conf_dir.group = "ibfabric";
    return f;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The shipped unit opens the MAD device; guid2lid and sm_priority go through the root helper
// (ha.sm_helper, its socket root:ibfabric 0660 as ibfabric-sm-helper.socket makes it).
TEST(DoctorHa, TheShippedUnitsPassWithTheHelper) {
    const std::string shipped = read_text(std::string(IBF_SOURCE_DIR) + "/packaging/ibfabricd.service");
    ASSERT_NE(shipped.find("[Service]"), std::string::npos);
    Facts f = ha_node({shipped});
    EXPECT_EQ(f.unit.user, "ibfabric");
    f.config->ha.sm_helper = "/run/ibfabric-sm-helper.sock";
    f.sm_helper = file("/run/ibfabric-sm-helper.sock", "", 0660);
    f.sm_helper.is_socket = true;
    f.sm_helper.is_regular = false;
    f.sm_helper.group = "ibfabric";
    f.helper_unit = parse_unit("/usr/lib/systemd/system/ibfabric-sm-helper@.service",
                               {read_text(std::string(IBF_SOURCE_DIR) + "/packaging/ibfabric-sm-helper@.service")});
    EXPECT_EQ(check_mad_access(f).detail,
              "ibfabric can open /dev/infiniband/umad0 (read and write) under /usr/lib/systemd/system/ibfabricd.service");
    EXPECT_EQ(check_mad_access(f).status, Status::ok);
    Check c = check_guid2lid(f);
    EXPECT_EQ(c.status, Status::ok) << c.detail;
    EXPECT_EQ(c.detail, "ibfabric reaches the root helper at /run/ibfabric-sm-helper.sock (0660 root:ibfabric): "
                        "keeping the standby's guid2lid current goes through it (it writes /var/cache/opensm/guid2lid)");
    c = check_priority_path(f);
    EXPECT_EQ(c.status, Status::ok) << c.detail;
    EXPECT_EQ(c.detail, "ibfabric reaches the root helper at /run/ibfabric-sm-helper.sock (0660 root:ibfabric): "
                        "setting sm_priority goes through it (it writes /etc/opensm/opensm.conf)");
    // The socket missing (the .socket unit not enabled), or one ibfabric cannot connect to.
    Facts off = f;
    off.sm_helper.exists = false;
    c = check_priority_path(off);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "/run/ibfabric-sm-helper.sock (ha.sm_helper) does not exist: setting sm_priority fails");
    EXPECT_EQ(c.fix, "systemctl enable --now ibfabric-sm-helper.socket");
    EXPECT_EQ(check_guid2lid(off).status, Status::fail);
    Facts closed = f;
    closed.sm_helper.group = "root";
    c = check_guid2lid(closed);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.fix, "SocketGroup=ibfabric and SocketMode=0660 in ibfabric-sm-helper.socket");
    f.keepalived_conf = file("/etc/keepalived/keepalived.conf", "notify_master \"/usr/bin/ibfabric ha notify\"\n");
    const auto all = run_checks(f);
    EXPECT_TRUE(all_passed(all)) << render_text(all);
}

// The helper writes the files its own ExecStart= names: a daemon config or a drop-in that points
// elsewhere means the agent's guid2lid or priority never reaches OpenSM, and doctor says which.
TEST(DoctorHa, TheHelperMustWriteTheFilesOpenSmReads) {
    const std::string helper = read_text(std::string(IBF_SOURCE_DIR) + "/packaging/ibfabric-sm-helper@.service");
    ASSERT_NE(helper.find("--guid2lid /var/cache/opensm/guid2lid"), std::string::npos);
    Facts f = ha_node({read_text(std::string(IBF_SOURCE_DIR) + "/packaging/ibfabricd.service")});
    f.config->ha.sm_helper = "/run/ibfabric-sm-helper.sock";
    f.sm_helper = file("/run/ibfabric-sm-helper.sock", "", 0660);
    f.sm_helper.is_socket = true;
    f.sm_helper.is_regular = false;
    f.sm_helper.group = "ibfabric";
    const std::string unit = "/usr/lib/systemd/system/ibfabric-sm-helper@.service";
    f.helper_unit = parse_unit(unit, {helper});
    EXPECT_EQ(exec_option(f.helper_unit, "--guid2lid"), "/var/cache/opensm/guid2lid");
    EXPECT_EQ(exec_option(f.helper_unit, "--opensm-conf"), "/etc/opensm/opensm.conf");
    EXPECT_EQ(exec_option(f.helper_unit, "--nope"), std::nullopt);
    ASSERT_EQ(check_guid2lid(f).status, Status::ok);
    ASSERT_EQ(check_priority_path(f).status, Status::ok);

    // The daemon keeps guid2lid somewhere the helper does not write.
    Facts other = f;
    other.config->ha.guid2lid_file = "/var/lib/opensm/guid2lid";
    Check c = check_guid2lid(other);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, unit + " writes /var/cache/opensm/guid2lid (--guid2lid) but ha.guid2lid_file is /var/lib/opensm/guid2lid: "
                               "keeping the standby's guid2lid current never reaches OpenSM");
    EXPECT_EQ(c.fix, "make them the same file: --guid2lid in the helper's ExecStart= (systemctl edit ibfabric-sm-helper@.service) "
                     "or ha.guid2lid_file");
    EXPECT_EQ(check_priority_path(other).status, Status::ok);

    // A drop-in moves opensm.conf: the last ExecStart= wins, as in systemd (an empty one resets).
    Facts moved = f;
    moved.helper_unit = parse_unit(unit, {helper, "[Service]\nExecStart=\nExecStart=/usr/libexec/ibfabric/ibfabric-sm-helper "
                                                  "--opensm-conf /etc/opensm/other.conf --guid2lid /var/cache/opensm/guid2lid\n"});
    c = check_priority_path(moved);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_NE(c.detail.find("writes /etc/opensm/other.conf (--opensm-conf) but the opensm.conf OpenSM reads (doctor --opensm-conf) "
                            "is /etc/opensm/opensm.conf"),
              std::string::npos)
        << c.detail;
    EXPECT_EQ(check_guid2lid(moved).status, Status::ok);

    // No --guid2lid at all, and no helper unit found.
    Facts bare = f;
    bare.helper_unit = parse_unit(unit, {"[Service]\nExecStart=/usr/libexec/ibfabric/ibfabric-sm-helper --opensm-conf /etc/opensm/opensm.conf\n"});
    c = check_guid2lid(bare);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, unit + ": its ExecStart= has no --guid2lid: keeping the standby's guid2lid current fails");
    Facts none = f;
    none.helper_unit = {};
    c = check_guid2lid(none);
    EXPECT_EQ(c.status, Status::warn);
    EXPECT_NE(c.detail.find("its unit was not found"), std::string::npos) << c.detail;
    EXPECT_EQ(c.fix, "install the ibfabric package (ibfabric-sm-helper@.service), or give doctor --helper-unit");
}

// Without ha.sm_helper the daemon would write both files itself: the shipped sandbox forbids it,
// and the fix names the helper, not a wider unit.
TEST(DoctorHa, WithoutTheHelperTheShippedUnitCannotWriteGuid2LidOrThePriority) {
    const std::string shipped = read_text(std::string(IBF_SOURCE_DIR) + "/packaging/ibfabricd.service");
    const Facts f = ha_node({shipped});
    Check c = check_guid2lid(f);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_NE(c.detail.find("ProtectSystem=strict makes /var/cache/opensm/guid2lid read-only"), std::string::npos) << c.detail;
    EXPECT_EQ(c.fix, "ha.sm_helper: /run/ibfabric-sm-helper.sock in the daemon config and systemctl enable --now "
                     "ibfabric-sm-helper.socket (the root helper), not a wider unit (docs/ha.md \"Privileges under the packaged unit\")");
    EXPECT_EQ(check_priority_path(f).status, Status::fail);
    EXPECT_EQ(check_priority_path(f).fix, c.fix);
    EXPECT_FALSE(all_passed(run_checks(f)));
}

// Each device option of the shipped unit is needed by the MAD check and by nothing else; the
// direct path (a drop-in that widens the unit, for a lab) still works option by option.
TEST(DoctorHa, EachUnitOptionIsNeededByExactlyOneCheck) {
    const std::string shipped = read_text(std::string(IBF_SOURCE_DIR) + "/packaging/ibfabricd.service");
    const Facts base = ha_node({shipped});
    for (const std::string undo : {"PrivateDevices=yes\n", "DeviceAllow=\n", "SupplementaryGroups=\n"}) {
        const Facts f = ha_node({shipped, "[Service]\n" + undo});
        EXPECT_EQ(check_mad_access(f).status, Status::fail) << undo;
        EXPECT_EQ(check_guid2lid(f).status, check_guid2lid(base).status) << undo;
        EXPECT_EQ(check_priority_path(f).status, check_priority_path(base).status) << undo;
    }
    EXPECT_EQ(check_mad_access(ha_node({shipped, "[Service]\nPrivateDevices=yes\n"})).detail,
              "/usr/lib/systemd/system/ibfabricd.service: PrivateDevices=yes hides /dev/infiniband/umad*: no SMInfo probes, no failover");
    const std::vector<std::pair<std::string, std::string>> options{
        {"ReadWritePaths=-/var/cache/opensm\n", "guid2lid"},
        {"ReadWritePaths=/etc/opensm\n", "sm priority"},
        {"AmbientCapabilities=CAP_KILL\nProtectProc=default\n", "sm priority"},
    };
    auto dropin = [&options](size_t without) {
        std::string t = "[Service]\n";
        for (size_t i = 0; i < options.size(); ++i)
            if (i != without) t += options[i].first;
        return t;
    };
    const Facts all = ha_node({shipped, dropin(options.size())});
    for (const auto& c : {check_mad_access(all), check_guid2lid(all), check_priority_path(all)})
        EXPECT_EQ(c.status, Status::ok) << c.name << ": " << c.detail;
    for (size_t i = 0; i < options.size(); ++i) {
        const Facts f = ha_node({shipped, dropin(i)});
        for (const auto& c : {check_mad_access(f), check_guid2lid(f), check_priority_path(f)})
            EXPECT_EQ(c.status, c.name == options[i].second ? Status::fail : Status::ok)
                << "without " << options[i].first << c.name << ": " << c.detail;
    }
    // A file the agent's user does not own is never replaced (its owner is kept, which only root
    // may do), even when its group and mode let the user read it: doctor says so and how to fix it.
    Facts roots = all;
    roots.guid2lid.owner = "root";
    const Check c = check_guid2lid(roots);
    EXPECT_EQ(c.status, Status::fail);
    EXPECT_EQ(c.detail, "/var/cache/opensm/guid2lid (0640 root:ibfabric) is not ibfabric's: the agent replaces it keeping its owner, "
                        "which only root may do: keeping the standby's guid2lid current fails");
    EXPECT_EQ(c.fix.rfind("chown ibfabric /var/cache/opensm/guid2lid (its mode is kept), or ha.sm_helper", 0), 0u) << c.fix;
    EXPECT_EQ(check_priority_path(roots).status, Status::ok);
    // An empty assignment resets a list, as in systemd: the unit's DeviceAllow= is gone again.
    const Facts reset = ha_node({shipped, dropin(options.size()), "[Service]\nDeviceAllow=\n"});
    EXPECT_EQ(check_mad_access(reset).status, Status::fail);
}

TEST(DoctorHa, DeviceModesAndGroupsDecideAccess) {
    FileFact d = file("/dev/infiniband/umad0", "", 0600);
    const Account user{"ibfabric", true, {"ibfabric"}};
    EXPECT_FALSE(may_access(d, user, {}, 6));
    EXPECT_TRUE(may_access(d, Account{"root", true, {}}, {}, 6));
    d.mode = 0660;
    d.group = "rdma";
    EXPECT_FALSE(may_access(d, user, {}, 6));
    EXPECT_TRUE(may_access(d, user, {"rdma"}, 6));   // SupplementaryGroups=rdma
    d.mode = 0666;
    EXPECT_TRUE(may_access(d, user, {}, 6));
    d.mode = 0664;
    EXPECT_FALSE(may_access(d, user, {}, 6));
    FileFact missing;
    EXPECT_FALSE(may_access(missing, user, {}, 4));
}

}  // namespace
}  // namespace ibf::doctor
