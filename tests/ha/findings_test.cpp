// SM findings from the engine's view: exact kinds and counts per situation.
#include <gtest/gtest.h>

#include "ibf/ha_findings.h"
#include "ha_events.h"

namespace ibf::ha {
namespace {
using namespace ibf::ha::test;

constexpr Guid kA = 0x0002c90300000001, kB = 0x0002c90300000002, kC = 0x0002c90300000009;

size_t count(const std::vector<Finding>& f, FindingKind k) {
    size_t n = 0;
    for (const auto& x : f) n += x.kind == k;
    return n;
}

HaConfig monitor() {
    HaConfig c;
    c.mode = Mode::monitor;
    c.local_sm = kB;
    return c;
}

// The master's sweep found the standby: both are one subnet.
void link(HaEngine& e, Guid master, Guid other) {
    Snapshot s;
    s.self = sm(master, 1, 15, SmState::Master, 1);
    s.other_sms = {sm(other, 2, 14, SmState::Standby, 1)};
    e.on_snapshot(s, 0);
}

TEST(HaFindings, HealthyPairHasNone) {
    HaEngine e(monitor());
    link(e, kA, kB);
    for (int64_t t = 0; t <= 1000; t += 100) {
        e.on_plugin(sm(kA, 1, 15, SmState::Master, uint32_t(t)), false, t);
        e.on_plugin(sm(kB, 2, 14, SmState::Standby, uint32_t(t)), true, t);
    }
    EXPECT_TRUE(ha_findings(e, nullptr, 1000).empty());
}

TEST(HaFindings, TwoLiveMastersOfOneSubnetAreSplitBrainTwoOfTwoSubnetsAreNot) {
    HaEngine e(monitor());
    e.on_plugin(sm(kA, 1, 15, SmState::Master, 1), false, 0);
    e.on_plugin(sm(kB, 2, 14, SmState::Master, 1), true, 0);
    EXPECT_EQ(count(ha_findings(e, nullptr, 100), FindingKind::sm_split_brain), 0u) << "two subnets (nothing links them)";
    Snapshot s;
    s.self = sm(kA, 1, 15, SmState::Master, 1);
    s.other_sms = {sm(kB, 2, 14, SmState::Standby, 1)};
    e.on_snapshot(s, 50);
    auto f = ha_findings(e, nullptr, 100);
    EXPECT_EQ(count(f, FindingKind::sm_split_brain), 2u);  // one per master
    EXPECT_EQ(f[0].severity, Severity::error) << "not escalated: this agent has not tried to heal it yet";
    // The other master dies: its plugin closed, no SMInfo answer. No longer split brain.
    e.on_plugin_closed(kA, 200);
    EXPECT_EQ(count(ha_findings(e, nullptr, 300), FindingKind::sm_split_brain), 0u);
}

TEST(HaFindings, AStandbyThatStartsAfterTheMastersSweepIsItsStandby) {
    HaEngine e(monitor());
    Snapshot s;  // the master's sweep: kB's port is in the fabric (LID 8), kB not yet an SM
    s.self = sm(kA, 1, 15, SmState::Master, 1);
    Node n;
    n.type = NodeType::CA;
    n.guid = kB - 1;
    n.description = "h2 HCA-1";
    NodeId id = s.fabric.add_node(n, 1);
    s.fabric.node(id).ports[1].guid = kB;
    s.fabric.node(id).ports[1].lid = 8;
    s.fabric.finalize();
    e.on_plugin(sm(kA, 1, 15, SmState::Master, 1), false, 0);
    e.on_snapshot(s, 0);
    e.on_plugin(sm(kB, 0, 14, SmState::Standby, 1), true, 10);  // a STANDBY's plugin says LID 0
    EXPECT_EQ(e.group_of(kA), e.group_of(kB));
    EXPECT_EQ(e.sms().at(kB).info.lid, 8);
    EXPECT_EQ(count(ha_findings(e, nullptr, 20), FindingKind::sm_no_standby), 0u);
}

// Issue 20 item 9: with the standby's cable out, sm_no_standby said "start the standby's opensm",
// which runs. A standby whose port is not in the master's sweep is a cable to check.
TEST(HaFindings, NoStandbyWhoseCableIsOutSaysCheckTheCable) {
    HaEngine e(monitor());
    Snapshot s;  // the master's sweep, without kB's port
    s.self = sm(kA, 1, 15, SmState::Master, 1);
    Node n;
    n.type = NodeType::CA;
    n.guid = kA - 1;
    n.description = "h1 HCA-1";
    NodeId id = s.fabric.add_node(n, 1);
    s.fabric.node(id).ports[1].guid = kA;
    s.fabric.node(id).ports[1].lid = 1;
    s.fabric.finalize();
    e.on_plugin(sm(kA, 1, 15, SmState::Master, 1), false, 0);
    e.on_snapshot(s, 0);
    e.on_plugin(sm(kB, 1, 14, SmState::Master, 1), true, 10);  // alone on its own subnet: MASTER of itself
    auto f = ha_findings(e, &s, 20);  // (whichever of the two this agent takes as the master, the other is cut off)
    ASSERT_EQ(count(f, FindingKind::sm_no_standby), 1u);
    for (const Finding& x : f)
        if (x.kind == FindingKind::sm_no_standby) {
            EXPECT_NE(x.message.find("is not in the master's subnet: check its cable and port"),
                      std::string::npos)
                << x.message;
            EXPECT_EQ(x.message.find("start the standby's opensm"), std::string::npos) << x.message;
        }
}

TEST(HaFindings, NoStandbyAndStalls) {
    HaConfig c = monitor();
    c.stall_ms = 5000;
    HaEngine e(c);
    link(e, kA, kB);
    e.on_plugin(sm(kA, 1, 15, SmState::Master, 10), false, 0);
    auto f = ha_findings(e, nullptr, 100);
    EXPECT_EQ(count(f, FindingKind::sm_no_standby), 1u);
    e.on_plugin(sm(kB, 2, 14, SmState::Standby, 50), true, 100);
    EXPECT_EQ(count(ha_findings(e, nullptr, 200), FindingKind::sm_no_standby), 0u);
    // ActCounts frozen for 6 s while both keep heartbeating.
    for (int64_t t = 200; t <= 6200; t += 100) {
        e.on_plugin(sm(kA, 1, 15, SmState::Master, 10), false, t);
        e.on_plugin(sm(kB, 2, 14, SmState::Standby, 50), true, t);
    }
    f = ha_findings(e, nullptr, 6200);
    EXPECT_EQ(count(f, FindingKind::sm_stalled), 1u);
    EXPECT_EQ(count(f, FindingKind::sm_standby_not_polling), 1u);
    EXPECT_EQ(f.size(), 2u);
}

TEST(HaFindings, UnknownSmAndPriorityMismatch) {
    HaConfig c = monitor();
    c.expected_sms = {kA, kB};
    c.expected_priorities = {{kA, 15}, {kB, 14}};
    HaEngine e(c);
    e.on_plugin(sm(kA, 1, 15, SmState::Master, 1), false, 0);
    e.on_plugin(sm(kB, 2, 3, SmState::Standby, 1), true, 0);
    e.on_plugin(sm(kC, 9, 0, SmState::Standby, 1), false, 0);
    auto f = ha_findings(e, nullptr, 10);
    ASSERT_EQ(count(f, FindingKind::sm_unknown), 1u);
    ASSERT_EQ(count(f, FindingKind::sm_config_mismatch), 1u);
    for (const auto& x : f) {
        if (x.kind == FindingKind::sm_unknown) {
            EXPECT_EQ(x.actual, "0x0002c90300000009");
        }
        if (x.kind == FindingKind::sm_config_mismatch) {
            EXPECT_EQ(x.expected, "priority 14");
            EXPECT_EQ(x.actual, "priority 3");
        }
    }
}

}  // namespace
}  // namespace ibf::ha

namespace ibf::ha {
namespace {
using namespace ibf::ha::test;

TEST(HaFindings, OpensmConfDriftBetweenTheSmNodes) {
    HaEngine e(HaConfig{});
    Snapshot s;
    s.self = {kA, 1, 15, SmState::Master, 1};
    s.other_sms = {{kB, 2, 14, SmState::Standby, 1}};
    e.on_snapshot(s, 0);
    SmConf a{"ftree", "/etc/opensm/roots", "/etc/opensm/cns", 0, true, "00112233aabbccdd"};
    SmConf b = a;
    e.on_conf(kA, a, 0);
    e.on_conf(kB, b, 0);
    EXPECT_EQ(count(ha_findings(e, nullptr, 0), FindingKind::sm_conf_drift), 0u);
    b.routing_engine = "minhop";
    b.sm_key_digest = "ffffffffffffffff";
    e.on_conf(kB, b, 0);
    auto f = ha_findings(e, nullptr, 0);
    EXPECT_EQ(count(f, FindingKind::sm_conf_drift), 4u) << "two settings, one finding per SM each";
    bool engine_named = false;
    for (const auto& x : f)
        if (x.kind == FindingKind::sm_conf_drift && x.actual == "routing_engine minhop") engine_named = true;
    EXPECT_TRUE(engine_named);
}

TEST(HaFindings, PortsPointingAtAnotherMasterLid) {
    HaEngine e(HaConfig{});
    Snapshot s;
    s.self = {0x0002c90300000001, 1, 15, SmState::Master, 5};
    for (int i = 0; i < 3; ++i) {
        Node n;
        n.type = NodeType::CA;
        n.guid = 0x100 + i;
        n.description = "h" + std::to_string(i) + " HCA-1";
        NodeId id = s.fabric.add_node(n, 1);
        Port& p = s.fabric.node(id).ports[1];
        p.guid = 0x200 + i;
        p.lid = static_cast<uint16_t>(10 + i);
        p.state = PortState::Active;
        p.master_sm_lid = i == 1 ? 7 : (i == 2 ? 0 : 1);  // h1 points at LID 7; h2 does not say
    }
    s.fabric.finalize();
    auto f = ha_findings(e, &s, 0);
    ASSERT_EQ(count(f, FindingKind::sm_master_lid_mismatch), 1u);
    EXPECT_EQ(f[0].a.name, "h1");
    EXPECT_EQ(f[0].expected, "MasterSMLID 1");
    EXPECT_EQ(f[0].actual, "MasterSMLID 7");
    s.self.state = SmState::Standby;  // a standby's view is not the master's: nothing to say
    EXPECT_EQ(count(ha_findings(e, &s, 0), FindingKind::sm_master_lid_mismatch), 0u);
}

}  // namespace
}  // namespace ibf::ha

namespace ibf::ha {
namespace {
using namespace ibf::ha::test;

// After `sm switchover` the configured priorities are exchanged between the SMs (15/14 -> 14/15):
// no sm_config_mismatch of the switchover's own making; a priority that is not one of the
// configured ones still is one.
TEST(HaFindings, PrioritiesExchangedByASwitchoverAreNoMismatch) {
    HaConfig c = monitor();
    c.expected_priorities = {{kA, 15}, {kB, 14}};
    HaEngine e(c);
    e.on_plugin(sm(kA, 1, 14, SmState::Standby, 1), false, 0);
    e.on_plugin(sm(kB, 2, 15, SmState::Master, 1), true, 0);
    EXPECT_EQ(count(ha_findings(e, nullptr, 10), FindingKind::sm_config_mismatch), 0u);
    e.on_plugin(sm(kA, 1, 13, SmState::Standby, 2), false, 20);  // not the configured set any more
    auto f = ha_findings(e, nullptr, 30);
    ASSERT_EQ(count(f, FindingKind::sm_config_mismatch), 2u);
}

// Rule 9 (docs/ha.md): A, isolated while B took over, lowered its priority just below B's so that
// it comes back without preempting it. Any daemon of the pair sees that from SMInfo: an info-level
// note of the agent's own making, not an error that fires the cabling alert; any other priority is.
TEST(HaFindings, AnSmThatSteppedAsideIsANoteNotAMismatch) {
    HaConfig c = monitor();
    c.expected_priorities = {{kA, 15}, {kB, 14}};
    HaEngine e(c);
    e.on_plugin(sm(kA, 1, 13, SmState::Standby, 1), false, 0);
    e.on_plugin(sm(kB, 2, 14, SmState::Master, 1), true, 0);
    auto f = ha_findings(e, nullptr, 10);
    ASSERT_EQ(count(f, FindingKind::sm_config_mismatch), 1u);
    for (const auto& x : f)
        if (x.kind == FindingKind::sm_config_mismatch) {
            EXPECT_EQ(x.severity, Severity::info);
            EXPECT_NE(x.message.find("stepped aside"), std::string::npos) << x.message;
            EXPECT_NE(x.message.find("sm switchover --to"), std::string::npos) << x.message;
        }
    e.on_plugin(sm(kA, 1, 12, SmState::Standby, 2), false, 20);  // lower than stepping aside needs
    f = ha_findings(e, nullptr, 30);
    ASSERT_EQ(count(f, FindingKind::sm_config_mismatch), 1u);
    for (const auto& x : f)
        if (x.kind == FindingKind::sm_config_mismatch) {
            EXPECT_EQ(x.severity, Severity::error) << x.message;
        }
}

// A MASTER whose plugin heartbeats (its ActCount moving) but which owes a sweep for
// sweep_timeout_ms: one sm_not_sweeping (critical: nothing of the fabric is handled while it lasts) with the
// evidence, gone at SUBNET UP.
TEST(HaFindings, AMasterThatDoesNotSweepIsAFinding) {
    HaEngine e(monitor());
    link(e, kA, kB);
    e.on_plugin(sm(kA, 1, 15, SmState::Standby, 1), false, 1000);
    for (int64_t t = 1100; t <= 25000; t += 100) {
        e.on_plugin(sm(kA, 1, 15, SmState::Master, uint32_t(t)), false, t);  // MASTER since 1100
        e.on_plugin(sm(kB, 2, 14, SmState::Standby, uint32_t(t)), true, t);
        ASSERT_EQ(count(ha_findings(e, nullptr, t), FindingKind::sm_not_sweeping), t - 1100 >= 20000 ? 1u : 0u) << t;
    }
    auto f = ha_findings(e, nullptr, 25000);
    const Finding* x = nullptr;
    for (const auto& y : f)
        if (y.kind == FindingKind::sm_not_sweeping) x = &y;
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->severity, Severity::critical);
    EXPECT_EQ(x->actual, "no SUBNET UP");
    EXPECT_NE(x->message.find("owes a sweep since became MASTER 23 s ago, no SUBNET UP since (last never seen)"),
              std::string::npos)
        << x->message;
    e.on_sweep(kA, SweepEvent::subnet_up, 25050);
    EXPECT_EQ(count(ha_findings(e, nullptr, 25100), FindingKind::sm_not_sweeping), 0u);
}

// Not sweeping and ActCount frozen too: one finding for that SM, sm_not_sweeping (the better evidence),
// and no sm_stalled beside it.
TEST(HaFindings, OneStalledFindingPerMasterTheSweepRuleFirst) {
    HaEngine e(monitor());
    link(e, kA, kB);
    e.on_plugin(sm(kA, 1, 15, SmState::Standby, 7), false, 1000);
    for (int64_t t = 1100; t <= 40000; t += 100) {
        e.on_plugin(sm(kA, 1, 15, SmState::Master, 7), false, t);
        e.on_plugin(sm(kB, 2, 14, SmState::Standby, uint32_t(t)), true, t);
    }
    auto f = ha_findings(e, nullptr, 40000);
    ASSERT_EQ(count(f, FindingKind::sm_not_sweeping), 1u);
    EXPECT_EQ(count(f, FindingKind::sm_stalled), 0u);
    for (const auto& x : f) {
        if (x.kind == FindingKind::sm_not_sweeping) {
            EXPECT_EQ(x.actual, "no SUBNET UP");
        }
    }
}

// Two masters that stayed two after the forced sweeps: the sm_split_brain findings name both and
// what was tried.
TEST(HaFindings, AnEscalatedSplitBrainSaysWhatWasTried) {
    HaConfig c;
    c.mode = Mode::act;
    c.local_sm = kB;
    HaEngine e(c);
    LocalPort port;
    port.ok = true;
    port.state = 4;
    port.port_guid = kB;
    port.lid = 2;
    e.on_local_port(port, 0);
    link(e, kA, kB);
    for (int64_t t = 100; t <= 9000; t += 100) {
        e.on_plugin(sm(kB, 2, 14, SmState::Master, uint32_t(t)), true, t);
        e.on_plugin(sm(kA, 1, 15, SmState::Master, uint32_t(t)), false, t);
        SmInfoReply r;
        r.status = SmpStatus::ok;
        r.info = sm(kA, 0, 15, SmState::Master, uint32_t(t));
        e.on_probe(kA, 1, r, t);
        e.on_sweep(kB, SweepEvent::subnet_up, t);
        e.tick(t);
    }
    auto f = ha_findings(e, nullptr, 9000);
    ASSERT_EQ(count(f, FindingKind::sm_split_brain), 2u);
    EXPECT_EQ(f[0].severity, Severity::critical);
    EXPECT_EQ(f[1].severity, Severity::critical);
    EXPECT_NE(f[0].message.find("still two masters (0x0002c90300000002 and 0x0002c90300000001) after 3 SubnSet(SMInfo) "
                                "HANDOVER to 0x0002c90300000002"),
              std::string::npos)
        << f[0].message;
}

}  // namespace
}  // namespace ibf::ha
