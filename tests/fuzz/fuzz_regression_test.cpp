// Every committed fuzz input (fuzz/corpus/<target>/ seeds and fuzz/regressions/<target>/ inputs
// that once crashed) through its fuzz target's entry point: no crash, no escaping exception, and
// under scripts/sanitize.sh no sanitizer report. docs/testing.md, "Fuzzing".
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#define IBF_FUZZ_DECLARE(name) extern "C" int ibf_fuzz_##name(const uint8_t* data, size_t size);
IBF_FUZZ_DECLARE(ibnetdiscover)
IBF_FUZZ_DECLARE(iblinkinfo)
IBF_FUZZ_DECLARE(ibdiagnet_net)
IBF_FUZZ_DECLARE(node_name_map)
IBF_FUZZ_DECLARE(plan_yaml)
IBF_FUZZ_DECLARE(waivers)
IBF_FUZZ_DECLARE(sweep_ref)
IBF_FUZZ_DECLARE(daemon_config)
IBF_FUZZ_DECLARE(wire_decoder)
IBF_FUZZ_DECLARE(wire_v2)
IBF_FUZZ_DECLARE(http_api)
IBF_FUZZ_DECLARE(sm_helper)

namespace {

namespace fs = std::filesystem;
using Entry = int (*)(const uint8_t*, size_t);

// Feeds every regular file in `dir` whose name contains `part` to `entry`; returns how many.
size_t feed_dir(const fs::path& dir, Entry entry, const std::string& part = "") {
    size_t n = 0;
    if (!fs::is_directory(dir)) return 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file() || e.path().filename().string().find(part) == std::string::npos) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        const std::string bytes = ss.str();
        SCOPED_TRACE(e.path().string());
        EXPECT_EQ(entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
        ++n;
    }
    return n;
}

// The committed seeds and the kept crash inputs of one target.
size_t feed_all(const std::string& name, Entry entry) {
    return feed_dir(fs::path(IBF_FUZZ_DIR) / "corpus" / name, entry) + feed_dir(fs::path(IBF_FUZZ_DIR) / "regressions" / name, entry);
}

const fs::path kData = IBF_TEST_DATA;
const fs::path kExamples = fs::path(IBF_FUZZ_DIR) / ".." / "config" / "examples";

// The seeds scripts/fuzz.sh starts from (tests/data, config/examples) and the kept inputs; the
// counts say every file was found (add one when a crash input is kept).
TEST(FuzzRegression, DumpReaders) {
    EXPECT_EQ(feed_all("ibnetdiscover", ibf_fuzz_ibnetdiscover) + feed_dir(kData, ibf_fuzz_ibnetdiscover, "ibnetdiscover"), 5u);  // + ibsim-ring5-10ca (issue 21)
    EXPECT_EQ(feed_all("iblinkinfo", ibf_fuzz_iblinkinfo) + feed_dir(kData, ibf_fuzz_iblinkinfo, "iblinkinfo"), 9u);  // + synthetic-iblinkinfo-sharp.txt
    EXPECT_EQ(feed_all("ibdiagnet_net", ibf_fuzz_ibdiagnet_net) + feed_dir(kData, ibf_fuzz_ibdiagnet_net, ".net"), 1u);
    EXPECT_EQ(feed_all("node_name_map", ibf_fuzz_node_name_map), 1u);
}

TEST(FuzzRegression, PlanAndDaemonConfig) {
    EXPECT_EQ(feed_all("plan_yaml", ibf_fuzz_plan_yaml) + feed_dir(kExamples, ibf_fuzz_plan_yaml, ".yaml"), 10u);  // + fat-tree-3tier-8192.yaml
    const fs::path packaging = fs::path(IBF_FUZZ_DIR) / ".." / "packaging";
    EXPECT_EQ(feed_all("daemon_config", ibf_fuzz_daemon_config) + feed_dir(kExamples, ibf_fuzz_daemon_config, "ibfabricd") +
                  feed_dir(packaging, ibf_fuzz_daemon_config, "ibfabricd.yaml"),
              4u);
}

// Issue 19: aliases, duplicate keys and history time references (overflow, impossible dates).
TEST(FuzzRegression, WaiversAndSweepRefs) {
    EXPECT_EQ(feed_all("waivers", ibf_fuzz_waivers), 3u);
    EXPECT_EQ(feed_all("sweep_ref", ibf_fuzz_sweep_ref), 10u);  // 8 seeds + 2 kept crashes (before 1970, a signed year)
}

TEST(FuzzRegression, WireDecoderSeedsAreTheDocumentedMessages) {
    EXPECT_EQ(feed_all("wire_decoder", ibf_fuzz_wire_decoder), 13u);  // 6 payloads, 6 frames, 1 stream (docs/wire.md)
    // Version 2 parts: the sample snapshot whole, and two sweeps on one connection (the second
    // with "unchanged" LFT records), each prefixed by its cut byte.
    EXPECT_EQ(feed_all("wire_v2", ibf_fuzz_wire_v2), 2u);
}

TEST(FuzzRegression, HttpApi) {
    EXPECT_EQ(feed_all("http_api", ibf_fuzz_http_api), 9u);
}

// The root SM helper's requests: good and bad priority and guid2lid requests, an opensm.conf.
TEST(FuzzRegression, SmHelper) {
    EXPECT_EQ(feed_all("sm_helper", ibf_fuzz_sm_helper), 6u);
}

}  // namespace
