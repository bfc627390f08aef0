// The plugin -> controller wire protocol, versions 1 and 2 (documented in docs/wire.md).
//
// A stream of frames over a Unix or TCP socket. Every frame:
//   offset 0  uint32 magic   0x49424657 ("IBFW"), little-endian
//   offset 4  uint16 version 1: a JSON payload; 2: a binary Snapshot part (after a Hello with wv >= 2)
//   offset 6  uint16 type    MsgType
//   offset 8  uint32 length  payload bytes that follow (<= kMaxPayload; v2 parts <= kMaxPartPayload)
//   offset 12 payload        v1: UTF-8 JSON object, schema per type in docs/wire.md; v2: see there
// The plugin sends Hello first on each connection, then any mix of the others. A version 2
// snapshot is a run of parts (Begin, Nodes..., Links..., Lfts..., End) of a few MiB each:
//
//   wire::SnapshotWriter w(snap, delivered);      // delivered: this connection's LftHashes
//   std::string frame;
//   while (w.next(frame)) write(fd, frame);       // then delivered = w.take_delivered()
//
// Pure: encode/decode only, no sockets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ibf/snapshot.h"

namespace ibf::wire {

inline constexpr uint32_t kMagic = 0x49424657;
inline constexpr uint16_t kVersion = 1;        // JSON frames (every message type)
inline constexpr uint16_t kVersion2 = 2;       // binary Snapshot parts (docs/wire.md, "Snapshot, version 2")
inline constexpr size_t kHeaderSize = 12;
inline constexpr size_t kMaxPayload = 256u << 20;  // 256 MiB: far above a 100k-link snapshot

// Limits the Decoder enforces (docs/wire.md, "Limits"); anything above is a wire::Error.
inline constexpr size_t kMaxSmallPayload = 64u << 10;  // every type but Snapshot
inline constexpr size_t kMaxNodes = 65536;             // nodes in one snapshot (LID space is 48k)
inline constexpr size_t kMaxSms = 1024;                // Snapshot::other_sms entries
inline constexpr size_t kMaxString = 4096;             // bytes in any one string field
inline constexpr int kMaxJsonDepth = 8;                // nesting of arrays/objects in a payload
inline constexpr size_t kMaxLftLids = 49152;           // entries in one Snapshot "lf" table (unicast LIDs 0..0xBFFF)
inline constexpr size_t kMaxPartPayload = 4u << 20;    // one version 2 Snapshot part (frame payload)

enum class MsgType : uint16_t { Hello = 1, Snapshot = 2, Event = 3, Heartbeat = 4, Counters = 5, PortCounters = 6 };
inline constexpr uint16_t kLastMsgType = 6;  // types above it are a newer peer's: skipped after Hello

// Optional Hello key "au": proof that the sender holds the shared key (docs/wire.md, "Hello
// authentication"; built and checked by ibf/wire_auth.h).
struct HelloAuth {
    int64_t unix_ms = 0;         // "t": sender's wall clock when it signed
    std::string nonce;           // "n": 32 lowercase hex digits, fresh per connection
    std::string mac;             // "m": HMAC-SHA256 over hello_auth_text(), 64 lowercase hex digits
};

struct Hello {
    std::string osm_version;     // "OpenSM 3.3.23"
    std::string plugin_version;  // ibfabric version the plugin was built from
    SmInfo sm;                   // this SM: port GUID, LID, priority, state
    uint32_t pid = 0;            // opensm's pid
    std::optional<HelloAuth> auth = std::nullopt;  // "au", absent = unauthenticated
    std::optional<SmConf> conf = std::nullopt;     // "cf", absent = not sent (an older plugin)
    uint16_t wire_version = 1;   // "wv": snapshots follow as version 2 parts when 2; absent = 1
};

enum class EventKind : uint8_t { Trap = 1, StateChange = 2, SweepStart = 3, RoutingDone = 4 };
struct Event {
    EventKind kind = EventKind::Trap;
    int64_t unix_ms = 0;
    uint16_t trap_num = 0;       // Trap: 64, 65, 128, 144, ...
    uint16_t lid = 0;            // Trap: issuer LID when known
    SmState state = SmState::NotActive;  // StateChange: new state
    std::string text;            // human readable detail
};

struct Heartbeat {
    SmInfo sm;                   // current state, polled from subn.sm_state by the plugin's thread
    uint64_t sweep_seq = 0;      // last SUBNET_UP sequence
    int64_t unix_ms = 0;
};

struct Counters {
    uint64_t snapshots_taken = 0;      // SUBNET_UP copies made
    uint64_t snapshots_sent = 0;
    uint64_t snapshots_superseded = 0; // dropped because a newer one replaced it before sending
    uint64_t events_dropped = 0;       // queue full
    uint64_t send_errors = 0;
    uint64_t reconnects = 0;
    uint64_t last_copy_us = 0;         // time spent under the OpenSM lock for the last copy
    uint64_t last_send_lag_ms = 0;     // SUBNET_UP -> last byte of that snapshot written
    uint64_t queue_depth = 0;
    // Optional keys (absent from an older plugin: 0). Port counter events from OpenSM's perfmgr
    // that report() handed to this endpoint, and those dropped because its queue was full.
    uint64_t port_counter_events = 0;
    uint64_t port_counter_events_dropped = 0;
    // Optional key "enc_err" (absent = 0): snapshots that could not be encoded (also counted in
    // send_errors; never in snapshots_sent).
    uint64_t encode_errors = 0;
};

// The port counters OpenSM's perfmgr reads (PortCounters / PortCountersExtended), in the order of
// the wire array (docs/wire.md, "6 PortCounters"). Error counters first, then the data counters.
enum class PortCounter : uint8_t {
    symbol_errors,             // SymbolErrorCounter
    link_error_recovery,       // LinkErrorRecoveryCounter
    link_downed,               // LinkDownedCounter
    rcv_errors,                // PortRcvErrors
    rcv_remote_phys_errors,    // PortRcvRemotePhysicalErrors
    rcv_switch_relay_errors,   // PortRcvSwitchRelayErrors
    xmit_discards,             // PortXmitDiscards
    xmit_constraint_errors,    // PortXmitConstraintErrors
    rcv_constraint_errors,     // PortRcvConstraintErrors
    link_integrity_errors,     // LocalLinkIntegrityErrors
    excessive_buffer_overruns, // ExcessiveBufferOverrunErrors
    vl15_dropped,              // VL15Dropped
    xmit_wait,                 // PortXmitWait (ticks)
    xmit_data,                 // PortXmitData (units of 4 bytes)
    rcv_data,                  // PortRcvData (units of 4 bytes)
    xmit_pkts,                 // PortXmitPkts
    rcv_pkts,                  // PortRcvPkts
};
inline constexpr size_t kPortCounterCount = 17;
inline constexpr size_t kPortErrorCounterCount = 13;  // symbol_errors .. xmit_wait: OSM_EVENT_ID_PORT_ERRORS
std::string_view to_string(PortCounter c);            // "symbol_errors", ...

// One port: what the plugin summed from the perfmgr's per-sweep deltas since it was loaded.
struct PortCounterRow {
    Guid node_guid = 0;
    uint8_t port = 0;
    std::array<uint64_t, kPortCounterCount> v{};  // indexed by PortCounter
};

// A batch of ports (at most kMaxPortCounterRows); the plugin sends the ports that changed.
struct PortCounters {
    int64_t unix_ms = 0;                  // wall clock when the batch was built
    std::vector<PortCounterRow> ports;
};
inline constexpr size_t kMaxPortCounterRows = 128;    // keeps a batch below kMaxSmallPayload

using Message = std::variant<Hello, Snapshot, Event, Heartbeat, Counters, PortCounters>;

// Malformed input on the wire. The receiver closes that one connection and logs what().
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

MsgType type_of(const Message& m);
std::string_view to_string(MsgType t);

// One complete frame (header + payload).
std::string encode(const Message& m);
// The same bytes as encode(Message(s)), without copying the snapshot into a Message.
std::string encode(const Snapshot& s);

// The JSON payload alone, and its inverse (validates exactly as Decoder does; throws wire::Error).
// Useful for tests, fuzzing and tools that store messages.
std::string encode_payload(const Message& m);
Message decode_payload(MsgType t, std::string_view payload);

// Version 2 snapshots (docs/wire.md, "Snapshot, version 2"). Per connection the sender keeps the
// hash of every switch's LFT as last delivered; a table whose hash is unchanged goes as a 9-byte
// "unchanged" record. Empty after a (re)connect, so a new connection gets every table.
using LftHashes = std::unordered_map<Guid, uint64_t>;
uint64_t lft_hash(const SwitchLft& t);

// Encodes one Snapshot as version 2 frames, one at a time (each at most kMaxPartPayload), so the
// sender never holds the whole encoded snapshot. `s` must outlive the writer. Throws wire::Error
// for a snapshot the format cannot carry (more than kMaxNodes nodes, an LFT above kMaxLftLids).
class SnapshotWriter {
public:
    SnapshotWriter(const Snapshot& s, const LftHashes& delivered, size_t max_part = kMaxPartPayload);
    ~SnapshotWriter();
    SnapshotWriter(const SnapshotWriter&) = delete;
    SnapshotWriter& operator=(const SnapshotWriter&) = delete;
    // Writes the next frame (header + payload) into `frame`; false once the End part was given.
    bool next(std::string& frame);
    // After the last frame: the hashes the receiver now holds (the connection's next LftHashes).
    LftHashes take_delivered();
    size_t lfts_sent() const;       // tables sent whole
    size_t lfts_unchanged() const;  // tables sent as "unchanged"

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Every frame of a version 2 snapshot, concatenated (tests, benchmarks, fuzz seeds).
std::string encode_v2(const Snapshot& s, const LftHashes& delivered = {});

class SnapshotAssembler;

// Incremental decoder for one connection: feed() bytes as they arrive, then call next() until
// it returns nullopt. Throws wire::Error on a bad magic, version, type 0 (or any unknown type
// before Hello), an oversized length, or a payload that does not match its schema; after that the
// connection must be dropped. A frame of a type above kLastMsgType after Hello is a newer peer's
// message: next() skips it and counts it (skipped(), last_skipped_type()).
// `max_before_hello` caps every frame until a Hello has been decoded (a receiver sets it to
// kMaxSmallPayload so a peer that has not introduced itself cannot make it buffer a large payload).
// Version 2 frames are Snapshot parts, accepted after a Hello that announced wv >= 2; next()
// returns the Snapshot when its End part arrives (other messages may come between parts).
// Every Snapshot next() returns carries its Snapshot::port_lids (model/port_lids.h) and
// Snapshot::port_states (model/port_states.h: with the changes since the last snapshot this
// decoder returned), computed in next(): on ibfabricd's decode thread, so its io thread never
// walks the fabric for them.
class Decoder {
public:
    explicit Decoder(size_t max_payload = kMaxPayload, size_t max_before_hello = kMaxPayload);
    ~Decoder();
    Decoder(Decoder&&) noexcept;
    Decoder& operator=(Decoder&&) noexcept;
    void feed(const char* data, size_t n);
    std::optional<Message> next();
    size_t buffered() const { return buf_.size() - pos_; }
    uint64_t skipped() const { return skipped_; }
    uint16_t last_skipped_type() const { return last_skipped_type_; }
    uint16_t wire_version() const { return wire_version_; }  // the last Hello's wv (1 before any)

private:
    bool frame_v2(uint16_t type, uint32_t len, std::optional<Message>& out);

    std::string buf_;
    size_t pos_ = 0;
    size_t max_payload_;
    size_t max_before_hello_;
    bool hello_seen_ = false;
    uint64_t skipped_ = 0;
    uint16_t last_skipped_type_ = 0;
    uint16_t wire_version_ = 1;
    std::unique_ptr<SnapshotAssembler> v2_;  // created at the first version 2 frame
    void with_digests(Snapshot& s);
    // The port states of the last snapshot decoded here: the next one's base (its changes).
    std::shared_ptr<const PortStates> last_states_;
};

}  // namespace ibf::wire
