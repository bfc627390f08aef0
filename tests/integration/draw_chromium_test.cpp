// The daemon's page in a real browser: a lab with cabling faults, its ibfabricd's GET /ui loaded
// by headless Chromium (Debian's `chromium`), the DOM after load holds the findings table, the
// red links with their labels and the counters panel with the cable given symbol errors, and the
// screenshot is a real PNG. `ibfabric draw --url` writes the
// same picture. Skips with the reason when chromium or the daemon is missing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "ibf/lab_process.h"
#include "lab_cli.h"

namespace fs = std::filesystem;
using namespace ibf;
using namespace ibf::test;

namespace {

size_t count(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

std::string chromium_binary() {
    for (const char* name : {"chromium", "chromium-browser"})
        if (std::string p = lab_detail::which(name); !p.empty()) return p;
    return "";
}

// A throw-away browser profile, removed with the test.
struct Profile {
    std::string path;
    Profile() {
        char tmpl[] = "/tmp/ibf-chromium-XXXXXX";
        if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~Profile() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// chromium --headless ARGS URL; stdout in `out`, stderr in `log`.
int chromium(const std::string& bin, const Profile& prof, std::vector<std::string> args, const std::string& url,
             const std::string& log, std::string& out) {
    lab_detail::SpawnSpec s;
    s.argv = {bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
              "--user-data-dir=" + prof.path};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.argv.push_back(url);
    s.out_path = log;
    return lab_detail::run_capture(s, 60, out);
}

}  // namespace

TEST(DrawChromium, TheDaemonsPageShowsFindingsAndRedLinks) {
    if (!have_daemon()) GTEST_SKIP() << "ibfabricd / libibfabric_osm.so not built";
    const std::string bin = chromium_binary();
    if (bin.empty()) GTEST_SKIP() << "chromium is not installed (Debian package `chromium`, in scripts/install-deps.sh)";
    LabDir lab;
    Cli up = lab.cli({"lab", "up", kSmall, "--fault", "cross:leaf01/19,leaf01/20", "--fault", "remove:leaf02/21", "--json"});
    ASSERT_EQ(up.rc, 1) << describe(up);
    ASSERT_EQ(summary(up), (std::map<std::string, int>{{"miswired", 1}, {"missing_link", 1}})) << up.out;  // a crossed pair is one finding
    // Symbol errors on a good (labelled) cable, read by OpenSM's perfmgr (the lab's, every 5 s): `lab
    // fault errors` waits for the port's baseline reading, sets the counter and waits for the next one.
    Cli errs = lab.cli({"lab", "fault", "errors", "leaf04/22", "SymbolErrorCounter=55", "--json"});
    ASSERT_EQ(errs.rc, 1) << describe(errs);
    ASSERT_EQ(summary(errs), (std::map<std::string, int>{{"miswired", 1}, {"missing_link", 1}, {"port_errors", 1}}))
        << errs.out;
    const LabState s = lab.state();
    const std::string url = "http://127.0.0.1:" + std::to_string(s.api_port);

    Profile prof;
    std::string dom;
    int rc = chromium(bin, prof, {"--dump-dom"}, url + "/ui", lab.path + "/chromium-dom.log", dom);
    ASSERT_EQ(rc, 0) << read_all(lab.path + "/chromium-dom.log");
    // The findings table: one row per finding, with the ends and the remediation.
    EXPECT_EQ(count(dom, "<tr class=\"finding sev-error\" data-kind=\"miswired\">"), 1u) << dom;
    EXPECT_EQ(count(dom, "<tr class=\"finding sev-error\" data-kind=\"missing_link\">"), 1u);
    EXPECT_NE(dom.find("<td>leaf01/19</td>"), std::string::npos);
    EXPECT_NE(dom.find("<td>leaf02/21</td>"), std::string::npos);
    // The picture: the crossed cables and the missing one in red, labelled with both ends.
    EXPECT_EQ(count(dom, "<g class=\"link fault\" data-kind=\"miswired\""), 1u);
    EXPECT_EQ(count(dom, "<g class=\"link fault missing\" data-kind=\"missing_link\""), 1u);
    EXPECT_NE(dom.find("data-a=\"spine02/3\" data-b=\"leaf02/21\""), std::string::npos) << dom;
    EXPECT_NE(dom.find("leaf01/19</text>"), std::string::npos);
    EXPECT_NE(dom.find(">missing_link spine02/3 - leaf02/21</text>"), std::string::npos);
    // Bundles and host groups: 4 leaves with 2 hosts each, parallel cables counted.
    EXPECT_EQ(count(dom, "<g class=\"node hostgroup\" data-hosts=\"2\">"), 4u);
    EXPECT_GE(count(dom, ">x2</text>"), 4u);
    // SM states from the plugin, and the perfmgr's counters: the cable with symbol errors first, red,
    // with its trend.
    EXPECT_NE(dom.find("<section id=\"sms\">"), std::string::npos);
    EXPECT_NE(dom.find("<td>MASTER</td>"), std::string::npos);
    EXPECT_EQ(dom.find("no counter data"), std::string::npos);
    EXPECT_NE(dom.find("<section id=\"counters\">\n<h2>Link error counters</h2>\n<p class=\"summary\">"), std::string::npos);
    EXPECT_NE(dom.find(" ports counted: 1 of "), std::string::npos);
    const size_t first = dom.find("<tr class=\"counter");
    ASSERT_NE(first, std::string::npos) << dom;
    const std::string row = "<tr class=\"counter over\"><td>leaf04/22 -- spine02/8</td><td>L04-S02-B</td>"
                            "<td>SymbolErrorCounter</td><td>55</td><td>+55</td>";
    EXPECT_EQ(dom.compare(first, row.size(), row), 0) << dom.substr(first, 600);
    EXPECT_NE(dom.find("<td>leaf04/22 55 (+55)</td><td>&gt; 10</td><td class=\"spark\"><svg class=\"spark\"", first),
              std::string::npos)
        << dom.substr(first, 600);
    EXPECT_EQ(count(dom, "<tr class=\"counter"), 1u);

    const std::string png = lab.path + "/page.png";
    std::string ignored;
    rc = chromium(bin, prof, {"--screenshot=" + png, "--window-size=1280,1000", "--hide-scrollbars"}, url + "/ui",
                  lab.path + "/chromium-shot.log", ignored);
    ASSERT_EQ(rc, 0) << read_all(lab.path + "/chromium-shot.log");
    const std::string bytes = read_all(png);
    ASSERT_GE(bytes.size(), 8u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_GT(bytes.size(), 20'000u) << "a blank page is a few kB";

    // The CLI fetches the same picture.
    Cli draw = lab.raw({"draw", "--url", url, "-o", lab.path + "/live.svg", "--json"});
    EXPECT_EQ(draw.rc, 1) << describe(draw);
    EXPECT_EQ(draw.j.value("findings", 0), 3) << draw.out;
    const std::string svg = read_all(lab.path + "/live.svg");
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_EQ(count(svg, "<g class=\"link fault"), 3u);
}
