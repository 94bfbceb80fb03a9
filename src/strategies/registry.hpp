// The built-in strategies by name: the run order, the names, and --strategies parsing (registry.cpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.hpp"

namespace ab {

// All strategies, in the order they are run and printed: the built-in ones, then the loaded plugins
// (strategies/plugin_library.hpp) as "plugin:<name>" and peers as "peer:<name>".
std::vector<std::unique_ptr<Strategy>> make_all_strategies();
std::vector<std::string> strategy_names();
// Parses "--strategies=a,b" (or "all"); throws UsageError naming an unknown strategy.
std::vector<std::unique_ptr<Strategy>> make_strategies(const std::string& list);

}  // namespace ab
