// The MAD I/O edge of ha/ (smp.h): not implemented yet.
#include <stdexcept>

#include "ibf/smp.h"

namespace ibf::ha {

std::string_view to_string(SmpStatus s) {
    switch (s) {
        case SmpStatus::ok: return "ok";
        case SmpStatus::timeout: return "timeout";
        case SmpStatus::refused: return "refused";
        default: return "error";
    }
}

std::unique_ptr<SmpPort> open_smp_port(const SmpOptions&) { throw std::runtime_error("MAD I/O is not built yet"); }

}  // namespace ibf::ha
