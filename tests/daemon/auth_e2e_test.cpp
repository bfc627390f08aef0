// Issue 7's recommended deployment on a simulated fabric: one real OpenSM whose plugin sends to its
// own node's ibfabricd over the Unix socket and to peer daemons over TCP with the shared key.
// Label: integration (ibsim + OpenSM + three ibfabricd, all children killed by pid).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "ibf/daemon_fixture.h"
#include "ibf/http_client.h"
#include "ibf/ibsim_fixture.h"

using namespace ibf;
using namespace ibf::test;
namespace ts = ibf::test_support;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// An ibfabricd with TCP ingest on an ephemeral loopback port and the given key file.
struct PeerDaemon {
    std::string dir_name;
    ts::Child child;
    uint16_t http = 0, tcp = 0;
    std::string log_path;

    // The key and TCP address from a config file, or (by_flags) from --tcp / --tcp-key-file.
    void start(const ts::TempDir& tmp, const std::string& name, const std::string& key_file, bool by_flags) {
        dir_name = name;
        log_path = tmp / (name + ".log");
        const std::string conf = tmp / (name + ".yaml");
        ts::write_file(conf, by_flags ? "" : "tcp: 127.0.0.1:0\ntcp_key_file: " + key_file + "\n");
        std::vector<std::string> argv = {ts::bin_dir() + "/ibfabricd", "--config", conf, "--socket",
                                         tmp / (name + ".sock"), "--http", "127.0.0.1:0", "--port-file",
                                         tmp / (name + ".port")};
        if (by_flags) argv.insert(argv.end(), {"--tcp", "127.0.0.1:0", "--tcp-key-file", key_file});
        child = ts::Child(argv, {}, tmp.path(), log_path);
        const std::regex re("listening on tcp 127\\.0\\.0\\.1:([0-9]+)");
        std::smatch m;
        for (auto end = ts::Clock::now() + 10s; ts::Clock::now() < end; std::this_thread::sleep_for(20ms)) {
            const std::string log = ts::read_file(log_path), port = ts::read_file(tmp / (name + ".port"));
            if (!port.empty() && std::regex_search(log, m, re)) {
                http = static_cast<uint16_t>(std::stoi(port));
                tcp = static_cast<uint16_t>(std::stoi(m[1].str()));
                return;
            }
        }
        ADD_FAILURE() << name << " did not start: " << ts::read_file(log_path);
    }
};

json sms_of(uint16_t http) {
    return json::parse(http_request(HttpUrl{"127.0.0.1", http, ""}, "GET", "/api/v1/sm").body)["sms"];
}

}  // namespace

TEST(AuthenticatedIngestEndToEnd, PluginFeedsItsOwnDaemonAndAKeyedPeerAWrongKeyIsRefused) {
    if (auto why = ts::missing_tools({"ibfabricd"}); !why.empty()) GTEST_SKIP() << why;
    ts::IbsimFixture fx("ibfauth");
    const std::string key = fx.tmp / "ingest.key", other = fx.tmp / "other.key";
    ts::write_file(key, "3b9d0c6f1e2a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\n");
    ts::write_file(other, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\n");
    ::chmod(key.c_str(), 0600);
    ::chmod(other.c_str(), 0600);
    ASSERT_NO_FATAL_FAILURE(fx.start_ibsim(ts::two_switch_net()));

    const std::string sock = fx.tmp / "osm.sock";
    uint16_t local_http = 0;
    ASSERT_NO_FATAL_FAILURE(fx.start_daemon(sock, {}, local_http));  // this node's daemon: Unix only
    PeerDaemon peer, stranger;
    ASSERT_NO_FATAL_FAILURE(peer.start(fx.tmp, "peer", key, false));
    ASSERT_NO_FATAL_FAILURE(stranger.start(fx.tmp, "stranger", other, true));

    const std::string opts = "socket=" + sock + " tcp=127.0.0.1:" + std::to_string(peer.tcp) +
                             " tcp=127.0.0.1:" + std::to_string(stranger.tcp) + " key_file=" + key +
                             " heartbeat_ms=500";
    fx.start_opensm("h1", ts::plugin_conf(opts));
    ASSERT_TRUE(ts::wait_for_text(fx.tmp / "osm.log", "TCP authenticated with " + key, 15s)) << fx.log();

    // Both daemons see the SM (port GUID, MASTER) and its fabric.
    auto master_seen = [](uint16_t http) {
        json s = sms_of(http);
        return s.size() == 1 && s[0]["state"] == "MASTER" && s[0]["connected"] == true;
    };
    ASSERT_TRUE(wait_until([&] { return master_seen(local_http) && master_seen(peer.http); }, 40s)) << ts::read_file(fx.tmp / "daemon.log") << ts::read_file(peer.log_path) << fx.log();
    EXPECT_EQ(sms_of(local_http)[0]["port_guid"], sms_of(peer.http)[0]["port_guid"]);
    EXPECT_EQ(sms_of(peer.http)[0]["peer"].get<std::string>().rfind("127.0.0.1:", 0), 0u);
    ASSERT_TRUE(wait_until([&] {
        return json::parse(http_request(HttpUrl{"127.0.0.1", peer.http, ""}, "GET", "/api/v1/fabric").body)
                   .value("links", 0) == 6;
    }, 20s));

    // The daemon with another key refuses every connection, and says why (rate-limited lines).
    ASSERT_TRUE(ts::wait_for_text(stranger.log_path, "unauthenticated: wrong MAC", 10s)) << ts::read_file(stranger.log_path);
    EXPECT_TRUE(sms_of(stranger.http).empty());
    const std::string slog = ts::read_file(stranger.log_path);
    EXPECT_TRUE(std::regex_search(slog, std::regex("ingest: tcp connection [0-9]+ \\(127\\.0\\.0\\.1:[0-9]+\\) dropped: "
                                                   "unauthenticated: wrong MAC")))
        << slog;
    EXPECT_NE(slog.find("dropped: unauthenticated: wrong MAC (the plugin's key_file differs from tcp_key_file)"),
              std::string::npos);
    // The plugin keeps retrying it with backoff; its own daemon is unaffected.
    EXPECT_TRUE(master_seen(local_http));
}
