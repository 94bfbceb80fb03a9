// Shard selection from --shard or the job scheduler's environment.
#include "orchestrate/shard_choice.hpp"

#include "orchestrate/grid_journal.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

namespace {

// An environment variable as a non-negative integer; -1 when unset; UsageError when set to anything else.
long long env_integer(const EnvReader& env, const char* name) {
  const char* v = env(name);
  if (!v) return -1;
  std::string s = v;
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(fmt::format("{}={} is not a non-negative integer", name, quoted_excerpt(s)));
  return std::stoll(s);
}

Shard from_slurm(const EnvReader& env, long long id) {
  long long count = env_integer(env, "SLURM_ARRAY_TASK_COUNT");
  long long min = env_integer(env, "SLURM_ARRAY_TASK_MIN");
  long long step = env_integer(env, "SLURM_ARRAY_TASK_STEP");
  if (count < 0)
    throw UsageError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (give --shard=INDEX/COUNT)");
  if (step > 1)
    throw UsageError(fmt::format("SLURM_ARRAY_TASK_STEP={}: a sharded array must number its tasks consecutively "
                                 "(--array=0-{}); give --shard=INDEX/COUNT otherwise", step, count - 1));
  long long index = id - (min < 0 ? 0 : min);
  return make_shard(index, count,
                    fmt::format("SLURM_ARRAY_TASK_ID={} (min {}, count {}; the array must be consecutive)", id,
                                min < 0 ? 0 : min, count));
}

}  // namespace

Shard choose_shard(const std::string& flag, const EnvReader& reader, std::string* source) {
  EnvReader env = reader ? reader : EnvReader([](const char* n) -> const char* { return std::getenv(n); });
  auto said = [source](const std::string& s) {
    if (source) *source = s;
  };
  if (!flag.empty()) {
    said("--shard");
    return parse_shard(flag);
  }
  if (long long id = env_integer(env, "SLURM_ARRAY_TASK_ID"); id >= 0) {
    said("SLURM_ARRAY_TASK_ID");
    return from_slurm(env, id);
  }
  if (long long index = env_integer(env, "JOB_COMPLETION_INDEX"); index >= 0) {
    long long count = env_integer(env, "ATTNBENCH_SHARD_COUNT");
    if (count < 0)
      throw UsageError("JOB_COMPLETION_INDEX is set but ATTNBENCH_SHARD_COUNT is not: set it to the Job's "
                       "spec.completions (or give --shard=INDEX/COUNT; --shard=0/1 runs the whole grid)");
    said("JOB_COMPLETION_INDEX");
    return make_shard(index, count, fmt::format("JOB_COMPLETION_INDEX={} with ATTNBENCH_SHARD_COUNT={}", index, count));
  }
  said("");
  return Shard{};
}

nlohmann::json shard_record(const Shard& s, const std::vector<Problem>& grid, const std::vector<std::size_t>& problems) {
  if (s.whole()) return nullptr;
  return {{"index", s.index},       {"count", s.count},   {"grid_size", grid.size()},
          {"grid", grid_fingerprint(grid)}, {"problems", problems}};
}

}  // namespace ab
