// Loading one peer found on disk (strategies/peer_libraries.hpp) as a plugin of kind peer: in a loader process
// (orchestrate/plugin_loader.hpp: a crash, exit or hang while it loads costs nothing here), or here in a process
// that runs peer rows itself. What cannot be used is an outcome with its reason, never an exception: the caller
// decides (--peers=NAME refuses it, --peers=all skips it with a note, `attnbench list` shows it).
#pragma once
#include <optional>
#include <string>

#include "strategies/peer_libraries.hpp"
#include "strategies/plugin_library.hpp"

namespace ab {

struct PeerOutcome {
  PeerLibrary library;
  // Its description (its table too when loaded here), kind peer; set whenever the table was read, even when
  // the peer is unavailable (its version says why).
  std::optional<LoadedPlugin> plugin;
  std::string unavailable;  // "" when it can run; else why not (its refusal, its version's reason, a wrong name)
  bool usable() const { return plugin.has_value() && unavailable.empty(); }
};

// Loads `library` here (`code_here`, dlopen in this process) or in a loader process killed after `timeout_s`,
// and checks it: its table's name is its file's, not a script peer's, and its version is not "unavailable: ...".
PeerOutcome load_peer(const PeerLibrary& library, bool code_here, double timeout_s);

}  // namespace ab
