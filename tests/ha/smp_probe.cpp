// ibf_smp_probe: a test-only program that drives ha/'s SmpPort and prints one JSON object per
// command on stdout. The integration test runs it under LD_PRELOAD=libumad2sim.so (which must be
// set at exec), so the real MAD path is exercised in a child process.
//
//   ibf_smp_probe [--timeout-ms N] [--retries N] [--go-on-stdin] [--asio] CMD...
//   CMD: local | get:<lid> | set:<lid>:<attr_mod>[:<claim state 0..3>] | portinfo:<lid>[:<port>]
//        | burst:<lid>:<failures>:<spacing ms>  (SmpPort::get_sminfo_burst)
//   --go-on-stdin: open the port, print {"ready":true}, then wait for one line on stdin before
//           sending (a process already attached, as a daemon would be, so timings exclude start-up).
//   --asio: run a Boost.Asio io_context (a thread, a steady timer, a connected local socket pair
//           echoing bytes) while the MADs are sent, and report that it kept working.
// Exit code: 0 when every command ran (whatever its status), 2 on bad arguments, 3 when the port
// cannot be opened, 4 when the Asio side stalled.
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <atomic>
#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ibf/smp.h"

namespace {

using nlohmann::json;

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t b = 0;
    for (size_t e; (e = s.find(':', b)) != std::string::npos; b = e + 1) out.push_back(s.substr(b, e - b));
    out.push_back(s.substr(b));
    return out;
}

bool to_uint(const std::string& s, uint32_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 0 == s.rfind("0x", 0) ? 16 : 10);
    return ec == std::errc() && p == s.data() + s.size();
}

json run(ibf::ha::SmpPort& port, const std::string& cmd) {
    const auto f = split(cmd);
    uint32_t a = 0, b = 0, c = 3;
    if (f[0] == "local" && f.size() == 1) {
        const auto l = port.local();
        return {{"cmd", cmd}, {"ok", l.ok}, {"ca", l.ca}, {"port", l.port}, {"guid", l.port_guid},
                {"lid", l.lid}, {"sm_lid", l.sm_lid}, {"state", l.state}, {"error", l.error}};
    }
    if (f[0] == "get" && f.size() == 2 && to_uint(f[1], a)) {
        const auto r = port.get_sminfo(static_cast<uint16_t>(a));
        return {{"cmd", cmd}, {"status", ibf::ha::to_string(r.status)}, {"guid", r.info.port_guid},
                {"lid", r.info.lid}, {"priority", r.info.priority}, {"state", ibf::to_string(r.info.state)},
                {"act_count", r.info.act_count}, {"sm_key", r.sm_key}, {"mad_status", r.mad_status},
                {"rtt_ms", r.rtt_ms}, {"error", r.error}};
    }
    if (f[0] == "burst" && f.size() == 4 && to_uint(f[1], a) && to_uint(f[2], b) && to_uint(f[3], c)) {
        const auto r = port.get_sminfo_burst(static_cast<uint16_t>(a), static_cast<int>(b), static_cast<int>(c));
        json done = json::array();
        for (const auto& d : r.done)
            done.push_back({{"status", ibf::ha::to_string(d.reply.status)}, {"after_ms", d.after_ms},
                            {"rtt_ms", d.reply.rtt_ms}, {"error", d.reply.error}});
        return {{"cmd", cmd}, {"sent", r.sent}, {"done", done}};
    }
    if (f[0] == "set" && (f.size() == 3 || f.size() == 4) && to_uint(f[1], a) && to_uint(f[2], b) &&
        (f.size() == 3 || (to_uint(f[3], c) && c <= 3))) {
        const auto r = port.set_sminfo(static_cast<uint16_t>(a), b, static_cast<ibf::SmState>(c));
        return {{"cmd", cmd}, {"status", ibf::ha::to_string(r.status)}, {"guid", r.info.port_guid},
                {"state", ibf::to_string(r.info.state)}, {"priority", r.info.priority},
                {"mad_status", r.mad_status}, {"rtt_ms", r.rtt_ms}, {"error", r.error}};
    }
    if (f[0] == "portinfo" && (f.size() == 2 || f.size() == 3) && to_uint(f[1], a) &&
        (f.size() == 2 || to_uint(f[2], b))) {
        const auto r = port.get_portinfo(static_cast<uint16_t>(a), static_cast<uint8_t>(b));
        return {{"cmd", cmd}, {"status", ibf::ha::to_string(r.status)}, {"lid", r.lid},
                {"master_sm_lid", r.master_sm_lid}, {"port_state", r.port_state},
                {"capability_mask", r.capability_mask}, {"error", r.error}};
    }
    return {};
}

// Asio running beside the MADs: a timer ticking every 5 ms and a socket pair echoing a byte.
struct AsioSide {
    boost::asio::io_context io;
    boost::asio::steady_timer timer{io};
    boost::asio::local::stream_protocol::socket a{io}, b{io};
    std::atomic<int> ticks{0}, echoes{0};
    char ca = 'x', cb = 0;
    std::thread th;

    void tick() {
        timer.expires_after(std::chrono::milliseconds(5));
        timer.async_wait([this](auto ec) {
            if (ec) return;
            ++ticks;
            tick();
        });
    }
    void ping() {
        boost::asio::async_write(a, boost::asio::buffer(&ca, 1), [this](auto ec, size_t) {
            if (ec) return;
            boost::asio::async_read(b, boost::asio::buffer(&cb, 1), [this](auto ec2, size_t) {
                if (ec2) return;
                ++echoes;
                ping();
            });
        });
    }
    void start() {
        boost::asio::local::connect_pair(a, b);
        tick();
        ping();
        th = std::thread([this] { io.run(); });
    }
    void stop() {
        io.stop();
        th.join();
    }
};

}  // namespace

int main(int argc, char** argv) {
    ibf::ha::SmpOptions o;
    bool asio = false, go_on_stdin = false;
    std::vector<std::string> cmds;
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        uint32_t v = 0;
        if ((s == "--timeout-ms" || s == "--retries") && i + 1 < argc && to_uint(argv[i + 1], v)) {
            (s == "--retries" ? o.retries : o.timeout_ms) = static_cast<int>(v);
            ++i;
        } else if (s == "--go-on-stdin") {
            go_on_stdin = true;
        } else if (s == "--asio") {
            asio = true;
        } else {
            cmds.push_back(s);
        }
    }
    if (cmds.empty()) {
        std::cerr << "usage: ibf_smp_probe [--timeout-ms N] [--retries N] [--asio] local|get:L|set:L:MOD[:S]|portinfo:L[:P]...\n";
        return 2;
    }
    AsioSide side;
    if (asio) side.start();
    std::unique_ptr<ibf::ha::SmpPort> port;
    try {
        port = ibf::ha::open_smp_port(o);
    } catch (const std::exception& e) {
        std::cout << json{{"open_error", e.what()}}.dump() << std::endl;
        if (asio) side.stop();
        return 3;
    }
    if (go_on_stdin) {
        std::cout << json{{"ready", true}}.dump() << std::endl;
        std::string line;
        std::getline(std::cin, line);
    }
    for (const auto& c : cmds) {
        json j = run(*port, c);
        if (j.is_null()) {
            std::cerr << "ibf_smp_probe: bad command: " << c << "\n";
            if (asio) side.stop();
            return 2;
        }
        std::cout << j.dump() << std::endl;
    }
    if (!asio) return 0;
    // The Asio side must still advance after the MADs: wait for both counters to move (up to 2 s,
    // for a loaded machine where the 5 ms timer's thread may wait for a core), not a fixed sleep.
    const int t0 = side.ticks, e0 = side.echoes;
    bool alive = false;
    for (int i = 0; i < 400 && !alive; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        alive = side.ticks > t0 && side.echoes > e0;
    }
    std::cout << json{{"asio", alive}, {"ticks", side.ticks.load()}, {"echoes", side.echoes.load()}}.dump() << std::endl;
    side.stop();
    return alive ? 0 : 4;
}
