// OpenSM's guid2lid file ($OSM_CACHE_DIR/guid2lid): one line per port GUID with its LID range,
// `0x<16 hex digits> 0x<first LID> 0x<last LID>`. A standby's copy kept current from the master's
// snapshots lets it keep every LID when it takes over (honor_guid2lid_file TRUE). Pure.
//
//   std::string text = ibf::ha::guid2lid_text(snapshot.fabric);
#pragma once

#include <string>

#include "ibf/fabric.h"

namespace ibf::ha {

// Every port with a LID: CA ports, switch port 0 (switch ports share it); the range is
// LID .. LID + 2^LMC - 1. Sorted by GUID.
std::string guid2lid_text(const Fabric& f);

}  // namespace ibf::ha
