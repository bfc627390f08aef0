// SM failover under the compound faults of issue 16 (docs/ha.md, "Failure modes"), each on a
// fresh two-SM lab of the small example (its own ibsim: a stale client of an earlier SM can fake a
// dual master). An independent witness, `sminfo` run from a CA without an SM (LabSmInfoSampler),
// watches throughout. Each scenario ends with the same assertions after settling: exactly one
// MASTER, which completes a heavy sweep, every other SM STANDBY, no sample with two masters
// after settling, no LID changed. Scenario 3 (switchover) is tested with the daemon-run switchover.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <map>
#include <optional>

#include "ibf/dumps.h"
#include "ibf/lab_ha.h"
#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "ibf/lab_sminfo.h"
#include "ibf/lab_tcp_cut.h"
#include "lab_cli.h"

using namespace ibf;
using namespace ibf::test;
using lab_detail::now_s;
using lab_detail::sleep_s;

namespace {

int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Microseconds from `since_ms` (unix) to the first `needle` line of OpenSM's `log` after it.
std::optional<int64_t> log_us_after(const std::string& log, int64_t since_ms, const std::string& needle) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    const std::string text = read_all(log);
    size_t from = 0;
    while (auto hit = find_osm_log_line(text, from, needle, tm.tm_year + 1900, tm.tm_gmtoff)) {
        if (hit->unix_us >= since_ms * 1000 - 1000) return hit->unix_us - since_ms * 1000;
        from = hit->end;
    }
    return std::nullopt;
}

// Node GUID -> LID as ibnetdiscover from `host` sees the fabric now.
std::map<Guid, int> fabric_lids(const LabState& s, const std::string& host) {
    Fabric f = parse_dump(lab_run_client(s, {"ibnetdiscover"}, 30, s.umad2sim, host), "ibnetdiscover");
    std::map<Guid, int> lids;
    for (NodeId i = 0; i < f.size(); ++i)
        if (f.node(i).lid > 0) lids[f.node(i).guid] = f.node(i).lid;
    return lids;
}

size_t count_of(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// Every SM's daemon log (its `ha:` lines) and OpenSM log tail, for a failure message.
std::string logs(const LabState& s) {
    std::string out = "lab " + s.dir + "\n";
    for (size_t i = 0; i < s.sms.size(); ++i) {
        out += "---- sm" + std::to_string(i + 1) + " daemon (ha:)\n";
        std::istringstream in(read_all(s.sms[i].daemon_log));
        for (std::string l; std::getline(in, l);)
            if (l.find("ha:") != std::string::npos) out += l + "\n";
        out += "---- sm" + std::to_string(i + 1) + " OpenSM\n" + tail_file(s.sms[i].log, 15);
    }
    return out;
}

std::string sample_text(const SmInfoSample& x) {
    std::string t;
    for (const auto& st : x.states) t += (t.empty() ? "" : " ") + (st.empty() ? std::string("-") : st);
    return t;
}

// A fresh two- (or three-) SM lab with ibfabricd agents, the sampler running, the LIDs before.
struct Scenario {
    LabDir lab;
    LabState s;
    std::string quiet;
    std::map<Guid, int> before;
    std::unique_ptr<LabSmInfoSampler> smp;
    std::string skip;

    explicit Scenario(int sms) {
        Cli up = lab.cli({"lab", "up", kSmall, "--sms", std::to_string(sms), "--timeout", "60", "--json"});
        if (!have_daemon()) {
            skip = "ibfabricd or libibfabric_osm.so is not built";
            return;
        }
        if (up.rc != 0) throw std::runtime_error("lab up failed: " + describe(up));
        s = lab.state();
        if (s.sms.size() > 1 && s.sms[0].tcp_port == 0) {
            skip = "this ibfabricd has no authenticated TCP ingest: the SM nodes' daemons cannot see each other";
            return;
        }
        quiet = lab_quiet_host(s);
        before = fabric_lids(s, quiet);
        smp = std::make_unique<LabSmInfoSampler>(s, quiet);
    }
    Cli fault(const std::string& what, const std::string& target, bool no_wait = true) {
        std::vector<std::string> args{"lab", "fault", what, target, "--json"};
        if (no_wait) args.push_back("--no-wait");
        Cli c = lab.cli(args, 30);
        s = lab.state();  // a restart has a new pid
        return c;
    }
    std::string cable(size_t i) const { return s.sms.at(i).host + "/1"; }
};

// The end of every scenario: exactly one MASTER that completes a heavy sweep (SIGHUP), every
// other running SM STANDBY (sminfo from the quiet CA), no sample with two masters after settling,
// no LID changed. Returns the master's index through `master`.
void expect_one_sweeping_master(Scenario& sc, size_t* master = nullptr) {
    LabState& s = sc.s;
    auto m = lab_wait_one_master(s, 15, 1.0);
    ASSERT_TRUE(m) << "no single master\n" << logs(s);
    const double settled = now_s();
    EXPECT_TRUE(lab_sm_sweeps(s, *m, 5)) << "the master sm" << *m + 1 << " completes no heavy sweep\n" << logs(s);
    sleep_s(1.0);
    auto last = sc.smp->next(now_s(), 3);
    ASSERT_TRUE(last) << "the sminfo sampler is stuck";
    const auto status = lab_sm_status(s, false);
    for (size_t i = 0; i < s.sms.size(); ++i)
        EXPECT_EQ(last->states.at(i), i == *m ? "MASTER" : status[i].alive ? "STANDBY" : "")
            << "sm" << i + 1 << " as sminfo from " << sc.quiet << " reads it: " << sample_text(*last) << "\n" << logs(s);
    const SmInfoStats st = sminfo_stats(sc.smp->samples(), settled, now_s());
    EXPECT_GE(st.samples, 3);
    EXPECT_EQ(st.two_masters, 0) << st.two_masters << " of " << st.samples << " samples after settling saw two masters\n"
                                 << logs(s);
    EXPECT_EQ(fabric_lids(s, sc.quiet), sc.before) << "LIDs changed";
    if (master) *master = *m;
}

#define SCENARIO(sc, n)                       \
    Scenario sc(n);                           \
    if (!sc.skip.empty()) GTEST_SKIP() << sc.skip

}  // namespace

// Issue 16, scenario 1: every TCP connection to the standby's ingest port killed every 20 ms (the
// master's plugin is gone as far as the standby's agent knows), and a 1 s flap of the master's
// own cable meanwhile: a closed connection is no second witness, the failures do not outlast the
// flap window, so the standby's agent must not promote, and the master stays master.
TEST(HaCompound, TcpCutPlusAFlapOfTheMastersCableKeepsTheMaster) {
    SCENARIO(sc, 2);
    ASSERT_TRUE(sc.smp->next(now_s(), 3));
    const int64_t t0 = unix_ms_now();
    int kills = 0;
    {
        LabTcpCut cut(sc.s.sms[1].tcp_port);
        sleep_s(1.5);
        ASSERT_EQ(sc.fault("unlink", sc.cable(0)).rc, 0);
        sleep_s(1.0);
        ASSERT_EQ(sc.fault("relink", sc.cable(0)).rc, 0);
        sleep_s(2.5);
        kills = cut.kills();
    }
    if (kills == 0) GTEST_SKIP() << "ss -K closed no connection here (a kernel without INET_DIAG_DESTROY?)";
    size_t m = 9;
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc, &m));
    if (count_of(read_all(sc.s.sms[1].daemon_log), "promoting:") == 0) {
        EXPECT_TRUE(log_us_after(sc.s.sms[0].log, t0, "SUBNET UP")) << "the master swept after its cable came back";
        EXPECT_EQ(m, 0u) << "the priority-15 master stays master";
    } else {
        // Never against a live master. Seen in 2 of ~6 runs on a loaded machine: the master's own
        // OpenSM left MASTER for DISCOVERING when its port went down and saw its port up only ~2 s
        // later, so the fabric had no master and the slow path (2 s, DISCOVER) rightly promoted.
        EXPECT_TRUE(log_us_after(sc.s.sms[0].log, t0, "Entering DISCOVERING state"))
            << "the standby's agent promoted against a live master on a closed connection plus a flap\n" << logs(sc.s);
        // The promotion is a DISCOVER: sm2's own election decides. If sm1's port was back by then
        // (its IsSM kept, as on hardware: lab/umad-kernel), sm2 finds the higher-priority sm1 and
        // goes STANDBY without ever being MASTER; else sm2 is the one master.
        if (m == 0u)
            EXPECT_FALSE(log_us_after(sc.s.sms[1].log, t0, "Entering MASTER state"))
                << "sm2 became MASTER and then gave the mastership back (a failback)\n" << logs(sc.s);
        else
            EXPECT_EQ(m, 1u) << "the promoted SM is the one master\n" << logs(sc.s);
    }
    const SmInfoStats all = sminfo_stats(sc.smp->samples(), 0, now_s());
    EXPECT_EQ(all.two_masters, 0) << "a sample saw two masters during the fault\n" << logs(sc.s);
}

// Issue 16, scenario 2: the master isolated (its cable out) 5 s, then relinked; then the master
// (whichever it is now) killed. The other must take over and reach SUBNET UP.
TEST(HaCompound, IsolatedMasterRelinkedThenKilledLeavesAMasterThatSweeps) {
    SCENARIO(sc, 2);
    ASSERT_EQ(sc.fault("unlink", sc.cable(0)).rc, 0);
    sleep_s(5.0);
    ASSERT_EQ(sc.fault("relink", sc.cable(0)).rc, 0);
    auto m = lab_wait_one_master(sc.s, 15, 1.0);
    ASSERT_TRUE(m) << "no single master after the relink\n" << logs(sc.s);
    Cli k = sc.fault("kill-sm", "master");
    ASSERT_EQ(k.rc, 0) << describe(k);
    const int64_t kill_ms = k.j["unix_ms"].get<int64_t>();
    const size_t other = 1 - *m;
    std::optional<int64_t> up;
    for (double end = now_s() + 8; !up && now_s() < end; sleep_s(0.05)) up = log_us_after(sc.s.sms[other].log, kill_ms, "SUBNET UP");
    ASSERT_TRUE(up) << "sm" << other + 1 << " never completed a sweep after the kill\n" << logs(sc.s);
    EXPECT_LT(*up, 5000000) << "kill -> SUBNET UP " << *up << " us";
    size_t now_master = 9;
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc, &now_master));
    EXPECT_EQ(now_master, other);
}

// Issue 16, scenario 4: a frozen master. 1.2 s (beyond heartbeat_timeout_ms, within the flap
// window) is no failover at all; 2.5 s is taken over, and once it thaws no decision is taken from
// the failures counted during the freeze (no "is dead" after the thaw).
TEST(HaCompound, AFrozenMasterIsNotJudgedDeadFromStaleFailures) {
    SCENARIO(sc, 2);
    ASSERT_EQ(sc.fault("freeze-sm", "master").rc, 0);
    sleep_s(1.2);
    ASSERT_EQ(sc.fault("thaw-sm", "sm1").rc, 0);
    sleep_s(2.0);
    EXPECT_EQ(count_of(read_all(sc.s.sms[1].daemon_log), "promoting:"), 0u) << "1.2 s frozen is no failover\n" << logs(sc.s);
    EXPECT_EQ(sminfo_stats(sc.smp->samples(), 0, now_s()).two_masters, 0) << logs(sc.s);

    ASSERT_EQ(sc.fault("freeze-sm", "master").rc, 0);
    sleep_s(2.5);
    ASSERT_EQ(sc.fault("thaw-sm", "sm1").rc, 0);
    sleep_s(0.3);
    const size_t dead_before = count_of(read_all(sc.s.sms[1].daemon_log), "is dead:") +
                               count_of(read_all(sc.s.sms[0].daemon_log), "is dead:");
    sleep_s(3.0);
    const size_t dead_after = count_of(read_all(sc.s.sms[1].daemon_log), "is dead:") +
                              count_of(read_all(sc.s.sms[0].daemon_log), "is dead:");
    EXPECT_EQ(dead_after, dead_before) << "an SM was judged dead after the thaw\n" << logs(sc.s);
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc));
}

// Issue 16, scenario 4: a 1.2 s flap of the standby's own cable. Its agent counts no failure while
// its own port is down and discards those around the change: it never promotes its SM.
TEST(HaCompound, AFlapOfTheStandbysOwnCableIsNoPromotion) {
    SCENARIO(sc, 2);
    ASSERT_TRUE(sc.smp->next(now_s(), 3));
    ASSERT_EQ(sc.fault("unlink", sc.cable(1)).rc, 0);
    sleep_s(1.2);
    ASSERT_EQ(sc.fault("relink", sc.cable(1)).rc, 0);
    sleep_s(3.0);
    EXPECT_EQ(count_of(read_all(sc.s.sms[1].daemon_log), "promoting:"), 0u)
        << "the standby's agent promoted across its own port's flap\n" << logs(sc.s);
    size_t m = 9;
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc, &m));
    EXPECT_EQ(m, 0u);
    EXPECT_EQ(sminfo_stats(sc.smp->samples(), 0, now_s()).two_masters, 0) << logs(sc.s);
}

// Issue 16, scenario 4 with three SMs: the master killed, the second takes over; then the new
// master killed too. A master killed earlier is never "the master" again: the third SM takes
// over and sweeps.
TEST(HaCompound, ThreeSmsTwoKillsInARowEndWithOneSweepingMaster) {
    SCENARIO(sc, 3);
    Cli k1 = sc.fault("kill-sm", "master");
    ASSERT_EQ(k1.rc, 0) << describe(k1);
    auto m = lab_wait_one_master(sc.s, 10, 1.0);
    ASSERT_TRUE(m) << logs(sc.s);
    EXPECT_EQ(*m, 1u);
    Cli k2 = sc.fault("kill-sm", "master");
    ASSERT_EQ(k2.rc, 0) << describe(k2);
    const int64_t kill_ms = k2.j["unix_ms"].get<int64_t>();
    std::optional<int64_t> up;
    for (double end = now_s() + 8; !up && now_s() < end; sleep_s(0.05)) up = log_us_after(sc.s.sms[2].log, kill_ms, "SUBNET UP");
    ASSERT_TRUE(up) << "sm3 never completed a sweep after the second kill\n" << logs(sc.s);
    size_t m3 = 9;
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc, &m3));
    EXPECT_EQ(m3, 2u);
}

// The lab's OpenSMs run with the kernel's MAD timeouts (lab/umad-kernel, docs/ha-facts.md
// section 2): a frozen master no longer answers the SMInfo that the promoted standby's first sweep
// sends it, and that sweep must still reach SUBNET UP while the old master is frozen, as on
// hardware (under umad2sim alone the query stayed outstanding and the new master never swept).
TEST(HaCompound, AStandbyPromotedBesideAFrozenMasterSweepsWhileItIsFrozen) {
    SCENARIO(sc, 2);
    ASSERT_FALSE(sc.s.umad_kernel.empty()) << "the lab ran OpenSM without libibf_umad_kernel.so";
    Cli fz = sc.fault("freeze-sm", "master");
    ASSERT_EQ(fz.rc, 0) << describe(fz);
    const int64_t freeze_ms = fz.j["unix_ms"].get<int64_t>();
    std::optional<int64_t> master, up;
    for (double end = now_s() + 6; !up && now_s() < end; sleep_s(0.05)) {
        if (!master) master = log_us_after(sc.s.sms[1].log, freeze_ms, "Entering MASTER state");
        if (master) up = log_us_after(sc.s.sms[1].log, freeze_ms + *master / 1000, "SUBNET UP");
    }
    const std::string out = read_all(sc.s.sms[1].out);
    ASSERT_EQ(sc.fault("thaw-sm", "sm1").rc, 0);
    ASSERT_TRUE(master) << "sm2 was not promoted while sm1 was frozen\n" << logs(sc.s);
    ASSERT_TRUE(up) << "sm2 became MASTER " << *master << " us after the freeze but never swept\n" << logs(sc.s);
    EXPECT_LT(*up, 4000000) << "freeze -> sm2's SUBNET UP " << *up << " us";
    // Its SubnGet(SMInfo) to the frozen SM was handed back timed out (class 0x81, attribute 0x0020).
    EXPECT_NE(out.find("class 0x81 method 0x01 attr 0x0020"), std::string::npos) << out;
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc));
}

// The restart race: a master killed with a MAD to it outstanding and started again at once.
// Under umad2sim alone the surviving master's query to the restarting SM could stay outstanding
// forever and wedge it (2 of 20 soak faults); with the kernel's timeouts every round ends with one
// master that sweeps.
TEST(HaCompound, AMasterKilledAndRestartedThreeTimesLeavesOneSweepingMaster) {
    SCENARIO(sc, 2);
    ASSERT_FALSE(sc.s.umad_kernel.empty()) << "the lab ran OpenSM without libibf_umad_kernel.so";
    for (int round = 0; round < 3; ++round) {
        auto m = lab_wait_one_master(sc.s, 15, 1.0);
        ASSERT_TRUE(m) << "round " << round << ": no single master\n" << logs(sc.s);
        Cli k = sc.fault("kill-sm", "master");
        ASSERT_EQ(k.rc, 0) << describe(k);
        ASSERT_TRUE(lab_wait_one_master(sc.s, 10, 1.0)) << "round " << round << ": no master after the kill\n" << logs(sc.s);
        Cli r = sc.fault("restart-sm", "sm" + std::to_string(*m + 1), false);
        ASSERT_EQ(r.rc, 0) << describe(r);
        ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc)) << "round " << round;
    }
}

// ibsim's ReLink resets both ends' PortInfo, so an SM's port lost IsSM at each flap of its cable
// (ha-facts.md section 6) and the master no longer saw that SM: a killed master restarted beside it
// then found no other SM and became a second MASTER (soak, seed 43). On hardware IsSM belongs to
// the open issm device; the lab's shim sets it again while OpenSM holds the device.
TEST(HaCompound, AnSmPortKeepsIsSmAcrossAFlapOfItsCable) {
    SCENARIO(sc, 2);
    ASSERT_FALSE(sc.s.umad_kernel.empty()) << "the lab ran OpenSM without libibf_umad_kernel.so";
    const std::string lid = std::to_string(sc.s.sms[1].lid);
    auto capmask = [&] {
        const std::string out = lab_run_client(sc.s, {"smpquery", "portinfo", lid}, 10, sc.s.umad2sim, sc.quiet);
        const size_t at = out.find("CapMask:");
        return at == std::string::npos ? 0ul : std::stoul(out.substr(out.find("0x", at)), nullptr, 16);
    };
    ASSERT_NE(capmask() & 0x2, 0ul) << "sm2's port has no IsSM before the flap";
    ASSERT_EQ(sc.fault("unlink", sc.cable(1)).rc, 0);
    sleep_s(1.0);
    ASSERT_EQ(sc.fault("relink", sc.cable(1)).rc, 0);
    sleep_s(1.5);  // the shim asserts IsSM every 0.5 s
    EXPECT_NE(capmask() & 0x2, 0ul) << "sm2's port lost IsSM with the flap\n" << logs(sc.s);
    ASSERT_NO_FATAL_FAILURE(expect_one_sweeping_master(sc));
}
