// What `attnbench list` knows: strategies, backends, devices, timers, fused tiles, suites and plugins, as one
// document (the --json output; the text output is rendered from the same document).
#pragma once
#include <nlohmann/json.hpp>

namespace ab {

// Schema "attnbench.list/1"; keys: strategies, backends, devices, timers, fused_tiles, suites, plugins.
nlohmann::json list_catalog();

}  // namespace ab
