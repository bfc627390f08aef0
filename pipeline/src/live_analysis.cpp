// The daemon's live fat-tree analysis: routing/ on the master's snapshot, plus the routing engine
// rule and the LFT checks that need a live SM.
#include "ibf/live_analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "ibf/analysis.h"
#include "ibf/route_check.h"
#include "ibf/lft.h"
#include "ibf/report.h"

namespace ibf {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string first_configured_engine(const std::string& configured) {
    // opensm.conf: "routing_engine ftree,minhop" (a comma-separated list; OpenSM also trims blanks).
    size_t b = configured.find_first_not_of(" \t,");
    if (b == std::string::npos) return "minhop";
    size_t e = configured.find_first_of(" \t,", b);
    return lower(configured.substr(b, e == std::string::npos ? std::string::npos : e - b));
}

std::optional<Finding> routing_fallback_finding(const Snapshot& s, const Fabric& f) {
    if (s.routing_engine.empty() || s.routing_engine_configured.empty()) return std::nullopt;
    const std::string want = first_configured_engine(s.routing_engine_configured);
    const std::string used = lower(s.routing_engine);
    if (used == want) return std::nullopt;
    Finding fd;
    fd.kind = FindingKind::routing_fallback;
    fd.severity = default_severity(fd.kind);
    // Endpoint a: the SM that routed (its node, found by the SM port GUID when it is in the fabric).
    fd.a.guid = s.self.port_guid;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports)
            if (p.valid && p.guid == s.self.port_guid && s.self.port_guid != 0) {
                fd.a = {n.name, n.guid, p.num};  // analyze_live gives it the NameBook's name
                break;
            }
    fd.expected = want;
    fd.actual = used;
    std::string why;
    if (want == "ftree")
        why = ": ftree found no fat-tree it could route (ERR AB0D 'not a fat-tree' in the OpenSM log), or the "
              "root_guid_file / cn_guid_file do not match the fabric; see `ibfabric analyze` and regenerate them "
              "with `ibfabric routing-files`";
    else if (want == "updn" || want == "dnup")
        why = ": check root_guid_file and that the fabric has the up/down structure the engine needs";
    else
        why = ": the configured engine failed on this fabric; see the OpenSM log";
    fd.message = "OpenSM fell back from " + want + " to " + used + why + " (configured: \"" + s.routing_engine_configured + "\")";
    return fd;
}

namespace {

// A switch's LFT loads as /api/v1/analysis shows them beside its bundles.
nlohmann::json lft_json(const LftBalance& b) {
    nlohmann::json loads = nlohmann::json::array();
    for (const PortLoad& pl : b.up_ports) loads.push_back({{"port", pl.port}, {"routes", pl.routes}});
    return {{"min_routes", b.min_routes}, {"max_routes", b.max_routes}, {"mean", std::round(b.mean * 100) / 100},
            {"imbalanced", b.imbalanced}, {"up_ports", std::move(loads)}};
}

// Whether `k` was made from tables of the same switches, in the same order, as `lfts`.
bool same_switches(const LftBalanceKeep& k, const std::vector<SwitchLft>& lfts) {
    if (k.tables.size() != lfts.size()) return false;
    for (size_t i = 0; i < lfts.size(); ++i)
        if (k.tables[i].switch_guid != lfts[i].switch_guid) return false;
    return true;
}

}  // namespace

namespace {

// analyze_live with `k` kept (LiveAnalysisKeep): reused when `last` (what it gave last), else made afresh.
LiveAnalysis analyze_kept(const Snapshot& s, const Fabric& f, const std::vector<std::string>& plan_names,
                          const std::vector<Link>& declared, bool follow_tables, LiveAnalysisKeep& k, const LiveAnalysis* last) {
    LiveAnalysis la;
    const bool reuse = last != nullptr;
    nlohmann::json fresh;  // not reused: the per-switch array, LFT loads added before it is shared
    if (reuse) {
        la.switches = last->switches;  // the fabric's, with the last sweep's loads (shared)
    } else {
        AnalyzeOptions ao;
        ao.preferred_names = plan_names;
        ao.declared = declared;
        k = LiveAnalysisKeep{};
        k.analysis = analyze(f, ao);
        k.summary = analysis_to_json(f, k.analysis, false);
        nlohmann::json per = analysis_to_json(f, k.analysis, true);
        fresh = std::move(per["switches"]);
    }
    const Analysis& a = k.analysis;
    la.findings = a.findings;
    la.tier_of = a.tier_of;
    la.names = a.names;

    nlohmann::json lft = nullptr;
    if (!s.lfts.empty()) {
        LftOptions lo;
        lo.engine = s.routing_engine;
        lo.configured = s.routing_engine_configured;
        const LftReport rep = lft_balance(f, a, s.lfts, lo, k.lft);
        la.lft_switches = static_cast<int>(s.lfts.size());
        la.lft_imbalanced = static_cast<int>(rep.findings.size());
        la.findings.insert(la.findings.end(), rep.findings.begin(), rep.findings.end());
        int max_spread = 0;
        for (const LftBalance& b : rep.switches) max_spread = std::max(max_spread, b.max_routes - b.min_routes);
        lft = {{"switches", la.lft_switches},
               {"switches_balanced", static_cast<int>(rep.switches.size()) - la.lft_imbalanced},
               {"switches_imbalanced", la.lft_imbalanced},
               {"max_uplink_spread", max_spread}};
        if (follow_tables) lft.update(switch_routes_json(lft_paths(f, s.lfts)));
        // The LFT loads next to each switch's bundles (by GUID; the last table of a switch wins).
        if (!reuse) {
            std::map<std::string, int> row_of_guid;
            for (size_t i = 0; i < fresh.size(); ++i) row_of_guid[fresh[i]["guid"].get<std::string>()] = static_cast<int>(i);
            k.row_of_table.assign(s.lfts.size(), -1);
            for (size_t i = 0; i < k.lft.tables.size(); ++i)
                if (const auto& b = k.lft.tables[i].balance)
                    if (auto it = row_of_guid.find(guid_hex(f.node(b->node).guid)); it != row_of_guid.end())
                        k.row_of_table[i] = it->second;
        }
        std::vector<int> last_table_of_row(reuse ? la.switches.size() : fresh.size(), -1);
        for (size_t i = 0; i < k.row_of_table.size(); ++i)
            if (k.row_of_table[i] >= 0) last_table_of_row[k.row_of_table[i]] = static_cast<int>(i);
        for (size_t i : k.lft.recounted)
            if (const int row = k.row_of_table[i]; row >= 0 && last_table_of_row[row] == static_cast<int>(i)) {
                if (!reuse) {
                    fresh[row]["lft"] = lft_json(*k.lft.tables[i].balance);
                    continue;
                }
                auto sw = std::make_shared<nlohmann::json>(*la.switches[row]);  // a new object for this switch alone
                (*sw)["lft"] = lft_json(*k.lft.tables[i].balance);
                la.switches[row] = std::move(sw);
            }
    }
    if (!reuse)
        for (nlohmann::json& sw : fresh) la.switches.push_back(std::make_shared<const nlohmann::json>(std::move(sw)));
    if (auto fb = routing_fallback_finding(s, f)) {
        la.routing_fallback = true;
        if (auto id = f.find(fb->a.guid); id && fb->a.guid != 0) fb->a.name = a.names.at(*id);
        la.findings.push_back(std::move(*fb));
    }
    // Same order as the analysis' own findings: by kind (stable keeps each source's name order).
    std::stable_sort(la.findings.begin(), la.findings.end(),
                     [](const Finding& x, const Finding& y) { return x.kind < y.kind; });

    la.summary_json = k.summary;
    la.summary_json["routing"] = {
        {"engine", s.routing_engine.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.routing_engine)},
        {"configured", s.routing_engine_configured.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.routing_engine_configured)},
        {"expected", s.routing_engine_configured.empty() ? nlohmann::json(nullptr)
                                                         : nlohmann::json(first_configured_engine(s.routing_engine_configured))},
        {"fallback", la.routing_fallback},
        {"lft", std::move(lft)}};
    const nlohmann::json fj = findings_to_json(la.findings);
    la.summary_json["summary"] = fj.at("summary");
    la.summary_json["findings"] = fj.at("findings");
    return la;
}

}  // namespace

LiveAnalysis analyze_live(const Snapshot& s, const Fabric& f, const std::vector<std::string>& plan_names,
                          const std::vector<Link>& declared, bool follow_tables) {
    LiveAnalysisKeep k;
    return analyze_kept(s, f, plan_names, declared, follow_tables, k, nullptr);
}

std::shared_ptr<const LiveAnalysis> analyze_live(const Snapshot& s, const Fabric& f, const std::vector<std::string>& plan_names,
                                                 const std::vector<Link>& declared, bool follow_tables, LiveAnalysisKeep& keep) {
    std::shared_ptr<const LiveAnalysis> last;  // null until this call has finished: nothing half made in use
    last.swap(keep.last);
    if (!same_switches(keep.lft, s.lfts)) last = nullptr;
    auto la = std::make_shared<const LiveAnalysis>(analyze_kept(s, f, plan_names, declared, follow_tables, keep, last.get()));
    keep.last = la;
    return la;
}

}  // namespace ibf
