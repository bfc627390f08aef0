// Routing truth on ibsim (issue 21): the 324-host lab with one ISL degraded to 1x at start-up
// (leaf07/25 -- spine04/13), one lab for every assertion (it takes ~10 s to come up):
//   - `ibfabric route A B --lab` gives the hops `ibtracert` gives, both ways, for 10 random pairs;
//   - the daemon's route_via_degraded_link for that ISL counts the pairs an offline validation of
//     the tables read back with dump_lfts counts, and its sample pair's `route` shows the cable;
//   - `ibfabric impact spine01 --lab` gives the oversubscription change docs/cli.md shows, and
//     no unreachable pair.
// And a ring of 5 switches (not a tree), routed by OpenSM's minhop, has credit loops (one per
// direction round the ring); the same fabric routed by updn from one root has none.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <regex>
#include <sstream>
#include <thread>

#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "lab_cli.h"

using namespace ibf;
using namespace ibf::test;
using nlohmann::json;

namespace {

// ibtracert's hops as (out port, first word of the next node's description, in port):
// "[19] -> switch port {0x...}[3] lid 5-5 "spine01"" -> "19>spine01>3".
std::vector<std::string> tracert_hops(const std::string& out) {
    std::vector<std::string> hops;
    static const std::regex hop(R"(^\[(\d+)\] -> \S+ port \{0x[0-9a-f]+\}\[(\d+)\].*"([^" ]+)[^"]*\"\s*$)");
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, hop)) hops.push_back(m[1].str() + ">" + m[3].str() + ">" + m[2].str());
    }
    return hops;
}

// The same of one direction of `route --json`: each cable "from X/p" "to Y/q" -> "p>Y>q".
std::vector<std::string> route_hops(const json& r) {
    std::vector<std::string> hops;
    for (const json& c : r.at("cables")) {
        const std::string from = c.at("from"), to = c.at("to");
        const size_t fs = from.rfind('/'), ts = to.rfind('/');
        hops.push_back(from.substr(fs + 1) + ">" + to.substr(0, ts) + ">" + to.substr(ts + 1));
    }
    return hops;
}

std::string host(int i) {
    char b[16];
    std::snprintf(b, sizeof b, "node%03d", i);
    return b;
}

const json* finding_of(const json& findings, const std::string& kind) {
    for (const json& f : findings.at("findings"))
        if (f.at("kind") == kind) return &f;
    return nullptr;
}

std::vector<json> findings_of(const json& findings, const std::string& kind) {
    std::vector<json> out;
    for (const json& f : findings.at("findings"))
        if (f.at("kind") == kind) out.push_back(f);
    return out;
}

const std::string kRing = std::string(IBF_TEST_DATA) + "/ibsim-ring5-10ca-ibnetdiscover.txt";

// The lab's OpenSM template with `extra` appended (later options win in opensm.conf; the template
// sets no routing options), written into the lab directory.
std::string template_with(const LabDir& lab, const std::string& extra) {
    const std::string t = lab.path + "/opensm-template.conf";
    std::ofstream(t) << read_all(std::string(IBF_SOURCE_DIR) + "/config/templates/opensm.conf") << extra;
    return t;
}

// The ring routed by `engine`: the lab's first findings (the live validation of the first
// sweep's tables), after checking in OpenSM's log that this engine made the tables.
json ring_findings(const LabDir& lab, const std::string& engine, const std::string& extra) {
    Cli up = lab.cli({"lab", "up", "--fabric", kRing, "--opensm-template", template_with(lab, extra), "--json"});
    EXPECT_TRUE(up.j.is_object()) << describe(up);
    const std::string log = read_all(lab.path + "/osm.log");
    EXPECT_NE(log.find(engine + " tables configured on all switches"), std::string::npos)
        << "OpenSM did not route with " << engine << ":\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
    return up.j;
}

}  // namespace

TEST(RouteLab, MinhopOnARingHasCreditLoopsUpdnHasNone) {
    if (!have_daemon()) GTEST_SKIP() << "ibfabricd / libibfabric_osm.so not built";
    {
        LabDir lab;
        const json f = ring_findings(lab, "minhop", "routing_engine minhop\n");
        ASSERT_TRUE(f.is_object());
        // Every pair two switches apart goes the short way round: h<i> -> sw<i> -> sw<i+1> -> sw<i+2>
        // makes channel sw<i>/3 wait on sw<i+1>/3, all the way round, and the same the other way.
        const std::vector<json> loops = findings_of(f, "credit_loop");
        ASSERT_EQ(loops.size(), 2u) << f.dump(1);
        std::set<std::string> ports;
        for (const json& l : loops) {
            const std::string msg = l["message"];
            std::smatch m;
            ASSERT_TRUE(std::regex_search(msg, m, std::regex(R"(egress ports (\S+/(\d)) -> (.*); computed on VL0 only)"))) << msg;
            const std::string dir = m[2];
            ports.insert(dir);
            EXPECT_EQ(l["actual"], "a cycle of 5 channels (5 channels depend on each other)") << msg;
            for (int i = 1; i <= 5; ++i)  // every switch once, always out of the same ring port
                EXPECT_NE(msg.find("sw" + std::to_string(i) + "/" + dir), std::string::npos) << msg;
        }
        EXPECT_EQ(ports, (std::set<std::string>{"3", "4"})) << f.dump(1);
        EXPECT_EQ(f["summary"].value("route_unreachable", 0), 0) << f.dump(1);
        EXPECT_EQ(f["summary"].value("route_loop", 0), 0) << f.dump(1);
        EXPECT_EQ(f["summary"].value("route_non_minimal", 0), 0) << f.dump(1);  // minhop: shortest paths

        // The same from the tables read back from the switches (dump_lfts) and validated offline.
        const LabState st = lab.state();
        const std::string dump = lab.path + "/now.txt", lfts = lab.path + "/lfts.txt";
        std::ofstream(dump) << lab_run_client(st, {"ibnetdiscover"}, 30);
        std::ofstream(lfts) << lab_run_client(st, {"dump_lfts"}, 30);
        Cli offline = lab.raw({"analyze", dump, "--lfts", lfts, "--json"});
        ASSERT_TRUE(offline.j.is_object()) << describe(offline);
        EXPECT_EQ(findings_of(offline.j, "credit_loop").size(), 2u) << offline.out;
    }
    {
        // updn needs a root on a ring (it finds none by itself, logs "no root nodes were found" and
        // falls back to minhop): sw1.
        LabDir lab;
        std::smatch m;
        const std::string ring = read_all(kRing);
        ASSERT_TRUE(std::regex_search(ring, m, std::regex(R"(switchguid=(0x[0-9a-f]+)\S*\s+Switch\s+\d+ \S+\s+# "sw1")")));
        std::ofstream(lab.path + "/roots") << m[1].str() << "\n";
        const json f = ring_findings(lab, "updn", "routing_engine updn\nroot_guid_file " + lab.path + "/roots\n");
        ASSERT_TRUE(f.is_object());
        EXPECT_EQ(f["summary"].value("credit_loop", 0), 0) << f.dump(1);
        EXPECT_EQ(f["summary"].value("route_unreachable", 0), 0) << f.dump(1);
        EXPECT_EQ(f["summary"].value("route_loop", 0), 0) << f.dump(1);
        // The price: up/down from sw1 forbids sw3 -> sw4 -> sw5 (down, then up), so sw3 and sw5 reach
        // each other's 2 hosts the long way round, through sw2 and sw1 (3 ISLs instead of 2: 5 cables, not 4).
        const std::vector<json> detours = findings_of(f, "route_non_minimal");
        ASSERT_EQ(detours.size(), 2u) << f.dump(1);
        EXPECT_EQ(detours[0]["a"]["name"], "sw3") << f.dump(1);
        EXPECT_EQ(detours[1]["a"]["name"], "sw5") << f.dump(1);
        for (const json& d : detours) {
            EXPECT_EQ(d["actual"], "5 cables");
            EXPECT_EQ(d["expected"], "4 cables");
        }
    }
}

TEST(RouteLab, RouteIbtracertDegradedIslAndImpactOnThe324HostLab) {
    if (!have_daemon()) GTEST_SKIP() << "ibfabricd / libibfabric_osm.so not built";
    LabDir lab;
    Cli up = lab.cli({"lab", "up", k324, "--fault", "width:leaf07/25=1x", "--json"});
    ASSERT_EQ(up.rc, 1) << describe(up);  // the rate_mismatch
    const LabState st = lab.state();

    // The live validation comes after the cabling findings: wait for it.
    json findings;
    const json* degraded = nullptr;
    for (int i = 0; i < 60 && !degraded; ++i) {
        Cli f = lab.raw({"findings", "--lab", lab.path, "--json"});
        findings = f.j;
        if (f.j.is_object()) degraded = finding_of(findings, "route_via_degraded_link");
        if (!degraded) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    ASSERT_TRUE(degraded) << "no route_via_degraded_link within 15 s:\n" << findings.dump(1);
    EXPECT_EQ(findings["summary"].value("route_via_degraded_link", 0), 1) << findings.dump(1);
    EXPECT_EQ(findings["summary"].value("route_unreachable", 0), 0) << findings.dump(1);
    EXPECT_EQ(findings["summary"].value("credit_loop", 0), 0) << findings.dump(1);
    const std::string msg = (*degraded)["message"];
    EXPECT_NE(msg.find("leaf07/25"), std::string::npos) << msg;

    // The pair count, against the tables read back from the switches (dump_lfts, over MADs) and
    // validated offline.
    const std::string dump = lab.path + "/now.txt", lfts = lab.path + "/lfts.txt";
    std::ofstream(dump) << lab_run_client(st, {"ibnetdiscover"}, 60);
    std::ofstream(lfts) << lab_run_client(st, {"dump_lfts"}, 120);
    Cli offline = lab.raw({"analyze", dump, "--lfts", lfts, "--json"});
    ASSERT_TRUE(offline.j.is_object()) << describe(offline);
    const json* off = finding_of(offline.j, "route_via_degraded_link");
    ASSERT_TRUE(off) << offline.out;
    EXPECT_EQ((*degraded)["actual"], (*off)["actual"]) << msg << "\noffline: " << (*off)["message"];

    // Its sample pair's route shows the 1x cable.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(msg, m, std::regex(R"(e\.g\. (\S+)/1 -> (\S+)/1)"))) << msg;
    Cli via = lab.raw({"route", m[1].str(), m[2].str(), "--lab", lab.path, "--json"});
    EXPECT_EQ(via.rc, 1) << describe(via);
    bool shown = false;
    for (const json& c : via.j["forward"]["cables"])
        for (const json& is : c["issues"])
            shown = shown || (is.get<std::string>().find("rate_mismatch: 1xEDR") == 0 &&
                              (c["from"] == "leaf07/25" || c["to"] == "leaf07/25"));
    EXPECT_TRUE(shown) << via.out;

    // 10 random pairs, both ways, against ibtracert.
    std::mt19937 rng(21);
    std::uniform_int_distribution<int> pick(1, 324);
    for (int k = 0; k < 10; ++k) {
        int a = pick(rng), b = pick(rng);
        if (a == b) b = a % 324 + 1;
        Cli r = lab.raw({"route", host(a), host(b), "--lab", lab.path, "--json"});
        ASSERT_TRUE(r.rc == 0 || r.rc == 1) << describe(r);
        const json& fw = r.j["forward"];
        const json& rv = r.j["reverse"];
        ASSERT_TRUE(fw["arrived"].get<bool>() && rv["arrived"].get<bool>()) << r.out;
        const std::string la = std::to_string(rv["lid"].get<int>()), lb = std::to_string(fw["lid"].get<int>());
        EXPECT_EQ(route_hops(fw), tracert_hops(lab_run_client(st, {"ibtracert", la, lb})))
            << host(a) << " -> " << host(b) << "\n" << r.out;
        EXPECT_EQ(route_hops(rv), tracert_hops(lab_run_client(st, {"ibtracert", lb, la})))
            << host(b) << " -> " << host(a) << "\n" << r.out;
    }

    // impact spine01: each leaf loses its 2 of 18 uplinks to spine01; leaf07's worst stays the
    // 1x cable's: 18 x 100 Gb/s down over 17 x 100 + 25 up (1.04:1), then 15 x 100 + 25 (1.18:1).
    Cli im = lab.raw({"impact", "spine01", "--lab", lab.path, "--json"});
    ASSERT_EQ(im.rc, 0) << describe(im);
    EXPECT_EQ(im.j["unreachable"], 0);
    EXPECT_EQ(im.j["pairs"], 324 * 323 / 2);
    ASSERT_FALSE(im.j["tiers"].empty()) << im.out;
    const json& leaf = im.j["tiers"][0];
    EXPECT_NEAR(leaf["oversubscription_max"]["before"].get<double>(), 1800.0 / 1725, 0.005) << im.out;
    EXPECT_NEAR(leaf["oversubscription_max"]["after"].get<double>(), 1800.0 / 1525, 0.005) << im.out;
    Cli text = lab.raw({"impact", "spine01", "--lab", lab.path});
    EXPECT_EQ(text.rc, 0) << describe(text);
    std::printf("%s", text.out.c_str());
}
