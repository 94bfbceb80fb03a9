// The peers section of `attnbench list` (cli/list_catalog.hpp): every peer library found (loaded in loader
// processes, so a broken one is shown, never fatal), each known peer not found with how to get it, and the
// script peers of scripts/peer_torch.py.
#pragma once
#include <nlohmann/json.hpp>

namespace ab {

// One entry per peer: name, strategy (peer:<name>), source (library | script), status (found | unavailable |
// missing | script); found: version, description, configs, path; unavailable: reason, path (and what its table
// said, when it was read); missing and script: description and how (to get it). Each loader gets `timeout_s`.
nlohmann::json list_peers(double timeout_s);

}  // namespace ab
