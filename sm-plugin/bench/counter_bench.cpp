// bench_plugin_counters: what a perfmgr counter event costs on OpenSM's thread inside the plugin's
// report(): counter_event() (the copy) + Fanout::submit_counters() (one bounded push per endpoint),
// the same two calls report() makes for OSM_EVENT_ID_PORT_ERRORS / _PORT_DATA_COUNTERS, from several
// threads at once (the perfmgr's MAD receive threads), while the real sender threads sum and send
// to a Unix-socket reader that discards the bytes. docs/benchmarks.md has the figures.
//
//   build/bin/bench_plugin_counters [--threads 4] [--events 330000] [--ports 8192] [--endpoints 1] [--pause-ms 200]
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../src/osm_headers.h"
#include "ibf/osm_counters.h"
#include "ibf/osm_sender.h"

namespace {

using Clock = std::chrono::steady_clock;

// A daemon stand-in: accepts connections on `path` and discards everything.
struct Sink {
    int lfd = -1;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> bytes{0};
    std::vector<std::thread> threads;
    explicit Sink(const std::string& path) {
        lfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        ::unlink(path.c_str());
        if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 8) != 0) {
            std::perror("bind/listen");
            std::exit(2);
        }
        threads.emplace_back([this] {
            for (;;) {
                int fd = ::accept(lfd, nullptr, nullptr);
                if (fd < 0) return;
                threads.emplace_back([this, fd] {
                    char buf[65536];
                    ssize_t n;
                    while ((n = ::read(fd, buf, sizeof buf)) > 0) bytes += static_cast<uint64_t>(n);
                    ::close(fd);
                });
            }
        });
    }
    ~Sink() {
        ::shutdown(lfd, SHUT_RDWR);
        ::close(lfd);
        for (auto& t : threads) t.detach();
    }
};

long arg(int argc, char** argv, const char* name, long def) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return std::stol(argv[i + 1]);
    return def;
}

}  // namespace

int main(int argc, char** argv) {
    const long threads = arg(argc, argv, "--threads", 4), events = arg(argc, argv, "--events", 330000);
    const long ports = arg(argc, argv, "--ports", 8192), endpoints = arg(argc, argv, "--endpoints", 1);
    char dir[] = "/tmp/ibf-counter-bench-XXXXXX";
    if (!::mkdtemp(dir)) return 2;
    std::vector<std::unique_ptr<Sink>> sinks;
    ibf::osm::Options o;
    o.endpoints.clear();
    for (long e = 0; e < endpoints; ++e) {
        const std::string p = std::string(dir) + "/d" + std::to_string(e) + ".sock";
        sinks.push_back(std::make_unique<Sink>(p));
        o.endpoints.push_back({p, "", 0});
    }
    ibf::osm::SenderHooks h;
    h.hello = [] { return ibf::wire::Hello{"OpenSM 3.3.23", "bench", {1, 1, 15, ibf::SmState::Master, 1}, 1}; };
    h.heartbeat = [] { return ibf::wire::Heartbeat{{1, 1, 15, ibf::SmState::Master, 1}, 1, 0}; };
    ibf::osm::Fanout f(o, h);
    f.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // connected

    // What the perfmgr hands over: one event per port, the deltas of one sweep.
    std::vector<osm_epi_pe_event_t> pes(static_cast<size_t>(ports));
    for (long i = 0; i < ports; ++i) {
        osm_epi_pe_event_t& e = pes[static_cast<size_t>(i)];
        std::memset(&e, 0, sizeof e);
        osm_epi_create_port_id(&e.port_id, 0x0002c90300000000ULL + static_cast<uint64_t>(i / 36),
                               static_cast<uint8_t>(i % 36 + 1), const_cast<char*>("leaf"));
        e.symbol_err_cnt = static_cast<uint64_t>(i % 3);
        e.xmit_wait = static_cast<uint64_t>(i);
    }
    // Like the perfmgr: per sweep one PORT_ERRORS and one PORT_DATA_COUNTERS event per port, spread
    // over the receive threads, then a pause (--pause-ms) until the next sweep. --pause-ms 0 floods.
    std::vector<osm_epi_dc_event_t> dcs(static_cast<size_t>(ports));
    for (long i = 0; i < ports; ++i) {
        osm_epi_dc_event_t& e = dcs[static_cast<size_t>(i)];
        std::memset(&e, 0, sizeof e);
        e.port_id = pes[static_cast<size_t>(i)].port_id;
        e.xmit_data = e.rcv_data = static_cast<uint64_t>(i) * 1000;
    }
    const long per_sweep = 2 * ports, sweeps = std::max(1L, events / per_sweep), pause_ms = arg(argc, argv, "--pause-ms", 200);
    std::vector<std::vector<double>> samples(static_cast<size_t>(threads));
    std::vector<double> busy_ms(static_cast<size_t>(threads));
    const auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (long t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            auto& s = samples[static_cast<size_t>(t)];
            for (long sw = 0; sw < sweeps; ++sw) {
                const auto b = Clock::now();
                for (long i = t; i < per_sweep; i += threads) {
                    const size_t port = static_cast<size_t>(i / 2);
                    const bool dc = i % 2;
                    if (i % 16 == t % 16) {
                        const auto a = Clock::now();
                        f.submit_counters(dc ? ibf::osm::counter_event(dcs[port]) : ibf::osm::counter_event(pes[port]));
                        s.push_back(std::chrono::duration<double, std::nano>(Clock::now() - a).count());
                    } else {
                        f.submit_counters(dc ? ibf::osm::counter_event(dcs[port]) : ibf::osm::counter_event(pes[port]));
                    }
                }
                busy_ms[static_cast<size_t>(t)] += std::chrono::duration<double, std::milli>(Clock::now() - b).count();
                if (pause_ms) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
            }
        });
    for (auto& t : ts) t.join();
    const long total = sweeps * per_sweep;
    double busy = 0;
    for (double b : busy_ms) busy += b;
    const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // let the senders send a heartbeat's batch
    std::vector<double> all;
    for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
    std::sort(all.begin(), all.end());
    auto pct = [&](double p) { return all.empty() ? 0 : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))]; };
    const ibf::wire::Counters c = f.total();
    f.stop();
    uint64_t bytes = 0;
    for (auto& s : sinks) bytes += s->bytes;
    std::printf("%ld sweeps of %ld ports (%ld events each), %ld threads, %ld endpoint(s), pause %ld ms: %.1f ms wall; "
                "mean %.0f ns per event on the calling thread\n",
                sweeps, ports, per_sweep, threads, endpoints, pause_ms, wall_ms, busy * 1e6 / static_cast<double>(total));
    std::printf("per call (every 16th timed, %zu samples): p50 %.0f ns, p99 %.0f ns, p99.9 %.0f ns, max %.0f ns\n", all.size(),
                pct(0.5), pct(0.99), pct(0.999), all.empty() ? 0 : all.back());
    std::printf("plugin counters: port_counter_events %llu, dropped %llu (queue %zu per endpoint); bytes to the daemon(s) %llu\n",
                static_cast<unsigned long long>(c.port_counter_events),
                static_cast<unsigned long long>(c.port_counter_events_dropped), o.counter_queue,
                static_cast<unsigned long long>(bytes));
    for (auto& s : sinks) s.reset();
    std::string cmd = std::string(dir);
    for (long e = 0; e < endpoints; ++e) ::unlink((cmd + "/d" + std::to_string(e) + ".sock").c_str());
    ::rmdir(dir);
    return 0;
}
