// The MAD I/O edge of ha/ (smp.h): LID-routed SMPs through libibmad on one umad port.
// libibmad reports a failed RPC as NULL; we tell the three failures apart by what it leaves:
// a non-zero MAD status (smp_*_status_via's rstatus) = refused; errno ETIMEDOUT with no status =
// timeout; anything else = a local error. Works unchanged under LD_PRELOAD=libumad2sim.so.
// LID-routed SMPs do not go through libibmad's mad_rpc(): it writes two "ibwarn: ... _do_madrpc
// failed" lines to stderr for every failed call, unconditionally (madrpc_show_errors(0) does not
// silence them), so a dead master polled every 100 ms filled the daemon's log with ~3 lines a
// second. exchange() builds the packet with libibmad (mad_build_pkt) and sends and receives it on
// the same umad agent itself; the failure goes to the caller as an SmpStatus, logged rate-limited.
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ibf/smp.h"

namespace ibf::ha {

std::string_view to_string(SmpStatus s) {
    switch (s) {
        case SmpStatus::ok: return "ok";
        case SmpStatus::timeout: return "timeout";
        case SmpStatus::refused: return "refused";
        case SmpStatus::no_sm: return "no_sm";
        default: return "error";
    }
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The outcome of one RPC, classified.
struct RpcResult {
    SmpStatus status = SmpStatus::error;
    uint16_t mad_status = 0;
    double rtt_ms = 0;
    std::string error;
};

RpcResult classify(const uint8_t* res, int rstatus, int err, Clock::time_point t0, uint16_t lid,
                   const char* what, bool sminfo) {
    RpcResult r;
    r.rtt_ms = ms_since(t0);
    r.mad_status = static_cast<uint16_t>(rstatus);
    const std::string where = std::string(what) + " to LID " + std::to_string(lid);
    if (res != nullptr && rstatus == 0) {
        r.status = SmpStatus::ok;
    } else if (rstatus != 0) {
        r.status = answered_status(r.mad_status, sminfo);
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%04x", static_cast<unsigned>(rstatus) & 0xffffu);
        r.error = where + ": MAD status " + hex + (r.status == SmpStatus::no_sm ? " (no SM at that port)" : "");
    } else if (err == ETIMEDOUT) {
        r.status = SmpStatus::timeout;
        r.error = where + ": no answer (timeout)";
    } else {
        r.status = SmpStatus::error;
        r.error = where + ": " + (err ? std::strerror(err) : "send/receive failed");
    }
    return r;
}

SmInfo decode_sminfo(const uint8_t* buf, uint16_t lid, uint64_t& key) {
    SmInfo s;
    s.port_guid = mad_get_field64(const_cast<uint8_t*>(buf), 0, IB_SMINFO_GUID_F);
    key = mad_get_field64(const_cast<uint8_t*>(buf), 0, IB_SMINFO_KEY_F);
    s.act_count = mad_get_field(const_cast<uint8_t*>(buf), 0, IB_SMINFO_ACT_F);
    s.priority = static_cast<uint8_t>(mad_get_field(const_cast<uint8_t*>(buf), 0, IB_SMINFO_PRIO_F));
    s.state = static_cast<SmState>(mad_get_field(const_cast<uint8_t*>(buf), 0, IB_SMINFO_STATE_F) & 3);
    s.lid = lid;
    return s;
}

class IbmadSmpPort final : public SmpPort {
public:
    IbmadSmpPort(ibmad_port* port, std::string ca, int portnum, SmpOptions o)
        : port_(port), ca_(std::move(ca)), portnum_(portnum), o_(std::move(o)) {}
    ~IbmadSmpPort() override { mad_rpc_close_port(port_); }
    IbmadSmpPort(const IbmadSmpPort&) = delete;
    IbmadSmpPort& operator=(const IbmadSmpPort&) = delete;

    SmInfoReply get_sminfo(uint16_t lid) override {
        uint8_t buf[IB_SMP_DATA_SIZE] = {};
        return sminfo_reply(rpc(false, buf, IB_ATTR_SMINFO, 0, lid, "SubnGet(SMInfo)"), buf, lid);
    }

    // Overlapped probes (smp.h): each outstanding one tracked by its transaction ID; answers,
    // ibsim's immediate failures and the kernel's timeouts matched to it; a probe given up when
    // its own timeout_ms has passed.
    SmInfoBurst get_sminfo_burst(uint16_t lid, int failures, int spacing_ms) override {
        failures = std::max(1, failures);
        const int max_sent = failures + 2;  // room for two probes lost on the way (smp.h)
        const auto spacing = std::chrono::milliseconds(std::max(1, spacing_ms));
        const auto timeout = std::chrono::milliseconds(timeout_ms());
        struct Out {
            uint32_t trid = 0;
            Clock::time_point sent;
        };
        std::vector<Out> out;  // outstanding, oldest first
        SmInfoBurst b;
        int failed = 0;
        bool answered = false;
        const auto t0 = Clock::now();
        auto finish = [&](const RpcResult& rr, const uint8_t* buf) {
            b.done.push_back({sminfo_reply(rr, buf, lid), ms_since(t0)});
            if (rr.status == SmpStatus::ok || rr.status == SmpStatus::refused) answered = true;
            else ++failed;
        };
        auto send = [&] {
            uint8_t data[IB_SMP_DATA_SIZE] = {};
            ib_portid_t id = lid_portid(lid);
            Out o;
            o.sent = Clock::now();
            int err = 0;
            ++b.sent;
            if (send_smp(false, data, IB_ATTR_SMINFO, 0, id, o.trid, err)) out.push_back(o);
            else finish(classify(nullptr, 0, err, o.sent, lid, "SubnGet(SMInfo)", true), data);
        };
        send();
        auto next_send = t0 + spacing;
        const int fd = mad_rpc_portid(port_);
        alignas(8) uint8_t rcv[1024] = {};
        while (!answered && failed < failures && (!out.empty() || b.sent < max_sent)) {
            auto wake = b.sent < max_sent ? next_send : Clock::time_point::max();
            if (!out.empty()) wake = std::min(wake, out.front().sent + timeout);
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count();
            if (left > 0 && !out.empty()) {
                int length = sizeof rcv - umad_size();
                errno = 0;
                if (umad_recv(fd, rcv, &length, static_cast<int>(left)) >= 0) {
                    uint8_t* mad = static_cast<uint8_t*>(umad_get_mad(rcv));
                    const auto trid = static_cast<uint32_t>(mad_get_field64(mad, 0, IB_MAD_TRID_F));
                    auto it = std::find_if(out.begin(), out.end(), [&](const Out& o) { return o.trid == trid; });
                    if (it == out.end()) continue;  // a late answer to an earlier call
                    const Clock::time_point sent = it->sent;
                    out.erase(it);
                    uint8_t data[IB_SMP_DATA_SIZE] = {};
                    int rstatus = 0, err = 0;
                    const uint8_t* res = received(rcv, data, rstatus, err);
                    finish(classify(res, rstatus, err, sent, lid, "SubnGet(SMInfo)", true), data);
                    continue;
                }
                if (errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR && errno != 0) {  // a local failure: the oldest is lost
                    const int err = errno;
                    const Clock::time_point sent = out.front().sent;
                    out.erase(out.begin());
                    uint8_t data[IB_SMP_DATA_SIZE] = {};
                    finish(classify(nullptr, 0, err, sent, lid, "SubnGet(SMInfo)", true), data);
                    continue;
                }
            } else if (left > 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(left));  // nothing outstanding: the spacing
            }
            const auto now = Clock::now();
            while (!out.empty() && now >= out.front().sent + timeout && failed < failures) {  // given up
                const Clock::time_point sent = out.front().sent;
                out.erase(out.begin());
                uint8_t data[IB_SMP_DATA_SIZE] = {};
                finish(classify(nullptr, 0, ETIMEDOUT, sent, lid, "SubnGet(SMInfo)", true), data);
            }
            if (!answered && failed < failures && b.sent < max_sent && now >= next_send) {
                send();
                next_send = now + spacing;
            }
        }
        return b;
    }

    SmInfoReply set_sminfo(uint16_t lid, uint32_t attr_mod, SmState claim_state) override {
        return set_sminfo_as(lid, attr_mod, claim_state, 0);
    }

    SmInfoReply set_sminfo_as(uint16_t lid, uint32_t attr_mod, SmState claim_state, Guid payload_guid) override {
        uint8_t buf[IB_SMP_DATA_SIZE] = {};
        mad_set_field64(buf, 0, IB_SMINFO_GUID_F, payload_guid ? payload_guid : local().port_guid);
        mad_set_field64(buf, 0, IB_SMINFO_KEY_F, 0);
        mad_set_field(buf, 0, IB_SMINFO_ACT_F, 0);
        mad_set_field(buf, 0, IB_SMINFO_PRIO_F, 0);
        mad_set_field(buf, 0, IB_SMINFO_STATE_F, static_cast<uint32_t>(claim_state));
        return sminfo_reply(rpc(true, buf, IB_ATTR_SMINFO, attr_mod, lid, "SubnSet(SMInfo)"), buf, lid);
    }

    PortInfoReply get_portinfo(uint16_t lid, uint8_t port_num) override {
        uint8_t buf[IB_SMP_DATA_SIZE] = {};
        const RpcResult rr = rpc(false, buf, IB_ATTR_PORT_INFO, port_num, lid, "SubnGet(PortInfo)");
        PortInfoReply r;
        r.status = rr.status;
        r.error = rr.error;
        if (rr.status == SmpStatus::ok) {
            r.lid = static_cast<uint16_t>(mad_get_field(buf, 0, IB_PORT_LID_F));
            r.master_sm_lid = static_cast<uint16_t>(mad_get_field(buf, 0, IB_PORT_SMLID_F));
            r.port_state = static_cast<uint8_t>(mad_get_field(buf, 0, IB_PORT_STATE_F));
            r.capability_mask = mad_get_field(buf, 0, IB_PORT_CAPMASK_F);
        }
        return r;
    }

    LocalPort local() override {
        LocalPort l;
        l.ca = ca_;
        l.port = portnum_;
        umad_port_t p{};
        if (umad_get_port(ca_.c_str(), portnum_, &p) < 0) {
            l.error = "umad_get_port(" + ca_ + ", " + std::to_string(portnum_) + ") failed";
            return l;
        }
        l.port_guid = be64toh(p.port_guid);
        l.lid = static_cast<uint16_t>(p.base_lid);
        l.sm_lid = static_cast<uint16_t>(p.sm_lid);
        l.state = static_cast<uint8_t>(p.state);
        l.ok = true;
        umad_release_port(&p);
        // The port's own SMA, by a directed route of zero hops: current on hardware and under
        // umad2sim alike (umad2sim's emulated sysfs keeps the state it had when we attached).
        uint8_t buf[IB_SMP_DATA_SIZE] = {};
        ib_portid_t self{};
        self.drpath.cnt = 0;
        self.drpath.drslid = self.drpath.drdlid = 0xffff;
        int rstatus = 0;
        if (smp_query_status_via(buf, &self, IB_ATTR_PORT_INFO, static_cast<unsigned>(portnum_), 0, &rstatus, port_) &&
            rstatus == 0) {
            l.lid = static_cast<uint16_t>(mad_get_field(buf, 0, IB_PORT_LID_F));
            l.sm_lid = static_cast<uint16_t>(mad_get_field(buf, 0, IB_PORT_SMLID_F));
            l.state = static_cast<uint8_t>(mad_get_field(buf, 0, IB_PORT_STATE_F));
        }
        return l;
    }

private:
    // One LID-routed SMP, retried here on timeout (o_.retries extra attempts): libibmad's own
    // retry loop gives up at the first receive timeout under umad2sim, so it is set to 1 attempt.
    // A Set re-sends the same payload; `buf` holds the answer when the result is ok.
    RpcResult rpc(bool set, uint8_t* buf, unsigned attr, uint32_t mod, uint16_t lid, const char* what) {
        uint8_t payload[IB_SMP_DATA_SIZE];
        std::memcpy(payload, buf, sizeof payload);
        const auto t0 = Clock::now();
        RpcResult r;
        for (int attempt = 0; attempt <= std::max(0, o_.retries); ++attempt) {
            std::memcpy(buf, payload, sizeof payload);
            int rstatus = 0;
            ib_portid_t id = lid_portid(lid);
            int err = 0;
            const uint8_t* res = exchange(set, buf, attr, mod, id, rstatus, err);
            r = classify(res, rstatus, err, t0, lid, what, attr == IB_ATTR_SMINFO);
            if (r.status != SmpStatus::timeout) break;
        }
        return r;
    }

    // One SMP: send on the SMI agent, receive until the answer with our transaction ID or the
    // timeout. Returns `data` holding the answer's payload, or nullptr with `rstatus` (the MAD
    // status when one came back) or `err` (ETIMEDOUT, or errno of a local failure) set.
    const uint8_t* exchange(bool set, uint8_t* data, unsigned attr, uint32_t mod, ib_portid_t& id, int& rstatus,
                            int& err) {
        const int timeout_ms = this->timeout_ms();
        uint32_t trid = 0;
        if (!send_smp(set, data, attr, mod, id, trid, err)) return nullptr;
        const int fd = mad_rpc_portid(port_);
        alignas(8) uint8_t rcv[1024] = {};
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                err = ETIMEDOUT;
                return nullptr;
            }
            int length = sizeof rcv - umad_size();
            if (umad_recv(fd, rcv, &length, static_cast<int>(left)) < 0) {
                err = errno == EAGAIN || errno == 0 ? ETIMEDOUT : errno;
                return nullptr;
            }
            uint8_t* mad = static_cast<uint8_t*>(umad_get_mad(rcv));
            if (static_cast<uint32_t>(mad_get_field64(mad, 0, IB_MAD_TRID_F)) != trid) continue;  // a late answer
            return received(rcv, data, rstatus, err);
        }
    }

    int timeout_ms() const { return o_.timeout_ms > 0 ? o_.timeout_ms : 100; }

    // What came back for one of our SMPs: `data` holding its payload, or nullptr with `rstatus`
    // (the MAD status) or `err` (ETIMEDOUT: the kernel, or ibsim, gave the send up) set.
    static const uint8_t* received(uint8_t* rcv, uint8_t* data, int& rstatus, int& err) {
        uint8_t* mad = static_cast<uint8_t*>(umad_get_mad(rcv));
        if (const int st = umad_status(rcv); st != 0 && st != ENOMEM) {  // the kernel timed the send out
            err = ETIMEDOUT;
            return nullptr;
        }
        rstatus = static_cast<int>(mad_get_field(mad, 0, IB_DRSMP_STATUS_F));
        if (rstatus != 0) return nullptr;
        std::memcpy(data, mad + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE);
        return data;
    }

    // Sends one SMP on the SMI agent; its transaction ID in `trid`. False (with `err`) when it
    // could not be sent.
    bool send_smp(bool set, const uint8_t* data, unsigned attr, uint32_t mod, ib_portid_t& id, uint32_t& trid,
                  int& err) {
        const int timeout_ms = this->timeout_ms();
        ib_rpc_t rpc{};
        rpc.mgtclass = IB_SMI_CLASS;
        rpc.method = set ? IB_MAD_METHOD_SET : IB_MAD_METHOD_GET;
        rpc.attr.id = attr;
        rpc.attr.mod = mod;
        rpc.timeout = static_cast<unsigned>(timeout_ms);
        rpc.datasz = IB_SMP_DATA_SIZE;
        rpc.dataoffs = IB_SMP_DATA_OFFS;
        alignas(8) uint8_t snd[1024] = {};
        const int len = mad_build_pkt(snd, &rpc, &id, nullptr, const_cast<uint8_t*>(data));
        if (len < 0) {
            err = EINVAL;
            return false;
        }
        trid = static_cast<uint32_t>(mad_get_field64(umad_get_mad(snd), 0, IB_MAD_TRID_F));
        if (umad_send(mad_rpc_portid(port_), mad_rpc_class_agent(port_, IB_SMI_CLASS), snd, len, timeout_ms, 0) < 0) {
            err = errno ? errno : EIO;
            return false;
        }
        return true;
    }

    static ib_portid_t lid_portid(uint16_t lid) {
        ib_portid_t id{};
        ib_portid_set(&id, lid, 0, 0);
        return id;
    }

    static SmInfoReply sminfo_reply(const RpcResult& rr, const uint8_t* buf, uint16_t lid) {
        SmInfoReply r;
        r.status = rr.status;
        r.mad_status = rr.mad_status;
        r.rtt_ms = rr.rtt_ms;
        r.error = rr.error;
        r.info.lid = lid;
        if (rr.status == SmpStatus::ok) r.info = decode_sminfo(buf, lid, r.sm_key);
        return r;
    }

    ibmad_port* port_;
    std::string ca_;
    int portnum_;
    SmpOptions o_;
};

}  // namespace

std::unique_ptr<SmpPort> open_smp_port(const SmpOptions& o) {
    // Resolve "" / 0 to the CA and port umad picks (the first CA, its first active port), so
    // local() and the MADs use the same port.
    umad_port_t p{};
    const std::string want = (o.ca.empty() ? "(first CA)" : o.ca) + " port " + std::to_string(o.port);
    if (umad_init() < 0) throw std::runtime_error("umad_init failed (no umad support): " + want);
    if (umad_get_port(o.ca.empty() ? nullptr : o.ca.c_str(), o.port, &p) < 0)
        throw std::runtime_error("cannot find umad port " + want);
    std::string ca = p.ca_name;
    const int portnum = p.portnum;
    umad_release_port(&p);
    int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
    ibmad_port* port = mad_rpc_open_port(ca.data(), portnum, classes, 2);
    if (port == nullptr)
        throw std::runtime_error("cannot open umad port " + ca + " port " + std::to_string(portnum) + ": " +
                                 std::strerror(errno));
    mad_rpc_set_timeout(port, o.timeout_ms > 0 ? o.timeout_ms : 100);
    mad_rpc_set_retries(port, 1);  // one attempt per call: IbmadSmpPort::rpc() retries itself
    return std::make_unique<IbmadSmpPort>(port, std::move(ca), portnum, o);
}

}  // namespace ibf::ha
