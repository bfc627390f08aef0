// libFuzzer target: history sweep references (`ibfabric diff '#1' -1h`, ?since=, ?from=/to=;
// history/sweep_ref.h). Never crashes or overflows (UBSan aborts on signed overflow); an accepted
// time is not before 1970; an accepted id is >= 1.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibf/sweep_ref.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (int64_t now : {int64_t{1796094000000}, int64_t{0}, INT64_MAX}) {
        const auto r = ibf::parse_sweep_ref(text, now);
        if (!r) continue;
        if (r->kind == ibf::SweepRef::Kind::time && r->value < 0) std::abort();
        if (r->kind == ibf::SweepRef::Kind::id && r->value < 1) std::abort();
    }
    if (auto t = ibf::parse_iso_time(text); t && *t < -62167219200000) std::abort();  // before year 0
    return 0;
}
