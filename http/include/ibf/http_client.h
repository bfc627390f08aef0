// A small synchronous HTTP/1.1 client (Boost.Beast) for talking to ibfabricd: used by
// `ibfabric status|findings` and the tests.
//
//   auto url = ibf::parse_http_url("http://127.0.0.1:8639").value();
//   ibf::HttpResult r = ibf::http_request(url, "GET", "/api/v1/findings");
//   if (r.status == 200) ... r.body ...
//
// Throws HttpUnavailable when nothing answers (refused, unreachable, timeout, broken reply).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ibf {

struct HttpUrl {
    std::string host;        // name or address ("[::1]" given as "::1")
    uint16_t port = 80;
    std::string base_path;   // "" or "/prefix" without a trailing slash
};

// "http://host[:port][/base]"; nullopt for anything else (https is not supported).
std::optional<HttpUrl> parse_http_url(std::string_view url);

struct HttpResult {
    int status = 0;
    std::string content_type;
    std::string body;
};

class HttpUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

HttpResult http_request(const HttpUrl& url, const std::string& method, const std::string& path,
                        const std::string& body = "", const std::string& authorization = "",
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace ibf
