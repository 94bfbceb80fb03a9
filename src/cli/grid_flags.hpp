// The problem-size flags, one per axis of core/problem_axes.hpp, plus --config: added to run, tune and grid by
// one function, and the problem grid built from them.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/problem.hpp"

namespace ab {

struct GridFlags {
  std::map<std::string, std::string> text;      // axis name → the text given (read only when given)
  std::map<std::string, CLI::Option*> options;  // axis name → its option (count() > 0: given)
  std::string config;
};

// One option per axis (its spellings, help and default from the table) and --config, which excludes
// every size flag; --page_size excludes --pages.
void add_grid_flags(CLI::App& app, GridFlags& f);
// The suite of --config, else the product of the given axes (defaults for the others). Throws UsageError.
std::vector<Problem> problems_from_flags(const GridFlags& f);

}  // namespace ab
