// Waiver files (parse, match, apply) and report filters (--min-severity, --kind): checks/waivers.h.
#include "ibf/waivers.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <charconv>
#include <initializer_list>
#include <map>
#include <string_view>
#include <vector>

#include "ibf/absent_group.h"
#include "ibf/error.h"
#include "ibf/hostlist.h"
#include "ibf/report.h"
#include "ibf/suggest.h"
#include "ibf/text.h"
#include "ibf/yaml_load.h"

namespace ibf {
namespace {

std::string all_kinds() {
    std::string s;
    for (int k = 0; k < kFindingKindCount; ++k) s += (k ? ", " : "") + std::string(to_string(static_cast<FindingKind>(k)));
    return s;
}

class WaiverParser {
public:
    WaiverParser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

    WaiverSet run() {
        WaiverSet out;
        out.source = file_;
        const YAML::Node root = load_yaml_bounded(text_, file_, "waiver file", {.max_nodes = kMaxWaiverYamlNodes});
        if (root.IsNull()) return out;  // an empty file waives nothing
        if (!root.IsMap() || (!root["waivers"] && !root["maintenance"]))
            fail(root, "expected a map with `waivers:` and/or `maintenance:` (lists, see docs/findings.md)");
        no_duplicate_keys(root, "the waiver file");
        for (const auto& kv : root) {
            const std::string key = scalar(kv.first, "key");
            if (key != "waivers" && key != "version" && key != "maintenance")
                fail(kv.first, unknown_key("", key, {"waivers", "maintenance", "version"}));
        }
        if (const YAML::Node list = root["waivers"]; list && !list.IsNull()) {
            if (!list.IsSequence()) fail(list, "expected a list of waivers under `waivers:`");
            for (const YAML::Node& item : list) out.waivers.push_back(waiver(item));
        }
        if (const YAML::Node list = root["maintenance"]; list && !list.IsNull()) {
            if (!list.IsSequence()) fail(list, "expected a list of hosts in maintenance under `maintenance:`");
            size_t hosts = 0;
            for (const YAML::Node& item : list) {
                if (out.maintenance.size() == kMaxMaintenanceEntries)
                    fail(item, "more than " + std::to_string(kMaxMaintenanceEntries) + " maintenance entries");
                out.maintenance.push_back(maintenance(item));
                hosts += out.maintenance.back().names.size();
                if (hosts > kMaxMaintenanceHosts)
                    fail(item, "more than " + std::to_string(kMaxMaintenanceHosts) + " hosts in maintenance");
            }
        }
        return out;
    }

    // A list item that must be a map of `keys` only (`what`: "a waiver"): its file:line.
    std::string item(const YAML::Node& n, const std::string& what, std::initializer_list<const char*> keys,
                     const std::string& shape) const {
        if (!n.IsMap()) fail(n, "expected " + shape);
        no_duplicate_keys(n, what);
        const std::vector<std::string> names(keys.begin(), keys.end());
        for (const auto& kv : n) {
            const std::string key = scalar(kv.first, "key");
            if (std::find(names.begin(), names.end(), key) == names.end()) fail(kv.first, unknown_key("", key, names, what));
        }
        return file_ + ":" + std::to_string(n.Mark().line + 1);
    }

    Maintenance maintenance(const YAML::Node& n) const {
        Maintenance m;
        m.where = item(n, "a maintenance entry", {"hosts", "until", "reason"},
                       "a maintenance entry (a map with hosts:, until: and reason:)");
        for (const char* k : {"hosts", "until", "reason"})
            if (!n[k]) fail(n, std::string("a maintenance entry needs ") + k + ":");
        m.hosts = scalar(n["hosts"], "hosts");
        try {
            m.names = hostlist_expand(m.hosts, "hosts");
        } catch (const InputError& e) {
            fail(n["hosts"], "bad hostlist '" + printable(m.hosts) + "': " + e.what());
        }
        if (m.names.empty()) fail(n["hosts"], "a maintenance entry needs at least one host");
        if (m.names.size() > kMaxMaintenanceHosts)
            fail(n["hosts"], "more than " + std::to_string(kMaxMaintenanceHosts) + " hosts in maintenance");
        std::sort(m.names.begin(), m.names.end());
        m.names.erase(std::unique(m.names.begin(), m.names.end()), m.names.end());
        m.until = scalar(n["until"], "until");
        auto ms = end_of_day_unix_ms(m.until);
        if (!ms) fail(n["until"], "bad date '" + printable(m.until) + "' for 'until': expected YYYY-MM-DD");
        m.until_unix_ms = *ms;
        m.reason = scalar(n["reason"], "reason");
        if (m.reason.empty()) fail(n["reason"], "a maintenance entry needs a reason: (what is being done, for the next administrator)");
        return m;
    }

private:
    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
        const YAML::Mark m = n.Mark();
        throw InputError(file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, msg);
    }

    // Plans refuse duplicate keys too: with yaml-cpp the first would silently win (an `expires:`
    // written twice took the earlier date).
    void no_duplicate_keys(const YAML::Node& map, const std::string& what) const {
        std::map<std::string, YAML::Mark> seen;
        for (const auto& kv : map) {
            if (!kv.first.IsScalar()) continue;  // reported as "expected a string" by the caller
            auto [at, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
            if (!fresh)
                fail(kv.first, "duplicate key '" + printable(kv.first.Scalar()) + "' in " + what + " (first at " +
                                   file_ + ":" + std::to_string(at->second.line + 1) + ")");
        }
    }

    std::string scalar(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, "expected a string for '" + what + "'");
        return n.Scalar();
    }

    std::vector<std::string> strings(const YAML::Node& n, const std::string& what) const {
        std::vector<std::string> out;
        if (n.IsScalar()) return {n.Scalar()};
        if (!n.IsSequence()) fail(n, "expected a string or a list of strings for '" + what + "'");
        for (const YAML::Node& x : n) out.push_back(scalar(x, what));
        return out;
    }

    Waiver waiver(const YAML::Node& n) const {
        Waiver w;
        w.where = item(n, "a waiver", {"kind", "ends", "labels", "name", "reason", "expires"},
                       "a waiver (a map with reason: and kind:, ends:, labels: or name:)");
        if (n["kind"])
            for (const std::string& k : strings(n["kind"], "kind")) {
                auto fk = parse_finding_kind(k);
                if (!fk) fail(n["kind"], "unknown finding kind '" + printable(k) + "' (expected one of: " + all_kinds() + ")");
                w.kinds.push_back(*fk);
            }
        if (n["ends"]) w.ends = strings(n["ends"], "ends");
        if (w.ends.size() > 2) fail(n["ends"], "a finding has two ends; 'ends' lists at most two");
        if (n["labels"]) w.labels = strings(n["labels"], "labels");
        if (n["name"]) w.name = scalar(n["name"], "name");
        if (n["reason"]) w.reason = scalar(n["reason"], "reason");
        if (w.reason.empty()) fail(n, "a waiver needs a reason: (why this is intended, for the next administrator)");
        if (w.kinds.empty() && w.ends.empty() && w.labels.empty() && w.name.empty())
            fail(n, "a waiver needs at least one of kind, ends, labels, name (it would waive everything)");
        if (n["expires"]) {
            w.expires = scalar(n["expires"], "expires");
            auto ms = end_of_day_unix_ms(w.expires);
            if (!ms) fail(n["expires"], "bad date '" + printable(w.expires) + "' for 'expires': expected YYYY-MM-DD");
            w.expires_unix_ms = *ms;
        }
        return w;
    }

    std::string_view text_;
    std::string file_;
};

// Days since 1970-01-01 of a proleptic Gregorian date (<chrono> civil calendar; no clock is read).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    const std::chrono::year_month_day ymd{std::chrono::year{static_cast<int>(y)}, std::chrono::month{m}, std::chrono::day{d}};
    return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

// "leaf01/3" or "leaf01" or a GUID, against one endpoint.
bool end_matches(const std::string& spec, const Endpoint& e) {
    std::string node = spec;
    int port = -1;
    if (auto slash = spec.rfind('/'); slash != std::string::npos) {
        int p = 0;
        auto [ptr, ec] = std::from_chars(spec.data() + slash + 1, spec.data() + spec.size(), p);
        if (ec == std::errc() && ptr == spec.data() + spec.size()) node = spec.substr(0, slash), port = p;
    }
    if (port >= 0 && e.port != port) return false;
    if (node == e.name && !e.name.empty()) return true;
    auto g = node.rfind("0x", 0) == 0 ? parse_guid(node) : std::nullopt;
    return g && e.guid != 0 && *g == e.guid;
}

bool glob(const std::string& pattern, const std::string& s) {
    return !s.empty() && ::fnmatch(pattern.c_str(), s.c_str(), 0) == 0;
}

// A waiver_expired finding about the entry at `where` (file:line), valid through `until`.
Finding lapsed(const std::string& where, const std::string& until, std::string message) {
    Finding f;
    f.kind = FindingKind::waiver_expired;
    f.severity = default_severity(f.kind);
    f.a.name = where;
    f.expected = "valid through " + until;
    f.actual = "expired";
    f.message = std::move(message);
    return f;
}

Finding expired_finding(const Waiver& w) {
    return lapsed(w.where, w.expires, "waiver at " + w.where + " (" + w.reason + ") expired after " + w.expires +
                                          "; what it waived counts again: fix it, or renew the waiver's expires: date");
}

Finding ended_finding(const Maintenance& m) {
    return lapsed(m.where, m.until,
                  "maintenance of " + m.hosts + " at " + m.where + " (" + m.reason + ") ended after " + m.until +
                "; its hosts count again: ibfabric maintenance remove " + m.hosts + ", or add it again with a later --until");
}

bool in_names(const std::vector<std::string>& sorted, const std::string& name) {
    return !name.empty() && std::binary_search(sorted.begin(), sorted.end(), name);
}

// A YAML double-quoted scalar of `s` (control characters escaped).
std::string yaml_quoted(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// A line that starts a top-level key of a block map (not indented, not a comment, not a list item).
bool top_level_key(std::string_view line) {
    return !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != '-' && line[0] != '\r';
}

}  // namespace

bool maintenance_matches(const Maintenance& m, const Finding& f) {
    if (f.kind != FindingKind::host_absent && f.kind != FindingKind::missing_link && f.kind != FindingKind::link_flapping)
        return false;
    return in_names(m.names, f.a.name) || in_names(m.names, f.b.name);
}

std::string with_maintenance(std::string_view text, const std::vector<Maintenance>& entries) {
    std::string section = entries.empty() ? "maintenance: []\n" : "maintenance:\n";
    for (const Maintenance& m : entries)
        section += "  - hosts: " + yaml_quoted(m.hosts) + "\n    until: " + m.until + "\n    reason: " + yaml_quoted(m.reason) + "\n";
    // The lines of `text`, each with its newline.
    std::vector<std::string_view> lines;
    for (size_t at = 0; at < text.size();) {
        size_t nl = text.find('\n', at);
        size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
        lines.push_back(text.substr(at, end - at));
        at = end;
    }
    size_t begin = lines.size();
    for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i].rfind("maintenance:", 0) == 0) begin = i;
    std::string out;
    if (begin == lines.size()) {
        out = std::string(text);
        if (!out.empty() && out.back() != '\n') out += '\n';
        return out + section;
    }
    size_t end = begin + 1;
    while (end < lines.size() && !top_level_key(lines[end])) ++end;
    // Comment and blank lines just before the next key belong to what follows.
    while (end > begin + 1 && end < lines.size()) {
        std::string_view l = lines[end - 1];
        if (!(l.empty() || l[0] == '#' || l == "\n" || l == "\r\n")) break;
        --end;
    }
    for (size_t i = 0; i < begin; ++i) out += lines[i];
    out += section;
    for (size_t i = end; i < lines.size(); ++i) out += lines[i];
    return out;
}

nlohmann::json maintenance_to_json(const Maintenance& m, int64_t now_unix_ms) {
    return {{"hosts", m.hosts}, {"count", m.names.size()}, {"until", m.until}, {"reason", m.reason},
            {"where", m.where}, {"ended", now_unix_ms >= m.until_unix_ms}};
}

WaiverSet parse_waivers(std::string_view text, const std::string& file) { return WaiverParser(text, file).run(); }

std::optional<int64_t> end_of_day_unix_ms(std::string_view s) {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
    int y = 0, m = 0, d = 0;
    auto num = [&](size_t at, size_t len, int& out) {
        auto [p, ec] = std::from_chars(s.data() + at, s.data() + at + len, out);
        return ec == std::errc() && p == s.data() + at + len;
    };
    if (!num(0, 4, y) || !num(5, 2, m) || !num(8, 2, d)) return std::nullopt;
    static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > kDays[m - 1]) return std::nullopt;
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m == 2 && d == 29 && !leap) return std::nullopt;
    return (days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d)) + 1) * 86'400'000;
}

bool waiver_matches(const Waiver& w, const Finding& f) {
    if (!w.kinds.empty() && std::find(w.kinds.begin(), w.kinds.end(), f.kind) == w.kinds.end()) return false;
    if (!w.labels.empty() && std::find(w.labels.begin(), w.labels.end(), f.label) == w.labels.end()) return false;
    if (!w.name.empty() && !glob(w.name, f.a.name) && !glob(w.name, f.b.name)) return false;
    if (w.ends.size() == 1) return end_matches(w.ends[0], f.a) || end_matches(w.ends[0], f.b);
    if (w.ends.size() == 2)
        return (end_matches(w.ends[0], f.a) && end_matches(w.ends[1], f.b)) ||
               (end_matches(w.ends[0], f.b) && end_matches(w.ends[1], f.a));
    return true;
}

bool waiver_expired(const Waiver& w, int64_t now_unix_ms) {
    return w.expires_unix_ms != 0 && now_unix_ms >= w.expires_unix_ms;
}

Waived apply_waivers(std::vector<Finding> grouped, const WaiverSet& ws, int64_t now_unix_ms) {
    Waived r;
    if (ws.empty()) {
        r.active = std::move(grouped);
        return r;
    }
    // A group of absent hosts is matched host by host (one may be in maintenance, the others not)
    // and what stays active is grouped again.
    std::vector<Finding> fs;
    for (Finding& g : grouped)
        for (Finding& f : ungroup_absent_hosts(std::move(g))) fs.push_back(std::move(f));
    for (Finding& f : fs) {
        const Maintenance* kept = nullptr;
        for (const Maintenance& m : ws.maintenance)
            if (now_unix_ms < m.until_unix_ms && maintenance_matches(m, f)) {
                kept = &m;
                break;
            }
        if (kept) {
            r.waived.push_back({std::move(f), kept->reason, kept->where, kept->until, true});
            continue;
        }
        const Waiver* by = nullptr;
        for (const Waiver& w : ws.waivers)
            if (!waiver_expired(w, now_unix_ms) && waiver_matches(w, f)) {
                by = &w;
                break;
            }
        if (by)
            r.waived.push_back({std::move(f), by->reason, by->where, by->expires});
        else
            r.active.push_back(std::move(f));
    }
    for (const Waiver& w : ws.waivers)
        if (waiver_expired(w, now_unix_ms)) r.active.push_back(expired_finding(w));
    for (const Maintenance& m : ws.maintenance)
        if (now_unix_ms >= m.until_unix_ms) r.active.push_back(ended_finding(m));
    r.active = group_absent_hosts(std::move(r.active));
    return r;
}

bool FindingFilter::passes(const Finding& f) const {
    if (f.severity < min_severity) return false;
    return kinds.empty() || std::find(kinds.begin(), kinds.end(), f.kind) != kinds.end();
}

FindingFilter parse_finding_filter(std::string_view min_severity, std::string_view kinds) {
    FindingFilter flt;
    if (auto s = parse_severity(min_severity)) flt.min_severity = *s;
    else if (!min_severity.empty())
        throw InputError("--min-severity", 0, 0, "'" + printable(min_severity) + "' is not info, warning, error or critical");
    size_t at = 0;
    while (at < kinds.size()) {
        size_t comma = kinds.find(',', at);
        std::string_view k = kinds.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
        at = comma == std::string_view::npos ? kinds.size() : comma + 1;
        if (k.empty()) continue;
        auto fk = parse_finding_kind(k);
        if (!fk) throw InputError("--kind", 0, 0, "unknown finding kind '" + printable(k) + "' (expected one of: " + all_kinds() + ")");
        flt.kinds.push_back(*fk);
    }
    return flt;
}

void filter_findings(Waived& r, const FindingFilter& flt) {
    std::erase_if(r.active, [&](const Finding& f) { return !flt.passes(f); });
    std::erase_if(r.waived, [&](const WaivedFinding& w) { return !flt.passes(w.finding); });
}

nlohmann::json waived_to_json(const std::vector<WaivedFinding>& ws) {
    nlohmann::json arr = nlohmann::json::array();
    for (const WaivedFinding& w : ws) {
        nlohmann::json j = finding_to_json(w.finding);
        j["waiver"] = {{"reason", w.reason}, {"where", w.where},
                       {"expires", w.expires.empty() ? nlohmann::json(nullptr) : nlohmann::json(w.expires)},
                       {"maintenance", w.maintenance}};
        arr.push_back(std::move(j));
    }
    return arr;
}

namespace {

// One section: `title` (N), then per waiver or maintenance entry (in the order they first apply)
// its reason (file:line) and findings.
std::string waived_section(const std::vector<const WaivedFinding*>& ws, const std::string& title, bool color) {
    if (ws.empty()) return "";
    const char* dim = color ? "\033[2m" : "";
    const char* reset = color ? "\033[0m" : "";
    std::vector<std::string> order;
    std::map<std::string, std::vector<const WaivedFinding*>> by;
    for (const WaivedFinding* w : ws) {
        if (!by.count(w->where)) order.push_back(w->where);
        by[w->where].push_back(w);
    }
    std::string out = std::string(dim) + title + " (" + std::to_string(ws.size()) + ")" + reset + "\n";
    for (const std::string& where : order) {
        const WaivedFinding& first = *by[where].front();
        out += "  " + terminal_safe(first.reason) + " (" + where + (first.expires.empty() ? "" : ", until " + first.expires) + ")\n";
        for (const WaivedFinding* w : by[where]) {
            std::string sev(to_string(w->finding.severity));
            sev.resize(7, ' ');
            out += std::string("    ") + dim + sev + " " + std::string(to_string(w->finding.kind)) + ": " +
                   terminal_safe(w->finding.message) + reset + "\n";
        }
    }
    return out;
}

}  // namespace

std::string render_waived_text(const std::vector<WaivedFinding>& ws, bool color) {
    std::vector<const WaivedFinding*> kept, waived;
    for (const WaivedFinding& w : ws) (w.maintenance ? kept : waived).push_back(&w);
    return waived_section(kept, "in maintenance", color) + waived_section(waived, "waived", color);
}

}  // namespace ibf
