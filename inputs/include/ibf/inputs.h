// Reading the administrator's files from disk: plans (YAML or a known-good dump), dumps and
// node-name-maps. The one place that turns paths into model objects, so the CLI, the daemon and
// the lab resolve them the same way. (The parsers themselves are pure: dumps/, config/.)
//
//   ibf::Expected e = ibf::load_expected("plan.yaml");       // + the node-name-map the plan names
//   ibf::Fabric now = ibf::load_dump_file("now.txt", e.names);
//
// Every failure is an ibf::InputError naming the file (and line/column for parse errors).
//
// Bounded: only regular files are read (a device, FIFO or directory is "<path>: not a regular
// file"), and none larger than its limit ("<path>: larger than the 256 MiB limit"), so
// `ibfabric analyze /dev/zero` fails at once instead of eating memory. `-` is standard input
// (read up to the same limit).
#pragma once

#include <cstddef>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/fabric.h"
#include "ibf/plan.h"

namespace ibf {

// The largest plan, dump or node-name-map read (a 65k-node ibnetdiscover dump is ~40 MiB).
inline constexpr size_t kMaxInputFileBytes = size_t{256} << 20;

// Whole file as bytes; `-` is standard input. `what` says what the file is for in the error
// ("plan", "dump", ...). InputError when it is not a regular file or larger than `max_bytes`.
std::string read_text_file(const std::string& path, std::string_view what, size_t max_bytes = kMaxInputFileBytes);

// A regular file (never standard input) and its permission bits (st_mode & 07777), read from
// the same open file so they belong together (the daemon checks its token file's mode).
struct FileContents {
    std::string text;
    unsigned mode = 0;
};
FileContents read_regular_file(const std::string& path, std::string_view what, size_t max_bytes);

// Runs `parse()` (a parser of the file at `path`), turning std::bad_alloc into an InputError that
// names the file, so running out of memory is never a bare "std::bad_alloc":
//   WaiverSet w = ibf::naming_file(path, "waiver file", [&] { return parse_waivers(text, path); });
template <class F>
auto naming_file(const std::string& path, std::string_view what, F&& parse) -> decltype(parse()) {
    try {
        return parse();
    } catch (const std::bad_alloc&) {
        throw InputError(path, 0, 0, "out of memory while reading the " + std::string(what) + ": it expands to too much");
    }
}

// "256 MiB", "4 KiB", "100 bytes": how limits are named in errors and docs.
std::string size_limit_text(size_t bytes);
// Replaces `path` with `text` (truncating); InputError when it cannot be written.
void write_text_file(const std::string& path, std::string_view text);

// Writes an edited plan (`ibfabric accept`, POST /api/v1/accept): copies the current `path` to the
// first free `path.1` (`.2`, ...) with the same mode, then replaces `path` atomically (a temporary
// file in the same folder, fsync, rename; same mode). Returns the copy's path. InputError naming
// the file that could not be read or written.
std::string write_plan_keeping_previous(const std::string& path, std::string_view text);

// The expected side of a check.
struct Expected {
    Plan plan;
    NodeNameMap names;           // applied to actual fabrics before checking; empty = none
    std::string names_path;      // where `names` came from ("" = none)
    std::optional<Fabric> golden;  // set when the plan is a known-good dump
};

// Loads a YAML plan or a known-good dump (detected). The node-name-map is `node_name_map` when
// given, else the one the YAML plan names in `node_name_map:` (relative to the plan's folder).
// A golden dump gets the map applied too, so its names match the plan's.
Expected load_expected(const std::string& path, const std::string& node_name_map = "");

// A dump of any supported format, with `names` applied when not empty.
Fabric load_dump_file(const std::string& path, const NodeNameMap& names = {});
NodeNameMap load_node_name_map(const std::string& path);

}  // namespace ibf
