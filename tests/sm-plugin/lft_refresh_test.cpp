// Which forwarding tables LftCache::refresh() reads at SUBNET_UP: the rule (lft_compare_why), the
// event record (LftMarks) and the cache on a FakeSubnet built of OpenSM's own structs. A table
// changed behind the cache's back without a mark shows whether it was read: in the steady state
// it must not be (the old copy stays), on a sweep where events may have been missed it must.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "../../sm-plugin/bench/fake_subnet.h"
#include "../../sm-plugin/src/osm_headers.h"
#include "ibf/lft_marks.h"
#include "ibf/osm_copy.h"

using namespace ibf;
using ibf::osm::LftChanges;
using ibf::osm::LftWhy;

namespace {

// 40 switches (more than one audit period) with 8 ports each and 8 hosts: tables over 49 LIDs.
struct Subnet {
    osm::FakeSubnet fs;
    size_t lids = 0;
    Subnet() {
        for (int i = 0; i < 40; ++i) fs.add(IB_NODE_TYPE_SWITCH, 0x1000 + static_cast<Guid>(i), 8, "sw" + std::to_string(i));
        for (int h = 0; h < 8; ++h) fs.add(IB_NODE_TYPE_CA, 0x9000 + 2 * static_cast<Guid>(h), 1, "h" + std::to_string(h));
        fs.add_lfts();
        lids = fs.next_lid;
    }
    Guid guid(size_t i) const { return 0x1000 + i; }
    // Switch i's table as OpenSM holds it (fs.switches[i] is the node added i-th).
    std::vector<uint8_t>& table(size_t i) { return fs.lfts[i]; }
    // The position of switch i in sw_guid_tbl's order (the audit slot is counted in that order).
    uint32_t position(size_t i) const {
        uint32_t k = 0;
        cl_qmap_t* t = &fs.osm->subn.sw_guid_tbl;
        for (cl_map_item_t* it = cl_qmap_head(t); it != cl_qmap_end(t); it = cl_qmap_next(it), ++k)
            if (reinterpret_cast<osm_switch_t*>(it) == fs.switches[i]) return k;
        return UINT32_MAX;
    }
    // A switch whose position is not in the audit slots of refreshes first..first+count-1.
    size_t outside_audit(uint64_t first, uint64_t count, size_t not_this = SIZE_MAX) const {
        for (size_t i = 0; i < 40; ++i) {
            bool hit = i == not_this || position(i) == UINT32_MAX;  // not in sw_guid_tbl (removed)
            for (uint64_t r = first; r < first + count; ++r) hit |= position(i) % osm::kLftAuditPeriod == r % osm::kLftAuditPeriod;
            if (!hit) return i;
        }
        return SIZE_MAX;
    }
};

uint8_t entry_of(const Snapshot& s, Guid sw, size_t lid) {
    for (const SwitchLft& t : s.lfts)
        if (t.switch_guid == sw) return t.port_by_lid().at(lid);
    return 0;
}

Snapshot filled(const osm::LftCache& c) {
    Snapshot s;
    c.fill(s);
    return s;
}

LftChanges tracked(std::initializer_list<Guid> marked = {}) {
    LftChanges c;
    c.tracked = true;
    c.marked.insert(marked.begin(), marked.end());
    return c;
}

}  // namespace

// The rule, one line per reason: any sweep-wide reason reads every table, whatever the switch.
TEST(LftCompareWhy, SweepReasonsComeFirstThenTheSwitchsOwn) {
    const osm::LftSwitchFacts quiet{.have_copy = true};
    const osm::LftSweepFacts steady{.tracked = true};
    EXPECT_EQ(osm::lft_compare_why(steady, quiet), LftWhy::Reuse);
    EXPECT_EQ(osm::lft_compare_why({}, quiet), LftWhy::Untracked);
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .first_refresh = true}, quiet), LftWhy::PluginLoaded);
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .lids_changed = true}, quiet), LftWhy::TableLength);
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .first_master_sweep = true}, quiet), LftWhy::FirstMasterSweep);
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .not_master = true}, quiet), LftWhy::NotMaster);
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .sweep_error = true}, quiet), LftWhy::SweepError);
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .marks_lost = true}, quiet), LftWhy::MarksLost);
    EXPECT_EQ(osm::lft_compare_why(steady, {.marked = true, .have_copy = true}), LftWhy::Marked);
    EXPECT_EQ(osm::lft_compare_why(steady, {}), LftWhy::NoCopy);
    EXPECT_EQ(osm::lft_compare_why(steady, {.have_copy = true, .same_object = false}), LftWhy::Replaced);
    EXPECT_EQ(osm::lft_compare_why(steady, {.have_copy = true, .same_length = false}), LftWhy::Resized);
    EXPECT_EQ(osm::lft_compare_why(steady, {.have_copy = true, .lft_null = true}), LftWhy::PendingOnly);
    EXPECT_EQ(osm::lft_compare_why(steady, {.have_copy = true, .audit_slot = true}), LftWhy::Audit);
    // A sweep-wide reason wins over the switch's own.
    EXPECT_EQ(osm::lft_compare_why({.tracked = true, .first_master_sweep = true}, {.marked = true}), LftWhy::FirstMasterSweep);
}

TEST(LftMarks, TakeHandsOverTheMarksAndFactsAndStartsAfresh) {
    osm::LftMarks m(3);
    m.mark(0x10);
    m.mark(0x10);  // one per block: the same switch many times
    m.mark(0x20);
    m.note({.sweep_error = true});
    LftChanges c = m.take();
    EXPECT_TRUE(c.tracked);
    EXPECT_EQ(c.marked, (std::unordered_set<Guid>{0x10, 0x20}));
    EXPECT_TRUE(c.sweep_error);
    EXPECT_FALSE(c.first_master_sweep || c.not_master || c.marks_lost);
    LftChanges d = m.take();
    EXPECT_TRUE(d.tracked);
    EXPECT_TRUE(d.marked.empty());
    EXPECT_FALSE(d.sweep_error);
    // More distinct switches than it keeps: marks lost, and the set stops growing.
    for (Guid g = 1; g <= 5; ++g) m.mark(g);
    LftChanges e = m.take();
    EXPECT_TRUE(e.marks_lost);
    EXPECT_LE(e.marked.size(), 3u);
}

// report(LFT_CHANGE) on several dispatcher threads while the sweeper takes: nothing lost.
TEST(LftMarks, MarksFromSeveralThreadsAreAllTaken) {
    osm::LftMarks m;
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&m, t] {
            for (Guid g = 0; g < 1000; ++g) m.mark(static_cast<Guid>(t) * 1000 + g);
        });
    std::unordered_set<Guid> all;
    for (int i = 0; i < 50; ++i) {
        LftChanges c = m.take();
        all.insert(c.marked.begin(), c.marked.end());
    }
    for (auto& t : ts) t.join();
    LftChanges c = m.take();
    all.insert(c.marked.begin(), c.marked.end());
    EXPECT_EQ(all.size(), 4000u);
}

// The steady state: a marked switch's changed table is copied; an unmarked switch's table is not
// read (changed behind the cache's back, its old copy stays) until its audit slot comes round.
TEST(LftCache, OnlyMarkedTablesAreReadInTheSteadyState) {
    Subnet s;
    osm::LftCache cache;
    const auto first = cache.refresh(s.fs.osm, s.lids, tracked());
    EXPECT_EQ(first.scope, LftWhy::PluginLoaded);
    EXPECT_EQ(first.compared, 40u);
    EXPECT_EQ(first.copied, 40u);

    const size_t marked = s.outside_audit(1, 1);
    const size_t quiet = s.outside_audit(1, 1, marked);
    ASSERT_NE(quiet, SIZE_MAX);
    const uint8_t was_marked = s.table(marked)[5], was_quiet = s.table(quiet)[5];
    s.table(marked)[5] = static_cast<uint8_t>(was_marked % 8 + 1);
    s.table(quiet)[5] = static_cast<uint8_t>(was_quiet % 8 + 1);
    const auto r = cache.refresh(s.fs.osm, s.lids, tracked({s.guid(marked)}));
    EXPECT_EQ(r.scope, LftWhy::Reuse);
    EXPECT_EQ(r.switches, 40u);
    EXPECT_LE(r.compared, 1u + (40 + osm::kLftAuditPeriod - 1) / osm::kLftAuditPeriod);  // the marked one + one audit slot
    EXPECT_EQ(r.copied, 1u);
    Snapshot snap = filled(cache);
    EXPECT_EQ(entry_of(snap, s.guid(marked), 5), s.table(marked)[5]);
    EXPECT_EQ(entry_of(snap, s.guid(quiet), 5), was_quiet) << "an unmarked table was read in the steady state";

    // The rolling audit reads every table once per kLftAuditPeriod refreshes and reports what
    // it found that no event named.
    size_t found = 0;
    for (uint32_t i = 0; i < osm::kLftAuditPeriod; ++i) found += cache.refresh(s.fs.osm, s.lids, tracked()).audit_found;
    EXPECT_EQ(found, 1u);
    EXPECT_EQ(entry_of(filled(cache), s.guid(quiet), 5), s.table(quiet)[5]);
}

// Events may have been missed: every table is read, marked or not.
TEST(LftCache, EveryTableIsComparedWhenEventsMayHaveBeenMissed) {
    struct Case {
        const char* what;
        LftChanges changes;
        LftWhy want;
    };
    std::vector<Case> cases;
    cases.push_back({"first sweep after becoming master", tracked(), LftWhy::FirstMasterSweep});
    cases.back().changes.first_master_sweep = true;
    cases.push_back({"state other than MASTER seen", tracked(), LftWhy::NotMaster});
    cases.back().changes.not_master = true;
    cases.push_back({"sweep error", tracked(), LftWhy::SweepError});
    cases.back().changes.sweep_error = true;
    cases.push_back({"marks lost", tracked(), LftWhy::MarksLost});
    cases.back().changes.marks_lost = true;
    cases.push_back({"no event record", LftChanges{}, LftWhy::Untracked});
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        Subnet s;
        osm::LftCache cache;
        (void)cache.refresh(s.fs.osm, s.lids, tracked());
        const size_t quiet = s.outside_audit(1, 1);
        s.table(quiet)[7] = static_cast<uint8_t>(s.table(quiet)[7] % 8 + 1);
        const auto r = cache.refresh(s.fs.osm, s.lids, c.changes);
        EXPECT_EQ(r.scope, c.want);
        EXPECT_EQ(r.compared, 40u);
        EXPECT_EQ(r.copied, 1u);
        EXPECT_EQ(entry_of(filled(cache), s.guid(quiet), 7), s.table(quiet)[7]);
    }
}

// A switch new to the cache, a switch re-created with the same GUID, a table that grew, a table
// length change of the whole snapshot, and a switch with only new_lft: read without a mark.
TEST(LftCache, NewReplacedAndResizedSwitchesAreReadWithoutAMark) {
    Subnet s;
    osm::LftCache cache;
    (void)cache.refresh(s.fs.osm, s.lids, tracked());

    // New switch (same LIDs: its node's LID is taken from the hosts' range by giving it none).
    osm_node_t* n = s.fs.add(IB_NODE_TYPE_SWITCH, 0x5000, 8, "new");
    s.fs.next_lid--;  // keep the table length: the new switch's LID is the last one already routed
    n->physp_table[0].port_info.base_lid = cl_hton16(static_cast<uint16_t>(s.fs.next_lid - 1));
    s.fs.add_lft(n);
    auto r = cache.refresh(s.fs.osm, s.lids, tracked());
    EXPECT_EQ(r.scope, LftWhy::Reuse);
    EXPECT_EQ(r.switches, 41u);
    EXPECT_EQ(r.copied, 1u);
    ASSERT_EQ(filled(cache).lfts.size(), 41u);
    EXPECT_EQ(entry_of(filled(cache), 0x5000, 3), s.fs.lfts.back()[3]);

    // Re-created with the same GUID: another osm_switch_t with another table, no event.
    const size_t re = s.outside_audit(2, 1);
    osm_switch_t* old_sw = s.fs.switches[re];
    cl_qmap_remove_item(&s.fs.osm->subn.sw_guid_tbl, &old_sw->map_item);
    osm_switch_t* new_sw = s.fs.add_lft(old_sw->p_node);
    s.fs.lfts.back()[4] = static_cast<uint8_t>(s.table(re)[4] % 8 + 1);
    r = cache.refresh(s.fs.osm, s.lids, tracked());
    EXPECT_EQ(r.copied, 1u);
    EXPECT_EQ(entry_of(filled(cache), s.guid(re), 4), new_sw->lft[4]);

    // max_lid_ho moved: the entries read end elsewhere.
    const size_t rs = s.outside_audit(3, 1, re);
    s.fs.switches[rs]->max_lid_ho = static_cast<uint16_t>(s.lids - 3);
    r = cache.refresh(s.fs.osm, s.lids, tracked());
    EXPECT_EQ(r.copied, 1u);
    EXPECT_EQ(entry_of(filled(cache), s.guid(rs), s.lids - 1), kLftNoPath);

    // Only new_lft (lft NULL): read every sweep, routing rewrites it without events.
    const size_t pend = s.outside_audit(4, 2, rs);
    osm_switch_t* p = s.fs.switches[pend];
    p->new_lft = p->lft;
    p->lft = nullptr;
    (void)cache.refresh(s.fs.osm, s.lids, tracked());
    p->new_lft[6] = static_cast<uint8_t>(p->new_lft[6] % 8 + 1);
    r = cache.refresh(s.fs.osm, s.lids, tracked());
    EXPECT_GE(r.compared, 1u);
    EXPECT_EQ(entry_of(filled(cache), s.guid(pend), 6), p->new_lft[6]);
    p->lft = p->new_lft;
    p->new_lft = nullptr;

    // The snapshot's table length changed (a LID added): every table is read and re-sized.
    r = cache.refresh(s.fs.osm, s.lids + 1, tracked());
    EXPECT_EQ(r.scope, LftWhy::TableLength);
    EXPECT_EQ(r.compared, 41u);
    EXPECT_EQ(r.copied, 41u);
    EXPECT_EQ(filled(cache).lfts.front().port_by_lid().size(), s.lids + 1);
}
