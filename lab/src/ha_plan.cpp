// Several SMs in one lab: host choice, priorities, the per-node files, and parsing OpenSM's log,
// guid2lid and ibsim's `Attached` answer. Pure (lab_ha.h).
#include "ibf/lab_ha.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <set>

#include "ibf/error.h"

namespace ibf {

namespace {

[[noreturn]] void usage(const std::string& msg) { throw InputError("lab", 0, 0, msg); }

std::optional<long long> to_int(std::string_view s) {
    long long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The switch a CA's first cabled port goes to ("" when none).
std::string leaf_of(const Net& net, size_t i) {
    const auto& ports = net.nodes[i].ports;
    return ports.empty() ? std::string() : ports.begin()->second.peer;
}

}  // namespace

std::string_view to_string(LabHa h) {
    switch (h) {
        case LabHa::Single: return "single";
        case LabHa::Native: return "native";
        case LabHa::Ibfabric: return "ibfabric";
    }
    return "single";
}

LabHa parse_lab_ha(std::string_view s) {
    if (s == "native") return LabHa::Native;
    if (s == "ibfabric") return LabHa::Ibfabric;
    usage("--ha must be 'ibfabric' or 'native', got '" + std::string(s) + "'");
}

std::vector<int> parse_int_list(std::string_view s, const std::string& what) {
    std::vector<int> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        if (comma == std::string_view::npos) comma = s.size();
        auto v = to_int(s.substr(pos, comma - pos));
        if (!v || *v < -1000000000 || *v > 1000000000)
            usage(what + " expects comma-separated integers, got '" + std::string(s) + "'");
        out.push_back(static_cast<int>(*v));
        pos = comma + 1;
    }
    return out;
}

std::pair<int, int> parse_sm_polling(std::string_view s) {
    auto v = parse_int_list(s, "--sm-polling");
    if (v.size() != 2) usage("--sm-polling expects MS,RETRIES (e.g. 1000,2), got '" + std::string(s) + "'");
    if (v[0] < 100 || v[0] > 600000) usage("--sm-polling: MS must be 100..600000, got " + std::to_string(v[0]));
    if (v[1] < 1 || v[1] > 100) usage("--sm-polling: RETRIES must be 1..100, got " + std::to_string(v[1]));
    return {v[0], v[1]};
}

std::vector<size_t> choose_sm_hosts(const Net& net, int n, const std::vector<std::string>& given) {
    if (n < 1 || n > kMaxLabSms) usage("--sms must be 1.." + std::to_string(kMaxLabSms) + ", got " + std::to_string(n));
    if (static_cast<int>(given.size()) > n)
        usage(std::to_string(given.size()) + " --sm-host given for " + std::to_string(n) + " SM(s) (raise --sms)");
    std::vector<size_t> out;
    auto taken = [&](size_t i) { return std::find(out.begin(), out.end(), i) != out.end(); };
    for (const auto& g : given) {
        auto i = net.find(g);
        if (!i || net.nodes[*i].type != NodeType::CA) usage("--sm-host '" + g + "' is not a CA of the lab fabric");
        if (net.nodes[*i].ports.empty()) usage("--sm-host '" + g + "' has no cable: an SM cannot reach the fabric from it");
        if (taken(*i)) usage("--sm-host '" + g + "' is given twice: each SM needs its own CA");
        out.push_back(*i);
    }
    if (out.empty() && n >= 1) {
        auto d = net.default_sm_host();
        if (!d) usage("the fabric has no CA with a cable: OpenSM needs one to attach to");
        out.push_back(*d);
    }
    // Prefer a leaf no chosen SM sits on, then any free CA, in file order.
    for (int pass = 0; pass < 2 && static_cast<int>(out.size()) < n; ++pass)
        for (size_t i = 0; i < net.nodes.size() && static_cast<int>(out.size()) < n; ++i) {
            if (net.nodes[i].type != NodeType::CA || net.nodes[i].ports.empty() || taken(i)) continue;
            if (pass == 0) {
                std::string leaf = leaf_of(net, i);
                bool shared = std::any_of(out.begin(), out.end(), [&](size_t j) { return leaf_of(net, j) == leaf; });
                if (shared) continue;
            }
            out.push_back(i);
        }
    if (static_cast<int>(out.size()) < n)
        usage("the fabric has only " + std::to_string(out.size()) + " CA(s) with a cable for " + std::to_string(n) + " SMs");
    return out;
}

std::vector<int> sm_priorities(int n, const std::vector<int>& given) {
    if (given.empty()) {
        std::vector<int> out;
        for (int i = 0; i < n; ++i) out.push_back(15 - i);
        return out;
    }
    if (static_cast<int>(given.size()) != n)
        usage("--sm-priority lists " + std::to_string(given.size()) + " value(s) for " + std::to_string(n) + " SM(s)");
    for (int p : given)
        if (p < 0 || p > 15) usage("--sm-priority values must be 0..15 (OpenSM's sm_priority), got " + std::to_string(p));
    return given;
}

std::string lab_daemon_yaml(const LabDaemonConfig& c) {
    std::string y = "# generated by `ibfabric lab up`\n";
    y += "socket: " + quoted(c.socket) + "\n";
    y += "socket_mode: 0600\n";
    y += "http: \"127.0.0.1:" + std::to_string(c.http_port) + "\"\n";
    if (c.tcp_port > 0) y += "tcp: \"127.0.0.1:" + std::to_string(c.tcp_port) + "\"\n";
    if (!c.key_file.empty()) y += "tcp_key_file: " + quoted(c.key_file) + "\n";
    if (!c.token_file.empty()) y += "token_file: " + quoted(c.token_file) + "\n";
    if (!c.expected.empty()) y += "topology: " + quoted(c.expected) + "\n";
    if (!c.history.empty()) y += "history: " + quoted(c.history) + "\n";
    y += "log_level: info\n";
    // ibsim reports every port as able to run 12xHDR: "slower than it could" is noise here.
    y += "checks:\n  rate_below_capability: false\n";
    // Every link's series (a lab is small): `lab fault errors` waits for a port's baseline reading,
    // which a link without errors shows only with per_link: all (docs/metrics.md "Bounded by default").
    if (c.metrics_all_links) y += "metrics:\n  per_link: all\n";
    if (c.ha != LabHa::Single) {
        y += "ha:\n";
        y += std::string("  mode: ") + (c.ha == LabHa::Ibfabric ? "act" : "monitor") + "\n";
        y += "  local_sm: " + quoted(c.local_sm_guid) + "\n";
        y += "  poll_ms: " + std::to_string(c.poll_ms) + "\n";
        y += "  mad_timeout_ms: " + std::to_string(c.mad_timeout_ms) + "\n";
        y += "  heartbeat_timeout_ms: " + std::to_string(c.heartbeat_timeout_ms) + "\n";
        y += "  guid2lid_file: " + quoted(c.guid2lid_file) + "\n";
        y += "  track_file: " + quoted(c.track_file) + "\n";
        if (!c.opensm_conf.empty()) y += "  opensm_conf: " + quoted(c.opensm_conf) + "\n";
        if (!c.agent_ports.empty()) {
            y += "  agents:\n";
            for (int p : c.agent_ports) y += "    - \"http://127.0.0.1:" + std::to_string(p) + "\"\n";
        }
        if (!c.expect.empty()) {
            y += "  expect:\n    sms:\n";
            for (const auto& [g, p] : c.expect) y += "      - " + quoted(g) + "\n";
            y += "    priorities:\n";
            for (const auto& [g, p] : c.expect) y += "      " + quoted(g) + ": " + std::to_string(p) + "\n";
        }
    }
    return y;
}

std::string lab_plugin_options(const std::string& socket, const std::vector<int>& peer_tcp_ports,
                               const std::string& key_file, int heartbeat_ms, const std::string& extra) {
    std::string o = "socket=" + socket;
    for (int p : peer_tcp_ports) o += " tcp=127.0.0.1:" + std::to_string(p);
    if (!key_file.empty()) o += " key_file=" + key_file;
    if (heartbeat_ms > 0) o += " heartbeat_ms=" + std::to_string(heartbeat_ms);
    if (!extra.empty()) o += " " + extra;
    return o;
}

std::optional<int64_t> parse_osm_log_time(std::string_view line, int year, long utc_offset_s) {
    // "Dec 01 00:58:36 515246 [8F3EA6C0] ..."
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (line.size() < 22 || line[3] != ' ' || line[6] != ' ' || line[9] != ':' || line[12] != ':' || line[15] != ' ')
        return std::nullopt;
    int mon = -1;
    for (int m = 0; m < 12; ++m)
        if (line.substr(0, 3) == kMonths[m]) mon = m;
    auto num = [&](size_t at, size_t len) { return to_int(line.substr(at, len)); };
    auto day = num(4, 2), hh = num(7, 2), mm = num(10, 2), ss = num(13, 2), us = num(16, 6);
    if (mon < 0 || !day || !hh || !mm || !ss || !us || *day < 1 || *day > 31 || *hh > 23 || *mm > 59 || *ss > 60)
        return std::nullopt;
    std::tm t{};
    t.tm_year = year - 1900;
    t.tm_mon = mon;
    t.tm_mday = static_cast<int>(*day);
    t.tm_hour = static_cast<int>(*hh);
    t.tm_min = static_cast<int>(*mm);
    t.tm_sec = static_cast<int>(*ss);
    const int64_t secs = static_cast<int64_t>(timegm(&t)) - utc_offset_s;
    return secs * 1000000 + *us;
}

std::string osm_log_state(std::string_view log) {
    static constexpr std::string_view kPre = "Entering ", kPost = " state";
    size_t pos = log.size();
    while (pos > 0) {
        size_t at = log.rfind(kPre, pos - 1);
        if (at == std::string_view::npos) return {};
        size_t end = log.find(kPost, at);
        size_t eol = log.find('\n', at);
        if (end != std::string_view::npos && (eol == std::string_view::npos || end < eol)) {
            std::string st(log.substr(at + kPre.size(), end - at - kPre.size()));
            if (!st.empty() && st.find(' ') == std::string::npos) return st;
        }
        pos = at;
    }
    return {};
}

std::optional<OsmLogHit> find_osm_log_line(std::string_view log, size_t from, std::string_view needle, int year,
                                           long utc_offset_s) {
    size_t at = log.find(needle, from);
    while (at != std::string_view::npos) {
        size_t bol = log.rfind('\n', at);
        bol = bol == std::string_view::npos ? 0 : bol + 1;
        size_t eol = log.find('\n', at);
        if (eol == std::string_view::npos) return std::nullopt;  // a line still being written
        if (auto t = parse_osm_log_time(log.substr(bol, eol - bol), year, utc_offset_s))
            return OsmLogHit{*t, eol + 1};
        at = log.find(needle, eol);
    }
    return std::nullopt;
}

std::vector<SimClient> parse_attached(std::string_view text) {
    std::vector<SimClient> out;
    static constexpr std::string_view kClient = "Client ", kPid = ": pid ", kAt = " connected at \"";
    size_t at = text.find(kClient);
    while (at != std::string_view::npos) {
        size_t colon = text.find(kPid, at);
        size_t conn = colon == std::string_view::npos ? colon : text.find(kAt, colon);
        size_t eol = text.find('\n', at);
        if (conn != std::string_view::npos && (eol == std::string_view::npos || conn < eol)) {
            auto num = to_int(text.substr(at + kClient.size(), colon - at - kClient.size()));
            auto pid = to_int(text.substr(colon + kPid.size(), conn - colon - kPid.size()));
            size_t q = text.find('"', conn + kAt.size());
            if (num && pid && q != std::string_view::npos)
                out.push_back({static_cast<int>(*num), static_cast<int>(*pid),
                               std::string(text.substr(conn + kAt.size(), q - conn - kAt.size()))});
        }
        at = text.find(kClient, at + kClient.size());
    }
    return out;
}

std::optional<size_t> pick_sm(const std::vector<LabSmView>& sms, std::string_view target, bool running,
                              std::string& err) {
    if (target == "master" || target == "standby") {
        const std::string want = target == "master" ? "MASTER" : "STANDBY";
        std::vector<size_t> hits;
        for (size_t i = 0; i < sms.size(); ++i)
            if (sms[i].running == running && sms[i].state == want) hits.push_back(i);
        if (hits.empty()) {
            err = std::string("no ") + (running ? "running" : "stopped") + " SM in " + want + " state";
            return std::nullopt;
        }
        if (want == "MASTER" && hits.size() > 1) {
            err = std::to_string(hits.size()) + " SMs are MASTER: name one by port GUID";
            return std::nullopt;
        }
        return hits.front();
    }
    if (target.size() > 2 && target.substr(0, 2) == "sm") {
        auto n = to_int(target.substr(2));
        if (n && *n >= 1 && static_cast<size_t>(*n) <= sms.size()) return static_cast<size_t>(*n - 1);
    }
    if (auto g = parse_guid(target))
        for (size_t i = 0; i < sms.size(); ++i)
            if (auto h = parse_guid(sms[i].port_guid); h && *h == *g) return i;
    err = "no SM '" + std::string(target) + "' in this lab (master, standby, sm<i> or a port GUID)";
    return std::nullopt;
}

}  // namespace ibf
