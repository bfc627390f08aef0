// libFuzzer target: ibfabricd's HTTP API as a function from a request to a response
// (api/include/ibf/api.h), no sockets. Input: "METHOD\nTARGET\nAUTHORIZATION\nBODY".
// Every request must get a response with a status in 200..599 and, for JSON, a body that parses;
// a crash, a sanitizer report or an escaping exception is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ibf/api.h"
#include "ibf/controller_state.h"

namespace {

std::string take_line(std::string_view& in) {
    const size_t nl = in.find('\n');
    std::string line(in.substr(0, nl));
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    ibf::ApiRequest req;
    req.method = take_line(in);
    req.target = take_line(in);
    req.authorization = take_line(in);
    req.body = std::string(in);

    static const ibf::ControllerState state;  // no fabric yet: every route still answers
    ibf::ApiContext ctx;
    ctx.state = &state;
    ctx.now_ms = 1'800'000'000'000;
    ctx.token = std::string("s3cret-token");
    ctx.history = [](int limit, int64_t before) {
        if (limit < 1 || limit > 1000 || before < 0) std::abort();  // the handler validates first
        return ibf::HistoryPage{.rows = "[]", .count = 0, .next_before = 0};
    };
    ctx.reload = [] { return nlohmann::json{{"reloaded", true}}; };

    const ibf::ApiResponse r = ibf::handle_api(req, ctx);
    if (r.status < 200 || r.status > 599) std::abort();
    if (r.content_type == "application/json" && !nlohmann::json::accept(r.body)) std::abort();
    return 0;
}
