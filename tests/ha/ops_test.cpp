// Switchover plans (OpenSM's ranking must end with the target on top) and keepalived notify
// arguments (validated, never passed anywhere as text).
#include <gtest/gtest.h>

#include "ibf/ha_ops.h"
#include "ibf/ha_rank.h"

namespace ibf::ha {
namespace {

constexpr Guid kM = 0x20, kT = 0x10, kHi = 0x30;

SwitchoverPlan plan(SmPriority m, SmPriority t) {
    auto p = switchover_plan(m, t);
    EXPECT_TRUE(std::holds_alternative<SwitchoverPlan>(p));
    return std::get<SwitchoverPlan>(p);
}

// Applies the steps and checks the target then outranks the master.
void expect_target_wins(SmPriority m, SmPriority t, const SwitchoverPlan& p) {
    for (const auto& s : p.steps) (s.sm == m.sm ? m : t).priority = s.priority;
    EXPECT_TRUE(sm_outranks(uint8_t(t.priority), t.sm, uint8_t(m.priority), m.sm)) << p.summary;
}

TEST(HaOps, SwitchoverRaisesTheTargetJustEnough) {
    // kT (0x10) has the lower GUID: a tie is enough.
    auto p = plan({kM, 13}, {kT, 12});
    ASSERT_EQ(p.steps.size(), 1u);
    EXPECT_EQ(p.steps[0].sm, kT);
    EXPECT_EQ(p.steps[0].priority, 13);
    expect_target_wins({kM, 13}, {kT, 12}, p);
    // kHi (0x30) has the higher GUID: one above the master.
    auto q = plan({kM, 13}, {kHi, 12});
    ASSERT_EQ(q.steps.size(), 1u);
    EXPECT_EQ(q.steps[0].priority, 14);
    expect_target_wins({kM, 13}, {kHi, 12}, q);
    // Already outranking (a higher priority than needed) is kept as it is: no step lowers it.
    auto r = plan({kM, 3}, {kHi, 9});
    EXPECT_TRUE(r.steps.empty());
}

TEST(HaOps, SwitchoverAtTheTopLowersTheMasterFirst) {
    // The master at 15 outranks a target at 15 with a higher GUID: master 14, then target 15.
    auto p = plan({kM, 15}, {kHi, 14});
    ASSERT_EQ(p.steps.size(), 2u);
    EXPECT_EQ(p.steps[0].sm, kM);
    EXPECT_EQ(p.steps[0].priority, 14);
    EXPECT_EQ(p.steps[1].sm, kHi);
    EXPECT_EQ(p.steps[1].priority, 15);
    expect_target_wins({kM, 15}, {kHi, 14}, p);
    // And back: kM (0x20) has the lower GUID, a tie at 15 is enough.
    auto back = plan({kHi, 15}, {kM, 14});
    ASSERT_EQ(back.steps.size(), 1u);
    EXPECT_EQ(back.steps[0].sm, kM);
    EXPECT_EQ(back.steps[0].priority, 15);
    expect_target_wins({kHi, 15}, {kM, 14}, back);
}

TEST(HaOps, SwitchoverToTheMasterIsRefused) {
    auto p = switchover_plan({kM, 15}, {kM, 15});
    ASSERT_TRUE(std::holds_alternative<std::string>(p));
    EXPECT_EQ(std::get<std::string>(p), "the target 0x0000000000000020 is already the master");
}

TEST(HaOps, NotifyArguments) {
    auto short_form = parse_notify({"MASTER"});
    ASSERT_TRUE(std::holds_alternative<Notify>(short_form));
    EXPECT_EQ(std::get<Notify>(short_form).state, "MASTER");
    auto long_form = parse_notify({"INSTANCE", "SM_HA", "BACKUP", "150"});
    ASSERT_TRUE(std::holds_alternative<Notify>(long_form));
    EXPECT_EQ(std::get<Notify>(long_form).name, "SM_HA");
    EXPECT_EQ(std::get<Notify>(long_form).priority, 150);
    const std::vector<std::vector<std::string>> bad = {
        {},
        {"master"},
        {"MASTER; rm -rf /"},
        {"INSTANCE", "SM HA", "MASTER", "150"},
        {"INSTANCE", "SM_HA", "MASTER", "256"},
        {"INSTANCE", "SM_HA", "MASTER", "-1"},
        {"VRRP", "SM_HA", "MASTER", "1"},
        {"INSTANCE", "SM_HA", "MASTER"},
        {"INSTANCE", std::string(65, 'a'), "MASTER", "1"},
    };
    for (const auto& b : bad) EXPECT_TRUE(std::holds_alternative<std::string>(parse_notify(b))) << b.size();
}

}  // namespace
}  // namespace ibf::ha
