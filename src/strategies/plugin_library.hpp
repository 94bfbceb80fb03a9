// Plugins: shared libraries implementing include/attnbench/plugin.h, made into strategies named
// "plugin:<name>" (a user's --plugin) or "peer:<name>" (a peer, --peers: strategies/plugin_kind.hpp). A plugin's code is loaded (dlopen, its ABI version and table checked) only in a process
// that runs it: a plugin row's child or a loader process (orchestrate/plugin_loader.hpp); the process that starts them
// knows a plugin by its description alone (strategies/plugin_description.hpp) and holds no table.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.hpp"
#include "strategies/plugin_description.hpp"

struct ab_plugin;

namespace ab {

// One plugin of this process. Its library, when loaded here, is never unloaded (strategies refer to it).
struct LoadedPlugin {
  PluginInfo info;
  const ab_plugin* table = nullptr;  // null where the plugin's code was loaded in another process
};

// Loads the library at `path` into this process: dlopen, the entry symbol, the ABI version, and the table's
// fields read with bounds (at most kMaxPluginConfigs configurations, each string at most its bound) and
// checked (check_plugin_info). Runs the library's code here. Throws UsageError (one line) for a missing file,
// a library that cannot be loaded or lacks the entry symbol, another ABI version or a malformed table.
LoadedPlugin open_plugin_library(const std::string& path);
// open_plugin_library for every path not loaded yet as a plugin (--plugin), each added to the process's list
// (add_loaded_plugin).
void load_plugins(const std::vector<std::string>& paths);
// Whether a plugin of kind `kind` was loaded from `path` (as given) already.
bool plugin_loaded_from(const std::string& path, PluginKind kind = PluginKind::plugin);
// Adds `plugin` to the process's list; throws UsageError when one of the same strategy name is loaded already
// (a plugin and a peer of one table name do not collide: plugin:x and peer:x).
void add_loaded_plugin(LoadedPlugin plugin);
// The plugins loaded so far, in load order.
const std::vector<LoadedPlugin>& loaded_plugins();
// Their descriptions, for `attnbench list` and reports.
std::vector<PluginInfo> describe_plugins();

// The strategy of a loaded plugin (strategies/plugin_strategy.cpp), named plugin.info.strategy_name().
std::unique_ptr<Strategy> make_plugin_strategy(const LoadedPlugin& plugin);

}  // namespace ab
