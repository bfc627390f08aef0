// The lab's MAD timeout table: what the kernel does with a request that gets no response.
#include "ibf/mad_timeouts.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ibf {
namespace {

constexpr size_t kHdr = 64;  // a user header before the MAD, as umad_size() gives

// A user MAD: kHdr header bytes (first byte = tag), then a 256-byte MAD.
std::vector<uint8_t> umad(uint64_t tid, uint8_t cls = 0x81, uint8_t method = 0x01, uint8_t tag = 7) {
    std::vector<uint8_t> b(kHdr + 256, 0);
    b[0] = tag;
    uint8_t* m = b.data() + kHdr;
    m[0] = 1;
    m[1] = cls;
    m[3] = method;
    for (int i = 0; i < 8; ++i) m[8 + i] = static_cast<uint8_t>(tid >> (56 - 8 * i));
    m[16] = 0x00;
    m[17] = 0x20;  // SMInfo
    m[100] = 0xab;  // payload beyond the header
    return b;
}
std::vector<uint8_t> response_to(const std::vector<uint8_t>& req, uint64_t agent_bits = 0) {
    std::vector<uint8_t> m(req.begin() + kHdr, req.end());
    m[3] |= 0x80;
    m[10] = static_cast<uint8_t>(agent_bits >> 8);  // umad2sim rewrites bits 32-47 to the agent id
    m[11] = static_cast<uint8_t>(agent_bits);
    return m;
}
std::span<const uint8_t> mad_of(const std::vector<uint8_t>& u) { return std::span(u).subspan(kHdr); }

TEST(MadKey, IsTheLowTidAndTheClass) {
    const auto u = umad(0x1234'5678'9abc'def0ULL, 0x81);
    const auto k = mad_key(mad_of(u));
    ASSERT_TRUE(k);
    EXPECT_EQ(k->tid_low, 0x9abcdef0u);
    EXPECT_EQ(k->mgmt_class, 0x81);
    EXPECT_FALSE(mad_key(std::span(u).subspan(0, 23)));
    EXPECT_FALSE(mad_is_response(mad_of(u)));
    EXPECT_TRUE(mad_is_response(response_to(u)));
    EXPECT_TRUE(mad_is_response(mad_of(umad(1, 0x81, 0x07))));  // TrapRepress answers a Trap
}

TEST(MadTimeouts, ATrapIsAnsweredByItsTrapRepress) {
    MadTimeouts t(kHdr);
    const auto trap = umad(0x66, 0x81, 0x05);  // Trap
    ASSERT_TRUE(t.on_send(3, trap, 200, 3, 0));
    auto repress = std::vector<uint8_t>(trap.begin() + kHdr, trap.end());
    repress[3] = 0x07;
    EXPECT_EQ(t.on_recv(repress), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.outstanding(), 0u);
}

TEST(MadTimeouts, AResponseEndsTheRequestEvenWithOtherAgentBits) {
    MadTimeouts t(kHdr);
    const auto req = umad(0x10);
    ASSERT_TRUE(t.on_send(3, req, 200, 3, 1000));
    EXPECT_EQ(t.outstanding(), 1u);
    EXPECT_EQ(t.next_deadline(), 1200);
    EXPECT_EQ(t.on_recv(response_to(req, 0x0005)), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.outstanding(), 0u);
    EXPECT_FALSE(t.next_deadline());
    EXPECT_TRUE(t.expire(100000).empty());
    EXPECT_FALSE(t.take_timed_out(3));
}

TEST(MadTimeouts, ResendsOncePerTimeoutWhileRetriesAreLeftThenHandsTheHeaderBack) {
    MadTimeouts t(kHdr);
    const auto req = umad(0x22);
    ASSERT_TRUE(t.on_send(3, req, 200, 2, 0));
    EXPECT_TRUE(t.expire(199).empty());
    auto r1 = t.expire(200);
    ASSERT_EQ(r1.size(), 1u);
    EXPECT_EQ(r1[0].fd, 3);
    EXPECT_EQ(r1[0].umad, req);  // the whole MAD again, as first sent
    EXPECT_EQ(t.next_deadline(), 400);
    EXPECT_TRUE(t.expire(399).empty());
    EXPECT_EQ(t.expire(400).size(), 1u);
    EXPECT_FALSE(t.take_timed_out(3));
    EXPECT_TRUE(t.expire(600).empty());  // no retry left: handed back instead
    EXPECT_EQ(t.outstanding(), 0u);
    EXPECT_FALSE(t.take_timed_out(4));  // not on another fd
    auto back = t.take_timed_out(3);
    ASSERT_TRUE(back);
    ASSERT_EQ(back->umad.size(), kHdr + MadTimeouts::kMadHeader);
    EXPECT_TRUE(std::equal(back->umad.begin(), back->umad.end(), req.begin()));
    EXPECT_FALSE(t.take_timed_out(3));
    EXPECT_EQ(t.stats().resent, 2u);
    EXPECT_EQ(t.stats().timed_out, 1u);
}

TEST(MadTimeouts, TheSecondAnswerToAResentRequestIsDropped) {
    MadTimeouts t(kHdr);
    const auto req = umad(0x33);
    ASSERT_TRUE(t.on_send(3, req, 100, 1, 0));
    ASSERT_EQ(t.expire(100).size(), 1u);
    EXPECT_EQ(t.on_recv(response_to(req)), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.on_recv(response_to(req)), MadTimeouts::Recv::drop);
    EXPECT_EQ(t.stats().duplicates, 1u);
}

TEST(MadTimeouts, AnAnswerAfterTheHandBackIsDropped) {
    MadTimeouts t(kHdr);
    const auto req = umad(0x44);
    ASSERT_TRUE(t.on_send(3, req, 100, 0, 0));
    EXPECT_TRUE(t.expire(100).empty());
    ASSERT_TRUE(t.take_timed_out(3));
    EXPECT_EQ(t.on_recv(response_to(req)), MadTimeouts::Recv::drop);
}

TEST(MadTimeouts, RequestsAndMadsItDoesNotTrackPassThrough) {
    MadTimeouts t(kHdr);
    EXPECT_FALSE(t.on_send(3, umad(1), 0, 3, 0));                    // no response expected
    EXPECT_FALSE(t.on_send(3, umad(2, 0x81, 0x81), 200, 3, 0));      // a response of ours
    EXPECT_FALSE(t.on_send(3, std::vector<uint8_t>(kHdr + 10), 200, 3, 0));  // shorter than a MAD header
    EXPECT_EQ(t.outstanding(), 0u);
    // A request from the fabric (a Get to this SM) and an unknown response are delivered.
    EXPECT_EQ(t.on_recv(mad_of(umad(9))), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.on_recv(response_to(umad(10))), MadTimeouts::Recv::deliver);
    // The same TID in another class is another request.
    ASSERT_TRUE(t.on_send(3, umad(5, 0x81), 200, 0, 0));
    ASSERT_TRUE(t.on_send(3, umad(5, 0x01), 200, 0, 0));
    EXPECT_EQ(t.outstanding(), 2u);
}

TEST(MadTimeouts, TheTableIsBoundedAndCountsWhatItCouldNotTrack) {
    MadTimeouts t(kHdr, /*capacity=*/2, /*remembered=*/1);
    EXPECT_TRUE(t.on_send(3, umad(1), 200, 0, 0));
    EXPECT_FALSE(t.on_send(3, umad(1), 200, 0, 0));  // the key is in use
    EXPECT_TRUE(t.on_send(3, umad(2), 200, 0, 0));
    EXPECT_FALSE(t.on_send(3, umad(3), 200, 0, 0));  // full
    EXPECT_EQ(t.stats().untracked, 2u);
    EXPECT_EQ(t.stats().tracked, 2u);
    // Only the newest answered key is remembered for duplicates.
    EXPECT_EQ(t.on_recv(response_to(umad(1))), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.on_recv(response_to(umad(2))), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.on_recv(response_to(umad(1))), MadTimeouts::Recv::deliver);
    EXPECT_EQ(t.on_recv(response_to(umad(2))), MadTimeouts::Recv::drop);
}

TEST(MadTimeouts, AFailedSendIsForgottenAndAReusedKeyIsNoLongerADuplicate) {
    MadTimeouts t(kHdr);
    const auto req = umad(0x55);
    ASSERT_TRUE(t.on_send(3, req, 100, 0, 0));
    t.forget(req);
    EXPECT_EQ(t.outstanding(), 0u);
    ASSERT_TRUE(t.on_send(3, req, 100, 0, 0));
    EXPECT_EQ(t.on_recv(response_to(req)), MadTimeouts::Recv::deliver);
    ASSERT_TRUE(t.on_send(3, req, 100, 0, 0));  // the TID's low 32 bits came round again
    EXPECT_EQ(t.on_recv(response_to(req)), MadTimeouts::Recv::deliver);
}

}  // namespace
}  // namespace ibf
