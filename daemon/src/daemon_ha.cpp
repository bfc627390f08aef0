// ibfabricd's SM high availability wiring (docs/ha.md): the io thread's HaEngine fed from the
// plugins' messages and the agent's probe batches, its actions handed to the HA agent's threads,
// and the switchover calls (POST /api/v1/sm/priority, /api/v1/sm/state). io thread, except the
// agent's hooks (agent threads) and the priority jobs (local_sm_calls), which only post here.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <limits>

#include "daemon_impl.h"
#include "ibf/clock.h"
#include "ibf/error.h"
#include "ibf/ha_findings.h"
#include "ibf/history_api.h"  // ApiFailure
#include "ibf/http_client.h"
#include "ibf/local_sm.h"
#include "ibf/report.h"
#include "ibf/sm_helper.h"
#include "ibf/sm_helper_client.h"

namespace ibf {

namespace asio = boost::asio;

void Daemon::Impl::ha_start() {
    const ha::HaConfig& hc = opt.config.ha;
    ha.emplace(hc, &state.sm_table());  // the SMs' one table; the state feeds both
    state.attach_ha(&*ha);
    HaAgentHooks h;
    h.open_port = [hc] { return ha::open_smp_port({hc.mad_ca, hc.mad_port, hc.mad_timeout_ms, 0}); };
    h.on_batch = [this](HaBatch b) { asio::post(io, [this, b = std::move(b)]() mutable { ha_apply(std::move(b)); }); };
    h.on_fence_done = [this](bool ok, std::string detail) {
        asio::post(io, [this, ok, detail = std::move(detail)] {
            if (ok) spdlog::info("ha: fence command succeeded");
            else spdlog::error("ha: fence command failed: {}", detail);
            ha->on_fence_done(ok, detail, wall_clock_ms());
            ha_step();
        });
    };
    h.on_promote_sent = [this](ha::SmInfoReply r) {
        asio::post(io, [this, r = std::move(r)] {
            spdlog::info("ha: SubnSet(SMInfo) answered: {}{} ({:.1f} ms)", ha::to_string(r.status),
                         r.error.empty() ? "" : ": " + r.error, r.rtt_ms);
            ha->on_promote_sent(r, wall_clock_ms());
            ha_step();
        });
    };
    h.log_warn = [](const std::string& m) { spdlog::warn("{}", m); };
    h.now_ms = [] { return wall_clock_ms(); };
    ha_agent = std::make_unique<HaAgent>(hc, std::move(h));
    ha_agent->start();
    spdlog::info("ha: {} mode, local SM {}, SMInfo every {} ms (timeout {} ms), failover after {} failures with the "
                 "plugin gone or {} failures over {} ms alone, promotion by {}{}",
                 ha::to_string(hc.mode), hc.local_sm ? guid_hex(hc.local_sm) : std::string("auto (the Unix socket's)"),
                 hc.poll_ms, hc.mad_timeout_ms, hc.fast_failures, hc.slow_failures, hc.slow_min_ms,
                 hc.promote_with == ha::kSmInfoDiscover   ? "DISCOVER"
                 : hc.promote_with == ha::kSmInfoHandover ? "HANDOVER"
                                                          : "HANDOVER (fast path) / DISCOVER (slow path)",
                 hc.fence.empty() ? "" : ", fence " + hc.fence[0]);
}

void Daemon::Impl::ha_wait() {
    ha_timer.expires_after(std::chrono::milliseconds(opt.config.ha.poll_ms));
    ha_timer.async_wait([this](const boost::system::error_code& ec) {
        if (ec || stopping) return;
        ha_step();
        ha_wait();
    });
}

void Daemon::Impl::ha_apply(HaBatch b) {
    if (!ha || stopping) return;
    for (const HaProbe& p : b.probes) ha->on_probe(p.guid, p.lid, p.reply, p.at_ms);
    if (b.local) ha->on_local_port(*b.local, wall_clock_ms());
    ha_step();
}

namespace {

// A peer on this host: the Unix socket, or TCP from a loopback address ("127.x.y.z:port", "[::1]:port").
bool same_host_peer(const std::string& peer) {
    return peer == "unix" || peer.rfind("127.", 0) == 0 || peer.rfind("[::1]:", 0) == 0;
}

// kill(pid, 0) answers for a pid of this pid namespace: ESRCH = no such process; EPERM = it exists
// (another user's, e.g. a root opensm seen by the ibfabric user). A zombie (killed, not yet reaped)
// is gone too: /proc/PID/stat's state field is Z or X.
bool pid_alive(uint32_t pid) {
    if (pid == 0 || pid > static_cast<uint32_t>(std::numeric_limits<pid_t>::max())) return false;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;  // hidden by ProtectProc: kill() said it exists
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return true;
    const char st = line[close + 2];
    return st != 'Z' && st != 'X';
}

}  // namespace

// An SM's plugin spoke (the state fed the engine): remember its opensm's pid when it runs on this
// host, so that its exit can later be a witness (ha_watch_gone).
void Daemon::Impl::ha_plugin(ConnId id, const SmInfo& sm) {
    if (!ha) return;
    const std::string peer = state.peer_of(id);
    auto rec = state.sms().find(sm.port_guid);
    if (rec == state.sms().end() || rec->second.pid == 0 || !same_host_peer(peer)) return;
    auto known = ha_local_pids.find(sm.port_guid);
    if (known != ha_local_pids.end() && known->second == rec->second.pid) return;
    // Seen alive once, from this host: only then can its absence later be a witness (a pid of another
    // pid namespace, e.g. a container's, is not seen alive here and is never watched).
    if (pid_alive(rec->second.pid)) ha_local_pids[sm.port_guid] = rec->second.pid;
    else ha_local_pids.erase(sm.port_guid);
}

// Runs every few ms while an SM on this host has closed its last connection: its pid gone is the
// management-network-independent witness that lets the engine promote without the flap window.
void Daemon::Impl::ha_watch_gone() {
    const int64_t now = wall_clock_ms();
    for (auto it = ha_gone_watch.begin(); it != ha_gone_watch.end();) {
        auto rec = state.sms().find(it->first);
        const bool back = rec != state.sms().end() && rec->second.connected();
        if (back || now > it->second.until_ms) {
            it = ha_gone_watch.erase(it);
        } else if (!pid_alive(it->second.pid)) {
            spdlog::info("ha: SM {}: its opensm (pid {}) on this host is gone", guid_hex(it->first), it->second.pid);
            ha->on_process_gone(it->first, now);
            relay_process_gone(it->first, it->second.pid);
            ha_local_pids.erase(it->first);
            it = ha_gone_watch.erase(it);
        } else {
            ++it;
        }
    }
    if (ha_gone_watch.empty() || stopping) return;
    ha_gone_timer.expires_after(std::chrono::milliseconds(5));
    ha_gone_timer.async_wait([this](const boost::system::error_code& ec) {
        if (ec || stopping) return;
        ha_watch_gone();
        ha_step();
    });
}

void Daemon::Impl::relay_process_gone(Guid sm, uint32_t pid) {
    if (opt.config.ha_agents.empty()) return;
    const std::string auth = token ? "Bearer " + *token : "";
    const std::string body = nlohmann::json{{"sm", guid_hex(sm)}, {"pid", pid}}.dump();
    sw_calls.post([urls = opt.config.ha_agents, auth, body, sm] {
        for (const std::string& u : urls) {
            auto url = parse_http_url(u);
            if (!url) continue;
            try {
                // Short: it is worth something only before the flap window would have decided.
                const HttpResult r = http_request(*url, "POST", "/api/v1/sm/process-gone", body, auth,
                                                  std::chrono::milliseconds(500));
                if (r.status == 200) spdlog::info("ha: SM {}: its opensm's exit told to the agent at {}", guid_hex(sm), u);
                else if (r.status == 409)  // that agent runs this SM itself (this node's own URL) or does not know it
                    spdlog::info("ha: SM {}: the agent at {} takes no process-gone: {}", guid_hex(sm), u, r.body);
                else spdlog::warn("ha: SM {}: {} answered {} to process-gone: {}", guid_hex(sm), u, r.status, r.body);
            } catch (const std::exception& e) {
                spdlog::warn("ha: SM {}: process-gone not told to {}: {}", guid_hex(sm), u, e.what());
            }
        }
    });
}

nlohmann::json Daemon::Impl::relayed_process_gone(const nlohmann::json& body) {
    IBF_ASSERT_ON_THREAD(io_owner);
    if (!body.is_object() || !body.contains("sm") || !body["sm"].is_string())
        throw InputError("", 0, 0, "'sm' must be the port GUID of the SM whose opensm exited");
    const auto sm = parse_guid(body["sm"].get<std::string>());
    if (!sm) throw InputError("", 0, 0, "'sm' must be a port GUID (0x...)");
    if (*sm == ha->local_sm()) throw ApiFailure(409, "SM " + guid_hex(*sm) + " runs on this node: its process is watched here");
    if (!ha->sms().count(*sm)) throw ApiFailure(409, "SM " + guid_hex(*sm) + " is not known to this agent");
    const uint32_t pid = body.contains("pid") && body["pid"].is_number_unsigned() ? body["pid"].get<uint32_t>() : 0;
    spdlog::info("ha: SM {}: its opensm (pid {}) is gone, says its node's agent", guid_hex(*sm), pid);
    ha->on_process_gone(*sm, wall_clock_ms());
    ha_step();
    return nlohmann::json{{"sm", guid_hex(*sm)}, {"accepted", true}};
}

void Daemon::Impl::ha_snapshot(ConnId id, const std::shared_ptr<const Snapshot>& snap) {
    IBF_ASSERT_ON_THREAD(io_owner);
    if (!ha || !snap || !state.sm_of_conn(id)) return;
    const Snapshot& s = *snap;  // the state fed it to the engine (on_plugin, on_snapshot)
    // Keep the local standby's guid2lid current from the master's sweeps (never while the local
    // SM is master: then OpenSM writes its own file).
    const std::string& file = opt.config.ha.guid2lid_file;
    const Guid local = ha->local_sm();
    auto lv = ha->sms().find(local);
    if (!file.empty() && s.self.state == SmState::Master && !s.initialization_error && s.self.port_guid != local &&
        lv != ha->sms().end() && lv->second.info.state == SmState::Standby &&
        ha->group_of(s.self.port_guid) == ha->group_of(local)) {
        // Made on the agent thread (proportional to the fabric) from the frozen snapshot the state
        // holds (no copy on the io thread): the master's LIDs merged into what was written before,
        // so a host that is down keeps its LID reserved (docs/ha-facts.md 4).
        ha_agent->write_file(file, [snap, prev = guid2lid_written]() -> std::optional<std::string> {
            ha::Guid2Lid m = ha::guid2lid_map(snap->fabric);
            if (m.empty()) return std::nullopt;  // never an empty map over a good file
            ha::Guid2Lid merged = ha::merge_guid2lid(*prev, m);
            if (merged == *prev) return std::nullopt;
            *prev = std::move(merged);
            return ha::guid2lid_text(*prev);
        });
    }
    ha_step();
}

void Daemon::Impl::ha_closed(Guid sm) {
    if (!ha) return;
    auto it = state.sms().find(sm);
    if (it != state.sms().end() && it->second.connected()) return;  // another connection still open
    auto pid = ha_local_pids.find(sm);
    if (pid != ha_local_pids.end()) {
        const bool idle = ha_gone_watch.empty();
        ha_gone_watch[sm] = GoneWatch{pid->second, wall_clock_ms() + opt.config.ha.flap_window_ms};
        if (idle) ha_watch_gone();
    }
    ha_step();
}

void Daemon::Impl::ha_step() {
    IBF_ASSERT_ON_THREAD(io_owner);
    if (!ha || stopping) return;
    const int64_t now = wall_clock_ms();
    // One table of the SMs' plugins (ControllerState, health.forget_sm_after_s): an SM it dropped
    // leaves the engine too, once the engine's own evidence (SMInfo answers) says nothing either.
    auto recorded = [this](Guid g) { return state.sms().count(g) > 0; };
    if (ha->forget_silent(recorded, now)) {
        std::erase_if(ha_local_pids, [&](const auto& p) { return !ha->sms().count(p.first); });
        std::erase_if(ha_gone_watch, [&](const auto& p) { return !ha->sms().count(p.first); });
    }
    std::vector<ha::Action> actions = ha->tick(now);
    if (history && ha->records_total() > ha_persisted) {  // new records: into SQLite, off the io thread
        const auto& h = ha->history();
        const size_t fresh = std::min<uint64_t>(ha->records_total() - ha_persisted, h.size());
        for (size_t i = h.size() - fresh; i < h.size(); ++i) {
            const int64_t at = h[i].decided_ms;
            ha_agent->run_task([store = history.get(), at, text = json_text(ha_record_json(h[i]))] {
                store->append_ha_event(at, text);
            });
        }
        ha_persisted = ha->records_total();
    }
    for (ha::Action& a : actions) {
        if (a.kind == ha::Action::Kind::log) {
            spdlog::info("ha: {}", a.text);
            continue;
        }
        if (a.kind == ha::Action::Kind::set_priority) {
            ha_set_priority(a.priority, a.running);
            continue;
        }
        spdlog::warn("ha: {}", a.kind == ha::Action::Kind::fence ? "running the fence command " + a.argv[0] : a.text);
        ha_agent->run_action(a);
    }
    // Only the master in question is probed back to back while suspect, and by overlapped bursts
    // (HaTarget::burst: one probe lost on the way does not hold back the next failures); an SM
    // that stopped answering long ago (a dead old master) once a second, not every poll_ms.
    std::vector<HaTarget> targets;
    const auto master = ha->master();
    for (const auto& [g, v] : ha->sms()) {
        if (!v.info.lid) continue;
        const bool gone = v.probe_failures >= opt.config.ha.slow_failures && master != g;
        if (gone && now - v.probe_ms < 1000) continue;
        targets.push_back({g, v.info.lid, master == g && ha->suspect(g, now), master == g});
    }
    auto same = [](const HaTarget& x, const HaTarget& y) {
        return x.guid == y.guid && x.lid == y.lid && x.urgent == y.urgent && x.burst == y.burst;
    };
    if (!std::equal(targets.begin(), targets.end(), ha_targets.begin(), ha_targets.end(), same)) {
        ha_targets = targets;
        ha_agent->set_targets(std::move(targets));
    }
    if (!opt.config.ha.track_file.empty()) {
        std::string t = ha::track_file_text(ha->local_is_master(now));
        if (t != ha_track) {
            ha_track = t;
            ha_agent->write_file(opt.config.ha.track_file, [t]() -> std::optional<std::string> { return t; });
        }
    }
    ha_unstrand(now);
    if (!ha_role) ha_role.emplace(opt.config.ha.flap_window_ms);
    const std::optional<ha::FabricRole> was = ha_role->published() ? std::optional(ha_role->published()->role) : std::nullopt;
    const ha::RoleDecision& role = ha_role->step(ha::role_view(*ha, now), now);
    if (role.role != was)  // at most twice per flap_window_ms (RoleHold)
        spdlog::warn("ha: this daemon now publishes the fabric's findings as {} ({})", ha::to_string(role.role), role.why);
    state.set_ha_findings(ha::ha_findings(*ha, state.current().get(), now));
}

// The engine's set_priority (an SM stepping aside, ha_engine.h): the same edit as POST
// /api/v1/sm/priority, run off the io thread; the outcome is logged.
void Daemon::Impl::ha_set_priority(int prio, bool running) {
    IBF_ASSERT_ON_THREAD(io_owner);
    if (!running) {  // this node's SM is not running: its opensm.conf for the next start, no SIGHUP
        const ha::HaConfig& hc = opt.config.ha;
        if (hc.sm_helper.empty() && hc.opensm_conf.empty()) return;
        // The helper writes, then finds no opensm to signal; the direct path signals nobody (pid 0).
        run_priority_job(priority_job(prio, 0, true), [prio](nlohmann::json, std::exception_ptr e) {
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                spdlog::info("ha: sm_priority {} for the next start of this node's SM: {}", prio, x.what());
            }
        });
        return;
    }
    auto failed = [prio](nlohmann::json, std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            spdlog::error("ha: sm_priority {} not set: {}", prio, x.what());
        }
    };
    try {  // the same path as POST /api/v1/sm/priority: through ha.sm_helper when configured
        set_local_priority(nlohmann::json{{"priority", static_cast<unsigned>(prio)}}, failed);
    } catch (...) {
        failed(nullptr, std::current_exception());
    }
}

// POST /api/v1/sm/priority: rewrites `sm_priority` in the local opensm.conf and sends the local
// opensm SIGHUP, which makes it re-read the option (and, if it now outranks the master, ask for
// the mastership: trap 144, handover); with ha.sm_helper the root helper does both. The switchover
// command uses it on two nodes. The body and the pid are checked here (InputError thrown at once);
// the file, /proc and the helper's socket are touched on `local_sm_calls`, and `done` gets the
// answer back on the io thread: the io thread never waits for them (up to 5 s for the helper).
void Daemon::Impl::set_local_priority(const nlohmann::json& body, SmCallDone done) {
    IBF_ASSERT_ON_THREAD(io_owner);
    const ha::HaConfig& hc = opt.config.ha;
    if (!body.is_object() || !body.contains("priority") || !body["priority"].is_number_unsigned() ||
        body["priority"].get<uint64_t>() > 15)
        throw InputError("", 0, 0, "the body must be {\"priority\": 0..15}");
    const int prio = body["priority"].get<int>();
    if (!hc.sm_helper.empty()) return run_priority_job(priority_job(prio, 0, false), std::move(done));
    if (hc.opensm_conf.empty()) throw InputError("", 0, 0, "ha.opensm_conf is not configured on this node");
    const Guid local = ha->local_sm();
    auto rec = state.sms().find(local);
    if (!local || rec == state.sms().end() || !rec->second.connected() || rec->second.pid == 0)
        throw InputError("", 0, 0, "this node's OpenSM is not connected: its pid is unknown");
    run_priority_job(priority_job(prio, static_cast<int>(rec->second.pid), false), std::move(done));
}

// What sets this node's sm_priority, as a job for `local_sm_calls`: through the root helper
// (ha.sm_helper, the packaged units: it rewrites its own opensm.conf and signals the opensm it finds
// itself; the daemon names neither file nor pid), else opensm.conf and SIGHUP to `pid` (0: the file
// only, for the SM's next start). Logs what it did; throws what set_opensm_priority / call_sm_helper throw.
std::function<nlohmann::json()> Daemon::Impl::priority_job(int prio, int pid, bool next_start) {
    const ha::HaConfig& hc = opt.config.ha;
    const std::string local = guid_hex(ha->local_sm());
    auto before_json = [](int b) { return b < 0 ? nlohmann::json(nullptr) : nlohmann::json(b); };
    if (!hc.sm_helper.empty())
        return [sock = hc.sm_helper, prio, local, before_json] {
            const std::string a = call_sm_helper(sock, priority_request(prio));
            const int before = answer_field(a, "before"), pid = answer_field(a, "pid");
            spdlog::warn("ha: sm_priority of this node's SM {} set {} -> {} by the helper at {}; opensm (pid {}) re-reads it on SIGHUP",
                         local, before, prio, sock, pid);
            return nlohmann::json{{"sm", local}, {"priority_before", before_json(before)}, {"priority", prio},
                                  {"opensm_pid", pid}, {"sm_helper", sock}};
        };
    return [conf = hc.opensm_conf, prio, pid, next_start, local, before_json] {
        const int before = set_opensm_priority(conf, pid, prio).before;
        if (next_start)
            spdlog::warn("ha: sm_priority of this node's SM {} set {} -> {} in {} for its next start (it is not running)",
                         local, before, prio, conf);
        else
            spdlog::warn("ha: sm_priority of this node's SM {} set {} -> {} in {}; opensm (pid {}) re-reads it on SIGHUP",
                         local, before, prio, conf, pid);
        return nlohmann::json{{"sm", local}, {"priority_before", before_json(before)}, {"priority", prio},
                              {"opensm_pid", pid}, {"opensm_conf", conf}};
    };
}

// Runs `job` on `local_sm_calls` (one at a time, in the order asked: a step-aside and a switchover
// step keep theirs) and hands its answer or exception to `done` on the io thread.
void Daemon::Impl::run_priority_job(std::function<nlohmann::json()> job, SmCallDone done) {
    local_sm_calls.post([this, job = std::move(job), done = std::move(done)]() mutable {
        nlohmann::json answer;
        std::exception_ptr error;
        try {
            answer = job();
        } catch (...) {
            error = std::current_exception();
        }
        asio::post(io, [this, done = std::move(done), answer = std::move(answer), error]() mutable {
            if (!stopping) done(std::move(answer), error);
        });
    });
}

// POST /api/v1/sm/state: {"set": "disable"} or {"set": "standby", "master": GUID}: the HA thread
// sends this node's SM SubnSet(SMInfo) DISABLE (STANDBY -> NOT_ACTIVE) or STANDBY (NOT_ACTIVE ->
// STANDBY, polling `master`). Answers at once; the result is logged, and the caller watches the
// SM's state in GET /api/v1/sm (docs/ha.md "Graceful switchover").
nlohmann::json Daemon::Impl::set_local_sm_state(const nlohmann::json& body) {
    const std::string set = body.is_object() && body.contains("set") && body["set"].is_string() ? body["set"].get<std::string>() : "";
    const bool standby = set == "standby";
    std::optional<Guid> master;
    if (standby && body.contains("master") && body["master"].is_string()) master = parse_guid(body["master"].get<std::string>());
    if (!(set == "disable" || (standby && master)))
        throw InputError("", 0, 0, "the body must be {\"set\": \"disable\"} or {\"set\": \"standby\", \"master\": GUID}");
    const Guid local = ha->local_sm();
    auto v = ha->sms().find(local);
    if (!local || v == ha->sms().end() || v->second.info.lid == 0)
        throw InputError("", 0, 0, "this node's SM and its LID are not known yet");
    const uint16_t lid = v->second.info.lid;
    const uint32_t mod = standby ? ha::kSmInfoStandby : ha::kSmInfoDisable;
    if (!standby) last_disable_ms = wall_clock_ms();
    ha_agent->run_with_port([lid, mod, set, m = master.value_or(0)](ha::SmpPort* port) {
        if (!port) return spdlog::warn("ha: SubnSet(SMInfo) {} to this node's SM not sent: no MAD port", set);
        const ha::SmInfoReply r = port->set_sminfo_as(lid, mod, SmState::Master, m);
        if (r.status == ha::SmpStatus::ok)
            spdlog::warn("ha: SubnSet(SMInfo) {} to this node's SM (LID {}) accepted in {:.1f} ms", set, lid, r.rtt_ms);
        else
            spdlog::warn("ha: SubnSet(SMInfo) {} to this node's SM (LID {}) failed: {}", set, lid, r.error);
    });
    return nlohmann::json{{"sm", guid_hex(local)}, {"lid", lid}, {"set", set},
                          {"master", master ? nlohmann::json(guid_hex(*master)) : nlohmann::json(nullptr)}, {"queued", true}};
}

}  // namespace ibf
