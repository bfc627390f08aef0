// Waiver files, --min-severity / --kind filters and the plan's scope: (checks/waivers.h, docs/findings.md).
#include <gtest/gtest.h>

#include <string>

#include "ibf/error.h"
#include "ibf/report.h"
#include "ibf/waivers.h"

namespace ibf {
namespace {

// The one-line error parse_waivers() gives for `text` as w.yaml ("no error" when it parses).
std::string err(const std::string& text) {
    try {
        parse_waivers(text, "w.yaml");
    } catch (const InputError& e) {
        return std::string(e.what());
    }
    return std::string("no error");
}

constexpr int64_t kDay = 86'400'000;
// 2027-01-01T00:00:00Z
constexpr int64_t kJan1 = 1798761600000;

Finding misplaced(const std::string& sw, int port, const std::string& host, Guid hg = 0x10) {
    Finding f;
    f.kind = FindingKind::host_misplaced;
    f.severity = Severity::warning;
    f.a = {sw, 0x1, port};
    f.b = {host, hg, 1};
    f.message = "host " + host + "/1 is cabled to spine " + sw + "/" + std::to_string(port);
    return f;
}

Finding miswired(const std::string& a, int pa, const std::string& label) {
    Finding f;
    f.kind = FindingKind::miswired;
    f.severity = Severity::error;
    f.a = {a, 0x2, pa};
    f.b = {"spine02", 0x3, 7};
    f.label = label;
    f.message = "cable at " + a + "/" + std::to_string(pa) + " goes elsewhere";
    return f;
}

const char* kFile = R"(waivers:
  - kind: host_misplaced
    ends: [spine01/35]
    reason: storage01 sits on the spines by design
    expires: 2027-03-01
  - name: "mgmt*"
    reason: management nodes are cabled by the facilities team
  - labels: [C-0117]
    kind: [miswired, rate_mismatch]
    reason: crossed on purpose for the burn-in
    expires: 2026-12-31
)";

TEST(Waivers, ParsesEveryField) {
    const WaiverSet w = parse_waivers(kFile, "w.yaml");
    ASSERT_EQ(w.waivers.size(), 3u);
    EXPECT_EQ(w.waivers[0].kinds, std::vector<FindingKind>{FindingKind::host_misplaced});
    EXPECT_EQ(w.waivers[0].ends, std::vector<std::string>{"spine01/35"});
    EXPECT_EQ(w.waivers[0].expires, "2027-03-01");
    EXPECT_EQ(w.waivers[0].expires_unix_ms, kJan1 + 60 * kDay);  // through the whole of 1 March
    EXPECT_EQ(w.waivers[0].where, "w.yaml:2");
    EXPECT_EQ(w.waivers[1].name, "mgmt*");
    EXPECT_EQ(w.waivers[1].expires_unix_ms, 0);
    EXPECT_EQ(w.waivers[1].where, "w.yaml:6");
    EXPECT_EQ(w.waivers[2].kinds.size(), 2u);
    EXPECT_EQ(w.waivers[2].labels, std::vector<std::string>{"C-0117"});
    EXPECT_EQ(w.waivers[2].where, "w.yaml:8");
}

TEST(Waivers, ErrorsNameFileLineAndColumn) {
    EXPECT_EQ(err("waivers:\n  - kind: host_misplacd\n    reason: x\n"),
              "w.yaml:2:11: unknown finding kind 'host_misplacd' (expected one of: missing_link, unexpected_link, "
              "miswired, missing_node, unexpected_node, identity_changed, rate_mismatch, rate_below_capability, mtu_mismatch, "
              "missing_uplink, uneven_bundle, tier_skip, intra_tier_link, host_misplaced, rate_outlier, "
              "host_on_uplink_port, routing_fallback, lft_imbalance, sm_split_brain, sm_master_lid_mismatch, "
              "sm_stalled, sm_not_sweeping, sm_unknown, sm_config_mismatch, sm_no_standby, sm_standby_not_polling, sm_conf_drift, "
              "lid_changed, link_flapping, port_errors, waiver_expired, route_unreachable, route_loop, credit_loop, "
              "route_non_minimal, route_via_degraded_link, host_absent)");
    EXPECT_EQ(err("waivers:\n  - kind: miswired\n"),
              "w.yaml:2:5: a waiver needs a reason: (why this is intended, for the next administrator)");
    EXPECT_EQ(err("waivers:\n  - reason: everything\n"),
              "w.yaml:2:5: a waiver needs at least one of kind, ends, labels, name (it would waive everything)");
    EXPECT_EQ(err("waivers:\n  - kind: miswired\n    reason: x\n    expires: 2027-02-30\n"),
              "w.yaml:4:14: bad date '2027-02-30' for 'expires': expected YYYY-MM-DD");
    EXPECT_EQ(err("waivers:\n  - kind: miswired\n    reasons: x\n"),
              "w.yaml:3:5: unknown key 'reasons' in a waiver; did you mean 'reason'? (expected one of: kind, ends, labels, "
              "name, reason, expires)");
    EXPECT_EQ(err("- kind: miswired\n"),
              "w.yaml:1:1: expected a map with `waivers:` and/or `maintenance:` (lists, see docs/findings.md)");
    EXPECT_EQ(err("waivers: [\n"), "w.yaml:2:1: YAML syntax error: end of sequence flow not found");
}

// Issue 19 item 10: the probe's file took the first `expires:` and reported the waiver expired.
TEST(Waivers, DuplicateKeysAreErrorsWithFileAndLine) {
    EXPECT_EQ(err("waivers:\n  - kind: miswired\n    reason: x\n    expires: 2020-01-01\n    expires: 2099-12-31\n"),
              "w.yaml:5:5: duplicate key 'expires' in a waiver (first at w.yaml:4)");
    EXPECT_EQ(err("waivers:\n  - kind: miswired\n    reason: x\n    reason: y\n"),
              "w.yaml:4:5: duplicate key 'reason' in a waiver (first at w.yaml:3)");
    EXPECT_EQ(err("waivers: []\nwaivers:\n  - kind: miswired\n    reason: x\n"),
              "w.yaml:2:1: duplicate key 'waivers' in the waiver file (first at w.yaml:1)");
}

// Issue 19 item 4: 250k labels, then 70k `- *w` aliases of that waiver (990 KB) asked for ~17.5G
// strings and ended in std::bad_alloc after 53 s. Now one line naming the file, at once.
TEST(Waivers, AliasesAndLongListsAreBoundedByExpandedSize) {
    std::string text = "waivers:\n  - &w\n    reason: r\n    labels: [";
    for (int i = 0; i < 250000; ++i) text += i ? ",a" : "a";
    text += "]\n";
    for (int i = 0; i < 70000; ++i) text += "  - *w\n";
    ASSERT_LT(text.size(), size_t{1} << 20);  // within the 1 MiB the readers allow
    try {
        parse_waivers(text, "w.yaml");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "w.yaml");
        EXPECT_EQ(e.line(), 4);
        EXPECT_NE(e.message().find("more than 100000 YAML nodes"), std::string::npos) << e.what();
    }
    // Aliases alone (block lists, no flow list to count early): 2k labels x 70k aliases.
    text = "waivers:\n  - &w\n    reason: r\n    labels:\n";
    for (int i = 0; i < 2000; ++i) text += "      - a\n";
    for (int i = 0; i < 70000; ++i) text += "  - *w\n";
    try {
        parse_waivers(text, "w.yaml");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_GT(e.line(), 2004) << e.what();  // at the alias that passes the bound
        EXPECT_NE(e.message().find("aliases counted as what they stand for"), std::string::npos) << e.what();
    }
    // Within the bound, aliases still work: each is a full copy of the waiver.
    const WaiverSet ok = parse_waivers("waivers:\n  - &w\n    labels: [C1, C2]\n    reason: r\n  - *w\n", "w.yaml");
    ASSERT_EQ(ok.waivers.size(), 2u);
    EXPECT_EQ(ok.waivers[1].labels, (std::vector<std::string>{"C1", "C2"}));
}

TEST(Waivers, MatchByKindEndsLabelsAndName) {
    const WaiverSet w = parse_waivers(kFile, "w.yaml");
    EXPECT_TRUE(waiver_matches(w.waivers[0], misplaced("spine01", 35, "storage01")));
    EXPECT_FALSE(waiver_matches(w.waivers[0], misplaced("spine01", 36, "storage01")));   // other port
    EXPECT_FALSE(waiver_matches(w.waivers[0], misplaced("spine02", 35, "storage01")));   // other switch
    EXPECT_TRUE(waiver_matches(w.waivers[1], misplaced("spine02", 3, "mgmt07")));        // name pattern on b
    EXPECT_FALSE(waiver_matches(w.waivers[1], misplaced("spine02", 3, "gpu07")));
    EXPECT_TRUE(waiver_matches(w.waivers[2], miswired("leaf01", 3, "C-0117")));
    EXPECT_FALSE(waiver_matches(w.waivers[2], miswired("leaf01", 3, "C-0118")));
    Waiver both;
    both.ends = {"spine02/7", "leaf01"};  // either order, port optional
    both.reason = "r";
    EXPECT_TRUE(waiver_matches(both, miswired("leaf01", 3, "")));
    EXPECT_FALSE(waiver_matches(both, miswired("leaf02", 3, "")));
    Waiver guid;
    guid.ends = {"0x0000000000000010"};
    guid.reason = "r";
    EXPECT_TRUE(waiver_matches(guid, misplaced("spine01", 1, "host-0010", 0x10)));
}

TEST(Waivers, ApplySplitsAndExpiredWaiversAreFindings) {
    const WaiverSet w = parse_waivers(kFile, "w.yaml");
    std::vector<Finding> fs = {misplaced("spine01", 35, "storage01"), misplaced("spine01", 36, "storage02"),
                               miswired("leaf01", 3, "C-0117")};
    // 2027-01-15: the burn-in waiver (through 2026-12-31) has expired, the storage one holds.
    Waived r = apply_waivers(fs, w, kJan1 + 14 * kDay);
    ASSERT_EQ(r.waived.size(), 1u);
    EXPECT_EQ(r.waived[0].finding.b.name, "storage01");
    EXPECT_EQ(r.waived[0].reason, "storage01 sits on the spines by design");
    EXPECT_EQ(r.waived[0].where, "w.yaml:2");
    ASSERT_EQ(r.active.size(), 3u);
    EXPECT_EQ(r.active[0].b.name, "storage02");
    EXPECT_EQ(r.active[1].kind, FindingKind::miswired);  // its waiver expired: it counts again
    EXPECT_EQ(r.active[2].kind, FindingKind::waiver_expired);
    EXPECT_EQ(r.active[2].severity, Severity::warning);
    EXPECT_EQ(r.active[2].a.name, "w.yaml:8");
    EXPECT_EQ(r.active[2].message,
              "waiver at w.yaml:8 (crossed on purpose for the burn-in) expired after 2026-12-31; what it waived counts "
              "again: fix it, or renew the waiver's expires: date");
    // The last millisecond of 2026-12-31 still waives.
    r = apply_waivers(fs, w, kJan1 - 1);
    EXPECT_EQ(r.waived.size(), 2u);
    EXPECT_EQ(r.active.size(), 1u);
}

TEST(Waivers, EmptyFileWaivesNothing) {
    EXPECT_TRUE(parse_waivers("", "w.yaml").empty());
    EXPECT_TRUE(parse_waivers("waivers:\n", "w.yaml").empty());
}

TEST(FindingFilter, MinSeverityAndKinds) {
    Waived r{{misplaced("spine01", 1, "a"), miswired("leaf01", 2, "")}, {{miswired("leaf02", 3, ""), "why", "w:1", ""}}};
    Waived e = r;
    filter_findings(e, parse_finding_filter("error", ""));
    ASSERT_EQ(e.active.size(), 1u);
    EXPECT_EQ(e.active[0].kind, FindingKind::miswired);
    EXPECT_EQ(e.waived.size(), 1u);
    Waived k = r;
    filter_findings(k, parse_finding_filter("", "host_misplaced,rate_mismatch"));
    ASSERT_EQ(k.active.size(), 1u);
    EXPECT_EQ(k.active[0].kind, FindingKind::host_misplaced);
    EXPECT_TRUE(k.waived.empty());
    EXPECT_THROW(parse_finding_filter("fatal", ""), InputError);
    try {
        parse_finding_filter("", "miswird");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).substr(0, 44), "--kind: unknown finding kind 'miswird' (expe");
    }
}

TEST(Waivers, TextAndJsonOfTheWaived) {
    const WaiverSet w = parse_waivers(kFile, "w.yaml");
    Waived r = apply_waivers({misplaced("spine01", 35, "storage01"), misplaced("spine01", 4, "mgmt01")}, w, kJan1);
    EXPECT_EQ(render_waived_text(r.waived, false),
              "waived (2)\n"
              "  storage01 sits on the spines by design (w.yaml:2, until 2027-03-01)\n"
              "    warning host_misplaced: host storage01/1 is cabled to spine spine01/35\n"
              "  management nodes are cabled by the facilities team (w.yaml:6)\n"
              "    warning host_misplaced: host mgmt01/1 is cabled to spine spine01/4\n");
    const nlohmann::json j = waived_to_json(r.waived);
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[0]["kind"], "host_misplaced");
    EXPECT_EQ(j[0]["waiver"], nlohmann::json::parse(
                                  R"({"reason": "storage01 sits on the spines by design", "where": "w.yaml:2", "expires": "2027-03-01", "maintenance": false})"));
    EXPECT_EQ(j[1]["waiver"]["expires"], nullptr);
    EXPECT_EQ(render_waived_text({}, false), "");
}

Finding absent(const std::string& host) {
    Finding f;
    f.kind = FindingKind::host_absent;
    f.severity = Severity::warning;
    f.a = {host, 0, 0};
    f.message = "host " + host + " is absent";
    return f;
}

const char* kMaintenance = R"(# hosts of the burn-in
waivers:
  - kind: host_misplaced
    ends: [spine01/35]
    reason: storage01 sits on the spines by design
maintenance:
  - hosts: "node[001-004]"
    until: 2026-12-31
    reason: DIMM replacement
  - hosts: gpu07
    until: 2027-01-31
    reason: GPU RMA
)";

TEST(Maintenance, ParsesHostlistsDatesAndReasons) {
    const WaiverSet w = parse_waivers(kMaintenance, "w.yaml");
    ASSERT_EQ(w.waivers.size(), 1u);
    ASSERT_EQ(w.maintenance.size(), 2u);
    EXPECT_EQ(w.maintenance[0].hosts, "node[001-004]");
    EXPECT_EQ(w.maintenance[0].names, (std::vector<std::string>{"node001", "node002", "node003", "node004"}));
    EXPECT_EQ(w.maintenance[0].until_unix_ms, kJan1);
    EXPECT_EQ(w.maintenance[0].reason, "DIMM replacement");
    EXPECT_EQ(w.maintenance[0].where, "w.yaml:7");
    EXPECT_EQ(w.maintenance[1].names, std::vector<std::string>{"gpu07"});
    // A file of maintenance only.
    EXPECT_EQ(parse_waivers("maintenance:\n  - {hosts: n1, until: 2027-01-01, reason: x}\n", "w.yaml").maintenance.size(), 1u);
}

TEST(Maintenance, ErrorsNameFileLineAndColumn) {
    EXPECT_EQ(err("maintenance:\n  - {hosts: n1, reason: x}\n"), "w.yaml:2:5: a maintenance entry needs until:");
    EXPECT_EQ(err("maintenance:\n  - {hosts: n1, until: 2027-01-01}\n"), "w.yaml:2:5: a maintenance entry needs reason:");
    EXPECT_EQ(err("maintenance:\n  - {hosts: n1, until: 2027-01-01, reason: \"\"}\n"),
              "w.yaml:2:44: a maintenance entry needs a reason: (what is being done, for the next administrator)");
    EXPECT_EQ(err("maintenance:\n  - {hosts: n1, until: 27-01-01, reason: x}\n"),
              "w.yaml:2:24: bad date '27-01-01' for 'until': expected YYYY-MM-DD");
    EXPECT_EQ(err("maintenance:\n  - {hosts: n1, untill: 2027-01-01, reason: x}\n"),
              "w.yaml:2:17: unknown key 'untill' in a maintenance entry; did you mean 'until'? (expected one of: hosts, "
              "until, reason)");
    EXPECT_EQ(err("maintenance:\n  - {hosts: \"n[3-1]\", until: 2027-01-01, reason: x}\n"),
              "w.yaml:2:13: bad hostlist 'n[3-1]': hosts:1:3: range '3-1' runs backwards");
    EXPECT_EQ(err("maintenance: n1\n"), "w.yaml:1:14: expected a list of hosts in maintenance under `maintenance:`");
    // Bounded: 100,001 hosts are refused, whatever the entries.
    EXPECT_EQ(err("maintenance:\n  - {hosts: \"n[000001-060000]\", until: 2027-01-01, reason: x}\n"
                  "  - {hosts: \"m[000001-040001]\", until: 2027-01-01, reason: x}\n"),
              "w.yaml:3:5: more than 100000 hosts in maintenance");
}

TEST(Maintenance, AnAbsentHostInMaintenanceIsNoFindingUntilItsDateEnds) {
    const WaiverSet w = parse_waivers(kMaintenance, "w.yaml");
    Finding link;  // a cable of a host in maintenance (one HCA port down while it is worked on)
    link.kind = FindingKind::missing_link;
    link.a = {"leaf01", 0x1, 3};
    link.b = {"node003", 0x30, 1};
    Finding sw = absent("leaf02");
    sw.kind = FindingKind::missing_node;  // a switch is never covered
    sw.severity = Severity::error;
    Finding crossed = miswired("node002", 1, "");  // nor a fault that is not an outage
    const std::vector<Finding> fs = {absent("node001"), absent("node005"), link, sw, crossed, absent("gpu07")};
    Waived r = apply_waivers(fs, w, kJan1 - 1);
    ASSERT_EQ(r.waived.size(), 3u);
    for (const WaivedFinding& x : r.waived) EXPECT_TRUE(x.maintenance);
    EXPECT_EQ(r.waived[0].finding.a.name, "node001");
    EXPECT_EQ(r.waived[0].reason, "DIMM replacement");
    EXPECT_EQ(r.waived[0].expires, "2026-12-31");
    EXPECT_EQ(r.waived[1].finding.kind, FindingKind::missing_link);
    EXPECT_EQ(r.waived[2].finding.a.name, "gpu07");
    ASSERT_EQ(r.active.size(), 3u);
    EXPECT_EQ(r.active[0].a.name, "node005");
    EXPECT_EQ(r.active[1].kind, FindingKind::missing_node);
    EXPECT_EQ(r.active[2].kind, FindingKind::miswired);
    // 2027-01-01: node[001-004]'s maintenance ended, gpu07's holds.
    r = apply_waivers(fs, w, kJan1);
    ASSERT_EQ(r.waived.size(), 1u);
    EXPECT_EQ(r.waived[0].finding.a.name, "gpu07");
    ASSERT_EQ(r.active.size(), 6u);
    EXPECT_EQ(r.active[5].kind, FindingKind::waiver_expired);
    EXPECT_EQ(r.active[5].message,
              "maintenance of node[001-004] at w.yaml:7 (DIMM replacement) ended after 2026-12-31; its hosts count again: "
              "ibfabric maintenance remove node[001-004], or add it again with a later --until");
}

TEST(Maintenance, TextAndJsonShowHostsInMaintenanceApart) {
    const WaiverSet w = parse_waivers(kMaintenance, "w.yaml");
    Waived r = apply_waivers({absent("node002"), misplaced("spine01", 35, "storage01")}, w, kJan1 - 1);
    EXPECT_EQ(render_waived_text(r.waived, false),
              "in maintenance (1)\n"
              "  DIMM replacement (w.yaml:7, until 2026-12-31)\n"
              "    warning host_absent: host node002 is absent\n"
              "waived (1)\n"
              "  storage01 sits on the spines by design (w.yaml:3)\n"
              "    warning host_misplaced: host storage01/1 is cabled to spine spine01/35\n");
    const nlohmann::json j = waived_to_json(r.waived);
    EXPECT_EQ(j[0]["waiver"], nlohmann::json::parse(
                                  R"({"reason": "DIMM replacement", "where": "w.yaml:7", "expires": "2026-12-31", "maintenance": true})"));
    EXPECT_EQ(j[1]["waiver"]["maintenance"], false);
    EXPECT_EQ(maintenance_to_json(w.maintenance[0], kJan1),
              nlohmann::json::parse(R"({"hosts": "node[001-004]", "count": 4, "until": "2026-12-31",
                                        "reason": "DIMM replacement", "where": "w.yaml:7", "ended": true})"));
}

TEST(Maintenance, EditingTheSectionKeepsEverythingElse) {
    Maintenance m;
    m.hosts = "n[1-2]";
    m.until = "2026-12-24";
    m.reason = "PSU \"B\" swap";
    // No section yet: appended.
    EXPECT_EQ(with_maintenance("waivers: []\n", {m}),
              "waivers: []\nmaintenance:\n  - hosts: \"n[1-2]\"\n    until: 2026-12-24\n    reason: \"PSU \\\"B\\\" swap\"\n");
    EXPECT_EQ(with_maintenance("", {m}), "maintenance:\n  - hosts: \"n[1-2]\"\n    until: 2026-12-24\n    reason: \"PSU \\\"B\\\" swap\"\n");
    // A section between others: only it changes; comments before the next key stay.
    const std::string text =
        "# site waivers\nmaintenance:\n- hosts: old\n  until: 2026-12-01\n  reason: r  # inline\n\n# the waivers\n"
        "waivers:\n  - kind: miswired  # crossed on purpose\n    reason: burn-in\n";
    const std::string out = with_maintenance(text, {m});
    EXPECT_EQ(out, "# site waivers\nmaintenance:\n  - hosts: \"n[1-2]\"\n    until: 2026-12-24\n    reason: \"PSU \\\"B\\\" swap\"\n"
                   "\n# the waivers\nwaivers:\n  - kind: miswired  # crossed on purpose\n    reason: burn-in\n");
    const WaiverSet back = parse_waivers(out, "w.yaml");
    ASSERT_EQ(back.maintenance.size(), 1u);
    EXPECT_EQ(back.maintenance[0].reason, "PSU \"B\" swap");
    EXPECT_EQ(back.waivers.size(), 1u);
    // Nothing left: an empty list, the file still loads.
    EXPECT_EQ(with_maintenance("maintenance:\n  - {hosts: a, until: 2027-01-01, reason: x}\n", {}), "maintenance: []\n");
    EXPECT_TRUE(parse_waivers("maintenance: []\n", "w.yaml").empty());
}

TEST(Waivers, EndOfDay) {
    EXPECT_EQ(end_of_day_unix_ms("1970-01-01"), kDay);
    EXPECT_EQ(end_of_day_unix_ms("2028-02-29"), int64_t{1835481600000});
    EXPECT_EQ(end_of_day_unix_ms("2027-02-29"), std::nullopt);
    EXPECT_EQ(end_of_day_unix_ms("2027-1-01"), std::nullopt);
    EXPECT_EQ(end_of_day_unix_ms("2027-13-01"), std::nullopt);
}

}  // namespace
}  // namespace ibf
