// OpenSM's guid2lid file ($OSM_CACHE_DIR/guid2lid, the LID persistence a master writes after each
// LID assignment and a standby with `honor_guid2lid_file TRUE` re-reads when it leaves STANDBY):
// build its text from a fabric, parse one, and compare two maps. Pure: no I/O.
//
// The format (opensm/osm_db_files.c + osm_db_pack.c, OpenSM 3.3.23): one entry per port GUID,
//   "0x0002c90300a1b2c3 0x0005 0x0005\n\n"
// i.e. the key "0x" + 16 lowercase hex digits at column 0, then the first and last LID of the
// port's range ("0x%04x 0x%04x"; last = first + 2^LMC - 1), then an empty line. OpenSM looks keys up
// by that exact string, so a key in any other spelling is silently ignored by it: we refuse one.
//
//   ibf::ha::Guid2Lid m = ibf::ha::guid2lid_map(snapshot.fabric);
//   Guid2Lid keep = ibf::ha::merge_guid2lid(last_written, m);
//   std::string text = ibf::ha::guid2lid_text(keep);    // write to the standby's guid2lid
//   auto back = ibf::ha::parse_guid2lid(text, "guid2lid");
//   for (const auto& c : ibf::ha::lid_changes(before, after)) ...   // LIDs a failover moved
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"

namespace ibf::ha {

struct LidRange {
    uint16_t first = 0, last = 0;  // inclusive; last == first without LMC
    friend bool operator==(const LidRange&, const LidRange&) = default;
};
using Guid2Lid = std::map<Guid, LidRange>;  // port GUID -> LID range

// Every port with a GUID and a LID as OpenSM stores it: each CA/router port (its own GUID),
// each switch's port 0 (its LID range from port 0's LMC); switch ports 1..N share port 0's
// GUID and have no entry. Ports without a LID (down, never swept) are left out.
Guid2Lid guid2lid_map(const Fabric& f);

// The file text, sorted by GUID (OpenSM writes its hash order; the order does not matter to it).
std::string guid2lid_text(const Guid2Lid& m);
std::string guid2lid_text(const Fabric& f);

// Parses a guid2lid file. Throws InputError("file:line: ...") on a line OpenSM would refuse or
// not use: a key that is not "0x" + 16 lowercase hex digits, a value that is not two LIDs
// (first <= last, unicast 1..0xbfff), a duplicate GUID, a LID range used by two GUIDs, or more
// than kMaxGuid2LidBytes of text.
inline constexpr size_t kMaxGuid2LidBytes = 16u << 20;
Guid2Lid parse_guid2lid(std::string_view text, const std::string& file);

// The map to write into a standby's guid2lid after a master snapshot: every entry of `current`
// (guid2lid_map of the snapshot), plus each entry of `previous` (what was written before) whose
// GUID is not in `current` and whose LIDs no kept entry uses — so a host that is down keeps its
// LID reserved, as in the master's own file, and a LID never appears twice.
Guid2Lid merge_guid2lid(const Guid2Lid& previous, const Guid2Lid& current);

// Ports present in both maps whose LID range differs. A port present in only one map (a host
// that is down, a new host) is not a change.
struct LidChange {
    Guid port_guid = 0;
    LidRange before, after;
};
std::vector<LidChange> lid_changes(const Guid2Lid& before, const Guid2Lid& after);

}  // namespace ibf::ha
