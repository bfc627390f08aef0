// libFuzzer target: the root SM helper's request parser (ha/priv/, ibf/sm_helper.h): whatever a
// local peer sends, a request or a one-line error, never a crash; an accepted priority is 0..15 and
// an accepted guid2lid body is what the size said, non-empty and bounded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibf/sm_helper.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const auto r = ibf::parse_helper_request(bytes);
    if (const auto* e = std::get_if<std::string>(&r)) {
        if (e->empty() || ibf::helper_error(*e).find('\n') != ibf::helper_error(*e).size() - 1) std::abort();
        return 0;
    }
    const auto& q = std::get<ibf::HelperRequest>(r);
    if (q.kind == ibf::HelperRequest::Kind::priority && (q.priority < 0 || q.priority > 15)) std::abort();
    if (q.kind == ibf::HelperRequest::Kind::guid2lid &&
        (q.body.empty() || q.entries == 0 || q.body.size() > ibf::max_helper_request_bytes() ||
         bytes.substr(bytes.size() - q.body.size()) != q.body))
        std::abort();
    int before = 0;
    const std::string conf = ibf::opensm_conf_with_priority(bytes, 7, before);
    if (conf.find("sm_priority 7\n") == std::string::npos || before < -1) std::abort();
    return 0;
}
