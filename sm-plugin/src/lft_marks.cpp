// lft_compare_why() and LftMarks (ibf/lft_marks.h).
#include "ibf/lft_marks.h"

#include <utility>

namespace ibf::osm {

std::string_view to_string(LftWhy w) {
    switch (w) {
        case LftWhy::Reuse: return "reuse";
        case LftWhy::Untracked: return "untracked";
        case LftWhy::PluginLoaded: return "plugin loaded";
        case LftWhy::TableLength: return "table length";
        case LftWhy::FirstMasterSweep: return "first sweep as master";
        case LftWhy::NotMaster: return "not master since the last sweep";
        case LftWhy::SweepError: return "sweep error";
        case LftWhy::MarksLost: return "marks lost";
        case LftWhy::Marked: return "marked";
        case LftWhy::NoCopy: return "no copy";
        case LftWhy::Replaced: return "replaced";
        case LftWhy::Resized: return "resized";
        case LftWhy::PendingOnly: return "new_lft only";
        case LftWhy::Audit: return "audit";
    }
    return "?";
}

LftWhy lft_compare_why(const LftSweepFacts& s, const LftSwitchFacts& sw) {
    if (!s.tracked) return LftWhy::Untracked;
    if (s.first_refresh) return LftWhy::PluginLoaded;
    if (s.lids_changed) return LftWhy::TableLength;
    if (s.first_master_sweep) return LftWhy::FirstMasterSweep;
    if (s.not_master) return LftWhy::NotMaster;
    if (s.sweep_error) return LftWhy::SweepError;
    if (s.marks_lost) return LftWhy::MarksLost;
    if (sw.marked) return LftWhy::Marked;
    if (!sw.have_copy) return LftWhy::NoCopy;
    if (!sw.same_object) return LftWhy::Replaced;
    if (!sw.same_length) return LftWhy::Resized;
    if (sw.lft_null) return LftWhy::PendingOnly;
    if (sw.audit_slot) return LftWhy::Audit;
    return LftWhy::Reuse;
}

void LftMarks::mark(Guid switch_guid) {
    std::lock_guard lk(mu_);
    if (cur_.marks_lost) return;
    if (cur_.marked.size() >= max_ && !cur_.marked.count(switch_guid)) {
        cur_.marks_lost = true;
        return;
    }
    cur_.marked.insert(switch_guid);
}

void LftMarks::note(const LftChanges& f) {
    std::lock_guard lk(mu_);
    cur_.first_master_sweep |= f.first_master_sweep;
    cur_.not_master |= f.not_master;
    cur_.sweep_error |= f.sweep_error;
    cur_.marks_lost |= f.marks_lost;
}

LftChanges LftMarks::take() {
    LftChanges out;
    {
        std::lock_guard lk(mu_);
        std::swap(out, cur_);
    }
    out.tracked = true;
    return out;
}

}  // namespace ibf::osm
