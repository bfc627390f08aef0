// YAML plan files (schema: docs/plan.md): compact fat-tree tiers + host groups, explicit cables,
// per-cable overrides and node identities, expanded into one ibf::Plan.
#include "ibf/plan_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibf/error.h"
#include "ibf/names.h"
#include "ibf/rate.h"
#include "ibf/suggest.h"
#include "ibf/text.h"
#include "ibf/yaml_load.h"

namespace ibf {
namespace {

using YAML::Node;

constexpr int kMaxPort = 255;             // port numbers are uint8 in the model
constexpr size_t kMaxNodes = kMaxPlanNodes;  // plan_yaml.h: patterns must not expand to absurd sizes

std::string quoted(std::string_view v) { return "'" + printable(v) + "'"; }

std::string kind(const Node& n) {
    switch (n.Type()) {
        case YAML::NodeType::Null: return "nothing";
        case YAML::NodeType::Scalar: return quoted(n.Scalar());
        case YAML::NodeType::Sequence: return "a list";
        case YAML::NodeType::Map: return "a map";
        default: return "nothing";
    }
}

// "file:12:5".
std::string where_str(const SourceLoc& l) {
    std::string s = InputError::format(l.file, l.line, l.column, "");
    if (s.size() >= 2) s.resize(s.size() - 2);
    return s;
}

std::string end_str(const PlannedNode& n, int port) {
    std::string s = n.name;
    if (!n.hca.empty()) s += ":" + n.hca;
    return s + "/" + std::to_string(port);
}

std::optional<long long> to_int(std::string_view s) {
    if (s.empty() || s.size() > 12) return std::nullopt;
    long long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// A handle on a YAML node that may be absent. yaml-cpp's Node::operator= assigns the *contents*
// of one node into another (and throws on a missing key), so handles are re-pointed by
// re-constructing, never by assigning Nodes.
class Ref {
public:
    Ref() = default;
    Ref(const Node& x) { set(x); }  // NOLINT: implicit on purpose
    Ref(const Ref& o) { if (o.n_) n_.emplace(*o.n_); }
    Ref& operator=(const Ref& o) {
        n_.reset();
        if (o.n_) n_.emplace(*o.n_);
        return *this;
    }
    Ref& operator=(const Node& x) {
        set(x);
        return *this;
    }
    explicit operator bool() const { return n_.has_value(); }
    const Node& operator*() const { return *n_; }
    const Node* operator->() const { return &*n_; }
    operator const Node&() const { return *n_; }  // NOLINT: only used where set

private:
    void set(const Node& x) {
        n_.reset();
        if (x.IsDefined()) n_.emplace(x);
    }
    std::optional<Node> n_;
};

// Const lookup: an undefined (falsy) node when `key` is missing, never an insertion.
Node get(const Node& map, const char* key) { return map[key]; }

struct Tier {
    std::string name;
    Ref key, spec;
    Ref names_node, ports_node, down_node, up_node, up_to_node, cables_node, pods_node;
    std::vector<std::string> names;
    int ports = 0;
    std::vector<int> down, up;
    std::string up_to;
    int cables = 1;
    int pods = 1;
    std::optional<Rate> rate;
    std::optional<int> mtu;
    std::vector<size_t> nodes;  // Plan::nodes indexes, in name order
    bool is_target = false;
};

struct NodeEntry {
    std::string key, name, hca;
    Ref key_node, value;
    std::optional<Guid> guid;
    Ref guid_node;
    std::optional<NodeType> type;
    Ref type_node;
    int ports = 0;
    Ref ports_node;
};

struct EndRef {
    std::string name, hca;
    int port = 0;
    Ref at;  // where it was written
};

class Parser {
public:
    Parser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

    Plan run() {
        plan_.source = file_;
        const Node root = load_yaml_bounded(text_, file_, "plan", {.max_nodes = kMaxPlanYamlNodes});
        if (!root.IsMap())
            throw InputError(file_, 1, 1,
                             "expected a YAML map starting with `version: 1` (a plan, see docs/plan.md), got " +
                                 kind(root));
        check_keys(root,
                   {"version", "name", "description", "node_name_map", "rate", "mtu", "nodes", "switches", "hosts",
                    "cables", "overrides", "scope"},
                   "the plan");
        Node version = get(root, "version");
        if (!version) fail(root, "missing `version: 1` at the top of the plan");
        long long v = integer(version, "version", 0, 1000000);
        if (v != 1) fail(version, "unsupported plan version " + std::to_string(v) + ": expected 1");
        if (Node n = get(root, "name")) scalar(n, "name");
        if (Node n = get(root, "description")) scalar(n, "description");
        if (Node n = get(root, "node_name_map")) plan_.node_name_map = scalar(n, "node_name_map");
        if (Node n = get(root, "rate")) default_rate_ = rate(n);
        if (Node n = get(root, "mtu")) default_mtu_ = mtu(n);
        if (Node n = get(root, "nodes")) read_nodes(n);
        if (Node n = get(root, "switches")) read_switches(n);
        if (Node n = get(root, "hosts")) read_hosts(n);
        if (Node n = get(root, "cables")) read_cables(n);
        if (Node n = get(root, "overrides")) read_overrides(n);
        if (Node n = get(root, "scope")) read_scope(n);
        apply_nodes();
        return std::move(plan_);
    }

private:
    // ---- scope: what the check leaves out --------------------------------------------------

    void read_scope(const Node& n) {
        check_keys(n, {"hosts", "ignore"}, "scope");
        plan_.scope.where = loc(n);
        if (Node h = get(n, "hosts")) {
            const std::string v = scalar(h, "hosts");
            if (v != "check" && v != "ignore") fail(h, "expected 'check' or 'ignore' for scope.hosts, got " + quoted(v));
            plan_.scope.ignore_hosts = v == "ignore";
        }
        if (Node i = get(n, "ignore")) {
            if (i.IsScalar()) {
                plan_.scope.ignore.push_back(i.Scalar());
            } else {
                if (!i.IsSequence()) fail(i, "expected a name pattern or a list of them for scope.ignore, got " + kind(i));
                for (const Node& x : i) plan_.scope.ignore.push_back(scalar(x, "scope.ignore"));
            }
        }
    }

    // ---- errors and positions ----------------------------------------------------------------

    SourceLoc loc(const Node& n) const {
        YAML::Mark m = n.Mark();
        int line = m.line >= 0 ? m.line + 1 : 0;
        int col = m.column >= 0 ? m.column + 1 : 0;
        return {file_, line, col};
    }

    [[noreturn]] void fail(const Node& n, const std::string& msg) const {
        SourceLoc l = loc(n);
        throw InputError(file_, l.line, l.column, msg);
    }

    // ---- typed values ------------------------------------------------------------------------

    void check_map(const Node& n, const std::string& what) const {
        if (!n.IsMap()) fail(n, "expected a map for " + what + ", got " + kind(n));
    }

    void check_keys(const Node& map, std::initializer_list<const char*> allowed, const std::string& what) const {
        check_map(map, what);
        std::vector<std::string> names(allowed.begin(), allowed.end());
        std::unordered_map<std::string, Node> seen;
        for (const auto& kv : map) {
            const Node k = kv.first;
            if (!k.IsScalar()) fail(k, "expected a key name in " + what + ", got " + kind(k));
            const std::string& key = k.Scalar();
            if (std::find(names.begin(), names.end(), key) == names.end())
                fail(k, unknown_key("", key, names, what));
            auto [pos, fresh] = seen.emplace(key, k);
            if (!fresh) fail(k, "duplicate key '" + key + "' in " + what + " (first at " + where_str(loc(pos->second)) + ")");
        }
    }

    std::string scalar(const Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, "expected a string for '" + what + "', got " + kind(n));
        return n.Scalar();
    }

    long long integer(const Node& n, const std::string& what, long long lo, long long hi) const {
        if (!n.IsScalar()) fail(n, "expected an integer for '" + what + "', got " + kind(n));
        auto v = to_int(n.Scalar());
        if (!v)
            fail(n, "expected an integer for '" + what + "' (" + std::to_string(lo) + ".." + std::to_string(hi) +
                        "), got " + quoted(n.Scalar()));
        if (*v < lo || *v > hi)
            fail(n, "'" + what + "' must be from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                        std::to_string(*v));
        return *v;
    }

    Rate rate(const Node& n) const {
        if (!n.IsScalar()) fail(n, "expected a rate such as 4xEDR, got " + kind(n));
        const std::string& s = n.Scalar();
        if (auto r = parse_rate(s)) return *r;
        if (auto w = parse_width(s)) return {*w, Speed::Unknown};
        if (auto sp = parse_speed(s); sp && !to_int(s)) return {Width::Unknown, *sp};
        fail(n, "bad rate " + quoted(s) + ": expected width x speed such as 4xEDR, 4xHDR, 2xNDR (or just 4x, or just HDR)");
    }

    int mtu(const Node& n) const {
        if (!n.IsScalar()) fail(n, "expected an MTU (256, 512, 1024, 2048 or 4096), got " + kind(n));
        auto m = parse_mtu(n.Scalar());
        if (!m || mtu_to_code(*m) == 0)
            fail(n, "bad MTU '" + n.Scalar() + "': expected 256, 512, 1024, 2048 or 4096");
        return *m;
    }

    // Column of the first character of a scalar's text (after an opening quote).
    int text_column(const Node& n) const {
        YAML::Mark m = n.Mark();
        if (m.column < 0) return 0;
        int col = m.column + 1;
        if (m.pos >= 0 && static_cast<size_t>(m.pos) < text_.size() && (text_[m.pos] == '"' || text_[m.pos] == '\''))
            ++col;
        return col;
    }

    // A name, a pattern, or a list of them.
    std::vector<std::string> names(const Node& n, const std::string& what) {
        std::vector<std::string> out;
        auto one = [&](const Node& s) {
            if (!s.IsScalar()) fail(s, "expected a name pattern such as leaf[01-18] for '" + what + "', got " + kind(s));
            size_t budget = kMaxNodes - std::min(kMaxNodes, total_names_ + out.size());
            auto v = expand_name_pattern(s.Scalar(), file_, loc(s).line, text_column(s), std::max<size_t>(budget, 1));
            for (const auto& name : v)
                if (!plan_name_ok(name) || name.find_first_of(" \t") != std::string::npos)
                    fail(s, "bad name '" + name + "' in '" + what +
                                "': names may not contain ':' or spaces, and '/' only inside a card name such as dir1/L03/U2, "
                                "not before a number (they separate node, HCA and port)");
            out.insert(out.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
        };
        if (n.IsSequence()) {
            if (n.size() == 0) fail(n, "empty list for '" + what + "': expected names or patterns");
            for (const auto& s : n) one(s);
        } else {
            one(n);
        }
        total_names_ += out.size();
        if (total_names_ > kMaxNodes) fail(n, "the plan names more than " + std::to_string(kMaxNodes) + " nodes");
        return out;
    }

    // Port list: 7, "1-18", "1-4,9,11-12", or a list of those. `max_port` = the switch's port count.
    std::vector<int> port_list(const Node& n, const std::string& what, int max_port) const {
        std::vector<int> out;
        std::vector<char> seen(kMaxPort + 1, 0);
        auto add_text = [&](const Node& at, std::string_view s) {
            size_t pos = 0;
            while (pos <= s.size()) {
                size_t comma = s.find(',', pos);
                if (comma == std::string_view::npos) comma = s.size();
                std::string_view item = s.substr(pos, comma - pos);
                while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
                while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
                size_t dash = item.find('-');
                auto lo = to_int(dash == std::string_view::npos ? item : item.substr(0, dash));
                auto hi = to_int(dash == std::string_view::npos ? item : item.substr(dash + 1));
                if (!lo || !hi || *lo < 1 || *hi < 1)
                    fail(at, "bad port range '" + std::string(item) + "' in '" + what +
                                 "': expected port numbers such as 1-18 or 19-36,40");
                if (*lo > *hi)
                    fail(at, "bad port range '" + std::string(item) + "' in '" + what + "': start is greater than end");
                if (*hi > max_port)
                    fail(at, "port " + std::to_string(*hi) + " in '" + what + "' is beyond the switch's " +
                                 std::to_string(max_port) + " ports");
                for (long long p = *lo; p <= *hi; ++p) {
                    if (seen[p]) fail(at, "port " + std::to_string(p) + " is listed twice in '" + what + "'");
                    seen[p] = 1;
                    out.push_back(static_cast<int>(p));
                }
                pos = comma + 1;
            }
        };
        if (n.IsSequence()) {
            for (const auto& e : n) {
                if (!e.IsScalar()) fail(e, "expected a port or port range in '" + what + "', got " + kind(e));
                add_text(e, e.Scalar());
            }
        } else if (n.IsScalar()) {
            add_text(n, n.Scalar());
        } else {
            fail(n, "expected ports such as 1-18 for '" + what + "', got " + kind(n));
        }
        if (out.empty()) fail(n, "no ports in '" + what + "'");
        return out;
    }

    std::optional<NodeType> node_type(const Node& n) const {
        std::string s = scalar(n, "type");
        std::string l;
        for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (l == "switch") return NodeType::Switch;
        if (l == "ca" || l == "host" || l == "hca") return NodeType::CA;
        if (l == "router") return NodeType::Router;
        fail(n, "bad node type " + quoted(s) + ": expected switch, ca (or host) or router");
    }

    // ---- nodes and port use ------------------------------------------------------------------

    const NodeEntry* entry_for(const std::string& name, const std::string& hca) const {
        if (!hca.empty()) {
            if (auto it = entries_by_key_.find(name + ":" + hca); it != entries_by_key_.end()) return &entries_[it->second];
        }
        if (auto it = entries_by_key_.find(name); it != entries_by_key_.end()) return &entries_[it->second];
        return nullptr;
    }

    size_t add_node(PlannedNode n, const Node& at) {
        auto& same = by_name_[n.name];
        for (size_t i : same) {
            const PlannedNode& o = plan_.nodes[i];
            if (o.hca == n.hca)
                fail(at, "'" + n.name + (n.hca.empty() ? "" : ":" + n.hca) + "' is already declared at " +
                             where_str(o.where));
            if (o.hca.empty() || n.hca.empty())
                fail(at, "'" + n.name + "' is declared both with and without an HCA (other at " + where_str(o.where) +
                             "): name the HCA everywhere, e.g. " + n.name + ":mlx5_0");
            if (o.type == NodeType::Switch || n.type == NodeType::Switch)
                fail(at, "'" + n.name + "' is already declared as a switch at " + where_str(o.where));
        }
        size_t idx = plan_.nodes.size();
        same.push_back(idx);
        plan_.nodes.push_back(std::move(n));
        ports_.emplace_back();
        return idx;
    }

    // Finds the node an end names; creates a CA (or what `nodes:` says) when `create` and unknown.
    std::optional<size_t> resolve(const EndRef& e, bool create) {
        auto it = by_name_.find(e.name);
        if (it != by_name_.end() && !it->second.empty()) {
            const auto& v = it->second;
            if (e.hca.empty()) {
                if (v.size() == 1) return v[0];
                std::vector<std::string> hcas;
                for (size_t i : v) hcas.push_back(plan_.nodes[i].hca);
                fail(e.at, "'" + e.name + "' has several HCAs (" + join(hcas) + "): name one, e.g. " + e.name + ":" +
                               hcas[0] + "/" + std::to_string(e.port > 0 ? e.port : 1));
            }
            for (size_t i : v)
                if (plan_.nodes[i].hca == e.hca) return i;
        }
        if (!create) return std::nullopt;
        PlannedNode n;
        n.name = e.name;
        n.hca = e.hca;
        n.type = NodeType::CA;
        n.where = loc(e.at);
        if (const NodeEntry* ne = entry_for(e.name, e.hca)) {
            if (ne->type) n.type = *ne->type;
            n.num_ports = ne->ports;
        }
        if (n.type == NodeType::Switch && !n.hca.empty())
            fail(e.at, "'" + e.name + "' is a switch (nodes: section): a switch end has no HCA");
        return add_node(std::move(n), e.at);
    }

    int32_t& port_slot(size_t node, int port) {
        auto& v = ports_[node];
        if (v.size() <= static_cast<size_t>(port)) v.resize(static_cast<size_t>(port) + 1, -1);
        return v[static_cast<size_t>(port)];
    }

    void check_port(size_t node, int port, const Node& at) const {
        const PlannedNode& n = plan_.nodes[node];
        if (port < 1 || port > kMaxPort)
            fail(at, "port " + std::to_string(port) + " of '" + n.name + "' must be from 1 to " + std::to_string(kMaxPort));
        if (n.num_ports > 0 && port > n.num_ports)
            fail(at, "port " + std::to_string(port) + " is beyond " + n.name + "'s " + std::to_string(n.num_ports) +
                         " ports (declared at " + where_str(n.where) + ")");
    }

    // An error naming `at` when `n` more links would take the plan past kMaxPlanLinks.
    void check_link_room(size_t n, const Node& at) const {
        if (n > kMaxPlanLinks - std::min(kMaxPlanLinks, plan_.links.size()))
            fail(at, "the plan expands to more than " + std::to_string(kMaxPlanLinks) + " cables");
    }
    void reserve_links(size_t n, const Node& at) {
        check_link_room(n, at);
        plan_.links.reserve(plan_.links.size() + n);
    }

    size_t add_link(size_t a, int pa, size_t b, int pb, std::optional<Rate> r, std::optional<int> m,
                    std::string label, const SourceLoc& where, const Node& at) {
        check_port(a, pa, at);
        check_port(b, pb, at);
        if (a == b && pa == pb) fail(at, "a cable from " + end_str(plan_.nodes[a], pa) + " to itself");
        for (auto [n, p, on, op] : {std::tuple{a, pa, b, pb}, std::tuple{b, pb, a, pa}}) {
            int32_t used = port_slot(n, p);
            if (used >= 0) {
                const PlannedLink& o = plan_.links[static_cast<size_t>(used)];
                const PlannedEnd& other = (o.a.node == n && o.a.port == p) ? o.b : o.a;
                fail(at, end_str(plan_.nodes[n], p) + " is already cabled to " +
                             end_str(plan_.nodes[other.node], other.port) + " by " + where_str(o.where) +
                             "; this cable (" + where_str(where) + ") would connect it to " +
                             end_str(plan_.nodes[on], op));
            }
        }
        check_link_room(1, at);
        size_t idx = plan_.links.size();
        PlannedLink l;
        l.a = {a, pa};
        l.b = {b, pb};
        l.label = std::move(label);
        l.rate = r;
        l.mtu = m;
        l.where = where;
        plan_.links.push_back(std::move(l));
        port_slot(a, pa) = static_cast<int32_t>(idx);
        port_slot(b, pb) = static_cast<int32_t>(idx);
        return idx;
    }

    // ---- nodes: ------------------------------------------------------------------------------

    void read_nodes(const Node& n) {
        check_map(n, "'nodes' (name: guid, or name: {guid, type, ports})");
        std::unordered_map<Guid, size_t> by_guid;
        for (const auto& kv : n) {
            NodeEntry e;
            e.key_node = kv.first;
            e.value = kv.second;
            if (!e.key_node->IsScalar()) fail(e.key_node, "expected a node name in 'nodes', got " + kind(e.key_node));
            e.key = e.key_node->Scalar();
            if (e.key.empty()) fail(e.key_node, "empty node name in 'nodes'");
            size_t colon = e.key.find(':');
            e.name = e.key.substr(0, colon);
            if (colon != std::string::npos) e.hca = e.key.substr(colon + 1);
            if (!plan_name_ok(e.name) || (colon != std::string::npos && e.hca.empty()))
                fail(e.key_node, "bad node name '" + e.key + "' in 'nodes': expected name or name:hca");
            if (e.value->IsScalar()) {
                e.guid_node = e.value;
            } else if (e.value->IsMap()) {
                check_keys(e.value, {"guid", "type", "ports"}, "node '" + e.key + "'");
                if (Node g = get(*e.value, "guid")) e.guid_node = g;
                if (Node t = get(*e.value, "type")) {
                    e.type = node_type(t);
                    e.type_node = t;
                }
                if (Node p = get(*e.value, "ports")) {
                    e.ports = static_cast<int>(integer(p, "ports", 1, kMaxPort));
                    e.ports_node = p;
                }
            } else {
                fail(e.value, "expected a GUID or a map {guid, type, ports} for node '" + e.key + "', got " + kind(e.value));
            }
            if (e.guid_node) {
                std::string s = scalar(e.guid_node, "guid");
                auto g = parse_guid(s);
                if (!g || *g == 0) fail(e.guid_node, "bad GUID " + quoted(s) + " for '" + e.key + "': expected hex such as 0x0002c90300a1b2c3");
                if (auto [pos, fresh] = by_guid.emplace(*g, entries_.size()); !fresh)
                    fail(e.guid_node, "GUID " + guid_hex(*g) + " is given to both '" + entries_[pos->second].key +
                                          "' (" + where_str(loc(entries_[pos->second].key_node)) + ") and '" + e.key + "'");
                e.guid = g;
            }
            if (auto [pos, fresh] = entries_by_key_.emplace(e.key, entries_.size()); !fresh)
                fail(e.key_node, "node '" + e.key + "' is listed twice in 'nodes' (first at " +
                                     where_str(loc(entries_[pos->second].key_node)) + ")");
            entries_.push_back(std::move(e));
        }
    }

    void apply_nodes() {
        for (const NodeEntry& e : entries_) {
            EndRef ref{e.name, e.hca, 0, e.key_node};
            auto idx = resolve(ref, false);
            if (!idx) {
                if (!e.type) {
                    std::vector<std::string> known;
                    for (const auto& [name, _] : by_name_) known.push_back(name);
                    std::sort(known.begin(), known.end());
                    fail(e.key_node, "node '" + e.key + "' in 'nodes' is not declared by any tier, host group or cable" +
                                         did_you_mean(e.name, known) + " (give it a `type:` to plan a node without cables)");
                }
                idx = resolve(ref, true);
            }
            PlannedNode& n = plan_.nodes[*idx];
            if (e.type && *e.type != n.type)
                fail(e.type_node, "node '" + e.key + "' is declared a " + std::string(to_string(n.type)) + " at " +
                                      where_str(n.where) + ", not a " + std::string(to_string(*e.type)));
            if (e.ports > 0) {
                if (n.num_ports > 0 && n.num_ports != e.ports)
                    fail(e.ports_node, "node '" + e.key + "' has " + std::to_string(n.num_ports) + " ports (declared at " +
                                           where_str(n.where) + "), not " + std::to_string(e.ports));
                for (size_t p = static_cast<size_t>(e.ports) + 1; p < ports_[*idx].size(); ++p)
                    if (ports_[*idx][p] >= 0)
                        fail(e.ports_node, "node '" + e.key + "' has " + std::to_string(e.ports) + " ports but port " +
                                               std::to_string(p) + " is cabled at " +
                                               where_str(plan_.links[static_cast<size_t>(ports_[*idx][p])].where));
                n.num_ports = e.ports;
            }
            if (e.guid) n.guid = e.guid;
        }
    }

    // ---- switches: ---------------------------------------------------------------------------

    void read_switches(const Node& n) {
        check_map(n, "'switches' (tier name: {names, ports, down, up, up_to, ...})");
        std::vector<Tier> tiers;
        std::unordered_map<std::string, size_t> by_name;
        for (const auto& kv : n) {
            Tier t;
            t.key = kv.first;
            t.spec = kv.second;
            if (!t.key->IsScalar()) fail(t.key, "expected a tier name in 'switches', got " + kind(t.key));
            t.name = t.key->Scalar();
            if (t.name.empty()) fail(t.key, "empty tier name in 'switches'");
            if (auto [pos, fresh] = by_name.emplace(t.name, tiers.size()); !fresh)
                fail(t.key, "tier '" + t.name + "' is declared twice (first at " + where_str(loc(tiers[pos->second].key)) + ")");
            const std::string what = "tier '" + t.name + "'";
            check_keys(t.spec, {"names", "ports", "down", "up", "up_to", "cables_per_pair", "pods", "rate", "mtu"}, what);
            t.names_node = get(*t.spec, "names");
            if (!t.names_node) fail(t.key, what + " needs `names:` (e.g. names: " + t.name + "[01-18])");
            t.names = names(t.names_node, "names");
            t.ports_node = get(*t.spec, "ports");
            if (!t.ports_node) fail(t.key, what + " needs `ports:` (the switches' port count, e.g. ports: 36)");
            t.ports = static_cast<int>(integer(t.ports_node, "ports", 1, kMaxPort));
            if ((t.down_node = get(*t.spec, "down"))) t.down = port_list(t.down_node, "down", t.ports);
            if ((t.up_node = get(*t.spec, "up"))) t.up = port_list(t.up_node, "up", t.ports);
            for (int p : t.up)
                if (std::find(t.down.begin(), t.down.end(), p) != t.down.end())
                    fail(t.up_node, "port " + std::to_string(p) + " of " + what + " is both down (" +
                                        where_str(loc(t.down_node)) + ") and up");
            if ((t.up_to_node = get(*t.spec, "up_to"))) t.up_to = scalar(t.up_to_node, "up_to");
            if ((t.cables_node = get(*t.spec, "cables_per_pair")))
                t.cables = static_cast<int>(integer(t.cables_node, "cables_per_pair", 1, kMaxPort));
            if ((t.pods_node = get(*t.spec, "pods"))) t.pods = static_cast<int>(integer(t.pods_node, "pods", 1, 1000000));
            if (t.names.size() % static_cast<size_t>(t.pods) != 0)
                fail(t.pods_node, what + " has " + std::to_string(t.names.size()) + " switches, which do not split into " +
                                      std::to_string(t.pods) + " equal pods");
            if (Node r = get(*t.spec, "rate")) t.rate = rate(r);
            if (Node m = get(*t.spec, "mtu")) t.mtu = mtu(m);
            if (!t.up.empty() && t.up_to.empty())
                fail(t.up_node, what + " has up ports but no `up_to:` naming the tier they go to");
            if (t.up.empty() && !t.up_to.empty())
                fail(t.up_to_node, what + " has `up_to:` but no `up:` ports");
            tiers.push_back(std::move(t));
        }
        std::vector<std::string> tier_names;
        for (const auto& t : tiers) tier_names.push_back(t.name);

        // Relations: each tier goes up to at most one tier, each tier receives at most one, no cycles.
        std::vector<int> up_of(tiers.size(), -1), below_of(tiers.size(), -1);
        for (size_t i = 0; i < tiers.size(); ++i) {
            Tier& t = tiers[i];
            if (t.up_to.empty()) continue;
            auto f = by_name.find(t.up_to);
            if (f == by_name.end())
                fail(t.up_to_node, "unknown tier '" + t.up_to + "' in up_to" + did_you_mean(t.up_to, tier_names) +
                                       " (tiers: " + join(tier_names) + ")");
            size_t u = f->second;
            if (u == i) fail(t.up_to_node, "tier '" + t.name + "' cannot go up to itself");
            if (below_of[u] >= 0)
                fail(t.up_to_node, "tier '" + t.up_to + "' already receives the uplinks of tier '" +
                                       tiers[static_cast<size_t>(below_of[u])].name + "' (" +
                                       where_str(loc(tiers[static_cast<size_t>(below_of[u])].up_to_node)) +
                                       "); a tier receives the uplinks of one tier only (use cables: for more)");
            if (tiers[u].down.empty())
                fail(t.up_to_node, "tier '" + t.up_to + "' has no `down:` ports for the uplinks of tier '" + t.name + "'");
            up_of[i] = static_cast<int>(u);
            below_of[u] = static_cast<int>(i);
            tiers[u].is_target = true;
        }
        for (size_t i = 0; i < tiers.size(); ++i) {
            size_t steps = 0;
            for (int j = static_cast<int>(i); j >= 0; j = up_of[static_cast<size_t>(j)])
                if (++steps > tiers.size()) fail(tiers[i].up_to_node, "tiers go up in a cycle through '" + tiers[i].name + "'");
        }

        // Switch nodes, in tier order.
        size_t count = 0;
        for (const Tier& t : tiers) count += t.names.size();
        by_name_.reserve(by_name_.size() + count);
        plan_.nodes.reserve(plan_.nodes.size() + count);
        for (Tier& t : tiers) {
            SourceLoc where = loc(t.names_node);
            t.nodes.reserve(t.names.size());
            for (const auto& name : t.names) {
                PlannedNode pn;
                pn.name = name;
                pn.type = NodeType::Switch;
                pn.num_ports = t.ports;
                pn.tier = t.name;
                pn.where = where;
                if (const NodeEntry* e = entry_for(name, "")) {
                    if (e->type && *e->type != NodeType::Switch)
                        fail(e->type_node, "node '" + e->key + "' is a switch of tier '" + t.name + "' (" + where_str(where) +
                                               "), not a " + std::string(to_string(*e->type)));
                }
                t.nodes.push_back(add_node(std::move(pn), t.names_node));
            }
        }

        // Switch-to-switch links.
        for (size_t i = 0; i < tiers.size(); ++i) {
            if (up_of[i] < 0) continue;
            expand_uplinks(tiers[i], tiers[static_cast<size_t>(up_of[i])]);
        }

        for (Tier& t : tiers) tiers_.push_back(std::move(t));
    }

    void expand_uplinks(const Tier& lo, const Tier& hi) {
        const size_t nlo = lo.nodes.size(), nhi = hi.nodes.size();
        const size_t c = static_cast<size_t>(lo.cables);
        const size_t pl = static_cast<size_t>(lo.pods), pu = static_cast<size_t>(hi.pods);
        const size_t per_pod_lo = nlo / pl;
        // For each lower switch: the upper switches it reaches (first index, count) and its rank
        // among the lower switches reaching the same set.
        size_t set_size = 0, sharers = 0;
        bool planes = false;
        if (pl == pu) {
            set_size = nhi / pu;
            sharers = per_pod_lo;
        } else if (pu == 1 && pl > 1) {
            planes = true;
            if (nhi % per_pod_lo != 0)
                fail(hi.names_node, "tier '" + hi.name + "' has " + std::to_string(nhi) +
                                        " switches, not a multiple of the " + std::to_string(per_pod_lo) +
                                        " switches per pod of tier '" + lo.name + "' (one plane per pod position)");
            set_size = nhi / per_pod_lo;
            sharers = pl;
        } else {
            fail(lo.pods_node ? lo.pods_node : lo.up_to_node,
                 "tier '" + lo.name + "' has " + std::to_string(pl) + " pods and tier '" + hi.name + "' has " +
                     std::to_string(pu) + ": expected the same number (links stay in their pod) or no pods above a podded tier (planes)");
        }
        if (lo.up.size() != set_size * c)
            fail(lo.up_node, "tier '" + lo.name + "' has " + std::to_string(lo.up.size()) + " up ports but needs " +
                                 std::to_string(set_size * c) + ": " + std::to_string(set_size) + " switches of tier '" +
                                 hi.name + "'" + (planes ? " per plane" : pu > 1 ? " per pod" : "") + " x " +
                                 std::to_string(c) + " cables_per_pair");
        if (hi.down.size() != sharers * c)
            fail(hi.down_node, "tier '" + hi.name + "' has " + std::to_string(hi.down.size()) + " down ports but tier '" +
                                   lo.name + "' needs " + std::to_string(sharers * c) + ": " + std::to_string(sharers) +
                                   (planes ? " pods" : pu > 1 ? " switches per pod" : " switches") + " x " +
                                   std::to_string(c) + " cables_per_pair");
        SourceLoc where = loc(lo.up_node);
        std::optional<Rate> r = lo.rate ? lo.rate : default_rate_;
        std::optional<int> m = lo.mtu ? lo.mtu : default_mtu_;
        reserve_links(nlo * lo.up.size(), lo.up_node);
        for (size_t s = 0; s < nlo; ++s) {
            size_t pod = s / per_pod_lo, pos = s % per_pod_lo;
            size_t first = planes ? pos * set_size : pod * set_size;
            size_t rank = planes ? pod : pos;
            for (size_t k = 0; k < lo.up.size(); ++k) {
                size_t upper = hi.nodes[first + k / c];
                int hport = hi.down[rank * c + k % c];
                add_link(lo.nodes[s], lo.up[k], upper, hport, r, m, "", where, lo.up_node);
            }
        }
    }

    // ---- hosts: ------------------------------------------------------------------------------

    void read_hosts(const Node& n) {
        if (n.IsMap()) {
            read_host_group(n);
        } else if (n.IsSequence()) {
            for (const auto& g : n) read_host_group(g);
        } else {
            fail(n, "expected a host group map {names, hca, port, attach, per_switch} or a list of them, got " + kind(n));
        }
    }

    void read_host_group(const Node& g) {
        const std::string what = "host group";
        check_keys(g, {"names", "hca", "port", "attach", "per_switch", "ports", "rate", "mtu"}, what);
        Node names_node = get(g, "names");
        if (!names_node) fail(g, "host group needs `names:` (e.g. names: node[001-324])");
        std::vector<std::string> hosts = names(names_node, "names");
        std::string hca;
        if (Node h = get(g, "hca")) {
            hca = scalar(h, "hca");
            if (hca.empty() || hca.find_first_of("/: ") != std::string::npos)
                fail(h, "bad HCA name '" + hca + "': expected e.g. mlx5_0");
        }
        int hport = 1;
        if (Node p = get(g, "port")) hport = static_cast<int>(integer(p, "port", 1, kMaxPort));

        // Which switches: a tier name or a switch name pattern.
        std::vector<size_t> switches;
        const Tier* tier = nullptr;
        Node attach = get(g, "attach");
        if (attach) {
            std::string a = scalar(attach, "attach");
            for (const Tier& t : tiers_)
                if (t.name == a) tier = &t;
            if (!tier) {
                std::vector<std::string> sw;
                try {
                    sw = expand_name_pattern(a, file_, loc(attach).line, text_column(attach), kMaxNodes);
                } catch (const InputError&) {
                    sw.clear();
                }
                std::vector<std::string> tier_names;
                for (const Tier& t : tiers_) tier_names.push_back(t.name);
                for (const auto& s : sw) {
                    auto it = by_name_.find(s);
                    if (it == by_name_.end() || it->second.empty() ||
                        plan_.nodes[it->second[0]].type != NodeType::Switch || plan_.nodes[it->second[0]].tier.empty()) {
                        fail(attach, "attach '" + a + "': '" + s + "' is neither a tier (" + join(tier_names) +
                                         ") nor a switch of one" + did_you_mean(a, tier_names));
                    }
                    switches.push_back(it->second[0]);
                }
                if (sw.empty()) fail(attach, "attach '" + a + "' is neither a tier nor a switch pattern" + did_you_mean(a, tier_names));
                for (const Tier& t : tiers_)
                    if (t.name == plan_.nodes[switches[0]].tier) tier = &t;
            } else {
                switches = tier->nodes;
            }
        } else {
            // The lowest tier: one that goes up and receives nothing (or the only tier).
            std::vector<const Tier*> lowest;
            for (const Tier& t : tiers_)
                if (!t.is_target && (!t.up.empty() || tiers_.size() == 1)) lowest.push_back(&t);
            if (lowest.size() != 1)
                fail(g, "host group needs `attach:` (the tier or switches the hosts plug into)");
            tier = lowest[0];
            switches = tier->nodes;
        }

        std::vector<int> ports;
        Node ports_node = get(g, "ports");
        int max_port = kMaxPort;
        for (size_t s : switches) max_port = std::min(max_port, plan_.nodes[s].num_ports);
        if (ports_node) {
            ports = port_list(ports_node, "ports", max_port);
        } else {
            for (size_t s : switches)
                if (plan_.nodes[s].tier != tier->name)
                    fail(attach, "attach '" + attach.Scalar() + "' spans tiers '" + tier->name + "' and '" +
                                     plan_.nodes[s].tier + "': give the switch ports with `ports:`");
            if (tier->down.empty())
                fail(attach ? attach : g, "tier '" + tier->name + "' has no `down:` ports for hosts: give them with `ports:`");
            ports = tier->down;
        }
        size_t per = ports.size();
        Node per_node = get(g, "per_switch");
        if (per_node) {
            per = static_cast<size_t>(integer(per_node, "per_switch", 1, kMaxPort));
            if (per > ports.size())
                fail(per_node, "per_switch " + std::to_string(per) + " is more than the " + std::to_string(ports.size()) +
                                   " host ports of each switch");
        }
        if (hosts.size() != switches.size() * per)
            fail(names_node, "host names give " + std::to_string(hosts.size()) + " hosts but " +
                                 std::to_string(switches.size()) + " switches x " + std::to_string(per) +
                                 " per_switch need " + std::to_string(switches.size() * per));
        std::optional<Rate> r = default_rate_;
        std::optional<int> m = default_mtu_;
        if (Node rn = get(g, "rate")) r = rate(rn);
        if (Node mn = get(g, "mtu")) m = mtu(mn);
        SourceLoc where = loc(names_node);
        plan_.nodes.reserve(plan_.nodes.size() + hosts.size());
        by_name_.reserve(by_name_.size() + hosts.size());
        ports_.reserve(ports_.size() + hosts.size());
        reserve_links(hosts.size(), names_node);
        for (size_t i = 0; i < hosts.size(); ++i) {
            PlannedNode pn;
            pn.name = std::move(hosts[i]);
            pn.hca = hca;
            pn.type = NodeType::CA;
            pn.tier = "hosts";
            pn.where = where;
            if (const NodeEntry* e = entry_for(pn.name, hca)) {
                if (e->type && *e->type != NodeType::CA)
                    fail(e->type_node, "node '" + e->key + "' is a host of the group at " + where_str(where) + ", not a " +
                                           std::string(to_string(*e->type)));
                pn.num_ports = e->ports;
            }
            size_t h = add_node(std::move(pn), names_node);
            add_link(switches[i / per], ports[i % per], h, hport, r, m, "", where, names_node);
        }
    }

    // ---- cables: and overrides: --------------------------------------------------------------

    EndRef end_ref(const Node& n, const std::string& what) const {
        EndRef e;
        e.at = n;
        if (n.IsScalar()) {
            const std::string& s = n.Scalar();
            size_t slash = s.rfind('/');
            auto bad = [&](const std::string& why) {
                fail(n, "bad " + what + " " + quoted(s) + why + ": expected node/port such as leaf03/19, or gpu01:mlx5_1/1");
            };
            if (slash == std::string::npos) bad("");
            auto port = to_int(std::string_view(s).substr(slash + 1));
            if (!port) bad(": the port is not a number");
            if (*port < 1 || *port > kMaxPort) bad(": port out of range 1.." + std::to_string(kMaxPort));
            e.port = static_cast<int>(*port);
            std::string node = s.substr(0, slash);
            size_t colon = node.find(':');
            e.name = node.substr(0, colon);
            if (colon != std::string::npos) e.hca = node.substr(colon + 1);
            if (!plan_name_ok(e.name) || (colon != std::string::npos && e.hca.empty()) ||
                e.hca.find_first_of("/:") != std::string::npos)
                bad("");
        } else if (n.IsMap()) {
            check_keys(n, {"node", "hca", "port"}, what);
            Node nn = get(n, "node"), pn = get(n, "port");
            if (!nn || !pn) fail(n, what + " needs `node:` and `port:`");
            e.name = scalar(nn, "node");
            if (!plan_name_ok(e.name)) fail(nn, "bad node name '" + e.name + "' in " + what);
            if (Node h = get(n, "hca")) {
                e.hca = scalar(h, "hca");
                if (e.hca.empty() || e.hca.find_first_of("/: ") != std::string::npos)
                    fail(h, "bad HCA name '" + e.hca + "': expected e.g. mlx5_0");
            }
            e.port = static_cast<int>(integer(pn, "port", 1, kMaxPort));
        } else {
            fail(n, "expected " + what + " as node/port (leaf03/19) or {node, hca, port}, got " + kind(n));
        }
        return e;
    }

    void read_cables(const Node& n) {
        if (!n.IsSequence()) fail(n, "expected a list of cables ({a, b, label, rate, mtu}) for 'cables', got " + kind(n));
        for (const auto& c : n) {
            check_keys(c, {"a", "b", "label", "rate", "mtu"}, "cable");
            Node an = get(c, "a"), bn = get(c, "b");
            if (!an || !bn) fail(c, "a cable needs both ends: `a:` and `b:` (e.g. a: leaf03/19, b: spine01/5)");
            EndRef a = end_ref(an, "cable end"), b = end_ref(bn, "cable end");
            std::string label;
            if (Node l = get(c, "label")) label = scalar(l, "label");
            std::optional<Rate> r = default_rate_;
            std::optional<int> m = default_mtu_;
            if (Node rn = get(c, "rate")) r = rate(rn);
            if (Node mn = get(c, "mtu")) m = mtu(mn);
            size_t ai = *resolve(a, true);
            size_t bi = *resolve(b, true);
            add_link(ai, a.port, bi, b.port, r, m, std::move(label), loc(c), c);
        }
    }

    void read_overrides(const Node& n) {
        if (!n.IsSequence()) fail(n, "expected a list of overrides ({port, label, rate, mtu}) for 'overrides', got " + kind(n));
        std::unordered_map<size_t, Node> done;
        for (const auto& o : n) {
            check_keys(o, {"port", "label", "rate", "mtu"}, "override");
            Node pn = get(o, "port");
            if (!pn) fail(o, "an override needs `port:` (one end of a planned cable, e.g. port: leaf03/19)");
            if (!get(o, "label") && !get(o, "rate") && !get(o, "mtu")) fail(o, "an override needs `label:`, `rate:` or `mtu:`");
            EndRef e = end_ref(pn, "override port");
            auto idx = resolve(e, false);
            if (!idx) fail(pn, "override port: no node '" + e.name + (e.hca.empty() ? "" : ":" + e.hca) + "' in the plan");
            int32_t li = e.port < static_cast<int>(ports_[*idx].size()) ? ports_[*idx][static_cast<size_t>(e.port)] : -1;
            if (li < 0) fail(pn, "override: no planned cable at " + end_str(plan_.nodes[*idx], e.port));
            if (auto [pos, fresh] = done.emplace(static_cast<size_t>(li), o); !fresh)
                fail(o, "this cable is already overridden at " + where_str(loc(pos->second)));
            PlannedLink& l = plan_.links[static_cast<size_t>(li)];
            if (Node ln = get(o, "label")) l.label = scalar(ln, "label");
            if (Node rn = get(o, "rate")) l.rate = rate(rn);
            if (Node mn = get(o, "mtu")) l.mtu = mtu(mn);
        }
    }

    std::string_view text_;
    std::string file_;
    Plan plan_;
    std::optional<Rate> default_rate_;
    std::optional<int> default_mtu_;
    std::vector<Tier> tiers_;
    std::vector<NodeEntry> entries_;
    std::unordered_map<std::string, size_t> entries_by_key_;
    std::unordered_map<std::string, std::vector<size_t>> by_name_;
    std::vector<std::vector<int32_t>> ports_;  // per node: port -> link index, -1 = free
    size_t total_names_ = 0;
};

}  // namespace

Plan parse_plan_yaml(std::string_view text, const std::string& file) {
    try {
        return Parser(text, file).run();
    } catch (const InputError&) {
        throw;
    } catch (const YAML::Exception& e) {
        // Anything yaml-cpp throws while we walk the document: a bug here (we check every type first),
        // but the caller still gets an InputError. The fuzz tests look for this message.
        throw InputError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0,
                         "internal error while reading the plan (please report): " + e.msg);
    }
}

}  // namespace ibf
