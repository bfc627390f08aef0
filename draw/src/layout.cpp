// Layout of the fabric picture: findings to red links, hosts to groups, rows by tier, positions,
// bundles (draw.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ibf/analysis.h"
#include "ibf/draw.h"

namespace ibf::draw {

namespace {

using Key = uint64_t;  // one port: node << 8 | port
Key port_key(NodeId n, int p) { return static_cast<Key>(n) << 8 | static_cast<Key>(p & 0xff); }
Key pair_key(uint32_t a, uint32_t b) { return static_cast<Key>(std::min(a, b)) << 32 | std::max(a, b); }

struct Rect {
    double x0, y0, x1, y1;
    bool hits(const Rect& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// Rectangles already taken on the picture, in a grid of 64 x 16 cells: how many a new one covers
// costs the rectangles near it, not all of them.
class Occupancy {
public:
    void add(const Rect& r) {
        const auto id = static_cast<uint32_t>(rects_.size());
        rects_.push_back(r);
        seen_.push_back(0);
        for_cells(r, [&](Key c) { cells_[c].push_back(id); });
    }
    size_t hits(const Rect& r) {
        ++stamp_;
        size_t n = 0;
        for_cells(r, [&](Key c) {
            auto it = cells_.find(c);
            if (it == cells_.end()) return;
            for (uint32_t id : it->second)
                if (seen_[id] != stamp_) seen_[id] = stamp_, n += r.hits(rects_[id]);
        });
        return n;
    }

private:
    static constexpr double kCellW = 64, kCellH = 16;
    template <class F>
    static void for_cells(const Rect& r, F f) {
        const auto x0 = static_cast<int32_t>(std::floor(r.x0 / kCellW)), x1 = static_cast<int32_t>(std::floor(r.x1 / kCellW));
        const auto y0 = static_cast<int32_t>(std::floor(r.y0 / kCellH)), y1 = static_cast<int32_t>(std::floor(r.y1 / kCellH));
        for (int32_t x = x0; x <= x1; ++x)
            for (int32_t y = y0; y <= y1; ++y) f(static_cast<Key>(static_cast<uint32_t>(x)) << 32 | static_cast<uint32_t>(y));
    }
    std::vector<Rect> rects_;
    std::vector<uint32_t> seen_;
    uint32_t stamp_ = 0;
    std::unordered_map<Key, std::vector<uint32_t>> cells_;
};

// A cable (or a missing one) that findings name.
struct Fault {
    NodeId a = kNoNode, b = kNoNode;
    int pa = 0, pb = 0;
    bool missing = false;
    std::vector<const Finding*> findings;
};

class Builder {
public:
    Builder(const DrawInput& in, const LayoutOptions& o) : in_(in), f_(*in.fabric), o_(o) {}

    Layout run() {
        l_.findings = in_.findings.size();
        index_names();
        for (const Finding& fd : in_.findings) place_finding(fd);
        attach_hosts();
        make_rows();
        place_rows();
        make_edges();
        place_labels();
        finish();
        return std::move(l_);
    }

private:
    bool is_switch(NodeId n) const { return f_.node(n).type == NodeType::Switch; }
    int tier(NodeId n) const { return n < in_.tier_of.size() ? in_.tier_of[n] : 0; }
    std::string name(NodeId n) const {
        if (n < in_.names.size() && !in_.names[n].empty()) return in_.names[n];
        return f_.node(n).name.empty() ? guid_hex(f_.node(n).guid) : f_.node(n).name;
    }
    std::string end_label(NodeId n, int port) const { return name(n) + "/" + std::to_string(port); }

    void index_names() {
        std::unordered_map<std::string, int> seen;
        for (NodeId n = 0; n < f_.size(); ++n) ++seen[name(n)];
        for (NodeId n = 0; n < f_.size(); ++n)
            if (seen[name(n)] == 1) by_name_[name(n)] = n;
        node_findings_.resize(f_.size());
    }

    // The node a finding's end names: by GUID, else by a unique display or fabric name.
    std::optional<NodeId> resolve(const Endpoint& e) const {
        if (e.guid)
            if (auto n = f_.find(e.guid)) return n;
        if (e.name.empty()) return std::nullopt;
        if (auto it = by_name_.find(e.name); it != by_name_.end()) return it->second;
        auto ids = f_.find_by_name(e.name);
        if (ids.size() == 1) return ids[0];
        return std::nullopt;
    }

    bool add_cable_fault(NodeId n, int port, const Finding& fd) {
        const Port* p = port > 0 ? f_.node(n).port(port) : nullptr;
        if (!p || !p->linked()) return false;
        Key k = std::min(port_key(n, port), port_key(p->peer, p->peer_port));
        auto [it, fresh] = fault_at_.try_emplace(k, faults_.size());
        if (fresh) faults_.push_back({.a = n, .b = p->peer, .pa = port, .pb = p->peer_port});
        faults_[it->second].findings.push_back(&fd);
        return true;
    }

    void place_finding(const Finding& fd) {
        const auto na = resolve(fd.a), nb = resolve(fd.b);
        if (na && add_cable_fault(*na, fd.a.port, fd)) return;
        if (nb && add_cable_fault(*nb, fd.b.port, fd)) return;
        if (na && nb && *na != *nb && fd.a.port > 0 && fd.b.port > 0) {
            Key k = pair_key(*na, *nb) ^ (static_cast<Key>(fd.a.port) << 16 | fd.b.port) ^ (Key{1} << 63);
            auto [it, fresh] = fault_at_.try_emplace(k, faults_.size());
            if (fresh) faults_.push_back({.a = *na, .b = *nb, .pa = fd.a.port, .pb = fd.b.port, .missing = true});
            faults_[it->second].findings.push_back(&fd);
            return;
        }
        if (na || nb) {
            node_findings_[na ? *na : *nb].push_back(&fd);
            return;
        }
        l_.not_drawn.push_back(fd);
    }

    // The first switch a host is cabled to, kNoNode if none.
    NodeId first_switch(NodeId h) const {
        for (const Port& p : f_.node(h).ports)
            if (p.valid && p.linked() && is_switch(p.peer)) return p.peer;
        return kNoNode;
    }

    // Hosts (every node that is not a switch) go into their switch's group unless a finding names
    // the host or its cable to that switch: then it gets a box of its own under that switch.
    void attach_hosts() {
        for (const Fault& x : faults_) {
            const bool sa = is_switch(x.a), sb = is_switch(x.b);
            if (sa != sb) own_.insert({sa ? x.a : x.b, sa ? x.b : x.a});
        }
        for (NodeId n = 0; n < f_.size(); ++n)
            if (!is_switch(n) && !node_findings_[n].empty())
                if (NodeId s = first_switch(n); s != kNoNode) own_.insert({s, n});
        for (NodeId h = 0; h < f_.size(); ++h) {
            if (is_switch(h)) continue;
            std::set<NodeId> sws;
            for (const Port& p : f_.node(h).ports)
                if (p.valid && p.linked() && is_switch(p.peer)) sws.insert(p.peer);
            bool placed = false;
            auto& groups = is_aggregation_node(f_.node(h)) ? agg_group_ : group_;
            for (NodeId s : sws) {
                placed = true;
                if (!own_.count({s, h})) groups[s].push_back(h);
            }
            for (const auto& [s, o] : own_) placed |= o == h;  // own_ is small: faults only
            if (!placed) unattached_.push_back(h);
        }
        for (auto* groups : {&group_, &agg_group_})
            for (auto& [s, hs] : *groups)
                std::sort(hs.begin(), hs.end(), [&](NodeId a, NodeId b) { return natural_less(name(a), name(b)); });
    }

    void make_rows() {
        int top = 0;
        bool unknown = false;
        for (NodeId n = 0; n < f_.size(); ++n)
            if (is_switch(n)) top = std::max(top, tier(n)), unknown |= tier(n) <= 0;
        if (unknown) l_.rows.push_back({"unknown tier"});
        for (int lev = top; lev >= 1; --lev) l_.rows.push_back({tier_name(lev)});
        row_members_.resize(l_.rows.size());
        sw_box_.assign(f_.size(), -1);
        for (NodeId n = 0; n < f_.size(); ++n) {
            if (!is_switch(n)) continue;
            const int row = tier(n) <= 0 ? 0 : (unknown ? 1 : 0) + top - tier(n);
            sw_box_[n] = add_box({.kind = BoxKind::Switch, .node = n, .name = name(n), .row = row});
            row_members_[row].push_back(sw_box_[n]);
        }
        hosts_row_ = static_cast<int>(l_.rows.size());
        l_.rows.push_back({"hosts"});
        for (NodeId n = 0; n < f_.size(); ++n)
            if (is_switch(n)) make_host_boxes(n);
        if (!unattached_.empty()) {
            Box g{.kind = BoxKind::HostGroup, .node = kNoNode, .row = hosts_row_};
            g.hosts = static_cast<int>(unattached_.size());
            for (NodeId h : unattached_) g.host_names.push_back(name(h));
            std::sort(g.host_names.begin(), g.host_names.end(), natural_less);
            unattached_box_ = add_box(std::move(g));
        }
    }

    void make_host_boxes(NodeId s) {
        if (auto it = group_.find(s); it != group_.end()) {
            Box g{.kind = BoxKind::HostGroup, .node = s, .row = hosts_row_};
            g.hosts = static_cast<int>(it->second.size());
            for (NodeId h : it->second) g.host_names.push_back(name(h));
            group_box_[s] = add_box(std::move(g));
            under_[s].push_back(group_box_[s]);
        }
        if (auto it = agg_group_.find(s); it != agg_group_.end()) {
            // A tag hanging from the switch (placed with it), not a column of its own: on a SHARP
            // fabric every switch has one.
            Box g{.kind = BoxKind::HostGroup, .node = s, .row = l_.boxes[sw_box_[s]].row, .aggregation = true};
            g.hosts = static_cast<int>(it->second.size());
            for (NodeId h : it->second) g.host_names.push_back(name(h));
            tag_box_[s] = add_box(std::move(g));
            l_.boxes[tag_box_[s]].h = o_.tag_h;
        }
        std::vector<NodeId> mine;
        for (auto it = own_.lower_bound({s, 0}); it != own_.end() && it->first == s; ++it) mine.push_back(it->second);
        std::sort(mine.begin(), mine.end(), [&](NodeId a, NodeId b) { return natural_less(name(a), name(b)); });
        for (NodeId h : mine) {
            own_box_[{s, h}] = add_box({.kind = BoxKind::Host, .node = h, .name = name(h), .row = hosts_row_});
            under_[s].push_back(own_box_[{s, h}]);
        }
    }

    int add_box(Box b) {
        b.w = o_.box_w, b.h = o_.box_h;
        l_.boxes.push_back(std::move(b));
        return static_cast<int>(l_.boxes.size()) - 1;
    }

    double hosts_width(NodeId s) const {
        auto it = under_.find(s);
        if (it == under_.end()) return 0;
        return static_cast<double>(it->second.size()) * (o_.box_w + o_.gap) - o_.gap;
    }

    // The lowest row with switches is placed in columns wide enough for their host boxes; every
    // row above is ordered by where its links go below and spread over the same width, wrapped
    // into several lines when it has more switches than fit (400 cores over 80 leaves: 5 lines).
    void place_rows() {
        const double left = o_.margin + o_.label_w, top = o_.margin + 24, pitch = o_.box_w + o_.gap;
        int& base = base_;
        for (int r = hosts_row_ - 1; r >= 0 && base < 0; --r)
            if (!row_members_[r].empty()) base = r;
        const double base_w = base >= 0 ? base_width(base) : 0;
        const size_t per_line = static_cast<size_t>(std::max(1.0, std::floor((std::max(base_w, o_.min_width) + o_.gap) / pitch)));
        double width = base_w, y = top;
        lines_.assign(l_.rows.size(), 1);
        for (int r = 0; r < hosts_row_; ++r) {
            const size_t n = row_members_[r].size();
            if (r != base) lines_[r] = static_cast<int>((n + per_line - 1) / per_line);
            if (r != base) width = std::max(width, static_cast<double>(std::min(n, per_line)) * pitch - o_.gap);
            l_.rows[r].y = y;
            y += o_.row_gap + std::max(0, lines_[r] - 1) * (o_.box_h + o_.line_gap);
        }
        l_.rows[hosts_row_].y = (base >= 0 ? l_.rows[base].y : top) + o_.host_gap;
        // The base row starts in name order; then it is regrouped by where its links go above (the
        // leaves of one rail under their rail's spines), and the rows above follow, a few rounds.
        for (int round = 0; base >= 0; ++round) {
            place_base(base, left, width, base_w);
            for (int r = base - 1; r >= 0; --r) place_spread(r, left, width);
            if (round == kRegroupRounds || !regroup_base(base, width)) break;
        }
        // Then a gap between neighbours that share no upper switch (rails, pods), unless the row
        // falls apart into that many pieces (an irregular fabric).
        if (base >= 0) split_ = group_gaps(row_members_[base], [base](int row) { return row < base; });
        if (!split_.empty()) {
            const double total = base_w + static_cast<double>(std::count(split_.begin(), split_.end(), 1)) * o_.group_gap;
            width = std::max(width, total);
            place_base(base, left, width, total);
            for (int r = base - 1; r >= 0; --r) place_spread(r, left, width);
        }
        for (NodeId n = 0; n < f_.size(); ++n)
            if (sw_box_[n] >= 0) place_hosts_under(n);
        if (unattached_box_ >= 0) {
            Box& g = l_.boxes[unattached_box_];
            g.x = left + width + (width > 0 ? o_.gap * 3 : 0), g.y = l_.rows[hosts_row_].y;
            width = g.x + g.w - left;
        }
        l_.width = left + std::max(width, o_.box_w) + o_.margin;
        const double legend = 20 + 14.0 * static_cast<double>(std::min<size_t>(l_.not_drawn.size(), 20) + 1);
        l_.height = l_.rows[hosts_row_].y + o_.box_h + legend + o_.margin;
    }

    // Orders the base row by the mean x of its links to the rows above (its own x when it has none):
    // leaves with the same upper switches come together. Within one slot the order stays as it
    // was (name order at first), so one lost uplink does not move a leaf. True when it changed.
    bool regroup_base(int r, double width) {
        auto& m = row_members_[r];
        const double bucket = width / static_cast<double>(m.size());
        std::vector<std::pair<double, int>> order;
        for (int b : m) {
            const double x = mean_peer_x(l_.boxes[b].node, [r](int row) { return row < r; });
            order.push_back({std::floor((std::isinf(x) ? l_.boxes[b].cx() : x) / bucket), b});
        }
        std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        bool changed = false;
        for (size_t i = 0; i < m.size(); ++i) changed |= m[i] != order[i].second, m[i] = order[i].second;
        return changed;
    }

    // The switches in the rows `in_rows` takes that `n` is cabled to, sorted, once each.
    template <class Rows>
    std::vector<NodeId> peers(NodeId n, Rows in_rows) const {
        std::vector<NodeId> out;
        for (const Port& p : f_.node(n).ports)
            if (p.valid && p.linked() && sw_box_[p.peer] >= 0 && in_rows(l_.boxes[sw_box_[p.peer]].row)) out.push_back(p.peer);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    // Per place of a row in this order, 1 where its switch shares no switch of the rows `in_rows`
    // takes with the one before (both cabled to some): a rail or a pod ends there. Empty when
    // there is no such place, or more than one per two switches (an irregular fabric).
    template <class Rows>
    std::vector<char> group_gaps(const std::vector<int>& row, Rows in_rows) const {
        std::vector<char> split(row.size(), 0);
        std::vector<NodeId> prev, cur, both;
        size_t splits = 0;
        for (size_t i = 0; i < row.size(); ++i) {
            cur = peers(l_.boxes[row[i]].node, in_rows);
            if (i > 0 && !prev.empty() && !cur.empty()) {
                both.clear();
                std::set_intersection(prev.begin(), prev.end(), cur.begin(), cur.end(), std::back_inserter(both));
                if (both.empty()) split[i] = 1, ++splits;
            }
            prev.swap(cur);
        }
        if (splits == 0 || splits * 2 > row.size()) split.clear();
        return split;
    }

    // Column of a base-row switch: wide enough for its host boxes.
    double column(int b) const { return std::max(o_.box_w, hosts_width(l_.boxes[b].node)); }

    // Sorts the base row by name and returns its width.
    double base_width(int r) {
        auto& m = row_members_[r];
        std::sort(m.begin(), m.end(), [&](int a, int b) { return natural_less(l_.boxes[a].name, l_.boxes[b].name); });
        double total = -o_.gap;
        for (int b : m) total += column(b) + o_.gap;
        return total;
    }

    void place_base(int r, double left, double width, double total) {
        const auto& m = row_members_[r];
        const double extra = total < width ? (width - total) / static_cast<double>(m.size()) : 0;
        double x = left;
        for (size_t k = 0; k < m.size(); ++k) {
            const int i = m[k];
            if (k < split_.size() && split_[k]) x += o_.group_gap;
            Box& b = l_.boxes[i];
            const double col = column(i) + extra;
            b.x = x + (col - b.w) / 2, b.y = l_.rows[r].y;
            x += col + o_.gap;
        }
    }

    void place_spread(int r, double left, double width) {
        auto& m = row_members_[r];
        if (m.empty()) return;
        // Barycenters within one slot of this row count as equal (then: name order), so a spine
        // that lost one cable does not jump to the end of its row.
        const double bucket = width / static_cast<double>(m.size());
        std::vector<std::pair<double, int>> order;
        for (int b : m) order.push_back({std::floor(mean_peer_x(l_.boxes[b].node, [r](int row) { return row > r; }) / bucket), b});
        std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
            if (x.first != y.first) return x.first < y.first;
            return natural_less(l_.boxes[x.second].name, l_.boxes[y.second].name);
        });
        for (size_t i = 0; i < order.size(); ++i) m[i] = order[i].second;
        // Neighbours in that order stack on top of each other, so each line spans the width. A
        // row in one line gets gaps where its groups end, as the base row does.
        const size_t lines = static_cast<size_t>(lines_[r]);
        const size_t per = (m.size() + lines - 1) / lines;
        const std::vector<char> split = lines == 1 ? group_gaps(m, [r](int row) { return row > r; }) : std::vector<char>{};
        const double gaps = static_cast<double>(std::count(split.begin(), split.end(), 1)) * o_.group_gap;
        const double slot = (width - gaps) / static_cast<double>(per);
        double gap = 0;
        for (size_t i = 0; i < m.size(); ++i) {
            Box& b = l_.boxes[m[i]];
            if (i < split.size() && split[i]) gap += o_.group_gap;
            b.x = left + gap + static_cast<double>(i / lines) * slot + (slot - b.w) / 2;
            b.y = l_.rows[r].y + static_cast<double>(i % lines) * (o_.box_h + o_.line_gap);
        }
    }

    // Mean x of the switches in the rows `in_rows` takes that `n` is cabled to (one per cable);
    // +inf when there is none.
    template <class Rows>
    double mean_peer_x(NodeId n, Rows in_rows) const {
        double sum = 0;
        int count = 0;
        for (const Port& p : f_.node(n).ports) {
            if (!p.valid || !p.linked() || sw_box_[p.peer] < 0) continue;
            const Box& o = l_.boxes[sw_box_[p.peer]];
            if (in_rows(o.row)) sum += o.cx(), ++count;
        }
        return count ? sum / count : std::numeric_limits<double>::infinity();
    }

    void place_hosts_under(NodeId s) {
        const Box& sw = l_.boxes[sw_box_[s]];
        if (auto t = tag_box_.find(s); t != tag_box_.end()) l_.boxes[t->second].x = sw.x, l_.boxes[t->second].y = sw.y + sw.h;
        auto it = under_.find(s);
        if (it == under_.end()) return;
        double x = sw.cx() - hosts_width(s) / 2;
        const double y = sw.row == base_ ? l_.rows[hosts_row_].y : sw.y + o_.host_gap;
        for (int b : it->second) {
            l_.boxes[b].x = x, l_.boxes[b].y = y;
            x += o_.box_w + o_.gap;
        }
    }

    // The box a cable's end `n` is drawn at, seen from its far end `peer`; -1 when none.
    int box_of(NodeId n, NodeId peer) const {
        if (sw_box_[n] >= 0) return sw_box_[n];
        if (peer != kNoNode && sw_box_[peer] >= 0) {
            if (auto it = own_box_.find({peer, n}); it != own_box_.end()) return it->second;
            if (is_aggregation_node(f_.node(n))) {
                auto it = tag_box_.find(peer);
                return it != tag_box_.end() ? it->second : -1;
            }
            if (auto it = group_box_.find(peer); it != group_box_.end()) return it->second;
        }
        return -1;
    }

    void make_edges() {
        std::map<Key, int> bundles;  // box pair -> healthy cables
        for (const Link& k : f_.links()) {
            if (fault_at_.count(std::min(port_key(k.a, k.pa), port_key(k.b, k.pb)))) continue;
            const int ba = box_of(k.a, k.b), bb = box_of(k.b, k.a);
            if (ba >= 0 && bb >= 0 && ba != bb && !hangs_from(ba, bb) && !hangs_from(bb, ba)) ++bundles[pair_key(ba, bb)];
        }
        l_.edges.reserve(bundles.size() + faults_.size());  // an Edge carries 7 strings: no regrowth
        for (const auto& [key, n] : bundles) add_edge(static_cast<int>(key >> 32), static_cast<int>(key & 0xffffffff), n);
        std::map<Key, int> lanes;
        for (const Fault& x : faults_) {
            const int ba = box_of(x.a, x.b), bb = box_of(x.b, x.a);
            if (ba < 0 || bb < 0 || ba == bb) {
                for (const Finding* fd : x.findings) l_.not_drawn.push_back(*fd);
                continue;
            }
            Edge& e = add_edge(ba, bb, 1);
            int& used = lanes[pair_key(ba, bb)];
            const int next = used + (used == 0 && bundles.count(pair_key(ba, bb)) ? 1 : 0);
            e.lane = next % 2 ? (next + 1) / 2 : -(next / 2);
            used = next + 1;
            describe_fault(e, x);
        }
        for (NodeId n = 0; n < f_.size(); ++n) mark_node(n);
    }

    // True when box `tag` is the SHARP tag hanging from switch box `sw` (their cable is not drawn).
    bool hangs_from(int tag, int sw) const {
        const Box& t = l_.boxes[tag];
        return t.aggregation && t.node != kNoNode && sw_box_[t.node] == sw;
    }

    // Where lines leave a box downwards: its bottom, or the bottom of the tag hanging from it.
    double foot(const Box& b) const {
        if (b.kind != BoxKind::Switch) return b.y + b.h;
        auto it = tag_box_.find(b.node);
        return it == tag_box_.end() ? b.y + b.h : l_.boxes[it->second].y + l_.boxes[it->second].h;
    }

    Edge& add_edge(int a, int b, int cables) {
        if (l_.boxes[a].y > l_.boxes[b].y) std::swap(a, b);
        l_.edges.push_back({.from = a, .to = b, .cables = cables});
        return l_.edges.back();
    }

    void set_geometry(Edge& e) const {
        const Box &a = l_.boxes[e.from], &b = l_.boxes[e.to];
        const double dx = e.lane * o_.lane_gap;
        e.x1 = a.cx() + dx, e.x2 = b.cx() + dx;
        e.curved = std::abs(a.y - b.y) < 1;
        e.y1 = foot(a), e.y2 = e.curved ? foot(b) : b.y;
    }

    // Each red label, then each bundle's count ("x5"), goes to the first point along its link
    // (middle first) where it covers no box and no label placed before it; the least crowded
    // point when there is none. (Bundles that cross at their middles would stack their counts.)
    void place_labels() {
        Occupancy taken;
        for (const Box& b : l_.boxes) taken.add({b.x, b.y, b.x + b.w, b.y + b.h});
        for (Edge& e : l_.edges) set_geometry(e);
        for (Edge& e : l_.edges) {
            if (!e.fault) continue;
            const Rect r = place_label(e, taken, static_cast<double>(e.text.size()) * o_.char_w, 4, 10, 3);
            l_.width = std::max(l_.width, r.x1 + o_.margin);
        }
        for (Edge& e : l_.edges)
            if (!e.fault && e.cables > 1)
                place_label(e, taken, static_cast<double>(std::to_string(e.cables).size() + 1) * o_.count_char_w + 3, 0, 8, 2);
    }

    // Places the label of `e` (w wide with its margin, `up` above its baseline and `down` below)
    // and marks it taken. A red label starts 4 right of its link and 4 below the point, a count 3 right.
    Rect place_label(Edge& e, Occupancy& taken, double w, double drop, double up, double down) const {
        static constexpr double kAlong[] = {0.5, 0.35, 0.65, 0.2, 0.8, 0.42, 0.58, 0.27, 0.73, 0.12, 0.88};
        const double dx = e.fault ? 4 : 3;
        Rect best{};
        size_t best_hits = SIZE_MAX;
        for (double t : kAlong) {
            const double x = e.x1 + (e.x2 - e.x1) * t + dx;
            const double y = e.curved ? (e.fault ? e.y1 + 34 + 20 * t : e.y1 + 22) : e.y1 + (e.y2 - e.y1) * t + drop;
            const Rect r{x, y - up, x + w, y + down};
            const size_t hits = taken.hits(r);
            if (hits < best_hits) best = r, best_hits = hits;
            if (hits == 0 || (e.curved && !e.fault)) break;
        }
        e.label_x = best.x0, e.label_y = best.y0 + up;
        taken.add(best);
        return best;
    }

    void describe_fault(Edge& e, const Fault& x) {
        e.fault = true, e.missing = x.missing;
        // Name the upper end first, as the edge runs.
        const bool a_first = box_of(x.a, x.b) == e.from;
        e.a = a_first ? end_label(x.a, x.pa) : end_label(x.b, x.pb);
        e.b = a_first ? end_label(x.b, x.pb) : end_label(x.a, x.pa);
        std::vector<std::string> kinds, labels;
        for (const Finding* fd : x.findings) {
            std::string k(to_string(fd->kind));
            if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
            if (!fd->label.empty() && std::find(labels.begin(), labels.end(), fd->label) == labels.end())
                labels.push_back(fd->label);
            e.title += (e.title.empty() ? "" : "\n") + fd->message;
        }
        for (const auto& k : kinds) e.kinds += (e.kinds.empty() ? "" : " ") + k;
        for (const auto& s : labels) e.label += (e.label.empty() ? "" : ", ") + s;
        e.text = e.kinds + (e.label.empty() ? "" : " [" + e.label + "]") + " " + e.a + " - " + e.b;
    }

    void mark_node(NodeId n) {
        const auto& fs = node_findings_[n];
        int b = sw_box_[n];
        if (b < 0) {
            if (NodeId s = first_switch(n); s != kNoNode)
                if (auto it = own_box_.find({s, n}); it != own_box_.end()) b = it->second;
        }
        if (fs.empty()) return;
        if (b < 0) {
            for (const Finding* fd : fs) l_.not_drawn.push_back(*fd);
            return;
        }
        l_.boxes[b].fault = true;
        for (const Finding* fd : fs) l_.boxes[b].title += (l_.boxes[b].title.empty() ? "" : "\n") + fd->message;
    }

    void finish() {
        for (NodeId n = 0; n < f_.size(); ++n)
            (is_switch(n) ? l_.switches : is_aggregation_node(f_.node(n)) ? l_.aggregation_nodes : l_.hosts) += 1;
        l_.links = static_cast<int>(f_.link_count());
        for (const Edge& e : l_.edges) l_.faults += e.fault;
        for (const Box& b : l_.boxes) l_.faults += b.fault;
        for (Box& b : l_.boxes) {
            std::string head;
            if (b.kind == BoxKind::HostGroup) {
                head = std::to_string(b.hosts) +
                       (b.aggregation ? (b.hosts == 1 ? " SHARP aggregation node" : " SHARP aggregation nodes")
                                      : (b.hosts == 1 ? " host" : " hosts")) +
                       (b.node == kNoNode ? " not cabled to a switch" : " on " + name(b.node)) + ":";
                for (size_t i = 0; i < b.host_names.size() && i < 64; ++i) head += " " + b.host_names[i];
                if (b.host_names.size() > 64) head += " ...";
            } else {
                head = b.name + " " + guid_hex(f_.node(b.node).guid) +
                       (b.kind == BoxKind::Switch ? " (" + l_.rows[b.row].name + ")" : "");
            }
            b.title = b.title.empty() ? head : head + "\n" + b.title;
        }
    }

    static constexpr int kRegroupRounds = 4;  // the base row settles in one or two on fat-trees and rails

    const DrawInput& in_;
    const Fabric& f_;
    LayoutOptions o_;
    Layout l_;
    std::unordered_map<std::string, NodeId> by_name_;
    std::vector<std::vector<const Finding*>> node_findings_;
    std::unordered_map<Key, size_t> fault_at_;
    std::vector<Fault> faults_;
    std::set<std::pair<NodeId, NodeId>> own_;            // (switch, host) with a box of its own
    std::map<NodeId, std::vector<NodeId>> group_;        // switch -> hosts collapsed under it
    std::map<NodeId, std::vector<NodeId>> agg_group_;    // switch -> its SHARP aggregation nodes
    std::vector<NodeId> unattached_;
    std::vector<std::vector<int>> row_members_;          // switch boxes per row
    std::vector<int> sw_box_;                            // per NodeId, -1 for hosts
    std::map<NodeId, int> group_box_;
    std::map<NodeId, int> tag_box_;                      // switch -> the tag of its SHARP aggregation nodes
    std::map<std::pair<NodeId, NodeId>, int> own_box_;
    std::map<NodeId, std::vector<int>> under_;           // switch -> its host boxes, left to right
    std::vector<int> lines_;                             // lines per row (> 1: wrapped)
    std::vector<char> split_;                            // per base-row place: a group gap before it
    int hosts_row_ = 0, unattached_box_ = -1, base_ = -1;  // base_: the lowest row with switches
};

}  // namespace

Layout layout(const DrawInput& in, const LayoutOptions& opt) {
    if (!in.fabric) return {};
    return Builder(in, opt).run();
}

}  // namespace ibf::draw
