// The run command's options (shared by `attnbench [flags]` and `attnbench run [flags]`) and its action.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/report_outputs.hpp"
#include "cli/shared_flags.hpp"
#include "run/run_report.hpp"

namespace ab {

// The grid, strategy, backend and measurement flags come from SharedFlags (cli/shared_flags.hpp).
struct RunFlags : SharedFlags {
  RunFlags() { timer = "events"; }
  bool verify = false;
  bool dry_run = false;   // --dry_run: the grid and an estimated time; nothing measured or written
  ReportOutputs outputs;  // --json (the report), --md, --csv: files or '-' for stdout
  bool profile = false;   // --profile: one warm-up and one forward per row, no timing loop (Nsight Compute)
  int max_samples = 100000;
  bool keep_samples = false;
  int rounds = 1;
  std::string tile;
  std::string cache;
  std::string resume_at;  // hidden: "P:S", set when the run continues in a fresh process
  bool no_table = false;  // hidden: the resumed process leaves the table to its parent
  std::string plugin_config;      // plugins: the configuration to run (default: each plugin's first / the cache's)
  std::string isolated_problem;   // hidden: a tune trial's child runs this one problem (a problem JSON file)
  long long isolated_point = -1;  // hidden: a plugin row's child process runs only this problem (orchestrate/plugin_process)
};

// Adds every run flag to `app`.
void add_run_flags(CLI::App& app, RunFlags& f);
// Executes a run; returns the exit code (0 ok; 1 when any result is incorrect or failed). Throws
// UsageError on bad input before any work is done.
int run_command(const RunFlags& f, const std::vector<std::string>& argv);
// Writes the report to every --json/--md/--csv output (files first, then the one '-'), then the warnings to
// stderr, then the console table to stdout unless a report went there (or the parent prints it).
void emit_run_report(const RunFlags& f, const Report& report, const std::vector<std::string>& warnings);
// Parses "8GiB", "512MiB", "1e9", "2000000000" into bytes (1 B to 4 EiB); throws UsageError.
long long parse_bytes(const std::string& flag, const std::string& text);
// Parses "2%" or "0.02" into a fraction in [0, 1]; throws UsageError.
double parse_fraction(const std::string& flag, const std::string& text);

}  // namespace ab
