// A cut of the management network between SM nodes on one host: every TCP connection to or from
// a port killed every 20 ms with `ss -K` (no iptables needed; connections re-established in
// between are killed again), for as long as the object lives. For the HA scenario tests and the
// soak (docs/ha.md, "Failure modes").
//
//   { ibf::LabTcpCut cut(state.sms[1].tcp_port); sleep(5); }   // the standby's ingest cut for 5 s
//   // cut.kills(): connections closed (0: this kernel cannot kill sockets, INET_DIAG_DESTROY)
#pragma once

#include <atomic>
#include <thread>

namespace ibf {

class LabTcpCut {
public:
    explicit LabTcpCut(int port);
    ~LabTcpCut();
    LabTcpCut(const LabTcpCut&) = delete;
    LabTcpCut& operator=(const LabTcpCut&) = delete;
    int kills() const { return kills_; }

private:
    void run();
    int port_;
    std::atomic<bool> stop_{false};
    std::atomic<int> kills_{0};
    std::thread thread_;
};

}  // namespace ibf
