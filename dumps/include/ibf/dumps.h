// Readers for real fabric dumps, a writer for ibnetdiscover, and node-name-maps.
//
//   std::string text = ...;                                  // the caller reads the file
//   ibf::Fabric f = ibf::parse_dump(text, "fabric.txt");     // detects the format
//   std::string again = ibf::write_ibnetdiscover(f);         // ibsim loads this as a net file
//
// Formats: `ibnetdiscover` output; `iblinkinfo` output (default and -l line forms); ibdiagnet2's
// ibnetdiscover-like `.net` dump (ports written as [p](p), spaces instead of tabs).
// Tolerated: CRLF, a UTF-8 BOM, shell-prompt lines before the dump, tabs turned into spaces,
// no final newline. Errors: ibf::InputError with file:line:column.
// Every returned Fabric is finalize()d. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ibf/error.h"
#include "ibf/fabric.h"

namespace ibf {

enum class DumpFormat { Ibnetdiscover, Iblinkinfo, IbdiagnetNet };
std::string_view to_string(DumpFormat f);  // "ibnetdiscover", "iblinkinfo", "ibdiagnet-net"

std::optional<DumpFormat> detect_dump_format(std::string_view text);

Fabric parse_ibnetdiscover(std::string_view text, const std::string& file);
Fabric parse_iblinkinfo(std::string_view text, const std::string& file);
Fabric parse_ibdiagnet_net(std::string_view text, const std::string& file);
// Detects the format; InputError when it is none of the above.
Fabric parse_dump(std::string_view text, const std::string& file);

// ibnetdiscover-format text: parse_ibnetdiscover() reads it back to an equal fabric, and ibsim
// loads it as a net file (node ids "S-<guid>" / "H-<guid>", rates such as 4xHDR kept per link).
std::string write_ibnetdiscover(const Fabric& f);

// OpenSM / infiniband-diags node-name-map: lines `<guid> "<name>"`, '#' comments, blank lines.
using NodeNameMap = std::unordered_map<Guid, std::string>;
NodeNameMap parse_node_name_map(std::string_view text, const std::string& file);
// Replaces the description of every mapped node by its mapped name and re-derives names.
void apply_node_name_map(Fabric& f, const NodeNameMap& map);

}  // namespace ibf
