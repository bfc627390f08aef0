// The synchronous HTTP client: Beast async operations with deadlines, run to completion on a
// private io_context (a plain sync read has no timeout).
#include "ibf/http_client.h"

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>

namespace ibf {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::optional<HttpUrl> parse_http_url(std::string_view url) {
    constexpr std::string_view scheme = "http://";
    if (url.substr(0, scheme.size()) != scheme) return std::nullopt;
    url.remove_prefix(scheme.size());
    HttpUrl u;
    const size_t slash = url.find('/');
    std::string_view hostport = url.substr(0, slash);
    if (slash != std::string_view::npos) {
        u.base_path = std::string(url.substr(slash));
        while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
    }
    std::string_view port;
    if (!hostport.empty() && hostport.front() == '[') {
        const size_t close = hostport.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        u.host = std::string(hostport.substr(1, close - 1));
        std::string_view rest = hostport.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::nullopt;
            port = rest.substr(1);
        }
    } else if (const size_t colon = hostport.rfind(':'); colon != std::string_view::npos) {
        u.host = std::string(hostport.substr(0, colon));
        port = hostport.substr(colon + 1);
    } else {
        u.host = std::string(hostport);
    }
    if (u.host.empty()) return std::nullopt;
    if (!port.empty()) {
        unsigned v = 0;
        auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
        if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535) return std::nullopt;
        u.port = static_cast<uint16_t>(v);
    } else if (url.find(':') != std::string_view::npos && hostport.back() == ':') {
        return std::nullopt;
    }
    return u;
}

HttpResult http_request(const HttpUrl& url, const std::string& method, const std::string& path,
                        const std::string& body, const std::string& authorization,
                        std::chrono::milliseconds timeout) {
    asio::io_context io;
    tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    req.method_string(method);
    req.target(url.base_path + path);
    req.version(11);
    req.set(http::field::host, url.host + ":" + std::to_string(url.port));
    req.set(http::field::user_agent, "ibfabric");
    req.set(http::field::connection, "close");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    if (!body.empty() || method == "POST") {
        req.body() = body;
        req.set(http::field::content_type, "application/json");
    }
    req.prepare_payload();

    const std::string where = "http://" + url.host + ":" + std::to_string(url.port);
    boost::system::error_code failure;
    const char* stage = "resolve";
    stream.expires_after(timeout);
    resolver.async_resolve(url.host, std::to_string(url.port), [&](const boost::system::error_code& ec,
                                                                   tcp::resolver::results_type eps) {
        if (ec) return void(failure = ec);
        stage = "connect";
        stream.async_connect(eps, [&](const boost::system::error_code& ec2, const tcp::endpoint&) {
            if (ec2) return void(failure = ec2);
            stage = "send the request to";
            http::async_write(stream, req, [&](const boost::system::error_code& ec3, size_t) {
                if (ec3) return void(failure = ec3);
                stage = "read the reply from";
                http::async_read(stream, buf, parser, [&](const boost::system::error_code& ec4, size_t) {
                    if (ec4) failure = ec4;
                });
            });
        });
    });
    io.run();
    if (failure) throw HttpUnavailable("cannot " + std::string(stage) + " " + where + ": " + failure.message());
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    HttpResult r;
    const auto& res = parser.get();
    r.status = static_cast<int>(res.result_int());
    if (auto it = res.find(http::field::content_type); it != res.end()) r.content_type = std::string(it->value());
    r.body = res.body();
    return r;
}

}  // namespace ibf
