// `fused` on the CUDA backend for inference shapes against the GPU fp32 reference: grouped KV heads (GQA,
// MQA), q_len != seq_len with bottom-right causal masking, ragged lengths over contiguous and paged KV
// (pages of 16 and 7 tokens), fp16 and bf16, head_dim 64 and 128; the split-KV decode path (q_len <= 16)
// with the heuristic's split count and fixed counts (the cp.async kernel and, on Hopper where the page size
// allows, the TMA one with its 64- and 128-key tiles and box shapes), and the prefill tiles on the same problems. Outputs
// are poisoned before every run (ProblemInputs::check_forward) and CUPTI's kernel count is checked
// against the launch contract (2 kernels when a combine runs). The Hopper tiles (warp-specialized "ws" and
// wgmma w8/w12) named as --tile would name them run the same inference shapes on a compute capability 9.0
// device and refuse with a reason elsewhere; the persistent ones ("wsp") also on grids capped at a few CTAs
// (each CTA walking many items), on more items than SMs, and in one tiny case each for compute-sanitizer.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "core/dtype.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/fused_default_tile.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "core/query_block_order.hpp"
#include "core/strategy.hpp"
#include "fused_dev_hooks.cuh"
#include "run/problem_inputs.hpp"
#include "strategies/registry.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

std::unique_ptr<Backend>& gpu() {
  static std::unique_ptr<Backend> b = make_cuda_backend(0);
  return b;
}

struct Shape {
  std::int64_t batch, heads, kv_heads, seq_len, q_len, head_dim, page_size;
  KvLayout layout;
  DType dtype;
  bool causal;
  std::vector<std::int64_t> kv_lens;  // empty: all seq_len
};

Problem make(const Shape& s) {
  ProblemSpec p;
  p.batch = s.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.seq_len = s.seq_len;
  p.q_len = s.q_len;
  p.head_dim = s.head_dim;
  p.page_size = s.page_size;
  p.kv_layout = s.layout;
  p.dtype = s.dtype;
  p.causal = s.causal;
  p.kv_lens = s.kv_lens;
  if (!s.kv_lens.empty()) {
    p.kv_lens_spec = "list:";
    for (std::size_t i = 0; i < s.kv_lens.size(); ++i) p.kv_lens_spec += (i ? "," : "") + std::to_string(s.kv_lens[i]);
  }
  return make_problem(p);
}

std::unique_ptr<Strategy> fused() { return std::move(make_strategies("fused").at(0)); }

// One verified, launch-counted forward of `fused` with `tile` (unset: the strategy's own choice).
// Returns the tile that ran.
FusedTile run_checked(const Problem& p, ProblemInputs& in, std::optional<FusedTile> tile) {
  Backend& be = *gpu();
  auto st = fused();
  StrategyOptions opt;
  if (tile) opt.config = tile->name();
  const std::string why = st->can_implement(p, be, opt);
  EXPECT_EQ(why, "") << p.label() << " " << (tile ? tile->name() : "default");
  if (!why.empty()) return {};
  st->setup(be, p, in.io(), opt);
  const FusedTile ran = *st->config().tile;
  be.profiler().begin_launch_count();
  const std::string fail = in.check_forward([&] { st->run(be); });
  const LaunchRecord r = be.profiler().end_launch_count();
  const LaunchContract c = st->contract(p);
  std::printf("  %-64s %-12s %s | kernels %lld (contract %lld)\n", p.label().c_str(), ran.name().c_str(),
              fail.empty() ? "ok" : fail.c_str(), static_cast<long long>(r.other_kernels), static_cast<long long>(c.kernels));
  EXPECT_EQ(fail, "") << p.label() << " tile " << ran.name();
  EXPECT_EQ(r.other_kernels, c.kernels) << p.label() << " tile " << ran.name();
  if (ran.decode()) {
    EXPECT_EQ(c.kernels, ran.splits > 1 ? 2 : 1);
  }
  st->teardown(be);
  return ran;
}

// Whether the TMA decode tiles ("decode-ws") take `p` here: a Hopper device, and contiguous K/V or pages of
// 8, 16, 32 or a multiple of 64 tokens.
bool tma_decode_applies(const Problem& p) {
  const bool page_ok = p.kv_layout != KvLayout::paged || p.page_size == 8 || p.page_size == 16 || p.page_size == 32 ||
                       (p.page_size >= 64 && p.page_size % 64 == 0);
  return gpu()->device_info().cc_major >= 9 && page_ok;
}

// The TMA decode kernel's other shapes with `splits` splits: 128-key tiles (split K/V ring), and at head_dim
// 128 whole-row boxes with 64- and 128-key tiles.
std::vector<FusedTile> tma_decode_variants(std::int64_t head_dim, int splits) {
  std::vector<FusedTile> v = {FusedTile::decode_tile(splits, true, 128, false)};
  if (head_dim == 128) {
    v.push_back(FusedTile::decode_tile(splits, true, 64, true));
    v.push_back(FusedTile::decode_tile(splits, true, 128, true));
  }
  return v;
}

// Default choice, every decode split count given (both decode kernels and the TMA kernel's variants where it
// applies, and their refusals where it does not), and a prefill tile where the problem allows.
void check_all(const Shape& s, std::uint64_t seed, const std::vector<int>& splits = {1, 2, 5, 16}) {
  const Problem p = make(s);
  Backend& be = *gpu();
  ProblemInputs in(be, p, seed);
  const FusedTile def = run_checked(p, in, std::nullopt);
  if (fused_decode::takes_q_len(p.q_len) && (p.head_dim == 64 || p.head_dim == 128)) {
    EXPECT_TRUE(def.decode()) << "the default for q_len <= 16 is the decode kernel";
    EXPECT_GE(def.splits, 1);
    const bool tma = tma_decode_applies(p);
    EXPECT_EQ(def.ws(), tma) << p.label() << ": the TMA decode tile leads where it applies";
    if (tma && p.head_dim == 128 && fused_decode::rows_per_kv_head(p) <= kDecodeSliceRows) {
      EXPECT_TRUE(def.block_n == 128 && def.row_boxes) << p.label() << ": head_dim 128 decodes by 128-key row boxes";
    } else if (tma && p.head_dim == 128) {  // more than one m16 slice of rows: the 64-key tile (core/fused_default_tile.hpp)
      EXPECT_TRUE(def.block_n == 64 && !def.row_boxes) << p.label() << ": " << fused_decode::rows_per_kv_head(p)
                                                       << " packed rows decode by 64-key tiles";
    }
    for (int n : splits)
      if (n <= fused_decode::max_splits(p.seq_len)) {
        run_checked(p, in, FusedTile::decode_tile(n));
        if (tma) {
          run_checked(p, in, FusedTile::decode_tile(n, true));
          for (const FusedTile& v : tma_decode_variants(p.head_dim, n)) run_checked(p, in, v);
        }
      }
    if (tma) {
      for (const FusedTile& v : tma_decode_variants(p.head_dim, 0)) run_checked(p, in, v);  // heuristic splits
    } else {
      auto st = fused();
      StrategyOptions opt;
      std::vector<FusedTile> refused = tma_decode_variants(p.head_dim, 0);
      refused.push_back(FusedTile::decode_tile(0, true));
      for (const FusedTile& v : refused) {
        opt.config = v.name();
        EXPECT_NE(st->can_implement(p, be, opt), "") << p.label() << ": " << v.name() << " must refuse";
      }
    }
  } else {
    EXPECT_FALSE(def.decode());
  }
  FusedTile prefill;  // m64n64w4s2: mma.sync, compiled for head_dim 64 and 128
  run_checked(p, in, prefill);
}

const auto C = KvLayout::contiguous;
const auto P = KvLayout::paged;
const auto F16 = DType::fp16;
const auto B16 = DType::bf16;

}  // namespace

TEST(CudaFusedInference, GqaDecode) {
  check_all({3, 8, 2, 1000, 1, 128, 16, P, F16, false, {}}, 1);
  check_all({3, 8, 2, 1000, 1, 64, 7, P, B16, true, {}}, 2);
  check_all({2, 8, 2, 513, 5, 128, 16, C, B16, true, {}}, 3);
}

TEST(CudaFusedInference, MqaDecode) {
  check_all({2, 8, 1, 777, 1, 128, 16, P, F16, false, {}}, 4);
  check_all({2, 12, 1, 300, 16, 64, 7, P, F16, true, {}}, 5);  // 192 packed rows: 6 row chunks
  check_all({1, 4, 1, 64, 16, 128, 16, C, B16, true, {}}, 6);
}

// The decode instances' occupancy as the split model gets it (AttentionKernels::fused_decode_ctas_per_sm): at
// least one resident CTA a SM for every decode tile that runs a problem, at most what shared memory allows two
// of (the instances' design: 1 at head_dim 256, 2-3 below); 0 for a prefill tile and a tile that cannot run it.
TEST(CudaFusedInference, DecodeOccupancyFromTheRuntime) {
  Backend& be = *gpu();
  for (const Shape& s : {Shape{64, 64, 8, 4096, 1, 64, 16, P, B16, false, {}}, Shape{64, 71, 1, 4096, 1, 64, 16, C, B16, false, {}},
                         Shape{16, 32, 8, 8192, 8, 128, 16, P, F16, true, {}}, Shape{4, 16, 8, 2000, 1, 256, 16, P, B16, false, {}}}) {
    const Problem p = make(s);
    int decode_tiles = 0;
    for (const FusedTile& t : be.kernels().fused_tiles()) {
      const int n = be.kernels().fused_decode_ctas_per_sm(p, t);
      if (!t.decode() || !be.kernels().fused_can_implement(p, t).empty()) {
        EXPECT_EQ(n, 0) << p.label() << " " << t.name();
        continue;
      }
      ++decode_tiles;
      EXPECT_GE(n, 1) << p.label() << " " << t.name();
      EXPECT_LE(n, p.head_dim > 128 ? 1 : 4) << p.label() << " " << t.name();
    }
    EXPECT_GT(decode_tiles, 0) << p.label();
    std::printf("  %s: %d decode tiles, e.g. %s %d CTAs a SM\n", p.label().c_str(), decode_tiles,
                FusedTile::decode_tile(0, true).name().c_str(),
                be.kernels().fused_decode_ctas_per_sm(p, FusedTile::decode_tile(0, true)));
  }
}

// Every compiled tile either refuses a variant (sinks, a window, a soft-cap) or runs it verified: none passes
// can_implement and then fails its launch. (The prefill tiles without the variants' instances checked the sinks'
// device pointer, null when the strategy asks before its inputs exist, and failed at launch with an invalid
// argument in every tune of a problem with sinks.) A decode and a short prefill chunk at head_dim 64 and 128.
TEST(CudaFusedInference, EveryTileRunsOrRefusesTheVariants) {
  Backend& be = *gpu();
  for (const Shape& s : {Shape{1, 4, 2, 300, 1, 64, 16, P, B16, false, {}}, Shape{2, 4, 1, 200, 40, 128, 16, C, F16, true, {}}}) {
    for (int variant = 0; variant < 3; ++variant) {
      Problem p = make(s);
      if (variant == 0) p.sinks = true;
      if (variant == 1) p.window = 37;
      if (variant == 2) p.softcap = 20;
      ProblemInputs in(be, p, 4242 + variant);
      auto st = fused();
      StrategyOptions opt;
      int ran = 0, refused = 0;
      for (const FusedTile& t : be.kernels().fused_tiles()) {
        if (t.decode() && t.splits > 2) continue;  // the split counts share one instance
        opt.config = t.name();
        if (!st->can_implement(p, be, opt).empty()) {
          ++refused;
          continue;
        }
        run_checked(p, in, t);
        ++ran;
      }
      std::printf("  %s: %d tiles ran, %d refused\n", p.label().c_str(), ran, refused);
      EXPECT_GT(ran, 0) << p.label();
    }
  }
}

TEST(CudaFusedInference, QLenSixteenAndFive) {
  check_all({2, 4, 4, 1000, 16, 128, 16, P, F16, true, {}}, 7);
  check_all({2, 4, 2, 1000, 5, 64, 16, C, F16, false, {}}, 8);
}

TEST(CudaFusedInference, PrefillChunkQLen37) {
  check_all({2, 8, 2, 1000, 37, 128, 16, P, F16, true, {}}, 9);
  check_all({2, 6, 3, 300, 37, 64, 7, C, B16, true, {}}, 10);
  check_all({1, 4, 1, 500, 37, 128, 7, P, B16, false, {}}, 11);
}

TEST(CudaFusedInference, RaggedLengths) {
  const std::vector<std::int64_t> lens = {1, 17, 300, 64};
  check_all({4, 8, 2, 300, 1, 128, 16, P, F16, false, lens}, 12);
  check_all({4, 8, 2, 300, 1, 128, 7, P, B16, true, lens}, 13);
  check_all({4, 8, 2, 300, 1, 64, 16, C, F16, true, lens}, 14);
  const std::vector<std::int64_t> lens5 = {5, 17, 300, 64};  // q_len 5 <= every length
  check_all({4, 4, 1, 300, 5, 64, 7, P, F16, true, lens5}, 15);
  check_all({4, 4, 4, 300, 5, 128, 16, C, B16, false, lens5}, 16);
  const std::vector<std::int64_t> lens40 = {40, 170, 300, 64};
  check_all({4, 8, 2, 300, 37, 128, 7, P, F16, true, lens40}, 17);
  check_all({4, 8, 2, 300, 37, 64, 16, C, B16, true, lens40}, 18);
}

TEST(CudaFusedInference, RaggedSplitsFromEachLength) {
  // One long sequence among short ones: the default decode tile's split count comes from each sequence's
  // own length (core/fused_decode_plan.hpp's model), the long one is cut into several splits, the short
  // ones keep one, and the combine merges them.
  const std::vector<std::int64_t> lens = {3000, 40, 17, 200, 64, 1, 700, 90};
  for (const Shape& s : {Shape{8, 8, 2, 3000, 1, 128, 16, P, F16, false, lens},
                         Shape{8, 8, 2, 3000, 1, 64, 7, P, B16, true, lens},
                         Shape{8, 8, 2, 3000, 1, 128, 16, C, F16, true, lens}}) {
    const Problem p = make(s);
    ProblemInputs in(*gpu(), p, 31);
    const FusedTile def = run_checked(p, in, std::nullopt);
    EXPECT_TRUE(def.decode());
    EXPECT_EQ(def.splits, fused_decode::resolve_splits(p, 0, gpu()->device_info().sm_count, def.block_n,
                                                       gpu()->kernels().fused_decode_ctas_per_sm(p, def)));
    EXPECT_GT(def.splits, 1);
  }
}

TEST(CudaFusedInference, TmaDecodePageSizes) {
  // The TMA decode kernel's boxes: 8 pages of 8 tokens, 2 of 32, half of a 128-token page per 64-key tile;
  // ragged lengths end inside a page (the rest of that page is loaded and must not reach O); 1200 keys
  // cross the producer's 32-page block-table window several times.
  const std::vector<std::int64_t> lens = {1200, 9, 333, 64, 130};
  check_all({5, 8, 2, 1200, 1, 128, 8, P, F16, false, lens}, 41, {1, 3});
  check_all({5, 8, 2, 1200, 2, 64, 32, P, B16, true, lens}, 42, {1, 4});
  check_all({5, 4, 1, 1200, 1, 128, 128, P, B16, false, lens}, 43, {1, 7});
  check_all({5, 32, 8, 1200, 1, 128, 16, C, F16, true, lens}, 44, {1, 2});
  check_all({2, 32, 8, 4096, 1, 128, 16, P, F16, false, {}}, 45, {1});  // the Llama-3.1-8B decode shape, small B
}

TEST(CudaFusedInference, TmaDecodeVariantsPagesAndSplits) {
  // 128-key tiles whose splits start at an odd multiple of 64 keys (3 splits of 1200 keys: 448 each), so a
  // tile straddles pages of 256 and of 64 tokens; whole-row boxes of 8-token pages (16 boxes per 128-key
  // tile); q_len 16 with 4 query heads per KV head (64 packed rows: 2 m16 slices, 2 row chunks).
  const std::vector<std::int64_t> lens = {1200, 9, 333, 64, 130};
  check_all({5, 8, 2, 1200, 1, 128, 256, P, F16, false, lens}, 47, {3});
  check_all({5, 8, 2, 1200, 1, 64, 64, P, B16, true, lens}, 48, {3});
  check_all({5, 8, 4, 1200, 1, 128, 8, P, B16, true, lens}, 49, {1, 3});
  check_all({3, 8, 2, 700, 16, 128, 16, P, F16, true, {700, 17, 450}}, 50, {1, 3});
  check_all({3, 8, 2, 700, 16, 128, 16, C, B16, false, {700, 17, 450}}, 51, {1, 3});
}

// One small ragged case per TMA decode variant (paged by 16 and contiguous, 1 and 3 splits), for
// compute-sanitizer (memcheck, racecheck): each test is one variant so that a tool run can take one.
void check_variant_small(int block_n, bool rows) {
  for (const Shape& s : {Shape{3, 8, 2, 300, 1, 128, 16, P, F16, false, {300, 61, 129}},
                         Shape{3, 8, 2, 300, 2, 128, 16, C, B16, true, {300, 61, 129}}}) {
    const Problem p = make(s);
    if (!tma_decode_applies(p)) GTEST_SKIP() << "no Hopper device: the TMA decode tiles refuse";
    ProblemInputs in(*gpu(), p, 70 + block_n + (rows ? 1 : 0));
    for (int n : {1, 3}) run_checked(p, in, FusedTile::decode_tile(n, true, block_n, rows));
  }
}
TEST(CudaFusedInference, TmaDecodeN128Small) { check_variant_small(128, false); }
TEST(CudaFusedInference, TmaDecodeRowsSmall) { check_variant_small(64, true); }
TEST(CudaFusedInference, TmaDecodeN128RowsSmall) { check_variant_small(128, true); }

TEST(CudaFusedInference, SingleHeadSingleSequence) {
  check_all({1, 1, 1, 1, 1, 64, 1, P, F16, false, {}}, 19);
  check_all({1, 1, 1, 200, 1, 128, 7, C, B16, true, {}}, 20);
  check_all({1, 1, 1, 37, 37, 64, 16, P, F16, true, {}}, 21);
}

TEST(CudaFusedInference, SelfAttentionDefaultsUnchanged) {
  // q_len = seq_len, kv_heads = heads: the prefill tiles (wgmma on Hopper) as before.
  check_all({2, 3, 3, 300, 300, 128, 16, P, F16, true, {}}, 22);
  check_all({2, 3, 3, 300, 300, 64, 16, C, B16, false, {}}, 23);
}

FusedTile hopper_tile(int m, int n, int w, int st, bool ws, bool persistent = false) {
  return FusedTile::prefill_tile(m, n, w, st,
                                 persistent ? TileFamily::prefill_wsp : ws ? TileFamily::prefill_ws : TileFamily::prefill);
}

// The persistent ws tiles ("...wsp") of a head_dim.
std::vector<FusedTile> persistent_tiles(std::int64_t head_dim) {
  if (head_dim == 128) return {hopper_tile(128, 128, 12, 2, true, true)};
  return {hopper_tile(128, 64, 12, 3, true, true), hopper_tile(192, 64, 16, 3, true, true),
          hopper_tile(192, 128, 16, 2, true, true), hopper_tile(192, 128, 16, 3, true, true),
          hopper_tile(192, 128, 16, 4, true, true),
          hopper_tile(128, 128, 12, 3, true, true)};
}

// The Hopper prefill tiles for a head_dim: the warp-specialized ws tiles first, their persistent variants,
// then the wgmma tiles.
std::vector<FusedTile> hopper_tiles(std::int64_t head_dim) {
  std::vector<FusedTile> out;
  if (head_dim == 128)
    out = {hopper_tile(128, 128, 12, 2, true), hopper_tile(128, 128, 8, 2, false), hopper_tile(192, 64, 12, 2, false)};
  else
    out = {hopper_tile(128, 64, 12, 3, true), hopper_tile(128, 64, 8, 2, false), hopper_tile(256, 64, 16, 2, false)};
  const std::vector<FusedTile> wsp = persistent_tiles(head_dim);
  out.insert(out.begin() + 1, wsp.begin(), wsp.end());
  return out;
}

void check_hopper(const Shape& s, std::uint64_t seed) {
  const Problem p = make(s);
  Backend& be = *gpu();
  ProblemInputs in(be, p, seed);
  const bool sm90 = be.device_info().cc_major == 9 && be.device_info().cc_minor == 0;
  for (const FusedTile& t : hopper_tiles(p.head_dim)) {
    if (!sm90) {
      auto st = fused();
      StrategyOptions opt;
      opt.config = t.name();
      EXPECT_NE(st->can_implement(p, be, opt).find("compute capability 9.0"), std::string::npos) << t.name();
      continue;
    }
    const FusedTile ran = run_checked(p, in, t);
    EXPECT_TRUE(ran == t) << ran.name() << " ran for " << t.name();
  }
}

// Grouped KV heads: KVH = H/4 and KVH = 1 (MQA), self-attention and q_len < S, contiguous and paged.
TEST(CudaFusedInference, HopperTilesGroupedKvHeads) {
  check_hopper({2, 8, 2, 1000, 1000, 128, 16, C, F16, true, {}}, 40);
  check_hopper({2, 8, 2, 1000, 1000, 64, 16, C, B16, false, {}}, 41);
  check_hopper({2, 4, 1, 777, 300, 128, 16, P, B16, true, {}}, 42);    // pages of 16: TMA boxes
  check_hopper({2, 4, 1, 777, 300, 64, 16, P, F16, false, {}}, 43);
}

// q_len < S with bottom-right causal (and not), S and q_len not multiples of any tile; B=1 H=1; q_len = 1.
TEST(CudaFusedInference, HopperTilesChunkedPrefill) {
  check_hopper({1, 1, 1, 1537, 200, 128, 16, C, B16, true, {}}, 44);
  check_hopper({1, 1, 1, 1537, 200, 64, 16, C, F16, true, {}}, 45);
  check_hopper({2, 8, 2, 1000, 333, 128, 7, P, F16, false, {}}, 46);   // pages of 7: cp.async in ws
  check_hopper({2, 8, 2, 1000, 1, 128, 16, C, F16, true, {}}, 47);
  check_hopper({1, 4, 1, 129, 77, 64, 16, C, B16, true, {}}, 48);
}

// Ragged lengths: rows past each sequence's length never reach O (contiguous, pages of 7, 64 and 256).
TEST(CudaFusedInference, HopperTilesRagged) {
  const std::vector<std::int64_t> lens = {1000, 333, 77};
  check_hopper({3, 4, 2, 1000, 77, 128, 16, C, F16, true, lens}, 50);
  check_hopper({3, 4, 2, 1000, 77, 64, 16, C, B16, false, lens}, 51);
  check_hopper({3, 4, 1, 1000, 64, 128, 7, P, B16, true, lens}, 52);
  check_hopper({3, 4, 1, 1000, 64, 64, 7, P, F16, true, lens}, 53);
  check_hopper({3, 8, 2, 1000, 77, 128, 64, P, F16, false, lens}, 54);
  check_hopper({3, 8, 2, 1000, 77, 128, 256, P, B16, true, lens}, 55);
}

// One small ragged paged case per ws load path, for compute-sanitizer (memcheck, racecheck): pages of 7
// (every tile by cp.async) and of 16 (TMA boxes, the ragged last tile by cp.async).
TEST(CudaFusedInference, HopperTilesSmallForSanitizer) {
  check_hopper({2, 4, 2, 150, 40, 128, 7, P, F16, true, {150, 61}}, 60);
  check_hopper({2, 4, 2, 150, 40, 128, 16, P, B16, false, {150, 61}}, 61);
}

// The persistent tiles with each CTA walking many work items: the grid capped at 1, 2 and 5 CTAs (Q
// buffers and K/V ring phases carried across items, items mixing TMA and cp.async tiles: ragged lengths,
// pages of 7 and 16), and a problem with more items than SMs on the full grid.
void check_persistent(const Shape& s, std::uint64_t seed, std::vector<int> caps) {
  const Problem p = make(s);
  Backend& be = *gpu();
  if (!(be.device_info().cc_major == 9 && be.device_info().cc_minor == 0)) return;  // refusals: check_hopper
  ProblemInputs in(be, p, seed);
  for (const FusedTile& t : persistent_tiles(p.head_dim))
    for (int cap : caps) {
      kernels::fused_set_persistent_grid_cap(cap);
      const FusedTile ran = run_checked(p, in, t);
      kernels::fused_set_persistent_grid_cap(0);
      EXPECT_TRUE(ran == t) << ran.name() << " ran for " << t.name() << " on " << cap << " CTAs";
    }
}

TEST(CudaFusedInference, HopperPersistentFewCtas) {
  const std::vector<std::int64_t> lens = {1000, 333, 77};  // 8, 3 and 1 key tiles of 128 per item
  check_persistent({3, 4, 2, 1000, 77, 128, 16, C, F16, true, lens}, 70, {1, 2, 5});
  check_persistent({3, 4, 2, 1000, 77, 64, 16, C, B16, false, lens}, 71, {1, 2, 5});
  check_persistent({3, 4, 1, 1000, 64, 128, 7, P, B16, true, lens}, 72, {2, 5});   // every tile by cp.async
  check_persistent({3, 4, 1, 1000, 64, 64, 16, P, F16, true, lens}, 73, {2, 5});   // TMA boxes, ragged ends
  check_persistent({2, 4, 2, 1000, 1000, 128, 16, C, B16, true, {}}, 74, {2, 5});  // 64 items of 1..8 tiles
  check_persistent({2, 4, 2, 1000, 1000, 64, 16, C, F16, false, {}}, 75, {3});
  check_persistent({1, 1, 1, 777, 777, 64, 16, C, F16, true, {}}, 76, {1, 2});     // B=1 H=1, 5-7 items
}

// The tail split (core/query_block_order.hpp: tail_split; kernels/fused_tail_merge.cuh): non-causal problems on
// grids capped so that the last round is partial, with the threshold lowered to 2 key tiles so that these
// small problems split (the pieces of a block on up to 7 CTAs; contiguous, pages of 16 by TMA boxes, pages of
// 7 by cp.async, grouped KV heads, q_len < S, S not a multiple of the key tile). Each setup runs twice: a
// block counter left non-zero by the first run would leave the second run's rows unmerged (poisoned).
void check_tail_split(const Shape& s, std::uint64_t seed, std::vector<int> caps) {
  const Problem p = make(s);
  Backend& be = *gpu();
  if (!(be.device_info().cc_major == 9 && be.device_info().cc_minor == 0)) return;
  ProblemInputs in(be, p, seed);
  kernels::fused_set_tail_min_gain(2);
  for (const FusedTile& t : persistent_tiles(p.head_dim))
    for (int cap : caps) {
      const int m_blocks = static_cast<int>((p.q_len + t.block_m - 1) / t.block_m);
      const int n_tiles = static_cast<int>((p.seq_len + t.block_n - 1) / t.block_n);
      const bool splits = tail_split(cap, m_blocks, static_cast<int>(p.batch * p.heads), n_tiles, 2).rem > 0;
      auto st = fused();
      StrategyOptions opt;
      opt.config = t.name();
      ASSERT_EQ(st->can_implement(p, be, opt), "") << p.label() << " " << t.name();
      kernels::fused_set_persistent_grid_cap(cap);
      st->setup(be, p, in.io(), opt);
      for (int run = 0; run < 2; ++run) {
        const std::string fail = in.check_forward([&] { st->run(be); });
        std::printf("  %-64s %-12s on %d CTAs%s, run %d: %s\n", p.label().c_str(), t.name().c_str(), cap,
                    splits ? " (split)" : "", run + 1, fail.empty() ? "ok" : fail.c_str());
        EXPECT_EQ(fail, "") << p.label() << " " << t.name() << " on " << cap << " CTAs, run " << run + 1;
      }
      st->teardown(be);
      kernels::fused_set_persistent_grid_cap(0);
      if (t.block_m == 128 && t.block_n == 128 && p.head_dim == 128) {
        EXPECT_TRUE(splits) << "the case does not exercise the split: " << p.label() << " on " << cap;
      }
    }
  kernels::fused_set_tail_min_gain(0);
}

TEST(CudaFusedInference, HopperPersistentTailSplit) {
  check_tail_split({1, 2, 2, 1000, 1000, 128, 16, C, F16, false, {}}, 90, {3, 7});   // 16 blocks, 8 tiles
  check_tail_split({1, 2, 2, 1000, 1000, 128, 16, C, B16, false, {}}, 91, {3, 7});
  check_tail_split({2, 4, 1, 1000, 333, 128, 16, P, F16, false, {}}, 92, {7, 11});   // MQA, q_len < S, TMA boxes
  check_tail_split({2, 4, 2, 1000, 333, 128, 7, P, B16, false, {}}, 93, {7, 11});    // pages of 7: cp.async
  check_tail_split({1, 3, 1, 2049, 300, 128, 64, P, F16, false, {}}, 94, {2, 4});    // a short last page
}

// The speculative base of m128n128w12s2wsp (kernels/fused_wg_step.cuh: SPEC_BASE): after a block's first
// key tile, the exponentials run on each row's maximum so far; a warp rebases where a row's maximum rose by
// more than 2^8 in p, and computes S again where a p may have overflowed (a rise of 2^120). Random inputs
// never raise a maximum that far after the first tile, so these multiply the K rows of `keys` keys from
// key0 (a later tile) by k_scale: 16 raises the maxima of most rows by 2^5 to 2^25 (the rebase), 128 by up
// to 2^200 (the recompute, with K from global memory; rows that rose less in the same warps rebase). On an H200
// (session 34) a build without the recompute failed every case at 128 (NaN/Inf outputs), and one that never
// rebases failed the fp16 cases at 16.
void check_speculative_base(const Shape& s, std::uint64_t seed, float k_scale, std::int64_t key0, std::int64_t keys,
                            int cap = 0) {
  const Problem p = make(s);
  Backend& be = *gpu();
  if (!(be.device_info().cc_major == 9 && be.device_info().cc_minor == 0)) return;
  HostTensors t = make_random_inputs(p, seed);
  const bool bf16 = p.dtype == DType::bf16;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t kvh = 0; kvh < p.kv_heads; ++kvh)
      for (std::int64_t key = key0; key < std::min(key0 + keys, p.kv_len(b)); ++key)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          std::uint16_t& x = t.k[static_cast<std::size_t>(kv_index(p, t.block_table.data(), b, kvh, key, d))];
          x = bf16 ? float_to_bf16_bits(bf16_bits_to_float(x) * k_scale) : float_to_half_bits(half_bits_to_float(x) * k_scale);
        }
  ProblemInputs in(be, p, t);
  const FusedTile tile = hopper_tile(128, 128, 12, 2, true, true);
  if (cap > 0) {  // the tail split's pieces, whose first key (ItemNote::key0) is past the block's
    kernels::fused_set_tail_min_gain(2);
    kernels::fused_set_persistent_grid_cap(cap);
  }
  const FusedTile ran = run_checked(p, in, tile);
  kernels::fused_set_persistent_grid_cap(0);
  kernels::fused_set_tail_min_gain(0);
  EXPECT_TRUE(ran == tile) << ran.name() << " ran for " << tile.name();
}

TEST(CudaFusedInference, HopperSpeculativeBase) {
  for (const float scale : {16.f, 128.f}) {
    check_speculative_base({1, 2, 2, 1000, 1000, 128, 16, C, F16, false, {}}, 100, scale, 300, 16);
    check_speculative_base({1, 2, 2, 1000, 1000, 128, 16, C, B16, false, {}}, 101, scale, 300, 16);
    check_speculative_base({2, 4, 1, 1000, 333, 128, 16, P, F16, true, {1000, 777}}, 102, scale, 500, 24);  // MQA, ragged, TMA boxes
    check_speculative_base({2, 2, 2, 700, 700, 128, 7, P, B16, true, {}}, 103, scale, 200, 9);  // pages of 7: cp.async
    // 16 blocks of 8 tiles on 3 CTAs: the last block in pieces of tiles [0,2), [2,5), [5,8) (tail_split), the
    // scaled keys in the third tile of the second and third
    check_speculative_base({1, 2, 2, 1000, 1000, 128, 16, C, F16, false, {}}, 104, scale, 520, 16, 3);
    check_speculative_base({1, 2, 2, 1000, 1000, 128, 16, P, B16, false, {}}, 105, scale, 900, 16, 3);
  }
}

// More items than the grid's CTAs without a cap (B=4 H=16 S=1000: 512 blocks of 128 rows, 384 of 192).
TEST(CudaFusedInference, HopperPersistentManyItems) {
  check_persistent({4, 16, 4, 1000, 1000, 128, 16, C, F16, true, {}}, 77, {0});
  check_persistent({4, 16, 4, 1000, 1000, 128, 16, C, B16, false, {}}, 78, {0});
  check_persistent({4, 16, 16, 1000, 1000, 64, 16, C, B16, true, {}}, 79, {0});
  check_persistent({4, 16, 16, 1000, 1000, 64, 64, P, F16, false, {}}, 80, {0});
}

// One tiny case per persistent tile for compute-sanitizer (memcheck, racecheck; one test each, so a device
// script runs them side by side): B=1 H=1 S=200 causal on one CTA (two items: the Q buffers and ring stages
// are reused across items); the D=128 one also ragged and paged by TMA boxes on two CTAs.
void check_one_persistent(const Shape& s, std::uint64_t seed, const FusedTile& t, int cap) {
  const Problem p = make(s);
  Backend& be = *gpu();
  if (!(be.device_info().cc_major == 9 && be.device_info().cc_minor == 0)) return;
  ProblemInputs in(be, p, seed);
  kernels::fused_set_persistent_grid_cap(cap);
  const FusedTile ran = run_checked(p, in, t);
  kernels::fused_set_persistent_grid_cap(0);
  EXPECT_TRUE(ran == t) << ran.name() << " ran for " << t.name();
}

TEST(CudaFusedInference, PersistentSanitizerD128) {
  const FusedTile t = hopper_tile(128, 128, 12, 2, true, true);
  check_one_persistent({1, 1, 1, 200, 200, 128, 16, C, F16, true, {}}, 81, t, 1);
  check_one_persistent({2, 2, 1, 200, 61, 128, 16, P, B16, false, {200, 61}}, 82, t, 2);
}

// The tail split for compute-sanitizer: B=1 H=2 S=600 on 3 CTAs (10 blocks: one in the split round, in
// 3 pieces), contiguous and on pages of 7 (cp.async).
TEST(CudaFusedInference, PersistentSanitizerTailSplit) {
  check_tail_split({1, 2, 2, 600, 600, 128, 16, C, B16, false, {}}, 95, {3});
  check_tail_split({1, 2, 1, 600, 600, 128, 7, P, F16, false, {}}, 96, {3});
}

TEST(CudaFusedInference, PersistentSanitizerD64) {
  check_one_persistent({1, 1, 1, 200, 200, 64, 16, C, B16, true, {}}, 83, hopper_tile(128, 64, 12, 3, true, true), 1);
}

TEST(CudaFusedInference, PersistentSanitizerD64Three) {
  check_one_persistent({1, 1, 1, 200, 200, 64, 16, C, F16, true, {}}, 84, hopper_tile(192, 64, 16, 3, true, true), 1);
}

// 192 x 128 blocks at S=200 causal: the second block's last two warpgroups hold no row (they only release
// the ring's tiles), the first block's first two see one key tile of its two.
TEST(CudaFusedInference, PersistentSanitizerD64Wide) {
  check_one_persistent({1, 1, 1, 200, 200, 64, 16, C, B16, true, {}}, 85, hopper_tile(192, 128, 16, 2, true, true), 1);
}

TEST(CudaFusedInference, DecodeRefusals) {
  Backend& be = *gpu();
  auto st = fused();
  StrategyOptions opt;
  const Problem p37 = make({1, 2, 1, 100, 37, 128, 16, P, F16, false, {}});
  opt.config = FusedTile::decode_tile(0).name();
  EXPECT_NE(st->can_implement(p37, be, opt).find("q_len"), std::string::npos);
  const Problem p1 = make({1, 2, 1, 100, 1, 128, 16, P, F16, false, {}});
  opt.config = FusedTile::decode_tile(32).name();  // 100 keys allow 2 splits
  EXPECT_NE(st->can_implement(p1, be, opt), "");
  // The TMA decode variants: no cp.async twin of a 128-key tile or of whole-row boxes, no whole-row boxes at
  // head_dim 64, no page size the TMA boxes cannot take; each refusal names the tile.
  const Problem d64 = make({1, 2, 1, 100, 1, 64, 16, P, F16, false, {}});
  const Problem p7 = make({1, 2, 1, 100, 1, 128, 7, P, F16, false, {}});
  for (const auto& [prob, tile] : {std::pair{p1, FusedTile::decode_tile(0, false, 128, false)},
                                   std::pair{p1, FusedTile::decode_tile(0, false, 64, true)},
                                   std::pair{d64, FusedTile::decode_tile(0, true, 64, true)},
                                   std::pair{p7, FusedTile::decode_tile(0, true, 128, false)},
                                   std::pair{p1, FusedTile::decode_tile(0, true, 256, false)}}) {
    opt.config = tile.name();
    EXPECT_NE(st->can_implement(prob, be, opt).find(tile.name()), std::string::npos) << tile.name();
  }
  const Problem d96 = make({1, 2, 1, 100, 1, 96, 16, P, F16, false, {}});
  opt.config.clear();
  EXPECT_EQ(st->can_implement(d96, be, opt), "");  // head_dim 96: a prefill tile takes it
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  int rc = attnbench_testing::run_all_tests(argc, argv);
  gpu().reset();
  return rc;
}
