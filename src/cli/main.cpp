// attnbench entry point: CLI11 front end with the subcommands run (the default), list, tune, compare, grid and
// report, merge. Exit codes (README "Exit codes"): 0 ok; 1 a regression, an incorrect or failed row, or a
// tune without a winner; 2 bad input (one line on stderr); 3 a device error or an internal error (one line);
// 128 + the signal (130, 143) when SIGINT or SIGTERM stopped a run or tune (cli/stop_signals.hpp). Every
// error is one line of at most 1 KiB (core/text_excerpt.hpp's escaped_text), and output lost on a failing
// standard output is one more error (cli/standard_output.hpp).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command_notes.hpp"
#include "cli/commands.hpp"
#include "cli/describe_plugin_command.hpp"
#include "cli/help_format.hpp"
#include "cli/list_command.hpp"
#include "cli/parse_errors.hpp"
#include "cli/run_command.hpp"
#include "cli/standard_output.hpp"
#include "core/errors.hpp"
#include "core/phase_trace.hpp"
#include "core/text_excerpt.hpp"
#include "git_info.hpp"  // ATTNBENCH_GIT, generated at build time

namespace {

// One line on stderr, "attnbench: KIND: WHAT", whatever WHAT holds; returns `code`.
int say(const char* kind, const char* what, int code) {
  std::fprintf(stderr, "attnbench: %s: %s\n", kind, ab::escaped_text(what, 1024).c_str());
  return code;
}

int dispatch(int argc, char** argv) {
  CLI::App app{"attnbench: benchmark and autotune the GEMMs of multi-head attention on NVIDIA GPUs"};
  app.formatter(ab::help_formatter());  // before the subcommands, which inherit it
  app.set_version_flag("--version", std::string("attnbench ") + ATTNBENCH_VERSION + " (" + ATTNBENCH_GIT + ")");
  app.require_subcommand(0, 1);
  // A flag given twice takes its last value (scripts append overrides), as most CLIs do; noted after the parse.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  ab::RunFlags top_flags, run_flags;
  ab::add_run_flags(app, top_flags);
  CLI::App* run = app.add_subcommand("run", "run a problem or grid through every strategy (the default)");
  ab::add_run_flags(*run, run_flags);
  ab::Command list = ab::add_list_command(app);
  ab::Command tune = ab::add_tune_command(app);
  ab::Command compare = ab::add_compare_command(app);
  ab::Command report = ab::add_report_command(app);
  ab::Command grid = ab::add_grid_command(app);
  ab::Command merge = ab::add_merge_command(app);
  ab::Command describe_plugin = ab::add_describe_plugin_command(app);  // hidden: a plugin's loader process

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return say("error", ab::parse_error_line(app, e).c_str(), 2);
  } catch (const std::exception& e) {  // a flag's own conversion or check failing outside CLI11's errors
    return say("error", e.what(), 2);
  }
  // A flag given twice keeps its last value (scripts append overrides), and says so once the command has
  // checked its flags (a refused command says only its error).
  for (const std::string& note : ab::repeated_flag_notes(app)) ab::defer_note(note);

  std::vector<std::string> args(argv, argv + argc);
  auto chosen = [&]() -> int {
    if (*list.app) return list.run();
    if (tune.app && *tune.app) return tune.run();
    if (compare.app && *compare.app) return compare.run();
    if (report.app && *report.app) return report.run();
    if (grid.app && *grid.app) return grid.run();
    if (merge.app && *merge.app) return merge.run();
    if (describe_plugin.app && *describe_plugin.app) return describe_plugin.run();
    return ab::run_command(*run ? run_flags : top_flags, args);
  };
  try {
    const int rc = chosen();
    ab::say_deferred_notes(false);  // the commands that did not say them as they started (run, tune, grid do)
    return rc;
  } catch (const ab::UsageError& e) {
    return say("error", e.what(), 2);
  } catch (const ab::BackendError& e) {
    return say("device error", e.what(), 3);
  } catch (const std::bad_alloc&) {
    return say("error", "out of host memory", 3);
  } catch (const std::exception& e) {
    return say("internal error", e.what(), 3);
  } catch (...) {
    return say("internal error", "unknown exception", 3);
  }
}

// The last net: an exception that reaches std::terminate (thrown where nothing may throw: building the command
// line's parser, a destructor, a noexcept function) is still one line and exit 3, never an abort.
[[noreturn]] void on_terminate() {
  const char* what = "internal error: terminated";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      what = "error: out of host memory";
    } catch (...) {
    }
  }
  std::fprintf(stderr, "attnbench: %s\n", what);
  std::fflush(stderr);
  std::_Exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  ab::reserve_standard_descriptors();
  int rc = 3;
  if (ab::phase_trace_enabled()) ab::trace_phase("start: " + std::string(argc > 1 ? argv[1] : "run") + (argc > 2 ? " ..." : ""));
  try {
    rc = dispatch(argc, argv);
  } catch (const std::bad_alloc&) {  // thrown before dispatch's own handlers (the parser's construction)
    return say("error", "out of host memory", 3);
  }
  std::string lost = ab::standard_output_failure();
  if (ab::phase_trace_enabled()) ab::trace_phase("exit " + std::to_string(rc));
  if (lost.empty()) return rc;
  say("error", lost.c_str(), 2);
  return rc == 0 ? 2 : rc;
}
