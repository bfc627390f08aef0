// bench_plugin_snapshot: one sweep's way from OpenSM's memory to the daemon's Snapshot at the size
// of the largest subnets, on a synthetic osm_subn (3-tier fat-tree of radix-64 switches, one LID per
// host and per switch, an LFT per switch): the plugin's copy under the lock (copy_subnet +
// LftCache::refresh), what follows it off the lock (finish_copy + fill), the version 2 encoder
// (SnapshotWriter) and decoder (wire::Decoder, part by part), for a first sweep (every table
// sent), a sweep that changed nothing and one that re-routed 1 % of the switches; the version 1
// JSON frame for comparison. The steady-state sweeps get what OpenSM's LFT_CHANGE events would
// have marked (LftMarks: nothing, or the re-routed switches, one mark per 64-LID block as OpenSM
// reports them), so only those tables are read under the lock; one more sweep compares every
// table (no events: the first sweep as master, a sweep error), and the cost of the marks
// themselves inside report(LFT_CHANGE) is timed. Times are thread CPU ms. docs/benchmarks.md has
// the figures.
//
//   build/bin/bench_plugin_snapshot --lids 48000 [--runs 3] [--no-v1]
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../src/osm_headers.h"
#include "fake_subnet.h"
#include "ibf/osm_copy.h"
#include "ibf/wire.h"

namespace {

using ibf::Guid;
using ibf::osm::FakeSubnet;

// Thread CPU time: the machine is shared, wall clock would measure the neighbours.
struct Clock {
    using time_point = double;
    static double now() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
    }
};
double ms_since(double t) { return Clock::now() - t; }

long rss_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    return 0;
}

struct Sweep {
    double lock_ms = 0, copy_ms = 0, after_ms = 0, encode_ms = 0, decode_ms = 0;
    size_t bytes = 0, parts = 0, sent = 0, unchanged = 0;
    ibf::osm::LftRefresh lft;
};

Sweep one_sweep(FakeSubnet& fs, ibf::osm::SubnetCopy& raw, ibf::osm::LftCache& cache, ibf::osm::LftMarks& marks,
                ibf::wire::LftHashes& delivered, ibf::wire::Decoder& dec) {
    Sweep r;
    auto snap = std::make_shared<ibf::Snapshot>();
    ibf::osm::LftChanges changes;
    auto t0 = Clock::now();
    ibf::osm::copy_subnet(fs.osm, raw);
    r.copy_ms = ms_since(t0);
    changes = marks.take();
    r.lft = cache.refresh(fs.osm, raw.lids, changes);
    r.lock_ms = ms_since(t0);
    auto t1 = Clock::now();
    ibf::osm::build_snapshot(raw, *snap);
    cache.fill(*snap);
    r.after_ms = ms_since(t1);
    ibf::wire::SnapshotWriter w(*snap, delivered);
    std::string frame;
    for (;;) {
        auto te = Clock::now();
        const bool more = w.next(frame);
        r.encode_ms += ms_since(te);
        if (!more) break;
        r.bytes += frame.size();
        ++r.parts;
        auto td = Clock::now();
        dec.feed(frame.data(), frame.size());
        while (auto m = dec.next())
            if (!std::holds_alternative<ibf::Snapshot>(*m)) std::fprintf(stderr, "unexpected message\n");
        r.decode_ms += ms_since(td);
    }
    delivered = w.take_delivered();
    r.sent = w.lfts_sent();
    r.unchanged = w.lfts_unchanged();
    return r;
}

void print(const char* what, const Sweep& s) {
    std::printf("  %-26s under lock %7.1f ms (copy %6.1f, LFTs %6.1f; %zu of %zu tables read, %zu copied; %s)  after %6.1f ms  "
                "v2 %8.2f MB in %3zu parts (%zu LFTs sent, %zu unchanged)  encode %6.1f ms  decode %7.1f ms\n",
                what, s.lock_ms, s.copy_ms, s.lock_ms - s.copy_ms, s.lft.compared, s.lft.switches, s.lft.copied,
                s.lft.scope == ibf::osm::LftWhy::Reuse ? "marked + audit" : std::string(to_string(s.lft.scope)).c_str(),
                s.after_ms, s.bytes / 1e6, s.parts, s.sent, s.unchanged, s.encode_ms, s.decode_ms);
}

// What report(LFT_CHANGE) does for every 64-LID block a switch acknowledged: one mark. Returns
// the CPU ns per mark.
double mark_blocks(ibf::osm::LftMarks& marks, const FakeSubnet& fs, size_t every) {
    const size_t blocks = (fs.next_lid + 63u) / 64u;
    size_t n = 0;
    auto t0 = Clock::now();
    for (size_t b = 0; b < blocks; ++b)  // OpenSM sends block-major: block b of every switch, then b + 1
        for (size_t i = 0; i < fs.switches.size(); i += every, ++n)
            marks.mark(cl_ntoh64(fs.switches[i]->p_node->node_info.node_guid));
    return n ? ms_since(t0) * 1e6 / static_cast<double>(n) : 0;
}

}  // namespace

int main(int argc, char** argv) {
    size_t lids = 48000;
    int runs = 3;
    bool v1 = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--lids" && i + 1 < argc) lids = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
        else if (a == "--no-v1") v1 = false;
        else {
            std::fprintf(stderr, "usage: bench_plugin_snapshot [--lids N (<= 49151)] [--runs N] [--no-v1]\n");
            return 2;
        }
    }
    if (lids < 100 || lids > 49151 || runs < 1) {
        std::fprintf(stderr, "bench_plugin_snapshot: --lids must be 100..49151 and --runs >= 1\n");
        return 2;
    }
    FakeSubnet fs;
    fs.build(lids);
    std::printf("synthetic subnet: %u LIDs, %zu nodes, %zu switches (LFTs of %u LIDs); RSS %ld MB\n",
                fs.next_lid - 1, fs.nodes.size(), fs.switches.size(), fs.next_lid, rss_kb() / 1024);
    for (int run = 0; run < runs; ++run) {
        ibf::osm::SubnetCopy raw;  // a plugin just loaded: kept between its sweeps
        ibf::osm::LftCache cache;
        ibf::osm::LftMarks marks;
        ibf::wire::LftHashes delivered;  // a connection just opened
        ibf::wire::Decoder dec;
        std::string h = ibf::wire::encode(ibf::wire::Message(ibf::wire::Hello{.wire_version = 2}));
        dec.feed(h.data(), h.size());
        (void)dec.next();
        std::printf("run %d\n", run + 1);
        print("first sweep", one_sweep(fs, raw, cache, marks, delivered, dec));
        print("nothing changed", one_sweep(fs, raw, cache, marks, delivered, dec));
        for (size_t i = 0; i < fs.lfts.size(); i += 100) fs.lfts[i][1 + i % (fs.next_lid - 1)] ^= 1;  // 1 % re-routed
        const double ns_mark = mark_blocks(marks, fs, 100);  // ... and reported, block by block
        print("1 % of LFTs changed", one_sweep(fs, raw, cache, marks, delivered, dec));
        marks.note({.first_master_sweep = true});  // e.g. the first sweep after becoming master
        print("unchanged, all compared", one_sweep(fs, raw, cache, marks, delivered, dec));
        const double ns_all = mark_blocks(marks, fs, 1);  // every block of every switch re-sent
        (void)marks.take();
        std::printf("  report(LFT_CHANGE): %.0f ns per mark for a 1 %% re-route (%zu marks), %.0f ns for every block of "
                    "every switch (%zu marks)\n",
                    ns_mark, ((fs.next_lid + 63u) / 64u) * ((fs.switches.size() + 99) / 100), ns_all,
                    ((fs.next_lid + 63u) / 64u) * fs.switches.size());
        std::printf("  RSS %ld MB\n", rss_kb() / 1024);
    }
    if (v1) {
        ibf::Snapshot s;
        ibf::osm::SubnetCopy raw;
        auto t0 = Clock::now();
        ibf::osm::copy_subnet(fs.osm, raw);
        ibf::osm::build_snapshot(raw, s);
        ibf::osm::copy_lfts(fs.osm, s);
        const double copy = ms_since(t0);
        auto t1 = Clock::now();
        try {
            std::string f = ibf::wire::encode(s);
            std::printf("v1 JSON: the Fabric and every LFT built (what was under the lock before) %.1f ms, frame %.2f MB, "
                        "encode %.1f ms\n", copy, f.size() / 1e6, ms_since(t1));
        } catch (const ibf::wire::Error& e) {
            std::printf("v1 JSON: copy as before %.1f ms; the encoder refuses it: %s\n", copy, e.what());
        }
    }
    return 0;
}
