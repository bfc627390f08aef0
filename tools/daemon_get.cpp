// fetch_daemon_json (commands.h): one GET of ibfabricd's JSON API for the client commands.
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "ibf/http_client.h"
#include "ibf/text.h"

namespace ibf::cli {

int daemon_get(const std::string& text, const std::string& token_file, const std::string& path, HttpResult& r,
               std::string* token_out) {
    auto url = parse_http_url(text);
    if (!url) {
        std::fprintf(stderr, "ibfabric: bad daemon URL '%s' (expected http://host:port)\n", text.c_str());
        return kExitBadInput;
    }
    std::string token;
    try {
        token = bearer_token(token_file).value_or("");
    } catch (const std::exception& e) {  // unreadable or empty token file: names it
        std::fprintf(stderr, "ibfabric: %s\n", terminal_safe(e.what()).c_str());
        return kExitBadInput;
    }
    try {
        r = http_request(*url, "GET", path, "", token.empty() ? "" : "Bearer " + token);
    } catch (const HttpUnavailable& e) {
        std::fprintf(stderr, "ibfabric: the daemon is unreachable: %s\n", e.what());
        return kExitUnavailable;
    }
    if (token_out) *token_out = std::move(token);
    return kExitClean;
}

int fetch_daemon_json(const std::string& text, const std::string& token_file, const std::string& path, nlohmann::json& out) {
    HttpResult r;
    std::string token;
    if (int rc = daemon_get(text, token_file, path, r, &token)) return rc;
    out = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (r.status != 200) {
        std::string msg = out.is_object() && out.contains("error") ? out["error"].dump() : r.body;
        std::fprintf(stderr, "ibfabric: %s%s answered %d: %s%s\n", text.c_str(), path.c_str(), r.status,
                     terminal_safe(msg).c_str(),
                     r.status == 401 ? (token.empty() ? " (this daemon wants a token for reads: --token-file FILE or $IBFABRIC_TOKEN)"
                                                      : " (the token was refused)")
                                     : "");
        return r.status == 400 ? kExitBadInput : kExitUnavailable;  // 400: what the command was given
    }
    if (out.is_discarded()) {
        std::fprintf(stderr, "ibfabric: %s%s did not answer with JSON\n", text.c_str(), path.c_str());
        return kExitUnavailable;
    }
    return kExitClean;
}

std::string url_escape(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') out += static_cast<char>(c);
        else out += '%', out += hex[c >> 4], out += hex[c & 15];
    }
    return out;
}

}  // namespace ibf::cli
