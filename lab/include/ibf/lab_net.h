// ibsim net files from a plan or a fabric. Pure: no I/O.
//
//   ibf::Net net = ibf::net_from_plan(plan);         // node ids = the plan's names
//   ibf::apply_fault(net, ibf::parse_fault("move:leaf01/19:leaf01/30"));   // lab_fault.h
//   std::string text = ibf::write_net(net);          // ibsim -s net.txt
//
// Naming (docs/lab.md): a switch's ibsim node id and NodeDescription are its plan name; a host's
// node id is "<host>" or "<host> <hca>" (when the plan names the adapter) and its NodeDescription
// is "<host> <hca>" ("<host> HCA-1" when the plan names none), so ibf::derive_name() gives the
// plan name back. The description is written as the `# "..."` comment after the node header, which
// ibsim takes as the NodeDescription. ibsim limits ids to 64 and descriptions to 63 characters:
// longer names are an InputError.
// Rates: a planned link rate becomes the enabled masks `w=`/`s=`/`e=` at both ends, so ibsim brings
// the link up at exactly that rate. ibsim 0.10 has no NDR/XDR (mapped down to HDR) and no FDR10 mask
// (mapped to FDR); each mapping adds one line to Net::warnings. Ports without masks of their own
// (links with no planned rate, free ports) get everything enabled (`width=31 speed=7 extspeed=7`
// at the top of the file), so a cable plugged into a free port at run time always trains.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibf/fabric.h"
#include "ibf/plan.h"
#include "ibf/rate.h"

namespace ibf {

// ibsim's per-port enabled masks: w (1=1x 2=4x 4=8x 8=12x 16=2x), s (1=SDR 2=DDR 4=QDR),
// e (1=FDR 2=EDR 4=HDR, 0 = no extended speed).
struct NetMasks {
    std::optional<uint8_t> w, s, e;  // nullopt = ibsim's default (not written)
    friend bool operator==(const NetMasks&, const NetMasks&) = default;
};

struct NetPort {
    std::string peer;   // remote node id
    int peer_port = 0;
    NetMasks masks;     // identical at both ends of a link (ibsim aborts otherwise)
};

struct NetNode {
    NodeType type = NodeType::CA;  // Switch or CA
    std::string id;                // ibsim node id: what SIM_HOST and console commands name
    std::string description;       // NodeDescription
    std::string name;              // the plan's node name (fault specs may use it)
    std::optional<Guid> guid;      // written as switchguid=/caguid= when set
    int num_ports = 1;
    std::map<int, NetPort> ports;  // linked ports only
};

struct Net {
    std::vector<NetNode> nodes;
    std::vector<std::string> warnings;  // lossy mappings (NDR -> HDR, ...), one line each
    std::string source;                 // plan or dump it came from

    // Index of the node named `node`: exact id first ("host:hca" also finds id "host hca"), then
    // a unique plan name or derived description name. nullopt when absent or ambiguous.
    std::optional<size_t> find(std::string_view node) const;
    // The first CA (in file order) with a linked port: where OpenSM and the clients attach.
    std::optional<size_t> default_sm_host() const;
    size_t count(NodeType t) const;
    size_t port_count() const;  // every node's ports (+ port 0 of switches), for ibsim's -P
    size_t link_count() const;
};

// The masks that make ibsim bring a link up at `r` (a half left Unknown stays at the default).
// Appends a warning to `warnings` (if given) when the speed has to be mapped down.
NetMasks masks_for_rate(const Rate& r, std::vector<std::string>* warnings = nullptr);
// The rate ibsim brings a link with these masks up at, when both ends carry them; a half is
// Unknown when the mask is not set.
Rate rate_for_masks(const NetMasks& m);

// Every planned node and link. InputError (pointing at the plan line) for a port used twice, a
// port beyond the node's declared ports, an id/description too long for ibsim, duplicate ids,
// routers (ibsim has none).
Net net_from_plan(const Plan& plan);
// An actual fabric (e.g. an ibnetdiscover dump): ids "S-<guid>" / "H-<guid>", GUIDs and
// descriptions kept, each link's active rate as masks (NDR/XDR mapped down to HDR, warned).
Net net_from_fabric(const Fabric& f, const std::string& source);

// The text ibsim loads. Every link appears at both ends with the same masks.
std::string write_net(const Net& net);
// Reads back what write_net() wrote (node headers with `# "description"`, guid lines, port lines
// with w=/s=/e=). InputError with file:line for anything else.
Net parse_net(std::string_view text, const std::string& file);

// ibsim's table sizes for `-N`, `-S`, `-P`: the defaults (2048, 256, 13312) or more when `net`
// needs more.
struct SimLimits {
    size_t nodes = 2048, switches = 256, ports = 13312;
};
SimLimits sim_limits_for(const Net& net);

}  // namespace ibf
