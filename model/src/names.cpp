// NameBook: the one display name of every node (rule in names.h).
#include "ibf/names.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace ibf {
namespace {

// "MF0;dir1:CS7500/L12/U1" -> "dir1/L12/U1" (a director's line or spine card), else "".
std::string chassis_name(const Node& node) {
    const std::string& d = node.description;
    if (node.type != NodeType::Switch || node.name.empty()) return {};
    auto colon = d.find(':');
    auto slash = colon == std::string::npos ? std::string::npos : d.find('/', colon);
    if (slash == std::string::npos || slash + 2 >= d.size()) return {};
    const char role = d[slash + 1];
    if ((role != 'L' && role != 'S') || !std::isdigit(static_cast<unsigned char>(d[slash + 2]))) return {};
    std::string c = node.name + d.substr(slash);
    while (!c.empty() && std::isspace(static_cast<unsigned char>(c.back()))) c.pop_back();
    return c;
}

// "Voltaire 4036 # hoibp0013" -> "hoibp0013": the name a Voltaire/Grid Director switch was given
// (after " # "), else "".
std::string hash_name(const Node& node) {
    const std::string& d = node.description;
    auto h = d.find(" # ");
    if (node.type != NodeType::Switch || h == std::string::npos) return {};
    std::string n = d.substr(h + 3);
    while (!n.empty() && std::isspace(static_cast<unsigned char>(n.back()))) n.pop_back();
    while (!n.empty() && std::isspace(static_cast<unsigned char>(n.front()))) n.erase(0, 1);
    for (char c : n)
        if (std::isspace(static_cast<unsigned char>(c)) || c == '#' || c == '/') return {};
    return n;
}

// "gpu01 mlx5_1" -> "gpu01:mlx5_1" for a CA, else "".
std::string adapter_name(const Node& node) {
    std::string hca = derive_hca(node.type, node.description);
    if (hca.empty() || node.name.empty()) return {};
    return node.name + ":" + hca;
}

// A name, not a description: no blanks, no '#' ("SwitchIB Mellanox Technologies" and
// "Voltaire 4036 # 4036-369C" are what an unmanaged switch says about itself, not its name).
bool plain(const std::string& s) {
    for (char c : s)
        if (std::isspace(static_cast<unsigned char>(c)) || c == '#') return false;
    return !s.empty();
}

std::string kind_word(const Node& node, int tier) {
    switch (node.type) {
        case NodeType::Switch: return tier > 0 ? tier_word(tier) : std::string("switch");
        case NodeType::CA: return is_aggregation_node(node) ? "sharp" : "host";
        case NodeType::Router: return "router";
        default: return "node";
    }
}

// A preferred name that only echoes the node's own name (or its "name:hca"), where rule 2 would not take that name (a
// description such as "SwitchIB Mellanox Technologies", or a name several nodes share, such as a
// director's ASICs all called "dir1"), is no preference: rules 3 and 4 name the node as they do
// without a plan, so a plan made from a dump names every node as `analyze` does.
std::vector<std::string> drop_echoed_names(const Fabric& f, const std::vector<std::string>& preferred) {
    std::unordered_map<std::string, int> count;
    for (const std::string& p : preferred)
        if (!p.empty()) ++count[p];
    std::vector<std::string> out(preferred.begin(), preferred.begin() + std::min(preferred.size(), f.size()));
    for (NodeId i = 0; i < out.size(); ++i)
        if (!out[i].empty() && (out[i] == f.node(i).name || out[i] == adapter_name(f.node(i))) &&
            (!plain(out[i]) || count[out[i]] > 1))
            out[i].clear();
    return out;
}

}  // namespace

bool is_aggregation_node(const Node& n) {
    static constexpr std::string_view kWhat = "aggregation node";
    if (n.type != NodeType::CA || n.description.size() < kWhat.size()) return false;
    for (size_t i = 0; i + kWhat.size() <= n.description.size(); ++i) {
        size_t k = 0;
        while (k < kWhat.size() && std::tolower(static_cast<unsigned char>(n.description[i + k])) == kWhat[k]) ++k;
        if (k == kWhat.size()) return true;
    }
    return false;
}

bool plan_name_ok(std::string_view name) {
    if (name.empty() || name.find(':') != std::string_view::npos) return false;
    const size_t slash = name.rfind('/');
    if (slash == std::string_view::npos) return true;
    if (name.front() == '/' || name.find("//") != std::string_view::npos || slash + 1 == name.size()) return false;
    return name.substr(slash + 1).find_first_not_of("0123456789") != std::string_view::npos;
}

std::string tier_word(int level) {
    switch (level) {
        case 0: return "";
        case 1: return "leaf";
        case 2: return "spine";
        case 3: return "core";
        default: return "tier" + std::to_string(level);
    }
}

std::string short_guid(Guid g, int digits) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(g));
    if (digits < 1) digits = 1;
    if (digits > 16) digits = 16;
    return std::string(buf + 16 - digits);
}

NameBook::NameBook(const Fabric& f, const std::vector<int>& tier_of, const std::vector<std::string>& preferred) {
    const size_t n = f.size();
    names_.assign(n, std::string());
    const std::vector<std::string> own_pref = drop_echoed_names(f, preferred);
    auto pref = [&](NodeId i) -> const std::string& {
        static const std::string kNone;
        return i < own_pref.size() ? own_pref[i] : kNone;
    };
    // 1 and 2: the plan's name, else the node's own; a node's own name that another node's plan name
    // takes counts as shared.
    std::unordered_map<std::string, int> pref_count, own_count;
    for (NodeId i = 0; i < n; ++i) {
        if (!pref(i).empty()) ++pref_count[pref(i)];
        else if (plain(f.node(i).name) && !is_aggregation_node(f.node(i))) ++own_count[f.node(i).name];
    }
    std::unordered_set<std::string> taken;
    std::vector<NodeId> rest;
    for (NodeId i = 0; i < n; ++i) {
        const Node& node = f.node(i);
        if (!pref(i).empty()) {
            names_[i] = pref_count[pref(i)] == 1 ? pref(i) : pref(i) + "@" + short_guid(node.guid);
        } else if (plain(node.name) && !is_aggregation_node(node) && own_count[node.name] == 1 &&
                   !pref_count.count(node.name)) {
            names_[i] = node.name;
        } else {
            rest.push_back(i);
            continue;
        }
        taken.insert(names_[i]);
    }
    // 3: a unique name from the description (line cards, host adapters).
    std::unordered_map<std::string, int> desc_count;
    std::vector<std::string> desc(n);
    for (NodeId i : rest) {
        const Node& node = f.node(i);
        if (is_aggregation_node(node)) continue;  // rule 4: "sharp-b208"
        if (node.type != NodeType::Switch) desc[i] = adapter_name(node);
        else if (desc[i] = chassis_name(node); desc[i].empty()) desc[i] = hash_name(node);
        if (!desc[i].empty()) ++desc_count[desc[i]];
    }
    std::unordered_map<std::string, int> short_count;
    std::vector<std::string> synth(n);
    for (NodeId i : rest) {
        if (!desc[i].empty() && desc_count[desc[i]] == 1 && !taken.count(desc[i])) {
            names_[i] = desc[i];
            taken.insert(names_[i]);
            continue;
        }
        synth[i] = kind_word(f.node(i), i < tier_of.size() ? tier_of[i] : 0) + "-" + short_guid(f.node(i).guid);
        ++short_count[synth[i]];
    }
    // 4: "<tier>-<4 hex>", longer where that is shared.
    for (NodeId i : rest) {
        if (!names_[i].empty()) continue;
        std::string s = synth[i];
        if (short_count[s] > 1 || taken.count(s))
            s = kind_word(f.node(i), i < tier_of.size() ? tier_of[i] : 0) + "-" + short_guid(f.node(i).guid, 8);
        if (taken.count(s)) s = guid_hex(f.node(i).guid);
        names_[i] = s;
        taken.insert(s);
    }
}

}  // namespace ibf
