// A compact plan (schema: docs/plan.md) inferred from a known-good fabric, for
// `ibfabric plan from-dump` (accept edits a plan instead: checks/plan_accept.h). Pure: decides what the plan says, as a
// PlanDocument (ibf/plan_document.h); config/ writes it as YAML (ibf/plan_write.h), so this folder
// needs no YAML library.
//
//   ibf::Analysis a = ibf::analyze(fabric);
//   ibf::InferredPlan p = ibf::infer_plan(fabric, a, "golden.txt");
//   std::string yaml = ibf::plan_yaml_text(p.doc);
//   // yaml parses with ibf::parse_plan_yaml, and ibf::check(plan, fabric) is then clean.
//
// Tiers come from the analysis (leaf, spine, core). A tier pair whose cabling follows the plan's
// single-pod port rule (every lower switch reaches every upper switch with the same number of
// cables on the same ports) is written as `up`/`up_to`/`cables_per_pair`/`down`; any other pair,
// and anything outside the tiers (storage on spines, aggregation nodes, leaf-to-leaf cables), is
// written as explicit `cables:`. Hosts become one host group per leaf, HCA port and rate, with
// their switch ports as ranges. Nodes whose names had to be generated (or all, with
// pin_all_guids) are pinned by GUID in `nodes:`; rates are written where
// they differ from the plan-wide majority rate (tier, group, cable, or an `overrides:` entry); the
// MTU only when every link reports the same one. Names that a plan cannot carry (spaces, '/', '[',
// shared descriptions) are replaced by their display name (ibf/names.h: "leaf-369c", "host-cd00")
// when a plan can carry it, else "<tier>-<last 4 GUID digits>" or "host-<GUID>".
#pragma once

#include <string>

#include "ibf/analysis.h"
#include "ibf/fabric.h"
#include "ibf/plan_document.h"

namespace ibf {

struct InferredPlan {
    PlanDocument doc;
    int tier_switches = 0;     // switches declared in tiers under `switches:` (names, ports, down)
    int compact_switches = 0;  // of those, switches whose uplinks use the compact rule (up, up_to)
    int compact_hosts = 0;     // host links written as host groups
    int explicit_cables = 0;   // links written under cables:
};

struct InferOptions {
    // false: nodes keep their own names and are matched by name (a replaced switch or HCA still
    // checks clean); only nodes whose name had to be generated are pinned by GUID.
    // true: every node is pinned by GUID (a golden snapshot: a swapped part is a finding).
    bool pin_all_guids = false;
};

InferredPlan infer_plan(const Fabric& f, const Analysis& a, const std::string& source, const InferOptions& opt = {});

}  // namespace ibf
