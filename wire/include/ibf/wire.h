// The plugin -> controller wire protocol, version 1 (documented in docs/wire.md).
//
// A stream of frames over a Unix or TCP socket. Every frame:
//   offset 0  uint32 magic   0x49424657 ("IBFW"), little-endian
//   offset 4  uint16 version 1
//   offset 6  uint16 type    MsgType
//   offset 8  uint32 length  payload bytes that follow (<= kMaxPayload)
//   offset 12 payload        UTF-8 JSON object, schema per type in docs/wire.md
// The plugin sends Hello first on each connection, then any mix of the others.
// Pure: encode/decode only, no sockets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ibf/snapshot.h"

namespace ibf::wire {

inline constexpr uint32_t kMagic = 0x49424657;
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderSize = 12;
inline constexpr size_t kMaxPayload = 256u << 20;  // 256 MiB: far above a 100k-link snapshot

// Limits the Decoder enforces (docs/wire.md, "Limits"); anything above is a wire::Error.
inline constexpr size_t kMaxSmallPayload = 64u << 10;  // every type but Snapshot
inline constexpr size_t kMaxNodes = 65536;             // nodes in one snapshot (LID space is 48k)
inline constexpr size_t kMaxSms = 1024;                // Snapshot::other_sms entries
inline constexpr size_t kMaxString = 4096;             // bytes in any one string field
inline constexpr int kMaxJsonDepth = 8;                // nesting of arrays/objects in a payload
inline constexpr size_t kMaxLftLids = 49152;           // entries in one Snapshot "lf" table (unicast LIDs 0..0xBFFF)

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

// Incremental decoder for one connection: feed() bytes as they arrive, then call next() until
// it returns nullopt. Throws wire::Error on a bad magic, version, type 0 (or any unknown type
// before Hello), an oversized length, or a payload that does not match its schema; after that the
// connection must be dropped. A frame of a type above kLastMsgType after Hello is a newer peer's
// message: next() skips it and counts it (skipped(), last_skipped_type()).
// `max_before_hello` caps every frame until a Hello has been decoded (a receiver sets it to
// kMaxSmallPayload so a peer that has not introduced itself cannot make it buffer a large payload).
class Decoder {
public:
    explicit Decoder(size_t max_payload = kMaxPayload, size_t max_before_hello = kMaxPayload)
        : max_payload_(max_payload), max_before_hello_(max_before_hello) {}
    void feed(const char* data, size_t n);
    std::optional<Message> next();
    size_t buffered() const { return buf_.size() - pos_; }
    uint64_t skipped() const { return skipped_; }
    uint16_t last_skipped_type() const { return last_skipped_type_; }

private:
    std::string buf_;
    size_t pos_ = 0;
    size_t max_payload_;
    size_t max_before_hello_;
    bool hello_seen_ = false;
    uint64_t skipped_ = 0;
    uint16_t last_skipped_type_ = 0;
};

}  // namespace ibf::wire
