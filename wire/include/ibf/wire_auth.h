// Authenticated Hello (docs/wire.md, "Hello authentication"): a sender that holds the shared key
// adds "au" = {t, n, m} to its Hello, m = HMAC-SHA256(key, hello_auth_text(hello, t, n)); the
// daemon checks it on TCP connections. Pure (no clock: time passed in; no sockets), except
// read_key_file(), the one place both the plugin and the daemon read the shared key file.
//
//   wire::Hello h = ...;
//   wire::sign_hello(h, key, now_unix_ms, nonce_hex);          // plugin, per connection
//   wire::NonceWindow seen;                                     // daemon, one for all connections
//   wire::AuthVerdict v = wire::verify_hello(h, key, now_unix_ms, seen);
//   if (!v.ok) { /* drop the connection, log v.reason */ }
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>

#include "ibf/wire.h"

namespace ibf::wire {

inline constexpr size_t kMinKeyBytes = 32;          // shared key, after trimming
inline constexpr int64_t kAuthWindowMs = 60000;     // |t - receiver's clock| allowed
inline constexpr size_t kNonceWindowCapacity = 4096;  // authenticated Hellos remembered per window

// The exact bytes the MAC covers. Every line ends with LF; strings are length-prefixed:
//   ibfabric-hello-v1\nosm=13:OpenSM 3.3.23\npv=5:0.1.0\nsm=4096,5,7,1,1\npid=4242\nt=<t>\nn=<nonce>\n
std::string hello_auth_text(const Hello& h, int64_t t_ms, std::string_view nonce_hex);

// HMAC-SHA256(key, text) as 64 lowercase hex digits.
std::string hmac_sha256_hex(std::string_view key, std::string_view text);

// Sets h.auth = {t_ms, nonce_hex, MAC}. nonce_hex: 32 lowercase hex digits of fresh randomness.
void sign_hello(Hello& h, std::string_view key, int64_t t_ms, std::string_view nonce_hex);

// 16 random bytes as 32 lowercase hex digits.
std::string nonce_hex_of(const unsigned char (&bytes)[16]);
// What the plugin sends in Hello.cf.kh: the first 16 hex digits of SHA-256 of the sm_key's decimal
// text. Enough to tell two keys apart, not to read the key.
std::string sm_key_digest(uint64_t sm_key);

// A key file's content and permission bits -> the key (surrounding whitespace trimmed), or why
// not: shorter than kMinKeyBytes, or a mode with a write bit for group/others or any bit for others
// (0600 and 0640 are fine). `error` is one line without the path (the caller adds it).
struct KeyCheck {
    std::string key;
    std::string error;  // empty = ok
};
KeyCheck check_key_file(std::string_view content, unsigned mode);

// Reads and checks a key file (a regular file of at most 4 KiB; check_key_file's rules). `error`
// is one line naming the file: "/etc/ibfabric/ingest.key: mode 0644 is too open: ...".
KeyCheck read_key_file(const std::string& path);

// Nonces of authenticated Hellos whose t is still inside the window: a replay is refused. Bounded:
// entries leave when their t falls out of the window (they would be refused as stale anyway);
// when `capacity` live entries exist, a new Hello is refused ("too many") rather than forgetting one.
class NonceWindow {
public:
    explicit NonceWindow(size_t capacity = kNonceWindowCapacity, int64_t window_ms = kAuthWindowMs)
        : capacity_(capacity), window_ms_(window_ms) {}
    enum class Result { fresh, replayed, full };
    // Records `nonce` (with its t) unless it is a replay or the window is full.
    Result admit(const std::string& nonce, int64_t t_ms, int64_t now_ms);
    size_t size() const { return seen_.size(); }

private:
    void expire(int64_t now_ms);
    size_t capacity_;
    int64_t window_ms_;
    std::unordered_set<std::string> seen_;
    std::multimap<int64_t, std::string> by_t_;  // t -> nonce, to expire in order
};

struct AuthVerdict {
    bool ok = false;
    std::string reason;  // one phrase for the log line when !ok
};

// Checks, in this order: "au" present; MAC (constant-time compare); |t - now_ms| <= window;
// nonce not seen within the window. Records the nonce only when everything else holds.
AuthVerdict verify_hello(const Hello& h, std::string_view key, int64_t now_ms, NonceWindow& seen,
                         int64_t window_ms = kAuthWindowMs);

}  // namespace ibf::wire
