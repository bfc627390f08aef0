// Accepting the fabric into a YAML plan by editing its text (ibf/plan_accept.h).
//
// The plan is read twice: by parse_plan_yaml (what it means: the planned links and where each was
// declared) and by yaml-cpp as a tree (where each section and entry is: marks give lines). An edit
// replaces whole lines: an entry's lines (the line of its '-' or key and every deeper-indented line
// after it), or inserts new lines after a section's last entry. Everything else is copied through.
#include "ibf/plan_accept.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "ibf/error.h"
#include "ibf/plan_yaml.h"
#include "ibf/rate.h"
#include "ibf/report.h"
#include "ibf/yaml_load.h"

namespace ibf {

AcceptScope::AcceptScope(const std::vector<std::string>& entries) {
    for (const std::string& e : entries) {
        if (e.empty()) throw InputError("scope", 0, 0, "an empty scope entry: expected a node name or pattern (leaf03, leaf[19-20], node3*)");
        if (e.find('[') == std::string::npos) {
            globs_.push_back(e);
            continue;
        }
        for (std::string& n : expand_name_pattern(e, "scope")) globs_.push_back(std::move(n));
    }
}

bool AcceptScope::matches(const std::string& name) const {
    if (globs_.empty()) return true;
    if (name.empty()) return false;
    auto one = [&](const std::string& n) {
        for (const std::string& g : globs_)
            if (g == n || (g.find_first_of("*?") != std::string::npos && ::fnmatch(g.c_str(), n.c_str(), 0) == 0))
                return true;
        return false;
    };
    // A host with several HCAs is named "storage01:mlx5_1" in findings: its host name is in scope too.
    const size_t colon = name.find(':');
    return one(name) || (colon != std::string::npos && one(name.substr(0, colon)));
}

bool AcceptScope::covers(const Finding& f) const {
    if (globs_.empty()) return true;
    if (matches(f.a.name) || matches(f.b.name)) return true;
    for (const FindingLink& l : f.links)
        if (matches(l.a.name) || matches(l.b.name) || matches(l.planned.name)) return true;
    return false;
}

namespace {

// Replace old lines [first, first + count) with `lines` (each without its line ending).
struct LineEdit {
    size_t first = 0, count = 0;
    std::vector<std::string> lines;
};

std::vector<std::string> split_lines(std::string_view t) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < t.size()) {
        size_t nl = t.find('\n', i);
        if (nl == std::string_view::npos) nl = t.size();
        out.emplace_back(t.substr(i, nl - i));
        i = nl + 1;
    }
    return out;
}

size_t indent_of(const std::string& l) {
    size_t i = 0;
    while (i < l.size() && l[i] == ' ') ++i;
    return i;
}

bool blank_or_comment(const std::string& l) {
    size_t i = indent_of(l);
    return i == l.size() || l[i] == '#' || l[i] == '\r';
}

// The last line of the entry whose first line is `start` and whose '-' or key is at column `col`.
size_t entry_last_line(const std::vector<std::string>& lines, size_t start, size_t col) {
    size_t last = start;
    for (size_t i = start + 1; i < lines.size(); ++i) {
        if (blank_or_comment(lines[i])) continue;
        if (indent_of(lines[i]) <= col) break;
        last = i;
    }
    return last;
}

std::string end_str(const std::string& node, const std::string& hca, int port) {
    return node + (hca.empty() ? "" : ":" + hca) + "/" + std::to_string(port);
}

// A cable end as the plan wrote it (node/port or {node, hca, port}) as node[:hca]/port.
std::string end_text_of(const YAML::Node& n) {
    if (n.IsScalar()) return n.Scalar();
    if (n.IsMap() && n["node"] && n["port"])
        return end_str(n["node"].Scalar(), n["hca"] ? n["hca"].Scalar() : "", std::stoi(n["port"].Scalar()));
    return "";
}

// One flow map on one line: ends, ports and labels double-quoted, rates and MTUs plain.
std::string flow_entry(const std::vector<std::pair<std::string, std::string>>& kv) {
    YAML::Emitter o;
    o << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : kv) {
        o << YAML::Key << k << YAML::Value;
        if (k == "a" || k == "b" || k == "port" || k == "label") o << YAML::DoubleQuoted << v;
        else o << v;
    }
    o << YAML::EndMap;
    return o.c_str();
}

// Whether a finding's end name ("node01", or "storage01:mlx5_1" for a host with several HCAs) is `pn`.
bool names_node(const std::string& name, const PlannedNode& pn) {
    return name == pn.name || (!pn.hca.empty() && name == pn.name + ":" + pn.hca);
}

std::string finding_key(const Finding& f) {
    return std::string(to_string(f.kind)) + " " + f.a.name + "/" + std::to_string(f.a.port) + " " + f.b.name + "/" +
           std::to_string(f.b.port);
}

// One top-level section the edit may touch: `cables`, `overrides` or `nodes`.
struct Section {
    std::string key;
    bool present = false;
    bool null_value = false;     // `cables:` with nothing after it
    bool flow = false;           // `cables: [...]`: entries known, not their lines
    size_t key_line = 0, key_col = 0;
    struct Entry {
        YAML::Node node;         // sequence item, or the map entry's value
        std::string key;         // map entries
        size_t first = 0, last = 0, col = 0;
    };
    std::vector<Entry> entries;
};

class Editor {
public:
    Editor(std::string_view text, const std::string& file, const Plan& plan, const Fabric& fabric)
        : file_(file), plan_(plan), f_(fabric) {
        text_ = std::string(text);
        if (!text_.empty() && text_.back() != '\n') text_ += '\n';
        lines_ = split_lines(text_);
        root_ = load_yaml_bounded(text_, file, "plan");
        for (const char* k : {"cables", "overrides", "nodes"}) sections_[k] = read_section(k);
        for (size_t i = 0; i < plan_.links.size(); ++i)
            for (const PlannedEnd* e : {&plan_.links[i].a, &plan_.links[i].b}) {
                const PlannedNode& pn = plan_.nodes[e->node];
                by_end_[end_str(pn.name, "", e->port)].push_back(i);
                if (!pn.hca.empty()) by_end_[end_str(pn.name, pn.hca, e->port)].push_back(i);
            }
        for (size_t k = 0; k < sections_["cables"].entries.size(); ++k) {
            const YAML::Mark m = sections_["cables"].entries[k].node.Mark();
            cable_at_mark_[{m.line + 1, m.column + 1}] = k;
        }
        for (size_t i = 0; i < plan_.links.size(); ++i) {
            auto it = cable_at_mark_.find({plan_.links[i].where.line, plan_.links[i].where.column});
            if (it != cable_at_mark_.end()) cable_of_link_[i] = it->second;
        }
        for (size_t k = 0; k < sections_["overrides"].entries.size(); ++k) {
            const YAML::Node& o = sections_["overrides"].entries[k].node;
            if (!o.IsMap() || !o["port"]) continue;
            auto it = by_end_.find(end_text_of(o["port"]));
            if (it != by_end_.end() && !it->second.empty()) override_of_link_[it->second.front()] = k;
        }
    }

    const std::string& text() const { return text_; }
    const std::vector<std::string>& lines() const { return lines_; }

    // The planned link between ends x and y (either order), if the plan has exactly one.
    std::optional<size_t> find_link(const Endpoint& x, const Endpoint& y) const {
        auto it = by_end_.find(end_str(x.name, "", x.port));
        if (it == by_end_.end()) return std::nullopt;
        std::optional<size_t> found;
        for (size_t i : it->second) {
            const PlannedLink& l = plan_.links[i];
            for (const auto& [p, q] : {std::pair(&l.a, &l.b), std::pair(&l.b, &l.a)}) {
                const PlannedNode& pn = plan_.nodes[p->node];
                const PlannedNode& qn = plan_.nodes[q->node];
                if (names_node(x.name, pn) && p->port == x.port && names_node(y.name, qn) && q->port == y.port) {
                    if (found && *found != i) return std::nullopt;
                    found = i;
                }
            }
        }
        return found;
    }

    // The planned link with an end at x (x's cable in the plan), if exactly one.
    std::optional<size_t> link_at(const Endpoint& x) const {
        auto it = by_end_.find(end_str(x.name, "", x.port));
        if (it == by_end_.end() || it->second.size() != 1) return std::nullopt;
        return it->second.front();
    }

    std::optional<size_t> cable_entry(size_t link) const {
        auto it = cable_of_link_.find(link);
        return it == cable_of_link_.end() ? std::nullopt : std::optional<size_t>(it->second);
    }

    std::string where(size_t link) const {
        const SourceLoc& w = plan_.links[link].where;
        return w.file + ":" + std::to_string(w.line) + ":" + std::to_string(w.column);
    }

    // How the plan should name an actual end: name/port, with the HCA when the plan (or the new
    // node) needs it.
    std::string end_text(const Endpoint& e) const {
        if (e.name.find(':') != std::string::npos) return end_str(e.name, "", e.port);  // already name:hca
        size_t planned = 0;
        for (const PlannedNode& pn : plan_.nodes) planned += pn.name == e.name;
        std::string hca;
        if (planned != 1)
            if (auto id = f_.find(e.guid); id && f_.node(*id).type == NodeType::CA)
                hca = derive_hca(NodeType::CA, f_.node(*id).description);
        return end_str(e.name, hca, e.port);
    }

    // --- what the edit does ---

    void add_cable(const std::string& a, const std::string& b, const std::string& what) {
        const std::string key = std::min(a, b) + " " + std::max(a, b);
        if (!added_cables_.insert(key).second) return;
        new_cables_.push_back(flow_entry({{"a", a}, {"b", b}}));
        change("add_cable", "cables: + " + what, "cables");
    }

    void add_switch(const Node& n, const std::string& name) {
        YAML::Emitter o;
        o << YAML::BeginMap << YAML::Key << YAML::DoubleQuoted << name << YAML::Value << YAML::Flow << YAML::BeginMap
          << YAML::Key << "type" << YAML::Value << "switch" << YAML::Key << "ports" << YAML::Value << n.num_ports()
          << YAML::Key << "guid" << YAML::Value << guid_hex(n.guid) << YAML::EndMap << YAML::EndMap;
        new_nodes_.push_back(o.c_str());
        change("add_node", "nodes: + " + name + " (switch, " + std::to_string(n.num_ports()) + " ports, " + guid_hex(n.guid) + ")",
               "nodes");
    }

    void override_rate(size_t link, const std::string& rate) { overrides_[link].first = rate; }
    void override_mtu(size_t link, const std::string& mtu) { overrides_[link].second = mtu; }

    // The cable entry of `link` with its end `far_side` (0 = a, 1 = b) at `to`.
    void move_cable(size_t link, size_t entry, int far_side, const std::string& to) {
        const Section::Entry& e = sections_["cables"].entries[entry];
        std::vector<std::pair<std::string, std::string>> kv{{"a", end_text_of(e.node["a"])}, {"b", end_text_of(e.node["b"])}};
        kv[static_cast<size_t>(far_side)].second = to;
        for (const char* k : {"label", "rate", "mtu"})
            if (e.node[k]) kv.emplace_back(k, e.node[k].Scalar());
        replace_entry("cables", e, flow_entry(kv));
        change_at("move_cable", "cables: " + kv[0].second + " -- " + kv[1].second + " (was " + end_text_of(e.node["a"]) +
                                    " -- " + end_text_of(e.node["b"]) + ")", e.first);
        (void)link;
    }

    void remove_cable(size_t link, size_t entry) {
        const Section::Entry& e = sections_["cables"].entries[entry];
        remove_entry("cables", e);
        change_at("remove_cable", "cables: - " + end_text_of(e.node["a"]) + " -- " + end_text_of(e.node["b"]), e.first);
        if (auto it = override_of_link_.find(link); it != override_of_link_.end()) {
            const Section::Entry& o = sections_["overrides"].entries[it->second];
            remove_entry("overrides", o);
            change_at("remove_cable", "overrides: - " + end_text_of(o.node["port"]) + " (its cable is removed)", o.first);
            removed_override_.insert(link);
        }
    }

    // Builds the line edits; returns the edited text. `source`: a comment above added entries.
    std::string finish(const std::string& source) {
        for (const auto& [link, ro] : overrides_) {
            if (removed_override_.count(link)) continue;
            const auto& [rate, mtu] = ro;
            if (auto it = override_of_link_.find(link); it != override_of_link_.end()) {
                const Section::Entry& e = sections_["overrides"].entries[it->second];
                std::vector<std::pair<std::string, std::string>> kv{{"port", end_text_of(e.node["port"])}};
                if (e.node["label"]) kv.emplace_back("label", e.node["label"].Scalar());
                if (!rate.empty() || e.node["rate"]) kv.emplace_back("rate", rate.empty() ? e.node["rate"].Scalar() : rate);
                if (!mtu.empty() || e.node["mtu"]) kv.emplace_back("mtu", mtu.empty() ? e.node["mtu"].Scalar() : mtu);
                replace_entry("overrides", e, flow_entry(kv));
                change_at("override", "overrides: " + kv[0].second + (rate.empty() ? "" : " rate " + rate) +
                                          (mtu.empty() ? "" : " mtu " + mtu) + " (the existing override edited)",
                          e.first);
                continue;
            }
            const PlannedLink& l = plan_.links[link];
            const PlannedNode& an = plan_.nodes[l.a.node];
            std::vector<std::pair<std::string, std::string>> kv{{"port", end_str(an.name, "", l.a.port)}};
            if (!rate.empty()) kv.emplace_back("rate", rate);
            if (!mtu.empty()) kv.emplace_back("mtu", mtu);
            new_overrides_.push_back(flow_entry(kv));
            change("override", "overrides: + " + kv[0].second + (rate.empty() ? "" : " rate " + rate) +
                                   (mtu.empty() ? "" : " mtu " + mtu),
                   "overrides");
        }
        append("cables", new_cables_, source);
        append("overrides", new_overrides_, source);
        append("nodes", new_nodes_, source);
        for (const char* k : {"cables", "overrides"}) empty_to_flow(k);
        std::sort(edits_.begin(), edits_.end(),
                  [](const LineEdit& x, const LineEdit& y) { return x.first != y.first ? x.first < y.first : x.count < y.count; });
        std::string out;
        size_t next = 0;
        for (const LineEdit& e : edits_) {
            for (; next < e.first; ++next) out += lines_[next] + "\n";
            for (const std::string& l : e.lines) out += l + "\n";
            next = std::max(next, e.first + e.count);
        }
        for (; next < lines_.size(); ++next) out += lines_[next] + "\n";
        return out;
    }

    std::string diff(const std::string& name) const {
        if (edits_.empty()) return "";
        const size_t ctx = 3;
        std::string out = "--- " + name + "\n+++ " + name + " (accepted)\n";
        long delta = 0;  // new line number - old line number before the current hunk
        size_t i = 0;
        while (i < edits_.size()) {
            size_t j = i;  // edits_[i..j] form one hunk
            while (j + 1 < edits_.size() && edits_[j + 1].first <= edits_[j].first + edits_[j].count + 2 * ctx) ++j;
            const size_t os = edits_[i].first >= ctx ? edits_[i].first - ctx : 0;
            const size_t oe = std::min(lines_.size(), edits_[j].first + edits_[j].count + ctx);
            std::string body;
            size_t old_n = 0, new_n = 0, at = os;
            long hunk_delta = 0;
            for (size_t k = i; k <= j; ++k) {
                const LineEdit& e = edits_[k];
                for (; at < e.first; ++at, ++old_n, ++new_n) body += " " + lines_[at] + "\n";
                for (size_t d = 0; d < e.count; ++d, ++old_n) body += "-" + lines_[e.first + d] + "\n";
                for (const std::string& l : e.lines) body += "+" + l + "\n", ++new_n;
                at = std::max(at, e.first + e.count);
                hunk_delta += static_cast<long>(e.lines.size()) - static_cast<long>(e.count);
            }
            for (; at < oe; ++at, ++old_n, ++new_n) body += " " + lines_[at] + "\n";
            const long new_start = static_cast<long>(os) + delta + (new_n ? 1 : 0);
            out += "@@ -" + std::to_string(old_n ? os + 1 : os) + "," + std::to_string(old_n) + " +" +
                   std::to_string(new_start) + "," + std::to_string(new_n) + " @@\n" + body;
            delta += hunk_delta;
            i = j + 1;
        }
        return out;
    }

    std::vector<AcceptChange> changes() const {
        std::vector<AcceptChange> out = changes_;
        std::stable_sort(out.begin(), out.end(), [](const AcceptChange& a, const AcceptChange& b) { return a.line < b.line; });
        return out;
    }

private:
    Section read_section(const std::string& key) {
        Section s;
        s.key = key;
        if (!root_.IsMap()) return s;
        for (auto it = root_.begin(); it != root_.end(); ++it) {
            if (!it->first.IsScalar() || it->first.Scalar() != key) continue;
            s.present = true;
            s.key_line = static_cast<size_t>(it->first.Mark().line);
            s.key_col = static_cast<size_t>(it->first.Mark().column);
            const YAML::Node v = it->second;
            if (v.IsNull()) {
                s.null_value = true;
                return s;
            }
            s.flow = v.Style() == YAML::EmitterStyle::Flow || (!v.IsSequence() && !v.IsMap());
            if (s.flow) {  // the entries' marks still find which planned cable each one is
                if (v.IsSequence())
                    for (const YAML::Node& item : v) s.entries.push_back({item, "", 0, 0, 0});
                return s;
            }
            if (v.IsSequence()) {
                for (const YAML::Node& item : v) {
                    Section::Entry e;
                    e.node = item;
                    e.first = static_cast<size_t>(item.Mark().line);
                    if (indent_of(lines_[e.first]) >= lines_[e.first].size() || lines_[e.first][indent_of(lines_[e.first])] != '-')
                        if (e.first > 0) --e.first;  // "-" alone on the line before the entry's content
                    e.col = indent_of(lines_[e.first]);
                    e.last = entry_last_line(lines_, e.first, e.col);
                    s.entries.push_back(std::move(e));
                }
            } else {
                for (auto m = v.begin(); m != v.end(); ++m) {
                    Section::Entry e;
                    e.node = m->second;
                    e.key = m->first.Scalar();
                    e.first = static_cast<size_t>(m->first.Mark().line);
                    e.col = static_cast<size_t>(m->first.Mark().column);
                    e.last = entry_last_line(lines_, e.first, e.col);
                    s.entries.push_back(std::move(e));
                }
            }
            return s;
        }
        return s;
    }

    // Only block sections are edited line by line: a flow one (`cables: [...]`) is refused.
    void need_block(const std::string& key) const {
        const Section& s = sections_.at(key);
        if (s.flow)
            throw InputError(file_, static_cast<int>(s.key_line) + 1, static_cast<int>(s.key_col) + 1,
                             "'" + key + "' is written as a flow collection ([...] or {...}); accept edits block sections "
                             "(one entry per line, `- {...}`): rewrite it so, or edit the plan by hand");
    }

    void replace_entry(const std::string& section, const Section::Entry& e, const std::string& flow) {
        need_block(section);
        edits_.push_back({e.first, e.last - e.first + 1, {std::string(e.col, ' ') + "- " + flow}});
    }

    void remove_entry(const std::string& section, const Section::Entry& e) {
        need_block(section);
        edits_.push_back({e.first, e.last - e.first + 1, {}});
        ++removed_[section];
    }

    // New entries after the section's last one (or a new section at the end of the file).
    void append(const std::string& key, const std::vector<std::string>& items, const std::string& source) {
        if (items.empty()) return;
        need_block(key);
        const Section& s = sections_[key];
        const bool map = key == "nodes";
        std::vector<std::string> out;
        size_t at = lines_.size(), col = 2;
        if (!s.present) {
            if (!lines_.empty() && !blank_or_comment(lines_.back())) out.push_back("");
            out.push_back(key + ":");
        } else if (s.entries.empty()) {
            at = s.key_line + 1;
            col = s.key_col + 2;
        } else {
            at = s.entries.back().last + 1;
            col = s.entries.back().col;
        }
        if (!source.empty()) {
            std::string one_line = source;  // a comment ends at the line: no line break may end it early
            std::replace_if(one_line.begin(), one_line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
            out.push_back(std::string(col, ' ') + "# accepted from " + one_line);
        }
        for (const std::string& i : items) out.push_back(std::string(col, ' ') + (map ? "" : "- ") + i);
        edits_.push_back({at, 0, std::move(out)});
        added_[key] += items.size();
    }

    // A block list whose every entry was removed and none added would read as null: `key: []`.
    void empty_to_flow(const std::string& key) {
        const Section& s = sections_[key];
        if (!s.present || s.entries.empty() || removed_[key] != s.entries.size() || added_[key] > 0) return;
        edits_.push_back({s.key_line, 1, {std::string(s.key_col, ' ') + key + ": []"}});
    }

    void change(const std::string& action, const std::string& text, const std::string& section) {
        const Section& s = sections_[section];
        changes_.push_back({action, text, static_cast<int>(s.present ? (s.entries.empty() ? s.key_line : s.entries.back().last) + 1
                                                                     : lines_.size())});
    }
    void change_at(const std::string& action, const std::string& text, size_t line) {
        changes_.push_back({action, text, static_cast<int>(line + 1)});
    }

    std::string file_;
    const Plan& plan_;
    const Fabric& f_;
    std::string text_;
    std::vector<std::string> lines_;
    YAML::Node root_;
    std::map<std::string, Section> sections_;
    std::unordered_map<std::string, std::vector<size_t>> by_end_;    // "name/port", "name:hca/port" -> links
    std::map<std::pair<int, int>, size_t> cable_at_mark_;            // (line, column) -> cables entry
    std::unordered_map<size_t, size_t> cable_of_link_, override_of_link_;
    std::map<size_t, std::pair<std::string, std::string>> overrides_;  // link -> (rate, mtu) to write
    std::set<size_t> removed_override_;
    std::set<std::string> added_cables_;
    std::vector<std::string> new_cables_, new_overrides_, new_nodes_;
    std::vector<LineEdit> edits_;
    std::map<std::string, size_t> removed_, added_;
    std::vector<AcceptChange> changes_;
};

bool is_fault_kind(FindingKind k) {
    return k == FindingKind::rate_mismatch || k == FindingKind::mtu_mismatch || k == FindingKind::miswired ||
           k == FindingKind::missing_link;
}

std::string link_text(const FindingLink& l) { return l.a.name + "/" + std::to_string(l.a.port) + " -- " + l.b.name + "/" + std::to_string(l.b.port); }

}  // namespace

AcceptResult accept_into_plan(std::string_view text, const std::string& file, const Plan& plan, const Fabric& fabric,
                              const std::vector<Finding>& findings, const AcceptOptions& opt,
                              const std::function<std::vector<Finding>(const Plan&)>& recheck) {
    const AcceptScope scope(opt.scope);
    Editor ed(text, file, plan, fabric);
    AcceptResult r;
    r.text = std::string(text);
    auto refuse = [&](const Finding& f, std::string why) { r.refused.push_back({f, std::move(why)}); };
    auto keep = [&](const Finding& f, std::string why) { r.kept.push_back({f, std::move(why)}); };
    std::set<Guid> adopted_nodes;
    for (const Finding& f : findings)
        if (f.kind == FindingKind::unexpected_node && scope.covers(f)) adopted_nodes.insert(f.a.guid);
    // An end on a node being added names its HCA (node325:mlx5_0/1); any other end as the plan needs.
    auto end_for = [&](const Endpoint& e) {
        auto id = fabric.find(e.guid);
        if (!id || !adopted_nodes.count(e.guid)) return ed.end_text(e);
        const Node& n = fabric.node(*id);
        return end_str(e.name, n.type == NodeType::CA ? derive_hca(n.type, n.description) : "", e.port);
    };

    for (const Finding& f : findings) {
        if (!scope.covers(f)) {
            keep(f, "outside the scope");
            continue;
        }
        const std::string kind(to_string(f.kind));
        if (is_fault_kind(f.kind) && f.severity >= Severity::error &&
            std::find(opt.accept_kinds.begin(), opt.accept_kinds.end(), f.kind) == opt.accept_kinds.end()) {
            refuse(f, "a " + kind + " is a fault (severity " + std::string(to_string(f.severity)) +
                          "): fix the cable, or adopt it as it is with --accept-kind " + kind);
            continue;
        }
        switch (f.kind) {
            case FindingKind::unexpected_link: {
                if (f.links.empty()) {
                    refuse(f, "the finding names no cable (please report)");
                    break;
                }
                const FindingLink& l = f.links.front();
                ed.add_cable(ed.end_text(l.a), ed.end_text(l.b), link_text(l));
                r.adopted.push_back(f);
                break;
            }
            case FindingKind::unexpected_node: {
                auto id = fabric.find(f.a.guid);
                if (!id) {
                    refuse(f, "the node is not in the fabric by its GUID (please report)");
                    break;
                }
                const Node& n = fabric.node(*id);
                if (n.type == NodeType::Switch) ed.add_switch(n, f.a.name);
                for (const FindingLink& l : f.links) {
                    if (!fabric.find(l.b.guid)) continue;
                    bool planned = false;
                    for (const PlannedNode& pn : plan.nodes) planned |= names_node(l.b.name, pn);
                    if (!planned && !adopted_nodes.count(l.b.guid)) continue;  // to a new node left out of the scope
                    ed.add_cable(end_for(l.a), end_for(l.b), link_text(l));
                }
                r.adopted.push_back(f);
                break;
            }
            case FindingKind::rate_mismatch:
            case FindingKind::mtu_mismatch: {
                const bool rate = f.kind == FindingKind::rate_mismatch;
                auto link = ed.find_link(f.a, f.b);
                if (!link) {
                    refuse(f, "no one planned cable between " + f.a.name + "/" + std::to_string(f.a.port) + " and " +
                                  f.b.name + "/" + std::to_string(f.b.port) + ": edit the plan by hand");
                    break;
                }
                const PlannedLink& pl = plan.links[*link];
                auto port_of = [&](const Endpoint& e) -> const Port* {
                    auto id = fabric.find(e.guid);
                    return id ? fabric.node(*id).port(e.port) : nullptr;
                };
                const Port* pa = port_of(f.a);
                const Port* pb = port_of(f.b);
                const bool disagree = pa && pb && (rate ? pa->rate() != pb->rate() : pa->mtu_active != pb->mtu_active);
                if (disagree || (rate ? !pl.rate : !pl.mtu)) {
                    refuse(f, std::string(disagree ? "the two ends disagree" : "the plan gives no ") +
                                  (disagree ? "" : rate ? "rate for this cable" : "MTU for this cable") +
                                  ": reseat the cable and let the SM retrain it; there is no one value to plan");
                    break;
                }
                if (rate) ed.override_rate(*link, f.actual);
                else ed.override_mtu(*link, f.actual);
                r.adopted.push_back(f);
                break;
            }
            case FindingKind::miswired: {
                std::vector<std::pair<size_t, size_t>> moves;  // (link, cables entry)
                std::string why;
                for (const FindingLink& l : f.links) {
                    auto link = ed.find_link(l.a, l.planned);
                    if (!link) {
                        why = "no one planned cable between " + l.a.name + "/" + std::to_string(l.a.port) + " and " +
                              l.planned.name + "/" + std::to_string(l.planned.port) + ": edit the plan by hand";
                        break;
                    }
                    auto entry = ed.cable_entry(*link);
                    if (!entry) {
                        why = "the cable " + l.a.name + "/" + std::to_string(l.a.port) + " -- " + l.planned.name + "/" +
                              std::to_string(l.planned.port) + " is made by the compact form (" + ed.where(*link) +
                              "), which cannot move one cable: recable it as planned, or edit the plan by hand";
                        break;
                    }
                    moves.emplace_back(*link, *entry);
                }
                if (!why.empty() || moves.empty()) {
                    refuse(f, why.empty() ? "the finding names no cable (please report)" : why);
                    break;
                }
                for (size_t k = 0; k < moves.size(); ++k) {
                    const FindingLink& l = f.links[k];
                    const PlannedLink& pl = plan.links[moves[k].first];
                    const PlannedNode& an = plan.nodes[pl.a.node];
                    const int far_side = names_node(l.a.name, an) && pl.a.port == l.a.port ? 1 : 0;
                    ed.move_cable(moves[k].first, moves[k].second, far_side, ed.end_text(l.b));
                }
                r.adopted.push_back(f);
                break;
            }
            case FindingKind::missing_link: {
                auto link = ed.find_link(f.a, f.b);
                std::optional<size_t> entry = link ? ed.cable_entry(*link) : std::nullopt;
                if (!entry) {
                    refuse(f, link ? "the cable is made by the compact form (" + ed.where(*link) +
                                         "), which cannot drop one cable: connect it, or edit the plan by hand"
                                   : "no one planned cable between its ends: edit the plan by hand");
                    break;
                }
                ed.remove_cable(*link, *entry);
                r.adopted.push_back(f);
                break;
            }
            case FindingKind::missing_node:
                refuse(f, "accept does not remove planned nodes: power it on and cable it, remove " +
                              (f.a.name.empty() ? std::string("it") : f.a.name) +
                              " from the plan by hand, or leave it out of the scope");
                break;
            case FindingKind::host_absent:
                keep(f, "a planned host that is absent (powered off, drained, in maintenance) stays in the plan");
                break;
            case FindingKind::identity_changed:
                keep(f, "a rename or replacement: update the plan's names or nodes: GUIDs by hand");
                break;
            case FindingKind::rate_below_capability:
                keep(f, "the link runs at the planned rate or the plan gives none: nothing to write");
                break;
            default:
                keep(f, "not a difference a plan records");
                break;
        }
    }
    if (!r.refused.empty()) {
        r.adopted.clear();
        return r;
    }
    if (r.adopted.empty()) return r;
    const std::string edited = ed.finish(opt.source);
    Plan next;
    try {
        next = parse_plan_yaml(edited, file);
    } catch (const InputError& e) {
        throw InputError(file, 0, 0, std::string("accepting these differences would not give a valid plan (") + e.what() +
                                         "); edit the plan by hand");
    }
    const std::vector<Finding> after = recheck(next);
    std::set<std::string> left;
    for (const Finding& f : after) left.insert(finding_key(f));
    for (const Finding& f : r.adopted)
        if (left.count(finding_key(f)))
            throw std::logic_error("accept: the edited plan still gives '" + f.message + "' (please report)");
    r.text = edited;
    r.changes = ed.changes();
    r.diff = ed.diff(file);
    r.findings_after = after.size();
    return r;
}

std::string accept_refusal(const AcceptResult& r) {
    auto list = [](const std::vector<AcceptItem>& items, bool why) {
        std::string t;
        for (size_t i = 0; i < items.size() && i < 3; ++i)
            t += (i ? "; " : "") + items[i].finding.message + (why ? " (" + items[i].why + ")" : "");
        return t + (items.size() > 3 ? "; ..." : "");
    };
    if (!r.refused.empty())
        return std::to_string(r.refused.size()) + (r.refused.size() == 1 ? " difference" : " differences") +
               " in the scope cannot be adopted, so nothing is written: " + list(r.refused, true);
    if (!r.changes.empty()) return "";
    std::vector<AcceptItem> outside;
    for (const AcceptItem& i : r.kept)
        if (i.why == "outside the scope") outside.push_back(i);
    if (outside.empty() || outside.size() < r.kept.size()) return "";
    return "nothing in the scope differs from the plan; " + std::to_string(outside.size()) +
           (outside.size() == 1 ? " difference is" : " differences are") + " outside it (" + list(outside, false) +
           "): widen the scope";
}

nlohmann::json accept_result_json(const AcceptResult& r) {
    nlohmann::json changes = nlohmann::json::array(), adopted = nlohmann::json::array(), refused = nlohmann::json::array(),
                   kept = nlohmann::json::array();
    for (const AcceptChange& c : r.changes) changes.push_back({{"action", c.action}, {"text", c.text}, {"line", c.line}});
    for (const Finding& f : r.adopted) adopted.push_back(finding_to_json(f));
    for (const AcceptItem& i : r.refused) {
        nlohmann::json j = finding_to_json(i.finding);
        j["why"] = i.why;
        refused.push_back(std::move(j));
    }
    for (const AcceptItem& i : r.kept) {
        nlohmann::json j = finding_to_json(i.finding);
        j["why"] = i.why;
        kept.push_back(std::move(j));
    }
    return {{"changes", changes}, {"adopted", adopted}, {"refused", refused}, {"kept", kept}, {"diff", r.diff},
            {"findings_after", r.findings_after}};
}

}  // namespace ibf
