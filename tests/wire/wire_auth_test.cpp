// Hello authentication (ibf/wire_auth.h): the documented test vector, the "au" key on the wire,
// key-file checks, and every way verify_hello() refuses.
#include "ibf/wire_auth.h"

#include <gtest/gtest.h>

#include "wire_fixtures.h"

using namespace ibf;
using namespace ibf::wire;

namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";  // 32 bytes
const std::string kNonce = "00112233445566778899aabbccddeeff";
constexpr int64_t kT = 1764460800000;

// The Hello of docs/wire.md's example.
Hello doc_hello() { return {"OpenSM 3.3.23", "0.1.0", {4096, 5, 7, SmState::Discovering, 1}, 4242}; }

Hello signed_hello(const std::string& key = kKey, int64_t t = kT, const std::string& nonce = kNonce) {
    Hello h = doc_hello();
    sign_hello(h, key, t, nonce);
    return h;
}

Hello round_trip(const Hello& h) { return std::get<Hello>(decode_payload(MsgType::Hello, encode_payload(h))); }

}  // namespace

// docs/wire.md, "Hello authentication": the canonical text and MAC, computed independently with
// Python's hmac module (hmac.new(key, text, hashlib.sha256).hexdigest()).
TEST(WireAuth, DocumentedTestVector) {
    EXPECT_EQ(hello_auth_text(doc_hello(), kT, kNonce),
              "ibfabric-hello-v1\nosm=13:OpenSM 3.3.23\npv=5:0.1.0\nsm=4096,5,7,1,1\npid=4242\n"
              "t=1764460800000\nn=00112233445566778899aabbccddeeff\n");
    Hello h = signed_hello();
    ASSERT_TRUE(h.auth);
    EXPECT_EQ(h.auth->mac, "bfa8193bfc476b858b7f7b51f7af6ba686dfd3b2a66cc91eb297dcfa967945a7");
    EXPECT_EQ(h.auth->unix_ms, kT);
    EXPECT_EQ(h.auth->nonce, kNonce);
    EXPECT_EQ(encode_payload(h),
              "{\"osm\":\"OpenSM 3.3.23\",\"pv\":\"0.1.0\",\"sm\":[4096,5,7,1,1],\"pid\":4242,\"au\":{\"t\":1764460800000,"
              "\"n\":\"00112233445566778899aabbccddeeff\","
              "\"m\":\"bfa8193bfc476b858b7f7b51f7af6ba686dfd3b2a66cc91eb297dcfa967945a7\"}}");
}

TEST(WireAuth, AuRoundTripsAndIsOptional) {
    Hello back = round_trip(signed_hello());
    ASSERT_TRUE(back.auth);
    EXPECT_EQ(back.auth->unix_ms, kT);
    EXPECT_EQ(back.auth->nonce, kNonce);
    EXPECT_EQ(back.auth->mac, signed_hello().auth->mac);
    EXPECT_FALSE(round_trip(doc_hello()).auth);
    EXPECT_EQ(encode_payload(doc_hello()).find("au"), std::string::npos);
}

TEST(WireAuth, MalformedAuIsAWireError) {
    auto bad = [](const std::string& au, const char* needle) {
        std::string p = encode_payload(doc_hello());
        p = p.substr(0, p.size() - 1) + ",\"au\":" + au + "}";
        try {
            decode_payload(MsgType::Hello, p);
            ADD_FAILURE() << au << ": no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    const std::string m(64, 'a');
    bad("[1,2,3]", "Hello.au: expected an object");
    bad("{\"n\":\"" + kNonce + "\",\"m\":\"" + m + "\"}", "Hello.au: missing \"t\"");
    bad("{\"t\":\"x\",\"n\":\"" + kNonce + "\",\"m\":\"" + m + "\"}", "Hello.au.t: expected an integer");
    bad("{\"t\":1,\"n\":\"0011\",\"m\":\"" + m + "\"}", "Hello.au.n: expected 32 hex digits, got 4");
    bad("{\"t\":1,\"n\":\"" + std::string(32, 'G') + "\",\"m\":\"" + m + "\"}", "Hello.au.n: not a lowercase hex");
    bad("{\"t\":1,\"n\":\"" + kNonce + "\",\"m\":\"" + std::string(64, 'A') + "\"}", "Hello.au.m: not a lowercase hex");
}

TEST(WireAuth, KeyFileChecks) {
    const std::string key(32, 'k');
    EXPECT_EQ(check_key_file("  " + key + "\n", 0600).key, key);
    EXPECT_EQ(check_key_file(key, 0640).error, "");
    EXPECT_EQ(check_key_file(key, 0400).key, key);
    EXPECT_EQ(check_key_file(key.substr(1) + "\n\n", 0600).error,
              "the key is 31 bytes after trimming; at least 32 are needed (e.g. `openssl rand -hex 32`)");
    EXPECT_EQ(check_key_file("   \n", 0600).key, "");
    for (unsigned mode : {0644u, 0660u, 0602u, 0601u, 0666u, 0620u}) {
        KeyCheck c = check_key_file(key, mode);
        EXPECT_EQ(c.key, "") << std::oct << mode;
        EXPECT_NE(c.error.find("is too open"), std::string::npos) << std::oct << mode;
    }
}

TEST(WireAuth, VerifyAcceptsAGoodHelloOnce) {
    NonceWindow seen;
    AuthVerdict v = verify_hello(round_trip(signed_hello()), kKey, kT + 1500, seen);
    EXPECT_TRUE(v.ok) << v.reason;
    EXPECT_EQ(seen.size(), 1u);
    // The same Hello again (a replay, even on another connection): refused.
    v = verify_hello(signed_hello(), kKey, kT + 2000, seen);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.reason, "nonce already used (a replayed Hello)");
}

TEST(WireAuth, VerifyRefusesWrongKeyMissingAuTamperingAndStaleTime) {
    NonceWindow seen;
    AuthVerdict v = verify_hello(signed_hello(std::string(32, 'x')), kKey, kT, seen);
    EXPECT_EQ(v.reason, "wrong MAC (the plugin's key_file differs from tcp_key_file)");
    v = verify_hello(doc_hello(), kKey, kT, seen);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.reason, "no authentication in its Hello (\"au\" missing: plugin without key_file=?)");
    Hello tampered = signed_hello();
    tampered.sm.priority = 15;  // a field changed after signing
    EXPECT_FALSE(verify_hello(tampered, kKey, kT, seen).ok);
    Hello moved = signed_hello();
    moved.auth->unix_ms += 1;  // t is covered by the MAC too
    EXPECT_FALSE(verify_hello(moved, kKey, kT, seen).ok);
    // t at the edges of the window: 60 s is accepted, 60.001 s is not (either side).
    EXPECT_TRUE(verify_hello(signed_hello(kKey, kT, std::string(32, '1')), kKey, kT + 60000, seen).ok);
    EXPECT_TRUE(verify_hello(signed_hello(kKey, kT, std::string(32, '2')), kKey, kT - 60000, seen).ok);
    v = verify_hello(signed_hello(kKey, kT, std::string(32, '3')), kKey, kT + 60001, seen);
    EXPECT_EQ(v.reason, "Hello timestamp is 60 s behind this daemon's clock (limit 60 s; a replay, or clocks out of sync)");
    v = verify_hello(signed_hello(kKey, kT, std::string(32, '4')), kKey, kT - 3600000, seen);
    EXPECT_EQ(v.reason, "Hello timestamp is 3600 s ahead of this daemon's clock (limit 60 s; a replay, or clocks out of sync)");
    EXPECT_EQ(seen.size(), 2u);  // only the two accepted nonces were recorded
}

TEST(WireAuth, NonceWindowIsBoundedAndForgetsOnlyWhatIsStale) {
    NonceWindow w(3, 1000);
    EXPECT_EQ(w.admit("a", 100, 100), NonceWindow::Result::fresh);
    EXPECT_EQ(w.admit("b", 500, 500), NonceWindow::Result::fresh);
    EXPECT_EQ(w.admit("c", 900, 900), NonceWindow::Result::fresh);
    EXPECT_EQ(w.admit("d", 950, 950), NonceWindow::Result::full);  // never forgets a live nonce
    EXPECT_EQ(w.admit("a", 100, 1000), NonceWindow::Result::replayed);
    EXPECT_EQ(w.size(), 3u);
    // At now = 1101, "a" (t = 100) is out of the window: any Hello carrying it is stale anyway.
    EXPECT_EQ(w.admit("d", 1101, 1101), NonceWindow::Result::fresh);
    EXPECT_EQ(w.size(), 3u);
    EXPECT_EQ(w.admit("b", 500, 1200), NonceWindow::Result::replayed);
    EXPECT_EQ(w.admit("e", 3000, 3000), NonceWindow::Result::fresh);
    EXPECT_EQ(w.size(), 1u);
}
