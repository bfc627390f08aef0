// ha_findings(): SM findings from the engine's view (ha_findings.h). Pure.
#include "ibf/ha_findings.h"
#include "ibf/ha_rank.h"

#include <algorithm>
#include <map>

namespace ibf::ha {
namespace {

// The node an SM port belongs to in `s` (name and node GUID), if it is there.
Endpoint sm_endpoint(Guid sm, const Snapshot* s) {
    Endpoint ep;
    ep.name = "SM " + guid_hex(sm);
    if (!s) return ep;
    for (const Node& n : s->fabric.nodes())
        for (const Port& p : n.ports)
            if (p.valid && p.guid == sm) {
                ep.name = n.name.empty() ? ep.name : n.name;
                ep.guid = n.guid;
                ep.port = p.num;
                return ep;
            }
    return ep;
}

Finding make(FindingKind k, Guid sm, const Snapshot* s, std::string expected, std::string actual, std::string msg) {
    Finding f;
    f.kind = k;
    f.severity = default_severity(k);
    f.a = sm_endpoint(sm, s);
    f.expected = std::move(expected);
    f.actual = std::move(actual);
    f.message = std::move(msg);
    return f;
}

std::string state_name(SmState s) { return std::string(to_string(s)); }

void split_brain(const HaEngine& e, const Snapshot* s, int64_t now, std::vector<Finding>& out) {
    std::map<int, std::vector<Guid>> masters;  // group -> live masters
    for (const auto& [g, v] : e.sms())
        if (v.info.state == SmState::Master && e.alive(v, now)) masters[e.group_of(g)].push_back(g);
    for (const auto& [group, ms] : masters) {
        if (ms.size() < 2) continue;
        std::string list;
        for (Guid g : ms) list += (list.empty() ? "" : ", ") + guid_hex(g);
        // Escalated by this agent: both GUIDs and what was tried, not "OpenSM will resolve it".
        const auto& sb = e.split_brain();
        const bool stuck = sb && std::find(ms.begin(), ms.end(), sb->a) != ms.end() &&
                           std::find(ms.begin(), ms.end(), sb->b) != ms.end();
        const std::string cause = stuck ? "still two masters (" + guid_hex(sb->a) + " and " + guid_hex(sb->b) +
                                              ") after " + sb->tried + ", " +
                                              std::to_string((now - sb->first_ms) / 1000) + " s: stop the SM that must not be master"
                                        : "a partitioned fabric or a forced takeover; heal the partition or stop the "
                                          "SM that must not be master";
        for (Guid g : ms) {
            out.push_back(make(FindingKind::sm_split_brain, g, s, "one MASTER", std::to_string(ms.size()) + " MASTERs",
                               "SM " + guid_hex(g) + " is MASTER while " + std::to_string(ms.size() - 1) +
                                   " other SM(s) of the same subnet are too (" + list + "): " + cause));
            if (stuck) out.back().severity = Severity::critical;  // healing failed: a person must act
        }
    }
}

void activity(const HaEngine& e, const Snapshot* s, int64_t now, std::vector<Finding>& out) {
    const int stall = e.config().stall_ms;
    for (const auto& [g, v] : e.sms()) {
        if (!e.alive(v, now) || !v.act_count_changed_ms || now - v.act_count_changed_ms < stall) continue;
        const std::string still = "ActCount " + std::to_string(v.act_count_seen) + " unchanged for " +
                                  std::to_string((now - v.act_count_changed_ms) / 1000) + " s";
        if (v.info.state == SmState::Master && e.not_sweeping(v, now)) continue;  // said by sweeping()
        if (v.info.state == SmState::Master)
            out.push_back(make(FindingKind::sm_stalled, g, s, "ActCount increasing", still,
                               "master SM " + guid_hex(g) + " sends no MADs (" + still +
                                   "): it may be hung; check its log and consider a switchover"));
        else if (v.info.state == SmState::Standby)
            out.push_back(make(FindingKind::sm_standby_not_polling, g, s, "ActCount increasing", still,
                               "standby SM " + guid_hex(g) + " does not poll the master (" + still +
                                   "): it will not notice a dead master; check sminfo_polling_timeout and its log"));
    }
}

// A switchover moves the configured priorities between the SMs (15/14 -> 14/15): the same
// priorities, exchanged, are not a mismatch of the configuration.
bool priorities_exchanged(const HaEngine& e) {
    std::vector<int> want, have;
    for (const auto& [g, p] : e.config().expected_priorities)
        if (auto it = e.sms().find(g); it != e.sms().end()) {
            want.push_back(p);
            have.push_back(it->second.info.priority);
        }
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    return want == have;
}

// An SM that stepped aside (docs/ha.md rule 9): a STANDBY at exactly the highest priority that
// ranks below the live master, whose configured priority would outrank it. Its own agent lowered
// it so that it does not preempt the master; any daemon of the pair can tell it from SMInfo alone.
bool stepped_aside(const HaEngine& e, Guid g, const SmView& v, int configured) {
    const std::optional<Guid> m = e.master();
    if (!m || *m == g || v.info.state != SmState::Standby) return false;
    const auto mv = e.sms().find(*m);
    if (mv == e.sms().end()) return false;
    const uint8_t mp = mv->second.info.priority;
    if (!sm_outranks(static_cast<uint8_t>(configured), g, mp, *m)) return false;  // would not preempt anyway
    const int aside = g > *m ? mp : mp - 1;  // the highest priority that ranks below the master
    return v.info.priority == aside;
}

void configuration(const HaEngine& e, const Snapshot* s, std::vector<Finding>& out) {
    const HaConfig& c = e.config();
    const bool exchanged = priorities_exchanged(e);
    for (const auto& [g, v] : e.sms()) {
        if (!c.expected_sms.empty() && std::find(c.expected_sms.begin(), c.expected_sms.end(), g) == c.expected_sms.end())
            out.push_back(make(FindingKind::sm_unknown, g, s, "a configured SM", guid_hex(g),
                               "SM " + guid_hex(g) + " (" + state_name(v.info.state) +
                                   ") is not in ha.expect.sms: an unplanned opensm is running; stop it or add it"));
        auto p = c.expected_priorities.find(g);
        if (p != c.expected_priorities.end() && v.info.priority != p->second && !exchanged &&
            stepped_aside(e, g, v, p->second)) {
            Finding f = make(FindingKind::sm_config_mismatch, g, s, "priority " + std::to_string(p->second),
                             "priority " + std::to_string(v.info.priority),
                             "SM " + guid_hex(g) + " stepped aside: its agent lowered sm_priority " +
                                 std::to_string(p->second) + " -> " + std::to_string(v.info.priority) +
                                 " below the master " + guid_hex(*e.master()) +
                                 " while its port was down, so that it does not preempt it; it gets it back when it is "
                                 "MASTER again, or `ibfabric sm switchover --to " + guid_hex(g) + "` now");
            f.severity = Severity::info;
            out.push_back(std::move(f));
        } else if (p != c.expected_priorities.end() && v.info.priority != p->second && !exchanged)
            out.push_back(make(FindingKind::sm_config_mismatch, g, s, "priority " + std::to_string(p->second),
                               "priority " + std::to_string(v.info.priority),
                               "SM " + guid_hex(g) + " runs with sm_priority " + std::to_string(v.info.priority) +
                                   ", the configuration says " + std::to_string(p->second) +
                                   ": fix sm_priority in that node's opensm.conf"));
    }
}

// Ports of the master's own sweep that were told another master SM LID (left over from a split
// brain, or a port that refused the new master's PortInfo Set): one finding per node.
void master_lid(const Snapshot* s, std::vector<Finding>& out) {
    if (!s || s->self.state != SmState::Master || s->self.lid == 0) return;
    for (const Node& n : s->fabric.nodes()) {
        std::string ports, seen;
        for (const Port& p : n.ports)
            if (p.valid && p.master_sm_lid && p.master_sm_lid != s->self.lid && p.state == PortState::Active) {
                ports += (ports.empty() ? "" : ",") + std::to_string(p.num);
                seen = std::to_string(p.master_sm_lid);
            }
        if (ports.empty()) continue;
        Finding f;
        f.kind = FindingKind::sm_master_lid_mismatch;
        f.severity = default_severity(f.kind);
        f.a = {n.name, n.guid, 0};
        f.expected = "MasterSMLID " + std::to_string(s->self.lid);
        f.actual = "MasterSMLID " + seen;
        f.message = n.name + " port(s) " + ports + " point at SM LID " + seen + ", the master " +
                    guid_hex(s->self.port_guid) + " is LID " + std::to_string(s->self.lid) +
                    ": its traps and SA queries go astray; a heavy sweep (or re-plugging the port) resets it";
        out.push_back(std::move(f));
    }
}

// SMs of one subnet must share sm_key: OpenSM ignores SMInfo from an SM with another key, and two
// masters with different keys never resolve.
void keys(const HaEngine& e, const Snapshot* s, std::vector<Finding>& out) {
    std::map<int, std::map<uint64_t, std::vector<Guid>>> by;  // group -> key -> SMs
    for (const auto& [g, v] : e.sms())
        if (v.sm_key) by[e.group_of(g)][v.sm_key].push_back(g);
    for (const auto& [group, ks] : by) {
        if (ks.size() < 2) continue;
        for (const auto& [key, sms] : ks)
            for (Guid g : sms)
                out.push_back(make(FindingKind::sm_config_mismatch, g, s, "one sm_key in the subnet",
                                   "sm_key " + guid_hex(key),
                                   "SM " + guid_hex(g) + " answers SMInfo with sm_key " + guid_hex(key) + " while " +
                                       std::to_string(ks.size() - 1) +
                                       " other key(s) are in use in its subnet: set one sm_key in every opensm.conf"));
    }
}

// The opensm.conf settings every SM node of a subnet must share, as the plugins' Hellos sent them.
void drift(const HaEngine& e, const Snapshot* s, std::vector<Finding>& out) {
    using Field = std::pair<const char*, std::string (*)(const SmConf&)>;
    static const Field fields[] = {
        {"routing_engine", [](const SmConf& c) { return c.routing_engine.empty() ? std::string("(default)") : c.routing_engine; }},
        {"root_guid_file", [](const SmConf& c) { return c.root_guid_file; }},
        {"cn_guid_file", [](const SmConf& c) { return c.cn_guid_file; }},
        {"lmc", [](const SmConf& c) { return std::to_string(c.lmc); }},
        {"honor_guid2lid_file", [](const SmConf& c) { return std::string(c.honor_guid2lid ? "TRUE" : "FALSE"); }},
        {"sm_key", [](const SmConf& c) { return "digest " + c.sm_key_digest; }},
    };
    std::map<int, std::vector<const SmView*>> groups;
    for (const auto& [g, v] : e.sms())
        if (v.conf) groups[e.group_of(g)].push_back(&v);
    for (const auto& [group, vs] : groups)
        for (const auto& [name, get] : fields) {
            std::map<std::string, std::vector<Guid>> by;
            for (const SmView* v : vs) by[get(*v->conf)].push_back(v->info.port_guid);
            if (by.size() < 2) continue;
            std::string all;
            for (const auto& [val, gs] : by)
                for (Guid g : gs) all += (all.empty() ? "" : ", ") + guid_hex(g) + " " + (val.empty() ? "(none)" : val);
            for (const auto& [val, gs] : by)
                for (Guid g : gs)
                    out.push_back(make(FindingKind::sm_conf_drift, g, s, std::string("one ") + name + " on every SM node",
                                       std::string(name) + " " + (val.empty() ? "(none)" : val),
                                       std::string("the SM nodes' opensm.conf disagree on ") + name + " (" + all +
                                           "): after a failover the fabric would be run differently; make them equal"));
        }
}

// A MASTER that owes a sweep (it became MASTER, started one, or a trap reported a change) and
// reached no SUBNET UP: no LID for a host that comes up, no trap handled. From the plugin's events,
// not ActCount (which counts every SMP it sends, its replies to our SMInfo probes included).
// Critical: every change of the fabric goes unhandled while it lasts.
void sweeping(const HaEngine& e, const Snapshot* s, int64_t now, std::vector<Finding>& out) {
    for (const auto& [g, v] : e.sms()) {
        std::string why;
        if (!e.not_sweeping(v, now, &why)) continue;
        out.push_back(make(FindingKind::sm_not_sweeping, g, s, "SUBNET UP within " +
                               std::to_string(e.config().sweep_timeout_ms / 1000) + " s", "no SUBNET UP",
                           "master SM " + guid_hex(g) + " is " + why +
                               ": hosts that come up get no LID; its successor takes over through ha.fence, or restart it"));
    }
}

void standby(const HaEngine& e, const Snapshot* s, int64_t now, std::vector<Finding>& out) {
    if (e.config().mode == Mode::off) return;
    const auto m = e.master();
    if (!m || !e.alive(e.sms().at(*m), now)) return;
    const int group = e.group_of(*m);
    for (const auto& [g, v] : e.sms())
        if (g != *m && e.group_of(g) == group && v.info.state == SmState::Standby && e.alive(v, now)) return;
    // What to do depends on why the other SM is no standby: a port missing from the master's sweep
    // is a cable or a node that is down (its opensm may well run, alone), not an opensm to start.
    std::string todo = "start the standby's opensm";
    for (const auto& [g, v] : e.sms()) {
        if (g == *m) continue;
        if ((s && sm_endpoint(g, s).port == 0) || e.group_of(g) != group) {
            todo = "SM " + guid_hex(g) + " (" + state_name(v.info.state) +
                   ") is not in the master's subnet: check its cable and port (ibstat on its node), then that its opensm runs";
            break;
        }
        if (!e.alive(v, now)) todo = "SM " + guid_hex(g) + " does not answer: start its opensm";
        else if (v.info.state != SmState::Standby) todo = "SM " + guid_hex(g) + " is " + state_name(v.info.state) + ", not STANDBY: restart its opensm";
    }
    out.push_back(make(FindingKind::sm_no_standby, *m, s, "at least one live STANDBY", "none",
                       "master SM " + guid_hex(*m) + " has no live standby: if it dies nothing takes over; " + todo));
}

void lids(const HaEngine& e, const Snapshot* s, std::vector<Finding>& out) {
    for (const auto& c : e.lid_changes()) {
        Finding f = make(FindingKind::lid_changed, c.port_guid, s, "LID " + std::to_string(c.before),
                         "LID " + std::to_string(c.after),
                         "port " + guid_hex(c.port_guid) + " changed LID " + std::to_string(c.before) + " -> " +
                             std::to_string(c.after) +
                             " across the latest master change: keep the standbys' guid2lid current "
                             "(ha.guid2lid_file) and honor_guid2lid_file TRUE");
        out.push_back(std::move(f));
    }
}

}  // namespace

std::vector<Finding> ha_findings(const HaEngine& e, const Snapshot* current, int64_t now_ms) {
    std::vector<Finding> out;
    split_brain(e, current, now_ms, out);
    master_lid(current, out);
    activity(e, current, now_ms, out);
    sweeping(e, current, now_ms, out);
    configuration(e, current, out);
    keys(e, current, out);
    drift(e, current, out);
    standby(e, current, now_ms, out);
    lids(e, current, out);
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.kind < b.kind; });
    return out;
}

}  // namespace ibf::ha
