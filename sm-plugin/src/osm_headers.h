// OpenSM's C headers, included the one safe way from C++ (see docs/plugin.md, "Build traps"):
// osm_config.h FIRST (otherwise ENABLE_OSM_PERF_MGR is undefined while osm_opensm_t is parsed, the
// struct layout shifts and the plugin crashes in create()), and `delete` renamed because
// osm_event_plugin_t has a member called delete.
#pragma once

#include <opensm/osm_config.h>
#define delete osm_delete_fn
#include <complib/cl_passivelock.h>
#include <complib/cl_qmap.h>
#include <iba/ib_types.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_log.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_remote_sm.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#undef delete

// ib_types.h defines FDR10 as a macro (Mellanox ExtendedPortInfo speed bit), which clashes with
// ibf::Speed::FDR10: keep the value under another name.
inline constexpr unsigned kMlnxFdr10Bit = FDR10;
#undef FDR10
