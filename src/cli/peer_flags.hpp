// --peers=all|none|NAME[,NAME...] of run and tune, or the "peers" of a --config suite when --peers is not given:
// which peers (docs/peers.md, strategies/peer_libraries.hpp) a command loads beside its plugins, as strategies
// "peer:<name>", the command line its child processes get, and the peers its journal records.
#pragma once
#include <string>
#include <vector>

#include "cli/shared_flags.hpp"

namespace ab {

// --peers (or a suite's "peers"), parsed: every peer found, or these names (none: an empty list). `origin` names
// where it was given in error lines and notes: "--peers", or "config 'PATH': peers".
struct PeerSelection {
  bool all = false;
  std::vector<std::string> names;
  std::string origin = "--peers";
};
// Throws UsageError ("--peers: ...") for a malformed value: an empty or invalid name, one named twice, all or
// none beside names.
PeerSelection parse_peers_flag(const std::string& value);

// The peers a command selects: --peers when given (it replaces a suite's, as a size flag replaces a suite's
// axis), else the "peers" of its --config suites ("all", "none", names as --peers spells them, or a list of
// names; several suites: every peer any of them names, once), else none. Throws UsageError (one line naming the
// suite file) for a malformed "peers".
PeerSelection selected_peers(const SharedFlags& f);

// Loads the peers selected_peers(f) selects, here (`code_here`: a process that runs their rows) or in loader
// processes. A named peer that is not found, or cannot be used, is one UsageError line (the peers found, or its
// reason); all skips a peer that cannot be used, and finding none, with a deferred note.
void load_flag_peers(const SharedFlags& f, bool code_here);

// The peers this process loaded, by name in load order as --peers spells them ("cudnn,flashinfer-decode"), or
// "none": what its children are told and what its journal's header records (a --resume runs the same peers).
std::string loaded_peers();

// `argv` with its --peers replaced by the peers this process loaded (loaded_peers()): its workers, fresh
// processes and row children load exactly those, never what --peers=all or a suite's "peers" would find again.
// Unchanged when it has neither --peers nor --config and no peer was loaded.
std::vector<std::string> arguments_with_loaded_peers(const std::vector<std::string>& argv);

}  // namespace ab
