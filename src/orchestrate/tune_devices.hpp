// `tune --devices`: the parent that spreads a grid's problems over one worker per device and merges what each
// found into one cache (saved atomically after every problem), and the worker that tunes what it is handed.
#pragma once
#include <string>

#include "orchestrate/pool_devices.hpp"
#include "core/backend.hpp"
#include "tune/heuristic_cache.hpp"
#include "tune/tuner.hpp"

namespace ab {

// What the devices found: each problem's summaries in grid order (a split tune's notes first), whether a
// problem failed, the entries found (already merged into the cache file after every problem), and how many
// problems were tuned whole (every task of theirs came back; fewer when a signal stopped the pool).
struct DeviceTuneOutcome {
  std::string summaries;
  bool failed = false;
  HeuristicCache found;
  std::size_t devices = 0;
  std::size_t finished = 0;
};

// The parent: `opt` is the checked tune (its problems are the queue), `cache_path` --cache ("" with
// --dry_run). An exhaustive search is split below the problem (orchestrate/tune_split.hpp), at most
// `split_candidates` candidates per screening unit. Says on stderr which devices it runs on (unless quiet);
// the caller prints the outcome.
DeviceTuneOutcome tune_on_devices(const DevicePoolOptions& pool, const TuneOptions& opt, const std::string& cache_path,
                                  std::size_t split_candidates);

// The worker: tunes problems until the pool ends it; each task's cache, summary and exit code go to the
// pool's file.
int serve_tune_tasks(const WorkerSeat& seat, Backend& backend, const TuneOptions& opt);

}  // namespace ab
