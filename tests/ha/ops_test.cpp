// Switchover plans (checked against a model of OpenSM's SM state machine: the target ends on top,
// no STANDBY ever sends trap 144, a round trip restores the priorities), SM names, and keepalived
// notify arguments (validated, never passed anywhere as text).
#include <gtest/gtest.h>

#include <map>

#include "ibf/ha_ops.h"
#include "ibf/ha_rank.h"

namespace ibf::ha {
namespace {

constexpr Guid kLo = 0x10, kHi = 0x30;
using Kind = SwitchoverStep::Kind;

// A model of what OpenSM 3.3.23 does with each step (osm_sm.c osm_set_sm_priority,
// osm_state_mgr.c state_mgr_get_highest_sm, osm_sm_state_mgr.c): a MASTER whose SIGHUP sweep finds a
// live STANDBY outranking it hands over; raising a STANDBY's priority sends trap 144, and so does a
// STANDBY that outranks the MASTER it polls. A trap is what the plan must never cause (on ibsim it
// wedges that SM's next sweep as master: docs/ha-facts.md section 5).
struct Model {
    std::map<Guid, SwitchoverSm> sms;
    std::vector<std::string> traps;

    void check_polls() {
        for (auto& [g, s] : sms)
            for (auto& [h, m] : sms)
                if (s.state == SmState::Standby && m.state == SmState::Master &&
                    sm_outranks(uint8_t(s.priority), g, uint8_t(m.priority), h))
                    traps.push_back(guid_hex(g) + " polls a master it outranks");
    }
    void apply(const SwitchoverStep& st) {
        SwitchoverSm& s = sms.at(st.sm);
        switch (st.kind) {
            case Kind::set_priority:
                if (s.state == SmState::Standby && st.priority > s.priority) traps.push_back(st.text);
                s.priority = st.priority;
                if (s.state == SmState::Master)
                    for (auto& [h, o] : sms)
                        if (h != st.sm && o.state == SmState::Standby &&
                            sm_outranks(uint8_t(o.priority), h, uint8_t(s.priority), st.sm)) {
                            s.state = SmState::Standby;  // HANDOVER_SENT
                            o.state = SmState::Master;   // STANDBY + HANDOVER
                            break;
                        }
                break;
            case Kind::disable: ASSERT_EQ(s.state, SmState::Standby) << st.text; s.state = SmState::NotActive; break;
            case Kind::standby: ASSERT_EQ(s.state, SmState::NotActive) << st.text; s.state = SmState::Standby; break;
            case Kind::await_master: break;
        }
        check_polls();
        EXPECT_TRUE(step_done(st, sms)) << st.text;
    }
    SwitchoverSm at(Guid g) const { return sms.at(g); }
};

Model model(Guid m, int pm, Guid t, int pt) {
    Model x;
    x.sms[m] = {m, pm, SmState::Master, true};
    x.sms[t] = {t, pt, SmState::Standby, true};
    return x;
}

// Runs the plan from `m` to `t` on the model: false when it was refused.
bool switch_over(Model& x, Guid m, Guid t) {
    auto p = switchover_plan(x.at(m), x.at(t));
    if (std::holds_alternative<std::string>(p)) return false;
    for (const auto& st : std::get<SwitchoverPlan>(p).steps) x.apply(st);
    return true;
}

TEST(HaOps, SwitchoverStepsForTheLabPair) {
    // The lab: sm1 priority 15 with the lower GUID is master, sm2 14 standby.
    auto p = switchover_plan({kLo, 15, SmState::Master, true}, {kHi, 14, SmState::Standby, true});
    ASSERT_TRUE(std::holds_alternative<SwitchoverPlan>(p)) << std::get<std::string>(p);
    const auto& s = std::get<SwitchoverPlan>(p).steps;
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].kind, Kind::set_priority);
    EXPECT_EQ(s[0].sm, kLo);
    EXPECT_EQ(s[0].priority, 13);  // 14 would keep it on top (a tie goes to the lower GUID)
    EXPECT_EQ(s[1].kind, Kind::await_master);
    EXPECT_EQ(s[1].sm, kHi);
    EXPECT_EQ(s[1].other, kLo);
    EXPECT_EQ(s[2].kind, Kind::set_priority);
    EXPECT_EQ(s[2].sm, kHi);
    EXPECT_EQ(s[2].priority, 15);
    EXPECT_EQ(std::get<SwitchoverPlan>(p).summary,
              "master 0x0000000000000010 priority 15 -> 13, target 0x0000000000000030 priority 14 -> 15");
    // And back: kHi (15) hands over to kLo (13): kHi to 13 (a tie goes to kLo), kLo to 15, then kHi is
    // restored to 14 while NOT_ACTIVE, polling kLo again.
    auto b = switchover_plan({kHi, 15, SmState::Master, true}, {kLo, 13, SmState::Standby, true});
    ASSERT_TRUE(std::holds_alternative<SwitchoverPlan>(b));
    std::vector<std::pair<Kind, int>> got;
    for (const auto& st : std::get<SwitchoverPlan>(b).steps) got.push_back({st.kind, st.priority});
    const std::vector<std::pair<Kind, int>> want = {{Kind::set_priority, 13}, {Kind::await_master, -1},
                                                    {Kind::set_priority, 15}, {Kind::disable, -1},
                                                    {Kind::set_priority, 14}, {Kind::standby, -1}};
    EXPECT_EQ(got, want);
    EXPECT_EQ(std::get<SwitchoverPlan>(b).steps.back().other, kLo);
}

TEST(HaOps, EverySwitchoverEndsWithTheTargetMasterAndNoTrap) {
    int plans = 0;
    for (Guid m : {kLo, kHi})
        for (int pm = 0; pm <= 15; ++pm)
            for (int pt = 0; pt <= 15; ++pt) {
                const Guid t = m == kLo ? kHi : kLo;
                if (!sm_outranks(uint8_t(pm), m, uint8_t(pt), t)) continue;  // the master outranks the standby
                Model x = model(m, pm, t, pt);
                if (!switch_over(x, m, t)) {
                    EXPECT_TRUE(pt == 0 && t > m) << pm << " " << pt;  // nothing ranks below 0 with the higher GUID
                    continue;
                }
                ++plans;
                EXPECT_EQ(x.at(t).state, SmState::Master) << pm << " " << pt;
                EXPECT_EQ(x.at(m).state, SmState::Standby) << pm << " " << pt;
                EXPECT_TRUE(x.traps.empty()) << x.traps.front();
                // and back: the original master again, priorities as before where they differed
                ASSERT_TRUE(switch_over(x, t, m)) << pm << " " << pt;
                EXPECT_EQ(x.at(m).state, SmState::Master);
                EXPECT_EQ(x.at(t).state, SmState::Standby);
                EXPECT_TRUE(x.traps.empty()) << x.traps.front();
                if (pm != pt) {
                    EXPECT_EQ(x.at(m).priority, pm) << pm << " " << pt;
                    EXPECT_EQ(x.at(t).priority, pt) << pm << " " << pt;
                }
            }
    EXPECT_EQ(plans, 2 * 120 + 16 - 1);  // pm > pt both ways, pm == pt with the master's lower GUID, minus (x, 0) refused once
}

TEST(HaOps, SwitchoverIsRefusedUnlessMasterAndLiveStandby) {
    const SwitchoverSm m{kLo, 15, SmState::Master, true}, t{kHi, 14, SmState::Standby, true};
    auto err = [](const SwitchoverSm& a, const SwitchoverSm& b) {
        auto p = switchover_plan(a, b);
        return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string("planned");
    };
    EXPECT_EQ(err(m, m), "the target 0x0000000000000010 is already the master");
    EXPECT_EQ(err(m, {kHi, 14, SmState::Standby, false}),
              "the target 0x0000000000000030 is not a live STANDBY (it is STANDBY, not answering)");
    EXPECT_EQ(err(m, {kHi, 14, SmState::NotActive, true}),
              "the target 0x0000000000000030 is not a live STANDBY (it is NOTACTIVE)");
    EXPECT_EQ(err(m, {kHi, 14, SmState::Discovering, true}),
              "the target 0x0000000000000030 is not a live STANDBY (it is DISCOVERING)");
    EXPECT_EQ(err({kLo, 15, SmState::Master, false}, t), "the master 0x0000000000000010 is not a live MASTER");
    EXPECT_EQ(err({kLo, 15, SmState::Standby, true}, t), "the master 0x0000000000000010 is not a live MASTER");
    EXPECT_EQ(err({kLo, 3, SmState::Master, true}, {kHi, 0, SmState::Standby, true}),
              "the target 0x0000000000000030 has sm_priority 0 and the higher GUID: no priority ranks the master "
              "below it; raise the target's sm_priority in its opensm.conf first");
    EXPECT_EQ(err(m, t), "planned");
}

TEST(HaOps, StepDoneReadsSmInfo) {
    std::map<Guid, SwitchoverSm> now = {{kLo, {kLo, 13, SmState::Master, true}},
                                        {kHi, {kHi, 14, SmState::Standby, true}}};
    const SwitchoverStep prio{Kind::set_priority, kLo, 13, 0, ""};
    EXPECT_TRUE(step_done(prio, now));
    EXPECT_FALSE(step_done({Kind::set_priority, kLo, 12, 0, ""}, now));
    const SwitchoverStep await{Kind::await_master, kHi, -1, kLo, ""};
    EXPECT_FALSE(step_done(await, now));
    now[kLo].state = SmState::Standby;
    EXPECT_FALSE(step_done(await, now)) << "no master at all is not done";
    now[kHi].state = SmState::Master;
    EXPECT_TRUE(step_done(await, now));
    now[kLo].state = SmState::Master;
    EXPECT_FALSE(step_done(await, now)) << "two masters is not done";
    now[kLo] = {kLo, 14, SmState::NotActive, true};
    EXPECT_TRUE(step_done({Kind::disable, kLo, -1, 0, ""}, now));
    EXPECT_FALSE(step_done({Kind::standby, kLo, -1, kHi, ""}, now));
    now[kLo].alive = false;
    EXPECT_FALSE(step_done({Kind::disable, kLo, -1, 0, ""}, now)) << "a dead SM has done nothing";
    EXPECT_FALSE(step_done(prio, {})) << "an unknown SM has done nothing";
}

TEST(HaOps, FindSmByGuidDescriptionOrFirstWord) {
    const std::vector<SmName> sms = {{0x100001, "node001 mlx5_0"}, {0x100025, "node002 mlx5_0"},
                                     {0x100027, "node002 mlx5_1"}, {0x100031, ""}};
    auto hit = [&](const std::string& n) {
        auto r = find_sm(n, sms);
        return std::holds_alternative<Guid>(r) ? std::get<Guid>(r) : Guid(0);
    };
    EXPECT_EQ(hit("0x0000000000100025"), 0x100025u);
    EXPECT_EQ(hit("100031"), 0x100031u);
    EXPECT_EQ(hit("node001 mlx5_0"), 0x100001u);
    EXPECT_EQ(hit("NODE001 MLX5_0"), 0x100001u);
    EXPECT_EQ(hit("node001"), 0x100001u);
    EXPECT_EQ(hit("node002 mlx5_1"), 0x100027u);
    auto amb = find_sm("node002", sms);
    ASSERT_TRUE(std::holds_alternative<std::string>(amb));
    EXPECT_EQ(std::get<std::string>(amb),
              "'node002' names more than one SM; SMs: 0x0000000000100001 (node001 mlx5_0), 0x0000000000100025 "
              "(node002 mlx5_0), 0x0000000000100027 (node002 mlx5_1), 0x0000000000100031");
    auto unknown = find_sm("node9", sms);
    ASSERT_TRUE(std::holds_alternative<std::string>(unknown));
    EXPECT_EQ(std::get<std::string>(unknown).substr(0, 40), "no SM is named 'node9'; SMs: 0x000000000");
    EXPECT_EQ(hit("0x0000000000100099"), 0u) << "a GUID no SM has";
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
