// Plugins: shared libraries implementing include/attnbench/plugin.h, loaded with dlopen, their ABI version
// checked, kept for the life of the process, and made into strategies named "plugin:<name>".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.hpp"

struct ab_plugin;

namespace ab {

// What `attnbench list` shows about a loaded plugin.
struct PluginInfo {
  std::string name;         // the plugin's own name; the strategy is "plugin:" + name
  std::string version;      // the plugin's version text
  std::string description;
  std::string path;         // as given to --plugin (or a suite)
  std::vector<std::string> configs;  // its tunable configurations, the default first
};

// One loaded library (never unloaded: its code may still be referenced by strategies).
struct LoadedPlugin {
  PluginInfo info;
  const ab_plugin* table = nullptr;
};

// Loads every path (dlopen, the entry symbol, the ABI version, the table's fields) into the process's list;
// a path already loaded is skipped. Throws UsageError (one line) for a missing file, a library without the
// entry symbol, another ABI version, a malformed table, or two plugins with the same name.
void load_plugins(const std::vector<std::string>& paths);
// The plugins loaded so far, in load order.
const std::vector<LoadedPlugin>& loaded_plugins();
// Their descriptions, for `attnbench list` and reports.
std::vector<PluginInfo> describe_plugins();

// The strategy of a loaded plugin (strategies/plugin_strategy.cpp).
std::unique_ptr<Strategy> make_plugin_strategy(const LoadedPlugin& plugin);
// The prefix of every plugin strategy's name.
inline constexpr const char* kPluginPrefix = "plugin:";

}  // namespace ab
