// The run command: flags → grid → backend → runner → JSON report (atomic) + console table.
#include "cli/run_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "backends/cpu/cpu_backend.hpp"
#include "cli/backend_factory.hpp"
#include "cli/cache_library_versions.hpp"
#include "cli/command_notes.hpp"
#include "cli/run_dry_run.hpp"
#include "cli/command_paths.hpp"
#include "cli/flag_values.hpp"
#include "orchestrate/finished_rows.hpp"
#include "orchestrate/fresh_process.hpp"
#include "cli/grid_flags.hpp"
#include "orchestrate/grid_journal.hpp"
#include "orchestrate/run_devices.hpp"
#include "cli/peer_flags.hpp"
#include "cli/plugin_flags.hpp"
#include "orchestrate/plugin_process.hpp"
#include "cli/device_pool_flags.hpp"
#include "orchestrate/shard_choice.hpp"
#include "cli/stop_signals.hpp"
#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/json_file.hpp"
#include "core/problem_axes.hpp"
#include "core/stop_request.hpp"
#include "core/utc_timestamp.hpp"
#include "report/printers.hpp"
#include "core/file_writer.hpp"
#include "report/report_io.hpp"
#include "run/memory_estimate.hpp"
#include "run/runner.hpp"
#include "tune/heuristic_cache.hpp"
#include "strategies/plugin_library.hpp"
#include "strategies/plugin_mode.hpp"
#include "run/run_estimate.hpp"
#include "strategies/registry.hpp"

namespace ab {

void add_run_flags(CLI::App& app, RunFlags& f) {
  add_shared_flags(app, f,
                   {"untimed forwards before sampling (default 3; 1 on cpu; one when the rest would not fit in --max_time)",
                    "minimum samples (default 10; 3 on cpu)",
                    "seconds of sampling per point at most (default 1; 1 on cpu)",
                    "stop once relative noise is at or under this (2% or 0.02)", "events | graph | cupti",
                    "no progress line", {"events", "graph", "cupti"}, 1.0});
  app.add_flag("--verify", f.verify, "check every strategy against the reference");
  app.add_flag("--dry_run,--dry-run", f.dry_run,
               "print the problems, their strategies and launches and an estimated time; measure and write nothing");
  add_report_output_flags(app, f.outputs, "the report's table", "write the report (attnbench.report/1)");
  app.add_flag("--profile", f.profile,
               "profiling mode: per row one warm-up and one forward inside an NVTX range named after the row, no "
               "timing loop (for Nsight Compute, docs/profiling.md)");
  app.add_option("--max_samples,--max-samples", f.max_samples, "maximum samples")->capture_default_str();
  app.add_flag("--samples", f.keep_samples, "write every sample into the JSON");
  app.add_option("--rounds", f.rounds,
                 "time every row in this many rounds, each on freshly placed inputs, and report the trimmed mean "
                 "of their medians (default 1; the CI gate uses 20)")
      ->capture_default_str();
  app.add_option("--tile", f.tile, "fused tile, e.g. m128n64w4s2 (see attnbench list)");
  app.add_option("--cache", f.cache, "heuristic cache from `attnbench tune` to use");
  app.add_option("--resume_at", f.resume_at)->group("");  // internal: see continue_in_fresh_process
  app.add_flag("--no_table", f.no_table)->group("");
  app.add_option("--isolated_point", f.isolated_point)->group("");
  app.add_option("--isolated_problem", f.isolated_problem)->group("");
  app.add_option("--plugin_config,--plugin-config", f.plugin_config,
                 "configuration of the selected plugins to run (attnbench list shows them; default: the plugin's first, "
                 "or the cache's)");  // internal: see orchestrate/plugin_process.hpp
}

// --profile times nothing, so the flags that only shape timing are refused beside it, not ignored.
static void refuse_timing_flags_with_profile(const RunFlags& f) {
  if (!f.profile) return;
  if (f.rounds != 1) throw UsageError("--profile runs one forward per row; --rounds has nothing to repeat");
  if (f.keep_samples) throw UsageError("--profile takes no samples; leave --samples out");
  if (f.timer != "events") throw UsageError(fmt::format("--profile times nothing; --timer={} would be ignored", f.timer));
}

// A run flag that no selected strategy would use is refused, not ignored.
static void refuse_flags_without_effect(const RunFlags& f) {
  refuse_timing_flags_with_profile(f);
  if (!f.plugin_config.empty()) {
    bool plugin = false, known = false;
    for (const auto& s : make_strategies(f.strategies)) {
      plugin = plugin || s->runs_isolated();
      for (const std::string& c : s->tunable_configs()) known = known || c == f.plugin_config;
    }
    if (!plugin)
      throw UsageError(fmt::format("--plugin_config={}: no plugin is selected (--plugin=PATH, --strategies)", f.plugin_config));
    if (!known)
      throw UsageError(fmt::format("--plugin_config={}: no selected plugin has that configuration (attnbench list "
                                   "--plugin=PATH shows them)", f.plugin_config));
  }
  if (f.tile.empty()) return;
  bool fused = false;
  for (const auto& s : make_strategies(f.strategies)) fused = fused || s->uses_fused_tile();
  if (!fused)
    throw UsageError(fmt::format("--tile={}: only the fused strategy takes a tile, and --strategies={} does not select it",
                                 f.tile, f.strategies));
}

long long parse_bytes(const std::string& flag, const std::string& text) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    throw UsageError(fmt::format("--{}: '{}' is not a size (e.g. 8GiB, 512MiB, 1e9)", flag, text));
  }
  std::string unit = text.substr(pos);
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "KiB" || unit == "K") mult = 1024.0;
  else if (unit == "MiB" || unit == "M") mult = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G") mult = 1024.0 * 1024 * 1024;
  else if (unit == "KB") mult = 1e3;
  else if (unit == "MB") mult = 1e6;
  else if (unit == "GB") mult = 1e9;
  else throw UsageError(fmt::format("--{}: unknown unit in '{}' (B, KiB, MiB, GiB, KB, MB, GB)", flag, text));
  if (!(v > 0) || !std::isfinite(v)) throw UsageError(fmt::format("--{}: '{}' must be positive", flag, text));
  if (v * mult < 1) throw UsageError(fmt::format("--{}: '{}' is less than one byte", flag, text));
  if (v * mult > 0x1p62) throw UsageError(fmt::format("--{}: '{}' is more than 4 EiB", flag, text));
  return static_cast<long long>(v * mult);
}

double parse_fraction(const std::string& flag, const std::string& text) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    throw UsageError(fmt::format("--{}: '{}' is not a number or percentage", flag, text));
  }
  std::string rest = text.substr(pos);
  if (rest == "%") v /= 100;
  else if (!rest.empty()) throw UsageError(fmt::format("--{}: '{}' is not a number or percentage", flag, text));
  if (!(v >= 0) || !std::isfinite(v)) throw UsageError(fmt::format("--{}: '{}' must not be negative", flag, text));
  if (v > 1) throw UsageError(fmt::format("--{}: '{}' is more than 100%", flag, text));
  return v;
}

namespace {

FusedTile parse_tile(const std::string& s) {
  if (std::optional<FusedTile> t = FusedTile::from_name(s)) return *t;
  throw UsageError(fmt::format("--tile: '{}' is not a tile name like m128n64w4s2, decode, decode-s8, decode-ws-s8 or decode-ws-n128 "
                               "(`attnbench list` shows the compiled tiles and the head_dims each takes)", s));
}

// What run_command knows once every flag has been checked, before any device work.
struct CheckedRun {
  RunOptions opt;
  double max_time = 0;
  const char* slowdown = nullptr;  // ATTNBENCH_INJECT_SLOWDOWN as given
  std::optional<HeuristicCache> cache;
  Shard shard;
  std::vector<std::size_t> shard_problems;  // grid indices this process runs
};

// The grid, the strategies and how they run: --scores, --tile, --timer.
void check_strategy_flags(const RunFlags& f, RunOptions& opt) {
  opt.problems = problems_from_flags(f, runs_on_cpu(f.backend));
  opt.strategies = f.strategies;
  (void)make_strategies(f.strategies);  // unknown names fail here
  refuse_flags_without_effect(f);
  opt.verify = f.verify;
  opt.seed = f.seed;
  opt.quiet = f.quiet;
  opt.profile = f.profile;
  opt.strategy.fp32_scores = f.scores == "fp32";
  opt.strategy.gqa_packing = f.gqa_packing == "on";
  if (!f.tile.empty()) opt.tile = parse_tile(f.tile);
  opt.plugin_config = f.plugin_config;
  if (!f.isolated_problem.empty())
    opt.problems = {problem_from_json(read_json_file(f.isolated_problem), f.isolated_problem)};
  if (!parse_timer_kind(f.timer, &opt.measure.timer)) throw UsageError(fmt::format("--timer: unknown timer '{}' (events, graph, cupti)", f.timer));
}

// The measurement flags; returns --max_time in seconds.
double check_measure_flags(const RunFlags& f, MeasureSettings& measure) {
  measure.max_noise = parse_fraction("max_noise", f.max_noise);
  measure.hot = f.hot;
  if (f.start_delay_ms >= 0) measure.start_delay_ms = f.start_delay_ms;
  measure.keep_samples = f.keep_samples;
  measure.rounds = f.rounds;
  if (f.rounds < 1 || f.rounds > kMaxRounds) throw UsageError(fmt::format("--rounds must be between 1 and {}", kMaxRounds));
  if (f.max_samples < 1) throw UsageError("--max_samples must be at least 1");
  check_sample_flags(f.warmup, f.min_samples, f.max_samples);
  return parse_max_time(f.max_time, 1.0);
}

// A plugin row's child process (orchestrate/plugin_process.hpp): it runs its one plugin on its one problem itself.
static bool plugin_row_child(const RunFlags& f) { return f.isolated_point >= 0 || !f.isolated_problem.empty(); }

// Everything the user typed, in the order it is checked; throws UsageError on the first bad flag.
void check_run_flags(const RunFlags& f, CheckedRun& run) {
  RunOptions& opt = run.opt;
  // Before --strategies, which may name them. Only a process that runs plugin rows itself (a row's child) loads
  // their code; the others (--devices workers included) learn them from loader processes.
  load_flag_plugins(f, plugin_row_child(f) ? PluginCode::here : PluginCode::in_loaders);
  check_strategy_flags(f, opt);
  if (f.isolated_point >= 0) {
    if (static_cast<std::size_t>(f.isolated_point) >= opt.problems.size())
      throw UsageError("--isolated_point: past the end of the grid");
    opt.start_problem = static_cast<std::size_t>(f.isolated_point);
    opt.end_problem = opt.start_problem + 1;
  }
  run.max_time = check_measure_flags(f, opt.measure);
  if (f.device < 0) throw UsageError("--device must be >= 0");
  if (!f.max_memory.empty()) opt.max_memory = parse_bytes("max_memory", f.max_memory);
  check_report_outputs(f.outputs);
  std::vector<RolePath> inputs = grid_input_paths(f, opt.problems);
  if (!f.cache.empty()) inputs.push_back({"--cache", f.cache});
  check_outputs_distinct(report_output_paths(f.outputs, /*json_journal=*/true), inputs);
  const std::string& json_file = f.outputs.json == "-" ? std::string() : f.outputs.json;
  if (f.resume && json_file.empty()) throw UsageError("--resume: needs --json=PATH (the journal is PATH.journal)");
  run.shard = choose_shard(f.shard);
  run.shard_problems = shard_problems(opt.problems, run.shard);
  if (!f.resume_at.empty() && std::sscanf(f.resume_at.c_str(), "%zu:%zu", &opt.start_problem, &opt.start_strategy) != 2)
    throw UsageError("--resume_at: expected P:S");
  if (const char* fault = std::getenv("ATTNBENCH_INJECT_FAULT")) opt.inject_fault = fault;
  run.slowdown = std::getenv("ATTNBENCH_INJECT_SLOWDOWN");
  if (run.slowdown && *run.slowdown) opt.slowdown = parse_slowdown(run.slowdown);
  if (!f.cache.empty()) run.cache = HeuristicCache::load(f.cache);
}

// The sampling defaults that depend on the backend (fewer on the CPU).
void apply_backend_defaults(const RunFlags& f, bool cpu, double max_time, MeasureSettings& measure) {
  measure.warmup = f.warmup >= 0 ? f.warmup : (cpu ? 1 : 3);
  measure.min_samples = f.min_samples >= 1 ? f.min_samples : (cpu ? 3 : 10);
  measure.max_samples = f.max_samples;
  measure.max_time_s = max_time;
}

// Refuse a run in which no selected strategy can run any problem.
void refuse_grid_no_strategy_runs(const RunOptions& opt, Backend& backend) {
  bool any = false;
  std::string first_reason;
  auto strategies = make_strategies(opt.strategies);
  for (const Problem& p : opt.problems)
    for (const auto& s : strategies) {
      std::string why = s->can_run(p, backend, strategy_options(opt, *s));
      if (why.empty()) any = true;
      else if (first_reason.empty()) first_reason = fmt::format("{} on {}: {}", s->name(), p.label(), why);
      if (any) break;
    }
  if (!any) throw UsageError(fmt::format("no strategy can run any problem of this grid ({})", first_reason));
}

// Installs --cache's entries on the backend and lets the runner ask it for fused tiles; returns the warning
// about entries from another environment (printed now), if any.
std::vector<std::string> install_cache(const HeuristicCache& cache, Backend& backend, const DeviceInfo& dev,
                                       RunOptions& opt) {
  std::vector<std::string> warnings;
  int skipped = cache.install(backend);
  if (skipped > 0) {
    std::string w = fmt::format("{} cache entries come from another environment and were not applied", skipped);
    warnings.push_back(w);
    std::fprintf(stderr, "attnbench: warning: %s\n", w.c_str());
  }
  const HeuristicCache* c = &cache;
  opt.cached_tile = [c, dev](const Problem& p, FusedTile* t) {
    auto tile = c->fused_tile(p, dev);
    if (tile) *t = *tile;
    return tile.has_value();
  };
  opt.cached_plugin_config = [c, dev](const Problem& p, const std::string& strategy, std::string* config) {
    auto found = c->plugin_config(p, strategy, dev);
    if (found) *config = *found;
    return found.has_value();
  };
  return warnings;
}

// The warnings known before the grid runs: --cache's (entries of another environment, or of another version of
// a plugin's or peer's library: not applied), the CPU backend's, an injected slowdown's.
std::vector<std::string> warnings_before_running(CheckedRun& run, Backend& backend, const DeviceInfo& dev) {
  std::vector<std::string> warnings;
  if (run.cache) {
    const std::vector<std::string> stale = drop_entries_of_other_library_versions(*run.cache, dev);
    warnings = install_cache(*run.cache, backend, dev, run.opt);
    for (const std::string& w : stale) {
      warnings.push_back(w);
      if (!run.opt.quiet) std::fprintf(stderr, "attnbench: warning: %s\n", w.c_str());
    }
  }
  if (backend.kind() == BackendKind::cpu) warnings.push_back("CPU reference backend: times are CPU times, not GPU times");
  if (!run.opt.slowdown.empty())
    warnings.push_back(fmt::format("ATTNBENCH_INJECT_SLOWDOWN={}: rows are deliberately slowed (a test of the CI gate), "
                                   "not real measurements", run.slowdown));
  return warnings;
}

// The report's settings object: the measurement settings and the run's own choices.
nlohmann::json run_settings(const RunFlags& f, const CheckedRun& run) {
  const RunOptions& opt = run.opt;
  nlohmann::json settings = opt.measure.to_json();
  settings["verify"] = opt.verify;
  settings["score_dtype"] = f.scores;
  settings["seed"] = opt.seed;
  settings["max_memory"] = opt.max_memory;
  if (!f.cache.empty()) settings["cache"] = f.cache;
  if (!opt.slowdown.empty()) settings["injected_slowdown"] = run.slowdown;
  if (opt.profile) settings["profile"] = true;
  return settings;
}

// The journal's header: what must match for --resume to continue it. `device`: the device's backend and name
// (DeviceInfo::to_json's, or a --devices worker's). `peers`: the peers loaded (--peers or a suite's), by name.
nlohmann::json journal_header(const RunFlags& f, const CheckedRun& run, const nlohmann::json& device) {
  nlohmann::json settings = run_settings(f, run);
  settings["strategies"] = f.strategies;
  settings["tile"] = f.tile;
  settings["gqa_packing"] = f.gqa_packing;
  return {{"command", "run"},
          {"tool", {{"version", this_tool().version}, {"git", this_tool().git}}},
          {"device", {{"backend", device.value("backend", "")}, {"name", device.value("name", "")}}},
          {"settings", settings},
          {"peers", loaded_peers()},
          {"grid", grid_fingerprint(run.opt.problems)},
          {"shard", run.shard.text()}};
}

// Whether the run keeps a journal beside --json (none for a pipe or device, or in a fresh-process child, whose
// parent keeps it).
bool keeps_journal(const RunFlags& f) { return !f.outputs.json.empty() && f.outputs.json != "-" && f.resume_at.empty(); }

// The journal beside --json, for a run on `device` (its backend and name).
GridJournal open_journal(const RunFlags& f, const CheckedRun& run, const nlohmann::json& device) {
  if (!keeps_journal(f)) return GridJournal();
  return GridJournal(journal_path_for(f.outputs.json), journal_header(f, run, device), f.resume, f.quiet,
                     run.shard_problems);
}

// The warning an interrupted report carries; `finished`: problems with rows (resumed ones included).
std::string interruption_warning(const CheckedRun& run, std::size_t finished, const GridJournal& journal) {
  std::string resume = journal.active() ? fmt::format("; `--resume` continues from '{}'", journal.path()) : "";
  return fmt::format("interrupted by {}: {} of {} problem(s){} finished{}", signal_name(stop_signal()), finished,
                     run.shard_problems.size(), run.shard.whole() ? "" : " of shard " + run.shard.text(), resume);
}

// The names of the strategies a problem's rows come from, in order.
std::vector<std::string> strategy_names_of(const std::string& list) {
  std::vector<std::string> names;
  for (const auto& s : make_strategies(list)) names.push_back(s->name());
  return names;
}

// Every warning on stderr (unless --quiet), but the CPU backend's, which the table states.
void print_warnings(const std::vector<std::string>& warnings, bool quiet) {
  for (const auto& w : warnings)
    if (w.find("CPU reference backend") == std::string::npos && !quiet)
      std::fprintf(stderr, "attnbench: warning: %s\n", w.c_str());
}

// The end of a run, in one process or on --devices: the journal's record and the interruption in the report,
// the report written and printed, the journal finished (a complete run without --resume); the exit code.
// `finished`: problems with rows, resumed ones included.
int end_run(const RunFlags& f, const CheckedRun& run, Report& report, GridJournal& journal, std::size_t finished);

// Each problem's estimated seconds (the dry run's model, run/run_estimate.hpp), for the pool's longest-first
// order: the built-in strategies the run names, asked whether they take it on the CPU backend (the parent opens
// no device), at a nominal GPU's rates unless the run is on the CPU.
std::vector<double> estimated_problem_seconds(const RunFlags& f, const RunOptions& opt, const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<Strategy>> built_in;
  for (auto& s : make_all_strategies())
    if (std::find(names.begin(), names.end(), s->name()) != names.end()) built_in.push_back(std::move(s));
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  DeviceInfo dev;
  if (runs_on_cpu(f.backend)) {
    dev = cpu->device_info();
  } else {
    dev.backend = "cuda";
    dev.l2_bytes = std::int64_t(50) << 20;
  }
  std::vector<double> out;
  for (const Problem& p : opt.problems) out.push_back(estimate_problem(p, built_in, *cpu, opt, dev).seconds);
  return out;
}

// run --devices: the pool runs the grid (orchestrate/run_devices.hpp) with the same journal as one process.
// `worker_argv`: argv as its workers are told (arguments_with_loaded_peers); the report records argv.
int run_on_devices(const RunFlags& f, CheckedRun& run, const std::vector<std::string>& argv,
                   const std::vector<std::string>& worker_argv) {
  // The settings as the workers apply them on their backend (the one --backend picks, as it picked the grid's
  // sizes), so that the journal's header lets one process resume it.
  apply_backend_defaults(f, runs_on_cpu(f.backend), run.max_time, run.opt.measure);
  DevicesJournal dj;
  dj.strategies = strategy_names_of(run.opt.strategies);
  if (keeps_journal(f)) dj.open = [&](const nlohmann::json& device) { return open_journal(f, run, device); };
  DevicesRun out = run_grid_on_devices(device_pool_options(f), run.opt, worker_argv, dj,
                                       estimated_problem_seconds(f, run.opt, dj.strategies));
  out.report.command = join_arguments(argv);
  return end_run(f, run, out.report, out.journal, out.finished);
}

}  // namespace

void emit_run_report(const RunFlags& f, const Report& report, const std::vector<std::string>& warnings) {
  // Every report is written before anything is printed; the table goes to stdout unless a report does.
  write_report_outputs(f.outputs, [&report](const std::string& format) {
    return format == "json" ? to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                            : render_report(report, format);
  });
  print_warnings(warnings, f.quiet);
  if (!f.no_table && !f.outputs.to_stdout()) print_console_table(report, stdout);
}

namespace {

int end_run(const RunFlags& f, const CheckedRun& run, Report& report, GridJournal& journal, std::size_t finished) {
  report.shard = shard_record(run.shard, run.opt.problems, run.shard_problems);
  const bool complete = finished == run.shard_problems.size();
  if (journal.resumed().size() > 0 || journal.dropped() > 0)
    report.journal = {{"path", journal.path()}, {"resumed_problems", journal.resumed().size()},
                      {"dropped_lines", journal.dropped()}, {"complete", complete}};
  // A signal that came once every problem had finished interrupted nothing: the report is complete.
  const bool interrupted = stop_requested() && !complete;
  if (stop_requested() && complete)  // said even with --quiet, as the resume notes are
    std::fprintf(stderr, "attnbench: note: %s came after the last problem finished; the report is complete\n",
                 signal_name(stop_signal()).c_str());
  if (interrupted) {
    report.interrupted = signal_name(stop_signal());
    report.warnings.push_back(interruption_warning(run, finished, journal));
  }
  emit_run_report(f, report, report.warnings);
  if (interrupted) return interrupted_exit_code();
  // Finished and written: the journal goes, unless --resume asked for one that lasts (a requeued job whose
  // work is done must find it done, not start again).
  if (complete && !f.resume) journal.finish();
  return count_errors(report.rows) ? 1 : 0;
}

}  // namespace

int run_command(const RunFlags& f, const std::vector<std::string>& argv) {
  // From the first moment: a signal while the run starts still ends in a report (of no rows) and a journal.
  install_stop_signals();
  std::string command_line = join_arguments(argv);
  // Everything the user typed is checked before any device work.
  CheckedRun run;
  check_run_flags(f, run);
  // What its workers, fresh processes and plugin rows' children are told: the peers loaded here, by name.
  const std::vector<std::string> child_argv = arguments_with_loaded_peers(argv);
  RunOptions& opt = run.opt;
  if (f.dry_run && (!f.devices.empty() || f.resume || f.profile))
    throw UsageError("--dry_run estimates one plain run on one device: leave --devices, --resume and --profile out");
  if (!f.devices.empty() && f.worker_dir.empty()) {
    if (!run.shard.whole())  // the worker pool hands out the whole grid
      throw UsageError(fmt::format("--devices: not combined with a shard ({}) yet; run each shard on one device",
                                   run.shard.text()));
    say_deferred_notes(f.quiet);
    return run_on_devices(f, run, argv, child_argv);
  }

  auto backend = make_backend(f.backend, f.device);
  check_flags_for_backend(f, *backend);
  apply_backend_defaults(f, backend->kind() == BackendKind::cpu, run.max_time, opt.measure);
  DeviceInfo dev = backend->device_info();
  const bool plugin_child = plugin_row_child(f);
  if (!plugin_child) refuse_grid_no_strategy_runs(opt, *backend);
  // Refused before anything is allocated (run_grid_rows checks again for its other callers).
  check_memory_or_throw(*backend, opt.problems, opt.verify, memory_limit(dev, opt.max_memory));
  announce_cpu_fallback(f.backend, *backend, f.quiet);
  say_deferred_notes(f.quiet || !f.worker_dir.empty() || plugin_child || !f.resume_at.empty());
  if (f.dry_run) {
    print_dry_run(*backend, opt, stdout);
    return 0;
  }
  std::vector<std::string> warnings = warnings_before_running(run, *backend, dev);

  // Plugin and peer rows run in child processes with a time limit, in one process and in each --devices worker
  // (the child, --isolated_point, runs them itself).
  std::vector<std::string> plugin_warnings;
  if (!plugin_child && !loaded_plugins().empty()) {
    set_plugins_run_in_process(false);
    opt.isolated_rows = [&](std::size_t index, const Problem& p, const Strategy& st) {
      return run_plugin_rows_in_child(child_argv, index, p, st, f.plugin_timeout, dev.copy_bandwidth_gbps, &plugin_warnings);
    };
  }
  if (!f.worker_dir.empty()) return serve_run_tasks(f, *backend, opt, warnings, run_settings(f, run));

  GridJournal journal = open_journal(f, run, dev.to_json());
  FinishedRows done(opt.problems, journal, strategy_names_of(opt.strategies));
  std::vector<bool> mine(opt.problems.size(), false);
  for (std::size_t pi : run.shard_problems) mine[pi] = true;
  opt.include = [&](std::size_t pi) { return mine[pi] && !journal.done(pi); };
  opt.problem_done = [&](std::size_t pi, const std::vector<ResultRow>& rows) { done.add(pi, rows); };

  ResumePoint resume;
  Report report;
  std::vector<ResultRow> rows = run_grid_rows(*backend, opt, &warnings, &resume);
  if (resume.needed) {
    backend.reset();  // give the broken context up before the fresh process opens the device
    std::vector<ResultRow> fresh;
    continue_in_fresh_process(child_argv, resume, &fresh, &warnings);
    done.add_unindexed(rows);
    done.add_unindexed(fresh);
  }
  report.rows = done.in_grid_order();
  for (const std::string& w : plugin_warnings)
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);

  report.tool = this_tool();
  report.command = command_line;
  report.created = utc_timestamp();
  report.device = dev.to_json();
  report.devices = {dev.to_json()};
  report.devices.front()["index"] = f.device;
  for (ResultRow& row : report.rows) row.device = f.device;
  report.settings = run_settings(f, run);
  report.warnings = warnings;
  return end_run(f, run, report, journal, done.problems());
}

}  // namespace ab
