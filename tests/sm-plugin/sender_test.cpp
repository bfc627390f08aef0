// ibf::osm::Sender and option parsing, without OpenSM: a real Unix socket and a test listener.
#include "ibf/osm_sender.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <thread>
#include <vector>

#include "../wire/wire_fixtures.h"
#include "ibf/ibsim_fixture.h"
#include "ibf/wire_listener.h"
#include "ibf/wire_auth.h"

using namespace ibf;
using namespace ibf::osm;
using namespace ibf::test_support;
using namespace std::chrono_literals;

namespace {

Options opts_for(const std::string& sock) {
    Options o = std::get<Options>(parse_options(("socket=" + sock).c_str()));
    o.heartbeat_ms = 200;
    o.backoff_max_ms = 100;
    o.send_timeout_ms = 500;
    o.queue = 8;
    return o;
}

SenderHooks hooks(std::atomic<int>* hellos = nullptr) {
    SenderHooks h;
    h.hello = [hellos] {
        if (hellos) ++*hellos;
        return wire::Hello{"OpenSM 3.3.23", "test", {0x10, 1, 2, SmState::Master, 3}, 99};
    };
    h.heartbeat = [] { return wire::Heartbeat{{0x10, 1, 2, SmState::Standby, 4}, 7, 1234}; };
    return h;
}

std::shared_ptr<const Snapshot> snap(uint64_t seq) {
    auto s = std::make_shared<Snapshot>(wire::sample_snapshot());
    s->sweep_seq = seq;
    return s;
}

template <class F>
double ms_of(F&& f) {
    auto t0 = Clock::now();
    f();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

TEST(PluginOptions, DefaultsAndEveryKey) {
    auto d = std::get<Options>(parse_options(nullptr));
    EXPECT_EQ(d.endpoint(), "unix:/run/ibfabric/osm.sock");
    EXPECT_EQ(d.queue, 256u);
    EXPECT_EQ(std::get<Options>(parse_options("")).heartbeat_ms, 1000);
    auto o = std::get<Options>(parse_options(
        "tcp=127.0.0.1:7700, queue=4 log=debug heartbeat_ms=500,send_timeout_ms=900 backoff_max_ms=300"));
    ASSERT_EQ(o.endpoints.size(), 1u);  // tcp= alone: no local socket, as before
    EXPECT_TRUE(o.endpoints[0].tcp());
    EXPECT_EQ(o.endpoint(), "tcp:127.0.0.1:7700");
    EXPECT_EQ(o.queue, 4u);
    EXPECT_EQ(o.log, LogLevel::debug);
    EXPECT_EQ(o.heartbeat_ms, 500);
    EXPECT_EQ(o.send_timeout_ms, 900);
    EXPECT_EQ(o.backoff_max_ms, 300);
    EXPECT_EQ(std::get<Options>(parse_options("socket=/tmp/x.sock")).endpoint(), "unix:/tmp/x.sock");
    EXPECT_TRUE(d.lft);  // LFT export is on by default
    EXPECT_FALSE(std::get<Options>(parse_options("lft=0")).lft);
    EXPECT_FALSE(std::get<Options>(parse_options("lft=off")).lft);
    EXPECT_TRUE(std::get<Options>(parse_options("lft=1")).lft);
}

TEST(PluginOptions, BadOptionsAreRefusedWithAReason) {
    auto err = [](const char* text) {
        auto r = parse_options(text);
        return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
    };
    EXPECT_NE(err("bogus=1").find("unknown option \"bogus\""), std::string::npos);
    EXPECT_NE(err("queue=0").find("queue=\"0\""), std::string::npos);
    EXPECT_NE(err("queue=abc").find("1..65536"), std::string::npos);
    EXPECT_NE(err("queue=99999999").find("1..65536"), std::string::npos);
    EXPECT_NE(err("log=loud").find("error, warn, info or debug"), std::string::npos);
    EXPECT_NE(err("tcp=nohost").find("host:port"), std::string::npos);
    EXPECT_NE(err("tcp=h:0").find("1..65535"), std::string::npos);
    EXPECT_EQ(err("socket=/a socket=/b"),
              "event_plugin_options: socket=\"/b\": socket= may be given once (the local daemon); use tcp= for the others");
    EXPECT_EQ(err("tcp=10.0.0.2:1 tcp=10.0.0.2:1"), "event_plugin_options: tcp=\"10.0.0.2:1\": given twice");
    std::string nine;
    for (int i = 1; i <= 9; ++i) nine += "tcp=10.0.0." + std::to_string(i) + ":8640 ";
    EXPECT_EQ(err(nine.c_str()), "event_plugin_options: tcp=\"10.0.0.9:8640\": at most 8 tcp= endpoints");
    EXPECT_EQ(err("key_file=relative.key"), "event_plugin_options: key_file=\"relative.key\": needs an absolute path");
    EXPECT_NE(err("socket=").find("path"), std::string::npos);
    EXPECT_NE(err(("socket=/" + std::string(200, 'a')).c_str()).find("108"), std::string::npos);
    EXPECT_NE(err("justaword").find("not key=value"), std::string::npos);
    EXPECT_NE(err("heartbeat_ms=5").find("100..60000"), std::string::npos);
    EXPECT_NE(err("lft=2").find("lft=\"2\": must be 1 or 0"), std::string::npos);
}

TEST(PluginOptions, SocketAndSeveralTcpEndpointsCombine) {
    auto o = std::get<Options>(parse_options(
        "tcp=10.0.0.2:8640 socket=/run/ibfabric/osm.sock tcp=10.0.0.3:8640 key_file=/etc/ibfabric/ingest.key"));
    ASSERT_EQ(o.endpoints.size(), 3u);
    EXPECT_EQ(o.endpoint(), "unix:/run/ibfabric/osm.sock, tcp:10.0.0.2:8640, tcp:10.0.0.3:8640");  // socket first
    EXPECT_FALSE(o.endpoints[0].tcp());
    EXPECT_EQ(o.endpoints[2].tcp_host, "10.0.0.3");
    EXPECT_EQ(o.endpoints[2].tcp_port, 8640);
    EXPECT_EQ(o.key_file, "/etc/ibfabric/ingest.key");
    EXPECT_EQ(o.key, "");  // read by the plugin at create(), not by the parser
    std::string eight;
    for (int i = 1; i <= 8; ++i) eight += "tcp=10.0.0." + std::to_string(i) + ":8640,";
    EXPECT_EQ(std::get<Options>(parse_options(eight.c_str())).endpoints.size(), 8u);
    // Neither socket= nor tcp=: the default socket alone.
    auto d = std::get<Options>(parse_options("key_file=/k log=info"));
    ASSERT_EQ(d.endpoints.size(), 1u);
    EXPECT_EQ(d.endpoints[0].socket_path, "/run/ibfabric/osm.sock");
}

TEST(PluginOptions, VersionCheck) {
    EXPECT_FALSE(check_version("OpenSM 3.3.23", "OpenSM 3.3.23"));
    auto e = check_version("OpenSM 3.3.24", "OpenSM 3.3.23");
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("built for \"OpenSM 3.3.23\" but loaded into \"OpenSM 3.3.24\""), std::string::npos);
    EXPECT_TRUE(check_version(nullptr, "OpenSM 3.3.23"));
}

TEST(PluginOptions, RebuildCommandNamesThePrefixOfTheRunningOpenSM) {
    const std::string tail = " -DIBF_BUILD_TESTS=OFF && cmake --build build-osm --target package";
    EXPECT_EQ(rebuild_command("/usr/sbin/opensm"), "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/usr" + tail);
    EXPECT_EQ(rebuild_command("/opt/mellanox/opensm/bin/opensm"),
              "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/opt/mellanox/opensm" + tail);
    EXPECT_EQ(rebuild_command("/opt/osm/opensm"), "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/opt/osm" + tail);
    EXPECT_EQ(rebuild_command("/sbin/opensm"), "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/" + tail);
    EXPECT_EQ(rebuild_command(""), "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/usr" + tail);
    EXPECT_EQ(rebuild_command("opensm"), "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/usr" + tail);
}

TEST(Sender, HelloThenLatestSnapshotThenHeartbeatAndCounters) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    Sender s(opts_for(tmp / "s.sock"), hooks());
    s.start();
    ASSERT_TRUE(l.accept(3s));
    auto m = l.next(2s);
    ASSERT_TRUE(m);
    ASSERT_EQ(wire::type_of(*m), wire::MsgType::Hello);
    EXPECT_EQ(std::get<wire::Hello>(*m).pid, 99u);
    s.submit_snapshot(snap(5), 17);
    auto got = l.next_of<Snapshot>(2s);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->sweep_seq, 5u);
    EXPECT_EQ(got->fabric.size(), 4u);
    auto hb = l.next_of<wire::Heartbeat>(2s);
    ASSERT_TRUE(hb);
    EXPECT_EQ(hb->sm.state, SmState::Standby);  // polled through the hook
    auto c = l.next_of<wire::Counters>(2s);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->snapshots_taken, 1u);
    EXPECT_EQ(c->snapshots_sent, 1u);
    EXPECT_EQ(c->last_copy_us, 17u);
    EXPECT_EQ(c->reconnects, 0u);  // the first connection is not a reconnect
    s.submit_event({wire::EventKind::Trap, 1, 128, 3, SmState::Master, "t"});
    auto ev = l.next_of<wire::Event>(2s);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->trap_num, 128);
    EXPECT_TRUE(s.connected());
}

TEST(Sender, NewestSnapshotSupersedesUnsentOnesAndIsSentOnConnect) {
    TempDir tmp;
    Sender s(opts_for(tmp / "s.sock"), hooks());
    s.start();  // nobody listening yet
    s.submit_event({wire::EventKind::SweepStart, 1, 0, 0, SmState::Master, "queued while disconnected"});
    for (uint64_t i = 1; i <= 3; ++i) s.submit_snapshot(snap(i), 1);
    auto c = s.counters();
    EXPECT_EQ(c.snapshots_taken, 3u);
    EXPECT_EQ(c.snapshots_superseded, 2u);
    EXPECT_EQ(c.queue_depth, 2u);  // one event + one snapshot
    WireListener l(tmp / "s.sock");
    ASSERT_TRUE(l.accept(3s));
    // On (re)connect: Hello, the latest snapshot, then what queued up meanwhile.
    auto m = l.next(2s);
    ASSERT_TRUE(m);
    EXPECT_EQ(wire::type_of(*m), wire::MsgType::Hello);
    auto m2 = l.next(2s);
    ASSERT_TRUE(m2);
    ASSERT_EQ(wire::type_of(*m2), wire::MsgType::Snapshot);
    EXPECT_EQ(std::get<Snapshot>(*m2).sweep_seq, 3u);
    auto m3 = l.next(2s);
    ASSERT_TRUE(m3);
    ASSERT_EQ(wire::type_of(*m3), wire::MsgType::Event);
    EXPECT_EQ(std::get<wire::Event>(*m3).text, "queued while disconnected");
    EXPECT_EQ(s.counters().snapshots_sent, 1u);
}

TEST(Sender, RestartedControllerGetsHelloAndTheLatestSnapshotAgain) {
    TempDir tmp;
    std::atomic<int> hellos{0};
    Sender s(opts_for(tmp / "s.sock"), hooks(&hellos));
    {
        WireListener l(tmp / "s.sock");
        s.start();
        ASSERT_TRUE(l.accept(3s));
        s.submit_snapshot(snap(9), 1);
        ASSERT_TRUE(l.next_of<Snapshot>(2s));
    }  // controller goes away
    WireListener l2(tmp / "s.sock");
    ASSERT_TRUE(l2.accept(5s));
    auto m = l2.next(2s);
    ASSERT_TRUE(m);
    EXPECT_EQ(wire::type_of(*m), wire::MsgType::Hello);
    auto got = l2.next_of<Snapshot>(2s);  // no new sweep happened: the kept one is resent
    ASSERT_TRUE(got);
    EXPECT_EQ(got->sweep_seq, 9u);
    EXPECT_GE(hellos.load(), 2);
    auto c = l2.next_of<wire::Counters>(2s);
    ASSERT_TRUE(c);
    EXPECT_GE(c->reconnects, 1u);
}

TEST(Sender, ControllerThatNeverReadsBlocksNeitherSubmitNorStop) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    Options o = opts_for(tmp / "s.sock");
    o.send_timeout_ms = 300;
    Sender s(o, hooks());
    s.start();
    ASSERT_TRUE(l.accept(3s));  // accepted, but the test never reads
    auto big = std::make_shared<const Snapshot>(wire::synthetic_snapshot(60, 36, 1500, 0));
    double worst = 0;
    for (int i = 0; i < 20; ++i) {
        worst = std::max(worst, ms_of([&] { s.submit_snapshot(big, 1); }));
        for (int k = 0; k < 10; ++k)
            worst = std::max(worst, ms_of([&] { s.submit_event({wire::EventKind::Trap, 1, 128, 1, SmState::Master, "x"}); }));
    }
    std::printf("[submit] worst submit while the controller does not read: %.3f ms\n", worst);
    // Typically microseconds; the bound leaves room for a preempted sender holding the hand-off
    // mutex on a loaded CI machine. A submit that waited for the socket would take >= 300 ms.
    EXPECT_LT(worst, 100.0) << "submit must not wait for the socket";
    auto c = s.counters();
    EXPECT_GT(c.events_dropped, 0u);        // queue of 8 overflowed
    EXPECT_LE(c.queue_depth, 8u + 1u);      // bounded: 8 events + one snapshot
    EXPECT_GE(c.snapshots_superseded, 10u);
    // The stalled connection is dropped after send_timeout_ms and counted.
    auto deadline = Clock::now() + 5s;
    while (s.counters().send_errors == 0 && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
    EXPECT_GE(s.counters().send_errors, 1u);
    EXPECT_LT(ms_of([&] { s.stop(); }), 500.0);  // one 100 ms slice at most; room for a loaded 2-core machine
}

TEST(Sender, StopIsPromptWhileReconnecting) {
    TempDir tmp;
    Options o = opts_for(tmp / "nobody.sock");
    o.backoff_max_ms = 60000;
    // Wait for the first failed connect to be logged: the sender thread is then in (or entering) its
    // backoff wait, which stop() must cut short.
    auto failed = std::make_shared<std::atomic<bool>>(false);
    SenderHooks h = hooks();
    h.log = [failed](LogLevel, const std::string& m) {
        if (m.rfind("cannot connect", 0) == 0) *failed = true;
    };
    Sender s(o, h);
    s.start();
    auto deadline = Clock::now() + 5s;
    while (!*failed && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(*failed) << "no failed connect logged within 5 s";
    // stop() waits at most one 100 ms poll slice (typically < 1 ms here); 500 ms leaves room for a
    // preempted thread on this 2-core machine under load 10, and is far below the 60 s backoff.
    EXPECT_LT(ms_of([&] { s.stop(); }), 500.0);
    EXPECT_FALSE(s.connected());
}

TEST(Sender, TcpEndpoint) {
    int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    ::listen(lfd, 1);
    int port = ntohs(a.sin_port);
    Options o = std::get<Options>(parse_options(("tcp=localhost:" + std::to_string(port)).c_str()));
    Sender s(o, hooks());
    s.start();
    pollfd p{lfd, POLLIN, 0};
    ASSERT_GT(::poll(&p, 1, 3000), 0);
    int c = ::accept(lfd, nullptr, nullptr);
    wire::Decoder d;
    char buf[4096];
    std::optional<wire::Message> m;
    auto deadline = Clock::now() + 2s;
    while (!m && Clock::now() < deadline) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 100) > 0) {
            ssize_t n = ::read(c, buf, sizeof buf);
            if (n <= 0) break;
            d.feed(buf, static_cast<size_t>(n));
            m = d.next();
        }
    }
    ASSERT_TRUE(m);
    EXPECT_EQ(wire::type_of(*m), wire::MsgType::Hello);
    s.stop();
    ::close(c);
    ::close(lfd);
}

// A TCP listener that accepts in the kernel (the handshake completes) but whose peer never reads:
// the plugin's socket buffer fills and its sender for that endpoint waits in send_all().
struct DeafTcpPeer {
    int lfd = -1, port = 0;
    DeafTcpPeer() {
        lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int small = 4096;  // inherited by the accepted socket: a tiny window
        ::setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        socklen_t len = sizeof a;
        ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
        ::listen(lfd, 4);
        port = ntohs(a.sin_port);
    }
    ~DeafTcpPeer() { ::close(lfd); }
};

// Issue 7: a dead or stuck peer daemon must never delay the local socket. Two endpoints, one that
// never reads: the Unix one still gets the Hello, every event and the newest snapshot promptly.
TEST(Fanout, AStuckEndpointNeverDelaysTheOther) {
    TempDir tmp;
    WireListener local(tmp / "s.sock");
    DeafTcpPeer deaf;
    Options o = opts_for(tmp / "s.sock");
    o.endpoints.push_back(Endpoint{"", "127.0.0.1", static_cast<uint16_t>(deaf.port)});
    o.send_timeout_ms = 60000;  // the deaf peer holds its sender for the whole test
    o.queue = 64;
    Fanout f(o, hooks());
    ASSERT_EQ(f.size(), 2u);
    f.start();
    ASSERT_TRUE(local.accept(3s));
    ASSERT_TRUE(local.next_of<wire::Hello>(2s));
    // ~0.6 MB each: 12 of them overflow the stuck socket's send buffer (4 MB at most on Linux).
    auto big = std::make_shared<Snapshot>(wire::synthetic_snapshot(100, 36, 3000, 0));
    double worst_lag = 0;
    for (uint64_t seq = 1; seq <= 12; ++seq) {
        auto s = std::make_shared<Snapshot>(*big);
        s->sweep_seq = seq;
        const auto t0 = Clock::now();
        f.submit_event({wire::EventKind::SweepStart, static_cast<int64_t>(seq), 0, 0, SmState::Master, "sweep"});
        f.submit_snapshot(s, 1);
        // Both arrive, in either order (right after connecting, the kept snapshot goes first).
        bool ev_seen = false, snap_seen = false;
        while (!(ev_seen && snap_seen)) {
            auto m = local.next(2s);
            ASSERT_TRUE(m) << "sweep " << seq << ": event " << ev_seen << ", snapshot " << snap_seen;
            if (auto* e = std::get_if<wire::Event>(&*m)) ev_seen = ev_seen || e->unix_ms == static_cast<int64_t>(seq);
            if (auto* sn = std::get_if<Snapshot>(&*m)) snap_seen = snap_seen || sn->sweep_seq == seq;
        }
        worst_lag = std::max(worst_lag, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::printf("[fanout] worst submit -> received on the live endpoint while the other is stuck: %.1f ms\n", worst_lag);
    EXPECT_LT(worst_lag, 1000.0);
    // The stuck endpoint kept only its newest snapshot (one slot) and has sent fewer. The live
    // sender counts its last snapshot once the last byte is written: it may have been read first.
    const auto counted_by = Clock::now() + 3s;
    while (f.at(0).counters().snapshots_sent < 12 && Clock::now() < counted_by) std::this_thread::sleep_for(1ms);
    const wire::Counters live = f.at(0).counters(), stuck = f.at(1).counters();
    std::printf("[fanout] stuck endpoint: %llu snapshots sent, %llu superseded\n",
                static_cast<unsigned long long>(stuck.snapshots_sent), static_cast<unsigned long long>(stuck.snapshots_superseded));
    EXPECT_EQ(live.snapshots_sent, 12u);
    EXPECT_LT(stuck.snapshots_sent, 12u);
    EXPECT_GT(stuck.snapshots_superseded, 0u);
    EXPECT_LE(stuck.queue_depth, 64u + 1u);
    EXPECT_EQ(f.total().snapshots_taken, 12u);  // the same copies for both endpoints
    EXPECT_EQ(f.total().snapshots_sent, live.snapshots_sent + stuck.snapshots_sent);
    EXPECT_LT(ms_of([&] { f.stop(); }), 1000.0);
}

// With a key, the Hello to a TCP endpoint carries "au" that verifies; the Unix endpoint's does not.
TEST(Fanout, TcpHelloIsSignedWithTheKeyUnixHelloIsNot) {
    TempDir tmp;
    WireListener local(tmp / "s.sock");
    int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    ::listen(lfd, 1);
    Options o = std::get<Options>(parse_options(
        ("socket=" + (tmp / "s.sock") + " tcp=127.0.0.1:" + std::to_string(ntohs(a.sin_port))).c_str()));
    o.key = std::string(40, 'k');
    Fanout f(o, hooks());
    f.start();
    ASSERT_TRUE(local.accept(3s));
    auto unix_hello = local.next_of<wire::Hello>(2s);
    ASSERT_TRUE(unix_hello);
    EXPECT_FALSE(unix_hello->auth);
    pollfd p{lfd, POLLIN, 0};
    ASSERT_GT(::poll(&p, 1, 3000), 0);
    int c = ::accept(lfd, nullptr, nullptr);
    wire::Decoder d;
    std::optional<wire::Message> m;
    char buf[4096];
    for (auto deadline = Clock::now() + 2s; !m && Clock::now() < deadline;) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 100) <= 0) continue;
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        d.feed(buf, static_cast<size_t>(n));
        m = d.next();
    }
    ASSERT_TRUE(m);
    const auto& h = std::get<wire::Hello>(*m);
    ASSERT_TRUE(h.auth);
    wire::NonceWindow seen;
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    EXPECT_TRUE(wire::verify_hello(h, o.key, now, seen).ok);
    EXPECT_FALSE(wire::verify_hello(h, std::string(40, 'x'), now, seen).ok);
    f.stop();
    ::close(c);
    ::close(lfd);
}

// A daemon that closes every connection at once (it refuses the Hello: wrong key) must not turn
// the plugin into a reconnect loop, nor fill OpenSM's log: backoff as for a failed connect, one line.
TEST(Sender, ConnectionsClosedAtOnceBackOffAndAreLoggedOnce) {
    TempDir tmp;
    const std::string path = tmp / "refuser.sock";
    int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::listen(lfd, 16);
    Options o = opts_for(path);
    o.backoff_max_ms = 2000;
    std::mutex mu;
    std::vector<std::string> warnings;
    SenderHooks h = hooks();
    h.log = [&](LogLevel l, const std::string& m) {
        std::lock_guard lk(mu);
        if (l <= LogLevel::warn) warnings.push_back(m);
    };
    Sender s(o, h);
    s.start();
    int accepted = 0;
    for (auto end = Clock::now() + 1200ms; Clock::now() < end;) {
        pollfd p{lfd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        ::close(::accept(lfd, nullptr, nullptr));  // refused at once
        ++accepted;
    }
    s.stop();
    ::close(lfd);
    // 50 + 100 + 200 + 400 ms of backoff fit in 1.2 s: about 5 connections, not hundreds.
    EXPECT_GE(accepted, 2);
    EXPECT_LE(accepted, 7);
    std::lock_guard lk(mu);
    size_t closed_lines = 0;
    for (const auto& w : warnings) closed_lines += w.find("closed after") != std::string::npos;
    EXPECT_EQ(closed_lines, 1u);
    EXPECT_LE(warnings.size(), 3u) << "one line per outage, not one per attempt";
}

// superseded counts only snapshots replaced before the sender took them: a snapshot that was already
// sent is not superseded by the next one.
TEST(Sender, SnapshotAlreadySentIsNotCountedAsSuperseded) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    Sender s(opts_for(tmp / "s.sock"), hooks());
    s.start();
    ASSERT_TRUE(l.accept(3s));
    s.submit_snapshot(snap(1), 1);
    auto got = l.next_of<Snapshot>(2s);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->sweep_seq, 1u);
    auto deadline = Clock::now() + 2s;  // the counter is bumped right after the last byte went out
    while (s.counters().snapshots_sent < 1 && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    s.submit_snapshot(snap(2), 1);
    auto c = s.counters();
    EXPECT_EQ(c.snapshots_taken, 2u);
    EXPECT_EQ(c.snapshots_superseded, 0u);
    got = l.next_of<Snapshot>(2s);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->sweep_seq, 2u);
    deadline = Clock::now() + 2s;
    while (s.counters().snapshots_sent < 2 && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    c = s.counters();
    EXPECT_EQ(c.snapshots_sent, 2u);
    EXPECT_EQ(c.snapshots_superseded, 0u);
    EXPECT_EQ(c.queue_depth, 0u);
}

// In steady state a trap and a snapshot waiting at the same time go out trap first (the trap
// happened before the sweep whose snapshot follows it). The heartbeat hook holds the sender thread
// while both are submitted, so both are waiting when it takes the next batch.
TEST(Sender, TrapWaitingWithASnapshotIsSentFirst) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    struct Gate {
        std::mutex mu;
        std::condition_variable cv;
        bool entered = false, open = false;
    };
    auto gate = std::make_shared<Gate>();
    SenderHooks h = hooks();
    h.heartbeat = [gate] {
        std::unique_lock lk(gate->mu);
        gate->entered = true;
        gate->cv.notify_all();
        gate->cv.wait(lk, [&] { return gate->open; });
        return wire::Heartbeat{{0x10, 1, 2, SmState::Master, 4}, 7, 1234};
    };
    Sender s(opts_for(tmp / "s.sock"), h);
    s.start();
    ASSERT_TRUE(l.accept(3s));
    {
        std::unique_lock lk(gate->mu);
        ASSERT_TRUE(gate->cv.wait_for(lk, 3s, [&] { return gate->entered; })) << "no heartbeat within 3 s";
    }
    s.submit_snapshot(snap(8), 1);
    s.submit_event({wire::EventKind::Trap, 1, 128, 3, SmState::Master, "port down"});
    {
        std::lock_guard lk(gate->mu);
        gate->open = true;
    }
    gate->cv.notify_all();
    std::vector<wire::MsgType> order;
    while (order.size() < 5) {
        auto m = l.next(2s);
        ASSERT_TRUE(m) << "after " << order.size() << " messages";
        order.push_back(wire::type_of(*m));
    }
    using T = wire::MsgType;
    EXPECT_EQ(order, (std::vector<T>{T::Hello, T::Heartbeat, T::Counters, T::Event, T::Snapshot}));
}

// opensm.conf re-read on SIGHUP: when the Hello's content changes (hello_generation moves), the open
// connection gets a fresh Hello before its next Heartbeat, without reconnecting.
TEST(Sender, ChangedConfSendsASecondHelloOnTheSameConnection) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    std::atomic<uint64_t> gen{0};
    std::atomic<int> hellos{0};
    SenderHooks h = hooks(&hellos);
    auto base = h.hello;
    h.hello = [base, &gen] {
        wire::Hello x = base();
        x.conf = SmConf{};
        x.conf->routing_engine = gen.load() ? "ftree" : "minhop";
        return x;
    };
    h.hello_generation = [&gen] { return gen.load(); };
    Sender s(opts_for(tmp / "s.sock"), h);
    s.start();
    ASSERT_TRUE(l.accept(3s));
    auto first = l.next_of<wire::Hello>(2s);
    ASSERT_TRUE(first);
    ASSERT_TRUE(first->conf);
    EXPECT_EQ(first->conf->routing_engine, "minhop");
    ASSERT_TRUE(l.next_of<wire::Heartbeat>(2s));
    gen = 1;
    std::optional<wire::Message> m;
    do m = l.next(2s);
    while (m && wire::type_of(*m) == wire::MsgType::Counters);
    ASSERT_TRUE(m);
    ASSERT_EQ(wire::type_of(*m), wire::MsgType::Hello) << "the fresh Hello precedes the next Heartbeat";
    ASSERT_TRUE(std::get<wire::Hello>(*m).conf);
    EXPECT_EQ(std::get<wire::Hello>(*m).conf->routing_engine, "ftree");
    ASSERT_TRUE(l.next_of<wire::Heartbeat>(2s));
    EXPECT_EQ(s.counters().reconnects, 0u) << "no reconnect";
}

namespace {

CounterEvent errors_of(uint64_t guid, uint8_t port, std::initializer_list<std::pair<wire::PortCounter, uint64_t>> d) {
    CounterEvent e;
    e.node_guid = guid;
    e.port = port;
    for (auto [c, v] : d) e.d[static_cast<size_t>(c)] = v;
    return e;
}

// Collects PortCounters rows until `n` distinct ports arrived (the latest row of each).
std::map<std::pair<uint64_t, int>, wire::PortCounterRow> port_rows(WireListener& l, size_t n) {
    std::map<std::pair<uint64_t, int>, wire::PortCounterRow> out;
    while (out.size() < n) {
        auto pc = l.next_of<wire::PortCounters>(3s);
        if (!pc) break;
        for (const auto& r : pc->ports) out[{r.node_guid, r.port}] = r;
    }
    return out;
}

using PortRows = std::map<std::pair<uint64_t, int>, wire::PortCounterRow>;
uint64_t symbol_errors_of(PortRows& rows, int port) {
    return rows[{0xec0d9a0300000020ULL, port}].v[static_cast<size_t>(wire::PortCounter::symbol_errors)];
}

}  // namespace

TEST(Sender, PerfmgrDeltasAreSummedPerPortSentAsPortCountersAndResentAfterAReconnect) {
    using C = wire::PortCounter;
    TempDir tmp;
    Sender s(opts_for(tmp / "s.sock"), hooks());
    {
        WireListener l(tmp / "s.sock");
        s.start();
        ASSERT_TRUE(l.accept(3s));
        s.submit_counters(errors_of(0xec0d9a0300000020ULL, 3, {{C::symbol_errors, 5}}));
        s.submit_counters(errors_of(0xec0d9a0300000020ULL, 3, {{C::symbol_errors, 2}, {C::link_downed, 1}}));
        CounterEvent dc;
        dc.node_guid = 0xec0d9a0300000020ULL;
        dc.port = 3;
        dc.data = true;
        dc.d[0] = 100;  // xmit_data
        dc.d[3] = 9;    // rcv_pkts
        s.submit_counters(dc);
        s.submit_counters(errors_of(0xec0d9a0300000020ULL, 4, {{C::symbol_errors, 1}}));
        auto rows = port_rows(l, 2);
        ASSERT_EQ(rows.size(), 2u);
        const auto& p3 = rows[{0xec0d9a0300000020ULL, 3}].v;
        EXPECT_EQ(p3[static_cast<size_t>(C::symbol_errors)], 7u);
        EXPECT_EQ(p3[static_cast<size_t>(C::link_downed)], 1u);
        EXPECT_EQ(p3[static_cast<size_t>(C::xmit_data)], 100u);
        EXPECT_EQ(p3[static_cast<size_t>(C::rcv_pkts)], 9u);
        EXPECT_EQ(p3[static_cast<size_t>(C::rcv_data)], 0u);
        EXPECT_EQ(symbol_errors_of(rows, 4), 1u);
        auto c = l.next_of<wire::Counters>(2s);
        ASSERT_TRUE(c);
        EXPECT_EQ(c->port_counter_events, 4u);
        EXPECT_EQ(c->port_counter_events_dropped, 0u);
    }  // controller goes away; one more delta while it is gone
    s.submit_counters(errors_of(0xec0d9a0300000020ULL, 3, {{C::symbol_errors, 3}}));
    WireListener l2(tmp / "s.sock");
    ASSERT_TRUE(l2.accept(5s));
    auto rows = port_rows(l2, 2);  // every port again, with the sums (a new daemon's baseline)
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(symbol_errors_of(rows, 3), 10u);
    EXPECT_EQ(symbol_errors_of(rows, 4), 1u);
}

TEST(Sender, AFullCounterQueueDropsAndCountsWithoutBlocking) {
    TempDir tmp;
    Options o = opts_for(tmp / "nobody.sock");
    o.counter_queue = 2;
    Sender s(o, hooks());  // not started: nothing drains the queue
    const double ms = ms_of([&] {
        for (int i = 0; i < 5; ++i) s.submit_counters(errors_of(1, 1, {{wire::PortCounter::symbol_errors, 1}}));
    });
    EXPECT_LT(ms, 100.0);
    const wire::Counters c = s.counters();
    EXPECT_EQ(c.port_counter_events, 5u);
    EXPECT_EQ(c.port_counter_events_dropped, 3u);
}

TEST(PluginOptions, CountersOptionSetsTheQueueOrTurnsForwardingOff) {
    EXPECT_EQ(std::get<Options>(parse_options(nullptr)).counter_queue, 16384u);
    EXPECT_EQ(std::get<Options>(parse_options("counters=0")).counter_queue, 0u);
    EXPECT_EQ(std::get<Options>(parse_options("counters=64")).counter_queue, 64u);
    auto r = parse_options("counters=-1");
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_EQ(std::get<std::string>(r),
              "event_plugin_options: counters=\"-1\": must be an integer 0..1048576 (0 = do not forward perfmgr counters)");
}

// Protocol version 2 (docs/wire.md, "Snapshot, version 2"): the Hello announces it, and a snapshot
// the encoder refuses is an error counted and logged, never "sent" (it used to count as sent).
TEST(Sender, ASnapshotTheEncoderRefusesIsCountedAndLoggedNeverSent) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    SenderHooks h = hooks();
    std::mutex mu;
    std::vector<std::string> errors;
    h.log = [&](LogLevel lv, const std::string& m) {
        std::lock_guard lk(mu);
        if (lv == LogLevel::error) errors.push_back(m);
    };
    Sender s(opts_for(tmp / "s.sock"), h);
    s.start();
    ASSERT_TRUE(l.accept(3s));
    auto hello = l.next_of<wire::Hello>(2s);
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->wire_version, 2);
    auto bad = std::make_shared<Snapshot>(wire::sample_snapshot());
    bad->sweep_seq = 6;
    bad->lfts[0].edit([](std::vector<uint8_t>& t) { t.resize(wire::kMaxLftLids + 1, kLftNoPath); });
    s.submit_snapshot(bad, 1);
    const auto deadline = Clock::now() + 3s;
    while (s.counters().encode_errors == 0 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
    auto c = s.counters();
    EXPECT_EQ(c.encode_errors, 1u);
    EXPECT_EQ(c.send_errors, 1u);
    EXPECT_EQ(c.snapshots_sent, 0u);
    {
        std::lock_guard lk(mu);
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_EQ(errors[0], "cannot encode snapshot 6 (4 nodes): Snapshot: LFT of 0x0000000000200000 has 49153 LIDs (at most "
                             "49152); not sent (counted in send_errors and encode_errors)");
    }
    s.submit_snapshot(snap(7), 1);  // the next sweep goes through on the same connection
    auto got = l.next_of<Snapshot>(3s);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->sweep_seq, 7u);
    // The sender counts a snapshot once its last byte is written: the listener can have read it
    // a moment before (1 run in 6-12 failed reading the counter at once).
    const auto sent_by = Clock::now() + 3s;
    while (s.counters().snapshots_sent == 0 && Clock::now() < sent_by) std::this_thread::sleep_for(1ms);
    c = s.counters();
    EXPECT_EQ(c.snapshots_sent, 1u);
    EXPECT_EQ(c.reconnects, 0u);
    EXPECT_EQ(c.encode_errors, 1u);
}

TEST(Sender, AnEncodeErrorAloneStillCountsWithoutASecondSnapshot) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    Sender s(opts_for(tmp / "s.sock"), hooks());
    s.start();
    ASSERT_TRUE(l.accept(3s));
    auto bad = std::make_shared<Snapshot>(wire::sample_snapshot());
    bad->lfts[0].edit([](std::vector<uint8_t>& t) { t.resize(wire::kMaxLftLids + 1, kLftNoPath); });
    s.submit_snapshot(bad, 1);
    auto c = l.next_of<wire::Counters>(3s);  // the heartbeat's Counters after the failed snapshot
    ASSERT_TRUE(c);
    const auto deadline = Clock::now() + 3s;
    while (c && c->encode_errors == 0 && Clock::now() < deadline) c = l.next_of<wire::Counters>(1s);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->encode_errors, 1u);
    EXPECT_EQ(c->send_errors, 1u);
    EXPECT_EQ(c->snapshots_sent, 0u);
    EXPECT_TRUE(s.connected());
}

TEST(Sender, OnlyChangedLftsAreResentAndAReconnectResendsAll) {
    TempDir tmp;
    auto with_tables = [](uint64_t seq, uint8_t port_for_lid_7) {
        auto s = std::make_shared<Snapshot>(wire::sample_snapshot());
        s->sweep_seq = seq;
        s->lfts[0].edit([&](std::vector<uint8_t>& t) { t[7] = port_for_lid_7; });
        return s;
    };
    Sender s(opts_for(tmp / "s.sock"), hooks());
    {
        WireListener l(tmp / "s.sock");
        s.start();
        ASSERT_TRUE(l.accept(3s));
        s.submit_snapshot(with_tables(1, 3), 1);
        auto a = l.next_of<Snapshot>(2s);
        ASSERT_TRUE(a);
        ASSERT_EQ(a->lfts.size(), 1u);
        EXPECT_EQ(a->lfts[0].port_by_lid()[7], 3);
        s.submit_snapshot(with_tables(2, 3), 1);  // unchanged: sent as a 9-byte record, decoded whole
        auto b = l.next_of<Snapshot>(2s);
        ASSERT_TRUE(b);
        ASSERT_EQ(b->lfts.size(), 1u);
        EXPECT_EQ(b->lfts[0].port_by_lid(), a->lfts[0].port_by_lid());
        s.submit_snapshot(with_tables(3, 2), 1);  // changed
        auto c = l.next_of<Snapshot>(2s);
        ASSERT_TRUE(c);
        EXPECT_EQ(c->lfts[0].port_by_lid()[7], 2);
    }
    // A new connection (a new decoder with no tables): every table again, or it could not decode.
    WireListener l2(tmp / "s.sock");
    ASSERT_TRUE(l2.accept(5s));
    auto d = l2.next_of<Snapshot>(2s);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->sweep_seq, 3u);
    ASSERT_EQ(d->lfts.size(), 1u);
    EXPECT_EQ(d->lfts[0].port_by_lid()[7], 2);
}

TEST(PluginOptions, WireSelectsTheSnapshotEncoding) {
    EXPECT_EQ(std::get<Options>(parse_options(nullptr)).wire, 2);
    EXPECT_EQ(std::get<Options>(parse_options("wire=1")).wire, 1);
    EXPECT_EQ(std::get<std::string>(parse_options("wire=3")),
              "event_plugin_options: wire=\"3\": must be 1 or 2 (1 = JSON snapshots, for daemons from before protocol version 2)");
}

TEST(Sender, WireOneSendsVersionOneJsonSnapshots) {
    TempDir tmp;
    WireListener l(tmp / "s.sock");
    Options o = opts_for(tmp / "s.sock");
    o.wire = 1;
    Sender s(o, hooks());
    s.start();
    ASSERT_TRUE(l.accept(3s));
    auto hello = l.next_of<wire::Hello>(2s);
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->wire_version, 1);
    s.submit_snapshot(snap(4), 1);
    auto got = l.next_of<Snapshot>(2s);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->sweep_seq, 4u);
}
