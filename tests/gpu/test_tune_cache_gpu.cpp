// On the GPU: a tuned choice is written to the heuristic cache, reloaded on a fresh backend, and gives the
// same configuration (every plan served from the cache with the tuned algorithm's attributes; the fused
// tile the tuned one). Skipped (exit 77) without a device.
#include <filesystem>
#include <unistd.h>

#include "backends/cuda/cuda_backend.hpp"
#include "core/reference.hpp"
#include "core/strategy.hpp"
#include "tune/heuristic_cache.hpp"
#include "run/problem_inputs.hpp"
#include "tune/tuner.hpp"
#include "testing.hpp"
#include "strategies/registry.hpp"

using namespace ab;

TEST(TuneCacheGpu, tuned_choices_reload_from_the_cache_unchanged) {
  auto be = make_cuda_backend(0);
  Problem p = make_problem(4, 8, 384, 64, 3, 0, KvLayout::contiguous, DType::fp16, false);
  TuneOptions opt;
  opt.problems = {p};
  opt.strategies = "head_batched,fused";
  opt.top = 4;
  opt.measure.warmup = 2;
  opt.measure.min_samples = 5;
  opt.measure.max_time_s = 0.1;
  opt.quiet = true;
  TuneOutcome out = tune_grid(*be, opt);
  ASSERT_TRUE(out.failed_strategies == 0);
  ASSERT_TRUE(!out.gemm.empty());
  ASSERT_TRUE(out.fused.size() == 1 && out.fused[0].best >= 0);

  std::string path = (std::filesystem::temp_directory_path() / ("attnbench-gpu-cache-" + std::to_string(getpid()) + ".json")).string();
  out.cache.save(path);
  HeuristicCache loaded = HeuristicCache::load(path);
  std::filesystem::remove(path);

  auto fresh = make_cuda_backend(0);
  EXPECT_EQ(loaded.install(*fresh), 0);
  ProblemInputs in(*fresh, p, 5);
  auto st = make_strategies("head_batched");
  st[0]->setup(*fresh, p, in.io(), StrategyOptions{});
  std::vector<GemmPlanChoice> plans = fresh->gemm().plan_report();
  ASSERT_TRUE(!plans.empty());
  for (const auto& plan : plans) {
    EXPECT_EQ(plan.source, std::string("cache"));
    const GemmTuneRecord* rec = nullptr;
    for (const auto& r : out.gemm)
      if (r.key == plan.shape) rec = &r;
    ASSERT_TRUE(rec != nullptr && rec->best >= 0);
    // The served algorithm is the tuned one: same decoded attributes.
    EXPECT_FALSE(plan.attrs.is_null());
    EXPECT_TRUE(plan.attrs == rec->algos[rec->best].attrs);
  }
  // The forward with the cached algorithms is still correct.
  EXPECT_EQ(in.check_forward([&] { st[0]->run(*fresh); }), std::string());
  st[0]->teardown(*fresh);

  auto tile = loaded.fused_tile(p, fresh->device_info());
  ASSERT_TRUE(tile.has_value());
  EXPECT_TRUE(*tile == out.fused[0].tiles[out.fused[0].best]);
}

int main(int argc, char** argv) {
  if (cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  return attnbench_testing::run_all_tests(argc, argv);
}
