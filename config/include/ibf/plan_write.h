// Writes a plan document (ibf/plan_document.h) as YAML through yaml-cpp, in the layout of
// docs/plan.md: block sections with a blank line between them, one flow map per list entry,
// names, patterns and port lists double-quoted (escaped by yaml-cpp), comments as YAML comments.
// The writer of `ibfabric plan from-dump` (accept edits a plan's text instead: ibf/plan_accept.h):
//
//   std::string yaml = ibf::plan_yaml_text(ibf::infer_plan(fabric, ibf::analyze(fabric), "golden.txt").doc);
//   // parses with ibf::parse_plan_yaml
//
// Pure: returns the text.
#pragma once

#include <string>

#include "ibf/plan_document.h"

namespace ibf {

std::string plan_yaml_text(const PlanDocument& doc);

}  // namespace ibf
