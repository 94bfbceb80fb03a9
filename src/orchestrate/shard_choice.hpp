// Which shard of the grid this process runs: --shard=i/N, else a Slurm job array's task
// (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), else a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX of ATTNBENCH_SHARD_COUNT (Kubernetes has no variable for the count: the manifest sets
// it to spec.completions), else the whole grid. docs/scale-out.md describes both.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"
#include "core/shard.hpp"

namespace ab {

// Reads an environment variable (nullptr when unset); std::getenv by default, a map in tests.
using EnvReader = std::function<const char*(const char*)>;

// The shard from the flag or the environment; UsageError (one line) for a malformed or out-of-range one.
// `source` (optional) says where it came from ("--shard", "SLURM_ARRAY_TASK_ID", ...).
Shard choose_shard(const std::string& flag, const EnvReader& env = nullptr, std::string* source = nullptr);

// The report header's record of a shard: {"index", "count", "grid_size", "grid" (the grid's fingerprint,
// orchestrate/grid_journal.hpp), "problems"}; null for the whole grid.
nlohmann::json shard_record(const Shard& s, const std::vector<Problem>& grid, const std::vector<std::size_t>& problems);

}  // namespace ab
