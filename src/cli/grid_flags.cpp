// The size flags from the axis table, and the grid they describe.
#include "cli/grid_flags.hpp"

#include "core/grid.hpp"
#include "core/problem_axes.hpp"

namespace ab {

void add_grid_flags(CLI::App& app, GridFlags& f) {
  CLI::Option* config =
      app.add_option("--config", f.config, "a suite from configs/ (name or path) instead of the size flags");
  for (const ProblemAxis& a : problem_axes()) {
    std::string& target = f.text[a.name];
    CLI::Option* o = a.cli_flag ? app.add_flag(std::string(a.cli) + "{true}", target, a.help)
                                : app.add_option(a.cli, target, a.help);
    if (*a.default_text) o->default_str(a.default_text);
    o->excludes(config);
    f.options[a.name] = o;
  }
  for (const ProblemAxis& a : problem_axes())
    if (*a.replaces) f.options[a.name]->excludes(f.options[a.replaces]);
}

std::vector<Problem> problems_from_flags(const GridFlags& f) {
  if (!f.config.empty()) return load_suite(f.config);
  GridSpec g;
  for (const auto& [name, option] : f.options)
    if (option->count() > 0) g.text[name] = f.text.at(name);
  return expand_grid(g);
}

}  // namespace ab
