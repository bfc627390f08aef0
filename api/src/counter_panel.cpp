// The page's counters panel as data (counter_panel.h).
#include "ibf/counter_panel.h"

#include <algorithm>
#include <array>
#include <set>
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

// A rate only over at least 10 minutes of readings: 55 errors set at once and read 5 s apart in the
// lab showed as "10417 per hour", a one-off step extrapolated (OpenSM's default perfmgr sweep is
// 180 s, so 10 minutes is 4 readings).
constexpr int64_t kMinRateSpanMs = 10 * 60 * 1000;

std::optional<double> per_hour(const std::vector<CounterTrendPoint>& tr) {
    if (tr.size() < 2 || tr.back().at_ms - tr.front().at_ms < kMinRateSpanMs || tr.back().total < tr.front().total)
        return std::nullopt;
    return static_cast<double>(tr.back().total - tr.front().total) * 3'600'000.0 /
           static_cast<double>(tr.back().at_ms - tr.front().at_ms);
}

struct End {
    const PortCounterState* s = nullptr;
    std::string name;
    Growths growth{};
};

// A row before it is shown: the sort key and where its ends are (ends[a], ends[b]; b may be npos).
struct Candidate {
    bool over = false;
    uint64_t growth = 0, total = 0;
    size_t a = 0, b = 0, counter = 0;
    const std::string* label = nullptr;
};
constexpr size_t kNone = static_cast<size_t>(-1);

// One candidate per error counter above 0 at either end of (a, b).
void add_candidates(const PortCounterTracker& t, const std::vector<End>& ends, size_t a, size_t b,
                    const std::string* label, std::vector<Candidate>& out) {
    static const End kNoEnd;
    const End& ea = ends[a];
    const End& eb = b == kNone ? kNoEnd : ends[b];
    for (size_t c = 0; c < kErrorCounterCount; ++c) {
        const uint64_t ta = ea.s ? ea.s->total[c] : 0, tb = eb.s ? eb.s->total[c] : 0;
        if (ta == 0 && tb == 0) continue;
        const auto& max = t.options().max_per_window[c];
        out.push_back({.over = max && (ea.growth[c] > *max || eb.growth[c] > *max),
                       .growth = ea.growth[c] + eb.growth[c], .total = ta + tb, .a = a, .b = b, .counter = c,
                       .label = label});
    }
}

CounterPanelRow make_row(const PortCounterTracker& t, const std::vector<End>& ends, const Candidate& x) {
    static const End kNoEnd;
    const End& a = ends[x.a];
    const End& b = x.b == kNone ? kNoEnd : ends[x.b];
    const size_t c = x.counter;
    CounterPanelRow r;
    r.a = a.name;
    r.b = b.name;
    r.label = x.label ? *x.label : "";
    r.counter = static_cast<wire::PortCounter>(c);
    r.total = x.total;
    r.growth = x.growth;
    r.threshold = t.options().max_per_window[c];
    r.over = x.over;
    if (a.s && a.s->total[c]) r.ends.push_back({a.name, a.s->total[c], a.growth[c]});
    if (b.s && b.s->total[c]) r.ends.push_back({b.name, b.s->total[c], b.growth[c]});
    r.trend = merged_trend(a.s, b.s, c);
    r.per_hour = per_hour(r.trend);
    return r;
}

std::string end_name(const std::string& name, Guid g, int port) {
    return (name.empty() ? guid_hex(g) : name) + "/" + std::to_string(port);
}

}  // namespace

std::string CounterPanelRow::link() const { return b.empty() ? a : a + " -- " + b; }

CounterPanel counter_panel(const PortCounterTracker& t, const LinkTable* links, int64_t now_ms, size_t max_rows,
                           const std::function<std::string(Guid)>& name_of) {
    CounterPanel p;
    p.window_ms = t.options().window_ms;
    p.ports = t.port_count();
    if (t.empty()) return p;
    std::vector<End> ends;  // of the links and ports with errors
    auto add_end = [&](const PortCounterState* s, Guid g, int port, const std::string& name) {
        End e;
        e.s = s;
        e.name = end_name(name, g, port);
        if (s) e.growth = window_growth(*s, now_ms, p.window_ms);
        ends.push_back(std::move(e));
        return ends.size() - 1;
    };
    std::vector<Candidate> cands;
    std::unordered_set<PortCounterTracker::PortKey, PortCounterTracker::PortKeyHash> on_links;
    if (links)
        for (const LinkRow& lr : links->rows) {
            on_links.insert({lr.local_guid, lr.local_port});
            on_links.insert({lr.remote_guid, lr.remote_port});
            const PortCounterState* sa = t.find(lr.local_guid, lr.local_port);
            const PortCounterState* sb = t.find(lr.remote_guid, lr.remote_port);
            if (!sa && !sb) continue;
            ++p.links;
            if (!has_errors(sa) && !has_errors(sb)) continue;
            ++p.links_with_errors;
            const size_t a = add_end(sa, lr.local_guid, lr.local_port, lr.local_name);
            const size_t b = add_end(sb, lr.remote_guid, lr.remote_port, lr.remote_name);
            add_candidates(t, ends, a, b, &lr.label, cands);
        }
    t.for_each_port([&](const PortCounterTracker::PortKey& k, const PortCounterState& s) {
        if (on_links.count(k) || !has_errors(&s)) return;
        ++p.other_ports_with_errors;
        const size_t a = add_end(&s, k.first, k.second, name_of ? name_of(k.first) : "");
        add_candidates(t, ends, a, kNone, nullptr, cands);
    });
    // Worst first; equal rows by link (a, b) and counter.
    static const std::string kEmpty;
    auto b_name = [&](const Candidate& x) -> const std::string& { return x.b == kNone ? kEmpty : ends[x.b].name; };
    auto worse = [&](const Candidate& x, const Candidate& y) {
        if (x.over != y.over) return x.over;
        if (x.growth != y.growth) return x.growth > y.growth;
        if (x.total != y.total) return x.total > y.total;
        if (const int c = ends[x.a].name.compare(ends[y.a].name)) return c < 0;
        if (const int c = b_name(x).compare(b_name(y))) return c < 0;
        return x.counter < y.counter;
    };
    const size_t shown = std::min(cands.size(), max_rows);
    std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(shown), cands.end(), worse);
    p.more = cands.size() - shown;
    for (size_t i = 0; i < shown; ++i) p.rows.push_back(make_row(t, ends, cands[i]));
    return p;
}

}  // namespace ibf
