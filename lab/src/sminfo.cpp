// LabSmInfoSampler: `sminfo` to every SM of the lab from a CA without an SM (lab_sminfo.h).
#include <algorithm>
#include <sstream>

#include "ibf/lab_process.h"
#include "ibf/lab_sminfo.h"
#include "lab_internal.h"

namespace ibf {

using lab_detail::now_s;

std::optional<std::string> parse_sminfo_state(std::string_view out) {
    const size_t at = out.find(" state ");
    if (out.find("sm lid") == std::string_view::npos || at == std::string_view::npos) return std::nullopt;
    switch (at + 7 < out.size() ? out[at + 7] : ' ') {
        case '0': return "NOT-ACTIVE";
        case '1': return "DISCOVERING";
        case '2': return "STANDBY";
        case '3': return "MASTER";
        default: return std::nullopt;
    }
}

int SmInfoSample::count(std::string_view state) const {
    return static_cast<int>(std::count(states.begin(), states.end(), state));
}

SmInfoStats sminfo_stats(const std::vector<SmInfoSample>& xs, double from_s, double to_s) {
    SmInfoStats st;
    for (size_t i = 0; i < xs.size(); ++i) {
        if (xs[i].at_s < from_s || xs[i].at_s > to_s) continue;
        const double until = i + 1 < xs.size() ? std::min(xs[i + 1].at_s, to_s) : to_s;
        const int masters = xs[i].count("MASTER");
        ++st.samples;
        if (masters > 1) ++st.two_masters, st.two_masters_s += until - xs[i].at_s;
        if (masters == 0) ++st.no_master, st.no_master_s += until - xs[i].at_s;
    }
    return st;
}

std::string lab_quiet_host(const LabState& s) {
    const Net net = parse_net(lab_detail::read_file(s.path("net.txt")), s.path("net.txt"));
    for (const NetNode& n : net.nodes) {
        if (n.type != NodeType::CA || n.ports.empty()) continue;
        if (std::none_of(s.sms.begin(), s.sms.end(), [&](const LabSm& m) { return m.host == n.id; })) return n.id;
    }
    throw LabError("the lab has no CA without an SM to run sminfo from");
}

LabSmInfoSampler::LabSmInfoSampler(const LabState& s, std::string host, double period_s)
    : state_(s), host_(std::move(host)), period_s_(period_s) {
    thread_ = std::thread([this] { run(); });
}

LabSmInfoSampler::~LabSmInfoSampler() { stop(); }

void LabSmInfoSampler::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

std::vector<SmInfoSample> LabSmInfoSampler::samples() const {
    std::lock_guard<std::mutex> l(mu_);
    return samples_;
}

std::optional<SmInfoSample> LabSmInfoSampler::next(double after_s, double timeout_s) const {
    const double deadline = now_s() + timeout_s;
    for (;;) {
        {
            std::lock_guard<std::mutex> l(mu_);
            if (!samples_.empty() && samples_.back().at_s >= after_s) return samples_.back();
        }
        if (now_s() > deadline) return std::nullopt;
        lab_detail::sleep_s(0.02);
    }
}

void LabSmInfoSampler::run() {
    lab_detail::SpawnSpec sp;
    sp.cwd = state_.path("work");
    sp.env = {{"IBSIM_SOCKNAME", state_.sockname}, {"SIM_HOST", host_}, {"LD_PRELOAD", state_.umad2sim}};
    while (!stop_) {
        SmInfoSample x;
        x.at_s = now_s();
        for (const LabSm& m : state_.sms) {
            std::string out;
            sp.argv = {"sminfo", "-t", "100", std::to_string(m.lid)};
            int rc = -1;
            try {
                rc = m.lid ? lab_detail::run_capture(sp, 1.0, out) : -1;
            } catch (const std::exception&) {
            }
            x.states.push_back(rc == 0 ? parse_sminfo_state(out).value_or("") : "");
        }
        const double wake = x.at_s + period_s_;
        {
            std::lock_guard<std::mutex> l(mu_);
            samples_.push_back(std::move(x));
        }
        while (!stop_ && now_s() < wake) lab_detail::sleep_s(0.01);
    }
}

}  // namespace ibf
