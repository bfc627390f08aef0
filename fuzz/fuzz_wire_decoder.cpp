// libFuzzer target: the plugin -> daemon wire decoder (docs/wire.md). The first byte picks:
//   even: the rest is a byte stream for Decoder (with the receiver's pre-hello bound), fed in
//         two chunks as a socket would deliver it;
//   odd:  the rest is one JSON payload of message type (byte / 2) % 5 + 1 for decode_payload().
// Any input either decodes or is an ibf::wire::Error; anything else is a bug. What decodes must
// encode again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibf/wire.h"

namespace {

void stream(const char* p, size_t n) {
    using namespace ibf::wire;
    const size_t cut = n == 0 ? 0 : static_cast<unsigned char>(p[0]) % (n + 1);
    Decoder d(kMaxPayload, kMaxSmallPayload);
    d.feed(p, cut);
    while (auto m = d.next()) (void)encode(*m);
    d.feed(p + cut, n - cut);
    while (auto m = d.next()) (void)encode(*m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ibf::wire;
    if (size == 0) return 0;
    const char* rest = reinterpret_cast<const char*>(data + 1);
    try {
        if (data[0] % 2 == 0) {
            stream(rest, size - 1);
        } else {
            const auto t = static_cast<MsgType>((data[0] / 2) % 5 + 1);
            (void)encode(decode_payload(t, std::string_view(rest, size - 1)));
        }
    } catch (const Error&) {
    }
    return 0;
}
