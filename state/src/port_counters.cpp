// PortCounterTracker: per-port totals with resets as new baselines, growth within a window.
#include "ibf/port_counters.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace ibf {

std::string_view iba_name(wire::PortCounter c) {
    static constexpr std::string_view kNames[wire::kPortCounterCount] = {
        "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
        "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
        "PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
        "PortXmitWait", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"};
    const auto i = static_cast<size_t>(c);
    return i < wire::kPortCounterCount ? kNames[i] : "unknown";
}

std::string duration_text(int64_t ms) {
    if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + " h";
    if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + " min";
    return std::to_string((ms + 500) / 1000) + " s";
}

void PortCounterTracker::prune(PortCounterState& s, int64_t now_ms) const {
    while (!s.recent.empty() && now_ms - s.recent.front().at_ms >= opt_.window_ms) s.recent.pop_front();
}

namespace {

// One reading into the trend: nothing while every error total is 0; the first sample with errors
// comes after one of zeros at the previous reading (when there was one), so the line starts flat.
void add_trend_sample(PortCounterState& s, int64_t prev_ms, int64_t now_ms) {
    PortCounterState::Sample x{now_ms, {}};
    std::copy_n(s.total.begin(), kErrorCounterCount, x.total.begin());
    if (s.trend.empty()) {
        if (std::all_of(x.total.begin(), x.total.end(), [](uint64_t v) { return v == 0; })) return;
        if (prev_ms && prev_ms < now_ms) s.trend.push_back({prev_ms, {}});
    }
    s.trend.push_back(x);
    if (s.trend.size() > kTrendSamples) s.trend.erase(s.trend.begin(), s.trend.end() - kTrendSamples);
}

}  // namespace

void PortCounterTracker::log_change(const PortKey& k) {
    log_.push_back(k);
    if (log_.size() > std::max<size_t>(4096, 2 * ports_.size())) {
        const size_t drop = log_.size() / 2;
        log_.erase(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(drop));
        log_base_ += drop;
    }
}

bool PortCounterTracker::changed_since(uint64_t since, std::vector<PortKey>& out) const {
    if (since < log_base_ || since > version()) return false;
    out.insert(out.end(), log_.begin() + static_cast<std::ptrdiff_t>(since - log_base_), log_.end());
    return true;
}

void PortCounterTracker::on_row(Guid sm, const wire::PortCounterRow& r, int64_t now_ms) {
    ++rows_;
    log_change(PortKey{r.node_guid, r.port});
    auto [it, fresh] = ports_.try_emplace(PortKey{r.node_guid, r.port});
    PortCounterState& s = it->second;
    if (fresh) added_.push_back(it->first);
    const int64_t prev_ms = fresh ? 0 : s.updated_ms;
    s.updated_ms = now_ms;
    if (fresh || s.sm != sm) {
        // Baseline: the first row of this port, or the first from another SM's plugin (it sums
        // from its own start). A fresh port's total starts at the value; a known one keeps its total.
        ++baselines_;
        if (fresh) s.total = r.v;
        s.sm = sm;
        s.last = r.v;
    } else {
        for (size_t c = 0; c < wire::kPortCounterCount; ++c) {
            const uint64_t v = r.v[c];
            if (v < s.last[c]) {
                ++resets_;  // went down: the plugin (OpenSM) restarted; a new baseline, no growth
            } else if (v > s.last[c]) {
                const uint64_t d = v - s.last[c];
                s.total[c] += d;
                if (opt_.max_per_window[c] || c < kErrorCounterCount)
                    s.recent.push_back({now_ms, static_cast<uint8_t>(c), d});
            }
            s.last[c] = v;
        }
    }
    add_trend_sample(s, prev_ms, now_ms);
    prune(s, now_ms);
    if (s.recent.empty())
        growing_.erase(it->first);
    else
        growing_.insert(it->first);
}

void PortCounterTracker::mark_present(const std::function<bool(Guid, int)>& in_fabric, int64_t now_ms) {
    marked_.reset();
    added_.clear();
    absent_ = 0;
    for (auto& [k, s] : ports_) {
        if (in_fabric(k.first, k.second)) {
            s.absent_since_ms = 0;
        } else {
            if (s.absent_since_ms == 0) s.absent_since_ms = now_ms;
            ++absent_;
        }
    }
}

void PortCounterTracker::set_present(PortCounterState& s, bool present, int64_t now_ms) {
    if (present) {
        if (s.absent_since_ms != 0) --absent_;
        s.absent_since_ms = 0;
    } else if (s.absent_since_ms == 0) {
        s.absent_since_ms = now_ms;
        ++absent_;
    }
}

void PortCounterTracker::mark_present(const std::shared_ptr<const PortStates>& states, int64_t now_ms) {
    if (!states->diff_from(marked_)) {
        mark_present([&states](Guid g, int port) { return states->has_port(g, port); }, now_ms);
        marked_ = states;
        return;
    }
    // Every other port kept its presence since the last mark, and so its absent_since_ms.
    const std::shared_ptr<const PortStates> base = marked_;
    auto set = [&](Guid g, int port, bool present) {
        if (auto it = ports_.find(PortKey{g, port}); it != ports_.end()) set_present(it->second, present, now_ms);
    };
    for (const PortStates::Change& c : states->changes) {
        if (c.kind == PortStates::Change::Kind::appeared) {
            const PortStates::Entry& e = states->entries[c.entry];
            set(e.guid, e.port, true);
        } else if (c.kind == PortStates::Change::Kind::vanished) {
            const PortStates::Entry& e = base->entries[c.entry];
            set(e.guid, e.port, false);
        }
    }
    for (const PortKey& k : added_)
        if (auto it = ports_.find(k); it != ports_.end()) set_present(it->second, states->has_port(k.first, k.second), now_ms);
    added_.clear();
    marked_ = states;
}

size_t PortCounterTracker::forget_absent(int64_t now_ms) {
    if (absent_ == 0) return 0;  // called per counter batch: no scan while every port is in the fabric
    // A row after the port left the snapshot means the perfmgr still reads it: the grace restarts.
    const size_t n = std::erase_if(ports_, [&](const auto& kv) {
        const PortCounterState& s = kv.second;
        const bool gone = s.absent_since_ms != 0 && now_ms - std::max(s.absent_since_ms, s.updated_ms) >= opt_.window_ms;
        if (gone) {
            growing_.erase(kv.first);
            log_change(kv.first);
        }
        return gone;
    });
    forgotten_ += n;
    absent_ -= n;
    return n;
}

std::vector<PortErrorGrowth> PortCounterTracker::over_threshold(int64_t now_ms, int64_t* changes_at) const {
    std::vector<PortErrorGrowth> out;
    int64_t next = std::numeric_limits<int64_t>::max();
    for (const PortKey& k : growing_) {  // the ports with growth kept: not a pass over every port
        const PortCounterState& s = ports_.at(k);
        std::array<PortErrorGrowth, wire::kPortCounterCount> g{};
        for (const PortCounterState::Growth& x : s.recent) {
            if (x.at_ms > now_ms) next = std::min(next, x.at_ms);  // enters the window then
            if (now_ms - x.at_ms >= opt_.window_ms || x.at_ms > now_ms) continue;
            next = std::min(next, x.at_ms + opt_.window_ms);        // leaves it then
            PortErrorGrowth& e = g[x.counter];
            if (e.increase == 0) e.first_ms = x.at_ms;
            e.increase += x.amount;
            e.last_ms = x.at_ms;
        }
        for (size_t c = 0; c < wire::kPortCounterCount; ++c) {
            const auto& max = opt_.max_per_window[c];
            if (!max || g[c].increase <= *max) continue;
            PortErrorGrowth e = g[c];
            e.guid = k.first;
            e.port = k.second;
            e.counter = static_cast<wire::PortCounter>(c);
            e.threshold = *max;
            out.push_back(e);
        }
    }
    std::sort(out.begin(), out.end(), [](const PortErrorGrowth& x, const PortErrorGrowth& y) {
        return std::tuple(x.guid, x.port, x.counter) < std::tuple(y.guid, y.port, y.counter);
    });
    if (changes_at) *changes_at = next;
    return out;
}

const PortCounterState* PortCounterTracker::find(Guid g, int port) const {
    auto it = ports_.find({g, port});
    return it == ports_.end() ? nullptr : &it->second;
}

}  // namespace ibf
