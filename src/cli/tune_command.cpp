// `attnbench tune`: grid flags or --config → GEMM algorithm and fused tile search → attnbench.cache/1
// (merged into --cache, written atomically after every problem) → summary table.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli/backend_factory.hpp"
#include "cli/cache_library_versions.hpp"
#include "cli/command_notes.hpp"
#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/grid_flags.hpp"
#include "cli/command_paths.hpp"
#include "cli/device_pool_flags.hpp"
#include "cli/peer_flags.hpp"
#include "orchestrate/grid_journal.hpp"
#include "cli/report_outputs.hpp"
#include "cli/plugin_flags.hpp"
#include "orchestrate/plugin_process.hpp"
#include "orchestrate/shard_choice.hpp"
#include "cli/stop_signals.hpp"
#include "cli/shared_flags.hpp"
#include "orchestrate/tune_devices.hpp"
#include "cli/run_command.hpp"
#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "core/grid.hpp"
#include "core/stop_request.hpp"
#include "run/run_report.hpp"
#include "core/strategy.hpp"
#include "core/file_writer.hpp"
#include "core/json_document.hpp"
#include "run/memory_estimate.hpp"
#include "tune/heuristic_cache.hpp"
#include "tune/tune_summary.hpp"
#include "tune/tune_summary_formats.hpp"
#include "tune/tuner.hpp"
#include "strategies/plugin_library.hpp"
#include "strategies/plugin_mode.hpp"
#include "strategies/registry.hpp"

namespace ab {

namespace {

// The grid, strategy, backend and measurement flags come from SharedFlags (cli/shared_flags.hpp).
struct TuneFlags : SharedFlags {
  TuneFlags() { timer = "auto"; }
  std::string cache;
  int top = 8;
  int max_candidates = 0;
  int finalists = 4;
  int screen_samples = 3;
  int screen_calls = 32;
  double screen_cutoff = 1.5;
  int probe_calls = 4;
  bool probe_flush = false;
  double group_margin = 1.5;
  HalvingRule halving;  // --halving_keep, --halving_final, --halving_band, --halving_band_limit
  bool dry_run = false;
  std::string search = "heuristic";
  bool skip_cached = false;
  int split_candidates = 4000;  // hidden: tune --devices' screening unit size (docs/scale-out-devices.md)
  ReportOutputs outputs;  // --json/--md/--csv: the summary as data, files or '-' for stdout
};


// --halving_keep, --halving_final, --halving_band, --halving_band_limit: successive halving's rule
// (tune/shape_screen.hpp).
void check_halving_flags(const HalvingRule& h) {
  if (!(h.keep == 0 || (h.keep > 0 && h.keep < 1)))
    throw UsageError(fmt::format("--halving_keep must be 0 (off) or a fraction between 0 and 1, got {}", h.keep));
  if (h.final_round < 1) throw UsageError(fmt::format("--halving_final must be at least 1, got {}", h.final_round));
  if (!(h.band >= 0 && h.band < 1))
    throw UsageError(fmt::format("--halving_band must be a fraction from 0 up to 1, got {}", h.band));
  if (!(h.band_limit == 0 || (h.band_limit >= 1 && std::isfinite(h.band_limit))))
    throw UsageError(
        fmt::format("--halving_band_limit must be 0 (no limit) or a factor of at least 1, got {}", h.band_limit));
}

// The search flags: --top, --search, --max_candidates, --finalists, the screen's flags, --dry_run.
void check_search_flags(const TuneFlags& f, TuneOptions& opt) {
  if (f.top < 1) throw UsageError(fmt::format("--top must be at least 1, got {}", f.top));
  opt.top = f.top;
  if (f.max_candidates < 0)
    throw UsageError(fmt::format("--max_candidates must be 0 (no cap) or more, got {}", f.max_candidates));
  opt.max_candidates = f.max_candidates;
  if (f.finalists < 1) throw UsageError(fmt::format("--finalists must be at least 1, got {}", f.finalists));
  opt.finalists = f.finalists;
  if (f.screen_samples < 1) throw UsageError(fmt::format("--screen_samples must be at least 1, got {}", f.screen_samples));
  if (f.screen_calls < 0) throw UsageError(fmt::format("--screen_calls must be 0 (all) or more, got {}", f.screen_calls));
  opt.screen_calls = f.screen_calls;
  opt.dry_run = f.dry_run;
  if (!(f.screen_cutoff == 0 || f.screen_cutoff >= 1))
    throw UsageError(fmt::format("--screen_cutoff must be 0 (off) or at least 1, got {}", f.screen_cutoff));
  opt.screen_cutoff = f.screen_cutoff;
  if (f.probe_calls < 0) throw UsageError(fmt::format("--probe_calls must be 0 (the screen's calls) or more, got {}", f.probe_calls));
  opt.probe_calls = f.probe_calls;
  opt.probe_flush = f.probe_flush;
  if (!(f.group_margin == 0 || f.group_margin >= 1))
    throw UsageError(fmt::format("--group_margin must be 0 (off) or at least 1, got {}", f.group_margin));
  opt.group_margin = f.group_margin;
  check_halving_flags(f.halving);
  opt.halving = f.halving;
  opt.exhaustive = f.search == "exhaustive";
}

// --scores, --timer and the measurement flags; returns --max_time in seconds.
double check_measure_flags(const TuneFlags& f, TuneOptions& opt) {
  opt.strategy.fp32_scores = f.scores == "fp32";
  opt.strategy.gqa_packing = f.gqa_packing == "on";
  if (f.timer != "auto" && !parse_timer_kind(f.timer, &opt.measure.timer))
    throw UsageError(fmt::format("--timer: unknown timer '{}' (auto, events, graph, cupti)", f.timer));
  opt.measure.max_noise = parse_fraction("max_noise", f.max_noise);
  opt.measure.hot = f.hot;
  if (f.start_delay_ms >= 0) opt.measure.start_delay_ms = f.start_delay_ms;
  check_sample_flags(f.warmup, f.min_samples, 0);
  return parse_max_time(f.max_time, 0.5);
}

// --cache: required unless --dry_run, not a directory; an existing file must be a valid cache (it is merged
// into, never overwritten blindly) and is returned.
HeuristicCache check_cache_flag(const TuneFlags& f) {
  if (f.cache.empty() && !f.dry_run) throw UsageError("--cache: a file to write is required");
  if (std::error_code ec; !f.cache.empty() && std::filesystem::is_directory(f.cache, ec))
    throw UsageError(fmt::format("--cache: '{}' is a directory", f.cache));
  HeuristicCache existing = f.cache.empty() ? HeuristicCache() : HeuristicCache::load_or_empty(f.cache);
  if (!f.dry_run) check_writable(f.cache);
  return existing;
}

// Everything the user typed, in the order it is checked; throws UsageError on the first bad flag. Returns
// --max_time in seconds.
double check_tune_flags(const TuneFlags& f, TuneOptions& opt) {
  // Before --strategies, which may name them; their code is loaded only in the trials' child processes.
  load_flag_plugins(f, PluginCode::in_loaders);
  opt.problems = problems_from_flags(f, runs_on_cpu(f.backend));
  opt.strategies = f.strategies;
  (void)make_strategies(f.strategies);  // unknown names fail here
  check_search_flags(f, opt);
  opt.seed = f.seed;
  opt.quiet = f.quiet;
  const double max_time = check_measure_flags(f, opt);
  if (f.device < 0) throw UsageError("--device must be >= 0");
  if (!f.max_memory.empty()) opt.max_memory = parse_bytes("max_memory", f.max_memory);
  return max_time;
}

// The measurement settings that depend on the backend (fewer samples and events on the CPU).
void apply_backend_defaults(const TuneFlags& f, bool cpu, double max_time, TuneOptions& opt) {
  opt.measure.warmup = f.warmup >= 0 ? f.warmup : (cpu ? 1 : 3);
  opt.measure.min_samples = f.min_samples >= 1 ? f.min_samples : (cpu ? 3 : 10);
  opt.measure.max_time_s = max_time;
  // auto: graph replay on a GPU. An algorithm or tile changes only what runs on the GPU, never the host's
  // launch work, so the tuner ranks by GPU time; under events a launch-bound strategy (nested) would be
  // ranked by host noise. The CPU backend has no graphs.
  if (f.timer == "auto") opt.measure.timer = cpu ? TimerKind::events : TimerKind::graph;
  opt.screen = screening_settings(opt.measure, f.screen_samples);
}

// The header line on stderr: the grid, the search, the timing and the environment.
void print_tune_header(const TuneFlags& f, const TuneOptions& opt, const Backend& backend, bool cpu) {
  std::string search = opt.exhaustive
                           ? (opt.max_candidates ? fmt::format("exhaustive (at most {} per GEMM)", opt.max_candidates)
                                                 : std::string("exhaustive (whole space)"))
                           : fmt::format("heuristic top-{}", opt.top);
  const HalvingRule& h = opt.halving;
  const std::string limit = h.band_limit > 0 ? fmt::format(", at most {:g}x as many", h.band_limit) : std::string();
  std::string halving = h.on() ? fmt::format("successive halving (the fastest {:g} of a stage and any within {:g}% of it "
                                             "go on{}, down to {}), then a ", h.keep, 100 * h.band, limit, h.final_round)
                               : std::string("no halving: a ");
  if (opt.exhaustive && h.on() && opt.group_margin > 0 && opt.screen_cutoff > 0)
    halving = fmt::format("a grouped probe (a representative per base configuration first; the variants of those over "
                          "{:g}x the fastest are not probed), ", opt.group_margin) + halving;
  std::fprintf(stderr, "attnbench tune: %zu problem(s), strategies %s, search %s, %s; %s timer, %s%d-sample screen of "
               "at most %d calls, %d finalist(s) re-measured; on %s\n",
               opt.problems.size(), f.strategies.c_str(), search.c_str(), opt.dry_run ? "dry run" : "timed",
               timer_kind_name(opt.measure.timer), halving.c_str(), f.screen_samples, f.screen_calls, f.finalists,
               CacheEnvironment::from_device(backend.device_info()).describe().c_str());
  if (cpu) std::fprintf(stderr, "attnbench tune: CPU reference backend: times are CPU times, not GPU times\n");
}

// Saves what was found into `path` (merged), says so, and returns the exit code: 1 when a shape or tile
// found no winner or a strategy failed.
int save_and_finish(const TuneOutcome& out, const std::string& path, std::FILE* say) {
  HeuristicCache written = with_library_versions(out.cache).save(path);
  std::fprintf(say, "wrote %zu GEMM and %zu fused entries to %s (it now holds %zu GEMM and %zu fused entries, %zu environment(s))\n",
              out.cache.gemm_entries().size(), out.cache.fused_entries().size(), path.c_str(),
              written.gemm_entries().size(), written.fused_entries().size(), written.environments().size());
  int no_winner = 0;
  for (const auto& r : out.gemm) no_winner += r.best < 0;
  for (const auto& r : out.fused) no_winner += r.best < 0;
  for (const auto& r : out.plugins) no_winner += r.best < 0;
  return no_winner || out.failed_strategies ? 1 : 0;
}

// tune --devices' output: each problem's summaries in grid order, then what was written (the workers' entries
// were merged into `path` after every problem). Returns 1 when a problem failed.
int print_device_tune(const DeviceTuneOutcome& out, const std::string& path, bool dry_run) {
  std::fputs(out.summaries.c_str(), stdout);
  if (dry_run) return out.failed ? 1 : 0;
  HeuristicCache written = out.found.save(path);
  std::printf("wrote %zu GEMM and %zu fused entries from %zu device(s) to %s (it now holds %zu GEMM and %zu fused "
              "entries, %zu environment(s))\n",
              out.found.gemm_entries().size(), out.found.fused_entries().size(), out.devices, path.c_str(),
              written.gemm_entries().size(), written.fused_entries().size(), written.environments().size());
  return out.failed ? 1 : 0;
}

// Plugins are tuned one configuration at a time in child processes (orchestrate/plugin_process.hpp), measured as
// run measures a row, with tune's measurement settings.
void install_plugin_trials(const TuneFlags& f, const Backend& backend, TuneOptions& opt) {
  set_plugins_run_in_process(false);
  PluginTrialSetup s;
  s.backend = backend_kind_name(backend.kind());
  s.device = f.device;
  s.timeout_s = f.plugin_timeout;
  s.copy_gbps = backend.device_info().copy_bandwidth_gbps;
  const MeasureSettings& m = opt.measure;
  s.measure_flags = {fmt::format("--warmup={}", m.warmup), fmt::format("--min_samples={}", m.min_samples),
                     fmt::format("--max_time={}", m.max_time_s), fmt::format("--max_noise={}", m.max_noise),
                     fmt::format("--timer={}", timer_kind_name(m.timer))};
  if (m.hot) s.measure_flags.push_back("--hot");
  const std::uint64_t seed = opt.seed;
  opt.plugin_trial = [s, seed](std::size_t index, const Problem& p, const Strategy& st, const std::string& config) {
    PluginTrialSetup one = s;
    one.seed = seed + index;
    return run_plugin_trial_in_child(one, p, st, config);
  };
}

// The journal's header: what must match for --resume to continue it (the search and measurement flags).
nlohmann::json tune_journal_header(const TuneFlags& f, const TuneOptions& opt, const Shard& shard, const DeviceInfo& dev) {
  nlohmann::json settings = {{"strategies", f.strategies}, {"search", f.search}, {"top", f.top},
                             {"max_candidates", f.max_candidates}, {"finalists", f.finalists},
                             {"screen_samples", f.screen_samples}, {"screen_calls", f.screen_calls},
                             {"screen_cutoff", f.screen_cutoff}, {"probe_calls", f.probe_calls},
                             {"probe_flush", f.probe_flush}, {"group_margin", f.group_margin},
                             {"halving_keep", f.halving.keep}, {"halving_final", f.halving.final_round},
                             {"halving_band", f.halving.band}, {"halving_band_limit", f.halving.band_limit},
                             {"skip_cached", f.skip_cached},
                             {"scores", f.scores}, {"gqa_packing", f.gqa_packing}, {"seed", f.seed},
                             {"measure", opt.measure.to_json()}};
  return {{"command", "tune"},
          {"tool", {{"version", this_tool().version}, {"git", this_tool().git}}},
          {"device", {{"backend", dev.backend}, {"name", dev.name}}},
          {"settings", settings},
          {"peers", loaded_peers()},  // by name: a resume loads the same peers
          {"grid", grid_fingerprint(opt.problems)},
          {"shard", shard.text()}};
}

// Stopped by SIGINT/SIGTERM (one process or --devices): the cache file holds every problem finished before the
// signal, and an active journal lets --resume continue.
int finish_interrupted(const TuneOptions& opt, const GridJournal& journal, std::size_t finished, std::size_t total,
                       const std::string& path) {
  std::fprintf(stderr, "attnbench tune: interrupted by %s: %zu of %zu problem(s) tuned%s; %s holds what finished%s\n",
               signal_name(stop_signal()).c_str(), finished, total, opt.dry_run ? " (dry run)" : "", quoted_path(path).c_str(),
               journal.active() ? fmt::format("; `--resume` continues from {}", quoted_path(journal.path())).c_str() : "");
  return interrupted_exit_code();
}

int tune_main(const TuneFlags& f) {
  // From the first moment: a signal while the tune starts still leaves a cache and a journal of what finished.
  install_stop_signals();
  // Everything the user typed is checked before any device work.
  TuneOptions opt;
  const double max_time = check_tune_flags(f, opt);
  if (f.resume && (f.dry_run || f.cache.empty())) throw UsageError("--resume: needs --cache=PATH and no --dry_run");
  const Shard shard = choose_shard(f.shard);
  const std::vector<std::size_t> shard_indices = shard_problems(opt.problems, shard);
  HeuristicCache existing = check_cache_flag(f);
  check_report_outputs(f.outputs);
  std::vector<RolePath> outputs = report_output_paths(f.outputs, /*json_journal=*/false);
  if (!f.cache.empty()) {
    outputs.push_back({"--cache", f.cache});
    outputs.push_back({"the journal of --cache", journal_path_for(f.cache)});
  }
  check_outputs_distinct(outputs, grid_input_paths(f, opt.problems));
  if (!f.devices.empty() && f.worker_dir.empty()) {
    if (!shard.whole() || f.resume)  // the worker pool hands out the whole grid
      throw UsageError(fmt::format("--devices: not combined with a shard ({}) or --resume yet; tune each shard on one device",
                                   shard.whole() ? "whole grid" : shard.text()));
    if (f.split_candidates < 1)
      throw UsageError(fmt::format("--split_candidates must be at least 1, got {}", f.split_candidates));
    const DeviceTuneOutcome out =
        tune_on_devices(device_pool_options(f), opt, f.cache, static_cast<std::size_t>(f.split_candidates));
    const int rc = print_device_tune(out, f.cache, opt.dry_run);
    // SIGINT/SIGTERM: the pool handed out nothing more and dropped the work in flight; the cache holds what
    // the workers finished before it (no journal: --devices does not resume yet).
    if (stop_requested() && out.finished < opt.problems.size())
      return finish_interrupted(opt, GridJournal(), out.finished, opt.problems.size(), f.cache);
    return rc;
  }

  auto backend = make_backend(f.backend, f.device);
  check_flags_for_backend(f, *backend);
  const bool cpu = backend->kind() == BackendKind::cpu;
  apply_backend_defaults(f, cpu, max_time, opt);
  if (f.skip_cached) opt.skip_cached = &existing;
  // Refused before the header line and before anything is allocated (tune_grid checks again for its other callers).
  check_memory_or_throw(*backend, opt.problems, true, memory_limit(backend->device_info(), opt.max_memory));
  announce_cpu_fallback(f.backend, *backend, f.quiet);
  say_deferred_notes(f.quiet || !f.worker_dir.empty());
  if (!f.worker_dir.empty()) return serve_tune_tasks(worker_seat(f), *backend, opt);
  const std::string path = f.cache;
  // Each plugin entry records the version of the library it tuned (cli/cache_library_versions.hpp).
  if (!f.dry_run) opt.checkpoint = [&path](const HeuristicCache& found) { with_library_versions(found).save(path); };

  if (!loaded_plugins().empty()) install_plugin_trials(f, *backend, opt);

  GridJournal journal = f.dry_run ? GridJournal()
                                  : GridJournal(journal_path_for(path), tune_journal_header(f, opt, shard, backend->device_info()),
                                                f.resume, f.quiet, shard_indices, /*shared_output=*/true);
  std::vector<bool> mine(opt.problems.size(), false);
  for (std::size_t pi : shard_indices) mine[pi] = true;
  std::size_t finished = journal.resumed().size();
  opt.include = [&](std::size_t pi) { return mine[pi] && !journal.done(pi); };
  opt.problem_done = [&](std::size_t pi) {
    journal.record(pi, nlohmann::json::object());
    ++finished;
  };
  if (!f.quiet && !shard.whole())
    std::fprintf(stderr, "attnbench tune: shard %s: %zu of %zu problem(s)\n", shard.text().c_str(), shard_indices.size(),
                 opt.problems.size());

  if (!f.quiet) print_tune_header(f, opt, *backend, cpu);
  TuneOutcome out = tune_grid(*backend, opt);
  // A signal that came once every problem had finished interrupted nothing.
  if (stop_requested() && finished < shard_indices.size())
    return finish_interrupted(opt, journal, finished, shard_indices.size(), path);
  // The summary files first, then stdout: the one '-' output, else the text summary.
  write_report_outputs(f.outputs, [&out](const std::string& format) { return render_tune_summary(out, format); });
  if (!f.outputs.to_stdout()) std::fputs(format_tune_summary(out).c_str(), stdout);
  if (opt.dry_run) return out.failed_strategies ? 1 : 0;
  const int code = save_and_finish(out, path, f.outputs.to_stdout() ? stderr : stdout);
  if (!f.resume) journal.finish();  // the cache holds every problem now (--resume keeps it, as run does)
  return code;
}

}  // namespace

Command add_tune_command(CLI::App& parent) {
  auto flags = std::make_shared<TuneFlags>();
  TuneFlags& f = *flags;
  CLI::App* app = parent.add_subcommand(
      "tune", "search cuBLASLt algorithms and fused tiles for a grid and write a heuristic cache (attnbench.cache/1)");
  app->add_option("--cache", f.cache, "cache file to write; merged into when it exists (required)");
  app->add_option("--top", f.top, "heuristic candidates per GEMM")->capture_default_str();
  app->add_option("--max_candidates,--max-candidates", f.max_candidates,
                  "exhaustive search: at most this many candidates per GEMM, base configurations first (0: the whole space)")
      ->capture_default_str();
  app->add_option("--finalists", f.finalists,
                  "screened candidates re-measured with the full settings, besides the heuristic's choice")
      ->capture_default_str();
  app->add_option("--screen_samples,--screen-samples", f.screen_samples, "samples per candidate in the screening pass")
      ->capture_default_str();
  app->add_option("--screen_calls,--screen-calls", f.screen_calls,
                  "the screen replays at most this many of a shape's GEMM calls of one forward (0: all)")
      ->capture_default_str();
  app->add_option("--screen_cutoff,--screen-cutoff", f.screen_cutoff,
                  "cut a candidate whose probe is over this many times the fastest verified probe so far: not verified, "
                  "not screened further (0: off, every candidate verified and screened)")
      ->capture_default_str();
  app->add_option("--probe_calls,--probe-calls", f.probe_calls,
                  "the probe (one sample before a candidate is verified) replays at most this many of the screen's "
                  "calls (0: all of them)")
      ->capture_default_str();
  app->add_flag("--probe_flush,--probe-flush", f.probe_flush,
                "flush L2 before a probe of fewer calls than the screen's too (by default such a probe only ranks and "
                "runs with L2 as the last probe left it; a probe that is the screen's first sample always flushes)");
  app->add_option("--group_margin,--group-margin", f.group_margin,
                  "exhaustive search: probe one representative per base configuration (algorithm, tile, stages, "
                  "split-K) first and skip the variants (swizzle, custom option, cluster shape) of a base whose "
                  "representative is over this many times the fastest (0: off, every candidate probed)")
      ->capture_default_str();
  app->add_option("--halving_keep,--halving-keep", f.halving.keep,
                  "successive halving of the screen: each stage keeps this fraction of its candidates, the fastest, "
                  "and any within its noise band, and takes one more sample of each (0: off, every candidate within "
                  "the probe cutoff gets --screen_samples)")
      ->capture_default_str();
  app->add_option("--halving_final,--halving-final", f.halving.final_round,
                  "halving stops at this many candidates, which get --screen_samples fresh samples each")
      ->capture_default_str();
  app->add_option("--halving_band,--halving-band", f.halving.band,
                  "never drop a candidate within this fraction of a stage's fastest (for one sample of the screen's "
                  "calls; wider for the probe's fewer calls, narrower for a median of more samples)")
      ->capture_default_str();
  app->add_option("--halving_band_limit,--halving-band-limit", f.halving.band_limit,
                  "a halving stage keeps at most this many times its fastest --halving_keep fraction, the band's "
                  "candidates included (past that they are ties of each other; 0: every one within the band)")
      ->capture_default_str();
  app->add_flag("--dry_run,--dry-run", f.dry_run,
                "list the GEMM candidates and fused tiles each shape would try, time nothing, write no cache");
  app->add_option("--search", f.search, "heuristic (top-N) | exhaustive (every algorithm, tile, stage, split-K...)")
      ->capture_default_str()
      ->check(CLI::IsMember({"heuristic", "exhaustive"}));
  app->add_flag("--skip_cached,--skip-cached", f.skip_cached,
                "keep entries the cache already has for this environment instead of re-tuning them");
  app->add_option("--split_candidates", f.split_candidates)->group("");  // tests: a tiny list still splits
  add_report_output_flags(*app, f.outputs, "the summary (one row per GEMM shape and fused problem)",
                          "write the summary (attnbench.tune-summary/1)");
  add_shared_flags(*app, f,
                   {"untimed forwards per candidate (default 3; 1 on cpu)",
                    "minimum samples per finalist (default 10; 3 on cpu)",
                    "seconds of sampling per finalist at most (default 0.5)",
                    "stop once relative noise is at or under this",
                    "auto (graph on a GPU, events on the CPU) | events | graph | cupti", "no progress line or per-shape lines",
                    {"auto", "events", "graph", "cupti"}, 0.5});
  return Command{app, [flags]() { return tune_main(*flags); }};
}

}  // namespace ab
