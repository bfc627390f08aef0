// Administrative HA operations as pure plans: the priority changes that make a switchover, and
// the validation of keepalived's notify arguments. The CLI (tools/cmd_sm.cpp) carries them out.
//
//   auto plan = ibf::ha::switchover_plan({master, 15}, {standby, 14});
//   // plan->steps: [{master, 14}, {standby, 15}]: lower the master first, then raise the target
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
// lower GUID) with as little change as possible: the two priorities are swapped; when they are
// equal, the target is raised by one (or, at 15, the master lowered by one). The master is
// changed first, so that the target's change (which makes OpenSM send trap 144) finds the final
// ranking. Error text when master == target.
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
