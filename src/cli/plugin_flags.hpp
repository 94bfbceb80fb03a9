// Which plugins a run or tune loads: every --plugin and the "plugins" list of a --config suite (paths
// relative to the suite file), loaded before the flags that name strategies are checked.
#pragma once
#include <string>
#include <vector>

#include "cli/shared_flags.hpp"

namespace ab {

// The plugin paths of `f`: its --plugin values, then its suite's "plugins". Throws UsageError.
std::vector<std::string> plugin_paths(const SharedFlags& f);
// Loads them (strategies/plugin_library.hpp); throws UsageError (one line) when one cannot be loaded.
void load_flag_plugins(const SharedFlags& f);
}  // namespace ab
