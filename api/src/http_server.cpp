// HttpServer: the Beast sessions of the HTTP API (ibf/http_server.h).
#include "ibf/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/http/span_body.hpp>
#include <algorithm>
#include <optional>

#include "ibf/clock.h"
#include "ibf/gzip.h"

namespace ibf {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

// The request head's limit: min(limits.max_request_bytes, 64 KiB), as docs/daemon.md states.
size_t header_limit(const DaemonConfig& c) { return std::min<size_t>(c.max_request_bytes, 64 * 1024); }

// The read buffer holds a whole head plus one read beyond it (a pipelined request's start), so a
// head under the limit always fits and one over it is refused by the parser ("header limit
// exceeded"), not by the buffer.
size_t read_buffer_limit(const DaemonConfig& c) { return header_limit(c) + 16 * 1024; }

}  // namespace

// One HTTP client connection (keep-alive), requests answered by the server's handler.
class HttpServer::Session : public std::enable_shared_from_this<HttpServer::Session> {
public:
    Session(HttpServer* d, tcp::socket s, uint64_t id) : d_(d), stream_(std::move(s)), id_(id) {}
    void start() { read(); }
    void close() {
        boost::system::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream_.close();
    }

private:
    // Headers within limits.http_header_timeout_ms (idle keep-alive time included), then the body
    // within 30 s; while waiting for the headers (idle) or the body the session may be evicted.
    void read() {
        parser_.emplace();
        parser_->body_limit(d_->cfg_.max_request_bytes);
        parser_->header_limit(static_cast<uint32_t>(header_limit(d_->cfg_)));
        d_->idle_[id_] = steady::now();
        stream_.expires_after(std::chrono::milliseconds(d_->cfg_.http_header_timeout_ms));
        http::async_read_header(stream_, buf_, *parser_, [self = shared_from_this()](const boost::system::error_code& ec,
                                                                                      size_t) { self->on_header(ec); });
    }

    void on_header(const boost::system::error_code& ec) {
        d_->idle_.erase(id_);
        if (ec || parser_->is_done()) {
            on_read(ec);
            return;
        }
        d_->body_wait_[id_] = steady::now();
        stream_.expires_after(std::chrono::seconds(30));
        http::async_read(stream_, buf_, *parser_,
                         [self = shared_from_this()](const boost::system::error_code& ec, size_t) { self->on_read(ec); });
    }

    void on_read(const boost::system::error_code& ec) {
        d_->body_wait_.erase(id_);
        if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::operation_aborted ||
            ec == beast::error::timeout || ec == asio::error::connection_reset) {
            finish();
            return;
        }
        if (ec) {
            // Malformed or oversized request: answer 400 and close.
            ApiResponse r = api_error(400, "bad request: " + ec.message());
            write(r, false, 11);
            return;
        }
        const auto& req = parser_->get();
        ApiRequest ar;
        ar.method = std::string(req.method_string());
        ar.target = std::string(req.target());
        if (auto it = req.find(http::field::authorization); it != req.end()) ar.authorization = std::string(it->value());
        ar.body = req.body();
        if (auto it = req.find(http::field::accept_encoding); it != req.end())
            ar.accept_gzip = accepts_gzip(std::string_view(it->value().data(), it->value().size()));
        ApiResponse r = d_->handler_(ar);
        if (r.later) {  // answered when ready (a /metrics render); the io thread goes on meanwhile
            auto later = std::move(r.later);
            later([self = shared_from_this(), keep_alive = req.keep_alive(), version = req.version(),
                   what = ar.method + " " + ar.target](ApiResponse x) {
                spdlog::debug("http: {} -> {}", what, x.status);
                if (self->done_ || self->d_->stopping_) return;
                self->write(x, keep_alive, version);
            });
            return;
        }
        spdlog::debug("http: {} {} -> {}", ar.method, ar.target, r.status);
        write(r, req.keep_alive(), req.version());
    }

    // The body is written from a buffer the session holds by reference: a cached /metrics is one
    // immutable string shared by every slow reader, never copied per session.
    void write(ApiResponse& r, bool keep_alive, unsigned version) {
        body_ = r.shared_body ? r.shared_body : std::make_shared<const std::string>(std::move(r.body));
        res_ = {};
        res_.version(version);
        res_.result(static_cast<http::status>(r.status));
        res_.set(http::field::server, "ibfabricd");
        res_.set(http::field::content_type, r.content_type);
        if (!r.allow.empty()) res_.set(http::field::allow, r.allow);
        if (!r.content_encoding.empty()) {
            res_.set(http::field::content_encoding, r.content_encoding);
            res_.set(http::field::vary, "Accept-Encoding");
        }
        res_.body() = http::span_body<const char>::value_type(body_->data(), body_->size());
        res_.keep_alive(keep_alive);
        res_.prepare_payload();
        stream_.expires_after(std::chrono::seconds(30));
        http::async_write(stream_, res_, [self = shared_from_this(), keep_alive](const boost::system::error_code& ec, size_t) {
            self->body_.reset();
            if (ec || !keep_alive || self->d_->stopping_) {
                self->close();
                self->finish();
                return;
            }
            self->read();
        });
    }

    void finish() {
        if (done_) return;
        done_ = true;
        d_->idle_.erase(id_);
        d_->body_wait_.erase(id_);
        d_->sessions_.erase(id_);
        --d_->open_;
    }

    HttpServer* d_;
    beast::tcp_stream stream_;
    uint64_t id_;
    beast::flat_buffer buf_{read_buffer_limit(d_->cfg_)};
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::span_body<const char>> res_;
    std::shared_ptr<const std::string> body_;  // what res_ points into, until written
    bool done_ = false;
};

HttpServer::HttpServer(tcp::acceptor acceptor, const DaemonConfig& c, Handler handler, std::function<uint64_t()> next_id)
    : acc_(std::move(acceptor)), cfg_(c), handler_(std::move(handler)), next_id_(std::move(next_id)) {}

void HttpServer::start() { accept(); }

void HttpServer::close() {
    stopping_ = true;
    boost::system::error_code ec;
    acc_.close(ec);
    for (auto& [id, w] : sessions_)
        if (auto p = w.lock()) p->close();
}

void HttpServer::accept() {
    acc_.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || stopping_) return;
        if (!ec && open_ >= cfg_.max_http_connections && !evict_idle()) {
            if (auto held = refused_log_.allow(steady_clock_ms()))
                spdlog::warn("http: refusing a connection: {} sessions open and busy (limits.max_http_connections){}",
                             open_, LogLimit::suffix(*held));
            boost::system::error_code e2;
            s.close(e2);
        } else if (!ec) {
            ++open_;
            const uint64_t id = next_id_();
            auto sess = std::make_shared<Session>(this, std::move(s), id);
            sessions_[id] = sess;
            sess->start();
        } else {
            spdlog::warn("http: accept failed: {}", ec.message());
        }
        accept();
    });
}

// Closes the session that has waited longest, for a request or for its body (a client announcing a
// body it never sends must not hold a slot for 30 s); false when every session is answering. Its
// slot frees when its aborted read completes (open_ may pass the limit until then).
bool HttpServer::evict_idle() {
    auto oldest_of = [](WaitingSince& m) {
        return std::min_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    };
    const auto idle = oldest_of(idle_), body = oldest_of(body_wait_);
    const bool for_body = body != body_wait_.end() && (idle == idle_.end() || body->second < idle->second);
    WaitingSince& from = for_body ? body_wait_ : idle_;
    const auto oldest = for_body ? body : idle;
    if (oldest == from.end()) return false;
    const uint64_t id = oldest->first;
    const double waited_ms = ms_since(oldest->second);
    from.erase(oldest);
    if (auto it = sessions_.find(id); it != sessions_.end())
        if (auto p = it->second.lock()) p->close();
    LogLimit& log = for_body ? evicted_body_log_ : evicted_log_;
    if (auto held = log.allow(steady_clock_ms()))
        spdlog::info("http: all {} sessions taken: closed the one {} longest ({:.0f} ms) for a new connection{}", open_,
                     for_body ? "waiting for a request body" : "idle", waited_ms, LogLimit::suffix(*held));
    return true;
}

}  // namespace ibf
