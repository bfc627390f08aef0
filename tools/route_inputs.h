// What `route` and `hosts` read: a dump, its LFT dump, and (optional) the plan for planned rates
// and cable labels; the analysis and the notes per cable (findings of the analysis and the plan
// check). Shared by cmd_route.cpp and cmd_hosts.cpp.
#pragma once

#include <string>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/route_report.h"

namespace ibf::cli {

struct RouteInputs {
    Fabric fabric;
    Analysis analysis;
    std::vector<SwitchLft> lfts;
    LinkNotes notes;
};

RouteInputs load_route_inputs(const std::string& dump, const std::string& lfts, const std::string& expected,
                              const std::string& node_name_map);

}  // namespace ibf::cli
