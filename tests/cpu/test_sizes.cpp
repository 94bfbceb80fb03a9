// Overflow-safe sizes (issue 16, finding 1): saturating arithmetic, the problem bound, workspace estimates
// of shapes whose score matrices pass 2^63 bytes, the refusal text, and ranges that would overflow.
#include <limits>

#include "backends/cpu/cpu_backend.hpp"
#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/fused_tail_layout.hpp"
#include "core/problem.hpp"
#include "core/reference.hpp"
#include "core/sizes.hpp"
#include "core/strategy.hpp"
#include "run/memory_estimate.hpp"
#include "run/problem_inputs.hpp"
#include "testing.hpp"
#include "strategies/registry.hpp"

using namespace ab;

TEST(Sizes, size_arithmetic_saturates) {
  EXPECT_EQ(size_mul(3, 4, 5), std::int64_t(60));
  EXPECT_EQ(size_mul(0, kSizeSaturated), std::int64_t(0));
  EXPECT_EQ(size_mul(std::int64_t(1) << 40, std::int64_t(1) << 30), kSizeSaturated);
  EXPECT_EQ(size_mul(kSizeSaturated, 1), kSizeSaturated);
  EXPECT_EQ(size_add(kSizeSaturated - 1, 2), kSizeSaturated);
  EXPECT_EQ(size_add(1, 2, 3), std::int64_t(6));
  EXPECT_EQ(human_bytes_saturating(kSizeSaturated), std::string("more than 8 EiB"));
  EXPECT_EQ(human_bytes(1536.0), std::string("1.50 KiB"));
  EXPECT_EQ(human_bytes(std::ldexp(1.0, 160)), std::string("1208925819614629174706176.00 YiB"));
}

TEST(Sizes, problem_bound_refuses_with_the_true_size) {
  bool threw = false;
  try {
    make_problem(1048576, 1048576, 262144, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  } catch (const UsageError& e) {
    threw = std::string(e.what()).find("1.845e+19 elements (32.00 EiB in fp16)") != std::string::npos;
  }
  EXPECT_TRUE(threw);
  // The largest accepted tensor is 2^50 elements.
  make_problem(1 << 10, 1 << 10, 1 << 24, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  EXPECT_ANY_THROW(make_problem(1 << 10, 1 << 10, 1 << 24, 65, 1, 0, KvLayout::contiguous, DType::fp16, false));
}

TEST(Sizes, workspace_of_huge_score_matrices_saturates) {
  // S = 2^31 - 1 (the longest sequence), D = 1: the inputs are small enough to exist, an S x S score matrix
  // of fp32 is about 2^64 bytes.
  Problem p = make_problem(1, 1, (std::int64_t(1) << 31) - 1, 1, 2, 0, KvLayout::paged, DType::fp16, false);
  StrategyOptions so;
  for (const auto& s : make_strategies("all")) {
    std::int64_t ws = s->workspace_bytes(p, so);
    if (s->name() == "fused") EXPECT_EQ(ws, std::int64_t(0));
    else if (s->name() != "nested") EXPECT_EQ(ws, kSizeSaturated);
    EXPECT_TRUE(ws >= 0);
  }
  std::string why = workspace_refusal(1000, kSizeSaturated, std::int64_t(1) << 40);
  EXPECT_TRUE(why.find("needs more than 8 EiB of workspace") != std::string::npos);
  EXPECT_TRUE(workspace_refusal(10, 20, 30).empty());
  EXPECT_TRUE(!workspace_refusal(11, 20, 30).empty());
  // A used count above the limit leaves 0 left, never a negative size.
  EXPECT_TRUE(workspace_refusal(50, 1, 30).find("0.00 B of 30.00 B") != std::string::npos);
}

// The fused strategy's estimate covers the persistent tiles' tail split: its partials on the largest grid the
// split runs on (fewer CTAs where the problem has fewer blocks), nothing where the walk cannot split (causal,
// ragged lengths, a tile that is not persistent).
TEST(Sizes, fused_workspace_covers_the_tail_split) {
  const auto strategies = make_strategies("fused");
  const auto& fused = strategies.front();
  FusedTile wsp;
  wsp.block_m = wsp.block_n = 128;
  wsp.warps = 12;
  wsp.family = TileFamily::prefill_wsp;
  StrategyOptions so;
  so.config = wsp.name();
  const Problem long_rows = make_problem(2, 16, 8192, 128, 1, 0, KvLayout::contiguous, DType::fp16, false);
  const std::int64_t on_256 = fused_tail::workspace_bytes(fused_tail::kGridBound, 128, 128);
  EXPECT_EQ(fused->workspace_bytes(long_rows, so), on_256);
  EXPECT_GT(on_256, 2 * 132 * std::int64_t(128) * 128 * 4);  // two fp32 slots of O per CTA on 132 SMs, at least
  const Problem few_blocks = make_problem(1, 1, 300, 128, 1, 0, KvLayout::contiguous, DType::bf16, false);
  EXPECT_EQ(fused->workspace_bytes(few_blocks, so), fused_tail::workspace_bytes(3, 128, 128));
  const Problem causal = make_problem(2, 16, 8192, 128, 1, 0, KvLayout::contiguous, DType::fp16, true);
  EXPECT_EQ(fused->workspace_bytes(causal, so), 0);
  // B=2 H=4 S=1000 (KV lengths 1000 and 333) q_len=300 D=128, one page.
  const ProblemSpec ragged{2, 4, 0, 1000, 300, 128, 1, 0, KvLayout::contiguous, DType::fp16, false, {1000, 333}, ""};
  EXPECT_EQ(fused->workspace_bytes(make_problem(ragged), so), 0);
  FusedTile plain = wsp;
  plain.family = TileFamily::prefill_ws;
  so.config = plain.name();
  EXPECT_EQ(fused->workspace_bytes(long_rows, so), 0);
  // The default tile is not known before setup: the larger of the two persistent block heights.
  EXPECT_EQ(fused->workspace_bytes(long_rows, StrategyOptions{}), fused_tail::workspace_bytes(fused_tail::kGridBound, 192, 128));
}

// The inputs are drawn in place (DeviceMemory::fill_random): the CPU backend stages only the fp64 reference.
TEST(Sizes, input_estimate_counts_what_the_cpu_backend_stages) {
  Problem p = make_problem(1, 1, 16384, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  std::int64_t e = p.q_elements();
  EXPECT_TRUE(ProblemInputs::device_bytes(p, true) >= 12 * e);
  auto cpu = make_cpu_backend();
  EXPECT_EQ(input_bytes(*cpu, p, true), ProblemInputs::device_bytes(p, true) + 8 * e);
  EXPECT_EQ(input_bytes(*cpu, p, false), ProblemInputs::device_bytes(p, false));
}

TEST(Sizes, ranges_stop_before_overflowing) {
  EXPECT_TRUE(parse_axis("batch", "1099511627776:1099511627776:*16777216") == std::vector<std::int64_t>({1099511627776}));
  EXPECT_TRUE(parse_axis("batch", "1:1099511627776:*1099511627776") == std::vector<std::int64_t>({1, 1099511627776}));
  EXPECT_TRUE(parse_axis("batch", "2:1099511627776:*1099511627776") == std::vector<std::int64_t>({2}));
  EXPECT_TRUE(parse_axis("batch", "1099511627775:1099511627776:+1099511627776") ==
        std::vector<std::int64_t>({1099511627775}));
  EXPECT_EQ(parse_axis("batch", "1:1099511627776:*2").size(), std::size_t(41));
}

