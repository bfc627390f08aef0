// gzip (RFC 1952) of a buffer with zlib, for GET /metrics when the scraper sends
// Accept-Encoding: gzip. Level 1: a 5 MB scrape compresses ~8x in tens of ms.
//
//   std::string z = ibf::gzip(text);     // throws std::runtime_error if zlib fails
//   bool ok = ibf::accepts_gzip("gzip, deflate");  // true; "gzip;q=0" false
#pragma once

#include <string>
#include <string_view>

namespace ibf {

std::string gzip(std::string_view in, int level = 1);
std::string gunzip(std::string_view in);  // for tests: throws std::runtime_error on bad input
// Whether an Accept-Encoding header value accepts gzip (RFC 9110 12.5.3: a q=0 refuses).
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace ibf
