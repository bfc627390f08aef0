// Administrative HA operations as pure plans: the priority changes that make a switchover, and
// the validation of keepalived's notify arguments. The CLI (tools/cmd_sm.cpp) carries them out.
//
//   auto plan = ibf::ha::switchover_plan({master, 13}, {standby, 12});
//   // plan->steps: [{standby, 14}] (or 13 when the standby's GUID is the lower one)
//   auto n = ibf::ha::parse_notify({"MASTER"});       // or keepalived's {"INSTANCE","SM_HA","MASTER","150"}
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ibf/fabric.h"

namespace ibf::ha {

struct SmPriority {
    Guid sm = 0;
    int priority = 0;  // 0..15
};

struct SwitchoverPlan {
    std::vector<SmPriority> steps;  // in order: each is "set this SM's sm_priority" on its node
    std::string summary;            // one line for people
};

// The priority changes after which `target` outranks `master` (OpenSM's rule: priority, then the
// lower GUID): the target is raised just enough; only when that is impossible (the master at 15
// outranks a target at 15) the master goes to 14 and the target to 15, the master first, so that
// the target's change (OpenSM sends trap 144) finds the final ranking. The target is raised, not
// the master lowered, where possible: an OpenSM that became master by a handover ignores a new
// sm_priority on SIGHUP (measured, docs/ha.md). Error text when master == target.
std::variant<SwitchoverPlan, std::string> switchover_plan(SmPriority master, SmPriority target);

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
