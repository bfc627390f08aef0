// The links a job's hosts use: every ordered pair of the hosts traced through the forwarding
// tables, the cables they cross (worst health first), and the all-to-all bandwidth those cables
// allow. Pure: no I/O (`ibfabric hosts`, docs/cli.md).
//
//   ibf::JobPaths j = ibf::job_paths(graph, analysis.names, host_ids, notes);
//   j.links[0];          // the cable with findings, or the busiest one
//   j.all_to_all_gbps;   // per host, bound by the most shared cable
//
// Each host's first linked port is its endpoint. A cable carrying P of the job's pairs at R Gb/s
// (one direction) gives each of them at most R / P; in an all-to-all every host sends to the N-1
// others at once, so the bound per host is (N-1) x min over cables of R / P (the host's own
// cable carries its N-1 pairs, so the bound never exceeds its rate). Pairs whose route does not arrive are counted and not in the bound.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibf/route_report.h"

namespace ibf {

struct JobLink {
    NodeId node = kNoNode;  // the sending end
    int port = 0;
    NodeId peer = kNoNode;
    int peer_port = 0;
    double gbps = 0;        // active rate
    long pairs = 0;         // the job's ordered pairs through it, this direction
    std::vector<std::string> issues;
};

struct JobPaths {
    int hosts = 0;
    long pairs = 0, unrouted = 0;
    std::vector<std::string> unrouted_samples;  // up to 5: "node01 -> node07: leaf02 has no LFT entry for LID 7"
    std::vector<JobLink> links;                 // links with issues first, then by pairs (most first)
    double all_to_all_gbps = 0;                 // per host; 0 when no pair arrives
    size_t bottleneck = 0;                      // index into links of the limiting cable
};

// The hosts a Slurm hostlist names ("node[001-032],gpu07", ibf/hostlist.h), each a CA whose name
// (Node::name: the node-name-map's, else the NodeDescription's first word) it is. nullopt and
// `error` ("no host 'node033' in the fabric", a bad hostlist) when one is missing.
std::optional<std::vector<NodeId>> job_hosts(const Fabric& f, std::string_view hostlist, std::string& error);

JobPaths job_paths(const RouteGraph& g, const std::vector<std::string>& names, const std::vector<NodeId>& hosts,
                   const LinkNotes& notes);
nlohmann::json job_paths_json(const Fabric& f, const std::vector<std::string>& names, const JobPaths& j);
// The summary, then at most `max_links` cables: of job_paths_json's object (what the daemon's
// GET /api/v1/hosts answers), so files and the live fabric print alike.
std::string render_job_paths(const nlohmann::json& j, size_t max_links = 20);
std::string render_job_paths(const Fabric& f, const std::vector<std::string>& names, const JobPaths& j, size_t max_links = 20);

}  // namespace ibf
