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
  std::vector<std::string> where;               // --where filters, as given
};

// One option per axis (its spellings, help and default from the table), --config and --where; --page_size
// excludes --pages.
void add_grid_flags(CLI::App& app, GridFlags& f);
// The suite of --config with the given axes replacing the suite's in every grid, else the product of the
// given axes (defaults for the others); then only the problems every --where keeps. The choices made for the
// user (a batch taken from the lengths, merged problems) are deferred notes (cli/command_notes.hpp), said once
// the command has checked every flag. With no size flag and no suite, on the CPU reference backend (`cpu`), the
// default problem is the smaller kCpuDefaultProblem (noted too): the fp64 reference needs minutes for the
// GPU-sized default. Throws UsageError.
std::vector<Problem> problems_from_flags(const GridFlags& f, bool cpu);

}  // namespace ab
