// libFuzzer target: version 2 snapshot parts (docs/wire.md, "Snapshot, version 2"). The input is
// the byte stream that follows a Hello announcing version 2 (the receiver's Decoder with the
// daemon's bounds), fed in two chunks as a socket would deliver it; the first byte picks the cut.
// Any input either decodes or is an ibf::wire::Error; anything else is a bug. A decoded snapshot
// must encode again, in both versions.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ibf/wire.h"

namespace {

void drain(ibf::wire::Decoder& d) {
    using namespace ibf::wire;
    while (auto m = d.next()) {
        (void)encode(*m);
        if (auto* s = std::get_if<ibf::Snapshot>(&*m)) (void)encode_v2(*s);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ibf::wire;
    if (size == 0) return 0;
    const char* p = reinterpret_cast<const char*>(data + 1);
    const size_t n = size - 1;
    const size_t cut = data[0] % (n + 1);
    try {
        Decoder d(kMaxPayload, kMaxSmallPayload);
        Hello h{"OpenSM 3.3.23", "fuzz", {}, 1};
        h.wire_version = 2;
        const std::string hello = encode(Message(h));
        d.feed(hello.data(), hello.size());
        drain(d);
        d.feed(p, cut);
        drain(d);
        d.feed(p + cut, n - cut);
        drain(d);
    } catch (const Error&) {
    }
    return 0;
}
