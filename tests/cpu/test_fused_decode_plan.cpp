// The split-KV decode plan (core/fused_decode_plan.hpp): the split heuristic and its cost model (ragged
// lengths included), split bounds, keys per split, workspace sizes, and the decode tiles' names and JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/attention_kernels.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/sizes.hpp"
#include "tune/cache_entries.hpp"

using namespace ab;
namespace fd = ab::fused_decode;

namespace {

Problem decode_problem(std::int64_t batch, std::int64_t heads, std::int64_t kv_heads, std::int64_t seq_len,
                       std::int64_t q_len, std::int64_t window = 0, std::int64_t head_dim = 128) {
  ProblemSpec s;
  s.batch = batch;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.seq_len = seq_len;
  s.q_len = q_len;
  s.head_dim = head_dim;
  s.page_size = 16;
  s.kv_layout = KvLayout::paged;
  s.window = window;
  return make_problem(s);
}

}  // namespace

TEST(FusedDecodePlan, HeuristicFillsTheGpu) {
  // Llama-3.1-8B decode, B=64: 512 CTAs of equal length already keep 132 SMs x 2 busy to the end.
  EXPECT_EQ(fd::heuristic_splits(64 * 8, 4096, 132, 2), 1);
  // B=1, 8 KV heads, 32k keys: one split would leave 124 of 132 SMs idle; the model splits each head's
  // keys across many CTAs.
  const std::int64_t s = fd::heuristic_splits(8, 32768, 132, 2);
  EXPECT_GE(s, 16);
  EXPECT_LE(s, fd::max_splits(32768));
  // Short sequences keep kMinKeysPerSplit keys per split: 200 keys -> 1 split.
  EXPECT_EQ(fd::heuristic_splits(1, 200, 132, 2), 1);
  // A short, tiny decode (one MQA head, 64 query heads in 2 row chunks, 1500 keys) still splits widely: 8-16
  // splits ran 13-22% faster than 5 on an H200 (session 47).
  EXPECT_GE(fd::heuristic_splits(2, 1500, 132, 2, 64, 32), 8);
  // A 128-key tile moves twice a 64-key one's bytes a CTA, so it fills the bandwidth with fewer splits (B=1,
  // 8 KV heads, 64k keys: 14-16 splits ran 4% faster than 27 with it).
  const std::int64_t wide = fd::heuristic_splits(8, 65536, 132, 2, 128, 4, 128);
  EXPECT_LT(wide, fd::heuristic_splits(8, 65536, 132, 2, 128, 4, 64));
  EXPECT_GE(wide, 8);
  EXPECT_EQ(fd::heuristic_splits(1, 1, 132, 2), 1);
  // Degenerate inputs give one split.
  EXPECT_EQ(fd::heuristic_splits(0, 4096, 132, 2), 1);
  EXPECT_EQ(fd::heuristic_splits(4, 4096, 0, 2), 1);
  // Always within [1, max_splits].
  for (std::int64_t work : {1, 3, 8, 64, 500, 4096})
    for (std::int64_t len : {1, 63, 64, 65, 1000, 4096, 100000}) {
      const std::int64_t h = fd::heuristic_splits(work, len, 132, 2);
      EXPECT_GE(h, 1);
      EXPECT_LE(h, fd::max_splits(len));
    }
}

namespace {

fd::DecodeShape shape_of(std::vector<std::int64_t> lens, std::int64_t ctas_per_seq = 8, std::int64_t rows = 4) {
  fd::DecodeShape s;
  s.lens = std::move(lens);
  s.ctas_per_seq = ctas_per_seq;
  s.rows_per_cta = rows;
  s.head_dim = 128;
  return s;
}

std::vector<std::int64_t> uniform_lengths(std::uint64_t seed, std::size_t n, std::int64_t lo, std::int64_t hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> d(lo, hi);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace

TEST(FusedDecodePlan, ModelFollowsTheBytesAndTheTail) {
  const fd::DecodeCostModel m;
  // One CTA per KV head of one 32k sequence: each streams alone, at what its loads in flight allow.
  const double alone = fd::modeled_decode_us(shape_of({32768}), 1, 132, 2);
  const double per_cta = m.tiles_in_flight * fd::kKeysPerTile * 4.0 * 128 / m.loaded_latency_us;
  EXPECT_NEAR(alone, m.cta_start_us + 32768 * 4.0 * 128 / per_cta, 1.0);
  // A full GPU is bandwidth-bound: 512 equal CTAs take about their bytes at the DRAM rate.
  const std::vector<std::int64_t> equal(64, 4096);
  const double full = fd::modeled_decode_us(shape_of(equal), 1, 132, 2);
  const double bytes = 64.0 * 8 * 4096 * 4 * 128;
  EXPECT_GT(full, bytes / m.dram_bytes_per_us);
  EXPECT_LT(full, 1.1 * bytes / m.dram_bytes_per_us);
  // More bytes, more time (on the last sequence dispatched: a CTA of the first wave that takes longer is
  // absorbed while every CTA runs at its own cap); a split adds the combine.
  std::vector<std::int64_t> longer = equal;
  longer[63] += 1000;
  EXPECT_GT(fd::modeled_decode_us(shape_of(longer), 1, 132, 2), full);
  EXPECT_GT(fd::modeled_decode_us(shape_of(equal), 2, 132, 2), full);
}

TEST(FusedDecodePlan, RaggedBatchesSplitTheLongSequences) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    // Lengths uniform in 512..8192, B=64: the same CTA count as the equal batch, but the long sequences'
    // CTAs would run alone at the end with one split.
    const fd::DecodeShape ragged = shape_of(uniform_lengths(seed, 64, 512, 8192));
    const std::int64_t s = fd::heuristic_splits(ragged, 132, 2);
    EXPECT_GT(s, 1) << "seed " << seed;
    EXPECT_LT(fd::modeled_decode_us(ragged, s, 132, 2), 0.95 * fd::modeled_decode_us(ragged, 1, 132, 2));
    for (std::int64_t other = 1; other <= fd::max_splits(8192); ++other)  // the least modeled time (1% ties)
      EXPECT_LE(fd::modeled_decode_us(ragged, s, 132, 2), 1.0101 * fd::modeled_decode_us(ragged, other, 132, 2));
  }
  // One long sequence among 63 short ones: 512 CTAs fill the GPU, yet the long one's 8 CTAs set the time.
  std::vector<std::int64_t> skew(64, 256);
  skew[37] = 32768;
  EXPECT_GT(fd::heuristic_splits(shape_of(skew), 132, 2), 4);
  // The same lengths all equal to the longest: no split.
  EXPECT_EQ(fd::heuristic_splits(shape_of(std::vector<std::int64_t>(64, 8192)), 132, 2), 1);
}

TEST(FusedDecodePlan, ResolveUsesEachSequencesLength) {
  ProblemSpec spec;
  spec.batch = 64;
  spec.heads = 32;
  spec.kv_heads = 8;
  spec.head_dim = 128;
  spec.q_len = 1;
  spec.page_size = 16;
  spec.kv_layout = KvLayout::paged;
  spec.kv_lens = std::vector<std::int64_t>(64, 256);
  spec.kv_lens[3] = 32768;
  spec.seq_len = 32768;
  const Problem p = make_problem(spec);
  ASSERT_TRUE(p.ragged());
  const fd::DecodeShape sh = fd::decode_shape(p);
  EXPECT_EQ(sh.lens[3], 32768);
  EXPECT_EQ(sh.lens[0], 256);
  EXPECT_EQ(sh.ctas_per_seq, 8);
  EXPECT_EQ(sh.rows_per_cta, 4);
  const std::int64_t s = fd::resolve_splits(p, 0, 132);
  EXPECT_EQ(s, fd::heuristic_splits(sh, 132, fd::kCtasPerSm));
  // Taking every sequence as the longest would see 512 CTAs of 32k keys and not split.
  EXPECT_EQ(fd::heuristic_splits(64 * 8, 32768, 132, fd::kCtasPerSm), 1);
  EXPECT_GT(s, 1);
  // Equal lengths: the batch of them and the kernel side's one length of batch x KV heads CTAs agree.
  spec.kv_lens.clear();
  for (std::int64_t len : {300, 4096, 20000}) {
    spec.seq_len = len;
    for (std::int64_t batch : {1, 3, 64}) {
      spec.batch = batch;
      const Problem u = make_problem(spec);
      EXPECT_EQ(fd::resolve_splits(u, 0, 132),
                fd::heuristic_splits(fd::work_per_split(u), len, 132, fd::kCtasPerSm, 128, fd::rows_per_kv_head(u)))
          << len << " x " << batch;
    }
  }
}

TEST(FusedDecodePlan, SplitsCoverTheSequence) {
  EXPECT_EQ(fd::max_splits(1), 1);
  EXPECT_EQ(fd::max_splits(64), 1);
  EXPECT_EQ(fd::max_splits(65), 2);
  EXPECT_EQ(fd::max_splits(1 << 20), fd::kMaxSplits);
  for (std::int64_t len : {1, 17, 300, 4096, 4097}) {
    for (std::int64_t s = 1; s <= fd::max_splits(len); ++s) {
      const std::int64_t k = fd::keys_per_split(len, s);
      EXPECT_EQ(k % fd::kKeysPerTile, 0);
      EXPECT_GE(k * s, len);  // every key belongs to a split
      EXPECT_LT(k * (s - 1), len + fd::kKeysPerTile * s);
    }
  }
}

// With a sliding window the splits walk only keys some query sees: from the first query's window start rounded
// down to a whole tile. Every visible key is walked, at most a tile less one of invisible ones, and the bound
// the splits are cut for holds every sequence's walk (ragged lengths, q_len 1 to 16, windows of 1 to past L).
TEST(FusedDecodePlan, WindowWalksOnlyTheVisibleKeys) {
  EXPECT_EQ(fd::window_base(8192, 1, 0), 0);
  EXPECT_EQ(fd::walked_keys(8192, 1, 0), 8192);
  EXPECT_EQ(fd::window_base(8192, 1, 128), (8192 - 1 - 128) / 64 * 64);  // 8000
  EXPECT_EQ(fd::walked_keys(8192, 1, 128), 192);
  EXPECT_EQ(fd::window_base(100, 4, 500), 0);  // a window longer than the sequence
  EXPECT_EQ(fd::walked_keys_bound(8192, 1, 0), 8192);
  EXPECT_EQ(fd::walked_keys_bound(8192, 1, 128), 128 + 1 + 63);
  EXPECT_EQ(fd::walked_keys_bound(100, 4, 500), 100);
  EXPECT_EQ(fd::walked_keys_bound(100, 4, INT64_MAX), 100);  // no overflow
  EXPECT_EQ(fd::window_base(100, 4, INT64_MAX), 0);
  for (std::int64_t q : {1, 4, 16})
    for (std::int64_t w : {1, 13, 64, 128, 4096, 9000})
      for (std::int64_t len = q; len < 9000; len += 97) {
        const std::int64_t base = fd::window_base(len, q, w), first = std::max<std::int64_t>(0, len - q - w);
        EXPECT_EQ(base % fd::kKeysPerTile, 0);
        EXPECT_LE(base, first) << "len " << len << " q " << q << " w " << w;  // no visible key is skipped
        EXPECT_LT(first - base, fd::kKeysPerTile);
        EXPECT_LE(fd::walked_keys(len, q, w), fd::walked_keys_bound(9000, q, w));
      }
  // The plan of a windowed problem follows the window, not the cache: gpt-oss's decode with window 128 at 8k
  // keys gets the splits (and the workspace bound) of a ~192-key problem.
  const Problem full = decode_problem(64, 64, 8, 8192, 1), windowed = decode_problem(64, 64, 8, 8192, 1, 128);
  EXPECT_EQ(fd::decode_shape(windowed).lens.front(), 192);
  EXPECT_LE(fd::resolve_splits(windowed, 0, 132), fd::max_splits(192));
  EXPECT_LT(fd::workspace_bound(windowed, 0), fd::workspace_bound(full, 0));
}

TEST(FusedDecodePlan, RowsAndWork) {
  const Problem llama = decode_problem(64, 32, 8, 4096, 1);
  EXPECT_EQ(fd::rows_per_kv_head(llama), 4);
  EXPECT_EQ(fd::row_chunks(llama), 1);
  EXPECT_EQ(fd::work_per_split(llama), 512);
  const Problem mqa = decode_problem(2, 32, 1, 1000, 16);  // 512 packed rows per KV head
  EXPECT_EQ(fd::row_chunks(mqa), 16);
  EXPECT_EQ(fd::resolve_splits(llama, 8, 132), 8);
  EXPECT_EQ(fd::resolve_splits(llama, 0, 132), fd::heuristic_splits(512, 4096, 132, fd::kCtasPerSm));
}

// head_dim 256 (the cp.async kernel's one-slice instance, one CTA per SM): chunks of 16 rows, and the splits
// modeled on half the slots.
TEST(FusedDecodePlan, HeadDim256RowsAndOccupancy) {
  EXPECT_EQ(fd::max_rows_per_cta(128), fd::kMaxRowsPerCta);
  EXPECT_EQ(fd::max_rows_per_cta(256), 16);
  EXPECT_EQ(fd::ctas_per_sm(128), fd::kCtasPerSm);
  EXPECT_EQ(fd::ctas_per_sm(256), 1);
  const Problem gemma = decode_problem(1, 16, 8, 32768, 1, 0, 256), mqa = decode_problem(2, 8, 1, 1000, 5, 0, 256);
  EXPECT_EQ(fd::row_chunks(gemma), 1);
  EXPECT_EQ(fd::row_chunks(mqa), 3);  // 40 packed rows, 16 a CTA
  EXPECT_EQ(fd::decode_shape(mqa).rows_per_cta, 16);
  EXPECT_EQ(fd::resolve_splits(gemma, 0, 132), fd::heuristic_splits(8, 32768, 132, 1, 256, 2));
  EXPECT_GT(fd::resolve_splits(gemma, 0, 132), 8);  // one long sequence of 8 CTAs: split across the SMs
}

TEST(FusedDecodePlan, WorkspaceBytes) {
  EXPECT_EQ(fd::partial_bytes(64, 32, 1, 128, 1), 0);  // one split writes O directly
  EXPECT_EQ(fd::partial_bytes(64, 32, 1, 128, 8), 64 * 32 * 8 * 130 * 4);
  const Problem llama = decode_problem(64, 32, 8, 4096, 1);
  EXPECT_EQ(fd::workspace_bound(llama, 4), fd::partial_bytes(64, 32, 1, 128, 4));
  EXPECT_EQ(fd::workspace_bound(llama, 0), fd::partial_bytes(64, 32, 1, 128, fd::max_splits(4096)));
  // The bound covers whatever the heuristic picks.
  EXPECT_GE(fd::workspace_bound(llama, 0), fd::partial_bytes(64, 32, 1, 128, fd::resolve_splits(llama, 0, 132)));
  // Saturates instead of wrapping.
  EXPECT_EQ(fd::partial_bytes(std::int64_t(1) << 40, std::int64_t(1) << 20, 16, 128, 64), kSizeSaturated);
}

TEST(FusedDecodePlan, DecodeTileNamesAndJson) {
  EXPECT_EQ(FusedTile::decode_tile(0).name(), "decode");
  EXPECT_EQ(FusedTile::decode_tile(8).name(), "decode-s8");
  FusedTile prefill;
  EXPECT_EQ(prefill.name(), "m64n64w4s2");
  EXPECT_FALSE(prefill.to_json().contains("splits"));
  const nlohmann::json j = FusedTile::decode_tile(16).to_json();
  EXPECT_EQ(j.at("splits"), 16);
  EXPECT_TRUE(j.at("decode").get<bool>());
  EXPECT_FALSE(FusedTile::decode_tile(4) == FusedTile::decode_tile(8));
  EXPECT_FALSE(FusedTile::decode_tile(0) == prefill);
}

TEST(FusedDecodePlan, TmaDecodeTileNamesJsonAndCache) {
  // The warp-specialized TMA decode kernel's tiles: their own names, the flag in JSON, and through a cache
  // entry; a decode entry written before them (no "ws") still loads as the cp.async kernel's tile.
  const FusedTile ws0 = FusedTile::decode_tile(0, true), ws8 = FusedTile::decode_tile(8, true);
  EXPECT_EQ(ws0.name(), "decode-ws");
  EXPECT_EQ(ws8.name(), "decode-ws-s8");
  EXPECT_FALSE(ws8 == FusedTile::decode_tile(8));
  const nlohmann::json j = ws8.to_json();
  EXPECT_TRUE(j.at("ws").get<bool>());
  EXPECT_EQ(j.at("splits"), 8);
  EXPECT_TRUE(fused_tile_from_json(j, "test") == ws8);
  EXPECT_TRUE(fused_tile_from_json(ws0.to_json(), "test") == ws0);
  nlohmann::json old = FusedTile::decode_tile(4).to_json();
  EXPECT_FALSE(old.contains("ws"));
  const FusedTile back = fused_tile_from_json(old, "test");
  EXPECT_TRUE(back == FusedTile::decode_tile(4));
  EXPECT_FALSE(back.ws());
}

TEST(FusedDecodePlan, TmaDecodeVariantNamesJsonAndCache) {
  // 128-key tiles and whole-row boxes: their own names (in FusedTile::name's order: -ws, -n128, -rows, -sN),
  // the fields in JSON and back through a cache entry; distinct from the 64-key tile of the same splits.
  const FusedTile n128 = FusedTile::decode_tile(0, true, 128), rows = FusedTile::decode_tile(4, true, 64, true);
  const FusedTile both = FusedTile::decode_tile(16, true, 128, true);
  EXPECT_EQ(n128.name(), "decode-ws-n128");
  EXPECT_EQ(rows.name(), "decode-ws-rows-s4");
  EXPECT_EQ(both.name(), "decode-ws-n128-rows-s16");
  EXPECT_FALSE(n128 == FusedTile::decode_tile(0, true));
  EXPECT_FALSE(rows == FusedTile::decode_tile(4, true));
  EXPECT_FALSE(both == FusedTile::decode_tile(16, true, 128));
  for (const FusedTile& t : {n128, rows, both}) {
    const nlohmann::json j = t.to_json();
    EXPECT_EQ(j.at("block_n"), t.block_n);
    EXPECT_EQ(j.contains("row_boxes"), t.row_boxes);
    EXPECT_TRUE(fused_tile_from_json(j, "test") == t) << t.name();
  }
  // A 64-key decode entry (every cache written before the variants) loads as the 64-key tile.
  const FusedTile old = fused_tile_from_json(FusedTile::decode_tile(8, true).to_json(), "test");
  EXPECT_EQ(old.block_n, 64);
  EXPECT_FALSE(old.row_boxes);
}
