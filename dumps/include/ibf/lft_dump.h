// Reader for dumped switch forwarding tables: the LFTs OpenSM or infiniband-diags wrote, so the
// routing validation and `ibfabric route` work offline with the same input the live snapshot gives.
//
//   std::vector<ibf::SwitchLft> t = ibf::parse_lft_dump(text, "lfts.txt");
//
// Formats (detected per switch block):
//   ibroute / dump_lfts:  "Unicast lids [0x0-0x8] of switch Lid 2 guid 0x... (leaf01):" or
//                         "... of switch DR path slid 0; dlid 0; 0,1 guid 0x... (leaf01):", then
//                         "0x0001 001 : (Channel Adapter portguid ...)" lines, "8 valid lids dumped"
//   opensm-lfts.dump:     the same header, entries "0x0001 001 # Channel Adapter ..."
//   opensm.fdbs:          "dump_ucast_routes: Switch 0x...", "LID : Port : Hops : Optimal",
//                         entries "0x0001 : 001  : 01   : yes"
// Entries not listed are "no path" (255). A LID above 0xBFFF (the unicast range), a port above
// 254, an entry before any switch header or a switch given twice is an ibf::InputError naming
// file:line:column. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ibf/error.h"
#include "ibf/snapshot.h"

namespace ibf {

std::vector<SwitchLft> parse_lft_dump(std::string_view text, const std::string& file);

}  // namespace ibf
