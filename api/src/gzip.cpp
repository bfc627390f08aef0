// gzip() and gunzip() with zlib (ibf/gzip.h).
#include "ibf/gzip.h"

#include "ibf/text.h"

#include <zlib.h>

#include <cctype>
#include <stdexcept>

namespace ibf {

std::string gzip(std::string_view in, int level) {
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("gzip: deflateInit2 failed");
    std::string out(deflateBound(&z, in.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate failed");
    return out;
}

std::string gunzip(std::string_view in) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("gunzip: inflateInit2 failed");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    std::string out;
    char buf[65536];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) throw std::runtime_error("gunzip: not a complete gzip stream");
    return out;
}

bool accepts_gzip(std::string_view v) {
    size_t from = 0;
    while (from <= v.size()) {
        size_t comma = v.find(',', from);
        if (comma == std::string_view::npos) comma = v.size();
        std::string_view item = v.substr(from, comma - from);
        from = comma + 1;
        const size_t semi = item.find(';');
        std::string_view coding = item.substr(0, semi);
        coding = trim(coding);
        if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
        if (semi == std::string_view::npos) return true;
        std::string_view q = trim(item.substr(semi + 1));
        if (q.size() > 2 && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
            q.remove_prefix(2);
            return q.find_first_not_of("0.") != std::string_view::npos;  // q=0, q=0.0, q=0.000: refused
        }
        return true;
    }
    return false;
}

}  // namespace ibf
