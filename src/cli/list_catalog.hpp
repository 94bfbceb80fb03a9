// What `attnbench list` knows: strategies, backends, devices, timers, fused tiles, suites, plugins and peers, as one
// document (the --json output; the text output is rendered from the same document).
#pragma once
#include <nlohmann/json.hpp>

namespace ab {

// Schema "attnbench.list/1"; keys: strategies, backends, devices, timers, fused_tiles, suites, plugins, peers
// (cli/list_peers.hpp; each peer library is loaded in a loader process given `peer_load_timeout_s`).
nlohmann::json list_catalog(double peer_load_timeout_s);

}  // namespace ab
