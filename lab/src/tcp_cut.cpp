// LabTcpCut: `ss -K` on one TCP port every 20 ms (lab_tcp_cut.h).
#include "ibf/lab_tcp_cut.h"

#include <string>

#include "ibf/lab_process.h"

namespace ibf {

LabTcpCut::LabTcpCut(int port) : port_(port), thread_([this] { run(); }) {}

LabTcpCut::~LabTcpCut() {
    stop_ = true;
    thread_.join();
}

void LabTcpCut::run() {
    lab_detail::SpawnSpec sp;
    const std::string p = std::to_string(port_);
    sp.argv = {"ss", "-K", "-tn", "( dport = :" + p + " or sport = :" + p + " )"};
    while (!stop_) {
        std::string out;
        if (lab_detail::run_capture(sp, 2.0, out) == 0)
            for (size_t at = out.find("ESTAB"); at != std::string::npos; at = out.find("ESTAB", at + 1)) ++kills_;
        lab_detail::sleep_s(0.02);
    }
}

}  // namespace ibf
