// The page's counters panel as data (counter_panel.h).
#include "ibf/counter_panel.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>
#include <unordered_set>

namespace ibf {
namespace {

using Growths = std::array<uint64_t, kErrorCounterCount>;

// Each error counter's growth within the window at `now_ms`.
Growths window_growth(const PortCounterState& s, int64_t now_ms, int64_t window_ms) {
    Growths g{};
    for (const PortCounterState::Growth& x : s.recent)
        if (x.counter < kErrorCounterCount && x.at_ms <= now_ms && now_ms - x.at_ms < window_ms) g[x.counter] += x.amount;
    return g;
}

bool has_errors(const PortCounterState* s) {
    return s && std::any_of(s->total.begin(), s->total.begin() + kErrorCounterCount, [](uint64_t v) { return v > 0; });
}

// The value of counter `c` at `at_ms` from one end's trend: its latest sample at or before, else
// its first one (earlier readings are unknown: flat, never fake growth); no trend: its total.
uint64_t value_at(const PortCounterState& s, size_t c, int64_t at_ms) {
    if (s.trend.empty()) return s.total[c];
    uint64_t v = s.trend.front().total[c];
    for (const PortCounterState::Sample& x : s.trend) {
        if (x.at_ms > at_ms) break;
        v = x.total[c];
    }
    return v;
}

// Both ends added at every reading of either.
std::vector<CounterTrendPoint> merged_trend(const PortCounterState* l, const PortCounterState* m, size_t c) {
    std::set<int64_t> times;
    for (const PortCounterState* s : {l, m})
        if (s)
            for (const PortCounterState::Sample& x : s->trend) times.insert(x.at_ms);
    std::vector<CounterTrendPoint> out;
    for (int64_t at : times) out.push_back({at, (l ? value_at(*l, c, at) : 0) + (m ? value_at(*m, c, at) : 0)});
    return out;
}

std::optional<double> per_hour(const std::vector<CounterTrendPoint>& tr) {
    if (tr.size() < 2 || tr.back().at_ms <= tr.front().at_ms || tr.back().total < tr.front().total) return std::nullopt;
    return static_cast<double>(tr.back().total - tr.front().total) * 3'600'000.0 /
           static_cast<double>(tr.back().at_ms - tr.front().at_ms);
}

struct End {
    const PortCounterState* s = nullptr;
    std::string name;
    Growths growth{};
};

// One row per error counter above 0 at either end of (a, b); b may be absent (s null, name "").
void add_rows(const PortCounterTracker& t, const End& a, const End& b, const std::string& label,
              std::vector<CounterPanelRow>& out) {
    for (size_t c = 0; c < kErrorCounterCount; ++c) {
        const uint64_t ta = a.s ? a.s->total[c] : 0, tb = b.s ? b.s->total[c] : 0;
        if (ta == 0 && tb == 0) continue;
        CounterPanelRow r;
        r.a = a.name;
        r.b = b.name;
        r.label = label;
        r.counter = static_cast<wire::PortCounter>(c);
        r.total = ta + tb;
        r.growth = a.growth[c] + b.growth[c];
        r.threshold = t.options().max_per_window[c];
        r.over = r.threshold && (a.growth[c] > *r.threshold || b.growth[c] > *r.threshold);
        if (ta) r.ends.push_back({a.name, ta, a.growth[c]});
        if (tb) r.ends.push_back({b.name, tb, b.growth[c]});
        r.trend = merged_trend(a.s, b.s, c);
        r.per_hour = per_hour(r.trend);
        out.push_back(std::move(r));
    }
}

std::string end_name(const std::string& name, Guid g, int port) {
    return (name.empty() ? guid_hex(g) : name) + "/" + std::to_string(port);
}

bool worse(const CounterPanelRow& x, const CounterPanelRow& y) {
    return std::tuple(!x.over, ~x.growth, ~x.total, x.a, x.b, x.counter) <
           std::tuple(!y.over, ~y.growth, ~y.total, y.a, y.b, y.counter);
}

}  // namespace

std::string CounterPanelRow::link() const { return b.empty() ? a : a + " -- " + b; }

CounterPanel counter_panel(const PortCounterTracker& t, const LinkTable* links, int64_t now_ms, size_t max_rows,
                           const std::function<std::string(Guid)>& name_of) {
    CounterPanel p;
    p.window_ms = t.options().window_ms;
    p.ports = t.ports().size();
    if (t.ports().empty()) return p;
    auto end = [&](Guid g, int port, const std::string& name) {
        End e;
        e.s = t.find(g, port);
        e.name = end_name(name, g, port);
        if (e.s) e.growth = window_growth(*e.s, now_ms, p.window_ms);
        return e;
    };
    std::vector<CounterPanelRow> rows;
    std::unordered_set<PortCounterTracker::PortKey, PortCounterTracker::PortKeyHash> on_links;
    if (links)
        for (const LinkRow& lr : links->rows) {
            on_links.insert({lr.local_guid, lr.local_port});
            on_links.insert({lr.remote_guid, lr.remote_port});
            const End a = end(lr.local_guid, lr.local_port, lr.local_name);
            const End b = end(lr.remote_guid, lr.remote_port, lr.remote_name);
            if (!a.s && !b.s) continue;
            ++p.links;
            if (!has_errors(a.s) && !has_errors(b.s)) continue;
            ++p.links_with_errors;
            add_rows(t, a, b, lr.label, rows);
        }
    for (const auto& [k, s] : t.ports()) {
        if (on_links.count(k) || !has_errors(&s)) continue;
        ++p.other_ports_with_errors;
        add_rows(t, end(k.first, k.second, name_of ? name_of(k.first) : ""), End{}, "", rows);
    }
    const size_t shown = std::min(rows.size(), max_rows);
    std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(), worse);
    p.more = rows.size() - shown;
    rows.resize(shown);
    p.rows = std::move(rows);
    return p;
}

}  // namespace ibf
