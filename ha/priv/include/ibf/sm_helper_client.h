// The daemon's side of the SM helper (ibf/sm_helper.h): one request on one connection to its
// Unix socket (`ha.sm_helper`, /run/ibfabric-sm-helper.sock in the packaged units), one answer.
// Blocking, bounded by `timeout_ms` for the whole exchange.
//
//   std::string a = ibf::call_sm_helper("/run/ibfabric-sm-helper.sock", ibf::priority_request(14));
//   // a == "priority=14 before=15 pid=812"; a helper's "error: ..." is thrown as runtime_error
//   int before = ibf::answer_field(a, "before");       // 15 (-1 when the field is absent)
#pragma once

#include <string>

namespace ibf {

// The answer's text after "ok ". Throws std::runtime_error("sm helper SOCKET: ...") when the
// socket cannot be reached, the exchange times out, or the helper answers "error: ...".
std::string call_sm_helper(const std::string& socket_path, const std::string& request, int timeout_ms = 5000);

// The integer after `name=` in an answer, -1 when absent or not a number.
int answer_field(const std::string& answer, const std::string& name);

}  // namespace ibf
