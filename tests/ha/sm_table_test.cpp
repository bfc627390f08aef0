// ha::SmTable (sm_table.h): the SMs' one table, without an engine (ControllerState's rule when
// `ha:` is off) and its bound.
#include <gtest/gtest.h>

#include "ibf/sm_table.h"

using namespace ibf;
using namespace ibf::ha;

namespace {
SmInfo sm(Guid g, SmState st, uint16_t lid = 1, uint8_t prio = 15) {
    return SmInfo{.port_guid = g, .lid = lid, .priority = prio, .state = st, .act_count = 3};
}
}  // namespace

// What a plugin said: connected, when, and a LID 0 (a STANDBY's sm_base_lid) keeps the known LID.
TEST(SmTable, APluginMessageSetsItsColumnsAndALidZeroKeepsTheLid) {
    SmTable t;
    t.on_plugin(sm(0x10, SmState::Standby, 7, 14), 100);
    t.on_plugin(sm(0x10, SmState::Standby, 0, 13), 200);
    const SmView& v = *t.find(0x10);
    EXPECT_TRUE(v.plugin_seen);
    EXPECT_TRUE(v.plugin_connected);
    EXPECT_EQ(v.plugin_ms, 200);
    EXPECT_EQ(v.info.lid, 7);
    EXPECT_EQ(v.info.priority, 13);
    EXPECT_EQ(v.info.act_count, 3u);
    EXPECT_EQ(v.source, Source::plugin);
    t.on_plugin_closed(0x10, 300);
    EXPECT_FALSE(t.find(0x10)->plugin_connected);
    EXPECT_EQ(t.find(0x10)->plugin_closed_ms, 300);
    t.on_plugin_closed(0x99, 300);  // unknown: nothing made
    EXPECT_EQ(t.find(0x99), nullptr);
}

// The plugins' master: connected and saying MASTER; of two, the one that became MASTER last;
// saying MASTER again is not becoming it again; a closed connection is no master.
TEST(SmTable, ThePluginsMasterIsTheConnectedOneThatBecameMasterLast) {
    SmTable t;
    EXPECT_FALSE(t.plugin_master());
    t.on_plugin(sm(0x10, SmState::Master), 100);
    t.on_plugin(sm(0x20, SmState::Standby), 100);
    EXPECT_EQ(t.plugin_master(), Guid{0x10});
    t.on_plugin(sm(0x20, SmState::Master), 200);
    t.on_plugin(sm(0x10, SmState::Master), 300);
    EXPECT_EQ(t.plugin_master(), Guid{0x20});
    EXPECT_EQ(t.find(0x10)->master_since_ms, 100);
    t.on_plugin_closed(0x20, 400);
    EXPECT_EQ(t.plugin_master(), Guid{0x10});
    t.on_plugin_closed(0x10, 400);
    EXPECT_FALSE(t.plugin_master());
}

// At kMaxSms a new SM makes the least recently heard give way, never the one kept (this node's SM)
// and never one whose plugin is connected.
TEST(SmTable, TheBoundNeverEvictsAConnectedSmOrTheOneKept) {
    SmTable t;
    const Guid keep = 1000;
    t.view(keep, 0);  // heard from first (oldest), but kept
    t.on_plugin(sm(2000, SmState::Standby), 1);  // connected: stays
    for (Guid g = 1; t.all().size() < SmTable::kMaxSms; ++g) t.view(g, 10 + static_cast<int64_t>(g));
    ASSERT_EQ(t.all().size(), SmTable::kMaxSms);
    t.view(5000, 500, keep);
    EXPECT_EQ(t.all().size(), SmTable::kMaxSms);
    EXPECT_NE(t.find(keep), nullptr);
    EXPECT_NE(t.find(2000), nullptr);
    EXPECT_EQ(t.find(1), nullptr) << "the least recently heard of the others";
    EXPECT_NE(t.find(5000), nullptr);
}
