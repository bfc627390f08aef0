// One sweep's row of the history database (ibf/history.h's HistoryStore stores it): built on the
// check thread by the pipeline (ibf/pipeline.h) from the published check. Data only.
//
//   ibf::HistoryRow row{.sweep_seq = 41, .taken_unix_ms = t, .nodes = 2144, .findings = 2};
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ibf {

struct HistoryRow {
    uint64_t sweep_seq = 0;
    int64_t taken_unix_ms = 0;      // the snapshot's time
    int64_t published_unix_ms = 0;  // when its findings were published
    uint64_t sm_guid = 0;           // the SM that produced it
    size_t nodes = 0, switches = 0, cas = 0, links = 0, findings = 0;
    bool checked = false;           // false: no topology was configured
    double check_ms = 0;
    std::string findings_json;      // ibf::findings_to_json(...).dump()
};

}  // namespace ibf
