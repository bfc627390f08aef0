// Which switches' forwarding tables the plugin must read again at SUBNET_UP. OpenSM reports every
// LFT block a switch acknowledged as OSM_EVENT_ID_LFT_CHANGE (except in a first sweep as master);
// LftMarks records those switches and the sweep facts that make events unreliable, and the pure
// rule lft_compare_why() decides per switch whether LftCache::refresh() reads its table or keeps
// the last sweep's copy. No OpenSM headers: tested without OpenSM (tests/sm-plugin/copy_test.cpp).
// The facts behind the rule (which code of OpenSM 3.3.23 changes osm_switch_t::lft and which of
// it reports LFT_CHANGE): docs/plugin.md, "When the tables change".
//
//   LftMarks marks;                                  // one per plugin
//   marks.mark(guid);                                // report(LFT_CHANGE), OpenSM's lock held: O(1)
//   marks.note({.first_master_sweep = true});        // report(UCAST_ROUTING_DONE) etc.
//   LftChanges c = marks.take();                     // at SUBNET_UP, under osm->lock
//   cache.refresh(osm, lids, c);                     // only what lft_compare_why() says
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_set>

#include "ibf/fabric.h"

namespace ibf::osm {

// Why a switch's table is read (compared with the cached copy, copied when it differs), or
// Reuse: the cached copy is kept without reading OpenSM's table.
enum class LftWhy : uint8_t {
    Reuse,             // unmarked, same switch object, same table buffer and length: nothing read
    // The whole subnet (an event may have been missed):
    Untracked,         // the caller gives no event record (copy_lfts, tests): compare everything
    PluginLoaded,      // the first refresh of this cache
    TableLength,       // the snapshot's table length (highest LID in use + 1) changed
    FirstMasterSweep,  // OpenSM's first_time_master_sweep was seen set: it suppresses LFT_CHANGE
    NotMaster,         // the SM was seen in a state other than MASTER since the last refresh
    SweepError,        // subnet_initialization_error seen: Set MADs may have failed after OpenSM
                       // zeroed the block in its copy (osm_ucast_mgr.c set_lft_block)
    MarksLost,         // more distinct switches marked than LftMarks keeps, or marks taken by a
                       // snapshot that failed before it applied them
    // This switch:
    Marked,            // LFT_CHANGE named it
    NoCopy,            // a switch the cache has no copy of (new, or back with the same GUID)
    Replaced,          // another osm_switch_t or another lft buffer (re-created, re-allocated)
    Resized,           // max_lid_ho / lft_size moved the end of what is read
    PendingOnly,       // osm_switch_t::lft is NULL: new_lft is read, which routing rewrites silently
    Audit,             // this sweep's rolling audit slot (every switch once per kLftAuditPeriod refreshes)
};
std::string_view to_string(LftWhy w);

// One refresh in kLftAuditPeriod re-reads each switch's table even when nothing says it changed:
// a bound on how long a change OpenSM made without an event (a block zeroed before a Set that the
// switch then refused with an error status) can stay unseen. ~1/32 of a full compare per sweep.
inline constexpr uint32_t kLftAuditPeriod = 32;

// What the plugin learnt from OpenSM's events between two refreshes. `tracked` = false: nothing
// was recorded (every table is compared).
struct LftChanges {
    bool tracked = false;
    bool first_master_sweep = false;
    bool not_master = false;
    bool sweep_error = false;
    bool marks_lost = false;  // the set overflowed, or a failed snapshot took it
    std::unordered_set<Guid> marked;  // node GUIDs of the switches LFT_CHANGE named
};

// The facts about the sweep as a whole.
struct LftSweepFacts {
    bool tracked = false;  // LftChanges::tracked
    bool first_refresh = false;
    bool lids_changed = false;
    bool first_master_sweep = false, not_master = false, sweep_error = false, marks_lost = false;
};

// The facts about one switch, as LftCache::refresh() sees it.
struct LftSwitchFacts {
    bool marked = false;      // in LftChanges::marked
    bool have_copy = false;   // the cache holds a table for this GUID
    bool same_object = true;  // same osm_switch_t address and same lft buffer address as then
    bool same_length = true;  // the same number of entries read (min of LIDs, max_lid_ho + 1, lft_size)
    bool lft_null = false;    // only new_lft exists
    bool audit_slot = false;  // index % kLftAuditPeriod == refresh count % kLftAuditPeriod
};

// The rule: the sweep's reasons first (any of them reads every table), then the switch's own.
// Reuse only when nothing says the table might differ from the cached copy.
LftWhy lft_compare_why(const LftSweepFacts& sweep, const LftSwitchFacts& sw);

// The switches LFT_CHANGE named since the last take(), and the sweep facts noted meanwhile.
// Thread-safe: mark() runs on OpenSM's MAD dispatcher with osm->lock held exclusively, note() on
// the sweeper, take() on the sweeper under osm->lock (shared). Each holds the mutex for one hash
// insert or one swap, never waits on anything else, never takes osm->lock.
class LftMarks {
public:
    // At most `max_switches` distinct GUIDs are kept between two takes; beyond: marks_lost (every
    // table compared), so memory stays bounded whatever OpenSM reports.
    explicit LftMarks(size_t max_switches = 65536) : max_(max_switches) {}
    void mark(Guid switch_guid);
    void note(const LftChanges& facts);  // ORs the four flags in; `marked` and `tracked` are ignored
    LftChanges take();                   // what was recorded (tracked = true), and starts afresh

private:
    std::mutex mu_;
    size_t max_;
    LftChanges cur_;
};

}  // namespace ibf::osm
