// Writes history-v1.db with the HistoryStore of main at df7806e (schema before user_version:
// tables sweeps and ha_events), the fixture HistoryMigration.* opens and migrates.
// Built once by hand against that commit's controller/src/history.cpp:
//   M=/work/main; g++ -std=c++20 $(for d in $M/*/include; do echo -n "-I$d "; done) \
//       make_v1_fixture.cpp $M/controller/src/history.cpp $M/build/model/libibf_model.a -lsqlite3
//   ./a.out history-v1.db
#include <cstdio>
#include <string>

#include "ibf/history.h"

namespace ibf {
std::string iso_time(int64_t) { return ""; }  // only the readers use it
}

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    std::remove(argv[1]);
    ibf::HistoryStore h(argv[1]);
    const char* findings[] = {
        R"({"findings":[{"kind":"miswired","severity":"error","a":{"name":"leaf03","guid":"0x0000000000000103","port":19},"b":{"name":"spine01","guid":"0x0000000000000201","port":6},"expected":"spine01/5","actual":"spine01/6","label":"","message":"cable at leaf03/19 goes to spine01/6, plan says spine01/5"}],"summary":{"miswired":1}})",
        R"({"findings":[],"summary":{}})",
        R"({"findings":[{"kind":"rate_mismatch","severity":"error","a":{"name":"leaf07","guid":"0x0000000000000107","port":25},"b":{"name":"spine04","guid":"0x0000000000000204","port":13},"expected":"4xEDR","actual":"1xEDR","label":"","message":"leaf07/25 -- spine04/13 runs at 1xEDR"}],"summary":{"rate_mismatch":1}})"};
    for (int i = 0; i < 3; ++i) {
        ibf::HistoryRow r;
        r.sweep_seq = 40 + i;
        r.taken_unix_ms = 1764468041000 + i * 10000;
        r.published_unix_ms = r.taken_unix_ms + 20;
        r.sm_guid = 0x0002c90300000001;
        r.nodes = 14; r.switches = 6; r.cas = 8; r.links = 16;
        r.findings = i == 1 ? 0 : 1;
        r.checked = true;
        r.check_ms = 0.41;
        r.findings_json = findings[i];
        h.append(r);
    }
    h.append_ha_event(1764468050000, R"({"from":"0x0002c90300000002","to":"0x0002c90300000001","outcome":"observed"})");
    return 0;
}
