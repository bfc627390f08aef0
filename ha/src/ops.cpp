// Switchover plans, SM names and keepalived notify arguments (ha_ops.h). Pure.
#include <algorithm>
#include <cctype>
#include <charconv>

#include <optional>

#include "ibf/ha_ops.h"
#include "ibf/ha_rank.h"

namespace ibf::ha {

namespace {

using Kind = SwitchoverStep::Kind;

uint8_t u8(int p) { return static_cast<uint8_t>(p); }

// The highest priority at which `sm` ranks below `above` (at `above_prio`); -1 when none does.
int just_below(Guid sm, Guid above, int above_prio) {
    for (int p = above_prio; p >= 0; --p)
        if (sm_outranks(u8(above_prio), above, u8(p), sm)) return p;
    return -1;
}

SwitchoverStep prio_step(Guid sm, int p, const std::string& why) {
    return {Kind::set_priority, sm, p, 0, guid_hex(sm) + ": sm_priority " + std::to_string(p) + " (" + why + ")"};
}

std::optional<std::string> refusal(const SwitchoverSm& m, const SwitchoverSm& t) {
    if (m.sm == t.sm) return "the target " + guid_hex(t.sm) + " is already the master";
    if (!m.alive || m.state != SmState::Master) return "the master " + guid_hex(m.sm) + " is not a live MASTER";
    if (!t.alive || t.state != SmState::Standby)
        return "the target " + guid_hex(t.sm) + " is not a live STANDBY (it is " + std::string(to_string(t.state)) +
               (t.alive ? "" : ", not answering") + ")";
    for (int p : {m.priority, t.priority})
        if (p < 0 || p > 15) return "sm_priority " + std::to_string(p) + " is outside 0..15";
    return std::nullopt;
}

}  // namespace

std::variant<SwitchoverPlan, std::string> switchover_plan(const SwitchoverSm& master, const SwitchoverSm& target) {
    if (auto why = refusal(master, target)) return *why;
    // 1. The master just below the target (kept where the target already outranks it).
    const int low = std::min(master.priority, just_below(master.sm, target.sm, target.priority));
    if (low < 0)
        return "the target " + guid_hex(target.sm) + " has sm_priority " + std::to_string(target.priority) +
               " and the higher GUID: no priority ranks the master below it; raise the target's sm_priority in its "
               "opensm.conf first";
    // 3. The new master at the old master's priority; 4. the old master at the target's old
    // priority, or just below the new master where that would outrank it.
    const int top = std::max(master.priority, target.priority);
    const int final_m = std::min(target.priority, just_below(master.sm, target.sm, top));
    SwitchoverPlan p;
    // 0. The target restarts its polling clock (DISABLE, then STANDBY polls the master at once and
    // next after sminfo_polling_timeout): no poll of it falls between the master's re-read and
    // its handover, when it would find itself outranking the master and send trap 144.
    p.steps.push_back({Kind::disable, target.sm, -1, 0, guid_hex(target.sm) + ": SubnSet(SMInfo) DISABLE"});
    p.steps.push_back({Kind::standby, target.sm, -1, master.sm,
                       guid_hex(target.sm) + ": SubnSet(SMInfo) STANDBY, polling " + guid_hex(master.sm) + " afresh"});
    p.steps.push_back(prio_step(master.sm, low, "below the target: the master hands over"));
    p.steps.push_back({Kind::await_master, target.sm, -1, master.sm,
                       "await " + guid_hex(target.sm) + " MASTER and " + guid_hex(master.sm) + " STANDBY"});
    if (top != target.priority) p.steps.push_back(prio_step(target.sm, top, "the new master back to the top"));
    if (final_m != low) {
        p.steps.push_back({Kind::disable, master.sm, -1, 0, guid_hex(master.sm) + ": SubnSet(SMInfo) DISABLE"});
        p.steps.push_back(prio_step(master.sm, final_m, "while NOT_ACTIVE"));
        p.steps.push_back({Kind::standby, master.sm, -1, target.sm,
                           guid_hex(master.sm) + ": SubnSet(SMInfo) STANDBY, polling " + guid_hex(target.sm)});
    }
    p.summary = "master " + guid_hex(master.sm) + " priority " + std::to_string(master.priority) + " -> " +
                std::to_string(final_m) + ", target " + guid_hex(target.sm) + " priority " +
                std::to_string(target.priority) + " -> " + std::to_string(top);
    return p;
}

bool step_done(const SwitchoverStep& s, const std::map<Guid, SwitchoverSm>& now) {
    auto it = now.find(s.sm);
    if (it == now.end() || !it->second.alive) return false;
    const SwitchoverSm& v = it->second;
    switch (s.kind) {
        case Kind::set_priority: return v.priority == s.priority;
        case Kind::disable: return v.state == SmState::NotActive;
        case Kind::standby: return v.state == SmState::Standby;
        case Kind::await_master: {
            auto o = now.find(s.other);
            return v.state == SmState::Master && o != now.end() && o->second.state == SmState::Standby;
        }
    }
    return false;
}

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string candidates(const std::vector<SmName>& sms) {
    std::string out;
    for (const SmName& n : sms)
        out += (out.empty() ? "" : ", ") + guid_hex(n.sm) + (n.description.empty() ? "" : " (" + n.description + ")");
    return out.empty() ? "none known" : out;
}

}  // namespace

std::variant<Guid, std::string> find_sm(const std::string& name, const std::vector<SmName>& sms) {
    if (auto g = parse_guid(name))
        for (const SmName& n : sms)
            if (n.sm == *g) return n.sm;
    std::vector<const SmName*> exact, first_word;
    for (const SmName& n : sms) {
        if (n.description.empty()) continue;
        if (lower(n.description) == lower(name)) exact.push_back(&n);
        if (lower(n.description.substr(0, n.description.find(' '))) == lower(name)) first_word.push_back(&n);
    }
    const auto& hits = exact.empty() ? first_word : exact;
    if (hits.size() == 1) return hits[0]->sm;
    return std::string(hits.empty() ? "no SM is named '" : "'") + name +
           (hits.empty() ? "'" : "' names more than one SM") + "; SMs: " + candidates(sms);
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
