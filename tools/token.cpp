// The bearer token the CLI sends to ibfabricd: one reader for every subcommand (commands.h).
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "commands.h"
#include "ibf/inputs.h"

namespace ibf::cli {

std::optional<std::string> bearer_token(const std::string& token_file, const std::string& lab) {
    if (token_file.empty()) {
        if (const char* env = std::getenv("IBFABRIC_TOKEN"); env && *env) return std::string(env);
        const std::string own = lab.empty() ? "" : lab_token_file(lab);
        if (own.empty()) return std::nullopt;
        return bearer_token(own);
    }
    std::string t = read_text_file(token_file, "token file", 4096);  // bounded; names the file on error
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (t.empty()) throw std::invalid_argument(token_file + ": the token file is empty");
    return t;
}

}  // namespace ibf::cli
