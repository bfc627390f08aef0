// GET /api/v1/history/changes, GET /api/v1/history/diff, POST /api/v1/accept.
#include "ibf/history_api.h"

#include <charconv>
#include <set>

#include "ibf/change_json.h"
#include "ibf/report.h"

namespace ibf {
namespace {

using nlohmann::json;

ApiResponse ok(const json& j) {
    ApiResponse r;
    r.body = json_text(j, 2) + "\n";
    return r;
}

std::optional<int64_t> int_param(const std::map<std::string, std::string>& q, const char* key, int64_t lo, int64_t hi,
                                 int64_t def) {
    auto it = q.find(key);
    if (it == q.end()) return def;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || p != it->second.data() + it->second.size() || v < lo || v > hi) return std::nullopt;
    return v;
}

json row_ref(const SweepRow& r) {
    return {{"id", r.id}, {"sweep_seq", r.sweep_seq}, {"time", iso_time(r.unix_ms)}, {"unix_ms", r.unix_ms}, {"sm_guid", r.sm_guid}};
}

const char* kRefForms = "a history row id, 'latest', an ISO time (2026-12-01T03:00:00Z), @unix_ms, or -30m/-2h/-1d";

}  // namespace

SweepRow resolve_sweep(const HistoryStore& h, const SweepRef& ref, const std::string& what, bool* from_first) {
    std::optional<SweepRow> r;
    if (from_first) *from_first = false;
    switch (ref.kind) {
    case SweepRef::Kind::id: r = h.find_row(ref.value); break;
    case SweepRef::Kind::time:
        r = h.row_at_time(ref.value);
        // A time before the history began (`diff -1h` on a history younger than an hour): from its
        // first sweep, which is as far back as it can answer.
        if (!r && (r = h.first_row()) && from_first) *from_first = true;
        break;
    case SweepRef::Kind::latest: r = h.latest_row(); break;
    }
    if (!r) {
        const std::string which = ref.kind == SweepRef::Kind::id ? "row " + std::to_string(ref.value) : "sweep yet";
        throw ApiFailure(404, what + ": the history has no " + which);
    }
    return *r;
}

json history_diff_json(const HistoryStore& h, const SweepRow& from, const SweepRow& to, const Plan* plan) {
    auto state = [&](const SweepRow& r) {
        auto s = h.state_at(r.id);
        if (!s)
            throw ApiFailure(404, "row " + std::to_string(r.id) + " has no recorded fabric (written before change tracking)");
        return *s;
    };
    const std::vector<Change> cs = diff_states(state(from), state(to));
    // The plan's cables by their ends' names: a link that comes back as planned is restored.
    std::set<std::pair<std::string, std::string>> cables;
    if (plan)
        for (const PlannedLink& l : plan->links) {
            if (l.a.node >= plan->nodes.size() || l.b.node >= plan->nodes.size()) continue;
            const std::string a = plan->nodes[l.a.node].name + "/" + std::to_string(l.a.port);
            const std::string b = plan->nodes[l.b.node].name + "/" + std::to_string(l.b.port);
            cables.insert({a, b});
            cables.insert({b, a});
        }
    const PlannedCableFn planned = cables.empty() ? PlannedCableFn{}
        : [&cables](const std::string& a, int pa, const std::string& b, int pb) {
              return cables.count({a + "/" + std::to_string(pa), b + "/" + std::to_string(pb)}) > 0;
          };
    json j = findings_to_json(changes_as_findings(cs, planned));
    j["from"] = row_ref(from);
    j["to"] = row_ref(to);
    j["change_summary"] = summarize(cs);
    j["changes"] = changes_to_json(cs);
    for (size_t i = 0; i < cs.size(); ++i)
        if (restored(cs[i], planned)) {
            j["changes"][i]["restored"] = true;
            j["changes"][i]["text"] = j["changes"][i]["text"].get<std::string>() + " (restored: as planned)";
        }
    return j;
}

ApiResponse history_changes_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"limit", "before", "since", "detail"}, q)) return *bad;
    if (!ctx.history_store) return api_error(404, "history is not enabled (set 'history:' in the config)");
    const auto limit = int_param(q, "limit", 1, 1000, 20);
    const auto before = int_param(q, "before", 1, INT64_MAX, 0);
    const auto detail = int_param(q, "detail", 0, 1, 0);
    if (!limit) return api_error(400, "limit must be 1..1000");
    if (!before) return api_error(400, "before must be a row id (1 or more)");
    if (!detail) return api_error(400, "detail must be 0 or 1");
    int64_t since = 0;
    if (auto it = q.find("since"); it != q.end()) {
        auto ref = parse_sweep_ref(it->second, ctx.now_ms);
        if (!ref || ref->kind != SweepRef::Kind::time)
            return api_error(400, "since must be a time: an ISO time (2026-12-01T03:00:00Z), @unix_ms, or -30m/-2h/-1d");
        since = ref->value;
    }
    const ChangesPage p = ctx.history_store->changes(static_cast<int>(*limit), *before, since, *detail != 0);
    std::string next = "/api/v1/history/changes?limit=" + std::to_string(*limit) + "&before=" + std::to_string(p.next_before);
    if (q.count("since")) next += "&since=" + q["since"];
    if (*detail) next += "&detail=1";
    return ok({{"limit", *limit}, {"before", *before ? json(*before) : json(nullptr)},
               {"since", since ? json(iso_time(since)) : json(nullptr)}, {"rows", p.rows.size()},
               {"next_before", p.next_before ? json(p.next_before) : json(nullptr)},
               {"next", p.next_before ? json(next) : json(nullptr)}, {"sweeps", p.rows}});
}

ApiResponse history_diff_response(const std::string& query, const ApiContext& ctx) {
    std::map<std::string, std::string> q;
    if (auto bad = parse_query(query, {"from", "to"}, q)) return *bad;
    if (!ctx.history_store) return api_error(404, "history is not enabled (set 'history:' in the config)");
    if (!q.count("from")) return api_error(400, "from is required: " + std::string(kRefForms));
    try {
        SweepRow rows[2];
        const char* keys[2] = {"from", "to"};
        bool first[2] = {false, false};
        for (int i = 0; i < 2; ++i) {
            const std::string text = q.count(keys[i]) ? q[keys[i]] : "latest";
            auto ref = parse_sweep_ref(text, ctx.now_ms);
            if (!ref) return api_error(400, std::string(keys[i]) + " '" + text + "' is not " + kRefForms);
            rows[i] = resolve_sweep(*ctx.history_store, *ref, keys[i], &first[i]);
        }
        json j = history_diff_json(*ctx.history_store, rows[0], rows[1], ctx.plan.get());
        for (int i = 0; i < 2; ++i)
            if (first[i])
                j[keys[i]]["note"] = "no sweep at or before " + q[keys[i]] + ": from the history's first sweep";
        return ok(std::move(j));
    } catch (const ApiFailure& e) {
        return api_error(e.status, e.what());
    }
}

ApiResponse accept_response(const ApiRequest& req, const ApiContext& ctx) {
    if (!ctx.accept) return api_error(500, "accept is not available");
    json body = json::object();
    if (!req.body.empty()) {
        body = json::parse(req.body, nullptr, false);
        if (body.is_discarded() || !body.is_object())
            return api_error(400, "the body must be a JSON object: {} or {\"scope\": [\"leaf03\", ...], \"accept_kind\": [...], \"dry_run\": true}");
    }
    try {
        return ok(ctx.accept(body));
    } catch (const ApiFailure& e) {
        ApiResponse r = api_error(e.status, e.what());
        if (e.detail.is_object()) {
            json j = e.detail;
            j["error"] = e.what();
            r.body = json_text(j) + "\n";
        }
        return r;
    }
}

}  // namespace ibf
