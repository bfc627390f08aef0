// The plugin -> controller wire protocol: framing, JSON payloads, strict validation.
// Schemas and the reasoning behind the short keys: docs/wire.md.
#include "ibf/wire.h"

#include "snapshot_v2.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

namespace ibf::wire {

using nlohmann::json;

MsgType type_of(const Message& m) {
    return static_cast<MsgType>(m.index() + 1);  // variant order == MsgType order
}

std::string_view to_string(MsgType t) {
    switch (t) {
        case MsgType::Hello: return "Hello";
        case MsgType::Snapshot: return "Snapshot";
        case MsgType::Event: return "Event";
        case MsgType::Heartbeat: return "Heartbeat";
        case MsgType::Counters: return "Counters";
        case MsgType::PortCounters: return "PortCounters";
    }
    return "Unknown";
}

std::string_view to_string(PortCounter c) {
    static constexpr std::string_view kNames[kPortCounterCount] = {
        "symbol_errors", "link_error_recovery", "link_downed", "rcv_errors", "rcv_remote_phys_errors",
        "rcv_switch_relay_errors", "xmit_discards", "xmit_constraint_errors", "rcv_constraint_errors",
        "link_integrity_errors", "excessive_buffer_overruns", "vl15_dropped", "xmit_wait", "xmit_data", "rcv_data",
        "xmit_pkts", "rcv_pkts"};
    const auto i = static_cast<size_t>(c);
    return i < kPortCounterCount ? kNames[i] : "unknown";
}

namespace {

// ---------------------------------------------------------------------------------------------
// Encoding. A small hand-written JSON writer: the Snapshot is the hot path (one per sweep, up to
// 100k links), and writing numbers straight into one string is ~10x cheaper than building a DOM.
// Strings go through nlohmann's serializer so escaping and invalid UTF-8 (replaced by U+FFFD:
// NodeDescriptions are raw bytes from the fabric) are handled by one well-tested routine.

class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}
    void raw(std::string_view s) { out_.append(s); }
    void ch(char c) { out_.push_back(c); }
    template <class T>
    void num(T v) {
        static_assert(std::is_integral_v<T>);
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        out_.append(buf, r.ptr);
    }
    void boolean(bool b) { out_.append(b ? "true" : "false"); }
    void str(std::string_view s) {
        bool plain = s.size() <= kMaxString;
        for (unsigned char c : s)
            if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) { plain = false; break; }
        if (plain) {
            out_.push_back('"');
            out_.append(s);
            out_.push_back('"');
            return;
        }
        // Truncate to the limit the decoder enforces, then let nlohmann escape / fix UTF-8.
        // Replacement characters (3 bytes each) can grow the text past the limit again: then cut
        // the sanitized text at a code point boundary and escape once more (now valid UTF-8).
        std::string esc = json(std::string(s.substr(0, kMaxString))).dump(-1, ' ', false, json::error_handler_t::replace);
        if (esc.size() > kMaxString + 2) {
            std::string t = json::parse(esc).get<std::string>();
            if (t.size() > kMaxString) {
                t.resize(kMaxString);
                while (!t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0x80) t.pop_back();
                if (!t.empty() && static_cast<unsigned char>(t.back()) >= 0xC0) t.pop_back();
                esc = json(std::move(t)).dump();
            }
        }
        out_.append(esc);
    }
    void key(std::string_view k) {
        out_.push_back('"');
        out_.append(k);
        out_.append("\":");
    }

private:
    std::string& out_;
};

void write_sm(Writer& w, const SmInfo& s) {
    w.ch('[');
    w.num(s.port_guid); w.ch(',');
    w.num(s.lid); w.ch(',');
    w.num(s.priority); w.ch(',');
    w.num(static_cast<int>(s.state)); w.ch(',');
    w.num(s.act_count);
    w.ch(']');
}

// Port array, field order documented in docs/wire.md (Snapshot, "p").
void write_port(Writer& w, const Port& p) {
    w.ch('[');
    w.num(p.num); w.ch(',');
    w.num(p.guid); w.ch(',');
    w.num(p.lid); w.ch(',');
    w.num(p.lmc); w.ch(',');
    w.num(static_cast<int>(p.state)); w.ch(',');
    w.num(static_cast<int>(p.phys)); w.ch(',');
    w.num(static_cast<int>(p.width_active)); w.ch(',');
    w.num(static_cast<int>(p.speed_active)); w.ch(',');
    w.num(p.width_enabled); w.ch(',');
    w.num(p.width_supported); w.ch(',');
    w.num(p.speed_enabled); w.ch(',');
    w.num(p.speed_supported); w.ch(',');
    w.num(p.mtu_cap); w.ch(',');
    w.num(p.mtu_active); w.ch(',');
    w.num(p.master_sm_lid);  // index 14: optional (a decoder from before it ignores it)
    w.ch(']');
}

void write_payload(Writer& w, const Hello& h) {
    w.ch('{');
    w.key("osm"); w.str(h.osm_version); w.ch(',');
    w.key("pv"); w.str(h.plugin_version); w.ch(',');
    w.key("sm"); write_sm(w, h.sm); w.ch(',');
    w.key("pid"); w.num(h.pid);
    if (h.wire_version != 1) {
        w.ch(',');
        w.key("wv"); w.num(h.wire_version);
    }
    if (h.conf) {
        w.ch(',');
        w.key("cf"); w.ch('{');
        w.key("re"); w.str(h.conf->routing_engine); w.ch(',');
        w.key("rf"); w.str(h.conf->root_guid_file); w.ch(',');
        w.key("cf"); w.str(h.conf->cn_guid_file); w.ch(',');
        w.key("lmc"); w.num(h.conf->lmc); w.ch(',');
        w.key("hg"); w.num(h.conf->honor_guid2lid ? 1 : 0); w.ch(',');
        w.key("kh"); w.str(h.conf->sm_key_digest);
        w.ch('}');
    }
    if (h.auth) {
        w.ch(',');
        w.key("au"); w.ch('{');
        w.key("t"); w.num(h.auth->unix_ms); w.ch(',');
        w.key("n"); w.str(h.auth->nonce); w.ch(',');
        w.key("m"); w.str(h.auth->mac);
        w.ch('}');
    }
    w.ch('}');
}

void write_payload(Writer& w, const Snapshot& s) {
    w.ch('{');
    w.key("osm"); w.str(s.osm_version); w.ch(',');
    w.key("self"); write_sm(w, s.self); w.ch(',');
    w.key("ml"); w.num(s.master_lid); w.ch(',');
    w.key("seq"); w.num(s.sweep_seq); w.ch(',');
    w.key("ms"); w.num(s.taken_unix_ms); w.ch(',');
    w.key("ie"); w.boolean(s.initialization_error); w.ch(',');
    w.key("re"); w.str(s.routing_engine); w.ch(',');
    if (!s.routing_engine_configured.empty()) {
        w.key("rc"); w.str(s.routing_engine_configured); w.ch(',');
    }
    if (!s.lfts.empty()) {
        // Optional: per switch [node GUID, "hex"], two hex digits per destination LID (docs/wire.md).
        static constexpr char hex[] = "0123456789abcdef";
        w.key("lf"); w.ch('[');
        for (size_t i = 0; i < s.lfts.size(); ++i) {
            const SwitchLft& t = s.lfts[i];
            if (i) w.ch(',');
            w.ch('[');
            w.num(t.switch_guid); w.ch(',');
            const std::vector<uint8_t>& port_by_lid = t.port_by_lid();
            std::string h;
            size_t n = std::min(port_by_lid.size(), kMaxLftLids);
            h.resize(2 * n + 2);
            h[0] = '"';
            for (size_t l = 0; l < n; ++l) {
                h[1 + 2 * l] = hex[port_by_lid[l] >> 4];
                h[2 + 2 * l] = hex[port_by_lid[l] & 15];
            }
            h[2 * n + 1] = '"';
            w.raw(h);
            w.ch(']');
        }
        w.ch(']'); w.ch(',');
    }
    w.key("sms"); w.ch('[');
    size_t nsms = std::min(s.other_sms.size(), kMaxSms);
    for (size_t i = 0; i < nsms; ++i) {
        if (i) w.ch(',');
        write_sm(w, s.other_sms[i]);
    }
    w.ch(']'); w.ch(',');
    w.key("n"); w.ch('[');
    const auto& nodes = s.fabric.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        if (i) w.ch(',');
        w.ch('{');
        w.key("t"); w.num(static_cast<int>(n.type)); w.ch(',');
        w.key("g"); w.num(n.guid); w.ch(',');
        w.key("sg"); w.num(n.system_guid); w.ch(',');
        w.key("d"); w.str(n.description); w.ch(',');
        if (!n.name.empty() && n.name != derive_name(n.type, n.description)) {
            w.key("nm"); w.str(n.name); w.ch(',');
        }
        w.key("v"); w.num(n.vendor_id); w.ch(',');
        w.key("dv"); w.num(n.device_id); w.ch(',');
        w.key("l"); w.num(n.lid); w.ch(',');
        w.key("np"); w.num(std::max(n.num_ports(), 0)); w.ch(',');
        w.key("p"); w.ch('[');
        bool first = true;
        for (const Port& p : n.ports) {
            if (!p.valid) continue;
            if (!first) w.ch(',');
            first = false;
            write_port(w, p);
        }
        w.ch(']');
        w.ch('}');
    }
    w.ch(']'); w.ch(',');
    // Links once each, flat: [a, pa, b, pb, a, pa, b, pb, ...].
    w.key("k"); w.ch('[');
    bool first = true;
    for (const Link& l : s.fabric.links()) {
        if (!first) w.ch(',');
        first = false;
        w.num(l.a); w.ch(',');
        w.num(l.pa); w.ch(',');
        w.num(l.b); w.ch(',');
        w.num(l.pb);
    }
    w.ch(']');
    w.ch('}');
}

void write_payload(Writer& w, const Event& e) {
    w.ch('{');
    w.key("k"); w.num(static_cast<int>(e.kind)); w.ch(',');
    w.key("ms"); w.num(e.unix_ms); w.ch(',');
    w.key("trap"); w.num(e.trap_num); w.ch(',');
    w.key("lid"); w.num(e.lid); w.ch(',');
    w.key("st"); w.num(static_cast<int>(e.state)); w.ch(',');
    w.key("tx"); w.str(e.text);
    w.ch('}');
}

void write_payload(Writer& w, const Heartbeat& h) {
    w.ch('{');
    w.key("sm"); write_sm(w, h.sm); w.ch(',');
    w.key("seq"); w.num(h.sweep_seq); w.ch(',');
    w.key("ms"); w.num(h.unix_ms);
    w.ch('}');
}

#define IBF_COUNTER_FIELDS(X)                 \
    X("taken", snapshots_taken)               \
    X("sent", snapshots_sent)                 \
    X("superseded", snapshots_superseded)     \
    X("ev_dropped", events_dropped)           \
    X("send_err", send_errors)                \
    X("reconnects", reconnects)               \
    X("copy_us", last_copy_us)                \
    X("lag_ms", last_send_lag_ms)             \
    X("qdepth", queue_depth)

void write_payload(Writer& w, const Counters& c) {
    w.ch('{');
    bool first = true;
#define X(k, f)                    \
    if (!first) w.ch(',');         \
    first = false;                 \
    w.key(k);                      \
    w.num(c.f);
    IBF_COUNTER_FIELDS(X)
#undef X
    w.raw(",\"pce\":"); w.num(c.port_counter_events);
    w.raw(",\"pcd\":"); w.num(c.port_counter_events_dropped);
    w.raw(",\"enc_err\":"); w.num(c.encode_errors);
    w.ch('}');
}

void write_payload(Writer& w, const PortCounters& pc) {
    if (pc.ports.size() > kMaxPortCounterRows)
        throw Error("PortCounters: " + std::to_string(pc.ports.size()) + " ports in one batch (at most " +
                    std::to_string(kMaxPortCounterRows) + ")");
    w.ch('{');
    w.key("ms"); w.num(pc.unix_ms); w.ch(',');
    w.key("p"); w.ch('[');
    for (size_t i = 0; i < pc.ports.size(); ++i) {
        const PortCounterRow& r = pc.ports[i];
        if (i) w.ch(',');
        w.ch('['); w.num(r.node_guid); w.ch(','); w.num(r.port);
        for (uint64_t x : r.v) { w.ch(','); w.num(x); }
        w.ch(']');
    }
    w.raw("]}");
}

// ---------------------------------------------------------------------------------------------
// Decoding: nlohmann DOM, then a strict walk. Every access is checked; any mismatch throws
// wire::Error naming the field ("Snapshot.n[3].p[2][7]: ..."). The field path is a chain of
// stack frames turned into text only when an error is thrown, so the happy path allocates nothing.

struct Path {
    const Path* parent = nullptr;
    const char* key = nullptr;  // ".key" when set, else "[index]"
    size_t index = 0;
    std::string (*root_fn)(const void*) = nullptr;  // a root that renders itself (the SAX decoder's stack)
    const void* root_ctx = nullptr;
    Path child(const char* k) const { return {this, k, 0}; }
    Path at(size_t i) const { return {this, nullptr, i}; }
    std::string str() const {
        if (!parent) return root_fn ? root_fn(root_ctx) : key ? key : "";
        std::string s = parent->str();
        if (key) return s + "." + key;
        return s + "[" + std::to_string(index) + "]";
    }
};

[[noreturn]] void fail(const Path& where, const std::string& what) { throw Error(where.str() + ": " + what); }

// Nesting depth of a JSON text, ignoring brackets inside strings. Checked before parsing so a
// hostile "[[[[..." payload cannot make the parser or the DOM's destructor recurse deeply.
void check_depth(std::string_view s) {
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') ++i;
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth) throw Error("payload nests deeper than " + std::to_string(kMaxJsonDepth));
        } else if (c == ']' || c == '}') --depth;
    }
}

// One scalar as the decoders see it: from a DOM node (small messages) or a SAX event (Snapshot).
struct Val {
    json::value_t t = json::value_t::null;
    uint64_t u = 0;
    int64_t i = 0;
    bool b = false;
    std::string_view s;
    const char* type_name() const {
        switch (t) {
            case json::value_t::object: return "object";
            case json::value_t::array: return "array";
            case json::value_t::string: return "string";
            case json::value_t::boolean: return "boolean";
            case json::value_t::number_integer:
            case json::value_t::number_unsigned:
            case json::value_t::number_float: return "number";
            default: return "null";
        }
    }
};

Val val_of(const json& j) {
    Val v;
    v.t = j.type();
    if (j.is_number_unsigned()) v.u = j.get<uint64_t>();
    else if (j.is_number_integer()) v.i = j.get<int64_t>();
    else if (j.is_boolean()) v.b = j.get<bool>();
    else if (j.is_string()) v.s = j.get_ref<const std::string&>();
    return v;
}

uint64_t as_u64(const Val& v, const Path& where, uint64_t max) {
    if (v.t != json::value_t::number_unsigned) {
        if (v.t == json::value_t::number_integer) fail(where, "negative number");
        fail(where, std::string("expected an unsigned integer, got ") + v.type_name());
    }
    if (v.u > max) fail(where, std::to_string(v.u) + " is out of range (max " + std::to_string(max) + ")");
    return v.u;
}
uint64_t as_u64(const json& j, const Path& where, uint64_t max) { return as_u64(val_of(j), where, max); }

int64_t as_i64(const Val& v, const Path& where) {
    if (v.t == json::value_t::number_unsigned) {
        if (v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(where, "out of range");
        return static_cast<int64_t>(v.u);
    }
    if (v.t != json::value_t::number_integer) fail(where, std::string("expected an integer, got ") + v.type_name());
    return v.i;
}
int64_t as_i64(const json& j, const Path& where) { return as_i64(val_of(j), where); }

std::string as_str(const Val& v, const Path& where) {
    if (v.t != json::value_t::string) fail(where, std::string("expected a string, got ") + v.type_name());
    if (v.s.size() > kMaxString) fail(where, "string longer than " + std::to_string(kMaxString) + " bytes");
    return std::string(v.s);
}
std::string as_str(const json& j, const Path& where) { return as_str(val_of(j), where); }

bool as_bool(const Val& v, const Path& where) {
    if (v.t != json::value_t::boolean) fail(where, std::string("expected true/false, got ") + v.type_name());
    return v.b;
}

const json& field(const json& obj, const char* key, const Path& where) {
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, std::string("missing \"") + key + "\"");
    return *it;
}

const json& array_of(const json& j, const Path& where, size_t min_len, size_t max_len) {
    if (!j.is_array()) fail(where, std::string("expected an array, got ") + j.type_name());
    if (j.size() < min_len) fail(where, "array has " + std::to_string(j.size()) + " elements, needs " + std::to_string(min_len));
    if (j.size() > max_len) fail(where, "array has more than " + std::to_string(max_len) + " elements");
    return j;
}

template <class E, class J>
E as_enum(const J& j, const Path& where, int max) {
    return static_cast<E>(as_u64(j, where, static_cast<uint64_t>(max)));
}

template <class J>
Width as_width(const J& j, const Path& where) {
    auto v = as_u64(j, where, 16);
    if (v != 0 && v != 1 && v != 2 && v != 4 && v != 8 && v != 16) fail(where, "not a link width value (0,1,2,4,8,16)");
    return static_cast<Width>(v);
}

constexpr uint64_t kSpeedMaskAll = 0x3FE;  // bits for Speed::SDR (1) .. Speed::XDR (9)

template <class J>
SpeedMask as_speed_mask(const J& j, const Path& where) {
    auto v = as_u64(j, where, 0xFFFF);
    if (v & ~kSpeedMaskAll) fail(where, "speed mask has bits outside SDR..XDR");
    return static_cast<SpeedMask>(v);
}

template <class J>
int as_mtu(const J& j, const Path& where) {
    auto v = static_cast<int>(as_u64(j, where, 4096));
    if (v != 0 && mtu_to_code(v) == 0) fail(where, "not an MTU (0, 256, 512, 1024, 2048, 4096)");
    return v;
}

// Required member `key` of object `obj` (whose path is `w`), with the member's own path.
#define IBF_FIELD(obj, w, key) field(obj, key, w), w.child(key)

SmInfo read_sm(const json& j, const Path& where) {
    array_of(j, where, 5, 64);
    SmInfo s;
    s.port_guid = as_u64(j[0], where.at(0), UINT64_MAX);
    s.lid = static_cast<uint16_t>(as_u64(j[1], where.at(1), 0xFFFF));
    s.priority = static_cast<uint8_t>(as_u64(j[2], where.at(2), 15));
    s.state = as_enum<SmState>(j[3], where.at(3), 3);
    s.act_count = static_cast<uint32_t>(as_u64(j[4], where.at(4), UINT32_MAX));
    return s;
}

void require_object(const json& j, std::string_view type) {
    if (!j.is_object()) throw Error(std::string(type) + ": payload is not a JSON object");
}

// A lowercase hex string of exactly `digits` digits (the nonce and the MAC of "au").
std::string as_hex(const json& j, const Path& where, size_t digits) {
    std::string s = as_str(j, where);
    if (s.size() != digits) fail(where, "expected " + std::to_string(digits) + " hex digits, got " + std::to_string(s.size()));
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) fail(where, "not a lowercase hex digit");
    return s;
}

HelloAuth read_hello_auth(const json& j, const Path& w) {
    if (!j.is_object()) fail(w, std::string("expected an object, got ") + j.type_name());
    HelloAuth a;
    a.unix_ms = as_i64(IBF_FIELD(j, w, "t"));
    a.nonce = as_hex(IBF_FIELD(j, w, "n"), 32);
    a.mac = as_hex(IBF_FIELD(j, w, "m"), 64);
    return a;
}

SmConf read_sm_conf(const json& j, const Path& w) {
    if (!j.is_object()) fail(w, std::string("expected an object, got ") + j.type_name());
    SmConf c;
    c.routing_engine = as_str(IBF_FIELD(j, w, "re"));
    c.root_guid_file = as_str(IBF_FIELD(j, w, "rf"));
    c.cn_guid_file = as_str(IBF_FIELD(j, w, "cf"));
    c.lmc = static_cast<uint8_t>(as_u64(IBF_FIELD(j, w, "lmc"), 7));
    c.honor_guid2lid = as_u64(IBF_FIELD(j, w, "hg"), 1) != 0;
    c.sm_key_digest = as_str(IBF_FIELD(j, w, "kh"));
    return c;
}

Hello read_hello(const json& j) {
    const Path w{nullptr, "Hello"};
    require_object(j, w.key);
    Hello h;
    h.osm_version = as_str(IBF_FIELD(j, w, "osm"));
    h.plugin_version = as_str(IBF_FIELD(j, w, "pv"));
    h.sm = read_sm(IBF_FIELD(j, w, "sm"));
    h.pid = static_cast<uint32_t>(as_u64(IBF_FIELD(j, w, "pid"), UINT32_MAX));
    if (auto it = j.find("au"); it != j.end()) h.auth = read_hello_auth(*it, w.child("au"));
    if (auto it = j.find("cf"); it != j.end()) h.conf = read_sm_conf(*it, w.child("cf"));
    if (auto it = j.find("wv"); it != j.end()) {
        h.wire_version = static_cast<uint16_t>(as_u64(*it, w.child("wv"), 0xFFFF));
        if (h.wire_version == 0) fail(w.child("wv"), "wire version 0 does not exist");
    }
    return h;
}

Event read_event(const json& j) {
    const Path w{nullptr, "Event"};
    require_object(j, w.key);
    Event e;
    auto k = as_u64(IBF_FIELD(j, w, "k"), 4);
    if (k == 0) fail(w.child("k"), "event kind 0 is not defined");
    e.kind = static_cast<EventKind>(k);
    e.unix_ms = as_i64(IBF_FIELD(j, w, "ms"));
    e.trap_num = static_cast<uint16_t>(as_u64(IBF_FIELD(j, w, "trap"), 0xFFFF));
    e.lid = static_cast<uint16_t>(as_u64(IBF_FIELD(j, w, "lid"), 0xFFFF));
    e.state = as_enum<SmState>(IBF_FIELD(j, w, "st"), 3);
    e.text = as_str(IBF_FIELD(j, w, "tx"));
    return e;
}

Heartbeat read_heartbeat(const json& j) {
    const Path w{nullptr, "Heartbeat"};
    require_object(j, w.key);
    Heartbeat h;
    h.sm = read_sm(IBF_FIELD(j, w, "sm"));
    h.sweep_seq = as_u64(IBF_FIELD(j, w, "seq"), UINT64_MAX);
    h.unix_ms = as_i64(IBF_FIELD(j, w, "ms"));
    return h;
}

Counters read_counters(const json& j) {
    const Path w{nullptr, "Counters"};
    require_object(j, w.key);
    Counters c;
#define X(k, f) c.f = as_u64(IBF_FIELD(j, w, k), UINT64_MAX);
    IBF_COUNTER_FIELDS(X)
#undef X
    if (j.contains("pce")) c.port_counter_events = as_u64(j["pce"], w.child("pce"), UINT64_MAX);
    if (j.contains("pcd")) c.port_counter_events_dropped = as_u64(j["pcd"], w.child("pcd"), UINT64_MAX);
    if (j.contains("enc_err")) c.encode_errors = as_u64(j["enc_err"], w.child("enc_err"), UINT64_MAX);
    return c;
}

PortCounters read_port_counters(const json& j) {
    const Path w{nullptr, "PortCounters"};
    require_object(j, w.key);
    PortCounters pc;
    pc.unix_ms = as_i64(IBF_FIELD(j, w, "ms"));
    const Path wp = w.child("p");
    const json& rows = array_of(field(j, "p", w), wp, 0, kMaxPortCounterRows);
    pc.ports.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const Path wr = wp.at(i);
        const json& a = array_of(rows[i], wr, 2 + kPortCounterCount, SIZE_MAX);  // trailing extras are ignored
        PortCounterRow r;
        r.node_guid = as_u64(a[0], wr.at(0), UINT64_MAX);
        r.port = static_cast<uint8_t>(as_u64(a[1], wr.at(1), 255));
        for (size_t k = 0; k < kPortCounterCount; ++k) r.v[k] = as_u64(a[2 + k], wr.at(2 + k), UINT64_MAX);
        pc.ports.push_back(r);
    }
    return pc;
}

// The Snapshot is decoded straight from nlohmann's SAX events: no DOM is built, which halves the
// decode time of a large fabric. Every check of the schema in docs/wire.md is made, either when a
// value arrives or when its object/array closes (checks that need several fields, e.g. port <= np).
// Keys may come in any order; unknown keys (with whatever value) are skipped; duplicate known keys
// are an error.
}  // namespace

// The structural checks both snapshot decoders (v1 JSON, v2 parts) make, in one place.
const char* link_error(const Fabric& f, NodeId a, int pa, NodeId b, int pb) {
    if (a >= f.size() || b >= f.size()) return "link names a node that does not exist";
    const Port* p = pa >= 1 ? f.node(a).port(pa) : nullptr;  // port 0 (a switch's own) carries no cable
    const Port* q = pb >= 1 ? f.node(b).port(pb) : nullptr;
    if (!p || !q) return "link names a port that does not exist";
    if (a == b && pa == pb) return "port linked to itself";
    if (p->linked() || q->linked()) return "port already linked";
    return nullptr;
}

LftError lft_error(const Fabric& f, Guid sw_guid, const std::vector<uint8_t>& port_by_lid, std::vector<uint8_t>& seen) {
    auto id = f.find(sw_guid);
    if (!id) return {0, "LFT of " + guid_hex(sw_guid) + ", which is not a node of \"n\""};
    const Node& sw = f.node(*id);
    if (sw.type != NodeType::Switch) return {0, "LFT of " + guid_hex(sw_guid) + ", which is not a switch"};
    if (seen.size() < f.size()) seen.resize(f.size(), 0);
    if (seen[*id]++) return {0, "second LFT for switch " + guid_hex(sw_guid)};
    if (port_by_lid.size() > kMaxLftLids) return {1, "more than " + std::to_string(kMaxLftLids) + " LIDs"};
    for (size_t l = 0; l < port_by_lid.size(); ++l) {
        int port = port_by_lid[l];
        if (port != kLftNoPath && port > sw.num_ports())
            return {1, "LID " + std::to_string(l) + " routed to port " + std::to_string(port) + " beyond the switch's " +
                           std::to_string(sw.num_ports()) + " ports"};
    }
    return {};
}

namespace {

class SnapshotSax final : public nlohmann::json_sax<json> {
public:
    Snapshot result;

    bool null() override { return scalar(Val{}); }
    bool boolean(bool b) override {
        Val v;
        v.t = json::value_t::boolean;
        v.b = b;
        return scalar(v);
    }
    bool number_integer(number_integer_t i) override {
        Val v;
        v.t = json::value_t::number_integer;
        v.i = i;
        return scalar(v);
    }
    bool number_unsigned(number_unsigned_t u) override {
        Val v;
        v.t = json::value_t::number_unsigned;
        v.u = u;
        return scalar(v);
    }
    bool number_float(number_float_t, const string_t&) override {
        Val v;
        v.t = json::value_t::number_float;
        return scalar(v);
    }
    bool string(string_t& s) override {
        Val v;
        v.t = json::value_t::string;
        v.s = s;
        return scalar(v);
    }
    bool binary(binary_t&) override { throw Error("Snapshot: binary values are not JSON"); }
    bool start_object(std::size_t) override { return open(true); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        frames_.back().key = k;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
        throw Error(std::string("Snapshot: bad JSON: ") + ex.what());
    }

private:
    enum class Ctx : uint8_t { Root, Sm, Sms, Nodes, Node, Ports, Port, Links, Lfts, Lft, Skip };
    struct Frame {
        Ctx ctx;
        bool obj;
        size_t count = 0;     // arrays: elements so far
        std::string key;      // objects: the current key
        std::string label_key;  // how the parent names this container: ".key" (parent object) ...
        size_t label_index = 0; // ... or "[i]" (parent array)
        SmInfo* sm = nullptr; // Ctx::Sm: where the values go
    };
    struct PortRow {
        uint64_t v[15] = {};  // index 14 (MasterSMLID) is optional: 0 when absent
    };
    struct NodeBuf {
        Node n;
        int np = -1;
        uint32_t seen = 0;
        std::vector<PortRow> ports;
    };
    enum RootBit : uint32_t { R_osm = 1, R_self = 2, R_ml = 4, R_seq = 8, R_ms = 16, R_ie = 32, R_re = 64, R_sms = 128, R_n = 256, R_k = 512, R_rc = 1024, R_lf = 2048 };
    enum NodeBit : uint32_t { N_t = 1, N_g = 2, N_sg = 4, N_d = 8, N_nm = 16, N_v = 32, N_dv = 64, N_l = 128, N_np = 256, N_p = 512 };

    std::vector<Frame> frames_;
    uint32_t root_seen_ = 0;
    NodeBuf node_;
    std::vector<uint64_t> links_;

    std::string container_path() const {
        std::string s = "Snapshot";
        for (size_t i = 1; i < frames_.size(); ++i)
            s += frames_[i - 1].obj ? "." + frames_[i].label_key : "[" + std::to_string(frames_[i].label_index) + "]";
        return s;
    }
    std::string element_path() const {
        std::string s = container_path();
        const Frame& f = frames_.back();
        if (f.obj) return s + "." + f.key;
        return s + "[" + std::to_string(f.count) + "]";
    }
    static std::string elem_fn(const void* p) { return static_cast<const SnapshotSax*>(p)->element_path(); }
    static std::string cont_fn(const void* p) { return static_cast<const SnapshotSax*>(p)->container_path(); }
    Path elem() const {
        Path p;
        p.root_fn = &elem_fn;
        p.root_ctx = this;
        return p;
    }
    Path cont() const {
        Path p;
        p.root_fn = &cont_fn;
        p.root_ctx = this;
        return p;
    }
    static void once(uint32_t& seen, uint32_t bit, const Path& w) {
        if (seen & bit) fail(w, "duplicate key");
        seen |= bit;
    }
    [[noreturn]] void not_a(const char* what, const Val& v) const {
        fail(elem(), std::string("expected ") + what + ", got " + v.type_name());
    }

    // A container where a value was expected: reuse the scalar checks for the message.
    static Val container_val(bool obj) {
        Val v;
        v.t = obj ? json::value_t::object : json::value_t::array;
        return v;
    }

    bool open(bool obj) {
        if (frames_.empty()) {
            if (!obj) throw Error("Snapshot: payload is not a JSON object");
            frames_.push_back({Ctx::Root, true});
            return true;
        }
        Frame& p = frames_.back();
        Frame child{Ctx::Skip, obj};
        if (p.obj) child.label_key = p.key;
        else child.label_index = p.count;
        switch (p.ctx) {
            case Ctx::Root:
                if (p.key == "self" || p.key == "sms" || p.key == "n" || p.key == "k" || p.key == "lf") {
                    if (obj) not_a("an array", container_val(obj));
                    if (p.key == "lf") {
                        once(root_seen_, R_lf, elem());
                        child.ctx = Ctx::Lfts;
                    } else if (p.key == "self") {
                        once(root_seen_, R_self, elem());
                        child.ctx = Ctx::Sm;
                        child.sm = &result.self;
                    } else if (p.key == "sms") {
                        once(root_seen_, R_sms, elem());
                        child.ctx = Ctx::Sms;
                    } else if (p.key == "n") {
                        once(root_seen_, R_n, elem());
                        child.ctx = Ctx::Nodes;
                    } else {
                        once(root_seen_, R_k, elem());
                        child.ctx = Ctx::Links;
                    }
                } else if (is_root_scalar(p.key)) {
                    scalar(container_val(obj));  // throws the type error
                }
                break;
            case Ctx::Sms:
                if (obj) not_a("an array", container_val(obj));
                if (p.count >= kMaxSms) fail(cont(), "array has more than " + std::to_string(kMaxSms) + " elements");
                child.ctx = Ctx::Sm;
                result.other_sms.emplace_back();
                child.sm = &result.other_sms.back();
                break;
            case Ctx::Nodes:
                if (!obj) not_a("an object", container_val(obj));
                if (p.count >= kMaxNodes) fail(cont(), "array has more than " + std::to_string(kMaxNodes) + " elements");
                child.ctx = Ctx::Node;
                node_.n = Node{};
                node_.np = -1;
                node_.seen = 0;
                node_.ports.clear();
                break;
            case Ctx::Node:
                if (p.key == "p") {
                    if (obj) not_a("an array", container_val(obj));
                    once(node_.seen, N_p, elem());
                    child.ctx = Ctx::Ports;
                } else if (is_node_scalar(p.key)) {
                    scalar(container_val(obj));
                }
                break;
            case Ctx::Ports: {
                if (obj) not_a("an array", container_val(obj));
                size_t max = node_.np >= 0 ? static_cast<size_t>(node_.np) + 1 : 256;
                if (p.count >= max) fail(cont(), "array has more than " + std::to_string(max) + " elements");
                child.ctx = Ctx::Port;
                node_.ports.emplace_back();
                break;
            }
            case Ctx::Lfts:
                if (obj) not_a("an array", container_val(obj));
                if (p.count >= kMaxNodes) fail(cont(), "array has more than " + std::to_string(kMaxNodes) + " elements");
                child.ctx = Ctx::Lft;
                result.lfts.emplace_back();
                break;
            case Ctx::Lft:
                if (p.count < 2) scalar(container_val(obj));  // throws the type error
                if (p.count >= 64) fail(cont(), "array has more than 64 elements");
                break;
            case Ctx::Sm:
            case Ctx::Port:
            case Ctx::Links:
                if ((p.ctx == Ctx::Sm && p.count < 5) || (p.ctx == Ctx::Port && p.count < 15) || p.ctx == Ctx::Links)
                    scalar(container_val(obj));
                if (p.count >= 64 && p.ctx != Ctx::Links) fail(cont(), "array has more than 64 elements");
                break;
            case Ctx::Skip: break;
        }
        if (!p.obj) ++p.count;
        frames_.push_back(std::move(child));
        return true;
    }

    static bool is_root_scalar(const std::string& k) {
        return k == "osm" || k == "ml" || k == "seq" || k == "ms" || k == "ie" || k == "re" || k == "rc";
    }
    static bool is_node_scalar(const std::string& k) {
        return k == "t" || k == "g" || k == "sg" || k == "d" || k == "nm" || k == "v" || k == "dv" || k == "l" || k == "np";
    }

    bool scalar(const Val& v) {
        if (frames_.empty()) throw Error("Snapshot: payload is not a JSON object");
        Frame& f = frames_.back();
        const Path w = elem();
        switch (f.ctx) {
            case Ctx::Root: {
                const std::string& k = f.key;
                if (k == "osm") { once(root_seen_, R_osm, w); result.osm_version = as_str(v, w); }
                else if (k == "ml") { once(root_seen_, R_ml, w); result.master_lid = static_cast<uint16_t>(as_u64(v, w, 0xFFFF)); }
                else if (k == "seq") { once(root_seen_, R_seq, w); result.sweep_seq = as_u64(v, w, UINT64_MAX); }
                else if (k == "ms") { once(root_seen_, R_ms, w); result.taken_unix_ms = as_i64(v, w); }
                else if (k == "ie") { once(root_seen_, R_ie, w); result.initialization_error = as_bool(v, w); }
                else if (k == "re") { once(root_seen_, R_re, w); result.routing_engine = as_str(v, w); }
                else if (k == "rc") { once(root_seen_, R_rc, w); result.routing_engine_configured = as_str(v, w); }
                else if (k == "self" || k == "sms" || k == "n" || k == "k" || k == "lf") not_a("an array", v);
                break;
            }
            case Ctx::Sm: {
                SmInfo& s = *f.sm;
                switch (f.count) {
                    case 0: s.port_guid = as_u64(v, w, UINT64_MAX); break;
                    case 1: s.lid = static_cast<uint16_t>(as_u64(v, w, 0xFFFF)); break;
                    case 2: s.priority = static_cast<uint8_t>(as_u64(v, w, 15)); break;
                    case 3: s.state = as_enum<SmState>(v, w, 3); break;
                    case 4: s.act_count = static_cast<uint32_t>(as_u64(v, w, UINT32_MAX)); break;
                    default:
                        if (f.count >= 64) fail(cont(), "array has more than 64 elements");
                        break;
                }
                break;
            }
            case Ctx::Lfts: not_a("an array", v);
            case Ctx::Lft: {
                SwitchLft& t = result.lfts.back();
                if (f.count == 0) {
                    t.switch_guid = as_u64(v, w, UINT64_MAX);
                } else if (f.count == 1) {
                    if (v.t != json::value_t::string) fail(w, std::string("expected a hex string, got ") + v.type_name());
                    if (v.s.size() % 2) fail(w, "odd number of hex digits");
                    if (v.s.size() / 2 > kMaxLftLids)
                        fail(w, "more than " + std::to_string(kMaxLftLids) + " LIDs");
                    std::vector<uint8_t> port_by_lid(v.s.size() / 2);
                    auto nib = [&](char c) -> int {
                        if (c >= '0' && c <= '9') return c - '0';
                        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
                        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
                        fail(w, "not a hex digit");
                    };
                    for (size_t l = 0; l < port_by_lid.size(); ++l)
                        port_by_lid[l] = static_cast<uint8_t>(nib(v.s[2 * l]) << 4 | nib(v.s[2 * l + 1]));
                    t.set_port_by_lid(std::move(port_by_lid));
                } else if (f.count >= 64) {
                    fail(cont(), "array has more than 64 elements");
                }
                break;
            }
            case Ctx::Sms: not_a("an array", v);
            case Ctx::Nodes: not_a("an object", v);
            case Ctx::Ports: not_a("an array", v);
            case Ctx::Node: {
                const std::string& k = f.key;
                NodeBuf& nb = node_;
                if (k == "t") { once(nb.seen, N_t, w); nb.n.type = as_enum<NodeType>(v, w, 3); }
                else if (k == "g") { once(nb.seen, N_g, w); nb.n.guid = as_u64(v, w, UINT64_MAX); }
                else if (k == "sg") { once(nb.seen, N_sg, w); nb.n.system_guid = as_u64(v, w, UINT64_MAX); }
                else if (k == "d") { once(nb.seen, N_d, w); nb.n.description = as_str(v, w); }
                else if (k == "nm") { once(nb.seen, N_nm, w); nb.n.name = as_str(v, w); }
                else if (k == "v") { once(nb.seen, N_v, w); nb.n.vendor_id = static_cast<uint16_t>(as_u64(v, w, 0xFFFF)); }
                else if (k == "dv") { once(nb.seen, N_dv, w); nb.n.device_id = static_cast<uint16_t>(as_u64(v, w, 0xFFFF)); }
                else if (k == "l") { once(nb.seen, N_l, w); nb.n.lid = static_cast<uint16_t>(as_u64(v, w, 0xFFFF)); }
                else if (k == "np") { once(nb.seen, N_np, w); nb.np = static_cast<int>(as_u64(v, w, 255)); }
                else if (k == "p") not_a("an array", v);
                break;
            }
            case Ctx::Port: {
                if (f.count >= 15) {
                    if (f.count >= 64) fail(cont(), "array has more than 64 elements");
                    break;
                }
                uint64_t x;
                switch (f.count) {
                    case 0: x = as_u64(v, w, 255); break;
                    case 1: x = as_u64(v, w, UINT64_MAX); break;
                    case 2: x = as_u64(v, w, 0xFFFF); break;
                    case 3: x = as_u64(v, w, 7); break;
                    case 4: x = as_u64(v, w, 4); break;
                    case 5: x = as_u64(v, w, 7); break;
                    case 6: x = static_cast<uint64_t>(as_width(v, w)); break;
                    case 7: x = as_u64(v, w, static_cast<uint64_t>(Speed::XDR)); break;
                    case 8: case 9: x = as_u64(v, w, 31); break;
                    case 10: case 11: x = as_speed_mask(v, w); break;
                    case 14: x = as_u64(v, w, 0xFFFF); break;
                    default: x = static_cast<uint64_t>(as_mtu(v, w)); break;  // 12, 13
                }
                node_.ports.back().v[f.count] = x;
                break;
            }
            case Ctx::Links: {
                int r = static_cast<int>(f.count % 4);
                links_.push_back(as_u64(v, w, r == 0 || r == 2 ? UINT32_MAX : 255));
                break;
            }
            case Ctx::Skip: break;
        }
        if (!f.obj) ++f.count;
        return true;
    }

    bool close() {
        Frame& f = frames_.back();
        switch (f.ctx) {
            case Ctx::Root: finish_root(); break;
            case Ctx::Sm:
                if (f.count < 5) fail(cont(), "array has " + std::to_string(f.count) + " elements, needs 5");
                break;
            case Ctx::Port:
                if (f.count < 14) fail(cont(), "array has " + std::to_string(f.count) + " elements, needs 14");
                break;
            case Ctx::Node: finish_node(); break;
            case Ctx::Lft:
                if (f.count < 2) fail(cont(), "array has " + std::to_string(f.count) + " elements, needs 2");
                break;
            default: break;
        }
        frames_.pop_back();
        return true;
    }

    void finish_node() {
        const Path wn = cont();
        static constexpr std::pair<NodeBit, const char*> req[] = {
            {N_t, "t"}, {N_g, "g"}, {N_sg, "sg"}, {N_d, "d"}, {N_v, "v"}, {N_dv, "dv"}, {N_l, "l"}, {N_np, "np"}, {N_p, "p"}};
        for (auto [bit, name] : req)
            if (!(node_.seen & bit)) fail(wn, std::string("missing \"") + name + "\"");
        const Path wp = wn.child("p");
        const int np = node_.np;
        if (node_.ports.size() > static_cast<size_t>(np) + 1)
            fail(wp, "array has more than " + std::to_string(np + 1) + " elements");
        int last = -1;
        for (size_t k = 0; k < node_.ports.size(); ++k) {
            int num = static_cast<int>(node_.ports[k].v[0]);
            const Path wk = wp.at(k);
            const Path w0 = wk.at(0);
            if (num > np) fail(w0, "port " + std::to_string(num) + " beyond np " + std::to_string(np));
            if (num == 0 && node_.n.type != NodeType::Switch) fail(w0, "port 0 is listed only for switches");
            if (num <= last) fail(w0, "ports must be listed once each in increasing order");
            last = num;
        }
        Fabric& fab = result.fabric;
        if (fab.find(node_.n.guid)) fail(wn.child("g"), "duplicate node GUID " + guid_hex(node_.n.guid));
        NodeId id = fab.add_node(std::move(node_.n), np);
        Node& node = fab.node(id);
        for (Port& p : node.ports) p.valid = false;  // only listed ports exist
        for (const PortRow& r : node_.ports) {
            Port& p = node.ports[r.v[0]];
            p.valid = true;
            p.guid = r.v[1];
            p.lid = static_cast<uint16_t>(r.v[2]);
            p.lmc = static_cast<uint8_t>(r.v[3]);
            p.state = static_cast<PortState>(r.v[4]);
            p.phys = static_cast<PhysState>(r.v[5]);
            p.width_active = static_cast<Width>(r.v[6]);
            p.speed_active = static_cast<Speed>(r.v[7]);
            p.width_enabled = static_cast<WidthMask>(r.v[8]);
            p.width_supported = static_cast<WidthMask>(r.v[9]);
            p.speed_enabled = static_cast<SpeedMask>(r.v[10]);
            p.speed_supported = static_cast<SpeedMask>(r.v[11]);
            p.mtu_cap = static_cast<int>(r.v[12]);
            p.mtu_active = static_cast<int>(r.v[13]);
            p.master_sm_lid = static_cast<uint16_t>(r.v[14]);
        }
    }

    void finish_root() {
        const Path w = cont();
        static constexpr std::pair<RootBit, const char*> req[] = {
            {R_osm, "osm"}, {R_self, "self"}, {R_ml, "ml"}, {R_seq, "seq"}, {R_ms, "ms"},
            {R_ie, "ie"},   {R_re, "re"},     {R_sms, "sms"}, {R_n, "n"},   {R_k, "k"}};
        for (auto [bit, name] : req)
            if (!(root_seen_ & bit)) fail(w, std::string("missing \"") + name + "\"");
        const Path wl = w.child("k");
        if (links_.size() % 4 != 0) fail(wl, "length is not a multiple of 4");
        Fabric& f = result.fabric;
        for (size_t i = 0; i < links_.size(); i += 4) {
            auto a = static_cast<NodeId>(links_[i]);
            auto pa = static_cast<int>(links_[i + 1]);
            auto b = static_cast<NodeId>(links_[i + 2]);
            auto pb = static_cast<int>(links_[i + 3]);
            if (const char* e = link_error(f, a, pa, b, pb)) fail(wl.at(i), e);
            f.connect(a, pa, b, pb);
        }
        const Path wlf = w.child("lf");
        std::vector<uint8_t> seen_lft(f.size(), 0);
        for (size_t i = 0; i < result.lfts.size(); ++i) {
            const SwitchLft& t = result.lfts[i];
            if (LftError e = lft_error(f, t.switch_guid, t.port_by_lid(), seen_lft); !e.what.empty())
                fail(wlf.at(i).at(e.field), e.what);
        }
        f.finalize();
    }
};

Snapshot read_snapshot(std::string_view payload) {
    SnapshotSax sax;
    json::sax_parse(payload.begin(), payload.end(), &sax, nlohmann::detail::input_format_t::json, true);
    return std::move(sax.result);
}

uint32_t get_le32(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
}
uint16_t get_le16(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return static_cast<uint16_t>(u[0] | u[1] << 8);
}
void put_le32(char* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_le16(char* p, uint16_t v) {
    p[0] = static_cast<char>(v & 0xFF);
    p[1] = static_cast<char>(v >> 8);
}

// Parser callback for the DOM-decoded messages (all but Snapshot): a key given twice in one
// object is an Error (`Hello.osm: duplicate key`), as in the Snapshot decoder. nlohmann's DOM
// would otherwise keep the last value silently.
struct DuplicateKeyCheck {
    std::string type;
    struct Level {
        std::vector<std::string> keys;  // small objects: a linear search beats a set
    };
    std::shared_ptr<std::vector<Level>> stack = std::make_shared<std::vector<Level>>();

    bool operator()(int, json::parse_event_t ev, json& parsed) const {
        switch (ev) {
            case json::parse_event_t::object_start: stack->emplace_back(); break;
            case json::parse_event_t::object_end:
                if (!stack->empty()) stack->pop_back();
                break;
            case json::parse_event_t::key: {
                if (stack->empty()) break;
                const std::string& k = parsed.get_ref<const std::string&>();
                std::string path = type;
                for (const Level& l : *stack)
                    if (&l != &stack->back() && !l.keys.empty()) path += "." + l.keys.back();
                auto& keys = stack->back().keys;
                for (const std::string& seen : keys)
                    if (seen == k) throw Error(path + "." + k + ": duplicate key");
                keys.push_back(k);
                break;
            }
            default: break;
        }
        return true;
    }
};

size_t max_for(MsgType t, size_t max_payload) {
    return t == MsgType::Snapshot ? max_payload : std::min(max_payload, kMaxSmallPayload);
}

}  // namespace

std::string encode_payload(const Message& m) {
    std::string out;
    Writer w(out);
    std::visit([&](const auto& msg) { write_payload(w, msg); }, m);
    return out;
}

namespace {
template <class T>
std::string encode_frame(MsgType type, const T& msg) {
    std::string out(kHeaderSize, '\0');
    if constexpr (std::is_same_v<T, Snapshot>) {
        size_t lft_bytes = 0;
        for (const SwitchLft& t : msg.lfts) lft_bytes += 2 * t.port_by_lid().size() + 32;
        out.reserve(kHeaderSize + 256 + msg.fabric.size() * 160 + lft_bytes);
    }
    Writer w(out);
    write_payload(w, msg);
    size_t len = out.size() - kHeaderSize;
    if (len > max_for(type, kMaxPayload))
        throw Error(std::string(to_string(type)) + " payload of " + std::to_string(len) + " bytes exceeds the limit");
    put_le32(out.data(), kMagic);
    put_le16(out.data() + 4, kVersion);
    put_le16(out.data() + 6, static_cast<uint16_t>(type));
    put_le32(out.data() + 8, static_cast<uint32_t>(len));
    return out;
}
}  // namespace

std::string encode(const Message& m) {
    return std::visit([&](const auto& msg) { return encode_frame(type_of(m), msg); }, m);
}

std::string encode(const Snapshot& s) { return encode_frame(MsgType::Snapshot, s); }

Message decode_payload(MsgType t, std::string_view payload) {
    check_depth(payload);
    if (t == MsgType::Snapshot) return read_snapshot(payload);
    json j;
    try {
        j = json::parse(payload.begin(), payload.end(), DuplicateKeyCheck{std::string(to_string(t))});
    } catch (const json::exception& e) {
        throw Error(std::string(to_string(t)) + ": bad JSON: " + e.what());
    }
    switch (t) {
        case MsgType::Hello: return read_hello(j);
        case MsgType::Snapshot: break;  // decoded above, without a DOM
        case MsgType::Event: return read_event(j);
        case MsgType::Heartbeat: return read_heartbeat(j);
        case MsgType::Counters: return read_counters(j);
        case MsgType::PortCounters: return read_port_counters(j);
    }
    throw Error("unknown message type " + std::to_string(static_cast<int>(t)));
}

// The receiver's digests of a decoded snapshot (Snapshot::port_lids, Snapshot::port_states, the
// latter with the changes since this connection's last snapshot), made here so that they are made
// on the decode thread, never on the io thread that applies the snapshot (docs/threading.md).
void Decoder::with_digests(Snapshot& s) {
    s.port_lids = std::make_shared<const PortLids>(port_lids(s.fabric));
    s.port_states = std::make_shared<const PortStates>(port_states(s.fabric, last_states_));
    last_states_ = s.port_states;
}

Decoder::Decoder(size_t max_payload, size_t max_before_hello)
    : max_payload_(max_payload), max_before_hello_(max_before_hello) {}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

// A version 2 frame whose header is in the buffer. False while its payload is incomplete.
bool Decoder::frame_v2(uint16_t type, uint32_t len, std::optional<Message>& out) {
    if (!hello_seen_ || wire_version_ < kVersion2)
        throw Error(std::string("wire version 2 frame ") + (hello_seen_ ? "but the Hello announced version 1" : "before Hello"));
    if (type != static_cast<uint16_t>(MsgType::Snapshot))
        throw Error("wire version 2 frame of type " + std::to_string(type) + " (version 2 carries only Snapshot parts)");
    // Each part is bounded by kMaxPartPayload; the parts of one snapshot together by max_payload_
    // (SnapshotAssembler), so a receiver with a small limit still takes a sender's 4 MiB parts.
    if (len > kMaxPartPayload)
        throw Error("Snapshot part of " + std::to_string(len) + " bytes exceeds the limit of " + std::to_string(kMaxPartPayload));
    if (buffered() < kHeaderSize + len) return false;
    if (!v2_) v2_ = std::make_unique<SnapshotAssembler>(max_payload_);
    std::optional<Snapshot> s = v2_->feed(std::string_view(buf_.data() + pos_ + kHeaderSize, len));
    pos_ += kHeaderSize + len;
    if (pos_ == buf_.size()) {
        buf_.clear();
        pos_ = 0;
    }
    if (s) {
        with_digests(*s);
        out = Message(std::move(*s));
    }
    return true;
}

void Decoder::feed(const char* data, size_t n) {
    if (pos_ > 0 && pos_ == buf_.size()) {
        buf_.clear();
        pos_ = 0;
    } else if (pos_ > (1u << 16) && pos_ > buf_.size() / 2) {
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    buf_.append(data, n);
}

std::optional<Message> Decoder::next() {
    for (;;) {
        if (buffered() < kHeaderSize) return std::nullopt;
        const char* h = buf_.data() + pos_;
        uint32_t magic = get_le32(h);
        if (magic != kMagic) {
            char hex[16];
            auto r = std::to_chars(hex, hex + sizeof hex, magic, 16);
            throw Error("bad magic 0x" + std::string(hex, r.ptr) + " (not an ibfabric wire stream)");
        }
        uint16_t version = get_le16(h + 4);
        if (version != kVersion && version != kVersion2)
            throw Error("unsupported wire version " + std::to_string(version) + " (this side speaks 1 and 2: upgrade it)");
        uint16_t type = get_le16(h + 6);
        uint32_t len = get_le32(h + 8);
        if (version == kVersion2) {  // a binary Snapshot part (docs/wire.md, "Snapshot, version 2")
            std::optional<Message> m;
            if (!frame_v2(type, len, m)) return std::nullopt;  // the rest of the frame has not arrived
            if (m) return m;
            continue;  // a part that did not complete a snapshot
        }
        if (type == 0 || (type > kLastMsgType && !hello_seen_))
            throw Error("unknown message type " + std::to_string(type) + (type == 0 ? "" : " before Hello"));
        if (type > kLastMsgType) {
            // A newer peer's message type (docs/wire.md, "Versioning"): skipped whole, counted;
            // bounded like the largest message this side knows.
            if (len > max_payload_)
                throw Error("message type " + std::to_string(type) + " payload of " + std::to_string(len) +
                            " bytes exceeds the limit of " + std::to_string(max_payload_));
            if (buffered() < kHeaderSize + len) return std::nullopt;
            pos_ += kHeaderSize + len;
            ++skipped_;
            last_skipped_type_ = type;
            continue;
        }
        auto t = static_cast<MsgType>(type);
        const size_t limit =
            hello_seen_ ? max_for(t, max_payload_) : std::min(max_for(t, max_payload_), max_before_hello_);
        if (len > limit)
            throw Error(std::string(to_string(t)) + " payload of " + std::to_string(len) + " bytes exceeds the limit of " +
                        std::to_string(limit) + (hello_seen_ || limit == max_for(t, max_payload_) ? "" : " before Hello"));
        if (buffered() < kHeaderSize + len) return std::nullopt;
        Message m = decode_payload(t, std::string_view(buf_.data() + pos_ + kHeaderSize, len));
        if (auto* snap = std::get_if<Snapshot>(&m)) with_digests(*snap);
        if (t == MsgType::Hello) {
            hello_seen_ = true;
            wire_version_ = std::get<Hello>(m).wire_version;
        }
        pos_ += kHeaderSize + len;
        if (pos_ == buf_.size()) {
            buf_.clear();
            pos_ = 0;
        }
        return m;
    }
}

}  // namespace ibf::wire
