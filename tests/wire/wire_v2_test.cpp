// Snapshot protocol version 2 (docs/wire.md, "Snapshot, version 2"): binary parts of at most a few
// MiB, LFTs only when they changed on this connection, a decoder that assembles as parts arrive,
// the same validation as version 1, and the Hello that announces it.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "ibf/wire.h"
#include "ibf/wire_auth.h"
#include "wire_fixtures.h"

using namespace ibf;
using namespace ibf::wire;

namespace {

Hello hello_v2() {
    Hello h = sample_hello();
    h.wire_version = 2;
    return h;
}

// A decoder that has seen a Hello announcing version 2 (as the daemon's is on a plugin connection).
Decoder v2_decoder() {
    Decoder d(kMaxPayload, kMaxSmallPayload);
    std::string h = encode(Message(hello_v2()));
    d.feed(h.data(), h.size());
    EXPECT_TRUE(d.next().has_value());
    return d;
}

std::vector<std::string> frames_of(const Snapshot& s, LftHashes& delivered, size_t max_part = kMaxPartPayload) {
    SnapshotWriter w(s, delivered, max_part);
    std::vector<std::string> out;
    std::string f;
    while (w.next(f)) out.push_back(f);
    delivered = w.take_delivered();
    return out;
}

// Feeds the frames one at a time; the snapshot must come out exactly at the last one.
Snapshot decode_frames(Decoder& d, const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
        d.feed(frames[i].data(), frames[i].size());
        auto m = d.next();
        EXPECT_EQ(d.buffered(), 0u);
        if (i + 1 < frames.size()) {
            EXPECT_FALSE(m.has_value()) << "a snapshot before its End part (frame " << i << ")";
            continue;
        }
        if (!m) ADD_FAILURE() << "no snapshot after the End part";
        else if (auto* s = std::get_if<Snapshot>(&*m)) return std::move(*s);
        else ADD_FAILURE() << "not a Snapshot";
    }
    return {};
}

std::string error_of(Decoder& d, const std::string& bytes) {
    try {
        d.feed(bytes.data(), bytes.size());
        while (d.next()) {
        }
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

// A fabric of `switches` switches with an LFT each over `lids` LIDs, deterministic content.
Snapshot with_lfts(int switches, int hcas, size_t lids) {
    Snapshot s = synthetic_snapshot(switches, 36, hcas, 0);
    for (int i = 0; i < switches; ++i) {
        std::vector<uint8_t> t(lids);
        for (size_t l = 0; l < lids; ++l) t[l] = static_cast<uint8_t>(l == 0 ? kLftNoPath : 1 + (l + static_cast<size_t>(i)) % 36);
        s.lfts.emplace_back(0x0002c90300200000ull + static_cast<Guid>(i), std::move(t));
    }
    return s;
}

}  // namespace

TEST(WireV2, SnapshotRoundTripKeepsEveryField) {
    Snapshot s = sample_snapshot();
    LftHashes delivered;
    Decoder d = v2_decoder();
    Snapshot got = decode_frames(d, frames_of(s, delivered));
    expect_same_snapshot(s, got);
    EXPECT_EQ(got.fabric.node(1).name, "custom-name");
    EXPECT_EQ(got.fabric.node(0).ports[7].valid, false);
}

TEST(WireV2, EncodesToAFractionOfTheJsonSnapshot) {
    Snapshot s = synthetic_snapshot(108, 36, 2048, 0);
    const size_t json = encode(s).size();
    const size_t bin = encode_v2(s).size();
    EXPECT_LT(bin * 2, json) << "v2 " << bin << " bytes, v1 " << json;
}

TEST(WireV2, UnchangedLftsGoAsNineByteRecordsAndComeBackWhole) {
    Snapshot s1 = with_lfts(40, 400, 441);
    LftHashes delivered;
    Decoder d = v2_decoder();
    SnapshotWriter w1(s1, delivered);
    std::string f;
    std::vector<std::string> frames;
    while (w1.next(f)) frames.push_back(f);
    EXPECT_EQ(w1.lfts_sent(), 40u);
    EXPECT_EQ(w1.lfts_unchanged(), 0u);
    delivered = w1.take_delivered();
    expect_same_snapshot(s1, decode_frames(d, frames));

    Snapshot s2 = s1;
    s2.sweep_seq = 2;
    s2.lfts[7].edit([](std::vector<uint8_t>& t) { t[100] = 2; });  // one switch re-routed one LID
    SnapshotWriter w2(s2, delivered);
    frames.clear();
    size_t bytes = 0;
    while (w2.next(f)) {
        frames.push_back(f);
        bytes += f.size();
    }
    EXPECT_EQ(w2.lfts_sent(), 1u);
    EXPECT_EQ(w2.lfts_unchanged(), 39u);
    const size_t full = encode_v2(s2).size();
    EXPECT_LE(bytes + 39 * 441, full + 39 * 9) << "incremental " << bytes << " bytes, full " << full;
    Snapshot got = decode_frames(d, frames);
    expect_same_snapshot(s2, got);
    EXPECT_EQ(got.lfts[7].port_by_lid()[100], 2);
    // Every decoded table carries its hash, the kept one for an "unchanged" record: the route
    // validation finds the changed table by it (route_check.h).
    for (const SwitchLft& t : got.lfts) EXPECT_EQ(t.hash, lft_hash(t.port_by_lid())) << std::hex << t.switch_guid;
    EXPECT_NE(got.lfts[7].hash, lft_hash(s1.lfts[7].port_by_lid()));
}

TEST(WireV2, ANewConnectionGetsEveryTableAndAStrangerRefusesUnchanged) {
    Snapshot s = with_lfts(4, 20, 40);
    LftHashes delivered;
    (void)frames_of(s, delivered);  // the first connection holds every table now
    std::vector<std::string> again = frames_of(s, delivered);
    // The same stream on a connection whose decoder never saw the tables (a reconnect must start
    // from an empty LftHashes, which the sender does): refused, naming the switch.
    Decoder fresh = v2_decoder();
    std::string all;
    for (auto& x : again) all += x;
    EXPECT_EQ(error_of(fresh, all),
              "Snapshot v2 Lfts part: LFT 0: \"unchanged\" for switch 0x0002c90300200000, which the last snapshot on "
              "this connection had no LFT for");
    LftHashes none;
    Decoder d2 = v2_decoder();
    expect_same_snapshot(s, decode_frames(d2, frames_of(s, none)));
}

TEST(WireV2, PartsStayWithinTheLimitAndTheDecoderHoldsOneAtATime) {
    Snapshot s = with_lfts(200, 6000, 6201);
    LftHashes delivered;
    const size_t max_part = 256u << 10;
    std::vector<std::string> frames = frames_of(s, delivered, max_part);
    size_t nodes_parts = 0, lft_parts = 0;
    for (const std::string& f : frames) {
        EXPECT_LE(f.size(), kHeaderSize + max_part);
        nodes_parts += f[kHeaderSize] == 2;
        lft_parts += f[kHeaderSize] == 4;
    }
    EXPECT_GE(nodes_parts, 2u);
    EXPECT_GE(lft_parts, 4u);
    Decoder d = v2_decoder();
    expect_same_snapshot(s, decode_frames(d, frames));
}

TEST(WireV2, ByteByByteFeedingGivesTheSameSnapshot) {
    Snapshot s = sample_snapshot();
    std::string bytes = encode_v2(s);
    Decoder d = v2_decoder();
    std::optional<Message> m;
    for (size_t i = 0; i < bytes.size(); ++i) {
        d.feed(bytes.data() + i, 1);
        auto x = d.next();
        if (x) {
            EXPECT_EQ(i + 1, bytes.size());
            m = std::move(x);
        }
    }
    ASSERT_TRUE(m.has_value());
    expect_same_snapshot(s, std::get<Snapshot>(*m));
}

TEST(WireV2, OtherMessagesMayComeBetweenParts) {
    Snapshot s = sample_snapshot();
    LftHashes delivered;
    std::vector<std::string> frames = frames_of(s, delivered);
    ASSERT_GE(frames.size(), 3u);
    frames.insert(frames.begin() + 1, encode(Message(sample_heartbeat())));
    Decoder d = v2_decoder();
    std::string all;
    for (auto& f : frames) all += f;
    d.feed(all.data(), all.size());
    auto a = d.next();
    ASSERT_TRUE(a && std::holds_alternative<Heartbeat>(*a));
    auto b = d.next();
    ASSERT_TRUE(b && std::holds_alternative<Snapshot>(*b));
    expect_same_snapshot(s, std::get<Snapshot>(*b));
}

TEST(WireV2, VersionTwoFramesNeedAHelloThatAnnouncedThem) {
    const std::string snap = encode_v2(sample_snapshot());
    Decoder before;
    EXPECT_EQ(error_of(before, snap), "wire version 2 frame before Hello");
    Decoder v1;
    const std::string h = encode(Message(sample_hello()));
    EXPECT_EQ(error_of(v1, h + snap), "wire version 2 frame but the Hello announced version 1");
    // What an older daemon (one that speaks only version 1) says is its own line: "unsupported
    // wire version 2 (this side speaks 1)"; this side names both and the way out.
    Decoder d;
    std::string v3 = snap;
    v3[4] = 3;
    EXPECT_EQ(error_of(d, h + v3), "unsupported wire version 3 (this side speaks 1 and 2: upgrade it)");
}

TEST(WireV2, HelloAnnouncesTheVersionAndItsMacCoversIt) {
    Hello h = hello_v2();
    const std::string json = encode_payload(Message(h));
    EXPECT_NE(json.find("\"wv\":2"), std::string::npos) << json;
    EXPECT_EQ(encode_payload(Message(sample_hello())).find("wv"), std::string::npos);  // v1: unchanged bytes
    auto back = std::get<Hello>(decode_payload(MsgType::Hello, json));
    EXPECT_EQ(back.wire_version, 2);
    const std::string t1 = hello_auth_text(sample_hello(), 1, "00");
    const std::string t2 = hello_auth_text(h, 1, "00");
    EXPECT_EQ(t1.find("wv="), std::string::npos);
    EXPECT_NE(t2.find("\nwv=2\n"), std::string::npos) << t2;
}

TEST(WireV2, InvalidUtf8IsRepairedAndOverlongStringsCut) {
    Snapshot s = sample_snapshot();
    s.fabric.node(2).description = std::string("h2 \xff\xfe mlx5_0");
    s.fabric.node(3).description = std::string(5000, 'x');
    Snapshot got = std::get<Snapshot>(*[&] {
        Decoder d = v2_decoder();
        std::string b = encode_v2(s);
        d.feed(b.data(), b.size());
        return d.next();
    }());
    EXPECT_EQ(got.fabric.node(2).description, "h2 \xEF\xBF\xBD\xEF\xBF\xBD mlx5_0");
    EXPECT_EQ(got.fabric.node(3).description.size(), kMaxString);
}

// The decoder builds each snapshot from the tables it keeps: an unchanged table is one buffer
// shared by consecutive snapshots and the decoder (185 MB per full set at 48k LIDs: never copied
// per sweep), a changed one is new bytes, and the decoder lets go of the old ones.
TEST(WireV2, AnUnchangedTableIsOneBufferSharedByConsecutiveSnapshots) {
    Snapshot s1 = with_lfts(4, 8, 300);
    LftHashes delivered;
    Decoder d = v2_decoder();
    const Snapshot a = decode_frames(d, frames_of(s1, delivered));
    Snapshot s2 = s1;
    s2.sweep_seq = 2;
    s2.lfts[2].edit([](std::vector<uint8_t>& t) { t[100] = 2; });
    const Snapshot b = decode_frames(d, frames_of(s2, delivered));
    expect_same_snapshot(s2, b);
    ASSERT_EQ(b.lfts.size(), 4u);
    for (size_t i = 0; i < b.lfts.size(); ++i) {
        const auto& was = a.lfts[i].shared_port_by_lid();
        const auto& now = b.lfts[i].shared_port_by_lid();
        ASSERT_TRUE(was && now);
        if (i == 2) {
            EXPECT_NE(was, now);
            EXPECT_EQ(was.use_count(), 1);  // only snapshot a holds the old bytes now
            EXPECT_EQ(now.use_count(), 2);  // b and the decoder's kept table
        } else {
            EXPECT_EQ(was, now) << "table " << i << " copied";
            EXPECT_EQ(now.use_count(), 3);  // a, b and the decoder's kept table: one buffer
        }
    }
}

TEST(WireV2, TheWriterRefusesWhatTheFormatCannotCarryBeforeWritingAByte) {
    Snapshot s = sample_snapshot();
    s.lfts[0].edit([](std::vector<uint8_t>& t) { t.resize(kMaxLftLids + 1, kLftNoPath); });
    try {
        SnapshotWriter w(s, {});
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "Snapshot: LFT of 0x0000000000200000 has 49153 LIDs (at most 49152)");
    }
}

// One-byte mutations of a valid stream and the exact error each gives (the version 1 rules).
TEST(WireV2Errors, PartViolations) {
    Snapshot s = sample_snapshot();
    LftHashes none;
    std::vector<std::string> frames = frames_of(s, none);
    ASSERT_EQ(frames.size(), 5u);  // Begin, Nodes, Links, Lfts, End
    auto with = [&](size_t frame, size_t at, char v) {
        std::vector<std::string> f = frames;
        f[frame][kHeaderSize + at] = v;
        std::string all;
        for (auto& x : f) all += x;
        Decoder d = v2_decoder();
        return error_of(d, all);
    };
    auto without = [&](size_t frame) {
        std::string all;
        for (size_t i = 0; i < frames.size(); ++i)
            if (i != frame) all += frames[i];
        Decoder d = v2_decoder();
        return error_of(d, all);
    };
    EXPECT_EQ(with(0, 0, 9), "Snapshot v2: unknown part 9");
    EXPECT_EQ(with(0, 17, 2), "Snapshot v2 Begin part: ie 2 is not 0 or 1");
    // Nodes part: offset 1 count (4), node 0 type at 5.
    EXPECT_EQ(with(1, 5, 7), "Snapshot v2 Nodes part: node 0: node type 7 above 3");
    EXPECT_EQ(without(0), "Snapshot v2: part 2 without a Begin part");
    EXPECT_EQ(without(1), "Snapshot v2: a Links part after 0 of 4 nodes");
    EXPECT_EQ(without(2), "Snapshot v2: an Lfts part before every node and link (4 of 4 nodes, 0 of 3 links)");
    std::string twice = frames[0] + frames[1] + frames[1];
    Decoder d = v2_decoder();
    EXPECT_EQ(error_of(d, twice), "Snapshot v2 Nodes part: more nodes than the 4 Begin announced");
    std::string dup_begin = frames[0] + frames[0];
    Decoder d2 = v2_decoder();
    EXPECT_EQ(error_of(d2, dup_begin), "Snapshot v2: a Begin part while a snapshot is in progress");
}

TEST(WireV2Errors, PortAndLinkRulesAreTheJsonDecodersRules) {
    auto err = [](const std::function<void(Snapshot&)>& mutate) {
        Snapshot s = sample_snapshot();
        mutate(s);
        Decoder d = v2_decoder();
        return error_of(d, encode_v2(s));
    };
    EXPECT_EQ(err([](Snapshot& s) { s.fabric.node(1).ports[1].width_active = static_cast<Width>(3); }),
              "Snapshot v2 Nodes part: node 1 port 1: not a link width value (0,1,2,4,8,16)");
    EXPECT_EQ(err([](Snapshot& s) { s.fabric.node(1).ports[1].mtu_cap = 3000; }),
              "Snapshot v2 Nodes part: node 1 port 1: not an MTU (0, 256, 512, 1024, 2048, 4096)");
    EXPECT_EQ(err([](Snapshot& s) { s.fabric.node(2).guid = 0x100001; }),
              "Snapshot v2 Nodes part: node 2: duplicate node GUID 0x0000000000100001");
    EXPECT_EQ(err([](Snapshot& s) { s.lfts[0].edit([](std::vector<uint8_t>& t) { t[3] = 9; }); }),
              "Snapshot v2 Lfts part: LFT 0: LID 3 routed to port 9 beyond the switch's 8 ports");
    EXPECT_EQ(err([](Snapshot& s) { s.lfts.push_back(s.lfts[0]); }),
              "Snapshot v2 Lfts part: LFT 1: second LFT for switch 0x0000000000200000");
    EXPECT_EQ(err([](Snapshot& s) { s.lfts[0].switch_guid = 0x100001; }),
              "Snapshot v2 Lfts part: LFT 0: LFT of 0x0000000000100001, which is not a switch");
}

TEST(WireV2Errors, TheSnapshotsPartsTogetherAreBoundedByTheDecodersLimit) {
    Snapshot s = with_lfts(50, 100, 20000);
    Decoder d(512u << 10, kMaxSmallPayload);
    std::string h = encode(Message(hello_v2()));
    const std::string e = error_of(d, h + encode_v2(s));
    EXPECT_EQ(e.rfind("Snapshot v2: parts of ", 0), 0u) << e;
    EXPECT_NE(e.find("exceed the limit of 524288"), std::string::npos) << e;
}

TEST(WireV2Fuzz, MutationsOnlyEverThrowWireError) {
    Snapshot s = with_lfts(6, 30, 64);
    const std::string base = encode_v2(s);
    std::mt19937 rng(18);
    size_t errors = 0, decoded = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string b = base;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) b[rng() % b.size()] = static_cast<char>(rng());
        if (round % 7 == 0) b.resize(rng() % b.size());
        Decoder d = v2_decoder();
        try {
            d.feed(b.data(), b.size());
            while (auto m = d.next()) {
                (void)encode(*m);
                (void)encode_v2(std::get<Snapshot>(*m));
                ++decoded;
            }
        } catch (const Error&) {
            ++errors;
        }
    }
    EXPECT_GT(errors, 1000u);  // most mutations are caught...
    EXPECT_GT(decoded, 0u);    // ...and some land in values that stay valid (an act_count, a LID)
}
