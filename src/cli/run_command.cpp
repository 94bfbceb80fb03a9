// The run command: flags → grid → backend → runner → JSON report (atomic) + console table.
#include "cli/run_command.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "cli/backend_factory.hpp"
#include "cli/flag_values.hpp"
#include "cli/grid_flags.hpp"
#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/utc_timestamp.hpp"
#include "report/printers.hpp"
#include "core/file_writer.hpp"
#include "report/report_io.hpp"
#include "run/memory_estimate.hpp"
#include "run/runner.hpp"
#include "tune/heuristic_cache.hpp"
#include "strategies/registry.hpp"

namespace ab {

void add_run_flags(CLI::App& app, RunFlags& f) {
  add_shared_flags(app, f,
                   {"untimed forwards before sampling (default 3; 1 on cpu)", "minimum samples (default 10; 3 on cpu)",
                    "seconds of sampling per point at most (default 1; 1 on cpu)",
                    "stop once relative noise is at or under this (2% or 0.02)", "events | graph | cupti",
                    "no progress line", {"events", "graph", "cupti"}, 1.0});
  app.add_flag("--verify", f.verify, "check every strategy against the reference");
  app.add_option("--json", f.json_path, "write the report (attnbench.report/1) here");
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
}

// A run flag that no selected strategy would use is refused, not ignored.
static void refuse_flags_without_effect(const RunFlags& f) {
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

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

// After a device error that recover() could not undo, the rest of the grid runs in a fresh process
// (this binary again, told where to resume), whose rows are appended here. Returns false when the child
// produced no report.
bool continue_in_fresh_process(const std::vector<std::string>& argv, const ResumePoint& at,
                               std::vector<ResultRow>* rows, std::vector<std::string>* warnings) {
  // The child's report goes into a private directory (mkdtemp: 0700, a fresh name), never a guessable path.
  std::string dir_template = (std::filesystem::temp_directory_path() / "attnbench-resume-XXXXXX").string();
  if (!mkdtemp(dir_template.data())) {
    warnings->push_back("could not create a private directory to continue after a device error");
    return false;
  }
  const std::string dir = dir_template;
  std::string tmp = dir + "/rows.json";
  std::vector<std::string> args = {"/proc/self/exe"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--json=", 0) == 0 || a.rfind("--resume_at=", 0) == 0) continue;
    if (a == "--json" || a == "--resume_at") { ++i; continue; }
    if (a == "--no_table") continue;
    args.push_back(a);
  }
  args.push_back("--json=" + tmp);
  args.push_back(fmt::format("--resume_at={}:{}", at.problem, at.strategy));
  args.push_back("--no_table");
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fprintf(stderr, "attnbench: the device context was lost; continuing in a fresh process at point %zu, strategy %zu\n",
               at.problem + 1, at.strategy + 1);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargv.data(), environ) != 0) {
    rmdir(dir.c_str());
    warnings->push_back("could not start a fresh process to continue after a device error");
    return false;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string how = WIFEXITED(status)   ? fmt::format("exit code {}", WEXITSTATUS(status))
                    : WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                          : "unknown status";
  bool ok = true;
  try {
    Report child = report_from_json(read_report_document(tmp), fmt::format("'{}'", tmp));
    for (ResultRow& r : child.rows) rows->push_back(std::move(r));
    for (const std::string& w : child.warnings)
      if (std::find(warnings->begin(), warnings->end(), w) == warnings->end()) warnings->push_back(w);
    warnings->push_back(fmt::format("a device error could not be recovered in-process; rows after it come from a fresh process ({})", join(args)));
  } catch (const std::exception&) {
    warnings->push_back(fmt::format("the fresh process continuing after a device error produced no report ({})", how));
    ok = false;
  }
  std::remove(tmp.c_str());
  rmdir(dir.c_str());
  return ok;
}

FusedTile parse_tile(const std::string& s) {
  FusedTile t;
  if (std::sscanf(s.c_str(), "m%dn%dw%ds%d", &t.block_m, &t.block_n, &t.warps, &t.stages) != 4 ||
      t.name() != s)
    throw UsageError(fmt::format("--tile: '{}' is not a tile name like m128n64w4s2", s));
  return t;
}

}  // namespace

int run_command(const RunFlags& f, const std::vector<std::string>& argv) {
  std::string command_line = join(argv);
  // Everything the user typed is checked before any device work.
  RunOptions opt;
  opt.problems = problems_from_flags(f);
  opt.strategies = f.strategies;
  (void)make_strategies(f.strategies);  // unknown names fail here
  refuse_flags_without_effect(f);
  opt.verify = f.verify;
  opt.seed = f.seed;
  opt.quiet = f.quiet;
  if (f.scores != "input" && f.scores != "fp32") throw UsageError(fmt::format("--scores: '{}' is not input or fp32", f.scores));
  opt.strategy.fp32_scores = f.scores == "fp32";
  if (!f.tile.empty()) opt.strategy.fused_tile = parse_tile(f.tile);
  if (!parse_timer_kind(f.timer, &opt.measure.timer)) throw UsageError(fmt::format("--timer: unknown timer '{}' (events, graph, cupti)", f.timer));
  opt.measure.max_noise = parse_fraction("max_noise", f.max_noise);
  opt.measure.hot = f.hot;
  opt.measure.keep_samples = f.keep_samples;
  opt.measure.rounds = f.rounds;
  if (f.rounds < 1 || f.rounds > kMaxRounds) throw UsageError(fmt::format("--rounds must be between 1 and {}", kMaxRounds));
  if (f.max_samples < 1) throw UsageError("--max_samples must be at least 1");
  check_sample_flags(f.warmup, f.min_samples, f.max_samples);
  double max_time = parse_max_time(f.max_time, 1.0);
  if (f.device < 0) throw UsageError("--device must be >= 0");
  if (!f.max_memory.empty()) opt.max_memory = parse_bytes("max_memory", f.max_memory);
  if (!f.json_path.empty()) check_writable(f.json_path);
  if (!f.resume_at.empty() && std::sscanf(f.resume_at.c_str(), "%zu:%zu", &opt.start_problem, &opt.start_strategy) != 2)
    throw UsageError("--resume_at: expected P:S");
  if (const char* fault = std::getenv("ATTNBENCH_INJECT_FAULT")) opt.inject_fault = fault;
  const char* slowdown = std::getenv("ATTNBENCH_INJECT_SLOWDOWN");
  if (slowdown && *slowdown) opt.slowdown = parse_slowdown(slowdown);
  std::optional<HeuristicCache> cache;
  if (!f.cache.empty()) cache = HeuristicCache::load(f.cache);

  auto backend = make_backend(f.backend, f.device);
  check_flags_for_backend(f, *backend);
  bool cpu = backend->kind() == BackendKind::cpu;
  opt.measure.warmup = f.warmup >= 0 ? f.warmup : (cpu ? 1 : 3);
  opt.measure.min_samples = f.min_samples >= 1 ? f.min_samples : (cpu ? 3 : 10);
  opt.measure.max_samples = f.max_samples;
  opt.measure.max_time_s = max_time;
  DeviceInfo dev = backend->device_info();

  // Refuse a run in which no selected strategy can run any problem.
  {
    bool any = false;
    std::string first_reason;
    auto strategies = make_strategies(opt.strategies);
    for (const Problem& p : opt.problems)
      for (const auto& s : strategies) {
        std::string why = s->can_implement(p, *backend, opt.strategy);
        if (why.empty()) any = true;
        else if (first_reason.empty()) first_reason = fmt::format("{} on {}: {}", s->name(), p.label(), why);
        if (any) break;
      }
    if (!any) throw UsageError(fmt::format("no strategy can run any problem of this grid ({})", first_reason));
  }
  // Refused before anything is allocated (run_grid checks again for its other callers).
  check_memory_or_throw(*backend, opt.problems, opt.verify, memory_limit(dev, opt.max_memory));
  announce_cpu_fallback(f.backend, *backend, f.quiet);

  std::vector<std::string> warnings;
  if (cache) {
    int skipped = cache->install(*backend);
    if (skipped > 0) {
      std::string w = fmt::format("{} cache entries come from another environment and were not applied", skipped);
      warnings.push_back(w);
      std::fprintf(stderr, "attnbench: warning: %s\n", w.c_str());
    }
    const HeuristicCache* c = &*cache;
    opt.cached_tile = [c, dev](const Problem& p, FusedTile* t) {
      auto tile = c->fused_tile(p, dev);
      if (tile) *t = *tile;
      return tile.has_value();
    };
  }
  if (cpu) warnings.push_back("CPU reference backend: times are CPU times, not GPU times");
  if (!opt.slowdown.empty())
    warnings.push_back(fmt::format("ATTNBENCH_INJECT_SLOWDOWN={}: rows are deliberately slowed (a test of the CI gate), "
                                   "not real measurements", slowdown));

  ResumePoint resume;
  Report report;
  report.rows = run_grid_rows(*backend, opt, &warnings, &resume);
  if (resume.needed) {
    backend.reset();  // give the broken context up before the fresh process opens the device
    continue_in_fresh_process(argv, resume, &report.rows, &warnings);
  }

  report.tool = this_tool();
  report.command = command_line;
  report.created = utc_timestamp();
  report.device = dev.to_json();
  nlohmann::json settings = opt.measure.to_json();
  settings["verify"] = opt.verify;
  settings["score_dtype"] = f.scores;
  settings["seed"] = opt.seed;
  settings["max_memory"] = opt.max_memory;
  if (!f.cache.empty()) settings["cache"] = f.cache;
  if (!opt.slowdown.empty()) settings["injected_slowdown"] = slowdown;
  report.settings = settings;
  report.warnings = warnings;
  for (const auto& w : warnings)
    if (w.find("CPU reference backend") == std::string::npos && !f.quiet)
      std::fprintf(stderr, "attnbench: warning: %s\n", w.c_str());

  nlohmann::json doc = to_json(report);
  if (!f.no_table) print_console_table(doc, stdout);
  if (!f.json_path.empty()) write_json_atomic(f.json_path, doc);
  return count_errors(report.rows) ? 1 : 0;
}

}  // namespace ab
