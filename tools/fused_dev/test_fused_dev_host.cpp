// The fused-kernel harness's host pieces: its problems, its inputs (Q spread, NaN pool tail that the
// reference never reads), tile families, the timing summary and the load-balance summary of `ctas`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "cta_balance.hpp"
#include "dev_case.hpp"
#include "dev_inputs.hpp"
#include "sample_summary.hpp"
#include "tile_selection.hpp"

namespace ab::fused_dev {
namespace {

// Four CTAs of a persistent launch (start, then the ends of three warpgroups, ns): one ends at 100 us, two at
// 80 us, one started late; a fifth slot row recorded nothing (not launched) and a sixth a start alone.
TEST(CtaBalance, SpanBusyEndsAndIdle) {
  const std::uint64_t t0 = 5'000'000;
  auto at = [&](double us) { return t0 + static_cast<std::uint64_t>(us * 1000); };
  const std::vector<std::uint64_t> times = {
      at(0), at(60), at(100), at(90),  // busy 100
      at(0), at(80), at(80), 0,        // busy 80 (its third warpgroup had no rows)
      at(0), at(70), at(80), at(75),   // busy 80
      at(20), at(90), at(60), at(40),  // started at 20, busy 70
      0, 0, 0, 0,                      // no CTA here
      at(1), 0, 0, 0,                  // a start and no end
  };
  const CtaBalance b = cta_balance(times, 4);
  EXPECT_EQ(b.ctas, 4);
  EXPECT_EQ(b.missing, 1);
  EXPECT_NEAR(b.span, 100.0, 1e-9);
  EXPECT_NEAR(b.busy_mean, (100 + 80 + 80 + 70) / 4.0, 1e-9);
  EXPECT_NEAR(b.busy_max, 100.0, 1e-9);
  EXPECT_NEAR(b.start_max, 20.0, 1e-9);
  EXPECT_NEAR(b.end_p10, 80.0, 1e-9);  // ends 80, 80, 90, 100
  EXPECT_NEAR(b.end_p50, 80.0, 1e-9);
  EXPECT_NEAR(b.end_p90, 90.0, 1e-9);
  EXPECT_NEAR(b.idle, 1.0 - 82.5 / 100.0, 1e-9);
  EXPECT_EQ(cta_balance({0, 0, 0, 0}, 4).ctas, 0);
}

TEST(FusedDevProblem, ContiguousIsOnePageOfTheWholeSequence) {
  const Problem p = dev_problem(3, 5, 1000, 64, 0, true, DType::bf16);
  EXPECT_EQ(p.kv_layout, KvLayout::contiguous);
  EXPECT_EQ(p.pages, 1);
  EXPECT_EQ(p.page_size, 1000);
  EXPECT_TRUE(p.causal);
  EXPECT_EQ(p.dtype, DType::bf16);
}

TEST(FusedDevProblem, PagedByPageSize) {
  const Problem p = dev_problem(3, 5, 1000, 64, 143, false, DType::fp16);
  EXPECT_EQ(p.kv_layout, KvLayout::paged);
  EXPECT_EQ(p.page_size, 143);
  EXPECT_EQ(p.pages, 7);
  EXPECT_EQ(p.last_page_len(), 1000 - 6 * 143);
}

TEST(FusedDevProblem, CheckListCoversTheAwkwardShapes) {
  const std::vector<Problem> ps = check_problems();
  // 2 D x 2 dtypes x 2 causal x 2 layouts, 16 x 2 causal, inference shapes x 2 D x 2 causal
  EXPECT_EQ(ps.size(), 16u + 32u + 4 * inference_shapes().size());
  auto has = [&](auto pred) {
    for (const Problem& p : ps)
      if (pred(p)) return true;
    return false;
  };
  for (int d : {32, 64, 96, 128, 256}) EXPECT_TRUE(has([&](const Problem& p) { return p.head_dim == d; })) << d;
  EXPECT_TRUE(has([](const Problem& p) { return p.seq_len == 1; }));
  EXPECT_TRUE(has([](const Problem& p) { return p.kv_layout == KvLayout::paged && p.page_size == 1; }));
  EXPECT_TRUE(has([](const Problem& p) { return p.kv_layout == KvLayout::paged && p.page_size == 5; }));
  EXPECT_TRUE(has([](const Problem& p) { return p.seq_len == 2049 && p.causal; }));
  for (int d : {64, 128})  // the contiguous-only (TMA) tiles see B=1 H=1 and a short last tile
    EXPECT_TRUE(has([&](const Problem& p) {
      return p.kv_layout == KvLayout::contiguous && p.batch == 1 && p.heads == 1 && p.head_dim == d &&
             p.seq_len % 64 != 0;
    })) << d;
  EXPECT_TRUE(has([](const Problem& p) { return p.dtype == DType::bf16 && p.head_dim == 128 && p.pages == 7; }));
  EXPECT_TRUE(has([](const Problem& p) {  // a full persistent grid on 128-row pages, causal
    return p.kv_layout == KvLayout::paged && p.page_size == 128 && p.causal && p.batch * p.heads >= 384;
  }));
}

TEST(FusedDevProblem, CheckListCoversTheInferenceShapes) {
  const std::vector<Problem> ps = check_problems();
  auto has = [&](auto pred) {
    for (const Problem& p : ps)
      if (pred(p)) return true;
    return false;
  };
  for (int d : {64, 128})
    for (DType t : {DType::fp16, DType::bf16})
      for (bool causal : {false, true}) {
        auto at = [&](const Problem& p) { return p.head_dim == d && p.dtype == t && p.causal == causal; };
        EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.kv_heads > 1 && p.heads == 4 * p.kv_heads; }) ||
                    has([&](const Problem& p) { return at(p) && p.kv_heads == 1 && p.heads > 1; }))
            << d << causal;
      }
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      auto at = [&](const Problem& p) { return p.head_dim == d && p.causal == causal; };
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.kv_heads == 1 && p.heads > 1; })) << d;
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.heads == 4 * p.kv_heads && p.kv_heads > 1; })) << d;
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.q_len < p.seq_len && p.q_len > 1; })) << d;
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.q_len == 1; })) << d;
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.ragged() && p.kv_layout == KvLayout::contiguous; }));
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.ragged() && p.page_size % 8 != 0; }));
      EXPECT_TRUE(has([&](const Problem& p) { return at(p) && p.ragged() && p.page_size == 64; }));
      EXPECT_TRUE(has([&](const Problem& p) {
        return at(p) && p.batch == 1 && p.heads == 1 && p.q_len < p.seq_len && p.seq_len % 64 != 0;
      }));
    }
  for (const Problem& p : ps)  // the inference-shape problems are ragged where they say so
    if (p.ragged()) {
      EXPECT_EQ(p.seq_len, *std::max_element(p.kv_lens.begin(), p.kv_lens.end()));
    }
}

TEST(FusedDevProblem, DevToleranceIsTighterThanTheRunners) {
  EXPECT_DOUBLE_EQ(dev_tolerance(DType::fp16), 2e-3);
  EXPECT_DOUBLE_EQ(dev_tolerance(DType::bf16), 1e-2);
  EXPECT_LT(dev_tolerance(DType::fp16), tolerance_for(DType::fp16));
  EXPECT_LT(dev_tolerance(DType::bf16), tolerance_for(DType::bf16));
}

TEST(FusedDevInputs, QueryIsTheProjectsInputsSpreadWider) {
  for (DType t : {DType::fp16, DType::bf16}) {
    const Problem p = dev_problem(2, 3, 40, 32, 0, false, t);
    const HostTensors base = make_random_inputs(p, 17);
    const HostTensors dev = make_dev_inputs(p, 17);
    ASSERT_EQ(dev.q.size(), base.q.size());
    double max_abs = 0;
    for (std::size_t i = 0; i < base.q.size(); ++i) {
      const double want = round_to(t, kQuerySpread * load_element(base.q.data(), i, t));
      ASSERT_EQ(load_element(dev.q.data(), i, t), want) << i;
      max_abs = std::max(max_abs, std::fabs(want));
    }
    EXPECT_GT(max_abs, 2.0);  // wider than the [-1, 1) inputs
    EXPECT_EQ(dev.k, base.k);
    EXPECT_EQ(dev.v, base.v);
  }
}

TEST(FusedDevInputs, PoolRowsPastSeqLenAreNanAndNeverRead) {
  const Problem p = dev_problem(2, 3, 23, 16, 5, true, DType::fp16);  // 5 pages, the last holds 3 rows
  const HostTensors base = make_random_inputs(p, 5);
  const HostTensors dev = make_dev_inputs(p, 5);
  ASSERT_EQ(dev.block_table, base.block_table);
  std::vector<bool> used(dev.k.size(), false);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t s = 0; s < p.seq_len; ++s)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const std::int64_t i = kv_index(p, dev.block_table.data(), b, h, s, d);
          used[i] = true;
          ASSERT_EQ(dev.k[i], base.k[i]);
          ASSERT_EQ(dev.v[i], base.v[i]);
        }
  std::int64_t nan_rows = 0;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (used[i]) continue;
    EXPECT_TRUE(std::isnan(load_element(dev.k.data(), i, p.dtype))) << i;
    EXPECT_TRUE(std::isnan(load_element(dev.v.data(), i, p.dtype))) << i;
    ++nan_rows;
  }
  EXPECT_EQ(nan_rows, p.batch * p.heads * (p.page_size - p.last_page_len()) * p.head_dim);
  std::vector<double> ref(p.q_elements());
  reference_attention_fp64(p, dev.q.data(), dev.k.data(), dev.v.data(), dev.block_table.data(), ref.data());
  for (double x : ref) ASSERT_TRUE(std::isfinite(x));
}

// NaN in exactly the K/V elements that no sequence owns, for every KV head; the reference never reads them.
void expect_nan_exactly_past_each_length(const Problem& p, std::uint64_t seed) {
  const HostTensors base = make_random_inputs(p, seed);
  const HostTensors dev = make_dev_inputs(p, seed);
  ASSERT_EQ(dev.block_table, base.block_table);
  std::vector<bool> used(dev.k.size(), false);
  std::int64_t owned_rows = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.kv_heads; ++h)
      for (std::int64_t s = 0; s < p.kv_len(b); ++s, ++owned_rows)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const std::int64_t i = kv_index(p, dev.block_table.data(), b, h, s, d);
          used[i] = true;
          ASSERT_EQ(dev.k[i], base.k[i]);
          ASSERT_EQ(dev.v[i], base.v[i]);
        }
  std::int64_t nan_elements = 0;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (used[i]) continue;
    ASSERT_TRUE(std::isnan(load_element(dev.k.data(), i, p.dtype))) << i;
    ASSERT_TRUE(std::isnan(load_element(dev.v.data(), i, p.dtype))) << i;
    ++nan_elements;
  }
  EXPECT_EQ(nan_elements + owned_rows * p.head_dim, static_cast<std::int64_t>(dev.k.size()));
  EXPECT_GT(nan_elements, 0);
  std::vector<double> ref(p.q_elements());
  reference_attention_fp64(p, dev.q.data(), dev.k.data(), dev.v.data(), dev.block_table.data(), ref.data());
  for (double x : ref) ASSERT_TRUE(std::isfinite(x));
}

TEST(FusedDevInputs, RaggedAndGroupedRowsPastEachLengthAreNan) {
  // Ragged contiguous: rows kv_len(b) .. seq_len of every KV head.
  expect_nan_exactly_past_each_length(dev_inference_problem({3, 4, 2, 0, 5, 0, {40, 13, 29}}, 16, true, DType::fp16), 3);
  // Ragged paged, pages of 7, one KV head (MQA): the tail of each sequence's own last page.
  expect_nan_exactly_past_each_length(dev_inference_problem({3, 4, 1, 0, 5, 7, {40, 13, 29}}, 16, false, DType::bf16), 4);
  // Grouped KV heads, one length: the pool is [slots][KVH][ps][D].
  expect_nan_exactly_past_each_length(dev_inference_problem({2, 8, 2, 23, 9, 5, {}}, 16, true, DType::fp16), 5);
}

TEST(FusedDevTiles, FamiliesSplitAtEightWarps) {
  std::vector<FusedTile> tiles(4);
  tiles[0].warps = 8;
  tiles[1].warps = 4;
  tiles[2].warps = 12;
  tiles[3].warps = 4;
  tiles[3].block_m = 128;
  const auto wg = tiles_of_selection(tiles, TileSelection::wg);
  ASSERT_EQ(wg.size(), 2u);
  EXPECT_EQ(wg[0].warps, 8);
  EXPECT_EQ(wg[1].warps, 12);
  const auto mma = tiles_of_selection(tiles, TileSelection::mma);
  ASSERT_EQ(mma.size(), 2u);
  EXPECT_EQ(mma[1].block_m, 128);
  EXPECT_EQ(tiles_of_selection(tiles, TileSelection::all), tiles);
  EXPECT_TRUE(tiles_of_selection(tiles, TileSelection::wsp).empty());
  tiles[2].family = ab::TileFamily::prefill_wsp;  // a persistent ws tile: in wg and in wsp
  const auto wsp = tiles_of_selection(tiles, TileSelection::wsp);
  ASSERT_EQ(wsp.size(), 1u);
  EXPECT_TRUE(wsp[0].persistent());
  EXPECT_EQ(tiles_of_selection(tiles, TileSelection::wg).size(), 2u);
}

TEST(FusedDevTiles, FamilyNamesRoundTrip) {
  for (TileSelection f : {TileSelection::all, TileSelection::wg, TileSelection::mma, TileSelection::wsp})
    EXPECT_EQ(parse_tile_selection(tile_selection_name(f)), f);
  EXPECT_FALSE(parse_tile_selection("wgmma").has_value());
  EXPECT_FALSE(parse_tile_selection("").has_value());
}

TEST(FusedDevTiming, SummaryOfASeries) {
  const std::vector<double> ms = {10, 3, 7, 1, 9, 2, 8, 4, 6, 5};
  const SampleSummary s = summarize_samples(ms);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.p10, 1);  // rank floor(0.1 * 9) = 0
  EXPECT_DOUBLE_EQ(s.p90, 9);  // rank floor(0.9 * 9) = 8
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(lower_quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(lower_quantile({4}, 0.9), 4);
}

}  // namespace
}  // namespace ab::fused_dev
