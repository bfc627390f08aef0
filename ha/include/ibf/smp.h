// MAD I/O for SM high availability: SubnGet/SubnSet(SMInfo) and SubnGet(PortInfo) sent through
// this node's own HCA port. The interface is all the rest of ha/ and the daemon see; the only
// implementation that touches libibumad/libibmad is src/smp_ibmad.cpp (open_smp_port), so the
// engine and its tests build and run without a fabric (tests use a fake SmpPort).
//
//   auto port = ibf::ha::open_smp_port({.ca = "", .port = 0, .timeout_ms = 100});
//   ibf::ha::SmInfoReply r = port->get_sminfo(5);          // LID-routed SubnGet(SMInfo)
//   if (r.status == ibf::ha::SmpStatus::ok && r.info.state == ibf::SmState::Master) ...
//   port->set_sminfo(7, ibf::ha::kSmInfoHandover);          // make the STANDBY at LID 7 take over
//
// Threading: an SmpPort is used by one thread at a time (the daemon's ha thread). Every call
// returns within about timeout_ms x (retries + 1); none throws once the port is open.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ibf/snapshot.h"

namespace ibf::ha {

// SMInfo attribute modifiers for SubnSet (IBA 14.2.5.13, o14-9).
inline constexpr uint32_t kSmInfoHandover = 1;
inline constexpr uint32_t kSmInfoAcknowledge = 2;
inline constexpr uint32_t kSmInfoDisable = 3;
inline constexpr uint32_t kSmInfoStandby = 4;
inline constexpr uint32_t kSmInfoDiscover = 5;

enum class SmpStatus : uint8_t {
    ok,       // an answer with MAD status 0
    timeout,  // no answer within the timeout (after the retries): the witness "SMInfo fails"
    refused,  // an answer with a non-zero MAD status (e.g. 7: an illegal SMInfo transition)
    error,    // a local failure (the port is down, the send failed)
    // An SMInfo answered by the port's kernel, not by an SM: MAD status 0x000C (unsupported
    // method/attribute). On hardware, a node whose SM process is gone but whose port is up answers
    // so at once (the HCA drivers leave SMInfo to a registered agent, and the kernel's MAD layer
    // answers an unclaimed Get or Set with that status: docs/ha-facts.md). The witness "SMInfo
    // fails", like a timeout; never an answer.
    no_sm,
};
std::string_view to_string(SmpStatus s);  // "ok", "timeout", "refused", "error", "no_sm"

// MAD status of an answer no agent took (IBA 13.4.7: the method/attribute combination is not
// supported); the D bit (0x8000) of a directed-route SMP aside.
inline constexpr uint16_t kMadStatusUnsupportedMethodAttr = 0x000C;
// The status of an answer with MAD status `mad_status` to an SMP of attribute SMInfo (`sminfo`)
// or another: ok (0), no_sm (an SMInfo no SM took), refused (any other).
inline SmpStatus answered_status(uint16_t mad_status, bool sminfo) {
    if (mad_status == 0) return SmpStatus::ok;
    return sminfo && (mad_status & 0x7FFF) == kMadStatusUnsupportedMethodAttr ? SmpStatus::no_sm : SmpStatus::refused;
}

struct SmInfoReply {
    SmpStatus status = SmpStatus::error;
    SmInfo info;              // guid, priority, state, act_count as answered; lid = the LID queried
    uint64_t sm_key = 0;      // as answered (IBA p.840: 0 unless the requester is the master;
                              // OpenSM 3.3.23 answers its real key to anyone, docs/ha-facts.md)
    uint16_t mad_status = 0;  // the MAD status field when status is ok, refused or no_sm
    double rtt_ms = 0;        // send -> answer (or -> giving up)
    std::string error;        // one line when status is not ok
};

struct PortInfoReply {
    SmpStatus status = SmpStatus::error;
    uint16_t lid = 0;            // the port's base LID
    uint16_t master_sm_lid = 0;  // PortInfo.MasterSMLID
    uint8_t port_state = 0;      // 1 Down .. 4 Active
    uint32_t capability_mask = 0;  // PortInfo.CapabilityMask (bit 1 IsSM)
    std::string error;
};

// This node's own port, as the local HCA driver reports it (no MAD on the wire).
struct LocalPort {
    std::string ca;          // "mlx5_0" (under umad2sim: the simulated CA's name)
    int port = 0;
    Guid port_guid = 0;
    uint16_t lid = 0;
    uint16_t sm_lid = 0;
    uint8_t state = 0;       // 1 Down, 2 Init, 3 Armed, 4 Active; 0 = unknown
    bool ok = false;         // false when it cannot be read (then `error` says why)
    std::string error;
};

// What a burst of SubnGet(SMInfo) to one SM came back with (SmpPort::get_sminfo_burst).
struct SmInfoBurst {
    struct Done {
        SmInfoReply reply;
        double after_ms = 0;  // when it came back (or was given up), ms after the burst began
    };
    std::vector<Done> done;   // in the order they came back
    int sent = 0;             // probes sent; sent - done.size() were still outstanding (abandoned)
};

class SmpPort {
public:
    virtual ~SmpPort() = default;
    virtual SmInfoReply get_sminfo(uint16_t lid) = 0;
    // For the master (ha_agent.h, HaTarget::burst): SubnGet(SMInfo) to `lid`, and another every
    // `spacing_ms` without waiting for the earlier ones to come back, until one answers or
    // `failures` have failed, at most `failures` + 2 in all, so that a probe lost on the way (it
    // costs a whole timeout: on ibsim the first MAD to reach a killed SM's port is dropped,
    // docs/ha-facts.md section 1, and one in flight when the SM died may be lost too) does not
    // hold back the failures of the next ones. Returns at the first answer (ok or refused), once
    // `failures` have failed, or when every probe sent has come back. A probe still outstanding
    // then is abandoned, never reported (its late answer is skipped by the next exchange's
    // transaction ID). An SM that answers within `spacing_ms` costs one probe. This default sends
    // one at a time (no overlap): up to `failures` probes, stopping at an answer.
    virtual SmInfoBurst get_sminfo_burst(uint16_t lid, int failures, int spacing_ms) {
        (void)spacing_ms;
        SmInfoBurst b;
        double t = 0;
        for (int i = 0; i < std::max(1, failures); ++i) {
            SmInfoReply r = get_sminfo(lid);
            ++b.sent;
            t += r.rtt_ms;
            const bool answered = r.status == SmpStatus::ok || r.status == SmpStatus::refused;
            b.done.push_back({std::move(r), t});
            if (answered) break;
        }
        return b;
    }
    // SubnSet(SMInfo) with the given attribute modifier, our payload claiming `claim_state`
    // (OpenSM accepts HANDOVER/DISCOVER/STANDBY/DISABLE only from a requester claiming MASTER).
    virtual SmInfoReply set_sminfo(uint16_t lid, uint32_t attr_mod, SmState claim_state = SmState::Master) = 0;
    // The same with `payload_guid` as the GUID in the Set's payload, where OpenSM reads it: with
    // STANDBY it becomes the master that SM polls (osm_sminfo_rcv.c). 0 = this port's GUID.
    virtual SmInfoReply set_sminfo_as(uint16_t lid, uint32_t attr_mod, SmState claim_state, Guid payload_guid) {
        (void)payload_guid;
        return set_sminfo(lid, attr_mod, claim_state);
    }
    virtual PortInfoReply get_portinfo(uint16_t lid, uint8_t port_num = 0) = 0;
    virtual LocalPort local() = 0;
};

struct SmpOptions {
    std::string ca;          // "" = the first CA
    int port = 0;            // 0 = the first active port
    int timeout_ms = 100;    // per attempt
    int retries = 0;         // extra attempts before `timeout`
};

// Opens the umad port (needs access to /dev/infiniband/umad*; in the lab, umad2sim). Throws
// std::runtime_error naming the CA and port when it cannot.
std::unique_ptr<SmpPort> open_smp_port(const SmpOptions& o);

}  // namespace ibf::ha
