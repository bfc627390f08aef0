// Replacing a file so that readers see the old text or the new, never half, and a crash leaves
// one of the two on disk: FILE.tmp beside it (created 0600, so the text is never readable by more
// than the old file allowed), the old file's mode and owner copied onto it, written, fsync'd,
// renamed over FILE, then the directory fsync'd. Used for every file the HA side rewrites:
// opensm.conf (holds sm_key), OpenSM's guid2lid, keepalived's track file.
//
//   ibf::write_file_atomic("/etc/opensm/opensm.conf", text);        // keeps e.g. 0600 root:root
//   ibf::write_file_atomic("/run/ibfabric/track", "1\n", 0644);     // a new file gets 0644
#pragma once

#include <sys/types.h>

#include <string>

namespace ibf {

// Throws std::runtime_error naming the file and the reason (errno's text). A new file gets
// `mode_if_new`; an existing one keeps its mode and owner (an owner the caller may not give,
// EPERM from fchown, is an error: the file is left as it was).
void write_file_atomic(const std::string& path, const std::string& text, mode_t mode_if_new = 0644);

}  // namespace ibf
