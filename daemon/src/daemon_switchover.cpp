// A graceful switchover run by the daemon (docs/ha.md "Graceful switchover"): POST
// /api/v1/sm/switchover starts it, GET /api/v1/sm shows it (ha.switchover), POST
// /api/v1/sm/switchover/abort rolls it back. The pure ha::SwitchoverRun decides every step and the
// rollback; this file carries them out: this node's SM directly, the others through their agents
// (ha.agents) over HTTP on the sw_calls thread. Nothing depends on the client that asked: a client
// killed mid-way leaves the daemon to finish or roll back. io thread, except the sw_calls tasks,
// which only post back here.
#include <spdlog/spdlog.h>

#include "daemon_impl.h"
#include "ibf/clock.h"
#include "ibf/error.h"
#include "ibf/history_api.h"
#include "ibf/http_client.h"
#include "ibf/report.h"

namespace ibf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

constexpr auto kTick = std::chrono::milliseconds(20);
constexpr auto kAgentTimeout = std::chrono::milliseconds(3000);

json when(int64_t ms) { return ms ? json(iso_time(ms)) : json(nullptr); }

// The step as the agent of its SM takes it: POST path and body (await_master: nothing).
std::pair<std::string, json> step_call(const ha::SwitchoverStep& s) {
    using K = ha::SwitchoverStep::Kind;
    // unsigned, as a JSON text of it parses (set_local_priority takes only unsigned numbers)
    if (s.kind == K::set_priority) return {"/api/v1/sm/priority", json{{"priority", static_cast<unsigned>(s.priority)}}};
    if (s.kind == K::disable) return {"/api/v1/sm/state", json{{"set", "disable"}}};
    return {"/api/v1/sm/state", json{{"set", "standby"}, {"master", guid_hex(s.other)}}};
}

// The SM each agent runs (its GET /api/v1/sm names ha.local_sm). Blocking: the sw_calls thread.
std::map<Guid, std::string> find_agents(const std::vector<std::string>& urls, const std::string& auth,
                                        std::string& error) {
    std::map<Guid, std::string> out;
    for (const std::string& u : urls) {
        auto url = parse_http_url(u);
        if (!url) continue;  // the config parser accepts only http:// URLs
        try {
            const HttpResult r = http_request(*url, "GET", "/api/v1/sm", "", auth, kAgentTimeout);
            const json j = json::parse(r.body, nullptr, false);
            const json* local = j.is_object() && j.contains("ha") && j["ha"].is_object() && j["ha"].contains("local_sm")
                                    ? &j["ha"]["local_sm"] : nullptr;
            if (r.status == 200 && local && local->is_string())
                if (auto g = parse_guid(local->get<std::string>())) out.emplace(*g, u);
        } catch (const std::exception& e) {
            error += (error.empty() ? "" : "; ") + u + ": " + e.what();
        }
    }
    return out;
}

}  // namespace

json Daemon::Impl::switchover_json() const {
    if (!sw) return nullptr;
    const SwitchoverJob& j = *sw;
    const auto& run = *j.run;
    const std::string state = !j.refused.empty() ? "refused"
                              : j.resolving      ? "starting"
                                                 : std::string(ha::to_string(run.state()));
    json log = json::array();
    for (const json& l : j.log) log.push_back(l);
    const int64_t end = j.finished_ms ? j.finished_ms : wall_clock_ms();
    return json{{"id", j.id},
                {"state", state},
                {"finished", j.finished_ms != 0},
                {"from", guid_hex(j.master)},
                {"to", guid_hex(j.target)},
                {"summary", run.plan().summary},
                {"started", when(j.started_ms)},
                {"ended", when(j.finished_ms)},
                {"ms", end - j.started_ms},
                {"step", std::min(run.step() + 1, run.plan().steps.size())},
                {"steps_total", run.plan().steps.size()},
                {"steps", j.steps},
                {"outcome", !j.refused.empty() ? j.refused : run.outcome()},
                {"log", log}};
}

void Daemon::Impl::sw_log(std::string line) {
    if (!sw || line.empty()) return;
    spdlog::warn("ha: switchover {}: {}", sw->id, line);
    sw->log.push_back(json{{"at", iso_time(wall_clock_ms())}, {"text", std::move(line)}});
    while (sw->log.size() > SwitchoverJob::kLogLines) sw->log.pop_front();
}

// POST /api/v1/sm/switchover {"to": GUID, "step_timeout_ms": N}: refused (409) before any change
// unless the master is a live MASTER and the target a live STANDBY (SwitchoverRun::start).
json Daemon::Impl::start_switchover(const json& body) {
    if (!body.is_object()) throw InputError("", 0, 0, "the body must be {\"to\": GUID} (optionally \"step_timeout_ms\")");
    if (sw && !sw->finished_ms)
        throw ApiFailure(409, "switchover " + std::to_string(sw->id) + " is still running (" + sw->run->plan().summary +
                                  "): wait for it or POST /api/v1/sm/switchover/abort");
    const int64_t now = wall_clock_ms();
    ha::SwitchoverTiming timing;
    if (body.contains("step_timeout_ms")) {
        const json& t = body["step_timeout_ms"];
        if (!t.is_number_unsigned() || t.get<uint64_t>() < 1000 || t.get<uint64_t>() > 600000)
            throw InputError("", 0, 0, "'step_timeout_ms' must be an integer from 1000 to 600000");
        timing.step_timeout_ms = t.get<int>();
    }
    const auto master = ha->master();
    if (!master) throw ApiFailure(409, "no switchover: no live master is known");
    std::optional<Guid> target;
    if (body.contains("to") && body["to"].is_string()) target = parse_guid(body["to"].get<std::string>());
    else if (!body.contains("to")) target = ha->successor(now);
    if (!target) throw InputError("", 0, 0, "'to' must be a port GUID; without it the designated successor is taken, and there is none");
    auto started = ha::SwitchoverRun::start(*master, *target, ha::switchover_views(*ha, now), timing, now);
    if (auto* why = std::get_if<std::string>(&started)) throw ApiFailure(409, "no switchover: " + *why);
    SwitchoverJob job;
    job.id = sw_next_id++;
    job.master = *master;
    job.target = *target;
    job.run.emplace(std::move(std::get<ha::SwitchoverRun>(started)));
    job.started_ms = job.step_started_ms = now;
    sw = std::move(job);
    sw_log("started: " + sw->run->plan().summary);
    const std::string auth = token ? "Bearer " + *token : "";
    sw_calls.post([this, id = sw->id, urls = opt.config.ha_agents, auth] {
        std::string error;
        auto agents = find_agents(urls, auth, error);
        asio::post(io, [this, id, agents = std::move(agents), error = std::move(error)]() mutable {
            sw_resolved(id, std::move(agents), std::move(error));
        });
    });
    return switchover_json();
}

// Every SM of the pair needs an agent before anything is sent: refused (nothing changed) otherwise.
void Daemon::Impl::sw_resolved(uint64_t id, std::map<Guid, std::string> agent_of, std::string error) {
    if (!sw || sw->id != id || stopping) return;
    agent_of[ha->local_sm()] = "";
    sw->agent_of = std::move(agent_of);
    sw->resolving = false;
    for (Guid g : {sw->master, sw->target})
        if (!sw->agent_of.count(g)) {
            sw->refused = "no HA agent runs SM " + guid_hex(g) + ": list it in ha.agents of this node" +
                          (error.empty() ? "" : " (" + error + ")");
            sw->finished_ms = wall_clock_ms();
            sw_log("refused before any change: " + sw->refused);
            return;
        }
    sw_tick();
}

json Daemon::Impl::abort_switchover() {
    if (!sw || sw->finished_ms) throw ApiFailure(409, "no switchover is running");
    if (sw->resolving) {
        sw->refused = "aborted before any change";
        sw->finished_ms = wall_clock_ms();
    } else {
        sw->run->abort("aborted by POST /api/v1/sm/switchover/abort", wall_clock_ms());
    }
    sw_log("abort requested");
    return switchover_json();
}

void Daemon::Impl::sw_tick() {
    if (!sw || sw->finished_ms || sw->resolving || stopping) return;
    const int64_t now = wall_clock_ms();
    ha::SwitchoverRun& run = *sw->run;
    ha::SwitchoverRun::Todo todo = run.next(ha::switchover_views(*ha, now), now);
    for (; sw->step_seen < run.step(); ++sw->step_seen) {  // steps that took effect since the last tick
        sw->steps.push_back(json{{"step", run.plan().steps[sw->step_seen].text}, {"ms", now - sw->step_started_ms}});
        sw->step_started_ms = now;
    }
    sw_log(std::move(todo.log));
    if (todo.send) sw_send(*todo.send);
    if (run.finished()) {
        sw->finished_ms = now;
        spdlog::warn("ha: switchover {} {} in {} ms{}", sw->id, ha::to_string(run.state()), now - sw->started_ms,
                     run.outcome().empty() ? "" : ": " + run.outcome());
        return;
    }
    sw_timer.expires_after(kTick);
    sw_timer.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) sw_tick();
    });
}

// This node's SM directly; another SM through its agent. A failure is logged: the run sends the
// step again after resend_ms and rolls back when it never shows.
void Daemon::Impl::sw_send(const ha::SwitchoverStep& s) {
    if (s.kind == ha::SwitchoverStep::Kind::await_master) return;
    const auto [path, body] = step_call(s);
    const std::string& agent = sw->agent_of.at(s.sm);
    if (agent.empty()) {  // as for another agent's step: a failure is logged when it comes back
        auto failed = [this, id = sw->id, what = s.text](json, std::exception_ptr e) {
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                if (sw && sw->id == id) sw_log(what + ": not carried out here: " + x.what());
            }
        };
        try {
            if (s.kind == ha::SwitchoverStep::Kind::set_priority) set_local_priority(body, failed);
            else set_local_sm_state(body);
        } catch (...) {
            failed(nullptr, std::current_exception());
        }
        return;
    }
    const std::string auth = token ? "Bearer " + *token : "";
    sw_calls.post([this, id = sw->id, agent, path = path, text = body.dump(), what = s.text, auth] {
        std::string failure;
        try {
            const HttpResult r = http_request(*parse_http_url(agent), "POST", path, text, auth, kAgentTimeout);
            if (r.status != 200) failure = agent + path + " answered " + std::to_string(r.status) + ": " + r.body;
        } catch (const std::exception& e) {
            failure = agent + ": " + e.what();
        }
        if (failure.empty()) return;
        asio::post(io, [this, id, line = what + ": not carried out: " + failure] {
            if (sw && sw->id == id) sw_log(line);
        });
    });
}

// The backstop of the stranded rule (ha::stranded_standby_master): this node's SM left NOT_ACTIVE
// by a DISABLE whose run is gone is told STANDBY, polling the live master, every 5 s until it is.
void Daemon::Impl::ha_unstrand(int64_t now) {
    const Guid local = ha->local_sm();
    auto v = ha->sms().find(local);
    if (!local || v == ha->sms().end() || !v->second.info.lid) return;
    const auto views = ha::switchover_views(*ha, now);
    ha::StrandedSm s;
    s.local = views.at(local);
    if (s.local.state != SmState::NotActive) local_not_active_ms = 0;
    else if (!local_not_active_ms) local_not_active_ms = now;
    s.not_active_since_ms = local_not_active_ms;
    s.last_disable_ms = last_disable_ms;
    s.run_active = sw && !sw->finished_ms;
    if (auto m = ha->master(); m && views.count(*m)) s.master = views.at(*m);
    const int after_ms = ha::SwitchoverTiming{}.step_timeout_ms * 3 / 2;
    const auto master = ha::stranded_standby_master(s, now, after_ms);
    if (!master || now - unstrand_sent_ms < 5000) return;
    unstrand_sent_ms = now;
    spdlog::warn("ha: this node's SM {} has been NOT_ACTIVE for {} ms (it polls nobody: nothing can fail over to it): "
                 "SubnSet(SMInfo) STANDBY, polling the master {}",
                 guid_hex(local), now - std::max(local_not_active_ms, last_disable_ms), guid_hex(*master));
    const uint16_t lid = v->second.info.lid;
    ha_agent->run_with_port([lid, m = *master](ha::SmpPort* port) {
        if (!port) return spdlog::warn("ha: SubnSet(SMInfo) STANDBY to this node's SM not sent: no MAD port");
        const ha::SmInfoReply r = port->set_sminfo_as(lid, ha::kSmInfoStandby, SmState::Master, m);
        if (r.status != ha::SmpStatus::ok) spdlog::warn("ha: SubnSet(SMInfo) STANDBY to this node's SM failed: {}", r.error);
    });
}

}  // namespace ibf
