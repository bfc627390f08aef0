#include "ibf/report.h"

#include <algorithm>
#include <array>

#include "ibf/error.h"
#include "ibf/text.h"
#include "ibf/natural.h"

namespace ibf {
namespace {

using nlohmann::json;

json endpoint_to_json(const Endpoint& e) { return {{"name", e.name}, {"guid", guid_hex(e.guid)}, {"port", e.port}}; }

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw InputError("findings JSON", 0, 0, where + ": " + what);
}

const json& member(const json& j, const char* key, const std::string& where) {
    auto it = j.find(key);
    if (it == j.end()) bad(where, std::string("missing \"") + key + "\"");
    return *it;
}

std::string string_member(const json& j, const char* key, const std::string& where, bool required = true) {
    auto it = j.find(key);
    if (it == j.end()) {
        if (required) bad(where, std::string("missing \"") + key + "\"");
        return {};
    }
    if (!it->is_string()) bad(where + "." + key, "expected a string");
    return it->get<std::string>();
}

Endpoint endpoint_from_json(const json& j, const std::string& where) {
    if (!j.is_object()) bad(where, "expected an object {\"name\", \"guid\", \"port\"}");
    Endpoint e;
    e.name = string_member(j, "name", where);
    std::string g = string_member(j, "guid", where);
    auto guid = parse_guid(g);
    if (!guid) bad(where + ".guid", "\"" + g + "\" is not a GUID (\"0x\" and up to 16 hex digits)");
    e.guid = *guid;
    const json& p = member(j, "port", where);
    if (!p.is_number_integer() || p.get<long long>() < 0 || p.get<long long>() > 255)
        bad(where + ".port", "expected an integer port number 0..255");
    e.port = p.get<int>();
    return e;
}

json link_to_json(const FindingLink& l) {
    return {{"a", endpoint_to_json(l.a)},
            {"b", endpoint_to_json(l.b)},
            {"planned", endpoint_to_json(l.planned)},
            {"label", l.label},
            {"rate", l.rate}};
}

FindingLink link_from_json(const json& j, const std::string& where) {
    if (!j.is_object()) bad(where, "expected an object {\"a\", \"b\", \"planned\", \"label\", \"rate\"}");
    FindingLink l;
    l.a = endpoint_from_json(member(j, "a", where), where + ".a");
    l.b = endpoint_from_json(member(j, "b", where), where + ".b");
    if (j.contains("planned")) l.planned = endpoint_from_json(j["planned"], where + ".planned");
    l.label = string_member(j, "label", where, false);
    l.rate = string_member(j, "rate", where, false);
    return l;
}

std::vector<FindingLink> links_from_json(const json& j, const std::string& where) {
    auto it = j.find("links");
    if (it == j.end()) return {};
    if (!it->is_array()) bad(where + ".links", "expected an array");
    std::vector<FindingLink> out;
    for (size_t i = 0; i < it->size(); ++i)
        out.push_back(link_from_json((*it)[i], where + ".links[" + std::to_string(i) + "]"));
    return out;
}

std::string plural(size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

json finding_to_json(const Finding& f) {
    json links = json::array();
    for (const FindingLink& l : f.links) links.push_back(link_to_json(l));
    json members = json::array();
    for (const Finding& m : f.members) members.push_back(finding_to_json(m));
    return {{"kind", std::string(to_string(f.kind))},
            {"severity", std::string(to_string(f.severity))},
            {"a", endpoint_to_json(f.a)},
            {"b", endpoint_to_json(f.b)},
            {"expected", f.expected},
            {"actual", f.actual},
            {"label", f.label},
            {"message", f.message},
            {"links", std::move(links)},
            {"members", std::move(members)}};
}

namespace {
// A finding object at `where`; a group's members may not be groups themselves (bounded depth).
Finding finding_from_json_at(const json& j, const std::string& where, bool member_of_group) {
    if (!j.is_object()) bad(where, "expected an object");
    Finding f;
    std::string kind = string_member(j, "kind", where);
    auto k = parse_finding_kind(kind);
    if (!k) bad(where + ".kind", "unknown kind \"" + kind + "\"");
    f.kind = *k;
    std::string sev = string_member(j, "severity", where, false);
    if (sev.empty()) {
        f.severity = default_severity(f.kind);
    } else if (auto s = parse_severity(sev)) {
        f.severity = *s;
    } else {
        bad(where + ".severity", "\"" + sev + "\" is not info, warning, error or critical");
    }
    f.a = endpoint_from_json(member(j, "a", where), where + ".a");
    f.b = endpoint_from_json(member(j, "b", where), where + ".b");
    f.expected = string_member(j, "expected", where, false);
    f.actual = string_member(j, "actual", where, false);
    f.label = string_member(j, "label", where, false);
    f.message = string_member(j, "message", where, false);
    f.links = links_from_json(j, where);
    if (auto it = j.find("members"); it != j.end()) {
        if (!it->is_array()) bad(where + ".members", "expected an array");
        if (member_of_group && !it->empty()) bad(where + ".members", "a group's member cannot be a group");
        for (size_t i = 0; i < it->size(); ++i)
            f.members.push_back(finding_from_json_at((*it)[i], where + ".members[" + std::to_string(i) + "]", true));
    }
    return f;
}
}  // namespace

Finding finding_from_json(const json& j) { return finding_from_json_at(j, "finding", false); }

json findings_to_json(const std::vector<Finding>& fs) {
    json summary = json::object();
    for (const Finding& f : fs) {
        std::string k(to_string(f.kind));
        summary[k] = summary.value(k, 0) + 1;
    }
    json arr = json::array();
    for (const Finding& f : fs) arr.push_back(finding_to_json(f));
    return {{"summary", summary}, {"findings", arr}};
}

std::vector<Finding> findings_from_json(const json& j) {
    if (!j.is_object()) bad("top level", "expected an object {\"summary\", \"findings\"}");
    const json& arr = member(j, "findings", "top level");
    if (!arr.is_array()) bad("findings", "expected an array");
    std::vector<Finding> out;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i) {
        try {
            out.push_back(finding_from_json(arr[i]));
        } catch (const InputError& e) {
            bad("findings[" + std::to_string(i) + "]", e.message());
        }
    }
    return out;
}

std::string render_text(const std::vector<Finding>& in, bool color) {
    if (in.empty()) return "no findings\n";
    std::vector<const Finding*> fs;
    fs.reserve(in.size());
    for (const Finding& f : in) fs.push_back(&f);
    std::stable_sort(fs.begin(), fs.end(), [](const Finding* x, const Finding* y) {
        if (x->kind != y->kind) return report_rank(x->kind) < report_rank(y->kind);
        return natural_compare(x->a.name, y->a.name) < 0;
    });
    const char* bold = color ? "\033[1m" : "";
    const char* reset = color ? "\033[0m" : "";
    auto sev_color = [color](Severity s) -> const char* {
        if (!color) return "";
        switch (s) {
            case Severity::critical: return "\033[1;31m";
            case Severity::error: return "\033[31m";
            case Severity::warning: return "\033[33m";
            default: return "\033[36m";
        }
    };
    std::array<size_t, kFindingKindCount> counts{};
    for (const Finding* f : fs)
        if (static_cast<size_t>(f->kind) < counts.size()) ++counts[static_cast<size_t>(f->kind)];

    std::string out;
    for (size_t i = 0; i < fs.size();) {
        FindingKind kind = fs[i]->kind;
        size_t n = static_cast<size_t>(kind) < counts.size() ? counts[static_cast<size_t>(kind)] : 0;
        out += std::string(bold) + std::string(to_string(kind)) + " (" + std::to_string(n) + ")" + reset + "\n";
        while (i < fs.size() && fs[i]->kind == kind) {
            const std::string& group = fs[i]->a.name;
            out += "  " + (group.empty() ? std::string("(unnamed)") : terminal_safe(group)) + "\n";
            while (i < fs.size() && fs[i]->kind == kind && fs[i]->a.name == group) {
                const Finding& f = *fs[i];
                std::string sev(to_string(f.severity));
                sev.resize(7, ' ');
                out += "    " + std::string(sev_color(f.severity)) + sev + reset + " " + terminal_safe(f.message) + "\n";
                ++i;
            }
        }
    }
    out += std::string(bold) + plural(fs.size(), "finding") + ":";
    bool first = true;
    for (size_t k = 0; k < counts.size(); ++k) {
        if (!counts[k]) continue;
        out += (first ? " " : ", ") + std::to_string(counts[k]) + " " +
               std::string(to_string(static_cast<FindingKind>(k)));
        first = false;
    }
    out += std::string(reset) + "\n";
    return out;
}

std::string render_unchecked(const std::vector<std::string>& fields) {
    std::string out;
    for (const std::string& f : fields) {
        const bool mtu = f == "mtu";
        out += "notice  " + std::string(mtu ? "MTU" : f == "rate" ? "link rate" : f) +
               " not checked: the plan gives it, the fabric's input carries none" +
               (mtu ? " (ibnetdiscover, iblinkinfo and .net dumps carry no MTU; ibfabricd checks it live)" : "") + "\n";
    }
    return out;
}

std::string json_text(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ibf
