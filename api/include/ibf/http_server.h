// ibfabricd's HTTP server, the Beast half of the API: keep-alive sessions on an acceptor the
// daemon bound, each request handed whole to `handler` (handle_api() with the daemon's context)
// on the io thread and its answer written back. Limits (docs/daemon.md): limits.max_request_bytes,
// the headers within limits.http_header_timeout_ms, and at most limits.max_http_connections
// sessions: when all are taken the one waiting longest (for a request, or for the body of one)
// gives way, so /healthz always gets one.
//
//   ibf::HttpServer http(std::move(bound_acceptor), cfg, [&](const ibf::ApiRequest& r) {
//       return ibf::handle_api(r, context()); }, next_id);
//   http.start();   // io thread from now on
//   http.close();   // the acceptor and every session closed
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange
#include <boost/asio.hpp>

#include "ibf/api.h"
#include "ibf/daemon_config.h"
#include "ibf/log_limit.h"

namespace ibf {

class HttpServer {
public:
    using Handler = std::function<ApiResponse(const ApiRequest&)>;

    HttpServer(boost::asio::ip::tcp::acceptor acceptor, const DaemonConfig& c, Handler handler,
               std::function<uint64_t()> next_id);
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    void start();  // io thread: accepting
    void close();  // io thread: the acceptor and every session closed

    class Session;  // http_server.cpp

private:
    void accept();
    bool evict_idle();

    boost::asio::ip::tcp::acceptor acc_;
    DaemonConfig cfg_;
    Handler handler_;
    std::function<uint64_t()> next_id_;
    bool stopping_ = false;
    size_t open_ = 0;  // sessions open (limits.max_http_connections)
    std::map<uint64_t, std::weak_ptr<Session>> sessions_;
    // Sessions waiting for (the headers of) a request, and since when: the oldest gives way when
    // every session is taken; sessions waiting for a body (since their headers) likewise.
    using WaitingSince = std::map<uint64_t, std::chrono::steady_clock::time_point>;
    WaitingSince idle_, body_wait_;
    LogLimit refused_log_, evicted_log_, evicted_body_log_;
};

}  // namespace ibf
