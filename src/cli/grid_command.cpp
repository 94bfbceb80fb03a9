// `attnbench grid [size flags | --config=NAME] [--where=...] [--json=F|-]`: the expanded problem grid, so that scripts
// ask the binary instead of re-implementing the axis grammar and suite loading.
#include <cstdio>
#include <memory>

#include "cli/backend_factory.hpp"
#include "cli/command_notes.hpp"
#include "cli/commands.hpp"
#include "cli/grid_flags.hpp"
#include "cli/output_file.hpp"
#include "cli/report_outputs.hpp"
#include "core/problem_axes.hpp"

namespace ab {

namespace {

struct GridArgs : GridFlags {
  ReportOutputs outputs;
  LegacyOutput legacy;
};

nlohmann::json grid_json(const std::vector<Problem>& problems) {
  nlohmann::json out = nlohmann::json::array();
  for (const Problem& p : problems) {
    nlohmann::json j = problem_to_json(p);
    j["label"] = problem_label(p);
    j["flops"] = p.flops();  // the FLOPs and bytes every row's TFLOP/s and GB/s divide (core/problem.hpp)
    j["bytes"] = p.bytes();
    j["key"] = problem_key(p);
    out.push_back(j);
  }
  return out;
}

int grid_main(GridArgs& a) {
  const ConsoleTarget console = apply_legacy_output(a.legacy, a.outputs, "json", "grid");
  check_report_outputs(a.outputs);
  std::vector<Problem> problems = problems_from_flags(a, runs_on_cpu("auto"));
  say_deferred_notes(false);
  write_report_outputs(a.outputs, [&problems](const std::string&) { return grid_json(problems).dump(1) + "\n"; });
  std::string text;
  for (const Problem& p : problems) text += problem_label(p) + "\n";
  emit_console(console, a.outputs, text);
  return 0;
}

}  // namespace

Command add_grid_command(CLI::App& parent) {
  auto a = std::make_shared<GridArgs>();
  CLI::App* app = parent.add_subcommand(
      "grid", "print the problems a set of size flags or a --config suite expands to (text: one label a line; json: "
              "an array of problem objects with label, key, flops and bytes)");
  add_grid_flags(*app, *a);
  add_json_output_flag(*app, a->outputs, "write the problems as JSON (label, key, flops, bytes and every axis)");
  add_legacy_output_flags(*app, a->legacy);
  return Command{app, [a]() { return grid_main(*a); }};
}

}  // namespace ab
