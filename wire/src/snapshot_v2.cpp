// Version 2 snapshots: the binary parts (docs/wire.md, "Snapshot, version 2"). The writer emits a
// snapshot as frames of at most kMaxPartPayload bytes; the assembler validates each part as it
// arrives (the same rules as the JSON decoder) and builds the ibf::Snapshot, so neither side ever
// holds the whole encoded snapshot.
#include <algorithm>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>

#include "ibf/wire.h"
#include "snapshot_v2.h"

namespace ibf::wire {

namespace {

constexpr size_t kNodeTarget = 1u << 20;     // a Nodes or Links part is closed past ~1 MiB
constexpr size_t kMaxNodeRecord = 16u << 10; // a node: 2 strings of <= 4 KiB + 256 ports of <= 29 bytes
constexpr uint32_t kMaxLinks = kMaxNodes * 128;
constexpr uint16_t kSpeedMaskAll = 0x3FE;    // Speed::SDR (bit 1) .. Speed::XDR (bit 9)

// ---------------------------------------------------------------------------------------------
// Bytes, little-endian.

class Out {
public:
    explicit Out(std::string& s) : s_(s) {}
    void u8(uint8_t v) { s_.push_back(static_cast<char>(v)); }
    void u16(uint16_t v) { put(v, 2); }
    void u32(uint32_t v) { put(v, 4); }
    void u64(uint64_t v) { put(v, 8); }
    void str(std::string_view v) {
        u16(static_cast<uint16_t>(v.size()));
        s_.append(v);
    }
    void bytes(const uint8_t* p, size_t n) { s_.append(reinterpret_cast<const char*>(p), n); }
    void sm(const SmInfo& s) {
        u64(s.port_guid);
        u16(s.lid);
        u8(s.priority);
        u8(static_cast<uint8_t>(s.state));
        u32(s.act_count);
    }
    size_t size() const { return s_.size(); }
    void patch_u16(size_t at, uint16_t v) {
        s_[at] = static_cast<char>(v & 0xFF);
        s_[at + 1] = static_cast<char>(v >> 8);
    }
    void patch_u32(size_t at, uint32_t v) {
        for (int i = 0; i < 4; ++i) s_[at + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
    }

private:
    void put(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) s_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
    std::string& s_;
};

class In {
public:
    In(std::string_view d, const char* part) : d_(d), part_(part) {}
    uint8_t u8() { return static_cast<uint8_t>(take(1)[0]); }
    uint16_t u16() { return static_cast<uint16_t>(get(2)); }
    uint32_t u32() { return static_cast<uint32_t>(get(4)); }
    uint64_t u64() { return get(8); }
    std::string_view take(size_t n) {
        if (d_.size() - pos_ < n) fail("truncated at byte " + std::to_string(pos_ + 1));
        std::string_view v = d_.substr(pos_, n);
        pos_ += n;
        return v;
    }
    std::string str(const std::string& what) {
        uint16_t n = u16();
        if (n > kMaxString) fail(what + ": string of " + std::to_string(n) + " bytes (at most " + std::to_string(kMaxString) + ")");
        std::string_view v = take(n);
        if (!valid_utf8(v)) fail(what + ": not valid UTF-8");
        return std::string(v);
    }
    SmInfo sm(const std::string& what) {
        SmInfo s;
        s.port_guid = u64();
        s.lid = u16();
        s.priority = u8();
        uint8_t st = u8();
        s.act_count = u32();
        if (s.priority > 15) fail(what + ": priority " + std::to_string(s.priority) + " above 15");
        if (st > 3) fail(what + ": SM state " + std::to_string(st) + " above 3");
        s.state = static_cast<SmState>(st);
        return s;
    }
    void expect_end() {
        if (pos_ != d_.size()) fail(std::to_string(d_.size() - pos_) + " bytes after the last record");
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(std::string("Snapshot v2 ") + part_ + " part: " + what);
    }

private:
    uint64_t get(int n) {
        std::string_view b = take(static_cast<size_t>(n));
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
        return v;
    }
    std::string_view d_;
    size_t pos_ = 0;
    const char* part_;
};

// A string as the v1 encoder would send it: valid UTF-8 (invalid bytes become U+FFFD) of at most
// kMaxString bytes, cut at a code point boundary.
std::string repaired(std::string_view s) {
    using nlohmann::json;
    std::string t = json::parse(json(std::string(s.substr(0, kMaxString))).dump(-1, ' ', false, json::error_handler_t::replace))
                        .get<std::string>();
    if (t.size() > kMaxString) {
        t.resize(kMaxString);
        while (!t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0x80) t.pop_back();
        if (!t.empty() && static_cast<unsigned char>(t.back()) >= 0xC0) t.pop_back();
    }
    return t;
}

void start_frame(std::string& f, Part kind) {
    f.assign(kHeaderSize, '\0');
    f.push_back(static_cast<char>(kind));
}

void close_frame(std::string& f) {
    Out o(f);
    const auto len = static_cast<uint32_t>(f.size() - kHeaderSize);
    o.patch_u32(0, kMagic);
    f[4] = static_cast<char>(kVersion2 & 0xFF);
    f[5] = static_cast<char>(kVersion2 >> 8);
    f[6] = static_cast<char>(static_cast<uint16_t>(MsgType::Snapshot) & 0xFF);
    f[7] = 0;
    o.patch_u32(8, len);
}

// Port record flags: what follows (else the previous listed port's value; addressing: else 0).
constexpr uint8_t kPortGuid = 1, kPortCaps = 2, kPortAddr = 4;

bool same_capabilities(const Port& a, const Port& b) {
    return a.width_enabled == b.width_enabled && a.width_supported == b.width_supported && a.speed_enabled == b.speed_enabled &&
           a.speed_supported == b.speed_supported && a.mtu_cap == b.mtu_cap;
}

bool valid_width(uint8_t w) { return w == 0 || w == 1 || w == 2 || w == 4 || w == 8 || w == 16; }
bool valid_mtu(uint16_t m) { return m == 0 || mtu_to_code(m) != 0; }

}  // namespace

bool valid_utf8(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const size_t n = s.size();
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c < 0x80) { ++i; continue; }
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
        if (len == 0 || c > 0xF4 || i + len > n) return false;
        for (size_t k = 1; k < len; ++k)
            if ((p[i + k] & 0xC0) != 0x80) return false;
        if (c == 0xE0 && p[i + 1] < 0xA0) return false;  // overlong
        if (c == 0xED && p[i + 1] >= 0xA0) return false; // surrogates
        if (c == 0xF0 && p[i + 1] < 0x90) return false;  // overlong
        if (c == 0xF4 && p[i + 1] >= 0x90) return false; // above U+10FFFF
        i += len;
    }
    return true;
}

uint64_t lft_hash(const SwitchLft& t) { return ibf::lft_hash(t.port_by_lid()); }

// ---------------------------------------------------------------------------------------------
// Writer

struct SnapshotWriter::Impl {
    enum class Stage : uint8_t { Begin, Nodes, Links, Lfts, End, Done };
    const Snapshot& s;
    const LftHashes& prev;
    size_t max_part;
    Stage stage = Stage::Begin;
    size_t node = 0, link = 0, lft = 0;
    std::vector<Link> links;
    std::unordered_map<std::string_view, uint32_t> table;  // string -> 1-based index
    std::deque<std::string> owned;                          // repaired strings the table points into
    LftHashes next;
    size_t sent = 0, unchanged = 0;

    Impl(const Snapshot& snap, const LftHashes& p, size_t max) : s(snap), prev(p), max_part(max) {}

    std::string_view clean(std::string_view v) {
        if (v.size() <= kMaxString && valid_utf8(v)) return v;
        return owned.emplace_back(repaired(v));
    }
    void str_ref(Out& o, std::string_view v) {
        v = clean(v);
        auto [it, fresh] = table.try_emplace(v, static_cast<uint32_t>(table.size() + 1));
        if (!fresh) return o.u32(it->second);
        o.u32(0);
        o.str(v);
    }
    void validate() const;
    void begin(std::string& f);
    void node_record(Out& o, const Node& n);
    void nodes(std::string& f);
    void link_part(std::string& f);
    void lft_part(std::string& f);
    void end(std::string& f);
};

// What the format cannot carry, refused before the first byte is written (so a sender never leaves
// half a snapshot on a connection).
void SnapshotWriter::Impl::validate() const {
    if (s.fabric.size() > kMaxNodes) throw Error("Snapshot of " + std::to_string(s.fabric.size()) + " nodes (at most " + std::to_string(kMaxNodes) + ")");
    if (s.other_sms.size() > kMaxSms) throw Error("Snapshot with " + std::to_string(s.other_sms.size()) + " other SMs (at most " + std::to_string(kMaxSms) + ")");
    if (s.lfts.size() > s.fabric.size()) throw Error("Snapshot with " + std::to_string(s.lfts.size()) + " LFTs for " + std::to_string(s.fabric.size()) + " nodes");
    for (const SwitchLft& t : s.lfts)
        if (t.port_by_lid().size() > kMaxLftLids)
            throw Error("Snapshot: LFT of " + guid_hex(t.switch_guid) + " has " + std::to_string(t.port_by_lid().size()) +
                        " LIDs (at most " + std::to_string(kMaxLftLids) + ")");
    for (const Node& n : s.fabric.nodes())
        for (const Port& p : n.ports)
            if (p.valid && (p.mtu_cap < 0 || p.mtu_cap > 0xFFFF || p.mtu_active < 0 || p.mtu_active > 0xFFFF))
                throw Error("Snapshot: node " + guid_hex(n.guid) + " port " + std::to_string(p.num) + " has an MTU out of range");
}

void SnapshotWriter::Impl::begin(std::string& f) {
    links = s.fabric.links();
    start_frame(f, Part::Begin);
    Out o(f);
    o.u64(s.sweep_seq);
    o.u64(static_cast<uint64_t>(s.taken_unix_ms));
    o.u8(s.initialization_error ? 1 : 0);
    o.u16(s.master_lid);
    o.sm(s.self);
    o.str(clean(s.osm_version));
    o.str(clean(s.routing_engine));
    o.str(clean(s.routing_engine_configured));
    o.u16(static_cast<uint16_t>(s.other_sms.size()));
    for (const SmInfo& sm : s.other_sms) o.sm(sm);
    o.u32(static_cast<uint32_t>(s.fabric.size()));
    o.u32(static_cast<uint32_t>(links.size()));
    o.u32(static_cast<uint32_t>(s.lfts.size()));
    stage = s.fabric.size() ? Stage::Nodes : links.size() ? Stage::Links : s.lfts.size() ? Stage::Lfts : Stage::End;
}

void SnapshotWriter::Impl::node_record(Out& o, const Node& n) {
    o.u8(static_cast<uint8_t>(n.type));
    o.u8(n.name.empty() ? 0 : 1);
    o.u64(n.guid);
    o.u64(n.system_guid);
    str_ref(o, n.description);
    if (!n.name.empty()) str_ref(o, n.name);
    o.u16(n.vendor_id);
    o.u16(n.device_id);
    o.u16(n.lid);
    o.u8(static_cast<uint8_t>(n.num_ports()));
    const size_t count_at = o.size();
    o.u16(0);  // listed ports, patched below (a switch lists up to 256: ports 0..255)
    uint16_t listed = 0;
    const Port* prev = nullptr;
    for (const Port& p : n.ports) {
        if (!p.valid) continue;
        o.u8(p.num);
        // Most ports of a node repeat the previous port's GUID and capabilities, and switch ports
        // other than 0 have no LID: flags say what follows (docs/wire.md, "port").
        const bool same_guid = listed > 0 && p.guid == prev->guid;
        const bool same_caps = listed > 0 && same_capabilities(p, *prev);
        const bool no_addr = p.lid == 0 && p.lmc == 0 && p.master_sm_lid == 0;
        o.u8(static_cast<uint8_t>((same_guid ? 0 : kPortGuid) | (same_caps ? 0 : kPortCaps) | (no_addr ? 0 : kPortAddr)));
        if (!same_guid) o.u64(p.guid);
        if (!no_addr) {
            o.u16(p.lid);
            o.u8(p.lmc);
            o.u16(p.master_sm_lid);
        }
        o.u8(static_cast<uint8_t>(p.state));
        o.u8(static_cast<uint8_t>(p.phys));
        o.u8(static_cast<uint8_t>(p.width_active));
        o.u8(static_cast<uint8_t>(p.speed_active));
        o.u16(static_cast<uint16_t>(p.mtu_active));
        if (!same_caps) {
            o.u8(p.width_enabled);
            o.u8(p.width_supported);
            o.u16(p.speed_enabled);
            o.u16(p.speed_supported);
            o.u16(static_cast<uint16_t>(p.mtu_cap));
        }
        prev = &p;
        ++listed;
    }
    o.patch_u16(count_at, listed);
}

void SnapshotWriter::Impl::nodes(std::string& f) {
    start_frame(f, Part::Nodes);
    Out o(f);
    const size_t count_at = o.size();
    o.u32(0);
    uint32_t count = 0;
    const size_t target = std::min(kNodeTarget, max_part - kMaxNodeRecord);
    while (node < s.fabric.size() && f.size() - kHeaderSize < target) {
        node_record(o, s.fabric.node(static_cast<NodeId>(node)));
        ++node;
        ++count;
    }
    o.patch_u32(count_at, count);
    if (node == s.fabric.size()) stage = links.size() ? Stage::Links : s.lfts.size() ? Stage::Lfts : Stage::End;
}

void SnapshotWriter::Impl::link_part(std::string& f) {
    start_frame(f, Part::Links);
    Out o(f);
    const size_t n = std::min(links.size() - link, std::min(kNodeTarget, max_part) / 10 - 1);
    o.u32(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i, ++link) {
        const Link& l = links[link];
        o.u32(static_cast<uint32_t>(l.a));
        o.u8(l.pa);
        o.u32(static_cast<uint32_t>(l.b));
        o.u8(l.pb);
    }
    if (link == links.size()) stage = s.lfts.size() ? Stage::Lfts : Stage::End;
}

void SnapshotWriter::Impl::lft_part(std::string& f) {
    start_frame(f, Part::Lfts);
    Out o(f);
    const size_t count_at = o.size();
    o.u32(0);
    uint32_t count = 0;
    while (lft < s.lfts.size()) {
        const SwitchLft& t = s.lfts[lft];
        const uint64_t h = lft_hash(t);
        auto it = prev.find(t.switch_guid);
        const bool same = it != prev.end() && it->second == h;
        const std::vector<uint8_t>& port_by_lid = t.port_by_lid();
        const size_t need = same ? 9 : 13 + port_by_lid.size();
        if (count > 0 && f.size() - kHeaderSize + need > max_part) break;
        o.u64(t.switch_guid);
        o.u8(same ? 0 : 1);  // 0: unchanged since the last delivered snapshot, 1: the table follows
        if (!same) {
            o.u32(static_cast<uint32_t>(port_by_lid.size()));
            o.bytes(port_by_lid.data(), port_by_lid.size());
        }
        ++(same ? unchanged : sent);
        next[t.switch_guid] = h;
        ++lft;
        ++count;
    }
    o.patch_u32(count_at, count);
    if (lft == s.lfts.size()) stage = Stage::End;
}

void SnapshotWriter::Impl::end(std::string& f) {
    start_frame(f, Part::End);
    Out o(f);
    o.u32(static_cast<uint32_t>(s.fabric.size()));
    o.u32(static_cast<uint32_t>(links.size()));
    o.u32(static_cast<uint32_t>(s.lfts.size()));
    o.u32(static_cast<uint32_t>(table.size()));
    stage = Stage::Done;
}

SnapshotWriter::SnapshotWriter(const Snapshot& s, const LftHashes& delivered, size_t max_part)
    : impl_(std::make_unique<Impl>(s, delivered, max_part)) {
    if (max_part < 2 * kMaxNodeRecord || max_part > kMaxPartPayload)
        throw Error("SnapshotWriter: a part limit of " + std::to_string(max_part) + " bytes is outside 32 KiB..4 MiB");
    impl_->validate();
}
SnapshotWriter::~SnapshotWriter() = default;

bool SnapshotWriter::next(std::string& frame) {
    Impl& w = *impl_;
    switch (w.stage) {
        case Impl::Stage::Begin: w.begin(frame); break;
        case Impl::Stage::Nodes: w.nodes(frame); break;
        case Impl::Stage::Links: w.link_part(frame); break;
        case Impl::Stage::Lfts: w.lft_part(frame); break;
        case Impl::Stage::End: w.end(frame); break;
        case Impl::Stage::Done: return false;
    }
    close_frame(frame);
    return true;
}

LftHashes SnapshotWriter::take_delivered() { return std::move(impl_->next); }
size_t SnapshotWriter::lfts_sent() const { return impl_->sent; }
size_t SnapshotWriter::lfts_unchanged() const { return impl_->unchanged; }

std::string encode_v2(const Snapshot& s, const LftHashes& delivered) {
    SnapshotWriter w(s, delivered);
    std::string out, frame;
    while (w.next(frame)) out += frame;
    return out;
}

// ---------------------------------------------------------------------------------------------
// Assembler (the decoder's side)

std::optional<Snapshot> SnapshotAssembler::feed(std::string_view payload) {
    if (payload.empty()) throw Error("Snapshot v2: empty part");
    const auto kind = static_cast<uint8_t>(payload[0]);
    const std::string_view body = payload.substr(1);
    if (kind == static_cast<uint8_t>(Part::Begin)) {
        if (stage_ != Stage::Idle) throw Error("Snapshot v2: a Begin part while a snapshot is in progress");
        total_ = 0;
    } else if (kind < static_cast<uint8_t>(Part::Begin) || kind > static_cast<uint8_t>(Part::End)) {
        throw Error("Snapshot v2: unknown part " + std::to_string(kind));
    } else if (stage_ == Stage::Idle) {
        throw Error("Snapshot v2: part " + std::to_string(kind) + " without a Begin part");
    }
    total_ += payload.size();
    if (total_ > max_total_)
        throw Error("Snapshot v2: parts of " + std::to_string(total_) + " bytes exceed the limit of " + std::to_string(max_total_));
    switch (static_cast<Part>(kind)) {
        case Part::Begin: begin(body); return std::nullopt;
        case Part::Nodes: nodes(body); return std::nullopt;
        case Part::Links: links(body); return std::nullopt;
        case Part::Lfts: lfts(body); return std::nullopt;
        case Part::End: return end(body);
    }
    return std::nullopt;
}

void SnapshotAssembler::begin(std::string_view body) {
    In in(body, "Begin");
    s_ = std::make_unique<Snapshot>();
    Snapshot& s = *s_;
    s.sweep_seq = in.u64();
    s.taken_unix_ms = static_cast<int64_t>(in.u64());
    const uint8_t ie = in.u8();
    if (ie > 1) in.fail("ie " + std::to_string(ie) + " is not 0 or 1");
    s.initialization_error = ie == 1;
    s.master_lid = in.u16();
    s.self = in.sm("self");
    s.osm_version = in.str("osm");
    s.routing_engine = in.str("re");
    s.routing_engine_configured = in.str("rc");
    const uint16_t nsms = in.u16();
    if (nsms > kMaxSms) in.fail(std::to_string(nsms) + " other SMs (at most " + std::to_string(kMaxSms) + ")");
    for (uint16_t i = 0; i < nsms; ++i) s.other_sms.push_back(in.sm("sms[" + std::to_string(i) + "]"));
    want_nodes_ = in.u32();
    want_links_ = in.u32();
    want_lfts_ = in.u32();
    if (want_nodes_ > kMaxNodes) in.fail(std::to_string(want_nodes_) + " nodes (at most " + std::to_string(kMaxNodes) + ")");
    if (want_links_ > kMaxLinks) in.fail(std::to_string(want_links_) + " links (at most " + std::to_string(kMaxLinks) + ")");
    if (want_lfts_ > want_nodes_) in.fail(std::to_string(want_lfts_) + " LFTs for " + std::to_string(want_nodes_) + " nodes");
    // Later bytes in Begin are a newer sender's fields: ignored.
    links_ = 0;
    strings_.clear();
    lft_seen_.clear();
    next_delivered_.clear();
    stage_ = Stage::Nodes;
}

namespace {

struct PortFields {  // one port record, as read
    uint8_t num, flags;
    Guid guid;
    uint16_t lid;
    uint8_t lmc, state, phys, width, speed, wen, wsup;
    uint16_t sen, ssup, mtu_cap, mtu_act, msm;
};

// Range checks of one port record (the JSON decoder's, docs/wire.md "port"); "" = fine.
std::string port_error(const PortFields& p) {
    if (p.lmc > 7) return "LMC " + std::to_string(p.lmc) + " above 7";
    if (p.state > 4) return "PortState " + std::to_string(p.state) + " above 4";
    if (p.phys > 7) return "PortPhysicalState " + std::to_string(p.phys) + " above 7";
    if (!valid_width(p.width)) return "not a link width value (0,1,2,4,8,16)";
    if (p.speed > static_cast<uint8_t>(Speed::XDR)) return "speed " + std::to_string(p.speed) + " above XDR (9)";
    if (p.wen > 31 || p.wsup > 31) return "width mask above 31";
    if ((p.sen | p.ssup) & ~kSpeedMaskAll) return "speed mask has bits outside SDR..XDR";
    if (!valid_mtu(p.mtu_cap) || !valid_mtu(p.mtu_act)) return "not an MTU (0, 256, 512, 1024, 2048, 4096)";
    return "";
}

PortFields read_port(In& in, const PortFields* prev) {
    PortFields p{};
    p.num = in.u8();
    p.flags = in.u8();
    const std::string at = "port " + std::to_string(p.num);
    if (p.flags & ~(kPortGuid | kPortCaps | kPortAddr)) in.fail(at + ": unknown flags " + std::to_string(p.flags));
    if (!prev && (~p.flags & (kPortGuid | kPortCaps)))
        in.fail(at + ": the first port of a node must carry its GUID and capabilities");
    p.guid = p.flags & kPortGuid ? in.u64() : prev->guid;
    if (p.flags & kPortAddr) {
        p.lid = in.u16();
        p.lmc = in.u8();
        p.msm = in.u16();
    }
    p.state = in.u8();
    p.phys = in.u8();
    p.width = in.u8();
    p.speed = in.u8();
    p.mtu_act = in.u16();
    if (p.flags & kPortCaps) {
        p.wen = in.u8();
        p.wsup = in.u8();
        p.sen = in.u16();
        p.ssup = in.u16();
        p.mtu_cap = in.u16();
    } else {
        p.wen = prev->wen;
        p.wsup = prev->wsup;
        p.sen = prev->sen;
        p.ssup = prev->ssup;
        p.mtu_cap = prev->mtu_cap;
    }
    return p;
}

void apply_port(const PortFields& r, Port& p) {
    p.valid = true;
    p.guid = r.guid;
    p.lid = r.lid;
    p.lmc = r.lmc;
    p.state = static_cast<PortState>(r.state);
    p.phys = static_cast<PhysState>(r.phys);
    p.width_active = static_cast<Width>(r.width);
    p.speed_active = static_cast<Speed>(r.speed);
    p.width_enabled = r.wen;
    p.width_supported = r.wsup;
    p.speed_enabled = r.sen;
    p.speed_supported = r.ssup;
    p.mtu_cap = r.mtu_cap;
    p.mtu_active = r.mtu_act;
    p.master_sm_lid = r.msm;
}

}  // namespace

void SnapshotAssembler::nodes(std::string_view body) {
    if (stage_ != Stage::Nodes) throw Error("Snapshot v2: a Nodes part after the Links or Lfts parts");
    In in(body, "Nodes");
    const uint32_t count = in.u32();
    Fabric& fab = s_->fabric;
    if (count > want_nodes_ - fab.size()) in.fail("more nodes than the " + std::to_string(want_nodes_) + " Begin announced");
    auto string_ref = [&](const std::string& what) -> std::string {
        const uint32_t ref = in.u32();
        if (ref == 0) return strings_.emplace_back(in.str(what));
        if (ref > strings_.size()) in.fail(what + ": string " + std::to_string(ref) + " not defined yet");
        return strings_[ref - 1];
    };
    for (uint32_t k = 0; k < count; ++k) {
        const std::string at = "node " + std::to_string(fab.size());
        Node n;
        const uint8_t type = in.u8();
        const uint8_t flags = in.u8();
        if (type > 3) in.fail(at + ": node type " + std::to_string(type) + " above 3");
        if (flags > 1) in.fail(at + ": unknown flags " + std::to_string(flags));
        n.type = static_cast<NodeType>(type);
        n.guid = in.u64();
        n.system_guid = in.u64();
        n.description = string_ref(at + " description");
        if (flags & 1) n.name = string_ref(at + " name");
        n.vendor_id = in.u16();
        n.device_id = in.u16();
        n.lid = in.u16();
        const int np = in.u8();
        const uint16_t listed = in.u16();
        if (listed > np + 1) in.fail(at + ": " + std::to_string(listed) + " ports listed, np is " + std::to_string(np));
        if (fab.find(n.guid)) in.fail(at + ": duplicate node GUID " + guid_hex(n.guid));
        const NodeId id = fab.add_node(std::move(n), np);
        Node& node = fab.node(id);
        for (Port& p : node.ports) p.valid = false;  // only listed ports exist
        int last = -1;
        PortFields prev{};
        for (uint16_t i = 0; i < listed; ++i) {
            const PortFields r = read_port(in, i == 0 ? nullptr : &prev);
            const std::string pat = at + " port " + std::to_string(r.num);
            if (r.num > np) in.fail(pat + ": beyond np " + std::to_string(np));
            if (r.num == 0 && node.type != NodeType::Switch) in.fail(pat + ": port 0 is listed only for switches");
            if (r.num <= last) in.fail(pat + ": ports must be listed once each in increasing order");
            if (std::string e = port_error(r); !e.empty()) in.fail(pat + ": " + e);
            last = r.num;
            prev = r;
            apply_port(r, node.ports[r.num]);
        }
    }
    in.expect_end();
}

void SnapshotAssembler::links(std::string_view body) {
    if (stage_ == Stage::Lfts) throw Error("Snapshot v2: a Links part after the Lfts parts");
    if (s_->fabric.size() != want_nodes_)
        throw Error("Snapshot v2: a Links part after " + std::to_string(s_->fabric.size()) + " of " + std::to_string(want_nodes_) + " nodes");
    stage_ = Stage::Links;
    In in(body, "Links");
    const uint32_t count = in.u32();
    if (count > want_links_ - links_) in.fail("more links than the " + std::to_string(want_links_) + " Begin announced");
    Fabric& f = s_->fabric;
    for (uint32_t k = 0; k < count; ++k, ++links_) {
        const auto a = static_cast<NodeId>(in.u32());
        const int pa = in.u8();
        const auto b = static_cast<NodeId>(in.u32());
        const int pb = in.u8();
        if (const char* e = link_error(f, a, pa, b, pb)) in.fail("link " + std::to_string(links_) + ": " + e);
        f.connect(a, pa, b, pb);
    }
    in.expect_end();
}

void SnapshotAssembler::lfts(std::string_view body) {
    if (s_->fabric.size() != want_nodes_ || links_ != want_links_)
        throw Error("Snapshot v2: an Lfts part before every node and link (" + std::to_string(s_->fabric.size()) + " of " +
                    std::to_string(want_nodes_) + " nodes, " + std::to_string(links_) + " of " + std::to_string(want_links_) + " links)");
    stage_ = Stage::Lfts;
    In in(body, "Lfts");
    const uint32_t count = in.u32();
    std::vector<SwitchLft>& out = s_->lfts;
    if (count > want_lfts_ - out.size()) in.fail("more LFTs than the " + std::to_string(want_lfts_) + " Begin announced");
    for (uint32_t k = 0; k < count; ++k) {
        const std::string at = "LFT " + std::to_string(out.size());
        const Guid guid = in.u64();
        const uint8_t how = in.u8();
        Delivered table;
        if (how == 0) {
            auto it = delivered_.find(guid);
            if (it == delivered_.end())
                in.fail(at + ": \"unchanged\" for switch " + guid_hex(guid) + ", which the last snapshot on this connection had no LFT for");
            table = it->second;
        } else if (how == 1) {
            const uint32_t lids = in.u32();
            if (lids > kMaxLftLids) in.fail(at + ": more than " + std::to_string(kMaxLftLids) + " LIDs");
            std::string_view bytes = in.take(lids);
            table.table = std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end());
            table.hash = ibf::lft_hash(*table.table);  // only tables that came in full are hashed
        } else {
            in.fail(at + ": unknown kind " + std::to_string(how));
        }
        if (LftError e = lft_error(s_->fabric, guid, *table.table, lft_seen_); !e.what.empty()) in.fail(at + ": " + e.what);
        out.emplace_back(guid, table.table, table.hash);  // shares the bytes with the kept table
        next_delivered_[guid] = std::move(table);
    }
    in.expect_end();
}

Snapshot SnapshotAssembler::end(std::string_view body) {
    In in(body, "End");
    const uint32_t nodes = in.u32(), links = in.u32(), lfts = in.u32(), strings = in.u32();
    if (nodes != want_nodes_ || links != want_links_ || lfts != want_lfts_)
        in.fail("totals " + std::to_string(nodes) + "/" + std::to_string(links) + "/" + std::to_string(lfts) +
                " differ from Begin's " + std::to_string(want_nodes_) + "/" + std::to_string(want_links_) + "/" + std::to_string(want_lfts_));
    if (s_->fabric.size() != want_nodes_ || links_ != want_links_ || s_->lfts.size() != want_lfts_)
        in.fail("the snapshot ended after " + std::to_string(s_->fabric.size()) + " nodes, " + std::to_string(links_) + " links, " +
                std::to_string(s_->lfts.size()) + " LFTs of the " + std::to_string(want_nodes_) + "/" + std::to_string(want_links_) +
                "/" + std::to_string(want_lfts_) + " announced");
    if (strings != strings_.size())
        in.fail(std::to_string(strings) + " strings announced, " + std::to_string(strings_.size()) + " defined");
    s_->fabric.finalize();
    delivered_ = std::move(next_delivered_);
    next_delivered_.clear();
    stage_ = Stage::Idle;
    Snapshot done = std::move(*s_);
    s_.reset();
    return done;
}

}  // namespace ibf::wire
