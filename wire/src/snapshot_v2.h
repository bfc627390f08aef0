// Inside ibf_wire: the version 2 snapshot parts (docs/wire.md, "Snapshot, version 2"). The
// encoder side is public (ibf::wire::SnapshotWriter in wire.h); this is the decoder's side, used
// only by wire::Decoder: it takes one part payload at a time and builds the Snapshot as parts
// arrive, so no whole snapshot is ever buffered as bytes.
//
//   SnapshotAssembler a;                       // one per connection (it keeps the delivered LFTs)
//   if (auto s = a.feed(payload)) { ... }      // a Snapshot when the End part completes it
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ibf/snapshot.h"

namespace ibf::wire {

// Part kinds: the first payload byte of a version 2 Snapshot frame.
enum class Part : uint8_t { Begin = 1, Nodes = 2, Links = 3, Lfts = 4, End = 5 };

class SnapshotAssembler {
public:
    // `max_total`: the parts of one snapshot together may not exceed it (the Decoder's max_payload).
    explicit SnapshotAssembler(size_t max_total) : max_total_(max_total) {}
    // One part payload (without the 12-byte header). Throws wire::Error on anything malformed.
    std::optional<Snapshot> feed(std::string_view payload);

private:
    enum class Stage : uint8_t { Idle, Nodes, Links, Lfts };
    void begin(std::string_view body);
    void nodes(std::string_view body);
    void links(std::string_view body);
    void lfts(std::string_view body);
    Snapshot end(std::string_view body);

    size_t max_total_;
    size_t total_ = 0;                      // part bytes of the snapshot in progress
    Stage stage_ = Stage::Idle;
    std::unique_ptr<Snapshot> s_;           // the snapshot in progress
    uint32_t want_nodes_ = 0, want_links_ = 0, want_lfts_ = 0;
    uint32_t links_ = 0;
    std::vector<std::string> strings_;      // the string table of the snapshot in progress
    std::vector<uint8_t> lft_seen_;         // per NodeId: has a table in this snapshot
    // Per switch GUID: the table the last completed snapshot delivered ("unchanged" refers to it)
    // and its lft_hash (SwitchLft::hash of the decoded tables).
    struct Delivered {
        std::shared_ptr<const std::vector<uint8_t>> table;
        uint64_t hash = 0;
    };
    std::unordered_map<Guid, Delivered> delivered_, next_delivered_;
};

// The structural checks both snapshot decoders make (wire.cpp). nullptr / empty `what` = fine.
const char* link_error(const Fabric& f, NodeId a, int pa, NodeId b, int pb);
struct LftError {
    int field = 0;     // 0: the switch GUID, 1: the table
    std::string what;  // "" = the table is fine
};
// `seen`: per NodeId, tables so far in this snapshot (grown to the fabric's size).
LftError lft_error(const Fabric& f, Guid sw_guid, const std::vector<uint8_t>& port_by_lid, std::vector<uint8_t>& seen);

// True when `s` is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace ibf::wire
