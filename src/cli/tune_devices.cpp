// tune --devices: one problem at a time to whichever worker is free; each task's cache merged into --cache
// as it arrives (an atomic save, as the one-process tune does after every problem), summaries in grid order.
#include "cli/tune_devices.hpp"

#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cli/pool_devices.hpp"
#include "cli/worker_loop.hpp"
#include "cli/worker_pool.hpp"
#include "core/json_document.hpp"
#include "tune/heuristic_cache.hpp"
#include "tune/tune_summary.hpp"

namespace ab {

namespace {

constexpr const char* kTaskSchema = "attnbench.tune-task/1";  // private to the pool's directory

// Whether a tune outcome makes the command exit 1 (a shape or tile without a winner, a failed strategy).
bool outcome_failed(const TuneOutcome& out) {
  for (const auto& r : out.gemm)
    if (r.best < 0) return true;
  for (const auto& r : out.fused)
    if (r.best < 0) return true;
  return out.failed_strategies > 0;
}

}  // namespace

int tune_on_devices(const SharedFlags& f, const TuneOptions& opt, const std::string& cache_path) {
  WorkerPool pool(worker_arguments(current_arguments()), pool_devices(f));
  std::vector<nlohmann::json> devices = pool.start();
  const std::string mixed = check_device_models(devices, f.mixed_devices);
  if (!f.quiet) {
    std::fprintf(stderr, "attnbench tune: %zu problem(s) over %zu device(s) (%s)\n", opt.problems.size(),
                 devices.size(), describe_devices(devices).c_str());
    if (!mixed.empty()) std::fprintf(stderr, "attnbench: warning: %s\n", mixed.c_str());
  }
  HeuristicCache found;
  std::map<std::size_t, std::string> summaries;
  bool failed = false;
  PoolProgress progress(pool, opt.problems.size(), f.quiet);
  pool.run(
      opt.problems.size(),
      [&](const TaskOutcome& t) {
        if (t.file.empty()) {
          summaries[t.item] = fmt::format("{}: not tuned on device {}: {}\n", opt.problems[t.item].label(), t.device, t.failure);
          failed = true;
          return;
        }
        nlohmann::json doc = read_json_document(t.file, kTaskSchema);
        summaries[t.item] = fmt::format("device {}:\n{}", t.device, doc.at("summary").get<std::string>());
        failed = failed || doc.at("failed").get<bool>();
        if (opt.dry_run) return;
        found.merge(HeuristicCache::from_json(doc.at("cache"), "a device worker's cache"));
        found.save(cache_path);  // merged into the file, atomically, after every problem
      },
      [&] { progress.task_finished(); });
  progress.finish();
  for (const auto& [item, text] : summaries) std::fputs(text.c_str(), stdout);
  if (opt.dry_run) return failed ? 1 : 0;
  HeuristicCache written = found.save(cache_path);
  std::printf("wrote %zu GEMM and %zu fused entries from %zu device(s) to %s (it now holds %zu GEMM and %zu fused "
              "entries, %zu environment(s))\n",
              found.gemm_entries().size(), found.fused_entries().size(), devices.size(), cache_path.c_str(),
              written.gemm_entries().size(), written.fused_entries().size(), written.environments().size());
  return failed ? 1 : 0;
}

int serve_tune_tasks(const SharedFlags& f, Backend& backend, const TuneOptions& opt) {
  return serve_worker_tasks(f.worker_dir, f.worker_device, backend.device_info().to_json(), [&](const WorkerTask& task) {
    TuneOptions one = opt;
    one.problems = {opt.problems.at(task.item)};
    one.seed = opt.seed + task.item;  // the inputs a one-process tune draws for this problem
    one.quiet = true;
    one.checkpoint = nullptr;
    TuneOutcome out = tune_grid(backend, one);
    nlohmann::json doc = {{"schema", kTaskSchema},
                          {"summary", format_tune_summary(out)},
                          {"failed", outcome_failed(out)},
                          {"cache", out.cache.to_json()}};
    write_json_atomic(task.file, doc);
    return TaskEnd{std::nullopt, out.failed_strategies > 0};
  });
}

}  // namespace ab
