// The routing routes of ibfabricd (docs/api.md, "Routes and impact"): the same pure code as
// `ibfabric route`, `hosts`, `impact` and `topology slurm`, on the live fabric (the current snapshot, its LFTs, the
// live analysis' names and every published finding). Called by handle_api (routes.cpp).
//
//   GET /api/v1/route?src=node001&dst=node044   -> {"forward": route_json, "reverse": ..., "clean", "sweep_seq"}
//   GET /api/v1/hosts?nodes=node[001-032]     -> job_paths_json + "sweep_seq" (`ibfabric hosts`)
//   GET /api/v1/impact?node=spine01[&port=19]   -> impact_json + "sweep_seq"; node=a,b/3 for several
//   GET /api/v1/topology/slurm[?block=1]        -> {"conf": topology.conf text, "form", "sweep_seq"}
#pragma once

#include <string>

#include "ibf/api.h"

namespace ibf {

ApiResponse route_response(const std::string& query, const ApiContext& ctx);
ApiResponse hosts_response(const std::string& query, const ApiContext& ctx);
ApiResponse impact_response(const std::string& query, const ApiContext& ctx);
ApiResponse slurm_topology_response(const std::string& query, const ApiContext& ctx);

}  // namespace ibf
