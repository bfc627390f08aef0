// HaAgent (ha/agent/): the prober thread only sends MADs; files and history rows run on the file
// thread, so a slow one never delays a promotion or a probe round (docs/threading.md "ha threads").
// A fake SmpPort answers at once; a producer or task that blocks until the test releases it stands
// in for a guid2lid built for a large fabric, a slow disk or a root helper that does not answer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
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
