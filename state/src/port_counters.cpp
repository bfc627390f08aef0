// PortCounterTracker: per-port totals with resets as new baselines, growth within a window.
#include "ibf/port_counters.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>
#include <utility>

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
    auto keep = s.recent.begin();
    while (keep != s.recent.end() && now_ms - keep->at_ms >= opt_.window_ms) ++keep;
    s.recent.erase(s.recent.begin(), keep);
}

void PortKeyLog::push_back(const PortKey& k) {
    if (chunks_.empty() || chunks_.back()->size() == kChunk) {
        chunks_.push_back(std::make_shared<std::vector<PortKey>>());
        chunks_.back()->reserve(kChunk);
    } else if (chunks_.back().use_count() > 1) {  // another copy shares it: copy it first
        auto c = std::make_shared<std::vector<PortKey>>();
        c->reserve(kChunk);
        c->assign(chunks_.back()->begin(), chunks_.back()->end());
        chunks_.back() = std::move(c);
    }
    chunks_.back()->push_back(k);
    ++size_;
}

void PortKeyLog::drop_front(size_t n) {
    size_ -= n;
    first_ += n;
    size_t whole = 0;  // chunks entirely dropped
    while (whole < chunks_.size() && first_ >= chunks_[whole]->size() && first_ > 0) {
        first_ -= chunks_[whole]->size();
        ++whole;
    }
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(whole));
    if (chunks_.empty()) first_ = 0;
}

void PortKeyLog::clear() {
    chunks_.clear();
    first_ = size_ = 0;
}

void PortKeyLog::append_from(size_t from, std::vector<PortKey>& out) const {
    size_t skip = first_ + from;
    for (const auto& c : chunks_) {
        if (skip >= c->size()) {
            skip -= c->size();
            continue;
        }
        out.insert(out.end(), c->begin() + static_cast<std::ptrdiff_t>(skip), c->end());
        skip = 0;
    }
}

size_t PortCounterTracker::shard_of(Guid g) {
    uint64_t x = g;  // splitmix64's finalizer: GUIDs are often sequential
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<size_t>(x & (kShards - 1));
}

namespace {

template <class Entries>
auto entry_at(Entries& ports, const PortCounterTracker::PortKey& k) {
    return std::lower_bound(ports.begin(), ports.end(), k, [](const auto& e, const auto& key) { return e.first < key; });
}

}  // namespace

const PortCounterState* PortCounterTracker::Shard::find(const PortKey& k) const {
    auto it = entry_at(ports, k);
    return it != ports.end() && it->first == k ? &it->second : nullptr;
}

PortCounterState* PortCounterTracker::Shard::find(const PortKey& k) {
    auto it = entry_at(ports, k);
    return it != ports.end() && it->first == k ? &it->second : nullptr;
}

void PortCounterTracker::note_growing(size_t i) {
    const uint64_t bit = uint64_t{1} << (i % 64);
    if (shards_[i] && shards_[i]->growing > 0)
        growing_shards_[i / 64] |= bit;
    else
        growing_shards_[i / 64] &= ~bit;
}

PortCounterTracker::Shard& PortCounterTracker::shard_for_write(size_t i) {
    std::shared_ptr<Shard>& sh = shards_[i];
    if (!sh)
        sh = std::make_shared<Shard>();
    else if (sh.use_count() > 1)  // shared with a copy (a render's): this tracker gets its own
        sh = std::make_shared<Shard>(*sh);
    return *sh;
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
    if (log_.size() > std::max<size_t>(4096, 2 * port_count_)) {
        const size_t drop = log_.size() / 2;
        log_.drop_front(drop);
        log_base_ += drop;
    }
}

bool PortCounterTracker::changed_since(uint64_t since, std::vector<PortKey>& out) const {
    if (since < log_base_ || since > version()) return false;
    log_.append_from(static_cast<size_t>(since - log_base_), out);
    return true;
}

void PortCounterTracker::on_row(Guid sm, const wire::PortCounterRow& r, int64_t now_ms) {
    ++rows_;
    log_change(PortKey{r.node_guid, r.port});
    const size_t shard = shard_of(r.node_guid);
    Shard& sh = shard_for_write(shard);
    const PortKey key{r.node_guid, r.port};
    auto it = entry_at(sh.ports, key);
    const bool fresh = it == sh.ports.end() || it->first != key;
    if (fresh) it = sh.ports.emplace(it, key, PortCounterState{});
    PortCounterState& s = it->second;
    const bool was_growing = !s.recent.empty();
    if (fresh) {
        ++port_count_;
        added_.push_back(it->first);
    }
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
    if (was_growing != !s.recent.empty()) {
        if (was_growing)
            --sh.growing;
        else
            ++sh.growing;
        note_growing(shard);
    }
}

void PortCounterTracker::mark_present(const std::function<bool(Guid, int)>& in_fabric, int64_t now_ms) {
    marked_.reset();
    added_.clear();
    absent_ = 0;
    auto mark = [&](const PortKey& k, PortCounterState& s, Shard& sh) {
        if (in_fabric(k.first, k.second)) {
            s.absent_since_ms = 0;
        } else {
            if (s.absent_since_ms == 0) s.absent_since_ms = now_ms;
            ++sh.absent;
        }
    };
    for (size_t i = 0; i < shards_.size(); ++i) {
        if (!shards_[i]) continue;
        if (shards_[i].use_count() > 1) {
            // Shared with a copy: copied only when a port's presence changes.
            const Shard& r = *shards_[i];
            size_t absent = 0;
            bool changes = false;
            for (const auto& [k, s] : r.ports) {  // (no write: only the predicate)
                const bool in = in_fabric(k.first, k.second);
                absent += in ? 0 : 1;
                changes = changes || (in ? s.absent_since_ms != 0 : s.absent_since_ms == 0);
            }
            if (!changes) {
                absent_ += absent;
                continue;
            }
        }
        Shard& sh = shard_for_write(i);
        sh.absent = 0;
        for (auto& [k, s] : sh.ports) mark(k, s, sh);
        absent_ += sh.absent;
    }
}

void PortCounterTracker::set_present(Shard& sh, PortCounterState& s, bool present, int64_t now_ms) {
    if (present) {
        if (s.absent_since_ms != 0) {
            --absent_;
            --sh.absent;
        }
        s.absent_since_ms = 0;
    } else if (s.absent_since_ms == 0) {
        s.absent_since_ms = now_ms;
        ++absent_;
        ++sh.absent;
    }
}

void PortCounterTracker::set_present(const PortKey& k, bool present, int64_t now_ms) {
    const size_t i = shard_of(k.first);
    const PortCounterState* r = shards_[i] ? std::as_const(*shards_[i]).find(k) : nullptr;
    if (!r || (present ? r->absent_since_ms == 0 : r->absent_since_ms != 0)) return;  // no port, or no change
    Shard& sh = shard_for_write(i);
    set_present(sh, *sh.find(k), present, now_ms);
}

void PortCounterTracker::mark_present(const std::shared_ptr<const PortStates>& states, int64_t now_ms) {
    if (!states->diff_from(marked_)) {
        mark_present([&states](Guid g, int port) { return states->has_port(g, port); }, now_ms);
        marked_ = states;
        return;
    }
    // Every other port kept its presence since the last mark, and so its absent_since_ms.
    const std::shared_ptr<const PortStates> base = marked_;
    for (const PortStates::Change& c : states->changes) {
        if (c.kind == PortStates::Change::Kind::appeared) {
            const PortStates::Entry& e = states->entries[c.entry];
            set_present(PortKey{e.guid, e.port}, true, now_ms);
        } else if (c.kind == PortStates::Change::Kind::vanished) {
            const PortStates::Entry& e = base->entries[c.entry];
            set_present(PortKey{e.guid, e.port}, false, now_ms);
        }
    }
    added_.for_each([&](const PortKey& k) { set_present(k, states->has_port(k.first, k.second), now_ms); });
    added_.clear();
    marked_ = states;
}

size_t PortCounterTracker::forget_absent(int64_t now_ms) {
    if (absent_ == 0) return 0;  // called per counter batch: no scan while every port is in the fabric
    // A row after the port left the snapshot means the perfmgr still reads it: the grace restarts.
    auto gone = [&](const PortCounterState& s) {
        return s.absent_since_ms != 0 && now_ms - std::max(s.absent_since_ms, s.updated_ms) >= opt_.window_ms;
    };
    size_t n = 0;
    for (size_t i = 0; i < shards_.size(); ++i) {
        const Shard* r = shards_[i].get();
        if (!r || r->absent == 0 ||  // only the shards with absent ports, copied only when one goes
            std::none_of(r->ports.begin(), r->ports.end(), [&](const auto& kv) { return gone(kv.second); }))
            continue;
        Shard& sh = shard_for_write(i);
        const size_t k = std::erase_if(sh.ports, [&](const auto& kv) {
            if (!gone(kv.second)) return false;
            if (!kv.second.recent.empty()) --sh.growing;
            --port_count_;
            log_change(kv.first);
            return true;
        });
        sh.absent -= k;
        note_growing(i);
        n += k;
    }
    forgotten_ += n;
    absent_ -= n;
    return n;
}

std::vector<PortErrorGrowth> PortCounterTracker::over_threshold(int64_t now_ms, int64_t* changes_at) const {
    std::vector<PortErrorGrowth> out;
    int64_t next = std::numeric_limits<int64_t>::max();
    for (size_t w = 0; w < growing_shards_.size(); ++w) {  // the shards with growth kept: not every port
        for (uint64_t bits = growing_shards_[w]; bits; bits &= bits - 1) {
            const Shard& sh = *shards_[w * 64 + static_cast<size_t>(std::countr_zero(bits))];
            for (const auto& [k, s] : sh.ports) {
                if (s.recent.empty()) continue;
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
        }
    }
    std::sort(out.begin(), out.end(), [](const PortErrorGrowth& x, const PortErrorGrowth& y) {
        return std::tuple(x.guid, x.port, x.counter) < std::tuple(y.guid, y.port, y.counter);
    });
    if (changes_at) *changes_at = next;
    return out;
}

const PortCounterState* PortCounterTracker::find(Guid g, int port) const {
    const Shard* sh = shards_[shard_of(g)].get();
    if (!sh) return nullptr;
    return sh->find({g, port});
}

}  // namespace ibf
