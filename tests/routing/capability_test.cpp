// Links below both ends' capability without a plan (capability.h), and what the analysis leaves to
// the plan or says once for a redundant pair (declared.h): on the "Could be" capture and on
// synthetic trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ibf/analysis.h"
#include "ibf/capability.h"
#include "ibf/declared.h"
#include "ibf/dumps.h"
#include "ibf/synth.h"

namespace ibf {
namespace {

Fabric load(const std::string& name) {
    const std::string path = std::string(IBF_TEST_DATA) + "/" + name;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_dump(ss.str(), path);
}

std::string text(const std::vector<Finding>& fs) {
    std::string s;
    for (const Finding& f : fs)
        s += std::string(to_string(f.kind)) + " " + std::string(to_string(f.severity)) + " " + f.a.name + "/" +
             std::to_string(f.a.port) + " " + f.b.name + "/" + std::to_string(f.b.port) + " exp=" + f.expected +
             " act=" + f.actual + " | " + f.message + "\n";
    return s;
}

TEST(Capability, CouldBeNotesOfIblinkinfoAreFindings) {
    // "the classic half the HCAs negotiated a slower rate": iblinkinfo says what each link could be.
    const Fabric f = load("synthetic-iblinkinfo-could-be.txt");
    const Analysis a = analyze(f);
    EXPECT_EQ(text(a.findings),
              "rate_below_capability warning leaf01/1 node10/1 exp=4xFDR act=4xQDR | leaf01/1 -- node10/1 runs at 4xQDR "
              "(32 Gb/s) but both ends can do 4xFDR (54.5 Gb/s); speed QDR instead of FDR: check that the cable is rated "
              "for FDR, both ports' enabled speeds (port speed configuration), and both ends' firmware\n"
              "rate_below_capability warning leaf01/2 node11/1 exp=4xFDR act=1xFDR | leaf01/2 -- node11/1 runs at 1xFDR "
              "(13.6 Gb/s) but both ends can do 4xFDR (54.5 Gb/s); width degraded (1x of 4x): reseat or replace the "
              "cable\n");
    // No rate_outlier on top of it: one finding per link.
}

TEST(Capability, DumpsWithoutMasksGiveNone) {
    // ibnetdiscover carries no masks; the ibsim capture's only notes are "Could be 12X" (ibsim claims
    // 12x on every port), which is not held against a 4x link.
    for (const char* name : {"ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt", "ibsim-sx6036-iblinkinfo.txt",
                             "ibnetdiscover-qdr-ddr-11sw-89ca-voltaire4036-psmn-x5.txt"}) {
        const Fabric f = load(name);
        EXPECT_EQ(text(capability_findings(f, {})), "") << name;
    }
}

TEST(Capability, IbsimX5DdrLinksCouldBeQdr) {
    // The X5 fabric replayed in ibsim: every simulated port supports QDR, so iblinkinfo notes "Could be
    // 10.0 Gbps" on the 23 DDR host links; 21 of them on one leaf are one finding.
    const Fabric f = load("ibsim-x5-iblinkinfo.txt");
    const std::vector<Finding> fs = capability_findings(f, {});
    int links = 0;
    for (const Finding& x : fs) {
        EXPECT_EQ(x.expected, "4xQDR");
        EXPECT_EQ(x.actual, "4xDDR");
        links += x.a.port == 0 ? std::stoi(x.message) : 1;
    }
    EXPECT_EQ(links, 23) << text(fs);
    ASSERT_EQ(fs.size(), 3u) << text(fs);
    const auto group = std::find_if(fs.begin(), fs.end(), [](const Finding& x) { return x.a.port == 0; });
    ASSERT_NE(group, fs.end());
    EXPECT_EQ(group->message.substr(0, 12), "21 links of ");
}

TEST(Capability, ManyLinksOfOneSwitchWithOneCauseAreOneFinding) {
    // Every link EDR while every port supports HDR: one finding per leaf, not 16.
    FatTreeSpec spec{.levels = 2, .radix = 8, .hosts = 8, .rate = {Width::X4, Speed::EDR}};
    spec.speed_supported = speed_bit(Speed::EDR) | speed_bit(Speed::HDR);
    Fabric f = synth_fat_tree(spec);
    std::vector<Finding> fs = capability_findings(f, {});
    EXPECT_EQ(text(fs),
              "rate_below_capability warning leaf0001/0 /0 exp=4xHDR act=4xEDR | 8 links of leaf0001 (ports 1-8) run at "
              "4xEDR (100 Gb/s) but both ends of each can do 4xHDR (200 Gb/s); speed EDR instead of HDR on all of them: "
              "check the switch's port speed configuration and firmware first, then that the cables are rated for HDR\n"
              "rate_below_capability warning leaf0002/0 /0 exp=4xHDR act=4xEDR | 8 links of leaf0002 (ports 1-8) run at "
              "4xEDR (100 Gb/s) but both ends of each can do 4xHDR (200 Gb/s); speed EDR instead of HDR on all of them: "
              "check the switch's port speed configuration and firmware first, then that the cables are rated for HDR\n");
    // A host whose HCA does not enable HDR is running as configured: left out of the group.
    f.node(synth_node(f, "node00001")).ports[1].speed_enabled = speed_bit(Speed::EDR);
    // Three links of leaf0002 are too few for a group: one finding each.
    for (int p : {1, 2, 3, 4, 5})
        f.node(synth_node(f, "leaf0002")).ports[p].speed_enabled = speed_bit(Speed::EDR);
    fs = capability_findings(f, {});
    ASSERT_EQ(fs.size(), 4u) << text(fs);
    EXPECT_EQ(fs[0].message.substr(0, 36), "7 links of leaf0001 (ports 2-8) run ");
    EXPECT_EQ(fs[1].a.port, 6);
    EXPECT_EQ(fs[1].b.name, "spine0002");
    EXPECT_EQ(fs[3].a.port, 8);
}

TEST(Capability, UnknownMasksAreNeverGuessedAt) {
    Port a, b;
    a.width_active = b.width_active = Width::X4;
    a.speed_active = b.speed_active = Speed::EDR;
    a.speed_supported = speed_bit(Speed::EDR) | speed_bit(Speed::HDR);  // b: not known
    EXPECT_EQ(best_common_rate(a, b), (Rate{Width::X4, Speed::EDR}));
    b.speed_supported = speed_bit(Speed::HDR);  // does not hold the active EDR: not believed
    EXPECT_EQ(best_common_rate(a, b), (Rate{Width::X4, Speed::EDR}));
    b.speed_supported = a.speed_supported;
    EXPECT_EQ(best_common_rate(a, b), (Rate{Width::X4, Speed::HDR}));
    b.speed_enabled = speed_bit(Speed::EDR);  // known, and HDR not enabled: as configured
    EXPECT_EQ(best_common_rate(a, b), (Rate{Width::X4, Speed::EDR}));
}

// Management hosts with two adapters on the same ports of both spines, and storage on one spine.
struct Mirrored {
    Fabric f;
    Mirrored() : f(synth_fat_tree({.levels = 2, .radix = 8, .hosts = 16})) {
        const NodeId s1 = synth_node(f, "spine0001"), s2 = synth_node(f, "spine0002"), s3 = synth_node(f, "spine0003");
        add_host(f, "mgmt01 mlx5_0", 0xa010, s1, 5);
        add_host(f, "mgmt01 mlx5_1", 0xa020, s2, 5);
        add_host(f, "mgmt02 mlx5_0", 0xb010, s1, 6);
        add_host(f, "mgmt02 mlx5_1", 0xb020, s2, 6);
        add_host(f, "storage01 mlx5_0", 0xc010, s3, 7);
    }
    Link link_of(Guid host) const {
        const NodeId h = *f.find(host);
        const Port& p = f.node(h).ports[1];
        return {p.peer, p.peer_port, h, 1};
    }
};

TEST(Declared, MirroredAttachmentsAreOneInfoFinding) {
    Mirrored m;
    const Analysis a = analyze(m.f);
    EXPECT_EQ(text(a.findings),
              "host_misplaced info spine0001/0 spine0002/0 exp=leaf act=mirrored on spine0001 and spine0002 | 2 hosts "
              "attach to the same ports of spine0001 and spine0002 (a redundant pair): mgmt01 (port 5) and mgmt02 (port "
              "6); off the leaves by design? declare them in the plan or waive them, else move them to leaf downlink "
              "ports\n"
              "host_misplaced warning spine0003/7 storage01/1 exp=leaf act=spine | host storage01/1 is cabled to spine "
              "spine0003/7 while compute hosts sit on leaves; move it to a leaf unless it is a deliberate "
              "storage/management attachment\n");
}

// As on a DGX SuperPOD: one management host of each service per spine of a redundant pair, at the
// same ports (pg-<svc>-mgmt001 on spine0002, pg-<svc>-mgmt002 on spine0001): one info finding, no warning.
TEST(Declared, HostsOfOneRoleNumberedInARowOnAPairAreOneInfoFinding) {
    Fabric f = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 16});
    const NodeId s1 = synth_node(f, "spine0001"), s2 = synth_node(f, "spine0002");
    Guid g = 0xa000;
    for (int port = 5; port <= 6; ++port) {
        const std::string svc = std::string("pg-") + "ab"[port - 5] + "-mgmt00";
        add_host(f, svc + "1 mlx5_0", ++g, s2, port);
        add_host(f, svc + "2 mlx5_0", ++g, s1, port);
    }
    Analysis a = analyze(f);
    ASSERT_EQ(a.findings.size(), 1u) << text(a.findings);
    const Finding& m = a.findings[0];
    EXPECT_EQ(m.kind, FindingKind::host_misplaced);
    EXPECT_EQ(m.severity, Severity::info);
    EXPECT_EQ(m.message,
              "4 hosts attach to the same ports of spine0001 and spine0002 (a redundant pair): pg-a-mgmt001 "
              "(spine0002/5), pg-a-mgmt002 (spine0001/5), pg-b-mgmt001 (spine0002/6) and pg-b-mgmt002 (spine0001/6); "
              "off the leaves by design? declare them in the plan or waive them, else move them to leaf downlink ports");
    ASSERT_EQ(m.members.size(), 4u);  // each cable, complete, for JSON clients
    for (const Finding& x : m.members) {
        EXPECT_EQ(x.a.name, x.b.name.back() == '1' ? "spine0002" : "spine0001") << x.message;
        EXPECT_EQ(x.severity, Severity::warning);
    }
    EXPECT_EQ(m.members[0].kind, FindingKind::host_misplaced);
    EXPECT_EQ(m.members[0].b.port, 1);

    // Different roles at the same port, or numbers not in a row, are no pair: each stays a warning.
    Fabric h = synth_fat_tree({.levels = 2, .radix = 8, .hosts = 16});
    add_host(h, "pg-a-mgmt001 mlx5_0", 0xb001, synth_node(h, "spine0002"), 5);
    add_host(h, "login01 mlx5_0", 0xb002, synth_node(h, "spine0001"), 5);
    add_host(h, "pg-b-mgmt001 mlx5_0", 0xb003, synth_node(h, "spine0002"), 6);
    add_host(h, "pg-b-mgmt007 mlx5_0", 0xb004, synth_node(h, "spine0001"), 6);
    a = analyze(h);
    ASSERT_EQ(a.findings.size(), 4u) << text(a.findings);
    for (const Finding& x : a.findings) EXPECT_EQ(x.severity, Severity::warning) << text(a.findings);
}

TEST(Declared, WhatThePlanDeclaresIsNoAnomaly) {
    Mirrored m;
    AnalyzeOptions opt;
    opt.declared = {m.link_of(0xc010), m.link_of(0xa010), m.link_of(0xa020)};
    const Analysis a = analyze(m.f, opt);
    ASSERT_EQ(a.findings.size(), 1u) << text(a.findings);
    EXPECT_EQ(a.findings[0].severity, Severity::info);
    EXPECT_EQ(a.findings[0].message.substr(0, 108),
              "1 host attaches to the same ports of spine0001 and spine0002 (a redundant pair): mgmt02 (port 6); off the le");
    // The declared link given the other way round is the same link.
    Link l = m.link_of(0xb010), r = m.link_of(0xb020);
    opt.declared.push_back({l.b, l.pb, l.a, l.pa});
    opt.declared.push_back(r);
    EXPECT_TRUE(analyze(m.f, opt).findings.empty()) << text(analyze(m.f, opt).findings);
}

}  // namespace
}  // namespace ibf
