// An independent witness of the lab's SM states: `sminfo <lid>` (SubnGet(SMInfo)) to every SM,
// run from a CA that runs no SM, over and over in a thread of its own — what a reliability
// engineer's probe sees, apart from the SMs' logs and their daemons. For the HA scenario tests and
// the soak (docs/ha.md, "Failure modes").
//
//   ibf::LabSmInfoSampler smp(state, ibf::lab_quiet_host(state));   // samples every ~150 ms
//   ...faults...
//   auto st = ibf::sminfo_stats(smp.samples(), settled_at, ibf::lab_detail::now_s());
//   // st.two_masters == 0: no sample after settling saw two SMs answer MASTER
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ibf/lab_runner.h"

namespace ibf {

// `sminfo`'s answer "sminfo: sm lid 1 sm guid 0x100001, activity count 12 priority 15 state 3
// SMINFO_MASTER" -> "MASTER" (also STANDBY, DISCOVERING, NOT-ACTIVE); nullopt for anything else.
std::optional<std::string> parse_sminfo_state(std::string_view out);

// One round: each SM's state in the lab's SM order ("" = no answer).
struct SmInfoSample {
    double at_s = 0;                  // lab_detail::now_s() when the round started
    std::vector<std::string> states;
    int count(std::string_view state) const;
};

// Over the samples taken in [from_s, to_s]: how many saw two or more MASTERs or none, and the
// seconds they stand for (each sample lasts until the next one).
struct SmInfoStats {
    int samples = 0, two_masters = 0, no_master = 0;
    double two_masters_s = 0, no_master_s = 0;
};
SmInfoStats sminfo_stats(const std::vector<SmInfoSample>& xs, double from_s, double to_s);

// The first CA with a cable whose node runs no SM of the lab (throws LabError when none).
std::string lab_quiet_host(const LabState& s);

class LabSmInfoSampler {
public:
    LabSmInfoSampler(const LabState& s, std::string host, double period_s = 0.15);
    ~LabSmInfoSampler();
    LabSmInfoSampler(const LabSmInfoSampler&) = delete;
    LabSmInfoSampler& operator=(const LabSmInfoSampler&) = delete;
    void stop();
    std::vector<SmInfoSample> samples() const;
    // The latest sample's states, waiting until one has started at or after `after_s` (nullopt on timeout).
    std::optional<SmInfoSample> next(double after_s, double timeout_s) const;

private:
    void run();
    LabState state_;
    std::string host_;
    double period_s_;
    mutable std::mutex mu_;
    std::vector<SmInfoSample> samples_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace ibf
