// Hello authentication: canonical text, HMAC-SHA256 (OpenSSL libcrypto), key checks, the replay
// window and the verdict. docs/wire.md, "Hello authentication".
#include "ibf/wire_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ibf::wire {

namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string hex_of(const unsigned char* p, size_t n) {
    std::string out(2 * n, '0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = kHex[p[i] >> 4];
        out[2 * i + 1] = kHex[p[i] & 0xF];
    }
    return out;
}

void line(std::string& out, std::string_view key, std::string_view value) {
    out.append(key);
    out.push_back('=');
    out.append(value);
    out.push_back('\n');
}

std::string sized(std::string_view s) { return std::to_string(s.size()) + ":" + std::string(s); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::string hello_auth_text(const Hello& h, int64_t t_ms, std::string_view nonce_hex) {
    std::string out = "ibfabric-hello-v1\n";
    line(out, "osm", sized(h.osm_version));
    line(out, "pv", sized(h.plugin_version));
    line(out, "sm", std::to_string(h.sm.port_guid) + "," + std::to_string(h.sm.lid) + "," +
                        std::to_string(h.sm.priority) + "," + std::to_string(static_cast<int>(h.sm.state)) + "," +
                        std::to_string(h.sm.act_count));
    line(out, "pid", std::to_string(h.pid));
    if (h.conf)  // covered too when sent (docs/wire.md): a peer cannot fake another node's settings
        line(out, "cf", sized(h.conf->routing_engine) + sized(h.conf->root_guid_file) + sized(h.conf->cn_guid_file) +
                            std::to_string(h.conf->lmc) + "," + (h.conf->honor_guid2lid ? "1" : "0") + "," +
                            sized(h.conf->sm_key_digest));
    if (h.wire_version != 1) line(out, "wv", std::to_string(h.wire_version));  // a v1 Hello's text is unchanged
    line(out, "t", std::to_string(t_ms));
    line(out, "n", nonce_hex);
    return out;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view text) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(text.data()),
              text.size(), md, &len))
        throw Error("HMAC-SHA256 failed (OpenSSL)");
    return hex_of(md, len);
}

void sign_hello(Hello& h, std::string_view key, int64_t t_ms, std::string_view nonce_hex) {
    h.auth = HelloAuth{t_ms, std::string(nonce_hex), hmac_sha256_hex(key, hello_auth_text(h, t_ms, nonce_hex))};
}

std::string nonce_hex_of(const unsigned char (&bytes)[16]) { return hex_of(bytes, 16); }

std::string sm_key_digest(uint64_t sm_key) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    const std::string text = std::to_string(sm_key);
    if (!EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr)) throw Error("SHA-256 failed (OpenSSL)");
    return hex_of(md, 8);
}

KeyCheck check_key_file(std::string_view content, unsigned mode) {
    KeyCheck r;
    if (mode & 0027) {
        char m[8];
        std::snprintf(m, sizeof m, "%04o", mode & 07777);
        r.error = std::string("mode ") + m +
                  " is too open: the key file must not be writable by group or others nor readable by others (use 0600 or 0640)";
        return r;
    }
    size_t b = 0, e = content.size();
    while (b < e && is_space(content[b])) ++b;
    while (e > b && is_space(content[e - 1])) --e;
    if (e - b < kMinKeyBytes) {
        r.error = "the key is " + std::to_string(e - b) + " bytes after trimming; at least " +
                  std::to_string(kMinKeyBytes) + " are needed (e.g. `openssl rand -hex 32`)";
        return r;
    }
    r.key = std::string(content.substr(b, e - b));
    return r;
}

KeyCheck read_key_file(const std::string& path) {
    KeyCheck r;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        r.error = path + ": cannot read the key file: " + std::strerror(errno);
        return r;
    }
    struct stat st {};
    std::string content;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        r.error = path + ": not a regular file";
    } else if (st.st_size > 4096) {
        r.error = path + ": larger than 4096 bytes: not a key file";
    } else {
        char buf[4097];
        ssize_t n = 0;
        size_t off = 0;
        while ((n = ::read(fd, buf + off, sizeof buf - off)) > 0) off += static_cast<size_t>(n);
        if (n < 0) r.error = path + ": cannot read the key file: " + std::strerror(errno);
        else if (off > 4096) r.error = path + ": larger than 4096 bytes: not a key file";
        content.assign(buf, off);
    }
    ::close(fd);
    if (!r.error.empty()) return r;
    r = check_key_file(content, st.st_mode & 07777);
    if (!r.error.empty()) r.error = path + ": " + r.error;
    std::fill(content.begin(), content.end(), '\0');
    return r;
}

void NonceWindow::expire(int64_t now_ms) {
    while (!by_t_.empty() && by_t_.begin()->first < now_ms - window_ms_) {
        seen_.erase(by_t_.begin()->second);
        by_t_.erase(by_t_.begin());
    }
}

NonceWindow::Result NonceWindow::admit(const std::string& nonce, int64_t t_ms, int64_t now_ms) {
    expire(now_ms);
    if (seen_.count(nonce)) return Result::replayed;
    if (seen_.size() >= capacity_) return Result::full;
    seen_.insert(nonce);
    by_t_.emplace(t_ms, nonce);
    return Result::fresh;
}

AuthVerdict verify_hello(const Hello& h, std::string_view key, int64_t now_ms, NonceWindow& seen, int64_t window_ms) {
    if (!h.auth) return {false, "no authentication in its Hello (\"au\" missing: plugin without key_file=?)"};
    const HelloAuth& a = *h.auth;
    const std::string want = hmac_sha256_hex(key, hello_auth_text(h, a.unix_ms, a.nonce));
    if (a.mac.size() != want.size() || CRYPTO_memcmp(a.mac.data(), want.data(), want.size()) != 0)
        return {false, "wrong MAC (the plugin's key_file differs from tcp_key_file)"};
    const int64_t skew = a.unix_ms - now_ms;
    if (skew > window_ms || skew < -window_ms)
        return {false, "Hello timestamp is " + std::to_string((skew < 0 ? -skew : skew) / 1000) + " s " +
                           (skew < 0 ? "behind" : "ahead of") + " this daemon's clock (limit " +
                           std::to_string(window_ms / 1000) + " s; a replay, or clocks out of sync)"};
    switch (seen.admit(a.nonce, a.unix_ms, now_ms)) {
        case NonceWindow::Result::fresh: return {true, ""};
        case NonceWindow::Result::replayed: return {false, "nonce already used (a replayed Hello)"};
        case NonceWindow::Result::full:
            return {false, "too many authenticated Hellos within the window (nonce cache full)"};
    }
    return {false, "unknown"};
}

}  // namespace ibf::wire
