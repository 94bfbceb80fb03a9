// `attnbench grid [size flags | --config=NAME] --format=json|text`: the expanded problem grid, so that scripts
// ask the binary instead of re-implementing the axis grammar and suite loading.
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/grid_flags.hpp"
#include "core/problem_axes.hpp"

namespace ab {

namespace {

struct GridArgs : GridFlags {
  std::string format = "text";
};

int grid_main(const GridArgs& a) {
  std::vector<Problem> problems = problems_from_flags(a, false);
  if (a.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const Problem& p : problems) {
      nlohmann::json j = problem_to_json(p);
      j["label"] = problem_label(p);
      j["flops"] = p.flops();  // the FLOPs and bytes every row's TFLOP/s and GB/s divide (core/problem.hpp)
      j["bytes"] = p.bytes();
      j["key"] = problem_key(p);
      out.push_back(j);
    }
    std::printf("%s\n", out.dump(1).c_str());
  } else {
    for (const Problem& p : problems) std::printf("%s\n", problem_label(p).c_str());
  }
  return 0;
}

}  // namespace

Command add_grid_command(CLI::App& parent) {
  auto a = std::make_shared<GridArgs>();
  CLI::App* app = parent.add_subcommand(
      "grid", "print the problems a set of size flags or a --config suite expands to (text: one label a line; json: "
              "an array of problem objects with label, key, flops and bytes)");
  add_grid_flags(*app, *a);
  app->add_option("--format", a->format, "text | json")->capture_default_str()->check(CLI::IsMember({"text", "json"}));
  return Command{app, [a]() { return grid_main(*a); }};
}

}  // namespace ab
