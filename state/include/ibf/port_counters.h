// Per-port counter state from OpenSM's perfmgr (wire PortCounters, docs/metrics.md "Port
// counters"), and which error counters grow faster than their threshold. Pure: no I/O, no clocks
// (every time is passed in, unix ms). ControllerState owns the only instance on the daemon's io
// thread (docs/threading.md).
//
//   ibf::PortCounterTracker t(ibf::PortErrorOptions{});           // defaults: docs/daemon.md
//   t.on_row(sm_guid, row, now);            // each wire::PortCounterRow from the master's plugin
//   for (const ibf::PortErrorGrowth& g : t.over_threshold(now)) ...  // port_errors findings
//   t.find(guid, port)->total[0]            // SymbolErrorCounter as /metrics exports it (null: no data)
//
// What arrives: per port, the plugin's sums of the perfmgr's per-sweep deltas since OpenSM loaded
// it (absolute counts that only grow while that OpenSM runs). The daemon keeps its own monotonic
// total per counter: the first value it sees is the baseline (the total starts there; it is not
// growth), a higher value adds the difference, and a LOWER value is a reset (OpenSM restarted, or
// another SM's plugin now reports): a new baseline, never a negative delta. A row from a different
// SM than the port's last one is a baseline too (each OpenSM sums from its own start).
// Growth in the window: the sum of the increases seen in the last `window_ms`; a counter is over
// its threshold when that sum is ABOVE `max_per_window` (0: any increase). It clears by itself
// once the growth leaves the window.
// Trend: a port whose error counters (symbol_errors .. vl15_dropped) ever grew keeps its error
// totals of its last kTrendSamples readings (the page's sparklines); clean ports keep none.
// Ports that left: mark_present() after each snapshot that becomes the fabric notes which ports
// are in it (their node is, with that port number); forget_absent() drops a port that has been
// out of it, without a row either, for `window_ms` or longer. A port that flaps (a host reboots, a
// cable is reseated) keeps its baseline, total and growth as long as it is back within the window;
// one gone longer has no growth left in the window anyway (docs/metrics.md, "Port counters").
//
// Copy-on-write in parts (docs/threading.md): the ports are kept in kShards shards by their node
// GUID, each shared between copies of the tracker until one of them writes to it; the change log
// and the ports added since the last mark are kept in shared chunks the same way. Copying a
// tracker copies pointers only (O(kShards + log chunks)); a write then copies the shards it writes
// to (a row batch: at most one per distinct node in it) and the newest log chunk. A copy stays
// unchanged whatever the original does, so a reader on another thread may hold one (const) while
// the owner writes; only the owning (io) thread may drop a reference (the shards' use counts
// decide what is copied).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/port_error_options.h"
#include "ibf/port_states.h"
#include "ibf/wire.h"

namespace ibf {

// IBA's attribute name, as perfquery prints it: "SymbolErrorCounter", "PortRcvErrors", ...
std::string_view iba_name(wire::PortCounter c);
// A window for people: 3600000 -> "1 h", 600000 -> "10 min", 90000 -> "90 s".
std::string duration_text(int64_t ms);

// The error counters (symbol_errors .. vl15_dropped): growth within the window is kept for them
// whether watched or not, and they are the page's counters panel. PortXmitWait is congestion.
inline constexpr size_t kErrorCounterCount = 12;
inline constexpr size_t kTrendSamples = 16;  // readings per port kept for the trend

struct PortCounterState {
    Guid sm = 0;                                            // the SM whose plugin sent the last row
    std::array<uint64_t, wire::kPortCounterCount> last{};   // its last values (for deltas)
    std::array<uint64_t, wire::kPortCounterCount> total{};  // the daemon's monotonic totals (/metrics)
    int64_t updated_ms = 0;
    // Increases of watched counters within the window: (time, counter, amount), oldest first.
    struct Growth {
        int64_t at_ms;
        uint8_t counter;
        uint64_t amount;
    };
    std::vector<Growth> recent;  // a few entries: pruned at the front (no allocation while empty)
    // The error totals at each of the last kTrendSamples readings, oldest first; empty while every
    // error total is 0 (the first sample is then the reading before the first error, all zeros).
    struct Sample {
        int64_t at_ms;
        std::array<uint64_t, kErrorCounterCount> total;
    };
    std::vector<Sample> trend;
    int64_t absent_since_ms = 0;  // out of the fabric since (mark_present), 0 = in it or not known
};

// One counter of one port over its threshold at some time.
struct PortErrorGrowth {
    Guid guid = 0;
    int port = 0;
    wire::PortCounter counter{};
    uint64_t increase = 0;       // within the window
    uint64_t threshold = 0;      // max_per_window
    int64_t first_ms = 0, last_ms = 0;  // first and last increase within the window
};

// An append-only sequence of ports in fixed-size chunks that copies of it share: copying it
// copies the chunk pointers, an append copies the newest chunk first while it is shared, and full
// chunks never change again. Owned like the tracker that holds it.
class PortKeyLog {
public:
    using PortKey = std::pair<Guid, int>;
    static constexpr size_t kChunk = 1024;
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    void push_back(const PortKey& k);
    void drop_front(size_t n);  // the oldest n (n <= size())
    void clear();
    // The entries from index `from` (0: the oldest kept) on, appended to `out`.
    void append_from(size_t from, std::vector<PortKey>& out) const;
    template <class F>
    void for_each(F&& f) const {
        size_t skip = first_;
        for (const auto& c : chunks_) {
            for (size_t i = skip; i < c->size(); ++i) f((*c)[i]);
            skip = 0;
        }
    }

private:
    std::vector<std::shared_ptr<std::vector<PortKey>>> chunks_;
    size_t first_ = 0;  // the oldest entry's index in chunks_.front()
    size_t size_ = 0;
};

class PortCounterTracker {
public:
    using PortKey = std::pair<Guid, int>;
    struct PortKeyHash {
        size_t operator()(const PortKey& k) const { return std::hash<Guid>()(k.first) * 31 + static_cast<size_t>(k.second); }
    };
    // Shards of the ports (a power of two); all ports of a node share one.
    static constexpr size_t kShards = 8192;
    static size_t shard_of(Guid g);
    explicit PortCounterTracker(PortErrorOptions o = {}) : opt_(std::move(o)) {}
    void set_options(PortErrorOptions o) { opt_ = std::move(o); }
    const PortErrorOptions& options() const { return opt_; }

    void on_row(Guid sm, const wire::PortCounterRow& r, int64_t now_ms);

    // After each snapshot that becomes the fabric: `in_fabric(guid, port)` says whether the port
    // is in it; a port that is not starts (or keeps) its absence at `now_ms`.
    //   t.mark_present([&](ibf::Guid g, int p) { return has_port(fabric, g, p); }, now);
    void mark_present(const std::function<bool(Guid, int)>& in_fabric, int64_t now_ms);
    // The same from the fabric's port states (model/port_states.h, made on ibfabricd's decode
    // thread; `states->unique` required): when they were made from the states marked last, only
    // the ports whose presence changed and those with a first row since are touched (O(changes));
    // otherwise every port, a binary search each. The outcome is mark_present()'s.
    void mark_present(const std::shared_ptr<const PortStates>& states, int64_t now_ms);
    // Drops the ports out of the fabric, and without a row, for window_ms or longer. Returns how many.
    size_t forget_absent(int64_t now_ms);

    // Counters over their threshold at `now_ms`, sorted by (guid, port, counter). `changes_at` (when
    // given): the answer stays the same for every time in [now_ms, *changes_at) while no row comes
    // and no port is dropped (the first growth to leave the window, or a future-dated one to enter
    // it; INT64_MAX: never), so a caller can keep it per version().
    std::vector<PortErrorGrowth> over_threshold(int64_t now_ms, int64_t* changes_at = nullptr) const;
    // The ports with counter state: how many, and each (in no particular order).
    //   t.for_each_port([&](const ibf::PortCounterTracker::PortKey& k, const ibf::PortCounterState& s) { ... });
    size_t port_count() const { return port_count_; }
    bool empty() const { return port_count_ == 0; }
    template <class F>
    void for_each_port(F&& f) const {
        for (const auto& sh : shards_)
            if (sh)
                for (const auto& e : sh->ports) f(e.first, e.second);
    }
    const PortCounterState* find(Guid g, int port) const;
    // Shard i's storage (null: no port in it): equal in two copies of a tracker while they share
    // the shard (tests, docs/threading.md).
    const void* shard_address(size_t i) const { return shards_[i].get(); }
    uint64_t rows_total() const { return rows_; }
    uint64_t resets_total() const { return resets_; }      // counters that went down (new baselines)
    uint64_t baselines_total() const { return baselines_; }  // ports (re)based: first row, or another SM
    uint64_t forgotten_total() const { return forgotten_; }  // ports dropped by forget_absent()
    // Changes with every row and every port dropped (what /metrics' rendered counter families follow).
    uint64_t version() const { return rows_ + forgotten_; }
    // The ports with a row or dropped after version `since` (repeats possible), appended to `out`,
    // so that a renderer re-renders only their links; false (nothing appended) when the log no
    // longer reaches back that far, or `since` is ahead of this state: then every port may differ.
    bool changed_since(uint64_t since, std::vector<PortKey>& out) const;

private:
    void prune(PortCounterState& s, int64_t now_ms) const;

    // A few ports in one allocation (copied with a shard: no allocation per port but for a
    // port's non-empty `recent` and `trend`).
    struct Shard {
        std::vector<std::pair<PortKey, PortCounterState>> ports;  // sorted by key
        // Its ports whose `recent` is not empty (growth within, or not yet pruned from, the
        // window): over_threshold() reads only the shards with some, so its cost follows the
        // erring ports, not the fabric.
        size_t growing = 0;
        size_t absent = 0;  // its ports with absent_since_ms != 0
        const PortCounterState* find(const PortKey& k) const;
        PortCounterState* find(const PortKey& k);
    };
    // Shard i, to write: created when missing, copied first while another tracker shares it.
    Shard& shard_for_write(size_t i);

    PortErrorOptions opt_;
    // kShards entries (null: no port yet); a shard is never changed while two trackers hold it.
    std::vector<std::shared_ptr<Shard>> shards_ = std::vector<std::shared_ptr<Shard>>(kShards);
    size_t port_count_ = 0;
    // A bit per shard with Shard::growing > 0: over_threshold() visits only those (a 1 KiB copy).
    std::array<uint64_t, kShards / 64> growing_shards_{};
    void note_growing(size_t i);  // sets or clears shard i's bit from its `growing`
    uint64_t rows_ = 0, resets_ = 0, baselines_ = 0, forgotten_ = 0;
    // The port of every version step since log_base_: log_[i] made version log_base_ + i + 1.
    // Trimmed to its newer half once longer than twice the ports (and 4096), so it stays O(ports).
    PortKeyLog log_;
    uint64_t log_base_ = 0;
    void log_change(const PortKey& k);
    size_t absent_ = 0;  // ports out of the fabric at the last mark_present() and not dropped since
    // (absent_ counts exactly the ports with absent_since_ms != 0, the sum of the shards' absent.)
    void set_present(Shard& sh, PortCounterState& s, bool present, int64_t now_ms);
    // Sets port k's presence, copying its shard only when that changes it (no port: nothing).
    void set_present(const PortKey& k, bool present, int64_t now_ms);
    std::shared_ptr<const PortStates> marked_;  // the port states marked last (null: a predicate)
    PortKeyLog added_;                          // ports with a first row since the last mark
};

}  // namespace ibf
