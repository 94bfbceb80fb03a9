// The split-KV decode plan (core/fused_decode_plan.hpp): split heuristic, split bounds, keys per split,
// workspace sizes, and the decode tiles' names and JSON.
#include <gtest/gtest.h>

#include "core/attention_kernels.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/sizes.hpp"

using namespace ab;
namespace fd = ab::fused_decode;

namespace {

Problem decode_problem(std::int64_t batch, std::int64_t heads, std::int64_t kv_heads, std::int64_t seq_len,
                       std::int64_t q_len) {
  ProblemSpec s;
  s.batch = batch;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.seq_len = seq_len;
  s.q_len = q_len;
  s.head_dim = 128;
  s.page_size = 16;
  s.kv_layout = KvLayout::paged;
  return make_problem(s);
}

}  // namespace

TEST(FusedDecodePlan, HeuristicFillsTheGpu) {
  // Llama-3.1-8B decode, B=64: 512 CTAs per split already fill 132 SMs x 2 in two nearly full waves.
  EXPECT_EQ(fd::heuristic_splits(64 * 8, 4096, 132, 2), 1);
  // B=1, 8 KV heads, 32k keys: 8 CTAs per split need 33 splits for one full wave.
  const std::int64_t s = fd::heuristic_splits(8, 32768, 132, 2);
  EXPECT_GE(8 * s, 264);
  EXPECT_LE(s, fd::max_splits(32768));
  // Short sequences keep kMinKeysPerSplit keys per split: 300 keys -> 1 split.
  EXPECT_EQ(fd::heuristic_splits(1, 300, 132, 2), 1);
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
