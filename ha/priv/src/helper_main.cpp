// ibfabric-sm-helper: the root side of the SM helper (ibf/sm_helper.h). systemd starts it once
// per connection on ibfabric-sm-helper.socket (Accept=yes: the connection is stdin and stdout);
// it checks the peer (SO_PEERCRED: root or a member of --allow-group), reads one bounded request,
// does it on the files its own argv names, answers one line and exits.
//
//   ibfabric-sm-helper --opensm-conf /etc/opensm/opensm.conf
//                      --guid2lid /var/cache/opensm/guid2lid --allow-group ibfabric
#include <dirent.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ibf/atomic_file.h"
#include "ibf/sm_helper.h"

namespace {

struct Options {
    std::string opensm_conf, guid2lid, allow_group;
};

const char* const kUsage =
    "usage: ibfabric-sm-helper --opensm-conf FILE --guid2lid FILE --allow-group GROUP\n"
    "  Started by systemd per connection (ibfabric-sm-helper.socket, Accept=yes); the connection\n"
    "  is stdin/stdout. Requests: 'priority N' (0..15) or 'guid2lid BYTES' + the file's text.\n"
    "  example: ibfabric-sm-helper --opensm-conf /etc/opensm/opensm.conf \\\n"
    "             --guid2lid /var/cache/opensm/guid2lid --allow-group ibfabric\n";

bool parse_args(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") return false;
        if (i + 1 >= argc) return false;
        if (a == "--opensm-conf") o.opensm_conf = argv[++i];
        else if (a == "--guid2lid") o.guid2lid = argv[++i];
        else if (a == "--allow-group") o.allow_group = argv[++i];
        else return false;
    }
    return !o.opensm_conf.empty() && !o.guid2lid.empty() && !o.allow_group.empty() &&
           o.opensm_conf[0] == '/' && o.guid2lid[0] == '/';
}

// The peer on fd 0 is root or in `group` (its primary group or a supplementary one).
std::string peer_refusal(const std::string& group, unsigned& uid) {
    ucred cr{};
    socklen_t len = sizeof cr;
    if (::getsockopt(0, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
        return std::string("stdin is not a Unix socket (run by ibfabric-sm-helper.socket): ") + std::strerror(errno);
    uid = cr.uid;
    if (cr.uid == 0) return "";
    const struct group* g = ::getgrnam(group.c_str());
    if (!g) return "the allowed group " + group + " does not exist";
    const gid_t allowed = g->gr_gid;
    if (cr.gid == allowed) return "";
    if (const passwd* pw = ::getpwuid(cr.uid)) {
        int n = 64;
        std::vector<gid_t> groups(static_cast<size_t>(n));
        if (::getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n) >= 0)
            for (int i = 0; i < n; ++i)
                if (groups[static_cast<size_t>(i)] == allowed) return "";
    }
    return "uid " + std::to_string(cr.uid) + " is not root and not in group " + group;
}

// The request: everything up to EOF, at most max_helper_request_bytes() + 1, within 10 s.
std::string read_request() {
    std::string data;
    char buf[65536];
    const size_t max = ibf::max_helper_request_bytes() + 1;
    while (data.size() < max) {
        pollfd p{0, POLLIN, 0};
        if (::poll(&p, 1, 10000) <= 0) throw std::runtime_error("no complete request within 10 s");
        const ssize_t n = ::read(0, buf, std::min(sizeof buf, max - data.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error(std::string("cannot read the request: ") + std::strerror(errno));
        if (n == 0) break;
        data.append(buf, static_cast<size_t>(n));
    }
    return data;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > (1u << 20)) throw std::runtime_error(path + ": larger than 1 MiB: not an opensm.conf");
    return text;
}

std::vector<ibf::ProcInfo> scan_proc() {
    std::vector<ibf::ProcInfo> out;
    DIR* d = ::opendir("/proc");
    if (!d) throw std::runtime_error(std::string("/proc: cannot list: ") + std::strerror(errno));
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string dir = "/proc/" + name;
        ibf::ProcInfo p;
        p.pid = std::stoi(name);
        std::ifstream(dir + "/comm") >> p.comm;
        if (p.comm != "opensm") continue;
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0) continue;
        p.uid = st.st_uid;
        std::ifstream cmd(dir + "/cmdline", std::ios::binary);
        for (std::string a; std::getline(cmd, a, '\0');) p.argv.push_back(a);
        // "pid (comm) state ppid ...": comm may hold blanks and ')', so read after the last ')'.
        std::ifstream stat_file(dir + "/stat");
        const std::string stat_line((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
        if (const size_t close = stat_line.rfind(')'); close != std::string::npos) {
            std::istringstream rest(stat_line.substr(close + 1));
            char state = 0;
            rest >> state >> p.ppid;
        }
        out.push_back(std::move(p));
    }
    ::closedir(d);
    return out;
}

std::string set_priority(const Options& o, int priority) {
    int before = -1;
    const std::string text = ibf::opensm_conf_with_priority(slurp(o.opensm_conf), priority, before);
    ibf::write_file_atomic(o.opensm_conf, text, {.mode_if_new = 0600});
    const auto pick = ibf::pick_opensm(scan_proc(), o.opensm_conf);
    if (const auto* why = std::get_if<std::string>(&pick))
        throw std::runtime_error("sm_priority " + std::to_string(priority) + " written to " + o.opensm_conf + ", not applied: " + *why);
    const int pid = std::get<int>(pick);
    if (::kill(pid, SIGHUP) != 0)
        throw std::runtime_error("sm_priority written, SIGHUP to opensm pid " + std::to_string(pid) + " failed: " + std::strerror(errno));
    return "priority=" + std::to_string(priority) + " before=" + std::to_string(before) + " pid=" + std::to_string(pid);
}

std::string serve(const Options& o) {
    const auto r = ibf::parse_helper_request(read_request());
    if (const auto* e = std::get_if<std::string>(&r)) throw std::runtime_error(*e);
    const auto& req = std::get<ibf::HelperRequest>(r);
    if (req.kind == ibf::HelperRequest::Kind::priority) return set_priority(o, req.priority);
    ibf::write_file_atomic(o.guid2lid, req.body, {.mode_if_new = 0644});
    return "guid2lid bytes=" + std::to_string(req.body.size()) + " entries=" + std::to_string(req.entries);
}

void answer(const std::string& line) {
    for (size_t off = 0; off < line.size();) {
        const ssize_t n = ::write(1, line.data() + off, line.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        off += static_cast<size_t>(n);
    }
}

}  // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    Options o;
    if (!parse_args(argc, argv, o)) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    unsigned uid = 0;
    if (const std::string why = peer_refusal(o.allow_group, uid); !why.empty()) {
        answer(ibf::helper_error("refused: " + why));
        std::fprintf(stderr, "ibfabric-sm-helper: refused: %s\n", why.c_str());
        return 1;
    }
    try {
        const std::string ok = serve(o);
        answer("ok " + ok + "\n");
        std::fprintf(stderr, "ibfabric-sm-helper: uid %u: ok %s\n", uid, ok.c_str());
        return 0;
    } catch (const std::exception& e) {
        answer(ibf::helper_error(e.what()));
        std::fprintf(stderr, "ibfabric-sm-helper: uid %u: error: %s\n", uid, e.what());
        return 1;
    }
}
