// Helpers shared by the lab's I/O files (runner.cpp, sms.cpp); not installed.
#pragma once

#include <cstdint>
#include <string>

#include "ibf/lab_runner.h"

namespace ibf::lab_detail {

std::string read_file(const std::string& path);                   // "" when unreadable
void write_file(const std::string& path, const std::string& text);  // LabError on failure
int64_t unix_ms();
// lab_save_state() after setting the single-SM fields from SM 1 (code that changed `sms`).
void save_state(LabState& s);
// Starts OpenSM for `sm` (under umad2sim at sm.host, with the plugin when s.plugin_dir is set).
// Throws LabError when it cannot be executed.
int spawn_opensm(const LabState& s, const LabSm& sm);
// Starts the ibfabricd of `sm` (config <sm dir>/ibfabricd.yaml) and waits for its HTTP port;
// under umad2sim at sm.host unless the lab has a single SM. LabError with its log tail.
void start_daemon(const LabState& s, LabSm& sm, const std::string& ibfabricd, double timeout_s);

}  // namespace ibf::lab_detail
