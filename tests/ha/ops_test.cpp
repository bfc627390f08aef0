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

std::vector<std::pair<Kind, int>> kinds(const SwitchoverPlan& p) {
    std::vector<std::pair<Kind, int>> out;
    for (const auto& st : p.steps) out.push_back({st.kind, st.priority});
    return out;
}

TEST(HaOps, SwitchoverStepsForTheLabPair) {
    // The lab: sm1 priority 15 with the lower GUID is master, sm2 14 standby. sm2 restarts its
    // polling (DISABLE, STANDBY naming sm1), sm1 goes to 13 (14
    // would keep it on top: a tie goes to the lower GUID) and hands over; sm2 goes to 15; then sm1
    // is set to 14 while NOT_ACTIVE and told to poll sm2.
    auto p = switchover_plan({kLo, 15, SmState::Master, true}, {kHi, 14, SmState::Standby, true});
    ASSERT_TRUE(std::holds_alternative<SwitchoverPlan>(p)) << std::get<std::string>(p);
    const auto& there = std::get<SwitchoverPlan>(p);
    const std::vector<std::pair<Kind, int>> want = {{Kind::disable, -1},      {Kind::standby, -1},
                                                    {Kind::set_priority, 13}, {Kind::await_master, -1},
                                                    {Kind::set_priority, 15}, {Kind::disable, -1},
                                                    {Kind::set_priority, 14}, {Kind::standby, -1}};
    EXPECT_EQ(kinds(there), want);
    EXPECT_EQ(there.steps[0].sm, kHi);  // the target restarts its polling clock first
    EXPECT_EQ(there.steps[1].sm, kHi);
    EXPECT_EQ(there.steps[1].other, kLo);
    EXPECT_EQ(there.steps[2].sm, kLo);
    EXPECT_EQ(there.steps[3].sm, kHi);
    EXPECT_EQ(there.steps[3].other, kLo);
    EXPECT_EQ(there.steps[4].sm, kHi);
    EXPECT_EQ(there.steps[5].sm, kLo);
    EXPECT_EQ(there.steps[7].sm, kLo);
    EXPECT_EQ(there.steps[7].other, kHi);
    EXPECT_EQ(there.summary, "master 0x0000000000000010 priority 15 -> 14, target 0x0000000000000030 priority 14 -> 15");
    // And back: sm2 (15) goes to 14 (sm1 at 14 wins the tie) and hands over, sm1 to 15: done.
    auto b = switchover_plan({kHi, 15, SmState::Master, true}, {kLo, 14, SmState::Standby, true});
    ASSERT_TRUE(std::holds_alternative<SwitchoverPlan>(b));
    const std::vector<std::pair<Kind, int>> back = {{Kind::disable, -1}, {Kind::standby, -1},
                                                    {Kind::set_priority, 14}, {Kind::await_master, -1},
                                                    {Kind::set_priority, 15}};
    EXPECT_EQ(kinds(std::get<SwitchoverPlan>(b)), back);
    EXPECT_EQ(std::get<SwitchoverPlan>(b).steps[0].sm, kLo);
    EXPECT_EQ(std::get<SwitchoverPlan>(b).steps[2].sm, kHi);
    EXPECT_EQ(std::get<SwitchoverPlan>(b).steps[4].sm, kLo);
}

// Only a target at priority 0 with the higher GUID cannot be given the mastership: nothing ranks
// the master below it.
bool unreachable(const SwitchoverSm& t, Guid master) { return t.priority == 0 && t.sm > master; }

TEST(HaOps, EverySwitchoverEndsWithTheTargetMasterAndNoTrap) {
    int planned = 0, refused = 0;
    for (Guid m : {kLo, kHi})
        for (int pm = 0; pm <= 15; ++pm)
            for (int pt = 0; pt <= 15; ++pt) {
                const Guid t = m == kLo ? kHi : kLo;
                if (!sm_outranks(uint8_t(pm), m, uint8_t(pt), t)) continue;  // the master outranks the standby
                const std::string pair = std::to_string(pm) + "/" + std::to_string(pt) + " " + guid_hex(m);
                Model x = model(m, pm, t, pt);
                const bool ok = switch_over(x, m, t);
                EXPECT_EQ(ok, !unreachable(x.at(t), m)) << pair;
                if (!ok) {
                    ++refused;
                    continue;
                }
                ++planned;
                EXPECT_EQ(x.at(t).state, SmState::Master) << pair;
                EXPECT_EQ(x.at(m).state, SmState::Standby) << pair;
                EXPECT_TRUE(x.traps.empty()) << pair << ": " << x.traps.front();
                // and back: the original master again, the priorities as before where they differed
                const bool back = switch_over(x, t, m);
                EXPECT_EQ(back, !unreachable(x.at(m), t)) << pair;
                if (!back) continue;
                EXPECT_EQ(x.at(m).state, SmState::Master) << pair;
                EXPECT_EQ(x.at(t).state, SmState::Standby) << pair;
                EXPECT_TRUE(x.traps.empty()) << pair << ": " << x.traps.front();
                if (pm != pt && pt > 0) {
                    EXPECT_EQ(x.at(m).priority, pm) << pair;
                    EXPECT_EQ(x.at(t).priority, pt) << pair;
                }
            }
    EXPECT_EQ(planned + refused, 2 * 120 + 16);  // pm > pt both ways, and the ties the lower GUID wins
    EXPECT_EQ(refused, 16);                      // kHi at 0 under kLo at 0..15
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
