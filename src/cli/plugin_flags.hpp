// Which plugins a run or tune loads: every --plugin and the "plugins" list of a --config suite (paths
// relative to the suite file), loaded before the flags that name strategies are checked.
#pragma once
#include <string>
#include <vector>

#include "cli/shared_flags.hpp"

namespace ab {

// The plugin paths of `f`: its --plugin values, then its suite's "plugins". Throws UsageError.
std::vector<std::string> plugin_paths(const SharedFlags& f);
// Where a process loads its plugins' code: in loader processes (orchestrate/plugin_loader.hpp; this process knows
// them by their descriptions alone), or here (a process that runs plugin rows itself).
enum class PluginCode { in_loaders, here };
// Loads them (strategies/plugin_library.hpp) `where` says, then the peers of --peers (cli/peer_flags.hpp); throws
// UsageError (one line) when one cannot be loaded.
void load_flag_plugins(const SharedFlags& f, PluginCode where);
}  // namespace ab
