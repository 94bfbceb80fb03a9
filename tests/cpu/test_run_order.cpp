// The order a pool hands a run's problems out (run --devices, issue 48): the longest estimated first, from the
// dry run's model (run/run_estimate.hpp), and that model's warm-up of a forward that takes seconds (one forward,
// as measure_forward does). A 4-GPU run of the Llama-3.1-8B suites ended on its slowest problems, handed out
// last in grid order; longest-first starts them first.
#include <cstdint>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "core/problem.hpp"
#include "run/run_estimate.hpp"
#include "strategies/registry.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

DeviceInfo nominal_gpu() {
  DeviceInfo d;
  d.backend = "cuda";
  d.l2_bytes = std::int64_t(50) << 20;
  return d;
}

Problem decode(std::int64_t batch, std::int64_t seq) {
  ProblemSpec s;
  s.batch = batch;
  s.heads = 32;
  s.kv_heads = 8;
  s.seq_len = seq;
  s.q_len = 1;
  s.head_dim = 128;
  s.page_size = 16;
  s.kv_layout = KvLayout::paged;
  s.dtype = DType::bf16;
  return make_problem(s);
}

}  // namespace

TEST(RunOrder, LongestFirstIsAStableSortByTheEstimate) {
  EXPECT_EQ(longest_first({0, 1, 2, 3, 4}, {1.0, 5.0, 1.0, 7.0, 5.0}), (std::vector<std::size_t>{3, 1, 4, 0, 2}));
  // A resumed run's remainder: only the items given, in the estimate's order.
  EXPECT_EQ(longest_first({0, 2, 4}, {1.0, 5.0, 3.0, 7.0, 9.0}), (std::vector<std::size_t>{4, 2, 0}));
  // No estimates: grid order.
  EXPECT_EQ(longest_first({2, 0, 1}, {}), (std::vector<std::size_t>{2, 0, 1}));
}

TEST(RunOrder, ASuitesSlowestProblemIsEstimatedLongest) {
  // nested launches once per (sequence, KV head, page): B=64 against 16k keys is ~1.5 M launches a forward, B=1
  // against 1k is 1.5 k; the estimate (every built-in strategy the CPU backend says takes the problem) ranks them.
  auto cpu = make_cpu_backend();
  const std::vector<std::unique_ptr<Strategy>> strategies = make_all_strategies();
  RunOptions opt;
  opt.verify = true;
  const std::vector<Problem> grid = {decode(1, 1024), decode(64, 16384), decode(16, 4096)};
  std::vector<double> s;
  for (const Problem& p : grid) {
    const ProblemEstimate e = estimate_problem(p, strategies, *cpu, opt, nominal_gpu());
    EXPECT_EQ(e.rows, 5) << p.label();
    s.push_back(e.seconds);
  }
  EXPECT_EQ(longest_first({0, 1, 2}, s), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_GT(s[1], 10 * s[0]);
}

TEST(RunOrder, AForwardOfSecondsIsWarmedOnceInTheEstimate) {
  // 3 M launches at 6 us: an 18 s forward; max_time 1 s. The row: one warm-up forward and one sample, not three
  // warm-ups (measure_forward's rule).
  MeasureSettings m;
  m.max_time_s = 1.0;
  m.hot = true;
  const Problem p = decode(1, 1024);
  const RowEstimate slow = estimate_row(p, LaunchContract{2000000, 1000000, ""}, false, nominal_gpu(), m);
  EXPECT_NEAR(slow.row_s, 2 * slow.forward_s, 0.05 * slow.forward_s);
  const RowEstimate fast = estimate_row(p, LaunchContract{2, 2, ""}, false, nominal_gpu(), m);
  EXPECT_GE(fast.row_s, (m.warmup + 2) * fast.forward_s);
}
