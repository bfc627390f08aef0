// The history routes of the HTTP API (docs/api.md): what changed per sweep, the difference
// between two recorded sweeps in the findings format, and accepting the current fabric as the
// plan. Called by handle_api() on the io thread; no sockets, so tested like api.h.
//
//   GET  /api/v1/history/changes?limit=N&before=ID&since=T&detail=1
//   GET  /api/v1/history/diff?from=REF&to=REF            REF: row id, latest, ISO time, -2h
//   POST /api/v1/accept  {"scope": ["leaf03"]}           Bearer token (as POST /api/v1/sm/priority)
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "ibf/api.h"
#include "ibf/history.h"
#include "ibf/sweep_ref.h"

namespace ibf {

// An error with its HTTP status, thrown by the history routes' helpers and the daemon's accept.
struct ApiFailure : std::runtime_error {
    int status;
    nlohmann::json detail;  // an object: merged into the error answer next to "error" (accept's refusals)
    ApiFailure(int s, const std::string& what, nlohmann::json d = nullptr)
        : std::runtime_error(what), status(s), detail(std::move(d)) {}
};

ApiResponse history_changes_response(const std::string& query, const ApiContext& ctx);
ApiResponse history_diff_response(const std::string& query, const ApiContext& ctx);
// The bearer token is checked by the route table (routes.cpp) before these run.
ApiResponse accept_response(const ApiRequest& req, const ApiContext& ctx);

// The row a reference names (ApiFailure 404 when there is none), and the diff between two rows:
// {"from": {"id", "sweep_seq", "time", "sm_guid"}, "to": {...}, "change_summary": "...",
//  "changes": [...], "summary": {...}, "findings": [...]} (findings_to_json of changes_as_findings).
// A time before the first kept sweep resolves to that first sweep (`*from_first` set when given):
// `diff -1h` on a history younger than an hour diffs from its beginning.
SweepRow resolve_sweep(const HistoryStore& h, const SweepRef& ref, const std::string& what, bool* from_first = nullptr);
// With `plan`, a cable that comes back where the plan has it is no finding: its change carries
// "restored": true and its text ends in " (restored: as planned)".
nlohmann::json history_diff_json(const HistoryStore& h, const SweepRow& from, const SweepRow& to, const Plan* plan = nullptr);

}  // namespace ibf
