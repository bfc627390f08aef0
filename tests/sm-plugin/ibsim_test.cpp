// Real OpenSM 3.3.23 on an ibsim fabric, with libibfabric_osm.so loaded as its event plugin and a
// test listener standing in for ibfabricd. Label: integration. Each test starts its own ibsim
// (unique IBSIM_SOCKNAME) and opensm in a temp dir and kills both by pid (tests/support).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ibf/ibsim_fixture.h"
#include "ibf/wire_listener.h"

using namespace ibf;
using namespace ibf::test_support;
using namespace std::chrono_literals;

namespace {

const Node* by_desc(const Fabric& f, const std::string& d) {
    for (const Node& n : f.nodes())
        if (n.description == d) return &n;
    return nullptr;
}

// ibsim on the two-switch net, OpenSM on h1 with `plugin_options` (plugins from `lib_dir`), up to
// SUBNET UP (gtest assertions: wrap in ASSERT_NO_FATAL_FAILURE).
void subnet_up(IbsimFixture& lab, const std::string& plugin_options, const std::string& lib_dir = plugin_dir()) {
    ASSERT_NO_FATAL_FAILURE(lab.start_ibsim(two_switch_net()));
    lab.start_opensm("h1", plugin_conf(plugin_options), lib_dir);
    ASSERT_TRUE(wait_for_text(lab.tmp / "osm.log", "SUBNET UP", 15s)) << lab.log();
}

}  // namespace

TEST(PluginOnIbsim, HelloAndSnapshotMatchTheNetFileAndResyncAfterControllerRestart) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture lab("ibfpl");
    WireListener l(lab.tmp / "s.sock");
    ASSERT_NO_FATAL_FAILURE(lab.start_ibsim(two_switch_net(), {.console = true}));
    lab.start_opensm("h1", plugin_conf("socket=" + (lab.tmp / "s.sock") + " log=debug heartbeat_ms=500"));

    ASSERT_TRUE(l.accept(10s)) << lab.log();
    auto first = l.next(5s);
    ASSERT_TRUE(first);
    ASSERT_EQ(wire::type_of(*first), wire::MsgType::Hello) << "Hello must come first";
    const auto& hello = std::get<wire::Hello>(*first);
    EXPECT_EQ(hello.osm_version, "OpenSM 3.3.23");
    EXPECT_EQ(hello.pid, static_cast<uint32_t>(lab.opensm.pid()));
    EXPECT_FALSE(hello.plugin_version.empty());

    auto snap = l.next_of<Snapshot>(10s);
    ASSERT_TRUE(snap) << lab.log();
    const Fabric& f = snap->fabric;
    EXPECT_EQ(snap->osm_version, "OpenSM 3.3.23");
    EXPECT_FALSE(snap->initialization_error);
    EXPECT_GE(snap->sweep_seq, 1u);
    EXPECT_EQ(f.size(), 6u);
    EXPECT_EQ(f.count(NodeType::Switch), 2u);
    EXPECT_EQ(f.count(NodeType::CA), 4u);
    EXPECT_EQ(f.link_count(), 6u);

    // Every node and cable of the net file, with unique non-zero LIDs.
    std::set<uint16_t> lids;
    for (const char* d : {"sw1", "sw2", "h1", "h2", "h3", "h4"}) {
        const Node* n = by_desc(f, d);
        ASSERT_NE(n, nullptr) << d;
        EXPECT_NE(n->lid, 0) << d;
        lids.insert(n->lid);
        EXPECT_EQ(n->num_ports(), n->type == NodeType::Switch ? 8 : 1) << d;
    }
    EXPECT_EQ(lids.size(), 6u);
    auto peer_of = [&](const char* d, int port) -> std::string {
        const Node* n = by_desc(f, d);
        const Port* p = n ? n->port(port) : nullptr;
        if (!p || !p->linked()) return "-";
        return f.node(p->peer).description + "/" + std::to_string(p->peer_port);
    };
    EXPECT_EQ(peer_of("sw1", 1), "h1/1");
    EXPECT_EQ(peer_of("sw1", 2), "h2/1");
    EXPECT_EQ(peer_of("sw1", 3), "sw2/3");
    EXPECT_EQ(peer_of("sw1", 4), "sw2/4");
    EXPECT_EQ(peer_of("sw2", 1), "h3/1");
    EXPECT_EQ(peer_of("sw2", 2), "h4/1");
    EXPECT_EQ(peer_of("sw1", 5), "-");

    // Rates, per cable, from both ends.
    auto rate_of = [&](const char* d, int port) {
        const Node* n = by_desc(f, d);
        const Port* p = n ? n->port(port) : nullptr;
        return p ? to_string(p->rate()) : std::string("-");
    };
    EXPECT_EQ(rate_of("h1", 1), "4xHDR");
    EXPECT_EQ(rate_of("sw1", 1), "4xHDR");
    EXPECT_EQ(rate_of("h2", 1), "4xEDR");
    EXPECT_EQ(rate_of("sw1", 2), "4xEDR");
    EXPECT_EQ(rate_of("sw1", 3), "4xHDR");
    EXPECT_EQ(rate_of("sw2", 4), "4xHDR");
    EXPECT_EQ(rate_of("h3", 1), "4xHDR");
    EXPECT_EQ(rate_of("h4", 1), "1xHDR");
    EXPECT_EQ(rate_of("sw2", 2), "1xHDR");
    const Port* h1p = by_desc(f, "h1")->port(1);
    const Port* h2p = by_desc(f, "h2")->port(1);
    const Port* h4p = by_desc(f, "h4")->port(1);
    ASSERT_TRUE(h1p && h2p && h4p);
    std::printf("[h1/1] %s, width en/sup 0x%x/0x%x, speed en/sup 0x%x/0x%x, mtu %d/%d\n", to_string(h1p->rate()).c_str(),
                h1p->width_enabled, h1p->width_supported, h1p->speed_enabled, h1p->speed_supported, h1p->mtu_cap,
                h1p->mtu_active);
    EXPECT_EQ(h1p->state, PortState::Active);
    EXPECT_EQ(h1p->phys, PhysState::LinkUp);
    EXPECT_EQ(h4p->width_enabled, width_bit(Width::X1));
    EXPECT_EQ(h1p->width_supported & 0x0B, 0x0B);  // ibsim hard-codes (at least) 1x, 4x, 12x
    const SpeedMask sdr_to_hdr = speed_bit(Speed::SDR) | speed_bit(Speed::DDR) | speed_bit(Speed::QDR) |
                                 speed_bit(Speed::FDR) | speed_bit(Speed::EDR) | speed_bit(Speed::HDR);
    EXPECT_EQ(h1p->speed_enabled, sdr_to_hdr);
    EXPECT_EQ(h1p->speed_supported, sdr_to_hdr);
    EXPECT_EQ(h2p->speed_enabled & (speed_bit(Speed::FDR) | speed_bit(Speed::EDR) | speed_bit(Speed::HDR)),
              speed_bit(Speed::EDR));
    EXPECT_NE(h1p->mtu_cap, 0);
    EXPECT_NE(h1p->mtu_active, 0);
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports)
            if (p.valid && p.linked()) {
                EXPECT_EQ(p.state, PortState::Active) << n.description << "/" << int(p.num);
                // Active width/speed equal at both ends of every cable.
                const Port* q = f.node(p.peer).port(p.peer_port);
                ASSERT_NE(q, nullptr);
                EXPECT_EQ(p.rate(), q->rate()) << n.description << "/" << int(p.num);
            }

    // The SM is h1's port, master, and knows its own LID.
    EXPECT_EQ(snap->self.state, SmState::Master);
    EXPECT_EQ(snap->self.port_guid, h1p->guid);
    EXPECT_EQ(snap->self.lid, h1p->lid);
    EXPECT_EQ(snap->master_lid, h1p->lid);
    EXPECT_FALSE(snap->routing_engine.empty());

    auto hb = l.next_of<wire::Heartbeat>(3s);
    ASSERT_TRUE(hb);
    EXPECT_EQ(hb->sm.state, SmState::Master);
    EXPECT_EQ(hb->sweep_seq, snap->sweep_seq);
    auto c = l.next_of<wire::Counters>(3s);
    ASSERT_TRUE(c);
    EXPECT_GE(c->snapshots_taken, 1u);
    EXPECT_GE(c->snapshots_sent, 1u);
    EXPECT_LT(c->last_copy_us, 1'000'000u);

    // A cable pulled in the simulator: trap 128 reaches us as an Event, then a new snapshot.
    lab.console("Unlink \"sw2\"[1]");
    std::set<int> traps;
    bool saw_sweep_start = false;
    std::optional<Snapshot> after;
    auto deadline = Clock::now() + 8s;
    while (Clock::now() < deadline && !after) {
        auto m = l.next(1s);
        if (!m) continue;
        if (auto* e = std::get_if<wire::Event>(&*m)) {
            if (e->kind == wire::EventKind::Trap) traps.insert(e->trap_num);
            if (e->kind == wire::EventKind::SweepStart) saw_sweep_start = true;
        }
        if (auto* s = std::get_if<Snapshot>(&*m); s && s->sweep_seq > snap->sweep_seq) after = std::move(*s);
    }
    EXPECT_TRUE(traps.count(128)) << "trap 128 (link state change) from the switch";
    EXPECT_TRUE(saw_sweep_start);
    ASSERT_TRUE(after) << lab.log();
    EXPECT_EQ(after->fabric.link_count(), 5u);
    EXPECT_EQ(by_desc(after->fabric, "h3"), nullptr);  // unreachable now

    // Controller restart: drop the connection; the plugin reconnects and resends Hello + the
    // latest snapshot without a new sweep.
    l.drop();
    ASSERT_TRUE(l.accept(10s));
    EXPECT_TRUE(lab.opensm.running()) << "a write to the closed socket must not SIGPIPE OpenSM";
    auto again = l.next(5s);
    ASSERT_TRUE(again);
    EXPECT_EQ(wire::type_of(*again), wire::MsgType::Hello);
    auto resent = l.next_of<Snapshot>(5s);
    ASSERT_TRUE(resent);
    EXPECT_EQ(resent->sweep_seq, after->sweep_seq);
    EXPECT_EQ(resent->fabric.link_count(), 5u);

    // SIGTERM: OpenSM calls delete(), which stops the sender thread promptly.
    EXPECT_TRUE(lab.opensm.stop(5s));
    EXPECT_NE(lab.log().find("ibfabric_osm: stopped in"), std::string::npos) << lab.log();
    auto log = lab.log();
    auto pos = log.find("us under the lock (");
    if (pos != std::string::npos) {
        auto line_start = log.rfind('\n', pos) + 1;
        std::printf("[copy] %s\n", log.substr(line_start, log.find('\n', pos) - line_start).c_str());
    }
}

TEST(PluginOnIbsim, WithoutAnyListenerOpenSmStillReachesSubnetUp) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture lab("ibfpl");
    ASSERT_NO_FATAL_FAILURE(subnet_up(lab, "socket=" + (lab.tmp / "nobody.sock")));
    auto log = lab.log();
    EXPECT_NE(log.find("ibfabric_osm: loaded"), std::string::npos);
    EXPECT_NE(log.find("cannot connect to unix:"), std::string::npos);
    auto t0 = Clock::now();
    EXPECT_TRUE(lab.opensm.stop(5s));
    EXPECT_LT(Clock::now() - t0, 5s);
    EXPECT_NE(lab.log().find("ibfabric_osm: stopped in"), std::string::npos);
}

TEST(PluginOnIbsim, BadOptionsMakeThePluginRefuseToLoadButOpenSmRuns) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture lab("ibfpl");
    ASSERT_NO_FATAL_FAILURE(subnet_up(lab, "queue=0"));
    auto log = lab.log();
    EXPECT_NE(log.find("ibfabric_osm: refusing to load: event_plugin_options: queue=\"0\""), std::string::npos) << log;
    EXPECT_EQ(log.find("ibfabric_osm: loaded"), std::string::npos);
}

// key_file= that is world-readable: the plugin refuses to load with one line; OpenSM runs on.
TEST(PluginOnIbsim, ATooOpenKeyFileMakesThePluginRefuseToLoad) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture lab("ibfpl");
    const std::string key = lab.tmp / "ingest.key";
    write_file(key, std::string(64, 'a') + "\n");
    ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
    ASSERT_NO_FATAL_FAILURE(subnet_up(lab, "tcp=127.0.0.1:9 key_file=" + key));
    auto log = lab.log();
    EXPECT_NE(log.find("ibfabric_osm: refusing to load: key_file=" + key +
                       ": mode 0644 is too open: the key file must not be writable by group or others nor readable "
                       "by others (use 0600 or 0640)"),
              std::string::npos)
        << log;
    EXPECT_EQ(log.find("ibfabric_osm: loaded"), std::string::npos);
}

// 2-level fat tree of 36-port switches: 18 spines, 36 leaves, 648 HCAs (702 nodes, 1296 cables).
// Measures the copy under OpenSM's lock on a realistic size; the figure goes to docs/plugin.md.
TEST(PluginOnIbsim, CopyCostOnA702NodeFatTree) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    const std::string net = full_tree_net(36);  // 18 spines, 36 leaves x 18 hosts
    IbsimFixture lab("ibfpl");
    WireListener l(lab.tmp / "s.sock");
    ASSERT_NO_FATAL_FAILURE(lab.start_ibsim(net));
    lab.start_opensm("h0", plugin_conf("socket=" + (lab.tmp / "s.sock") + " log=debug heartbeat_ms=200"));
    ASSERT_TRUE(l.accept(10s));
    auto snap = l.next_of<Snapshot>(20s);
    ASSERT_TRUE(snap) << lab.log();
    EXPECT_EQ(snap->fabric.size(), 702u);
    EXPECT_EQ(snap->fabric.count(NodeType::Switch), 54u);
    EXPECT_EQ(snap->fabric.link_count(), 1296u);
    auto c = l.next_of<wire::Counters>(5s);
    ASSERT_TRUE(c);
    ASSERT_GT(c->last_copy_us, 0u);
    std::printf("[copy] 702 nodes, 1296 links: %llu us under the lock = %llu ns/node; send lag %llu ms\n",
                static_cast<unsigned long long>(c->last_copy_us),
                static_cast<unsigned long long>(c->last_copy_us * 1000 / 702),
                static_cast<unsigned long long>(c->last_send_lag_ms));
    EXPECT_LT(c->last_copy_us, 200'000u);  // generous bound for a shared CI box (measured: see docs/plugin.md)
    EXPECT_TRUE(lab.opensm.stop(5s));
}

// The plugin built for another OpenSM: a copy of the .so whose version string says 3.3.99 (same
// length, patched in the file). OpenSM itself must refuse it, and still bring the subnet up.
TEST(PluginOnIbsim, OpenSmRefusesAPluginBuiltForAnotherVersion) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture lab("ibfpl");
    std::string so = read_file(plugin_dir() + "/libibfabric_osm.so");
    const std::string want("OpenSM 3.3.23\0", 14), other("OpenSM 3.3.99\0", 14);
    size_t n = 0;
    for (size_t pos = so.find(want); pos != std::string::npos; pos = so.find(want, pos + 1), ++n) so.replace(pos, 14, other);
    ASSERT_GE(n, 1u) << "version string not found in the plugin";
    std::filesystem::create_directory(lab.tmp / "lib");
    { std::ofstream(lab.tmp / "lib/libibfabric_osm.so", std::ios::binary) << so; }
    ASSERT_NO_FATAL_FAILURE(subnet_up(lab, "socket=" + (lab.tmp / "s.sock"), lab.tmp / "lib"));
    auto log = lab.log();
    EXPECT_NE(log.find("OpenSM version mismatch"), std::string::npos) << log;
    EXPECT_EQ(log.find("ibfabric_osm: loaded"), std::string::npos);
}

// SM failover: a STANDBY's plugin reports STANDBY (heartbeat and a StateChange event); after the
// master is killed, STANDBY -> MASTER fires no OpenSM event, yet the plugin's polled heartbeat turns
// MASTER and the new master's first sweep arrives as a snapshot.
TEST(PluginOnIbsim, StandbyTakesOverAndTheHeartbeatSaysMaster) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    IbsimFixture lab("ibfpl");
    WireListener la(lab.tmp / "a.sock"), lb(lab.tmp / "b.sock");
    ASSERT_NO_FATAL_FAILURE(lab.start_ibsim(two_switch_net()));
    const std::string ha = "sminfo_polling_timeout 1000\npolling_retry_number 2\n";
    Child a = lab.spawn_sm("a", "h1", plugin_conf("socket=" + (lab.tmp / "a.sock") + " heartbeat_ms=200", ha + "sm_priority 10\n"));
    ASSERT_TRUE(la.accept(10s));
    auto sa = la.next_of<Snapshot>(10s);
    ASSERT_TRUE(sa) << read_file(lab.tmp / "a/osm.log");
    EXPECT_EQ(sa->self.state, SmState::Master);

    Child b = lab.spawn_sm("b", "h2", plugin_conf("socket=" + (lab.tmp / "b.sock") + " heartbeat_ms=200", ha + "sm_priority 1\n"));
    ASSERT_TRUE(lb.accept(10s));
    bool standby_hb = false, standby_event = false;
    auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline && !(standby_hb && standby_event)) {
        auto m = lb.next(1s);
        if (!m) continue;
        if (auto* h = std::get_if<wire::Heartbeat>(&*m); h && h->sm.state == SmState::Standby) standby_hb = true;
        if (auto* e = std::get_if<wire::Event>(&*m); e && e->kind == wire::EventKind::StateChange && e->state == SmState::Standby)
            standby_event = true;
    }
    EXPECT_TRUE(standby_hb) << read_file(lab.tmp / "b/osm.log");
    EXPECT_TRUE(standby_event);

    a.kill_now();  // the master dies without a goodbye
    auto killed = Clock::now();
    bool master_hb = false;
    std::optional<Snapshot> sb;
    deadline = Clock::now() + 15s;
    while (Clock::now() < deadline && !(master_hb && sb)) {
        auto m = lb.next(1s);
        if (!m) continue;
        if (auto* h = std::get_if<wire::Heartbeat>(&*m); h && h->sm.state == SmState::Master) master_hb = true;
        if (auto* s = std::get_if<Snapshot>(&*m); s && s->self.state == SmState::Master) sb = std::move(*s);
    }
    EXPECT_TRUE(master_hb) << read_file(lab.tmp / "b/osm.log");
    ASSERT_TRUE(sb) << read_file(lab.tmp / "b/osm.log");
    EXPECT_EQ(sb->master_lid, sb->self.lid);
    EXPECT_EQ(sb->fabric.size(), 6u);  // h1's HCA stays alive in ibsim after opensm is killed
    std::printf("[ha] standby became master and sent its snapshot %.1f s after the kill\n",
                std::chrono::duration<double>(Clock::now() - killed).count());
    EXPECT_TRUE(b.stop(5s));
}

// A real cluster's ibnetdiscover dump (8 SX6036 switches, 144 HCAs, FDR10 between switches, QDR to
// hosts) loaded into ibsim: every cable end in the plugin's snapshot must have the rate the dump
// lists for it, FDR10 (Mellanox ExtendedPortInfo) included, and the dump's LIDs must survive.
TEST(PluginOnIbsim, RealCaptureRatesAndLidsSurviveIntoTheSnapshot) {
    if (auto why = missing_tools(); !why.empty()) GTEST_SKIP() << why;
    const std::string dump = read_file(std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt");
    ASSERT_FALSE(dump.empty());
    // Expected (node GUID, port) -> rate, and node GUID -> LID, straight from the dump's text.
    std::map<std::pair<Guid, int>, std::string> want_rate;
    std::map<Guid, uint16_t> want_lid;
    std::istringstream in(dump);
    std::string line;
    Guid cur = 0;
    while (std::getline(in, line)) {
        if (line.rfind("Switch", 0) == 0 || line.rfind("Ca", 0) == 0 || line.rfind("Hca", 0) == 0) {
            auto q = line.find("\"S-") != std::string::npos ? line.find("\"S-") : line.find("\"H-");
            cur = std::stoull(line.substr(q + 3, 16), nullptr, 16);
            if (auto l = line.find(" lid "); l != std::string::npos && line[0] == 'S')
                want_lid[cur] = static_cast<uint16_t>(std::stoi(line.substr(l + 5)));
        } else if (line.rfind("[", 0) == 0 && cur) {
            int port = std::stoi(line.substr(1));
            auto sp = line.find_last_of(" \t");
            want_rate[{cur, port}] = line.substr(sp + 1);
            if (line.find("\"S-") == std::string::npos) {  // a host's LID is printed on the switch side
                auto h = line.find("\"H-");
                auto l = line.find(" lid ");
                if (h != std::string::npos && l != std::string::npos)
                    want_lid[std::stoull(line.substr(h + 3, 16), nullptr, 16)] = static_cast<uint16_t>(std::stoi(line.substr(l + 5)));
            }
        }
    }
    ASSERT_EQ(want_rate.size(), 384u);  // 144 host cables + 48 ISLs, both ends
    IbsimFixture lab("ibfpl");
    WireListener l(lab.tmp / "s.sock");
    ASSERT_NO_FATAL_FAILURE(lab.start_ibsim(dump));
    lab.start_opensm("H-24be05ffff980030", plugin_conf("socket=" + (lab.tmp / "s.sock")));
    ASSERT_TRUE(l.accept(10s));
    auto snap = l.next_of<Snapshot>(20s);
    ASSERT_TRUE(snap) << lab.log();
    const Fabric& f = snap->fabric;
    EXPECT_EQ(f.count(NodeType::Switch), 8u);
    EXPECT_EQ(f.count(NodeType::CA), 144u);
    size_t checked = 0, fdr10 = 0;
    for (const Node& n : f.nodes())
        for (const Port& p : n.ports) {
            if (!p.valid || !p.linked()) continue;
            auto it = want_rate.find({n.guid, p.num});
            if (it == want_rate.end()) continue;
            EXPECT_EQ(to_string(p.rate()), it->second) << guid_hex(n.guid) << "/" << int(p.num);
            ++checked;
            fdr10 += p.speed_active == Speed::FDR10;
        }
    EXPECT_EQ(checked, want_rate.size());
    EXPECT_GT(fdr10, 50u);
    size_t lids = 0;
    for (const Node& n : f.nodes())
        if (auto it = want_lid.find(n.guid); it != want_lid.end()) {
            EXPECT_EQ(n.lid, it->second) << guid_hex(n.guid);
            ++lids;
        }
    EXPECT_EQ(lids, 152u);
}
