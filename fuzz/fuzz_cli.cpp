// libFuzzer target: the command line. The input, split at newlines into arguments, goes through the same
// CLI11 app main() builds (run flags, tune, compare, report, grid), then through the checks `run` makes before
// any work (grid, strategies, sizes, fractions, times, sample counts). Nothing is run. Any exception other
// than CLI11's parse errors and UsageError, and any sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/grid_flags.hpp"
#include "cli/run_command.hpp"
#include "core/errors.hpp"
#include "core/strategy.hpp"
#include "strategies/registry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"attnbench"};
  std::string cur;
  for (std::size_t i = 0; i < size && args.size() < 64; ++i) {
    char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());

  CLI::App app{"attnbench"};
  app.require_subcommand(0, 1);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  ab::RunFlags f;
  ab::add_run_flags(app, f);
  // The commands own their flag structs: kept alive while the app parses into them, as in main().
  ab::Command tune = ab::add_tune_command(app), compare = ab::add_compare_command(app),
              report = ab::add_report_command(app), grid = ab::add_grid_command(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
    return 0;
  }
  try {
    ab::problems_from_flags(f, /*cpu=*/false);
    ab::make_strategies(f.strategies);
    if (!f.max_memory.empty()) ab::parse_bytes("max_memory", f.max_memory);
    ab::parse_fraction("max_noise", f.max_noise);
    ab::parse_max_time(f.max_time, 1.0);
    ab::check_sample_flags(f.warmup, f.min_samples, f.max_samples);
  } catch (const ab::UsageError&) {
  }
  return 0;
}
