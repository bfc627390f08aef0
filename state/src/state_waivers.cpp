// ControllerState, waivers part: the findings that count and the ones a waiver covers
// (config `waivers:`, checks/waivers.h, docs/daemon.md).
#include <algorithm>

#include "ibf/controller_state.h"

namespace ibf {

std::vector<Finding> ControllerState::findings_at(int64_t now_ms) const {
    return std::move(findings_and_waived_at(now_ms).active);
}

Waived ControllerState::findings_and_waived_at(int64_t now_ms) const {
    if (!waivers_) return {all_findings_at(now_ms), {}};
    Waived r = apply_waivers(all_findings_at(now_ms), *waivers_, now_ms);
    std::stable_sort(r.active.begin(), r.active.end(), [](const Finding& x, const Finding& y) { return x.kind < y.kind; });
    return r;
}

std::vector<WaivedFinding> ControllerState::waived_at(int64_t now_ms) const {
    if (!waivers_) return {};
    return apply_waivers(all_findings_at(now_ms), *waivers_, now_ms).waived;
}

std::vector<Finding> ControllerState::analysis_findings_at(int64_t now_ms) const {
    if (!analysis_) return {};
    if (!waivers_) return analysis_->findings;
    Waived r = apply_waivers(analysis_->findings, *waivers_, now_ms);
    std::erase_if(r.active, [](const Finding& f) { return f.kind == FindingKind::waiver_expired; });
    return std::move(r.active);
}

std::vector<WaivedFinding> ControllerState::analysis_waived_at(int64_t now_ms) const {
    if (!analysis_ || !waivers_) return {};
    return apply_waivers(analysis_->findings, *waivers_, now_ms).waived;
}

}  // namespace ibf
