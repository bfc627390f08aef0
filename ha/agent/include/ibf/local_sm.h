// This node's OpenSM, as the switchover changes it (POST /api/v1/sm/priority, docs/ha.md
// "Graceful switchover"): `sm_priority` rewritten in its opensm.conf, then SIGHUP, which makes
// OpenSM re-read the option (and, if it now outranks the master, ask for the mastership: trap
// 144, handover). The process is checked first (/proc/PID/exe must be opensm), so a stale pid
// never signals another program. Blocking (a small file, /proc, one signal): ibfabricd runs it on a worker,
// never on its io thread (docs/threading.md "ha threads").
//
//   ibf::LocalPriority p = ibf::set_opensm_priority("/etc/opensm/opensm.conf", opensm_pid, 14);
//   p.before;   // the sm_priority the file had, -1 when it had none (then the line is appended)
#pragma once

#include <string>

namespace ibf {

struct LocalPriority {
    int before = -1;  // sm_priority in the file before, -1: none
};

// InputError when `pid` is not an opensm process; std::runtime_error when the file cannot be
// read or written, or the signal cannot be sent. `pid` 0: no opensm runs (killed, crashed): only
// the file is written, for its next start.
LocalPriority set_opensm_priority(const std::string& opensm_conf, int pid, int priority);

}  // namespace ibf
