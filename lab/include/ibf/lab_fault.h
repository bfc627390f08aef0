// Faults injected into a generated net before ibsim loads it. Pure: no I/O.
//
//   ibf::Fault f = ibf::parse_fault("cross:leaf01/19,leaf01/20");
//   ibf::apply_fault(net, f);       // InputError when the ports are not there / not free
//
// Spec syntax (also in `ibfabric lab up --help` and docs/lab.md); <port> is <node>/<n>, where
// <node> is an ibsim node id or a plan name:
//   move:<port>:<free port>     the cable at the first port is plugged into the second (free) port
//   cross:<port>,<port>         two cables swap their far ends (a crossed pair of parallel cables)
//   remove:<port>               the cable at that port is removed
//   width:<port>=<1x|2x|4x|8x|12x>   the link at that port trains at that width (both ends)
//   speed:<port>=<SDR|DDR|QDR|FDR|EDR|HDR>  the link at that port runs at that speed (both ends)
#pragma once

#include <string>
#include <string_view>

#include "ibf/lab_net.h"
#include "ibf/rate.h"

namespace ibf {

struct PortRef {
    std::string node;
    int port = 0;
    friend bool operator==(const PortRef&, const PortRef&) = default;
};
// "leaf01/19" (the last '/' separates the port); InputError naming `what` otherwise.
PortRef parse_port_ref(std::string_view s, const std::string& what = "port");
std::string to_string(const PortRef& p);

struct Fault {
    enum class Kind { Move, Cross, Remove, Width, Speed };
    Kind kind = Kind::Remove;
    PortRef a, b;                   // b: Move target / Cross second cable
    Width width = Width::Unknown;   // Kind::Width
    Speed speed = Speed::Unknown;   // Kind::Speed
};

// InputError("--fault", 0, column, ...) on a bad spec.
Fault parse_fault(std::string_view spec);
std::string to_string(const Fault& f);  // back to the spec syntax

// Applies `f` to `net`. InputError when a node or port does not exist, a port has no cable
// (or, for move, the target is taken), or a speed cannot be simulated (NDR, XDR, FDR10).
void apply_fault(Net& net, const Fault& f);

}  // namespace ibf
