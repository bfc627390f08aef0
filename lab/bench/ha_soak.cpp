// ibf_ha_soak: random compound SM faults on a two- and a three-SM lab, the invariants checked
// after each (docs/benchmarks.md, "SM failover soak"). A program, not a test: `ibf_ha_soak --help`.
//
// Per lab (a fresh lab of the small example; ibfabricd agents in act mode): N faults drawn from a
// seeded generator (--seed: the same seed replays the same faults), each followed by settling
// and the invariants: exactly one MASTER as `sminfo` from a CA without an SM reads it, which
// completes a heavy sweep (SIGHUP -> SUBNET UP), every other SM STANDBY, every LID as before the
// first fault. A violation is printed with the fault, its seed index and every SM's state, and the
// lab is started afresh. The sminfo sampler runs throughout: seconds with two masters and with
// none are summed over the whole run.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ibf/dumps.h"
#include "ibf/error.h"
#include "ibf/lab_ha.h"
#include "ibf/lab_net.h"
#include "ibf/lab_process.h"
#include "ibf/lab_runner.h"
#include "ibf/lab_sminfo.h"
#include "ibf/lab_tcp_cut.h"
#include "ibf/plan_yaml.h"

namespace fs = std::filesystem;
using namespace ibf;
using lab_detail::now_s;
using lab_detail::sleep_s;

namespace {

constexpr const char* kHelp =
    "ibf_ha_soak: random compound SM faults on two- and three-SM labs, invariants checked after each.\n"
    "\n"
    "usage: ibf_ha_soak [--faults N] [--seed S] [--sms 2|3]... [--without KIND]... [--plan PLAN] [--dir DIR]\n"
    "\n"
    "  --faults N   faults per lab (default 20)\n"
    "  --seed S     seed of the fault generator (default: the time; printed, so a run can be replayed)\n"
    "  --sms K      SMs per lab, repeatable (default: 2, then 3)\n"
    "  --without KIND  never draw this fault (kill, freeze, flap, tcp-cut, restart, switchover,\n"
    "               switchover-killed), repeatable\n"
    "  --plan PLAN  plan to simulate (default config/examples/small-plan.yaml)\n"
    "  --dir DIR    lab directory (default /tmp/ibf-ha-soak-<pid>)\n"
    "\n"
    "Faults: kill -9 of the master (then restarted), a freeze of 0.1-3 s of any SM, a cable flap of\n"
    "0.2-6 s of any SM's node, a TCP cut (ss -K every 20 ms) of 1-5 s on any SM node's ingest port,\n"
    "a restart of a standby, `ibfabric sm switchover` to a standby, the same with its client killed\n"
    "30 ms after it started. After each: one MASTER that sweeps, the others STANDBY, no LID changed.\n"
    "Prints one line per fault, then faults survived, violations, seconds with two masters and with\n"
    "none (sminfo samples), LIDs changed, kill -> MASTER median. Exit 0 no violation, 1 violations,\n"
    "2 bad arguments, 3 a lab failed to start.\n"
    "\n"
    "Example: ibf_ha_soak --faults 40 --seed 7\n";

struct Args {
    int faults = 20;
    uint64_t seed = 0;
    std::vector<int> sms;
    std::vector<std::string> without;  // fault kinds not drawn
    std::string plan, dir;
};

constexpr const char* kKinds[] = {"kill", "freeze", "flap", "tcp-cut", "restart", "switchover", "switchover-killed"};
constexpr int kKindCount = 7;

struct Totals {
    int faults = 0, survived = 0, violations = 0, lids_changed = 0;
    int wedged = 0;  // violations where a master exited with a MAD outstanding (ibsim never times one out)
    double two_masters_s = 0, no_master_s = 0;
    std::vector<double> kill_to_master_ms;
    std::map<std::string, int> by_kind, violations_by_kind;
};

std::string read_all(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

Args parse_args(int argc, char** argv) {
    Args a;
    a.plan = std::string(IBF_LAB_SOURCE_DIR) + "/config/examples/small-plan.yaml";
    a.dir = "/tmp/ibf-ha-soak-" + std::to_string(getpid());
    a.seed = static_cast<uint64_t>(std::time(nullptr));
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) throw InputError("ha_soak", 0, 0, k + " needs a value");
            return argv[++i];
        };
        auto num = [&](long lo, long hi) {
            const std::string v = val();
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || n < lo || n > hi)
                throw InputError("ha_soak", 0, 0, k + " must be " + std::to_string(lo) + ".." + std::to_string(hi));
            return n;
        };
        if (k == "--help" || k == "-h") {
            std::fputs(kHelp, stdout);
            std::exit(0);
        } else if (k == "--faults") a.faults = static_cast<int>(num(1, 100000));
        else if (k == "--seed") a.seed = static_cast<uint64_t>(num(0, 2147483647));
        else if (k == "--sms") a.sms.push_back(static_cast<int>(num(2, 3)));
        else if (k == "--without") {
            const std::string w = val();
            if (std::find(std::begin(kKinds), std::end(kKinds), w) == std::end(kKinds))
                throw InputError("ha_soak", 0, 0, "--without must name a fault kind (kill, freeze, flap, tcp-cut, restart, switchover, switchover-killed), got '" + w + "'");
            a.without.push_back(w);
        } else if (k == "--plan") a.plan = val();
        else if (k == "--dir") a.dir = val();
        else throw InputError("ha_soak", 0, 0, "unknown argument '" + k + "' (see --help)");
    }
    if (a.sms.empty()) a.sms = {2, 3};
    if (a.without.size() >= static_cast<size_t>(kKindCount)) throw InputError("ha_soak", 0, 0, "--without leaves no fault kind");
    return a;
}

std::map<Guid, int> fabric_lids(const LabState& s, const std::string& host) {
    Fabric f = parse_dump(lab_run_client(s, {"ibnetdiscover"}, 60, s.umad2sim, host), "ibnetdiscover");
    std::map<Guid, int> lids;
    for (NodeId i = 0; i < f.size(); ++i)
        if (f.node(i).lid > 0) lids[f.node(i).guid] = f.node(i).lid;
    return lids;
}

int lids_changed(const std::map<Guid, int>& a, const std::map<Guid, int>& b) {
    int n = 0;
    for (auto& [g, lid] : a)
        if (auto it = b.find(g); it == b.end() || it->second != lid) ++n;
    return n;
}

// Milliseconds from `since_ms` to the first "Entering MASTER state" after it in any SM's log but `except`.
std::optional<double> kill_to_master_ms(const LabState& s, size_t except, int64_t since_ms) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    std::optional<double> best;
    for (size_t i = 0; i < s.sms.size(); ++i) {
        if (i == except) continue;
        const std::string log = read_all(s.sms[i].log);
        size_t from = 0;
        while (auto h = find_osm_log_line(log, from, "Entering MASTER state", tm.tm_year + 1900, tm.tm_gmtoff)) {
            from = h->end;
            if (h->unix_us < since_ms * 1000 - 1000) continue;
            const double ms = (static_cast<double>(h->unix_us) - static_cast<double>(since_ms) * 1000) / 1000;
            if (!best || ms < *best) best = ms;
            break;
        }
    }
    return best;
}

class Soak {
public:
    Soak(const Args& a, const Net& net, int sms, Totals& t) : a_(a), net_(net), sms_(sms), t_(t), rng_(a.seed * 31 + sms) {}

    void run() {
        start();
        for (int i = 1; i <= a_.faults; ++i) one(i);
        stop();
    }

private:
    void start() {
        if (auto old = lab_load_state(a_.dir)) lab_down(*old, 1.0);
        smp_.reset();
        const std::string bin = fs::path(fs::read_symlink("/proc/self/exe")).parent_path().string();
        bin_ = bin;
        LabOptions o;
        o.dir = a_.dir;
        o.opensm_template = std::string(IBF_LAB_SOURCE_DIR) + "/config/templates/opensm.conf";
        o.start_timeout_s = 120;
        o.sms.count = sms_;
        o.sms.ha = LabHa::Ibfabric;
        o.ibfabricd = bin + "/ibfabricd";
        o.plugin_dir = fs::weakly_canonical(bin + "/../lib").string();
        o.umad_kernel = lab_umad_kernel_beside(bin);
        o.perfmgr_sweep_s = 0;
        s_ = lab_up(net_, o);
        lab_arm_watchdog(s_, 60.0 * a_.faults + 300);  // the lab never outlives a killed soak for long
        quiet_ = lab_quiet_host(s_);
        before_ = fabric_lids(s_, quiet_);
        smp_ = std::make_unique<LabSmInfoSampler>(s_, quiet_);
        lab_started_ = now_s();
    }
    void stop() {
        if (smp_) {
            smp_->stop();
            const SmInfoStats st = sminfo_stats(smp_->samples(), lab_started_, now_s());
            t_.two_masters_s += st.two_masters_s;
            t_.no_master_s += st.no_master_s;
        }
        smp_.reset();
        lab_down(s_, 1.0);
    }

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
    double between(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
    std::optional<size_t> master() {
        return lab_wait_one_master(s_, 20, 0.5);
    }
    size_t a_standby(size_t m) {
        size_t i = m;
        while (i == m) i = static_cast<size_t>(pick(sms_));
        return i;
    }
    std::string sm_name(size_t i) const { return "sm" + std::to_string(i + 1); }

    std::string switchover(size_t to, bool kill_client) {
        lab_detail::SpawnSpec sp;
        sp.argv = {bin_ + "/ibfabric", "sm", "switchover", "--url", "http://127.0.0.1:" + std::to_string(s_.sms[0].api_port),
                   "--token-file", s_.path("api.token"), "--to", s_.sms[to].port_guid, "--timeout", "5"};
        sp.out_path = s_.path("switchover.log");
        if (!kill_client) {
            std::string out;
            const int rc = lab_detail::run_capture(sp, 30, out);
            return "switchover to " + sm_name(to) + " (exit " + std::to_string(rc) + ")";
        }
        const int pid = lab_detail::spawn(sp);
        sleep_s(0.03);
        ::kill(pid, SIGKILL);
        lab_detail::alive(pid);  // reaps it
        return "switchover to " + sm_name(to) + ", client killed after 30 ms";
    }

    // Runs fault `kind`; returns its description.
    std::string inject(int kind, size_t m) {
        switch (kind) {
            case 0: {
                LabSmFault f = lab_sm_fault(s_, "kill-sm", sm_name(m));
                std::string took;
                if (auto n = lab_wait_one_master(s_, 20, 0.5)) {
                    if (auto ms = kill_to_master_ms(s_, m, f.unix_ms)) {
                        t_.kill_to_master_ms.push_back(*ms);
                        took = " (MASTER after " + std::to_string(*ms).substr(0, std::to_string(*ms).find('.') + 2) + " ms)";
                    }
                }
                lab_sm_fault(s_, "restart-sm", sm_name(m));
                return "kill -9 of the master " + sm_name(m) + took + ", restarted";
            }
            case 1: {
                const size_t i = static_cast<size_t>(pick(sms_));
                const double len = between(0.1, 3.0);
                lab_sm_fault(s_, "freeze-sm", sm_name(i));
                sleep_s(len);
                lab_sm_fault(s_, "thaw-sm", sm_name(i));
                return "freeze of " + sm_name(i) + (i == m ? " (master)" : "") + " for " + std::to_string(len).substr(0, 4) + " s";
            }
            case 2: {
                const size_t i = static_cast<size_t>(pick(sms_));
                const double len = between(0.2, 6.0);
                lab_console(s_, "Unlink \"" + s_.sms[i].host + "\"[1]", 0.05);
                sleep_s(len);
                lab_console(s_, "ReLink \"" + s_.sms[i].host + "\"[1]", 0.05);
                return "cable flap of " + sm_name(i) + (i == m ? " (master)" : "") + " for " + std::to_string(len).substr(0, 4) + " s";
            }
            case 3: {
                const size_t i = static_cast<size_t>(pick(sms_));
                const double len = between(1.0, 5.0);
                int kills = 0;
                {
                    LabTcpCut cut(s_.sms[i].tcp_port);
                    sleep_s(len);
                    kills = cut.kills();
                }
                return "TCP cut of " + sm_name(i) + "'s ingest for " + std::to_string(len).substr(0, 4) + " s (" +
                       std::to_string(kills) + " connections killed)";
            }
            case 4: {
                const size_t i = a_standby(m);
                lab_sm_fault(s_, "kill-sm", sm_name(i));
                lab_sm_fault(s_, "restart-sm", sm_name(i));
                return "restart of the standby " + sm_name(i);
            }
            case 5: return switchover(a_standby(m), false);
            default: return switchover(a_standby(m), true);
        }
    }

    // The invariants after settling; "" when they hold, else what broke.
    std::string check() {
        auto m = lab_wait_one_master(s_, 30, 1.0);
        if (!m) return "no single master within 30 s";
        if (!lab_sm_sweeps(s_, *m, 10)) return sm_name(*m) + " is MASTER but completes no heavy sweep";
        sleep_s(0.5);
        auto last = smp_->next(now_s(), 5);
        if (!last) return "the sminfo sampler is stuck";
        // An SM that rejoins (its cable back, restarted) discovers the fabric before it goes
        // STANDBY: settled means it has left DISCOVERING, so it is sampled again for up to 10 s;
        // one still DISCOVERING then, or in any other wrong state, is a violation.
        auto rejoining = [&] {
            for (size_t i = 0; i < s_.sms.size(); ++i)
                if (i != *m && last->states[i] == "DISCOVERING") return true;
            return false;
        };
        for (const double end = now_s() + 10; rejoining() && now_s() < end;) {
            sleep_s(0.2);
            if (auto again = smp_->next(now_s(), 5)) last = again;
        }
        std::string bad;
        for (size_t i = 0; i < s_.sms.size(); ++i) {
            const std::string want = i == *m ? "MASTER" : "STANDBY";
            if (last->states[i] != want)
                bad += " " + sm_name(i) + " is " + (last->states[i].empty() ? "not answering" : last->states[i]) + ", not " + want + ";";
        }
        const int lids = lids_changed(before_, fabric_lids(s_, quiet_));
        t_.lids_changed += lids;
        if (lids) bad += " " + std::to_string(lids) + " LIDs changed;";
        return bad;
    }

    void one(int i) {
        const char* const* kinds = kKinds;
        int kind = pick(kKindCount);
        while (std::find(a_.without.begin(), a_.without.end(), kinds[kind]) != a_.without.end()) kind = pick(kKindCount);
        std::string what, bad;
        try {
            auto m = master();
            if (!m) throw LabError("no single master before the fault");
            what = inject(kind, *m);
            bad = check();
        } catch (const std::exception& e) {
            if (what.empty()) what = std::string(kinds[kind]) + " (interrupted)";
            bad = std::string(" lab error: ") + e.what();
        }
        ++t_.faults;
        ++t_.by_kind[kinds[kind]];
        std::printf("%d SMs, fault %d (seed %llu): %s: %s\n", sms_, i, static_cast<unsigned long long>(a_.seed), what.c_str(),
                    bad.empty() ? "ok" : ("VIOLATION:" + bad).c_str());
        std::fflush(stdout);
        if (bad.empty()) {
            ++t_.survived;
            return;
        }
        ++t_.violations;
        ++t_.violations_by_kind[kinds[kind]];
        std::printf("  lab kept at %s.%d\n", a_.dir.c_str(), t_.violations);
        stop();
        int outstanding = 0;
        // OpenSM lists the MADs still outstanding when it exits: on ibsim, which never times a MAD
        // out, one such MAD is a sweep that waits forever (docs/ha-facts.md section 5).
        for (size_t k = 0; k < s_.sms.size(); ++k) {
            std::istringstream log(read_all(s_.sms[k].log));
            for (std::string l; std::getline(log, l);)
                if (l.find("evicting entry") != std::string::npos) {
                    ++outstanding;
                    std::printf("  %s exited with a MAD outstanding (never timed out on ibsim): %s\n", sm_name(k).c_str(),
                                l.substr(l.find("->") == std::string::npos ? 0 : l.find("->") + 3).c_str());
                }
        }
        if (outstanding && bad.find("completes no heavy sweep") != std::string::npos) ++t_.wedged;
        std::error_code ec;
        fs::rename(a_.dir, a_.dir + "." + std::to_string(t_.violations), ec);
        start();
    }

    const Args& a_;
    const Net& net_;
    int sms_;
    Totals& t_;
    std::mt19937_64 rng_;
    LabState s_;
    std::string quiet_, bin_;
    std::map<Guid, int> before_;
    std::unique_ptr<LabSmInfoSampler> smp_;
    double lab_started_ = 0;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    Net net;
    try {
        a = parse_args(argc, argv);
        const std::string text = read_all(a.plan);
        if (text.empty()) throw InputError(a.plan, 0, 0, "cannot read the plan");
        net = net_from_plan(load_plan(text, a.plan));
    } catch (const InputError& e) {
        std::fprintf(stderr, "ibf_ha_soak: %s\n", e.what());
        return 2;
    }
    std::printf("ibf_ha_soak --faults %d --seed %llu on %s\n", a.faults, static_cast<unsigned long long>(a.seed), a.plan.c_str());
    Totals t;
    const double t0 = now_s();
    for (int sms : a.sms) {
        try {
            Soak(a, net, sms, t).run();
        } catch (const LabError& e) {
            std::fprintf(stderr, "ibf_ha_soak: %d SMs: %s\n%s", sms, e.what(), e.log_tail().c_str());
            return 3;
        }
    }
    std::printf("faults %d, survived %d, violations %d (%d a master wedged by a MAD ibsim never timed out), double-master %.1f s, masterless %.1f s, LIDs changed %d, "
                "kill -> MASTER median %.1f ms (%zu kills), %.0f s\n",
                t.faults, t.survived, t.violations, t.wedged, t.two_masters_s, t.no_master_s, t.lids_changed,
                median(t.kill_to_master_ms), t.kill_to_master_ms.size(), now_s() - t0);
    for (const auto& [k, n] : t.by_kind)
        std::printf("  %-18s %3d faults, %d violations\n", k.c_str(), n, t.violations_by_kind.count(k) ? t.violations_by_kind.at(k) : 0);
    return t.violations ? 1 : 0;
}
