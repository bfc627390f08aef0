// bench_routes: routing validation (check_routes) and lft_paths on synthetic fat-trees with
// minimum-hop tables (synth_lfts). Prints CPU milliseconds, median of 3, one run above 2 s
// (docs/benchmarks.md).
//
//   bench_routes                 # 2-level radix 64 (2,048 hosts) and 3-level radix 64 (44,500 hosts)
//   bench_routes 3 64 16000      # levels radix hosts
//   bench_routes 3 64 44500 live # only the daemon's per-sweep step (no full validation timed)
//   bench_routes 3 64 44500 incremental  # only RouteCheckCache over sweeps (full, none, 1 % re-routed)
//   bench_routes 3 64 44500 threads      # only a full validation on 1, 2 and 4 threads (wall and CPU ms)
//   bench_routes 3 64 44500 threads T    # only a full validation on T threads, 3 runs
//   bench_routes 3 64 44500 worker [T]   # only the check thread's run_check + finish_routes (T route threads)
//   bench_routes 3 64 44500 digest       # only digests of full validations, tables as made and damaged
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <ctime>
#include <vector>

#include "ibf/analysis.h"
#include "ibf/lft.h"
#include "ibf/live_routes.h"
#include "ibf/pipeline.h"
#include "ibf/route_check.h"
#include "ibf/synth.h"

namespace {

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Median of 3 runs (one run when the first takes more than 2 s).
template <class F>
double median3(F&& f) {
    std::vector<double> ms;
    for (int i = 0; i < 3 && (i == 0 || ms[0] < 2000); ++i) {
        const double t0 = cpu_ms();
        f();
        ms.push_back(cpu_ms() - t0);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

double wall_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A hash of everything a RouteCheck says (counts, histograms, per-port pairs, the switch routes
// unless told not to, every finding's text): two builds give the same digest when they give the
// same result.
uint64_t digest(const ibf::RouteCheck& rc, bool switch_routes = true) {
    uint64_t h = 0xcbf29ce484222325ULL;
    auto add = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; };
    auto text = [&](const std::string& s) {
        for (char c : s) add(static_cast<uint8_t>(c));
        add(s.size());
    };
    for (long v : {rc.pairs, rc.routed, rc.unreachable, rc.looping, rc.unverified, rc.non_minimal}) add(static_cast<uint64_t>(v));
    add(static_cast<uint64_t>(rc.max_hops)), add(static_cast<uint64_t>(rc.credit_loops));
    for (long v : rc.hop_histogram) add(static_cast<uint64_t>(v));
    for (long v : rc.port_pairs) add(static_cast<uint64_t>(v));
    if (rc.switch_routes && switch_routes) {
        const ibf::LftPaths& p = *rc.switch_routes;
        for (long v : {p.routes, p.unrouted, p.broken, static_cast<long>(p.max_hops)}) add(static_cast<uint64_t>(v));
        for (long v : p.hop_histogram) add(static_cast<uint64_t>(v));
    }
    for (const ibf::Finding& fd : rc.findings) text(fd.a.name + fd.b.name + fd.expected + fd.actual + fd.message);
    return h;
}

// A full validation (a first sweep, any cabling change) on 1, 2 and 4 threads, and on one thread
// without the switch-to-host routes (what the live analysis no longer computes itself): wall and
// CPU ms of one run each, and whether the results agree. `only` > 0: `runs` runs on that many
// threads alone (to compare two builds: the fastest run is the least disturbed).
void threads(const ibf::Fabric& f, const ibf::Analysis& a, const std::vector<ibf::SwitchLft>& lfts, unsigned only = 0, int runs = 1) {
    const ibf::RouteGraph g(f, lfts);
    std::string first;
    auto one = [&](const char* what, ibf::RouteCheckOptions opt) {
        const double w0 = wall_ms(), c0 = cpu_ms();
        const ibf::RouteCheck rc = ibf::check_routes(g, a, opt);
        const double wall = wall_ms() - w0, cpu = cpu_ms() - c0;
        const std::string key = std::to_string(rc.pairs) + "/" + std::to_string(rc.routed) + "/" + std::to_string(rc.findings.size()) +
                                "/" + std::to_string(rc.credit_loops) + "/" + std::to_string(digest(rc, false));
        if (first.empty()) first = key;
        std::printf("  check_routes, %-34s %8.1f ms wall %8.1f ms CPU%s\n", what, wall, cpu,
                    key == first ? "" : "  (a different result: a bug)");
        if (key == first && what == std::string("1 thread:")) std::printf("    result digest %016llx\n", static_cast<unsigned long long>(digest(rc)));
    };
    ibf::RouteCheckOptions opt;
    if (only > 0) {
        opt.threads = only;
        for (int i = 0; i < runs; ++i) one((std::to_string(only) + (only == 1 ? " thread:" : " threads:")).c_str(), opt);
        return;
    }
    for (unsigned t : {1u, 2u, 4u}) {
        opt.threads = t;
        one((std::to_string(t) + (t == 1 ? " thread:" : " threads:")).c_str(), opt);
    }
    opt.threads = 1;
    opt.switch_routes = false;
    one("1 thread, no switch routes:", opt);
}

// Digests of full validations (1 and 2 threads) of the tables as they are and damaged: every
// 50th table with 200 random entries set to random ports or 255 (dead ends, loops, detours, credit
// loops), and one degraded uplink: to compare the results of two builds at this size.
void digests(const ibf::Fabric& f, const ibf::Analysis& a, std::vector<ibf::SwitchLft> lfts) {
    auto show = [&](const char* what, const ibf::RouteCheckOptions& base) {
        const ibf::RouteGraph g(f, lfts);
        for (unsigned t : {1u, 2u}) {
            ibf::RouteCheckOptions opt = base;
            opt.threads = t;
            const double w0 = wall_ms(), c0 = cpu_ms();
            const ibf::RouteCheck rc = ibf::check_routes(g, a, opt);
            std::printf("  %-10s %u thread%s: digest %016llx  %zu findings, %d credit loops, %ld unreachable, %ld looping, %ld non-minimal"
                        "  %8.1f ms wall %8.1f ms CPU\n",
                        what, t, t == 1 ? " " : "s", static_cast<unsigned long long>(digest(rc)), rc.findings.size(), rc.credit_loops,
                        rc.unreachable, rc.looping, rc.non_minimal, wall_ms() - w0, cpu_ms() - c0);
        }
    };
    show("as made", {});
    uint64_t x = 88172645463325252ULL;  // xorshift: the same damage in every build
    auto rnd = [&](uint64_t n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return x % n;
    };
    for (size_t i = 0; i < lfts.size(); i += 50) {
        const uint64_t ports = static_cast<uint64_t>(f.node(*f.find(lfts[i].switch_guid)).num_ports());
        lfts[i].edit([&](std::vector<uint8_t>& t) {  // new bytes: the hash becomes 0
            for (int k = 0; k < 200; ++k) {
                const uint64_t p = rnd(ports + 2);
                t[rnd(t.size())] = p == ports + 1 ? ibf::kLftNoPath : static_cast<uint8_t>(p);
            }
        });
    }
    // Detours: an entry moved to another switch port whose route still arrives without passing
    // back (down-up turns: non-minimal routes and credit loops).
    const ibf::RouteGraph g0(f, lfts);
    std::vector<uint32_t> ca_lids;
    for (const ibf::RouteDest& d : g0.dests()) ca_lids.push_back(d.lid);
    std::vector<ibf::SwitchLft*> table(static_cast<size_t>(g0.switches()), nullptr);
    for (ibf::SwitchLft& t : lfts) table[static_cast<size_t>(g0.sw_of(*f.find(t.switch_guid)))] = &t;
    for (int k = 0; k < 3000; ++k) {
        const int s = static_cast<int>(rnd(static_cast<uint64_t>(g0.switches())));
        const uint32_t lid = ca_lids[rnd(ca_lids.size())];
        const int p = 1 + static_cast<int>(rnd(static_cast<uint64_t>(g0.ports(s))));
        int cur = g0.hop(s, p), n = 0;
        while (cur >= 0 && cur != s && n++ < 8) {
            const uint8_t q = table[static_cast<size_t>(cur)]->port_by_lid()[lid];
            const int32_t h = q == ibf::kLftNoPath ? ibf::kHopDead : g0.hop(cur, q);
            if (h == ibf::kHopCa) break;
            cur = h;
        }
        if (cur < 0 || cur == s || n > 8) continue;
        table[static_cast<size_t>(s)]->edit([&](std::vector<uint8_t>& b) { b[lid] = static_cast<uint8_t>(p); });
    }
    ibf::RouteCheckOptions opt;
    for (ibf::NodeId n = 0; n < f.size() && opt.degraded.empty(); ++n)
        if (f.node(n).type == ibf::NodeType::Switch)
            for (int p = 1; p <= f.node(n).num_ports() && opt.degraded.empty(); ++p)
                if (f.node(n).port(p) && f.node(n).port(p)->linked() && f.node(f.node(n).port(p)->peer).type == ibf::NodeType::Switch)
                    opt.degraded.push_back({n, p, "1xHDR, expected 4xHDR: rate_mismatch"});
    show("damaged", opt);
}

// The daemon's check thread on a master snapshot with LFTs (no topology: the analysis and the
// route validation): run_check, after which the sweep's findings are published (the critical
// path: SUBNET UP -> findings), then finish_routes (after publishing); a first sweep and one
// that changed nothing (an equal snapshot: CheckMemo reuses the check and the analysis). Beside it the path before the validation counted where the tables lead:
// run_check without a LiveRouteCheck (analyze_live then runs lft_paths itself).
void worker(const ibf::Fabric& f, const std::vector<ibf::SwitchLft>& lfts, unsigned route_threads) {
    auto snap = std::make_shared<ibf::Snapshot>();
    snap->fabric = f;
    snap->lfts = lfts;
    snap->sweep_seq = 1;
    for (ibf::SwitchLft& t : snap->lfts) t.hash = ibf::lft_hash(t.port_by_lid());  // as the snapshot decoder sets them
    auto routes = std::make_shared<ibf::LiveRouteCheck>();
    auto memo = std::make_shared<ibf::CheckMemo>();
    auto timed = [](const char* what, auto&& fn) {
        const double w0 = wall_ms(), c0 = cpu_ms();
        fn();
        std::printf("  %-52s %8.1f ms wall %8.1f ms CPU\n", what, wall_ms() - w0, cpu_ms() - c0);
    };
    // Sweep 2 rebuilds the link table (the validation after sweep 1 brought route findings that
    // mark links); sweep 3 reuses it too.
    const char* names[] = {"", "first sweep: run_check (findings published after it)", "no change: run_check",
                           "no change again: run_check"};
    for (int sweep = 1; sweep <= 3; ++sweep) {
        ibf::WorkItem w{ibf::CheckJob{static_cast<uint64_t>(sweep), snap, 0, true}, nullptr, nullptr, {}, false};
        w.routes = routes;
        w.route_threads = route_threads;
        w.memo = memo;
        auto next = std::make_shared<ibf::Snapshot>(*snap);  // the next sweep: an equal snapshot, not the same object
        next->sweep_seq = static_cast<uint64_t>(sweep) + 1;
        ibf::CheckRun run;
        timed(names[sweep], [&] { run = ibf::run_check(w); });
        if (!run.result) {
            std::printf("  run_check failed: %s\n", run.error.c_str());
            return;
        }
        if (run.routes_pending) {
            ibf::RoutesDone d;
            timed(sweep == 1 ? "first sweep: finish_routes (after publishing)" : "no change: finish_routes", [&] {
                d = ibf::finish_routes(*run.routes_pending, *routes);
            });
            std::printf("    %zu findings, routing.lft routes %s\n", d.findings.size(),
                        d.routes_json.contains("switch_routes") ? d.routes_json["switch_routes"]["routes"].dump().c_str() : "-");
        } else {
            std::printf("    route validation cached (nothing changed)\n");
        }
        if (run.reused) std::printf("    check and analysis reused (CheckMemo: the same fabric, tables and plan)\n");
        snap = next;
    }
    std::shared_ptr<const ibf::LinkTable> last_links;
    {
        // The same unchanged sweep when the daemon keeps history: run_check also builds the row
        // (fabric_state of the whole fabric, for the store's comparison with the previous sweep).
        ibf::WorkItem h{ibf::CheckJob{4, snap, 0, true}, nullptr, nullptr, {}, true};
        h.routes = routes;
        h.route_threads = route_threads;
        h.memo = memo;
        timed("no change, with the history row: run_check", [&] { last_links = ibf::run_check(h).result->links; });
    }
    {
        // A re-route: 1 % of the tables changed (every 100th switch, 1 % of the CA LIDs each; the
        // same nodes, ports, links, rates and names). run_check split into its steps: the
        // analysis (analyze_ms), the check + route key (check_ms) and the rest (the link table).
        std::vector<ibf::SwitchLft> rerouted = snap->lfts;
        ibf::synth_reroute(f, rerouted, 100);
        auto moved = std::make_shared<ibf::Snapshot>(*snap);
        moved->lfts = std::move(rerouted);
        moved->sweep_seq = 5;
        ibf::WorkItem r{ibf::CheckJob{5, moved, 0, true}, nullptr, nullptr, {}, false};
        r.routes = routes;
        r.route_threads = route_threads;
        r.memo = memo;
        ibf::CheckRun run;
        const ibf::StepClock clock = [] { return wall_ms(); };
        double total = 0;
        timed("1 % of the tables re-routed: run_check", [&] {
            const double w0 = wall_ms();
            run = ibf::run_check(r, clock);
            total = wall_ms() - w0;
        });
        if (run.result)
            std::printf("    analysis %.1f ms, check + route key %.1f ms, link table and the rest %.1f ms (wall)%s\n",
                        run.result->analyze_ms, run.result->check_ms,
                        total - run.result->analyze_ms - run.result->check_ms, run.tables_only ? "; fabric parts reused" : "");
        if (run.result)
            std::printf("    %d lft_imbalance findings, the link table %s\n", run.result->analysis->lft_imbalanced,
                        run.result->links == last_links ? "reused" : "made again");
        if (run.routes_pending) timed("1 % re-routed: finish_routes (after publishing)", [&] {
            (void)ibf::finish_routes(*run.routes_pending, *routes);
        });
        snap = moved;
    }
    ibf::WorkItem old{ibf::CheckJob{6, snap, 0, true}, nullptr, nullptr, {}, false};
    timed("without route validation: run_check (lft_paths inside)", [&] { (void)ibf::run_check(old); });
}

// The daemon's step per sweep (pipeline/live_routes.h): the first validation in full, then the
// inputs' hash of a sweep that changed nothing, and nothing more (it equals the last one's).
void live_step(const ibf::Fabric& f, const ibf::Analysis& a, const std::vector<ibf::SwitchLft>& lfts) {
    auto snap = std::make_shared<ibf::Snapshot>();
    snap->fabric = f;
    snap->lfts = lfts;
    for (ibf::SwitchLft& t : snap->lfts) t.hash = ibf::lft_hash(t.port_by_lid());  // as the snapshot decoder sets them
    ibf::LiveRouteCheck live;
    const double t0 = cpu_ms();
    live.validate(ibf::route_job(snap, f, a.names, a.findings));
    std::printf("  live step, first sweep:    %8.1f ms\n", cpu_ms() - t0);
    bool hit = false;
    std::printf("  live step, no change:      %8.1f ms\n", median3([&] {
                    hit = live.cached(ibf::route_job(snap, f, a.names, a.findings).key) != nullptr;
                }));
    if (!hit) std::printf("  (the live step missed its cache: a bug)\n");
    // The same when the check memo says the fabric, tables and names are the last sweep's: only
    // the degraded links are compared.
    const ibf::RouteJob first = ibf::route_job(snap, f, a.names, a.findings);
    const ibf::RouteKeyHint hint{first.options.degraded, first.key};
    hit = false;
    std::printf("  live step, no change, reused check: %8.3f ms\n", median3([&] {
                    hit = live.cached(ibf::route_job(snap, f, a.names, a.findings, &hint).key) != nullptr;
                }));
    if (!hit) std::printf("  (the live step missed its cache: a bug)\n");
}

// RouteCheckCache over sweeps: the first (in full), one that changed nothing, and two re-routes of
// 1 % of the tables (one entry each; 1 % of the CA LIDs each).
void incremental(const ibf::Fabric& f, const ibf::Analysis& a, std::vector<ibf::SwitchLft> lfts) {
    for (ibf::SwitchLft& t : lfts) t.hash = ibf::lft_hash(t.port_by_lid());  // the decoder's hashes
    ibf::RouteCheckCache cache;
    auto step = [&](const char* what) {
        const double t0 = cpu_ms();
        const ibf::RouteCheck& rc = cache.check(f, a, lfts);
        const double ms = cpu_ms() - t0;
        std::printf("  RouteCheckCache, %-28s %8.1f ms  (%s: %zu tables changed, %zu destination LIDs walked, %zu findings)\n", what, ms,
                    std::string(ibf::to_string(cache.last_mode())).c_str(), cache.last_tables_changed(), cache.last_revalidated(),
                    rc.findings.size());
    };
    step("first sweep:");
    step("no change:");
    ibf::synth_reroute(f, lfts, 0);
    step("1 % tables, 1 entry each:");
    ibf::synth_reroute(f, lfts, 100);
    step("1 % tables, 1 % of LIDs each:");
    ibf::synth_reroute(f, lfts, 10);
    step("1 % tables, 10 % of LIDs each:");
}

void run(int levels, int radix, int hosts, const std::string& only = "", unsigned route_threads = 0) {
    const bool live_only = only == "live";
    const ibf::Fabric f = ibf::synth_fat_tree({.levels = levels, .radix = radix, .hosts = hosts});
    const double t0 = cpu_ms();
    const std::vector<ibf::SwitchLft> lfts = ibf::synth_lfts(f);
    const double synth = cpu_ms() - t0;
    const ibf::Analysis a = ibf::analyze(f);
    const size_t lids = lfts.empty() ? 0 : lfts[0].port_by_lid().size() - 1;
    std::printf("%d-level radix %d: %zu switches, %zu hosts, %zu LIDs, %zu links\n", levels, radix, lfts.size(),
                a.compute_hosts.size(), lids, f.link_count());
    std::printf("  synth_lfts (the tables):   %8.1f ms\n", synth);
    if (live_only) {
        live_step(f, a, lfts);
        return;
    }
    if (only == "incremental") {
        incremental(f, a, lfts);
        return;
    }
    if (only == "threads") {
        threads(f, a, lfts, route_threads, 3);
        return;
    }
    if (only == "digest") {
        digests(f, a, lfts);
        return;
    }
    if (only == "worker") {
        worker(f, lfts, std::max(1u, route_threads));
        return;
    }
    ibf::LftPaths p;
    std::printf("  lft_paths:                 %8.1f ms\n", median3([&] { p = ibf::lft_paths(f, lfts); }));
    ibf::RouteCheck rc;
    const double graph = median3([&] { ibf::RouteGraph g(f, lfts); });
    const ibf::RouteGraph g(f, lfts);
    std::printf("  RouteGraph:                %8.1f ms\n", graph);
    std::printf("  check_routes (all):        %8.1f ms\n", median3([&] { rc = ibf::check_routes(g, a); }));
    ibf::RouteCheckOptions quick;
    quick.non_minimal = false;
    quick.credit_loops = false;
    std::printf("  check_routes (no minimal/credit): %8.1f ms\n", median3([&] { rc = ibf::check_routes(g, a, quick); }));
    incremental(f, a, lfts);
    live_step(f, a, lfts);
    std::printf("  pairs %ld, routed %ld, max %d cables, %zu findings, lft_paths routes %ld broken %ld\n", rc.pairs,
                rc.routed, rc.max_hops, rc.findings.size(), p.routes, p.broken);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && argc <= 6) {
        run(std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]), argc >= 5 ? argv[4] : "",
            argc == 6 ? static_cast<unsigned>(std::atoi(argv[5])) : 0u);
        return 0;
    }
    run(2, 64, 2048);
    run(3, 64, 44500);
    return 0;
}
