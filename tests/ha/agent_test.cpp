// HaAgent (ha/agent/): the prober thread only sends MADs; files and history rows run on the file
// thread, so a slow one never delays a promotion or a probe round (docs/threading.md "ha threads").
// A fake SmpPort answers at once; a producer or task that blocks until the test releases it stands
// in for a guid2lid built for a large fabric, a slow disk or a root helper that does not answer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ibf/daemon_fixture.h"
#include "ibf/ha_agent.h"

using namespace ibf;
using namespace ibf::test;
using steady = std::chrono::steady_clock;

namespace {

class FakePort : public ha::SmpPort {
public:
    ha::SmInfoReply get_sminfo(uint16_t lid) override {
        ha::SmInfoReply r;
        r.status = ha::SmpStatus::ok;
        r.info.lid = lid;
        r.info.state = SmState::Master;
        return r;
    }
    ha::SmInfoReply set_sminfo(uint16_t lid, uint32_t, SmState) override {
        ha::SmInfoReply r;
        r.status = ha::SmpStatus::ok;
        r.info.lid = lid;
        return r;
    }
    ha::PortInfoReply get_portinfo(uint16_t, uint8_t) override { return {}; }
    ha::LocalPort local() override { return ha::LocalPort{.ok = true}; }
};

// A gate the file thread waits at until the test opens it (at most 10 s: a failing test ends).
class Gate {
public:
    void wait() {
        std::unique_lock lk(mu_);
        waiting_ = true;
        cv_.notify_all();
        cv_.wait_for(lk, std::chrono::seconds(10), [this] { return open_; });
    }
    bool waiting() {
        std::lock_guard lk(mu_);
        return waiting_ && !open_;
    }
    void open() {
        std::lock_guard lk(mu_);
        open_ = true;
        cv_.notify_all();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool waiting_ = false, open_ = false;
};

struct Agent {
    std::atomic<int> batches{0};
    std::atomic<int> promotions{0};
    std::atomic<int> fences_done{0};
    std::atomic<int64_t> promoted_us{0};  // steady clock, when on_promote_sent ran
    std::mutex mu;
    std::vector<std::string> warnings;
    std::unique_ptr<HaAgent> agent;

    // mad_port false: opening the MAD port fails, as on a node whose umad device is missing.
    explicit Agent(ha::HaConfig cfg = {}, bool mad_port = true) {
        cfg.poll_ms = 20;
        HaAgentHooks h;
        h.open_port = [mad_port]() -> std::unique_ptr<ha::SmpPort> {
            if (!mad_port) throw std::runtime_error("cannot find umad port");
            return std::make_unique<FakePort>();
        };
        h.on_batch = [this](HaBatch) { ++batches; };
        h.on_promote_sent = [this](ha::SmInfoReply) {
            promoted_us = std::chrono::duration_cast<std::chrono::microseconds>(steady::now().time_since_epoch()).count();
            ++promotions;
        };
        h.on_fence_done = [this](bool, std::string) { ++fences_done; };
        h.log_warn = [this](const std::string& m) {
            std::lock_guard lk(mu);
            warnings.push_back(m);
        };
        h.now_ms = [] { return int64_t{0}; };
        agent = std::make_unique<HaAgent>(cfg, std::move(h));
        agent->start();
    }
    ~Agent() { agent->stop(); }
};

ha::Action promote(uint16_t lid) {
    ha::Action a;
    a.kind = ha::Action::Kind::promote;
    a.lid = lid;
    a.attr_mod = ha::kSmInfoHandover;
    return a;
}

}  // namespace

// The promotion SubnSet and the probe rounds go on while the file thread is stuck in a guid2lid
// producer: nothing the prober does waits for it.
TEST(HaAgent, APromotionIsSentWhileAFileJobBlocks) {
    TempDir dir;
    Agent a;
    Gate gate;
    const std::string path = dir.file("guid2lid");
    a.agent->write_file(path, [&]() -> std::optional<std::string> {
        gate.wait();
        return "0x0002c90300000001 1 1\n";
    });
    ASSERT_TRUE(wait_until([&] { return gate.waiting(); })) << "the producer never ran";
    const int before = a.batches;
    const auto asked = steady::now();
    a.agent->run_action(promote(7));
    const bool sent = wait_until([&] { return a.promotions == 1; }, std::chrono::seconds(5));
    const bool rounds = wait_until([&] { return a.batches >= before + 3; }, std::chrono::seconds(5));
    const bool still_blocked = gate.waiting();
    gate.open();
    ASSERT_TRUE(sent) << "the promotion waited for the file job";
    EXPECT_TRUE(rounds) << "probe rounds stopped while the file job ran: " << a.batches - before;
    EXPECT_TRUE(still_blocked);  // both happened while the producer was still waiting
    const double ms = (a.promoted_us - std::chrono::duration_cast<std::chrono::microseconds>(asked.time_since_epoch()).count()) / 1000.0;
    std::printf("promotion sent %.3f ms after run_action, the file job blocked meanwhile\n", ms);
    EXPECT_LT(ms, 1000);  // one wake-up of the prober (microseconds here; a probe round at most)
    ASSERT_TRUE(wait_until([&] { return read_file(path) == "0x0002c90300000001 1 1\n"; }));
}

ha::Action fence(std::vector<std::string> argv) {
    ha::Action a;
    a.kind = ha::Action::Kind::fence;
    a.argv = std::move(argv);
    return a;
}

// A fence command runs up to fence_timeout_ms: a second one asked while the first still runs
// queues behind it on the fence thread, and neither delays the prober (it used to join the first
// fence's thread before starting the second: a promotion or a probe round waited for it).
TEST(HaAgent, ASecondFenceWhileOneRunsNeverStallsTheProber) {
    Agent a;
    a.agent->run_action(fence({"/bin/sleep", "1"}));
    a.agent->run_action(fence({"/bin/sleep", "1"}));
    const auto asked = steady::now();
    a.agent->run_action(promote(7));
    ASSERT_TRUE(wait_until([&] { return a.promotions == 1; }, std::chrono::seconds(5)));
    const double ms = std::chrono::duration<double, std::milli>(steady::now() - asked).count();
    EXPECT_EQ(a.fences_done, 0);  // the promotion went out while the first fence still ran
    EXPECT_LT(ms, 500) << "the promotion waited for a fence";
    const int before = a.batches;
    EXPECT_TRUE(wait_until([&] { return a.batches >= before + 3; }, std::chrono::milliseconds(900)))
        << "probe rounds stopped while the fences ran";
    ASSERT_TRUE(wait_until([&] { return a.fences_done == 2; }, std::chrono::seconds(10)));
}

// The same for a history row that blocks (SQLite behind a slow disk).
TEST(HaAgent, ProbeRoundsGoOnWhileAHistoryTaskBlocks) {
    Agent a;
    Gate gate;
    a.agent->run_task([&] { gate.wait(); });
    ASSERT_TRUE(wait_until([&] { return gate.waiting(); }));
    const int before = a.batches;
    a.agent->run_action(promote(7));
    const bool sent = wait_until([&] { return a.promotions == 1; }, std::chrono::seconds(5));
    const bool rounds = wait_until([&] { return a.batches >= before + 3; }, std::chrono::seconds(5));
    gate.open();
    EXPECT_TRUE(sent);
    EXPECT_TRUE(rounds);
}

// While the file thread is busy, three texts for one file coalesce into the newest (the older
// producers never run); rows keep their order, after the file first queued before them; a
// producer that throws is logged and the next job still runs.
TEST(HaAgent, OnlyTheNewestTextOfAFileIsWrittenAndRowsKeepTheirOrder) {
    TempDir dir;
    Agent a;
    Gate gate;
    std::vector<std::string> ran;  // file thread only, read after `done`
    std::atomic<bool> done{false};
    const std::string p = dir.file("track"), q = dir.file("other");
    a.agent->run_task([&] { gate.wait(); });
    ASSERT_TRUE(wait_until([&] { return gate.waiting(); }));
    for (const char* t : {"a", "b", "c"})
        a.agent->write_file(p, [&ran, t = std::string(t)]() -> std::optional<std::string> {
            ran.push_back("p:" + t);
            return t;
        });
    a.agent->run_task([&] { ran.push_back("row 1"); });
    a.agent->write_file(q, [&]() -> std::optional<std::string> {
        ran.push_back("q");
        throw std::runtime_error("q: disk full");
    });
    a.agent->run_task([&] { ran.push_back("row 2"); });
    a.agent->write_file(dir.file("none"), [&]() -> std::optional<std::string> {
        ran.push_back("none");
        return std::nullopt;  // leave the file
    });
    a.agent->run_task([&] { done = true; });
    gate.open();
    ASSERT_TRUE(wait_until([&] { return done.load(); }));
    EXPECT_EQ(ran, (std::vector<std::string>{"p:c", "row 1", "q", "row 2", "none"}));
    EXPECT_EQ(read_file(p), "c");
    EXPECT_FALSE(std::filesystem::exists(dir.file("none")));
    std::lock_guard lk(a.mu);
    ASSERT_EQ(a.warnings.size(), 1u);
    EXPECT_EQ(a.warnings[0], "q: disk full");
}

// A text queued once its producer started waits for the next turn: it is written after, not lost.
TEST(HaAgent, ATextQueuedWhileItsFileIsBeingMadeIsWrittenAfterIt) {
    TempDir dir;
    Agent a;
    Gate gate;
    const std::string p = dir.file("guid2lid");
    a.agent->write_file(p, [&]() -> std::optional<std::string> {
        gate.wait();
        return "old";
    });
    ASSERT_TRUE(wait_until([&] { return gate.waiting(); }));
    a.agent->write_file(p, []() -> std::optional<std::string> { return "new"; });
    gate.open();
    ASSERT_TRUE(wait_until([&] { return read_file(p) == "new"; }));
}

// Without a MAD port an urgent target cannot be probed, so it must not wake the prober: it did
// (the wait's "became urgent while we slept" held at once on every round), and the agent posted
// empty batches to the io thread back to back, without bound, until a daemon's stop waited minutes
// behind them (ControllerDaemon.AnSmsExitSeenOnItsNodeIsRelayedToThePeerAgents hung 1 run in 5).
TEST(HaAgent, WithoutAMadPortAnUrgentTargetKeepsThePollPeriod) {
    Agent a({}, /*mad_port=*/false);
    a.agent->set_targets({{0x2c90300000001ull, 1, /*urgent=*/true}});
    const int before = a.batches.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    const int rounds = a.batches.load() - before;
    EXPECT_GE(rounds, 5);   // still one (empty) batch per poll period: the engine keeps ticking
    EXPECT_LE(rounds, 25);  // 400 ms / 20 ms, with room for a late wake-up; it was many thousands
    std::lock_guard lk(a.mu);
    ASSERT_FALSE(a.warnings.empty());
    EXPECT_NE(a.warnings.front().find("cannot open the MAD port"), std::string::npos) << a.warnings.front();
}

namespace {

// A port that records what the prober asked: single probes and bursts, with the burst's replies
// scripted (a probe lost on the way is simply not among them).
class BurstPort : public FakePort {
public:
    struct Seen {
        std::mutex mu;
        std::vector<uint16_t> singles;
        std::vector<std::tuple<uint16_t, int, int>> bursts;  // lid, failures, spacing_ms
    };
    explicit BurstPort(std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {}
    ha::SmInfoReply get_sminfo(uint16_t lid) override {
        std::lock_guard lk(seen_->mu);
        seen_->singles.push_back(lid);
        return FakePort::get_sminfo(lid);
    }
    ha::SmInfoBurst get_sminfo_burst(uint16_t lid, int failures, int spacing_ms) override {
        {
            std::lock_guard lk(seen_->mu);
            seen_->bursts.emplace_back(lid, failures, spacing_ms);
        }
        ha::SmInfoBurst b;
        b.sent = 3;  // the first lost, never reported; the next two failed at once
        for (double at : {10.0, 20.0}) {
            ha::SmInfoReply r;
            r.status = ha::SmpStatus::timeout;
            b.done.push_back({r, at});
        }
        return b;
    }

private:
    std::shared_ptr<Seen> seen_;
};

// A port whose probes time out: the base class's sequential burst.
class TimeoutPort : public FakePort {
public:
    int calls = 0;
    ha::SmInfoReply get_sminfo(uint16_t lid) override {
        ++calls;
        ha::SmInfoReply r;
        r.status = calls == 3 ? ha::SmpStatus::refused : ha::SmpStatus::timeout;  // the third is an answer
        r.info.lid = lid;
        r.rtt_ms = 100;
        return r;
    }
};

}  // namespace

// The master (HaTarget::burst) is probed by a burst of overlapped probes, fast_failures of them
// to come back, 10 ms apart; each failure reaches the engine with the time it came back, in the
// batch of that round, so a probe lost on the way does not hold the next failures back a whole
// mad_timeout_ms. Other SMs get one probe each.
TEST(HaAgent, TheMastersProbesAreABurstWhoseFailuresComeBackInOneBatch) {
    auto seen = std::make_shared<BurstPort::Seen>();
    std::mutex mu;
    std::vector<HaBatch> batches;
    ha::HaConfig cfg;
    cfg.poll_ms = 20;
    cfg.fast_failures = 2;
    HaAgentHooks h;
    h.open_port = [seen]() -> std::unique_ptr<ha::SmpPort> { return std::make_unique<BurstPort>(seen); };
    h.on_batch = [&](HaBatch b) {
        std::lock_guard lk(mu);
        batches.push_back(std::move(b));
    };
    h.now_ms = [] { return int64_t{5000}; };
    HaAgent agent(cfg, std::move(h));
    agent.set_targets({{0x2c90300000001ull, 1, /*urgent=*/true, /*burst=*/true}, {0x2c90300000002ull, 2}});
    agent.start();
    for (int i = 0; i < 200; ++i) {
        {
            std::lock_guard lk(mu);
            if (!batches.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    agent.stop();
    std::lock_guard lk(mu);
    ASSERT_FALSE(batches.empty());
    const HaBatch& b = batches.at(0);  // the first round: targets were set before start()
    ASSERT_EQ(b.probes.size(), 3u);
    EXPECT_EQ(b.probes[0].lid, 1);
    EXPECT_EQ(b.probes[0].reply.status, ha::SmpStatus::timeout);
    EXPECT_EQ(b.probes[0].at_ms, 5010);
    EXPECT_EQ(b.probes[1].lid, 1);
    EXPECT_EQ(b.probes[1].at_ms, 5020);
    EXPECT_EQ(b.probes[2].lid, 2);
    EXPECT_EQ(b.probes[2].reply.status, ha::SmpStatus::ok);
    std::lock_guard sk(seen->mu);
    ASSERT_FALSE(seen->bursts.empty());
    EXPECT_EQ(seen->bursts[0], std::make_tuple(uint16_t{1}, 2, 10));
    for (uint16_t lid : seen->singles) EXPECT_EQ(lid, 2) << "only the non-master target gets single probes";
}

// SmpPort's own get_sminfo_burst (for ports without overlapped MADs): one probe after another, up
// to `failures`, stopping at an answer; the times add up.
TEST(HaAgent, TheSequentialBurstStopsAtFailuresOrAnAnswer) {
    TimeoutPort two;
    const ha::SmInfoBurst b = two.get_sminfo_burst(1, 2, 10);
    EXPECT_EQ(b.sent, 2);
    ASSERT_EQ(b.done.size(), 2u);
    EXPECT_EQ(b.done[0].reply.status, ha::SmpStatus::timeout);
    EXPECT_DOUBLE_EQ(b.done[0].after_ms, 100);
    EXPECT_DOUBLE_EQ(b.done[1].after_ms, 200);
    const ha::SmInfoBurst c = two.get_sminfo_burst(1, 5, 10);  // the third call answers (refused)
    EXPECT_EQ(c.sent, 1);
    ASSERT_EQ(c.done.size(), 1u);
    EXPECT_EQ(c.done[0].reply.status, ha::SmpStatus::refused);
}
