// Switchover plans and keepalived notify arguments (ha_ops.h). Pure.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "ibf/ha_ops.h"
#include "ibf/ha_rank.h"

namespace ibf::ha {

std::variant<SwitchoverPlan, std::string> switchover_plan(SmPriority master, SmPriority target) {
    if (master.sm == target.sm) return std::string("the target " + guid_hex(target.sm) + " is already the master");
    SwitchoverPlan p;
    int new_master = master.priority, new_target = target.priority;
    // Raise the target just above the master (a tie is won by the lower GUID). Only when that
    // cannot work (the master is at 15 and outranks the target at 15) is the master lowered.
    const int needed = target.sm < master.sm ? master.priority : master.priority + 1;
    if (needed <= 15) {
        new_target = std::max(target.priority, needed);
    } else {
        new_target = 15;
        new_master = 14;
    }
    if (new_master != master.priority) p.steps.push_back({master.sm, new_master});
    if (new_target != target.priority) p.steps.push_back({target.sm, new_target});
    p.summary = "master " + guid_hex(master.sm) + " priority " + std::to_string(master.priority) + " -> " +
                std::to_string(new_master) + ", target " + guid_hex(target.sm) + " priority " +
                std::to_string(target.priority) + " -> " + std::to_string(new_target);
    return p;
}

namespace {

bool valid_name(const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
    return true;
}

bool valid_state(const std::string& s) { return s == "MASTER" || s == "BACKUP" || s == "FAULT" || s == "STOP"; }

}  // namespace

std::variant<Notify, std::string> parse_notify(const std::vector<std::string>& args) {
    Notify n;
    if (args.size() == 1) {
        n.state = args[0];
    } else if (args.size() == 4) {
        n.type = args[0];
        n.name = args[1];
        n.state = args[2];
        if (n.type != "INSTANCE" && n.type != "GROUP") return std::string("the type must be INSTANCE or GROUP");
        if (!valid_name(n.name)) return std::string("the instance name must be 1-64 of [A-Za-z0-9_.-]");
        const std::string& p = args[3];
        int v = -1;
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
        if (p.empty() || ec != std::errc() || end != p.data() + p.size() || v < 0 || v > 255)
            return std::string("the priority must be an integer from 0 to 255");
        n.priority = v;
    } else {
        return std::string("expected STATE, or TYPE NAME STATE PRIORITY as keepalived passes them");
    }
    if (!valid_state(n.state)) return std::string("the state must be MASTER, BACKUP, FAULT or STOP");
    return n;
}

}  // namespace ibf::ha
