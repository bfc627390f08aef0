// The SM helper's protocol and its pure decisions (ha/priv/, docs/ha.md "Privileges under the
// packaged unit"): `ibfabric-sm-helper` is a tiny root program, started by systemd once per
// connection on ibfabric-sm-helper.socket, that does the two things the unprivileged daemon may
// not: set this node's OpenSM's sm_priority (opensm.conf + SIGHUP) and replace OpenSM's guid2lid
// file. The paths are the helper's own (its unit's ExecStart), never the caller's; the opensm it
// signals is one it finds itself (pick_opensm), never a pid from the caller.
//
// One request per connection, then the client shuts down its write side; one answer line back:
//   "priority 14\n"                      -> "ok priority=14 before=15 pid=812\n"
//   "guid2lid 34\n0x0002c90300000001 0x0001 0x0001\n\n"  (exactly 34 bytes of guid2lid text
//                                        after the line) -> "ok guid2lid bytes=34 entries=1\n"
//   anything else                        -> "error: <one line>\n"
//
//   auto r = ibf::parse_helper_request(bytes);       // pure: no I/O
//   if (auto* e = std::get_if<std::string>(&r)) answer = ibf::helper_error(*e);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ibf {

struct HelperRequest {
    enum class Kind { priority, guid2lid };
    Kind kind = Kind::priority;
    int priority = -1;   // priority: 0..15
    std::string body;    // guid2lid: the file's new text (parsed and bounded)
    size_t entries = 0;  // guid2lid: its entries
};

// The most a request may be: its first line and a guid2lid body (ha::kMaxGuid2LidBytes, 16 MiB).
inline constexpr size_t kMaxHelperLineBytes = 64;
size_t max_helper_request_bytes();

// The whole request as received (the client shut down its side). An error is one line naming
// what is wrong: "unknown request 'reboot' (expected priority N or guid2lid BYTES)".
std::variant<HelperRequest, std::string> parse_helper_request(std::string_view bytes);

// The request a client sends.
std::string priority_request(int priority);
std::string guid2lid_request(std::string_view text);

// The answer lines (control bytes of a message become \xNN: one line, always).
std::string helper_error(std::string_view message);

// opensm.conf's text with every `sm_priority` line set to `priority` (one appended when none);
// `before` gets the last value replaced, -1 when there was none.
std::string opensm_conf_with_priority(std::string_view text, int priority, int& before);

// A process the helper found in /proc: comm, real uid, argv.
struct ProcInfo {
    int pid = 0;
    std::string comm;
    unsigned uid = 0;
    std::vector<std::string> argv;
    int ppid = 0;  // 0: not known
};

// The opensm to SIGHUP: a root process named opensm; when there are several, the one whose
// `-F`/`--config` names `opensm_conf`. A process whose parent is such an opensm too is that
// opensm's child between fork and exec (a system() or an event script), not a second SM: it is
// not counted. Returns its pid, or an error saying why none is chosen.
std::variant<int, std::string> pick_opensm(const std::vector<ProcInfo>& procs, const std::string& opensm_conf);

}  // namespace ibf
