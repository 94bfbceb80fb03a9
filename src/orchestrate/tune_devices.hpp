// `tune --devices`: the parent that spreads a grid's problems over one worker per device and merges what each
// found into one cache (saved atomically after every problem), and the worker that tunes what it is handed.
#pragma once
#include <string>

#include "orchestrate/pool_devices.hpp"
#include "core/backend.hpp"
#include "tune/tuner.hpp"

namespace ab {

// The parent: `opt` is the checked tune (its problems are the queue), `cache_path` --cache ("" with
// --dry_run). An exhaustive search is split below the problem (orchestrate/tune_split.hpp), at most
// `split_candidates` candidates per screening unit. Prints each problem's summary in grid order, then what
// was written; returns tune's exit code.
int tune_on_devices(const DevicePoolOptions& pool, const TuneOptions& opt, const std::string& cache_path,
                    std::size_t split_candidates);

// The worker: tunes problems until the pool ends it; each task's cache, summary and exit code go to the
// pool's file.
int serve_tune_tasks(const WorkerSeat& seat, Backend& backend, const TuneOptions& opt);

}  // namespace ab
