// The size flags from the axis table, and the grid they describe.
#include "cli/grid_flags.hpp"

#include <cstdio>

#include "cli/command_notes.hpp"
#include "core/grid.hpp"
#include "core/problem_axes.hpp"
#include "core/problem_filter.hpp"

namespace ab {

void add_grid_flags(CLI::App& app, GridFlags& f) {
  app.add_option("--config", f.config,
                 "a suite from configs/ (name or path), or several (a,b,c); a size flag given beside it replaces that axis in every grid "
                 "of the suite");
  app.add_option("--where", f.where,
                 "keep only the problems where AXIS=VALUE (also !=, <, <=, >, >=; repeatable, all must hold), "
                 "e.g. --where=batch<=8 --where=kv_layout=paged")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  for (const ProblemAxis& a : problem_axes()) {
    std::string& target = f.text[a.name];
    CLI::Option* o = a.cli_flag ? app.add_flag(std::string(a.cli) + "{true}", target, a.help)
                                : app.add_option(a.cli, target, a.help);
    if (*a.default_text) o->default_str(a.default_text);
    f.options[a.name] = o;
  }
  for (const ProblemAxis& a : problem_axes())
    if (*a.replaces) f.options[a.name]->excludes(f.options[a.replaces]);
}

namespace {
// The CPU backend's default problem (about 15 s for the five strategies with --verify on 2 cores, against
// minutes for the GPU default B=32 H=12 S=512).
const std::map<std::string, std::string> kCpuDefaultProblem = {{"batch", "4"}, {"heads", "12"}, {"seq_len", "256"}};
}  // namespace

std::vector<Problem> problems_from_flags(const GridFlags& f, bool cpu) {
  std::vector<ProblemFilter> filters;
  for (const std::string& w : f.where) filters.push_back(parse_problem_filter(w));
  GridSpec given;
  for (const auto& [name, option] : f.options)
    if (option->count() > 0) given.text[name] = f.text.at(name);
  std::vector<std::string> notes;
  if (cpu && given.text.empty() && f.config.empty()) {
    given.text = kCpuDefaultProblem;
    notes.push_back("no GPU: the CPU reference backend runs a smaller default problem, B=4 H=12 S=256 (the GPU's is "
                    "B=32 H=12 S=512); size flags choose another");
  }
  std::vector<Problem> problems =
      f.config.empty() ? expand_grid(given, &notes) : load_suite(f.config, nullptr, &given, &notes);
  problems = filter_problems(problems, filters);
  defer_notes(notes);
  return problems;
}

}  // namespace ab
