// Scope matching and writing an accepted plan (ibf/plan_accept.h).
#include "ibf/plan_accept.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "ibf/analysis.h"
#include "ibf/atomic_file.h"
#include "ibf/inputs.h"
#include "ibf/plan_infer.h"
#include "ibf/plan_write.h"

namespace ibf {

bool scope_matches(const std::vector<std::string>& scope, const std::string& name) {
    for (const std::string& s : scope) {
        if (s == name) return true;
        if (!s.empty() && s.back() == '*' && name.compare(0, s.size() - 1, s, 0, s.size() - 1) == 0) return true;
    }
    return false;
}

std::vector<Finding> findings_outside_scope(const std::vector<Finding>& fs, const std::vector<std::string>& scope) {
    std::vector<Finding> out;
    for (const Finding& f : fs)
        if (!scope_matches(scope, f.a.name) && !scope_matches(scope, f.b.name)) out.push_back(f);
    return out;
}

AcceptWrite write_accepted_plan(const std::string& plan_path, const Fabric& f, const std::string& source) {
    const InferredPlan p = infer_plan(f, analyze(f), source);
    const std::string yaml = plan_yaml_text(p.doc);
    struct stat st{};
    if (::stat(plan_path.c_str(), &st) != 0)
        throw std::system_error(errno, std::generic_category(), plan_path + ": cannot read");
    const std::string old = read_text_file(plan_path, "plan");
    AcceptWrite w;
    for (int n = 1;; ++n) {
        w.backup = plan_path + "." + std::to_string(n);
        if (!std::filesystem::exists(w.backup)) break;
    }
    // The backup gets the plan's mode (a plan readable only by its group stays so); the plan
    // itself keeps its mode and owner.
    write_file_atomic(w.backup, old, {.mode_if_new = static_cast<mode_t>(st.st_mode & 07777)});
    write_file_atomic(plan_path, yaml);
    w.compact_switches = p.compact_switches;
    w.compact_hosts = p.compact_hosts;
    w.explicit_cables = p.explicit_cables;
    w.bytes = yaml.size();
    return w;
}

}  // namespace ibf
