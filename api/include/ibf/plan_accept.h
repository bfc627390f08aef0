// `ibfabric accept` / POST /api/v1/accept: after an expansion, the current fabric becomes the plan.
// The plan is written by the plan writer of `ibfabric plan from-dump` (routing/plan_infer.h decides, config/plan_write.h writes); the
// previous plan is kept next to it as plan.yaml.1 (.2, ... the first free number).
//
//   std::vector<std::string> scope = {"leaf19", "leaf2*"};
//   auto outside = findings_outside_scope(check(plan, fabric), scope);   // must be empty to accept
//   AcceptWrite w = write_accepted_plan("/etc/ibfabric/plan.yaml", fabric, "sweep 41 of SM 0x...");
//
// A scope entry is a node name, or a prefix followed by '*'. A finding is inside the scope when
// either of its ends is a node the scope names. With a scope, only a fabric whose differences from
// the plan are all inside it is accepted: everything else already matches the plan, so the
// written plan changes exactly the named part.
#pragma once

#include <string>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/finding.h"

namespace ibf {

bool scope_matches(const std::vector<std::string>& scope, const std::string& name);
std::vector<Finding> findings_outside_scope(const std::vector<Finding>& fs, const std::vector<std::string>& scope);

struct AcceptWrite {
    std::string backup;  // where the previous plan went
    int compact_switches = 0, compact_hosts = 0, explicit_cables = 0;
    size_t bytes = 0;
};

// Infers the plan from `f`, copies `plan_path` to the first free plan_path.N (the plan's mode),
// then replaces plan_path with write_file_atomic() (fsio/: its mode and owner kept, fsync'd).
// std::runtime_error naming the file.
AcceptWrite write_accepted_plan(const std::string& plan_path, const Fabric& f, const std::string& source);

}  // namespace ibf
