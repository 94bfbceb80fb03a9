// src/cli/commands.hpp — one registration function per subcommand.
#pragma once
#include <functional>
#include <CLI/CLI.hpp>
namespace ab {
struct Command { CLI::App* app = nullptr; std::function<int()> run; };  // run returns the exit code
Command add_compare_command(CLI::App& parent);   // attnbench compare BASE.json NEW.json [--threshold=5%] [--format=console|md|csv|json] [--ignore_device] [--output=FILE]
Command add_report_command(CLI::App& parent);    // attnbench report FILE.json [--json|--md|--csv=FILE|-]
Command add_tune_command(CLI::App& parent);
Command add_grid_command(CLI::App& parent);
Command add_merge_command(CLI::App& parent);      // attnbench merge IN.json... --json=OUT.json [--on_conflict=refuse|fastest]       // attnbench grid (grid flags or --config) [--where=...] [--json=FILE|-]      // attnbench tune (grid flags or --config) --cache=FILE [--top=N] [--search=heuristic|exhaustive]
}
