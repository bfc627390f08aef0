// Replacing a file so that readers see the old text or the new, never half, and a crash leaves
// one of the two on disk. The one implementation: every file ibfabric rewrites goes through it
// (opensm.conf, guid2lid, keepalived's track file, the plan on accept and its backup, the
// daemon's --port-file, `ibfabric ha notify`'s state file, the waiver file of `ibfabric
// maintenance`, the lab's state.json).
//
// How: the directory is opened first (a directory the caller cannot open is an error before
// anything is written); a temp file `FILE.tmp.XXXXXXXX` is created beside FILE (0600, O_EXCL, a
// name of its own per call, so concurrent writers never share one); the old file's mode and
// owner are copied onto it (or `mode_if_new` exactly, whatever the umask); it is written,
// fsync'd, renamed over FILE, and the directory fsync'd. On any error before the rename the temp
// file is removed and FILE is left as it was.
//
//   ibf::write_file_atomic("/etc/opensm/opensm.conf", text);             // keeps e.g. 0600 root:root
//   ibf::write_file_atomic("/run/ibfabric/track", "1\n", {.mode_if_new = 0644});
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace ibf {

struct AtomicWriteOptions {
    // A new file's mode, exactly (the umask does not apply). 0600 unless the caller says who
    // else may read it: nothing becomes readable by others by default.
    mode_t mode_if_new = 0600;
};

// Throws std::system_error (a std::runtime_error; code() is the errno) whose what() reads
// "PATH: cannot WHAT: errno text", PATH being the file to replace, e.g.
// "/etc/ibfabric/plan.yaml: cannot create a temporary file in /etc/ibfabric: Permission denied".
// An existing FILE keeps its mode and owner; an owner the caller may not give (EPERM from
// fchown) is an error, and FILE is left as it was.
void write_file_atomic(const std::string& path, std::string_view data, const AtomicWriteOptions& options = {});

}  // namespace ibf
