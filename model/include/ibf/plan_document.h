// A YAML plan as plain data, section by section as docs/plan.md lays it out: what a plan writer
// decided to say, before it is text. `ibfabric plan from-dump` fills one from a known-good fabric
// (routing/plan_infer.h: infer_plan) and config/ writes it out through yaml-cpp
// (config/plan_write.h: plan_yaml_text), so routing/ needs no YAML library and config/ no fat-tree
// reasoning. Pure data.
//
// Strings hold what the plan's scalars hold: names and name patterns ("leaf[01-18]"), port lists
// ("1-16,18"), ends ("leaf01/3"). An empty string, a 0 and an empty optional are "not written".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ibf/fabric.h"

namespace ibf {

struct PlanDocument {
    // One entry of `switches:`: a tier (or the tier's "_other" switches).
    struct Tier {
        std::string key;                 // "leaf", "spine", "leaf_other"
        std::string comment;             // a YAML comment after the key
        std::vector<std::string> names;  // names and name patterns, in the tier's order
        int ports = 0;
        int pods = 0;
        std::string down, up, up_to;     // port lists; up_to: the tier above
        int cables_per_pair = 0;
        std::optional<Rate> rate;
    };
    // One entry of `hosts:`.
    struct HostGroup {
        std::vector<std::string> names;
        std::string hca;
        int port = 0;                    // the hosts' HCA port
        std::string attach;              // the switches, one name or pattern
        std::string ports;               // the switch ports
        int per_switch = 0;
        std::optional<Rate> rate;
    };
    struct End {
        std::string node, hca;
        int port = 0;
    };
    // One entry of `cables:`.
    struct Cable {
        End a, b;
        std::optional<Rate> rate;
    };
    // One entry of `overrides:`.
    struct Override {
        std::string port;                // "leaf01/3"
        std::optional<Rate> rate;
    };
    // One entry of `nodes:`. With no type the entry is only its GUID (`key: 0x...`), pinning a
    // node declared elsewhere; with a type it is `{type, ports, guid}`.
    struct NodeEntry {
        std::string key;                 // "name" or "name:hca"
        std::string type;                // "", "switch", "ca", "router"
        int ports = 0;
        std::optional<Guid> guid;
    };

    std::vector<std::string> comments;   // lines at the top (without "# ")
    int version = 1;
    std::string name;
    std::optional<Rate> rate;            // the plan-wide rate
    int mtu = 0;
    std::vector<Tier> switches;
    std::vector<HostGroup> hosts;
    std::vector<Cable> cables;
    std::vector<Override> overrides;
    std::vector<NodeEntry> nodes;
};

}  // namespace ibf
