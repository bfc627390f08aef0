// ibf_wire: round trips, incremental feeding, every malformation, and a seeded fuzz loop.
#include "ibf/wire.h"
#include "ibf/wire_auth.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <fstream>
#include <set>
#include <random>

#include "wire_fixtures.h"

using namespace ibf;
using namespace ibf::wire;
using nlohmann::json;

namespace {

std::vector<Message> all_messages() {
    return {sample_hello(), sample_snapshot(), sample_event(), sample_heartbeat(), sample_counters()};
}

void expect_same(const Message& a, const Message& b) {
    ASSERT_EQ(a.index(), b.index());
    switch (type_of(a)) {
        case MsgType::Hello: {
            auto& x = std::get<Hello>(a);
            auto& y = std::get<Hello>(b);
            EXPECT_EQ(x.osm_version, y.osm_version);
            EXPECT_EQ(x.plugin_version, y.plugin_version);
            expect_same_sm(x.sm, y.sm);
            EXPECT_EQ(x.pid, y.pid);
            break;
        }
        case MsgType::Snapshot: expect_same_snapshot(std::get<Snapshot>(a), std::get<Snapshot>(b)); break;
        case MsgType::Event: {
            auto& x = std::get<Event>(a);
            auto& y = std::get<Event>(b);
            EXPECT_EQ(x.kind, y.kind);
            EXPECT_EQ(x.unix_ms, y.unix_ms);
            EXPECT_EQ(x.trap_num, y.trap_num);
            EXPECT_EQ(x.lid, y.lid);
            EXPECT_EQ(x.state, y.state);
            EXPECT_EQ(x.text, y.text);
            break;
        }
        case MsgType::Heartbeat: {
            auto& x = std::get<Heartbeat>(a);
            auto& y = std::get<Heartbeat>(b);
            expect_same_sm(x.sm, y.sm);
            EXPECT_EQ(x.sweep_seq, y.sweep_seq);
            EXPECT_EQ(x.unix_ms, y.unix_ms);
            break;
        }
        case MsgType::Counters: {
            auto& x = std::get<Counters>(a);
            auto& y = std::get<Counters>(b);
            EXPECT_EQ(x.snapshots_taken, y.snapshots_taken);
            EXPECT_EQ(x.snapshots_sent, y.snapshots_sent);
            EXPECT_EQ(x.snapshots_superseded, y.snapshots_superseded);
            EXPECT_EQ(x.events_dropped, y.events_dropped);
            EXPECT_EQ(x.send_errors, y.send_errors);
            EXPECT_EQ(x.reconnects, y.reconnects);
            EXPECT_EQ(x.last_copy_us, y.last_copy_us);
            EXPECT_EQ(x.last_send_lag_ms, y.last_send_lag_ms);
            EXPECT_EQ(x.queue_depth, y.queue_depth);
            EXPECT_EQ(x.port_counter_events, y.port_counter_events);
            EXPECT_EQ(x.port_counter_events_dropped, y.port_counter_events_dropped);
            break;
        }
        case MsgType::PortCounters: {
            auto& x = std::get<PortCounters>(a);
            auto& y = std::get<PortCounters>(b);
            EXPECT_EQ(x.unix_ms, y.unix_ms);
            ASSERT_EQ(x.ports.size(), y.ports.size());
            for (size_t i = 0; i < x.ports.size(); ++i) {
                EXPECT_EQ(x.ports[i].node_guid, y.ports[i].node_guid);
                EXPECT_EQ(x.ports[i].port, y.ports[i].port);
                EXPECT_EQ(x.ports[i].v, y.ports[i].v);
            }
            break;
        }
    }
}

Message decode_one(const std::string& frame) {
    Decoder d;
    d.feed(frame.data(), frame.size());
    auto m = d.next();
    EXPECT_TRUE(m.has_value());
    EXPECT_EQ(d.buffered(), 0u);
    EXPECT_FALSE(d.next().has_value());
    return std::move(*m);
}

std::string header(uint32_t magic, uint16_t version, uint16_t type, uint32_t len) {
    std::string h(kHeaderSize, '\0');
    auto put = [&](size_t off, uint64_t v, int n) {
        for (int i = 0; i < n; ++i) h[off + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    };
    put(0, magic, 4);
    put(4, version, 2);
    put(6, type, 2);
    put(8, len, 4);
    return h;
}

std::string frame(MsgType t, const std::string& payload) {
    return header(kMagic, kVersion, static_cast<uint16_t>(t), static_cast<uint32_t>(payload.size())) + payload;
}

// Decoding `bytes` must throw wire::Error whose message contains `needle`.
void expect_error(const std::string& bytes, const std::string& needle) {
    Decoder d;
    d.feed(bytes.data(), bytes.size());
    try {
        auto m = d.next();
        ADD_FAILURE() << "no error, expected one containing \"" << needle << "\"";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "error was: " << e.what();
    }
}

json snapshot_json() { return json::parse(encode_payload(sample_snapshot())); }

}  // namespace

TEST(Wire, HeaderLayoutIsLittleEndianAndMatchesDeclaredConstants) {
    std::string f = encode(sample_hello());
    ASSERT_GE(f.size(), kHeaderSize);
    EXPECT_EQ(std::string(f.data(), 4), "WFBI");  // 0x49424657 little-endian
    EXPECT_EQ(static_cast<uint8_t>(f[4]), 1);
    EXPECT_EQ(static_cast<uint8_t>(f[5]), 0);
    EXPECT_EQ(static_cast<uint8_t>(f[6]), 1);
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= uint32_t(static_cast<uint8_t>(f[8 + i])) << (8 * i);
    EXPECT_EQ(len, f.size() - kHeaderSize);
    EXPECT_EQ(f[kHeaderSize], '{');
}

TEST(Wire, TypeOfAndNames) {
    auto msgs = all_messages();
    const char* names[] = {"Hello", "Snapshot", "Event", "Heartbeat", "Counters"};
    for (size_t i = 0; i < msgs.size(); ++i) {
        EXPECT_EQ(static_cast<size_t>(type_of(msgs[i])), i + 1);
        EXPECT_EQ(to_string(type_of(msgs[i])), names[i]);
    }
}

TEST(Wire, EveryMessageTypeRoundTrips) {
    for (const auto& m : all_messages()) {
        SCOPED_TRACE(std::string(to_string(type_of(m))));
        expect_same(m, decode_one(encode(m)));
    }
}

TEST(Wire, SnapshotRoundTripKeepsTheFabric) {
    Snapshot s = sample_snapshot();
    auto back = std::get<Snapshot>(decode_one(encode(s)));
    EXPECT_EQ(back.fabric.size(), 4u);
    EXPECT_EQ(back.fabric.link_count(), 3u);
    auto sw = back.fabric.find(0x200000).value();
    const Port* p1 = back.fabric.node(sw).port(1);
    ASSERT_NE(p1, nullptr);
    EXPECT_EQ(to_string(p1->rate()), "4xFDR10");
    EXPECT_EQ(p1->width_supported, 0x1F);
    EXPECT_EQ(back.fabric.node(sw).name, "leaf01");  // derived again by finalize()
    // CA port 0 stays invalid, the switch's port 0 is valid, an undiscovered port stays invalid.
    auto ca = back.fabric.find(0x100001).value();
    EXPECT_EQ(back.fabric.node(ca).port(0), nullptr);
    EXPECT_NE(back.fabric.node(sw).port(0), nullptr);
    EXPECT_EQ(back.fabric.node(sw).port(7), nullptr);
    EXPECT_EQ(back.fabric.node(ca).name, "custom-name");  // explicit name kept
}

TEST(Wire, SnapshotLftsAndConfiguredEngineRoundTrip) {
    Snapshot s = sample_snapshot();
    // A full-size table: every unicast LID, every port value a switch may use.
    std::vector<uint8_t> entries(kMaxLftLids);
    for (size_t l = 0; l < entries.size(); ++l) entries[l] = l % 3 ? static_cast<uint8_t>(l % 9) : kLftNoPath;
    const SwitchLft big{0x200000, std::move(entries)};
    s.lfts = {big};
    auto back = std::get<Snapshot>(decode_one(encode(s)));
    EXPECT_EQ(back.routing_engine_configured, "ftree,minhop");
    ASSERT_EQ(back.lfts.size(), 1u);
    EXPECT_EQ(back.lfts[0].switch_guid, 0x200000u);
    EXPECT_EQ(back.lfts[0].port_by_lid(), big.port_by_lid());
    // Two hex digits per LID on the wire.
    json j = json::parse(encode_payload(s));
    EXPECT_EQ(j["lf"][0][1].get<std::string>().size(), 2 * kMaxLftLids);
    EXPECT_EQ(j["rc"], "ftree,minhop");
}

TEST(Wire, LftAndConfiguredEngineAreOptionalKeys) {
    // Not exported (plugin lft=0, or an older plugin): the keys are absent and decode as empty.
    Snapshot s = sample_snapshot();
    s.lfts.clear();
    s.routing_engine_configured.clear();
    json j = json::parse(encode_payload(s));
    EXPECT_FALSE(j.contains("lf"));
    EXPECT_FALSE(j.contains("rc"));
    auto back = std::get<Snapshot>(decode_payload(MsgType::Snapshot, j.dump()));
    EXPECT_TRUE(back.lfts.empty());
    EXPECT_EQ(back.routing_engine_configured, "");
    // Extra trailing elements in an LFT entry are ignored like in other arrays (future additions).
    json k = snapshot_json();
    k["lf"][0].push_back(7);
    k["lf"][0].push_back(json::array({1}));
    auto back2 = std::get<Snapshot>(decode_payload(MsgType::Snapshot, k.dump()));
    ASSERT_EQ(back2.lfts.size(), 1u);
    EXPECT_EQ(back2.lfts[0].port_by_lid().size(), 9u);
}

TEST(Wire, HelloCarriesTheSmsConfSettingsOptionally) {
    Hello h{"OpenSM 3.3.23", "0.1.0", {0x10, 1, 15, SmState::Master, 3}, 42};
    auto plain = std::get<Hello>(decode_one(encode(h)));
    EXPECT_FALSE(plain.conf.has_value()) << "absent: an older plugin";
    h.conf = SmConf{"ftree,minhop", "/etc/opensm/roots", "", 2, true, sm_key_digest(1)};
    auto back = std::get<Hello>(decode_one(encode(h)));
    ASSERT_TRUE(back.conf);
    EXPECT_EQ(*back.conf, *h.conf);
    EXPECT_EQ(h.conf->sm_key_digest.size(), 16u);
    EXPECT_NE(sm_key_digest(1), sm_key_digest(2));
    // Signed with the rest of the Hello: changing a setting breaks the MAC.
    const std::string key(40, 'k');
    sign_hello(h, key, 1000, std::string(32, 'a'));
    Hello forged = h;
    forged.conf->lmc = 0;
    EXPECT_NE(hello_auth_text(forged, 1000, std::string(32, 'a')), hello_auth_text(h, 1000, std::string(32, 'a')));
    json bad = json::parse(encode_payload(h));
    bad["cf"]["lmc"] = 8;
    EXPECT_THROW(decode_payload(MsgType::Hello, bad.dump()), Error);
}

TEST(Wire, MasterSmLidIsAnOptionalTrailingPortElement) {
    Snapshot s = sample_snapshot();
    auto ca = s.fabric.find(0x100001).value();
    s.fabric.node(ca).ports[1].master_sm_lid = 7;
    auto back = std::get<Snapshot>(decode_one(encode(s)));
    EXPECT_EQ(back.fabric.node(back.fabric.find(0x100001).value()).port(1)->master_sm_lid, 7);
    // A 14-element port (a plugin from before index 14) decodes with 0 = unknown.
    json j = json::parse(encode_payload(s));
    for (auto& n : j["n"])
        for (auto& p : n["p"]) p.erase(14);
    auto old = std::get<Snapshot>(decode_payload(MsgType::Snapshot, j.dump()));
    EXPECT_EQ(old.fabric.node(old.fabric.find(0x100001).value()).port(1)->master_sm_lid, 0);
    // Out of range is refused like every other element.
    json bad = json::parse(encode_payload(s));
    bad["n"][0]["p"][0][14] = 65536;
    EXPECT_THROW(decode_payload(MsgType::Snapshot, bad.dump()), Error);
}

TEST(Wire, EmptySnapshotRoundTrips) {
    Snapshot s;
    auto back = std::get<Snapshot>(decode_one(encode(s)));
    EXPECT_EQ(back.fabric.size(), 0u);
    EXPECT_EQ(back.sweep_seq, 0u);
}

TEST(Wire, ExtremeValuesRoundTrip) {
    Snapshot s = sample_snapshot();
    s.self.port_guid = UINT64_MAX;
    s.sweep_seq = UINT64_MAX;
    s.taken_unix_ms = INT64_MIN;
    s.self.act_count = UINT32_MAX;
    auto back = std::get<Snapshot>(decode_one(encode(s)));
    EXPECT_EQ(back.self.port_guid, UINT64_MAX);
    EXPECT_EQ(back.sweep_seq, UINT64_MAX);
    EXPECT_EQ(back.taken_unix_ms, INT64_MIN);
    EXPECT_EQ(back.self.act_count, UINT32_MAX);
    Event e = sample_event();
    e.unix_ms = -1;
    EXPECT_EQ(std::get<Event>(decode_one(encode(e))).unix_ms, -1);
}

TEST(Wire, StringsAreEscapedAndInvalidUtf8IsReplaced) {
    Event e = sample_event();
    e.text = std::string("quote\" back\\slash \n tab\t nul") + '\0' + " bad\xff\xfe utf8 \xc3\xa9";
    auto back = std::get<Event>(decode_one(encode(e)));
    EXPECT_NE(back.text.find("quote\" back\\slash \n tab\t nul"), std::string::npos);
    EXPECT_EQ(back.text.find('\xff'), std::string::npos);
    EXPECT_NE(back.text.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
    EXPECT_NE(back.text.find("\xc3\xa9"), std::string::npos);
}

TEST(Wire, OverlongStringsAreTruncatedByTheEncoderNotRejected) {
    Event e = sample_event();
    e.text = std::string(kMaxString * 2, 'x');
    EXPECT_EQ(std::get<Event>(decode_one(encode(e))).text.size(), kMaxString);
    e.text = std::string(kMaxString, '\xff');  // every byte becomes a 3-byte U+FFFD
    auto t = std::get<Event>(decode_one(encode(e))).text;
    EXPECT_LE(t.size(), kMaxString);
    EXPECT_GT(t.size(), kMaxString - 3);
}

TEST(Wire, ByteByByteFeeding) {
    std::string all;
    for (const auto& m : all_messages()) all += encode(m);
    Decoder d;
    std::vector<Message> got;
    for (char c : all) {
        d.feed(&c, 1);
        while (auto m = d.next()) got.push_back(std::move(*m));
    }
    ASSERT_EQ(got.size(), 5u);
    auto want = all_messages();
    for (size_t i = 0; i < got.size(); ++i) expect_same(want[i], got[i]);
    EXPECT_EQ(d.buffered(), 0u);
}

TEST(Wire, SeveralFramesInOneFeedAndASplitTail) {
    std::string all;
    for (int r = 0; r < 3; ++r)
        for (const auto& m : all_messages()) all += encode(m);
    std::string extra = encode(sample_heartbeat());
    all += extra.substr(0, 7);
    Decoder d;
    d.feed(all.data(), all.size());
    int n = 0;
    while (auto m = d.next()) {
        EXPECT_EQ(static_cast<int>(type_of(*m)), n % 5 + 1);
        ++n;
    }
    EXPECT_EQ(n, 15);
    EXPECT_EQ(d.buffered(), 7u);
    d.feed(extra.data() + 7, extra.size() - 7);
    auto m = d.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(type_of(*m), MsgType::Heartbeat);
    EXPECT_EQ(d.buffered(), 0u);
}

TEST(Wire, IncompleteHeaderOrPayloadWaits) {
    std::string f = encode(sample_snapshot());
    Decoder d;
    d.feed(f.data(), 5);
    EXPECT_FALSE(d.next());
    d.feed(f.data() + 5, f.size() - 6);
    EXPECT_FALSE(d.next());
    EXPECT_EQ(d.buffered(), f.size() - 1);
    d.feed(f.data() + f.size() - 1, 1);
    EXPECT_TRUE(d.next());
}

TEST(WireErrors, BadMagic) {
    std::string f = encode(sample_hello());
    f[0] = 'X';
    expect_error(f, "bad magic");
    expect_error("GET / HTTP/1.1\r\n\r\n", "bad magic");
}

TEST(WireErrors, BadVersion) {
    expect_error(header(kMagic, 3, 1, 2) + "{}", "unsupported wire version 3 (this side speaks 1 and 2: upgrade it)");
    expect_error(header(kMagic, 2, 1, 2) + "{}", "wire version 2 frame before Hello");  // v2: Snapshot parts, after a Hello (wire_v2_test.cpp)
    expect_error(header(kMagic, 0, 1, 2) + "{}", "unsupported wire version 0");
}

TEST(WireErrors, BadType) {
    expect_error(header(kMagic, kVersion, 0, 2) + "{}", "unknown message type 0");
    expect_error(header(kMagic, kVersion, 7, 2) + "{}", "unknown message type 7 before Hello");  // 6 is PortCounters
    expect_error(header(kMagic, kVersion, 0xFFFF, 2) + "{}", "unknown message type 65535 before Hello");
}

// After Hello a newer peer's message type is skipped whole and counted; the frames around it decode.
TEST(Wire, UnknownTypesAfterHelloAreSkippedAndCounted) {
    Decoder d;
    const std::string future = header(kMagic, kVersion, 7, 9) + R"({"x": 1})" + " ";
    d.feed(encode(sample_hello()).data(), encode(sample_hello()).size());
    const std::string rest = future + header(kMagic, kVersion, 0x1234, 0) + encode(Heartbeat{});
    d.feed(rest.data(), 5);  // part of the unknown frame's header: nothing yet
    ASSERT_TRUE(d.next());   // the Hello
    EXPECT_FALSE(d.next());
    d.feed(rest.data() + 5, rest.size() - 5);
    auto m = d.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(type_of(*m), MsgType::Heartbeat);
    EXPECT_EQ(d.skipped(), 2u);
    EXPECT_EQ(d.last_skipped_type(), 0x1234);
    EXPECT_FALSE(d.next());
    EXPECT_EQ(d.buffered(), 0u);
    // Still bounded: an unknown type may not announce more than the connection's limit.
    Decoder small(1000);
    small.feed(encode(sample_hello()).data(), encode(sample_hello()).size());
    ASSERT_TRUE(small.next());
    const std::string huge = header(kMagic, kVersion, 9, 1001);
    small.feed(huge.data(), huge.size());
    try {
        small.next();
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "message type 9 payload of 1001 bytes exceeds the limit of 1000");
    }
    // Type 0 stays an error after Hello too.
    Decoder zero;
    const std::string z = encode(sample_hello()) + header(kMagic, kVersion, 0, 2) + "{}";
    zero.feed(z.data(), z.size());
    ASSERT_TRUE(zero.next());
    EXPECT_THROW(zero.next(), Error);
}

TEST(WireErrors, LengthAboveTheLimitFailsOnTheHeaderAlone) {
    // No payload bytes follow: the decoder must not wait for 4 GiB.
    expect_error(header(kMagic, kVersion, 2, 0xFFFFFFFF), "exceeds the limit");
    expect_error(header(kMagic, kVersion, 2, static_cast<uint32_t>(kMaxPayload + 1)), "exceeds the limit");
    // Small types have a much lower cap.
    expect_error(header(kMagic, kVersion, 4, static_cast<uint32_t>(kMaxSmallPayload + 1)), "exceeds the limit");
    // A per-connection limit passed to the Decoder.
    Decoder d(1000);
    std::string f = encode(sample_snapshot());
    d.feed(f.data(), f.size());
    EXPECT_THROW(d.next(), Error);
}

// issue 10: a peer that has not said Hello cannot make the receiver wait for a large payload.
TEST(WireErrors, LimitBeforeHelloAppliesUntilTheFirstHello) {
    const std::string snap = encode(sample_snapshot());
    ASSERT_GT(snap.size(), 200u);
    {
        Decoder d(kMaxPayload, 200);
        d.feed(snap.data(), wire::kHeaderSize);  // the header alone is refused
        try {
            d.next();
            ADD_FAILURE() << "no error";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), "Snapshot payload of " + std::to_string(snap.size() - kHeaderSize) +
                                                 " bytes exceeds the limit of 200 before Hello");
        }
    }
    Decoder d(kMaxPayload, 200);
    const std::string both = encode(sample_hello()) + snap;
    d.feed(both.data(), both.size());
    EXPECT_EQ(type_of(*d.next()), MsgType::Hello);
    EXPECT_EQ(type_of(*d.next()), MsgType::Snapshot);  // after Hello the normal limits apply
}

TEST(WireErrors, TruncatedFrameNeverYieldsAMessage) {
    std::string f = encode(sample_snapshot());
    for (size_t cut = 0; cut < f.size(); cut += 37) {
        Decoder d;
        d.feed(f.data(), cut);
        EXPECT_FALSE(d.next()) << cut;
    }
    // A declared length shorter than the JSON is a bad JSON payload.
    std::string p = encode_payload(sample_hello());
    expect_error(frame(MsgType::Hello, p.substr(0, p.size() - 1)), "bad JSON");
}

TEST(WireErrors, BadJson) {
    expect_error(frame(MsgType::Hello, "{not json"), "bad JSON");
    expect_error(frame(MsgType::Hello, ""), "bad JSON");
    expect_error(frame(MsgType::Hello, "{} trailing"), "bad JSON");
    expect_error(frame(MsgType::Event, "{\"tx\":\"\xff\"}"), "bad JSON");  // invalid UTF-8
    expect_error(frame(MsgType::Snapshot, std::string(100, '[') + std::string(100, ']')), "nests deeper");
    expect_error(frame(MsgType::Hello, "[1,2]"), "not a JSON object");
}

TEST(WireErrors, ErrorIsStickyUntilTheConnectionIsDropped) {
    Decoder d;
    std::string bad = header(kMagic, 9, 1, 2) + "{}";
    d.feed(bad.data(), bad.size());
    EXPECT_THROW(d.next(), Error);
    EXPECT_THROW(d.next(), Error);
}

// Schema violations: take a valid snapshot's JSON, break one thing, expect the named error.
struct Mutation {
    const char* name;
    std::function<void(json&)> apply;
    const char* needle;
};

TEST(WireErrors, SnapshotSchemaViolations) {
    std::vector<Mutation> cases = {
        {"missing key", [](json& j) { j.erase("seq"); }, "missing \"seq\""},
        {"string for number", [](json& j) { j["seq"] = "7"; }, "expected an unsigned integer"},
        {"negative", [](json& j) { j["ml"] = -1; }, "negative"},
        {"float", [](json& j) { j["ml"] = 1.5; }, "expected an unsigned integer"},
        {"lid > 16 bit", [](json& j) { j["ml"] = 70000; }, "out of range"},
        {"ie not bool", [](json& j) { j["ie"] = 1; }, "expected true/false"},
        {"sm state", [](json& j) { j["self"][3] = 4; }, "out of range"},
        {"sm priority", [](json& j) { j["self"][2] = 16; }, "out of range"},
        {"sm short", [](json& j) { j["self"] = json::array({1, 2}); }, "needs 5"},
        {"nodes not array", [](json& j) { j["n"] = json::object(); }, "expected an array"},
        {"node not object", [](json& j) { j["n"][0] = 5; }, "expected an object"},
        {"node type", [](json& j) { j["n"][0]["t"] = 4; }, "out of range"},
        {"np > 255", [](json& j) { j["n"][0]["np"] = 256; }, "out of range"},
        {"dup guid", [](json& j) { j["n"][1]["g"] = j["n"][0]["g"]; }, "duplicate node GUID"},
        {"port beyond np", [](json& j) { j["n"][2]["np"] = 0; }, "array has more than"},
        {"port num > np", [](json& j) { j["n"][0]["p"][1][0] = 9; }, "beyond np"},
        {"port order", [](json& j) { j["n"][0]["p"][2][0] = 1; }, "increasing order"},
        {"CA port 0", [](json& j) { j["n"][1]["p"][0][0] = 0; }, "only for switches"},
        {"port short", [](json& j) {
             auto& p = j["n"][0]["p"][1];  // 13 elements: one below the required 14 (index 14 is optional)
             while (p.size() > 13) p.erase(p.size() - 1);
         }, "needs 14"},
        {"port state", [](json& j) { j["n"][0]["p"][1][4] = 5; }, "out of range"},
        {"phys state", [](json& j) { j["n"][0]["p"][1][5] = 8; }, "out of range"},
        {"lmc", [](json& j) { j["n"][0]["p"][1][3] = 8; }, "out of range"},
        {"width value", [](json& j) { j["n"][0]["p"][1][6] = 3; }, "not a link width"},
        {"speed value", [](json& j) { j["n"][0]["p"][1][7] = 10; }, "out of range"},
        {"width mask", [](json& j) { j["n"][0]["p"][1][8] = 32; }, "out of range"},
        {"speed mask bit 0", [](json& j) { j["n"][0]["p"][1][10] = 1; }, "outside SDR..XDR"},
        {"speed mask high", [](json& j) { j["n"][0]["p"][1][11] = 0x400; }, "outside SDR..XDR"},
        {"mtu", [](json& j) { j["n"][0]["p"][1][12] = 3000; }, "not an MTU"},
        {"mtu code", [](json& j) { j["n"][0]["p"][1][13] = 5; }, "not an MTU"},
        {"desc type", [](json& j) { j["n"][0]["d"] = 5; }, "expected a string"},
        {"desc too long", [](json& j) { j["n"][0]["d"] = std::string(kMaxString + 1, 'a'); }, "longer than"},
        {"links not /4", [](json& j) { j["k"].push_back(0); }, "multiple of 4"},
        {"links not /4, even", [](json& j) { j["k"].push_back(0); j["k"].push_back(4); }, "multiple of 4"},
        {"link to missing node", [](json& j) { j["k"][2] = 99; }, "does not exist"},
        {"link to missing port", [](json& j) { j["k"][3] = 200; }, "does not exist"},
        {"link to invalid port", [](json& j) { j["k"][1] = 7; }, "does not exist"},
        {"port linked twice", [](json& j) {
             auto k = j["k"];
             j["k"].push_back(k[0]); j["k"].push_back(k[1]); j["k"].push_back(k[2]); j["k"].push_back(k[3]);
         }, "already linked"},
        {"self link", [](json& j) { j["k"] = json::array({0, 1, 0, 1}); }, "linked to itself"},
        {"link negative", [](json& j) { j["k"][0] = -1; }, "negative"},
        {"lft port beyond the switch", [](json& j) { j["lf"][0][1] = "ff00ffffff010209"; }, "routed to port 9 beyond the switch's 8 ports"},
        {"lft of a CA", [](json& j) { j["lf"][0][0] = 0x100001; }, "not a switch"},
        {"lft of an unknown node", [](json& j) { j["lf"][0][0] = 0x999; }, "not a node"},
        {"lft twice", [](json& j) { j["lf"].push_back(j["lf"][0]); }, "second LFT"},
        {"lft odd hex", [](json& j) { j["lf"][0][1] = "ff0"; }, "odd number"},
        {"lft not hex", [](json& j) { j["lf"][0][1] = "ffzz"; }, "not a hex digit"},
        {"lft not a string", [](json& j) { j["lf"][0][1] = json::array({1, 2}); }, "expected a hex string"},
        {"lft short", [](json& j) { j["lf"][0] = json::array({0x200000}); }, "needs 2"},
        {"lft not array", [](json& j) { j["lf"] = json::object(); }, "expected an array"},
        {"lft too long", [](json& j) { j["lf"][0][1] = std::string(2 * kMaxLftLids + 2, 'f'); }, "more than"},
        {"rc not string", [](json& j) { j["rc"] = 1; }, "expected a string"},
        {"too many sms", [](json& j) {
             j["sms"] = json::array();
             for (size_t i = 0; i <= kMaxSms; ++i) j["sms"].push_back(json::array({1, 1, 1, 1, 1}));
         }, "more than"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        json j = snapshot_json();
        c.apply(j);
        expect_error(frame(MsgType::Snapshot, j.dump()), c.needle);
    }
}

// A link whose far port (or near port) already has a cable is refused, whichever end comes first:
// accepting it would silently rewire the fabric. Node indexes are checked at the boundary: the
// sample has 4 nodes, so index 3 is the last valid one and 4 the first invalid one, at either end.
TEST(WireErrors, LinksToAnAlreadyLinkedPortOrPastTheLastNode) {
    const json base = json::array({0, 1, 1, 1, 2, 1, 0, 2, 0, 3, 3, 1});  // the sample's 3 links
    {
        json j = snapshot_json();
        j["k"] = base;
        auto s = std::get<Snapshot>(decode_payload(MsgType::Snapshot, j.dump()));
        EXPECT_EQ(s.fabric.link_count(), 3u);
        EXPECT_EQ(s.fabric.node(3).port(1)->peer, 0u);
    }
    struct Case {
        const char* name;
        std::vector<int> extra;
        const char* needle;
    };
    const Case cases[] = {
        {"far port linked", {2, 2, 0, 1}, "k[12]: port already linked"},
        {"near port linked", {0, 1, 2, 2}, "k[12]: port already linked"},
        {"far port of a CA linked", {0, 4, 3, 1}, "k[12]: port already linked"},
        {"near node = node count", {4, 1, 0, 4}, "k[12]: link names a node that does not exist"},
        {"far node = node count", {0, 4, 4, 1}, "k[12]: link names a node that does not exist"},
        {"port 0 of a switch", {0, 0, 2, 2}, "k[12]: link names a port that does not exist"},
        {"port past the CA's 2", {0, 4, 2, 3}, "k[12]: link names a port that does not exist"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        json j = snapshot_json();
        j["k"] = base;
        for (int v : c.extra) j["k"].push_back(v);
        try {
            decode_payload(MsgType::Snapshot, j.dump());
            ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
        }
    }
    // Two free ports are accepted (the base above already used index 3, the last node).
    json j = snapshot_json();
    j["k"] = base;
    for (int v : {2, 2, 0, 4}) j["k"].push_back(v);
    auto s = std::get<Snapshot>(decode_payload(MsgType::Snapshot, j.dump()));
    EXPECT_EQ(s.fabric.link_count(), 4u);
}

TEST(WireErrors, TooManyNodes) {
    json j = snapshot_json();
    json n = j["n"][1];
    j["n"] = json::array();
    j["k"] = json::array();
    for (size_t i = 0; i <= kMaxNodes; ++i) {
        n["g"] = i + 1;
        j["n"].push_back(n);
    }
    expect_error(frame(MsgType::Snapshot, j.dump()), "more than 65536");
}

TEST(WireErrors, SmallMessageSchemaViolations) {
    auto bad = [](MsgType t, const Message& m, std::function<void(json&)> f, const char* needle) {
        json j = json::parse(encode_payload(m));
        f(j);
        expect_error(frame(t, j.dump()), needle);
    };
    bad(MsgType::Hello, sample_hello(), [](json& j) { j.erase("osm"); }, "missing \"osm\"");
    bad(MsgType::Hello, sample_hello(), [](json& j) { j["pid"] = 1ull << 33; }, "out of range");
    bad(MsgType::Event, sample_event(), [](json& j) { j["k"] = 0; }, "not defined");
    bad(MsgType::Event, sample_event(), [](json& j) { j["k"] = 5; }, "out of range");
    bad(MsgType::Event, sample_event(), [](json& j) { j["trap"] = 65536; }, "out of range");
    bad(MsgType::Event, sample_event(), [](json& j) { j["ms"] = "now"; }, "expected an integer");
    bad(MsgType::Event, sample_event(), [](json& j) { j["ms"] = 1e30; }, "expected an integer");
    bad(MsgType::Heartbeat, sample_heartbeat(), [](json& j) { j["sm"][3] = 9; }, "out of range");
    bad(MsgType::Counters, sample_counters(), [](json& j) { j.erase("reconnects"); }, "missing \"reconnects\"");
    bad(MsgType::Counters, sample_counters(), [](json& j) { j["sent"] = -3; }, "negative");
    // A message of one type framed as another is a schema violation, not a crash.
    expect_error(frame(MsgType::Snapshot, encode_payload(sample_hello())), "missing");
    expect_error(frame(MsgType::Counters, encode_payload(sample_snapshot())), "missing");
}

TEST(Wire, UnknownKeysAndExtraPortFieldsAreIgnored) {
    // Forward compatibility rule (docs/wire.md): a newer minor sender may add keys and trailing port fields.
    json j = snapshot_json();
    j["future"] = {{"x", 1}};
    j["n"][0]["zz"] = "new";
    j["n"][0]["p"][1].push_back(42);
    Decoder d;
    std::string f = frame(MsgType::Snapshot, j.dump());
    d.feed(f.data(), f.size());
    auto m = d.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(std::get<Snapshot>(*m).fabric.size(), 4u);
}

// Seeded fuzz: random bytes, and mutations (bit flips, truncation, byte insertion, length fields)
// of valid frames. The decoder may return messages or throw wire::Error; nothing else.
TEST(WireFuzz, RandomBytesAndMutationsOnlyEverThrowWireError) {
    std::mt19937_64 rng(0x1bfab71c);
    std::vector<std::string> seeds;
    for (const auto& m : all_messages()) seeds.push_back(encode(m));
    int errors = 0, messages = 0;
    // IBF_WIRE_FUZZ_ROUNDS=N multiplies the loops for a longer run (e.g. under ASan/UBSan).
    const int rounds = std::getenv("IBF_WIRE_FUZZ_ROUNDS") ? std::max(1, std::atoi(std::getenv("IBF_WIRE_FUZZ_ROUNDS"))) : 1;
    auto run = [&](const std::string& bytes) {
        Decoder d(1 << 20);
        size_t off = 0;
        try {
            while (off < bytes.size()) {
                size_t n = std::min<size_t>(bytes.size() - off, 1 + rng() % 64);
                d.feed(bytes.data() + off, n);
                off += n;
                while (auto m = d.next()) ++messages;
            }
        } catch (const Error&) {
            ++errors;
        }
    };
    for (int i = 0; i < 3000 * rounds; ++i) {
        std::string b(rng() % 200, '\0');
        for (auto& c : b) c = static_cast<char>(rng());
        if (i % 2 == 0 && b.size() >= 12) b.replace(0, 12, header(kMagic, kVersion, 1 + rng() % 5, rng() % 300));
        run(b);
    }
    for (int i = 0; i < 6000 * rounds; ++i) {
        std::string b = seeds[rng() % seeds.size()];
        int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            size_t pos = rng() % b.size();
            switch (rng() % 5) {
                case 0: b[pos] ^= static_cast<char>(1 << (rng() % 8)); break;
                case 1: b[pos] = static_cast<char>(rng()); break;
                case 2: b.resize(pos); break;
                case 3: b.insert(pos, 1, "{}[],:\"0-9e\\"[rng() % 13]); break;
                case 4: b.erase(pos, 1 + rng() % 8); break;
            }
            if (b.empty()) b = "x";
        }
        // Keep the length field honest half of the time so the JSON layer gets exercised.
        if (i % 2 == 0 && b.size() >= kHeaderSize) {
            uint32_t len = static_cast<uint32_t>(b.size() - kHeaderSize);
            for (int k = 0; k < 4; ++k) b[8 + k] = static_cast<char>((len >> (8 * k)) & 0xFF);
        }
        run(b);
    }
    EXPECT_GT(errors, 3000);   // the fuzzer actually reached the error paths
    EXPECT_GT(messages, 10);   // and some mutations were still valid messages
}

// Structured fuzz: mutate the snapshot's JSON tree (a value replaced by one of another type or
// range, a key or element removed, an element duplicated) so that the schema checks, not the JSON
// parser, are what gets exercised. Decoding must succeed or throw wire::Error.
TEST(WireFuzz, JsonTreeMutationsOfASnapshot) {
    std::mt19937_64 rng(0x5eed);
    const int rounds = std::getenv("IBF_WIRE_FUZZ_ROUNDS") ? std::max(1, std::atoi(std::getenv("IBF_WIRE_FUZZ_ROUNDS"))) : 1;
    const json base = snapshot_json();
    auto random_value = [&]() -> json {
        switch (rng() % 10) {
            case 0: return nullptr;
            case 1: return rng() % 2 == 0;
            case 2: return -static_cast<int64_t>(rng() % 1000) - 1;
            case 3: return rng();
            case 4: return rng() % 20;
            case 5: return 0.5;
            case 6: return "s";
            case 7: return json::array({rng() % 3, 1});
            case 8: return json::object({{"x", 1}});
            default: return rng() % 70000;
        }
    };
    int ok = 0, errors = 0;
    for (int i = 0; i < 4000 * rounds; ++i) {
        json j = base;
        int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) {
            // Walk down a random path.
            json* cur = &j;
            while ((cur->is_object() || cur->is_array()) && !cur->empty() && rng() % 4 != 0) {
                auto k = rng() % cur->size();
                auto it = cur->begin();
                std::advance(it, static_cast<long>(k));
                cur = &*it;
            }
            switch (rng() % 4) {
                case 0:
                case 1: *cur = random_value(); break;
                case 2:
                    if (cur->is_object() && !cur->empty()) cur->erase(cur->begin());
                    else if (cur->is_array() && !cur->empty()) cur->erase(cur->begin() + static_cast<long>(rng() % cur->size()));
                    break;
                case 3:
                    if (cur->is_array() && !cur->empty()) cur->push_back((*cur)[rng() % cur->size()]);
                    break;
            }
        }
        try {
            decode_payload(MsgType::Snapshot, j.dump());
            ++ok;
        } catch (const Error&) {
            ++errors;
        }
    }
    EXPECT_GT(errors, 1000 * rounds);
    EXPECT_GT(ok, 10);
}

TEST(Wire, SnapshotOverloadEncodesTheSameBytes) {
    Snapshot s = sample_snapshot();
    EXPECT_EQ(encode(s), encode(Message(s)));
}

TEST(Wire, SnapshotKeysMayComeInAnyOrderAndUnknownSubtreesAreSkipped) {
    // nlohmann's default object type sorts keys: "k" (links) now precedes "n" (nodes), and a
    // node's "p" precedes "np" and "t". The decoder must not depend on the encoder's key order.
    json j = snapshot_json();
    j["zz_future"] = json::array({json::object({{"deep", json::array({1, 2, json::object()})}}), "x", nullptr});
    j["n"][0]["aa_future"] = json::object({{"p", json::array({1, 2})}});
    std::string payload = j.dump();
    ASSERT_LT(payload.find("\"k\":"), payload.find("\"n\":"));
    auto back = std::get<Snapshot>(decode_payload(MsgType::Snapshot, payload));
    expect_same_snapshot(sample_snapshot(), back);
}

TEST(WireErrors, DuplicateKnownKeysAreRejected) {
    std::string p = encode_payload(sample_snapshot());
    std::string dup = "{\"seq\":1," + p.substr(1);
    expect_error(frame(MsgType::Snapshot, dup), "Snapshot.seq: duplicate key");
    json j = snapshot_json();
    std::string node_dup = j.dump();
    auto pos = node_dup.find("\"d\":");
    node_dup.insert(pos, "\"d\":\"x\",");
    expect_error(frame(MsgType::Snapshot, node_dup), "duplicate key");
}

// docs/wire.md: a key given twice is an error in every message, not only in the Snapshot (issue 10:
// a Hello with a duplicate key used to be accepted, the last value silently winning).
TEST(WireErrors, DuplicateKeysInSmallMessagesAreRejected) {
    std::string hello = encode_payload(sample_hello());
    expect_error(frame(MsgType::Hello, "{\"osm\":\"x\"," + hello.substr(1)), "Hello.osm: duplicate key");
    expect_error(frame(MsgType::Hello, "{\"sm\":[1,1,1,1,1]," + hello.substr(1)), "Hello.sm: duplicate key");
    // Unknown keys too: a receiver must not pick one of two values.
    expect_error(frame(MsgType::Hello, "{\"zz\":1,\"zz\":2," + hello.substr(1)), "Hello.zz: duplicate key");
    std::string au = hello.substr(0, hello.size() - 1) +
                     ",\"au\":{\"t\":1,\"t\":2,\"n\":\"00112233445566778899aabbccddeeff\",\"m\":\"" +
                     std::string(64, 'a') + "\"}}";
    expect_error(frame(MsgType::Hello, au), "Hello.au.t: duplicate key");
    std::string ev = encode_payload(sample_event());
    expect_error(frame(MsgType::Event, "{\"k\":2," + ev.substr(1)), "Event.k: duplicate key");
    std::string c = encode_payload(sample_counters());
    expect_error(frame(MsgType::Counters, "{\"sent\":2," + c.substr(1)), "Counters.sent: duplicate key");
    // The same keys in two different objects are not duplicates.
    Decoder d;
    std::string ok = frame(MsgType::Hello, hello.substr(0, hello.size() - 1) + ",\"x\":{\"osm\":1,\"pv\":2}}");
    d.feed(ok.data(), ok.size());
    EXPECT_TRUE(d.next());
}

TEST(WireErrors, ErrorsNameTheField) {
    json j = snapshot_json();
    j["n"][2]["p"][1][7] = 11;
    try {
        decode_payload(MsgType::Snapshot, j.dump());
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "Snapshot.n[2].p[1][7]: 11 is out of range (max 9)");
    }
}

// The JSON examples in docs/wire.md must decode: the schema documentation cannot drift silently.
TEST(Wire, DocumentationExamplesDecode) {
    std::ifstream in(std::string(IBF_SOURCE_DIR) + "/docs/wire.md");
    ASSERT_TRUE(in) << "docs/wire.md not found";
    std::string line, block;
    std::optional<MsgType> type;
    bool in_json = false;
    int decoded = 0;
    std::set<MsgType> seen;
    const std::pair<const char*, MsgType> headings[] = {{"### 1 Hello", MsgType::Hello},
                                                        {"### 2 Snapshot", MsgType::Snapshot},
                                                        {"### 3 Event", MsgType::Event},
                                                        {"### 4 Heartbeat", MsgType::Heartbeat},
                                                        {"### 5 Counters", MsgType::Counters},
                                                        {"### 6 PortCounters", MsgType::PortCounters}};
    while (std::getline(in, line)) {
        for (auto [h, t] : headings)
            if (line.rfind(h, 0) == 0) type = t;
        if (line == "```json") {
            in_json = true;
            block.clear();
        } else if (in_json && line == "```") {
            in_json = false;
            ASSERT_TRUE(type) << "json example before any message heading";
            SCOPED_TRACE(block);
            EXPECT_NO_THROW(decode_payload(*type, block));
            ++decoded;
            seen.insert(*type);
        } else if (in_json) {
            block += line + "\n";
        }
    }
    // One example per message type, and Hello's second (authenticated, with "au"), exactly: a
    // dropped or mis-headed example fails here.
    EXPECT_EQ(decoded, 7);
    EXPECT_EQ(seen.size(), 6u);
}

// PortCounters (type 6): a full batch round-trips, every value up to 2^64-1; a bigger batch is
// refused on both sides; a Counters message from an older plugin (no pce/pcd) still decodes.
TEST(Wire, PortCountersRoundTripAndTheirLimits) {
    PortCounters pc;
    pc.unix_ms = 1764460800123;
    for (size_t i = 0; i < kMaxPortCounterRows; ++i) {
        PortCounterRow r;
        r.node_guid = 0xec0d9a0300000000ULL + i;  // a GUID above 2^63
        r.port = static_cast<uint8_t>(i % 256);
        for (size_t k = 0; k < kPortCounterCount; ++k) r.v[k] = k == 13 ? UINT64_MAX : i * 1000 + k;
        pc.ports.push_back(r);
    }
    const std::string f = encode(Message(pc));
    EXPECT_LT(f.size(), kMaxSmallPayload);
    EXPECT_EQ(f[6], 6);
    expect_same(Message(pc), decode_one(f));
    pc.ports.push_back(pc.ports.back());
    EXPECT_THROW(encode(Message(pc)), Error);
    try {
        std::string rows = "[1,2" + std::string(",0") + "]";
        decode_payload(MsgType::PortCounters, "{\"ms\":1,\"p\":[" + rows + "]}");
        ADD_FAILURE() << "a short row decoded";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "PortCounters.p[0]: array has 3 elements, needs 19");
    }
    const Counters old = std::get<Counters>(decode_payload(
        MsgType::Counters, R"({"taken":1,"sent":1,"superseded":0,"ev_dropped":0,"send_err":0,"reconnects":0,"copy_us":5,"lag_ms":1,"qdepth":0})"));
    EXPECT_EQ(old.port_counter_events, 0u);
    EXPECT_EQ(old.port_counter_events_dropped, 0u);
}
