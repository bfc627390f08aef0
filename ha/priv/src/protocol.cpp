// The SM helper's request parser, answers and pure decisions (ibf/sm_helper.h). No I/O.
#include <algorithm>
#include <charconv>

#include "ibf/error.h"
#include "ibf/guid2lid.h"
#include "ibf/sm_helper.h"
#include "ibf/text.h"

namespace ibf {
namespace {

// A decimal number that is the whole of `s` (no sign, no spaces), within [0, max].
bool whole_number(std::string_view s, size_t max, size_t& out) {
    if (s.empty() || s.size() > 9) return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && out <= max;
}

std::string quoted(std::string_view s) {
    return "'" + terminal_safe(s.substr(0, 32)) + (s.size() > 32 ? "...'" : "'");
}

std::variant<HelperRequest, std::string> parse_guid2lid_body(std::string_view arg, std::string_view rest) {
    size_t n = 0;
    if (!whole_number(arg, ha::kMaxGuid2LidBytes, n))
        return "guid2lid needs its size in bytes, 1.." + std::to_string(ha::kMaxGuid2LidBytes) + ", got " + quoted(arg);
    if (n == 0) return std::string("guid2lid with 0 bytes: an empty file would drop every LID");
    if (rest.size() != n)
        return "guid2lid said " + std::to_string(n) + " bytes and " + std::to_string(rest.size()) + " followed";
    HelperRequest r;
    r.kind = HelperRequest::Kind::guid2lid;
    try {
        r.entries = ha::parse_guid2lid(rest, "guid2lid").size();
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    if (r.entries == 0) return std::string("guid2lid without an entry: an empty file would drop every LID");
    r.body.assign(rest);
    return r;
}

}  // namespace

size_t max_helper_request_bytes() { return kMaxHelperLineBytes + ha::kMaxGuid2LidBytes; }

std::variant<HelperRequest, std::string> parse_helper_request(std::string_view bytes) {
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos)
        return bytes.size() > kMaxHelperLineBytes ? std::string("request line longer than 64 bytes")
                                                  : "request without a newline: " + quoted(bytes);
    if (nl > kMaxHelperLineBytes) return std::string("request line longer than 64 bytes");
    const std::string_view line = bytes.substr(0, nl), rest = bytes.substr(nl + 1);
    const size_t sp = line.find(' ');
    const std::string_view verb = line.substr(0, sp), arg = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    if (verb == "priority") {
        size_t p = 0;
        if (!whole_number(arg, 15, p)) return "priority must be 0..15, got " + quoted(arg);
        if (!rest.empty()) return std::string("priority takes nothing after its line");
        HelperRequest r;
        r.priority = static_cast<int>(p);
        return r;
    }
    if (verb == "guid2lid") return parse_guid2lid_body(arg, rest);
    return "unknown request " + quoted(verb) + " (expected priority N or guid2lid BYTES)";
}

std::string priority_request(int priority) { return "priority " + std::to_string(priority) + "\n"; }

std::string guid2lid_request(std::string_view text) {
    return "guid2lid " + std::to_string(text.size()) + "\n" + std::string(text);
}

std::string helper_error(std::string_view message) { return "error: " + terminal_safe(message) + "\n"; }

std::string opensm_conf_with_priority(std::string_view text, int priority, int& before) {
    std::string out;
    bool replaced = false;
    before = -1;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.rfind("sm_priority", 0) == 0 && (line.size() == 11 || line[11] == ' ' || line[11] == '\t')) {
            const std::string_view v = line.substr(std::min(line.find_first_not_of(" \t", 11), line.size()));
            int b = -1;
            std::from_chars(v.data(), v.data() + v.size(), b);
            before = b;
            out += "sm_priority " + std::to_string(priority) + "\n";
            replaced = true;
        } else {
            out.append(line).push_back('\n');
        }
    }
    if (!replaced) out += "sm_priority " + std::to_string(priority) + "\n";
    return out;
}

std::variant<int, std::string> pick_opensm(const std::vector<ProcInfo>& procs, const std::string& opensm_conf) {
    std::vector<const ProcInfo*> root;
    auto is_root_opensm = [](const ProcInfo& p) { return p.comm == "opensm" && p.uid == 0; };
    for (const auto& p : procs)
        if (is_root_opensm(p) &&
            std::none_of(procs.begin(), procs.end(), [&](const ProcInfo& q) { return p.ppid && q.pid == p.ppid && is_root_opensm(q); }))
            root.push_back(&p);
    if (root.empty()) return std::string("no opensm process runs as root on this node");
    if (root.size() == 1) return root.front()->pid;
    std::vector<int> named;
    for (const ProcInfo* p : root)
        for (size_t i = 0; i + 1 < p->argv.size(); ++i)
            if ((p->argv[i] == "-F" || p->argv[i] == "--config") && p->argv[i + 1] == opensm_conf) {
                named.push_back(p->pid);
                break;
            }
    if (named.size() == 1) return named.front();
    return std::to_string(root.size()) + " opensm processes run and " + std::to_string(named.size()) +
           " of them name " + opensm_conf + " with -F/--config: not choosing one";
}

}  // namespace ibf
