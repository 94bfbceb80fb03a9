// --peers=all|none|NAME[,NAME...] of run and tune: which peers (docs/peers.md, strategies/peer_libraries.hpp) a
// command loads beside its plugins, as strategies "peer:<name>", and the command line its child processes get.
#pragma once
#include <string>
#include <vector>

#include "cli/shared_flags.hpp"

namespace ab {

// --peers, parsed: every peer found, or these names (none: an empty list).
struct PeerSelection {
  bool all = false;
  std::vector<std::string> names;
};
// Throws UsageError ("--peers: ...") for a malformed value: an empty or invalid name, one named twice, all or
// none beside names.
PeerSelection parse_peers_flag(const std::string& value);

// Loads the peers --peers selects, here (`code_here`: a process that runs their rows) or in loader processes.
// A named peer that is not found, or cannot be used, is one UsageError line (the peers found, or its reason);
// --peers=all skips a peer that cannot be used, and finding none, with a deferred note.
void load_flag_peers(const SharedFlags& f, bool code_here);

// `argv` with its --peers replaced by the peers this process loaded, by name (--peers=none when none): its
// workers, fresh processes and row children load exactly those, never what --peers=all would find again.
std::vector<std::string> arguments_with_loaded_peers(const std::vector<std::string>& argv);

}  // namespace ab
