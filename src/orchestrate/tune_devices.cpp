// tune --devices: one problem at a time to whichever worker is free (an exhaustive search: the units of
// orchestrate/tune_split.hpp); each problem's cache merged into --cache as it arrives (an atomic save, as the
// one-process tune does after every problem), summaries in grid order for the caller to print.
#include "orchestrate/tune_devices.hpp"

#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "orchestrate/pool_devices.hpp"
#include "orchestrate/tune_split.hpp"
#include "orchestrate/worker_loop.hpp"
#include "orchestrate/worker_pool.hpp"
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

// Tunes one problem (`one`) and writes the task's file: its summary, whether it failed, its cache.
TaskEnd tune_problem(Backend& backend, const TuneOptions& one, const WorkerTask& task) {
  TuneOutcome out = tune_grid(backend, one);
  nlohmann::json doc = {{"schema", kTaskSchema},
                        {"summary", format_tune_summary(out)},
                        {"failed", outcome_failed(out)},
                        {"cache", out.cache.to_json()}};
  write_json_atomic(task.file, doc);
  return TaskEnd{std::nullopt, out.failed_strategies > 0};
}

}  // namespace

DeviceTuneOutcome tune_on_devices(const DevicePoolOptions& o, const TuneOptions& opt, const std::string& cache_path,
                                  std::size_t split_candidates) {
  WorkerPool pool(worker_arguments(current_arguments()), pool_devices(o));
  std::vector<nlohmann::json> devices = pool.start();
  const std::string mixed = check_device_models(devices, o.mixed_devices);
  if (!o.quiet) {
    std::fprintf(stderr, "attnbench tune: %zu problem(s) over %zu device(s) (%s)\n", opt.problems.size(),
                 devices.size(), describe_devices(devices).c_str());
    if (!mixed.empty()) std::fprintf(stderr, "attnbench: warning: %s\n", mixed.c_str());
  }
  DeviceTuneOutcome outcome;
  outcome.devices = devices.size();
  HeuristicCache& found = outcome.found;
  // Per problem, by item: a split tune has a finishing unit per strategy, each with its summary.
  std::map<std::size_t, std::map<std::size_t, std::string>> summaries;
  std::map<std::size_t, std::size_t> returned;  // per problem: its tasks (finishing units) that came back
  bool failed = false;
  // The whole space is split below the problem, so that devices share even one problem's search.
  std::optional<SplitTune> split;
  if (opt.exhaustive && !opt.dry_run) split.emplace(opt, split_candidates, pool.directory());
  PoolProgress progress(pool, split ? split->listing_units() : opt.problems.size(), o.quiet);
  std::function<ReadyItems()> more;
  if (split)
    more = [&] {
      std::size_t before = split->planned();
      ReadyItems items = split->ready();
      progress.add_tasks(split->planned() - before);
      return items;
    };
  pool.run(
      split ? split->listing_units() : opt.problems.size(),
      [&](const TaskOutcome& t) {
        if (split && split->absorb(t)) return;
        const std::size_t problem = split ? split->problem_of(t.item) : t.item;
        if (t.file.empty()) {
          summaries[problem][t.item] =
              fmt::format("{}: not tuned on device {}: {}\n", opt.problems[problem].label(), t.device, t.failure);
          failed = true;
          return;
        }
        nlohmann::json doc = read_json_document(t.file, kTaskSchema);
        ++returned[problem];
        summaries[problem][t.item] = fmt::format("device {}:\n{}", t.device, doc.at("summary").get<std::string>());
        failed = failed || doc.at("failed").get<bool>();
        if (opt.dry_run) return;
        found.merge(HeuristicCache::from_json(doc.at("cache"), "a device worker's cache"));
        found.save(cache_path);  // merged into the file, atomically, after every problem
      },
      [&] { progress.task_finished(); }, more);
  progress.finish();
  if (split) failed = failed || split->failed();
  for (std::size_t pi = 0; pi < opt.problems.size(); ++pi) {
    if (split) outcome.summaries += split->notes(pi);
    for (const auto& [item, text] : summaries[pi]) outcome.summaries += text;
    const std::size_t tasks = split ? split->finishing_units(pi) : 1;
    outcome.finished += tasks > 0 && returned[pi] == tasks;
  }
  outcome.failed = failed;
  return outcome;
}

int serve_tune_tasks(const WorkerSeat& seat, Backend& backend, const TuneOptions& opt) {
  std::map<std::string, ListedCandidates> listed;  // this worker's candidate lists, kept across its units
  std::map<std::string, double> probe_bounds;        // and the fastest verified probe of each shape it screened
  auto problem_alone = [&](std::size_t problem) {
    TuneOptions one = opt;
    one.problems = {opt.problems.at(problem)};
    one.seed = opt.seed + problem;  // the inputs a one-process tune draws for this problem
    one.quiet = true;
    one.checkpoint = nullptr;
    one.listed = &listed;
    one.probe_bounds = &probe_bounds;
    return one;
  };
  return serve_worker_tasks(seat.dir, seat.device, backend.device_info().to_json(), [&](const WorkerTask& task) {
    TaskEnd end;
    if (serve_split_unit(backend, task, problem_alone, [&](const TuneOptions& one) { return tune_problem(backend, one, task); }, &end))
      return end;
    return tune_problem(backend, problem_alone(task.item), task);
  });
}


}  // namespace ab
