// Administrative HA operations as pure plans: the steps of a graceful switchover (and when each has
// taken effect), the choice of a switchover target by name, and the validation of keepalived's
// notify arguments. The CLI (tools/cmd_sm.cpp) carries the steps out through the SM nodes' agents.
//
//   auto plan = ibf::ha::switchover_plan({m, 15, SmState::Master, true}, {t, 14, SmState::Standby, true});
//   // plan->steps: DISABLE t, STANDBY t (polling m), m priority 13 (m hands over), await t MASTER,
//   //              t priority 15, DISABLE m, m priority 14, STANDBY m (polling t)   -- docs/ha.md
//   bool done = ibf::ha::step_done(plan->steps[0], views);   // views: what SMInfo says now
//   auto n = ibf::ha::parse_notify({"MASTER"});       // or keepalived's {"INSTANCE","SM_HA","MASTER","150"}
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/snapshot.h"

namespace ibf::ha {

// One SM as the agents see it (SMInfo answers and plugin heartbeats).
struct SwitchoverSm {
    Guid sm = 0;
    int priority = 0;  // 0..15
    SmState state = SmState::NotActive;
    bool alive = false;  // answers SMInfo (or its plugin heartbeats)
};

struct SwitchoverStep {
    enum class Kind {
        set_priority,  // `sm`'s agent rewrites sm_priority in opensm.conf and sends opensm SIGHUP
        await_master,  // nothing is sent: wait until `sm` is MASTER and `other` STANDBY
        disable,       // `sm`'s agent sends its SM SubnSet(SMInfo) DISABLE: STANDBY -> NOT_ACTIVE
        standby,       // ... SubnSet(SMInfo) STANDBY naming `other` as master: NOT_ACTIVE -> STANDBY
    };
    Kind kind = Kind::set_priority;
    Guid sm = 0;
    int priority = -1;  // set_priority only
    Guid other = 0;     // await_master: the old master; standby: the master to poll
    std::string text;   // one line for people
};

struct SwitchoverPlan {
    std::vector<SwitchoverStep> steps;  // in order; each must take effect (step_done) before the next
    std::string summary;                // one line for people
};

// The steps that make `target` master instead of `master` without a second master and without a
// trap 144 from a STANDBY (on ibsim such a trap is never answered and wedges that SM's next
// sweep as master: docs/ha-facts.md section 5):
//   0. DISABLE the target, then STANDBY naming the master: it polls the master at once and next
//      only after sminfo_polling_timeout, so no poll of it falls between steps 1 and 2 (it would
//      find itself outranking the master and send trap 144);
//   1. lower the master's sm_priority just below the target's (a MASTER sends no trap; its SIGHUP
//      sweep finds the target ranking higher and hands over by itself, OpenSM's own handover);
//   2. wait for the target to be MASTER and the old master STANDBY;
//   3. raise the new master to the old master's priority (a MASTER again: no trap);
//   4. only if the old master's priority must change again (to the target's old one, or just below
//      the new master): DISABLE it, change it while NOT_ACTIVE (no trap), then STANDBY naming the
//      new master, so it polls again. A round trip restores both priorities.
// Refused (error text) unless the master is a live MASTER and the target a live STANDBY, distinct.
std::variant<SwitchoverPlan, std::string> switchover_plan(const SwitchoverSm& master, const SwitchoverSm& target);

// True once `s` has taken effect in `now` (the SMs by GUID, as SMInfo last answered).
bool step_done(const SwitchoverStep& s, const std::map<Guid, SwitchoverSm>& now);

// The SM a user named: a port GUID ("0x0002c9...", with or without 0x), a node description
// ("node001 mlx5_0", as the SM node's HCA reports it; in the lab it is the host's id), or its first
// word ("node001") when exactly one SM's description has it. Error text listing the candidates
// ("0x... (node001 mlx5_0)") when the name is unknown or ambiguous.
struct SmName {
    Guid sm = 0;
    std::string description;  // "node001 mlx5_0"; "" when not known
};
std::variant<Guid, std::string> find_sm(const std::string& name, const std::vector<SmName>& sms);

// keepalived's notify arguments: either `STATE` alone (notify_master "ibfabric ha notify MASTER")
// or the generic `notify` script form `TYPE NAME STATE PRIORITY`. Anything else is an error text.
struct Notify {
    std::string state;     // MASTER, BACKUP, FAULT, STOP
    std::string type;      // INSTANCE or GROUP ("" in the short form)
    std::string name;      // the vrrp_instance name ("" in the short form)
    int priority = -1;     // -1 when not given
};
std::variant<Notify, std::string> parse_notify(const std::vector<std::string>& args);

}  // namespace ibf::ha
