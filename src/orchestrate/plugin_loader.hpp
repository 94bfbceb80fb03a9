// Loading plugins without running their code here: each library is loaded in a loader process (this binary
// again, the hidden `describe_plugin` command, cli/describe_plugin_command.hpp) with a time limit, and only its
// description comes back. A library that crashes, aborts, exits, hangs or lies while it is loaded costs one
// `attnbench: error:` line (exit code 2), never this process.
#pragma once
#include <string>
#include <vector>

#include "strategies/plugin_description.hpp"

namespace ab {

// The longest a loader process may take (less when --plugin_timeout is smaller).
inline constexpr double kPluginLoadTimeoutS = 30;
// The loaders' time limit under --plugin_timeout=`plugin_timeout` (a positive number, checked by its flag).
double plugin_load_timeout(double plugin_timeout);

// The description of the plugin at `path`, from a loader process killed after `timeout_s` seconds. Throws
// UsageError (one line) with the loader's refusal or how it ended (a signal, an exit before describing the
// plugin, the time limit).
PluginInfo describe_plugin_in_child(const std::string& path, double timeout_s);

// Describes each of `paths` not loaded yet and adds it to this process's plugins without its code
// (strategies/plugin_library.hpp: table null); their rows run in child processes. Throws UsageError.
void load_plugins_in_children(const std::vector<std::string>& paths, double timeout_s);

}  // namespace ab
