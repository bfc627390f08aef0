// The plugin -> controller wire protocol: framing, JSON payloads, strict validation.
// Schemas and the reasoning behind the short keys: docs/wire.md.
#include "ibf/wire.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

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
    }
    return "Unknown";
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
    w.num(p.mtu_active);
    w.ch(']');
}

void write_payload(Writer& w, const Hello& h) {
    w.ch('{');
    w.key("osm"); w.str(h.osm_version); w.ch(',');
    w.key("pv"); w.str(h.plugin_version); w.ch(',');
    w.key("sm"); write_sm(w, h.sm); w.ch(',');
    w.key("pid"); w.num(h.pid);
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
    w.ch('}');
}

// ---------------------------------------------------------------------------------------------
// Decoding: nlohmann DOM, then a strict walk. Every access is checked; any mismatch throws
// wire::Error naming the field ("Snapshot.n[3].p[2][7]: ..."). The field path is a chain of
// stack frames turned into text only when an error is thrown, so the happy path allocates nothing.

struct Path {
    const Path* parent = nullptr;
    const char* key = nullptr;  // ".key" when set, else "[index]"
    size_t index = 0;
    Path child(const char* k) const { return {this, k, 0}; }
    Path at(size_t i) const { return {this, nullptr, i}; }
    std::string str() const {
        if (!parent) return key ? key : "";
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

uint64_t as_u64(const json& j, const Path& where, uint64_t max) {
    if (!j.is_number_unsigned()) {
        if (j.is_number_integer()) fail(where, "negative number");
        fail(where, std::string("expected an unsigned integer, got ") + j.type_name());
    }
    uint64_t v = j.get<uint64_t>();
    if (v > max) fail(where, std::to_string(v) + " is out of range (max " + std::to_string(max) + ")");
    return v;
}

int64_t as_i64(const json& j, const Path& where) {
    if (j.is_number_unsigned()) {
        uint64_t v = j.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(where, "out of range");
        return static_cast<int64_t>(v);
    }
    if (!j.is_number_integer()) fail(where, std::string("expected an integer, got ") + j.type_name());
    return j.get<int64_t>();
}

std::string as_str(const json& j, const Path& where) {
    if (!j.is_string()) fail(where, std::string("expected a string, got ") + j.type_name());
    const auto& s = j.get_ref<const std::string&>();
    if (s.size() > kMaxString) fail(where, "string longer than " + std::to_string(kMaxString) + " bytes");
    return s;
}

bool as_bool(const json& j, const Path& where) {
    if (!j.is_boolean()) fail(where, std::string("expected true/false, got ") + j.type_name());
    return j.get<bool>();
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

template <class E>
E as_enum(const json& j, const Path& where, int max) {
    return static_cast<E>(as_u64(j, where, static_cast<uint64_t>(max)));
}

Width as_width(const json& j, const Path& where) {
    auto v = as_u64(j, where, 16);
    if (v != 0 && v != 1 && v != 2 && v != 4 && v != 8 && v != 16) fail(where, "not a link width value (0,1,2,4,8,16)");
    return static_cast<Width>(v);
}

constexpr uint64_t kSpeedMaskAll = 0x3FE;  // bits for Speed::SDR (1) .. Speed::XDR (9)

SpeedMask as_speed_mask(const json& j, const Path& where) {
    auto v = as_u64(j, where, 0xFFFF);
    if (v & ~kSpeedMaskAll) fail(where, "speed mask has bits outside SDR..XDR");
    return static_cast<SpeedMask>(v);
}

int as_mtu(const json& j, const Path& where) {
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

Hello read_hello(const json& j) {
    const Path w{nullptr, "Hello"};
    require_object(j, w.key);
    Hello h;
    h.osm_version = as_str(IBF_FIELD(j, w, "osm"));
    h.plugin_version = as_str(IBF_FIELD(j, w, "pv"));
    h.sm = read_sm(IBF_FIELD(j, w, "sm"));
    h.pid = static_cast<uint32_t>(as_u64(IBF_FIELD(j, w, "pid"), UINT32_MAX));
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
    return c;
}

void read_port(const json& j, const Path& where, Node& n, int& last_num) {
    array_of(j, where, 14, 64);
    int num = static_cast<int>(as_u64(j[0], where.at(0), 255));
    if (num > n.num_ports()) fail(where.at(0), "port " + std::to_string(num) + " beyond np " + std::to_string(n.num_ports()));
    if (num == 0 && n.type != NodeType::Switch) fail(where.at(0), "port 0 is listed only for switches");
    if (num <= last_num) fail(where.at(0), "ports must be listed once each in increasing order");
    last_num = num;
    Port& p = n.ports[num];
    p.valid = true;
    p.guid = as_u64(j[1], where.at(1), UINT64_MAX);
    p.lid = static_cast<uint16_t>(as_u64(j[2], where.at(2), 0xFFFF));
    p.lmc = static_cast<uint8_t>(as_u64(j[3], where.at(3), 7));
    p.state = as_enum<PortState>(j[4], where.at(4), 4);
    p.phys = as_enum<PhysState>(j[5], where.at(5), 7);
    p.width_active = as_width(j[6], where.at(6));
    p.speed_active = as_enum<Speed>(j[7], where.at(7), static_cast<int>(Speed::XDR));
    p.width_enabled = static_cast<WidthMask>(as_u64(j[8], where.at(8), 31));
    p.width_supported = static_cast<WidthMask>(as_u64(j[9], where.at(9), 31));
    p.speed_enabled = as_speed_mask(j[10], where.at(10));
    p.speed_supported = as_speed_mask(j[11], where.at(11));
    p.mtu_cap = as_mtu(j[12], where.at(12));
    p.mtu_active = as_mtu(j[13], where.at(13));
}

Snapshot read_snapshot(const json& j) {
    const Path w{nullptr, "Snapshot"};
    require_object(j, w.key);
    Snapshot s;
    s.osm_version = as_str(IBF_FIELD(j, w, "osm"));
    s.self = read_sm(IBF_FIELD(j, w, "self"));
    s.master_lid = static_cast<uint16_t>(as_u64(IBF_FIELD(j, w, "ml"), 0xFFFF));
    s.sweep_seq = as_u64(IBF_FIELD(j, w, "seq"), UINT64_MAX);
    s.taken_unix_ms = as_i64(IBF_FIELD(j, w, "ms"));
    s.initialization_error = as_bool(IBF_FIELD(j, w, "ie"));
    s.routing_engine = as_str(IBF_FIELD(j, w, "re"));
    const Path wsms = w.child("sms");
    const json& sms = array_of(field(j, "sms", w), wsms, 0, kMaxSms);
    s.other_sms.reserve(sms.size());
    for (size_t i = 0; i < sms.size(); ++i) s.other_sms.push_back(read_sm(sms[i], wsms.at(i)));

    const Path wnodes = w.child("n");
    const json& nodes = array_of(field(j, "n", w), wnodes, 0, kMaxNodes);
    Fabric& f = s.fabric;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const json& jn = nodes[i];
        const Path wn = wnodes.at(i);
        if (!jn.is_object()) fail(wn, "expected an object");
        Node n;
        n.type = as_enum<NodeType>(IBF_FIELD(jn, wn, "t"), 3);
        n.guid = as_u64(IBF_FIELD(jn, wn, "g"), UINT64_MAX);
        n.system_guid = as_u64(IBF_FIELD(jn, wn, "sg"), UINT64_MAX);
        n.description = as_str(IBF_FIELD(jn, wn, "d"));
        if (auto it = jn.find("nm"); it != jn.end()) n.name = as_str(*it, wn.child("nm"));
        n.vendor_id = static_cast<uint16_t>(as_u64(IBF_FIELD(jn, wn, "v"), 0xFFFF));
        n.device_id = static_cast<uint16_t>(as_u64(IBF_FIELD(jn, wn, "dv"), 0xFFFF));
        n.lid = static_cast<uint16_t>(as_u64(IBF_FIELD(jn, wn, "l"), 0xFFFF));
        int np = static_cast<int>(as_u64(IBF_FIELD(jn, wn, "np"), 255));
        const Path wp = wn.child("p");
        const json& ports = array_of(field(jn, "p", wn), wp, 0, static_cast<size_t>(np) + 1);
        if (f.find(n.guid)) fail(wn.child("g"), "duplicate node GUID " + guid_hex(n.guid));
        NodeId id = f.add_node(std::move(n), np);
        Node& node = f.node(id);
        for (Port& p : node.ports) p.valid = false;  // only listed ports exist
        int last = -1;
        for (size_t k = 0; k < ports.size(); ++k) read_port(ports[k], wp.at(k), node, last);
    }

    const Path wl = w.child("k");
    const json& links = field(j, "k", w);
    if (!links.is_array()) fail(wl, "expected an array");
    if (links.size() % 4 != 0) fail(wl, "length is not a multiple of 4");
    for (size_t i = 0; i < links.size(); i += 4) {
        auto a = static_cast<NodeId>(as_u64(links[i], wl.at(i), UINT32_MAX));
        auto pa = static_cast<int>(as_u64(links[i + 1], wl.at(i + 1), 255));
        auto b = static_cast<NodeId>(as_u64(links[i + 2], wl.at(i + 2), UINT32_MAX));
        auto pb = static_cast<int>(as_u64(links[i + 3], wl.at(i + 3), 255));
        const Path at = wl.at(i);
        if (a >= f.size() || b >= f.size()) fail(at, "link names a node that does not exist");
        Port* p = f.node(a).port(pa);
        Port* q = f.node(b).port(pb);
        if (!p || !q) fail(at, "link names a port that does not exist");
        if (a == b && pa == pb) fail(at, "port linked to itself");
        if (p->linked() || q->linked()) fail(at, "port already linked");
        f.connect(a, pa, b, pb);
    }
    f.finalize();
    return s;
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

std::string encode(const Message& m) {
    std::string out(kHeaderSize, '\0');
    if (const auto* s = std::get_if<Snapshot>(&m)) out.reserve(kHeaderSize + 64 + s->fabric.size() * 160);
    Writer w(out);
    std::visit([&](const auto& msg) { write_payload(w, msg); }, m);
    size_t len = out.size() - kHeaderSize;
    if (len > max_for(type_of(m), kMaxPayload))
        throw Error(std::string(to_string(type_of(m))) + " payload of " + std::to_string(len) + " bytes exceeds the limit");
    put_le32(out.data(), kMagic);
    put_le16(out.data() + 4, kVersion);
    put_le16(out.data() + 6, static_cast<uint16_t>(type_of(m)));
    put_le32(out.data() + 8, static_cast<uint32_t>(len));
    return out;
}

Message decode_payload(MsgType t, std::string_view payload) {
    check_depth(payload);
    json j;
    try {
        j = json::parse(payload.begin(), payload.end());
    } catch (const json::exception& e) {
        throw Error(std::string(to_string(t)) + ": bad JSON: " + e.what());
    }
    switch (t) {
        case MsgType::Hello: return read_hello(j);
        case MsgType::Snapshot: return read_snapshot(j);
        case MsgType::Event: return read_event(j);
        case MsgType::Heartbeat: return read_heartbeat(j);
        case MsgType::Counters: return read_counters(j);
    }
    throw Error("unknown message type " + std::to_string(static_cast<int>(t)));
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
    if (buffered() < kHeaderSize) return std::nullopt;
    const char* h = buf_.data() + pos_;
    uint32_t magic = get_le32(h);
    if (magic != kMagic) {
        char hex[16];
        auto r = std::to_chars(hex, hex + sizeof hex, magic, 16);
        throw Error("bad magic 0x" + std::string(hex, r.ptr) + " (not an ibfabric wire stream)");
    }
    uint16_t version = get_le16(h + 4);
    if (version != kVersion)
        throw Error("unsupported wire version " + std::to_string(version) + " (this side speaks " + std::to_string(kVersion) + ")");
    uint16_t type = get_le16(h + 6);
    if (type < 1 || type > 5) throw Error("unknown message type " + std::to_string(type));
    auto t = static_cast<MsgType>(type);
    uint32_t len = get_le32(h + 8);
    if (len > max_for(t, max_payload_))
        throw Error(std::string(to_string(t)) + " payload of " + std::to_string(len) + " bytes exceeds the limit of " +
                    std::to_string(max_for(t, max_payload_)));
    if (buffered() < kHeaderSize + len) return std::nullopt;
    Message m = decode_payload(t, std::string_view(buf_.data() + pos_ + kHeaderSize, len));
    pos_ += kHeaderSize + len;
    if (pos_ == buf_.size()) {
        buf_.clear();
        pos_ = 0;
    }
    return m;
}

}  // namespace ibf::wire
