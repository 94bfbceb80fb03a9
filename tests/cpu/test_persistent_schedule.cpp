// The static work order of the persistent fused tiles (core/persistent_schedule.hpp): every (head, query
// block) item runs exactly once for any grid, causal items come longest first, the per-CTA work is balanced
// at the issue-20 shapes; and the persistent tiles' names and JSON ("...wsp", "persistent") round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/attention_kernels.hpp"
#include "core/persistent_schedule.hpp"
#include "tune/cache_entries.hpp"

using namespace ab;

namespace {

// Key tiles of query block m of a causal self-attention head: blocks of bm rows, key tiles of bn.
int causal_tiles(int m, int bm, int bn) { return ((m + 1) * bm + bn - 1) / bn; }

struct Walk {
  std::vector<int> seen;           // runs per item
  std::vector<long long> work;     // key tiles per CTA
  bool longest_first = true;       // causal: each CTA's items never grow
};

Walk walk(int m_blocks, int bh_count, bool causal, int grid, int bm, int bn) {
  const long long items = static_cast<long long>(m_blocks) * bh_count;
  Walk w;
  w.seen.assign(static_cast<std::size_t>(items), 0);
  w.work.assign(static_cast<std::size_t>(grid), 0);
  for (int cta = 0; cta < grid; ++cta) {
    int last = 1 << 30;
    for (int round = 0;; ++round) {
      const long long i = wsp_item_index(round, cta, grid);
      if (i >= items) break;
      const WspItem it = wsp_item(i, m_blocks, bh_count, causal);
      EXPECT_GE(it.bh, 0);
      EXPECT_LT(it.bh, bh_count);
      EXPECT_GE(it.m_block, 0);
      EXPECT_LT(it.m_block, m_blocks);
      ++w.seen[static_cast<std::size_t>(it.bh) * m_blocks + it.m_block];
      const int tiles = causal ? causal_tiles(it.m_block, bm, bn) : m_blocks;
      if (causal && tiles > last) w.longest_first = false;
      last = tiles;
      w.work[static_cast<std::size_t>(cta)] += tiles;
    }
  }
  return w;
}

}  // namespace

TEST(PersistentSchedule, EveryItemOnceForAnyGrid) {
  for (bool causal : {false, true})
    for (int m_blocks : {1, 2, 7, 16})
      for (int bh : {1, 3, 128})
        for (int grid : {1, 2, 5, 132, 1000}) {
          const long long items = static_cast<long long>(m_blocks) * bh;
          const int g = static_cast<int>(std::min<long long>(grid, items));
          const Walk w = walk(m_blocks, bh, causal, g, 128, 128);
          for (int n : w.seen) ASSERT_EQ(n, 1) << "m_blocks " << m_blocks << " bh " << bh << " grid " << g;
          if (causal) {
            EXPECT_TRUE(w.longest_first) << "m_blocks " << m_blocks << " bh " << bh << " grid " << g;
          }
        }
}

TEST(PersistentSchedule, NonCausalKeepsAHeadsBlocksTogether) {
  // Items 0..m_blocks-1 are the blocks of head 0: the CTAs that start together share its K/V.
  for (int i = 0; i < 16; ++i) {
    const WspItem it = wsp_item(i, 16, 128, false);
    EXPECT_EQ(it.bh, 0);
    EXPECT_EQ(it.m_block, i);
  }
  const WspItem first = wsp_item(0, 16, 128, true);  // causal: the last (longest) block first
  EXPECT_EQ(first.m_block, 15);
}

TEST(PersistentSchedule, CausalWorkIsBalanced) {
  // B=8 H=16 S=2048 (BLOCK_M = BLOCK_N = 128) and B=2 H=16 S=8192 on 132 SMs; B=32 H=12 S=512 with the
  // three-consumer tile (BLOCK_M 192, BLOCK_N 64).
  struct Case {
    int m_blocks, bh, bm, bn;
  };
  for (const Case c : {Case{16, 128, 128, 128}, Case{64, 32, 128, 128}, Case{3, 384, 192, 64}}) {
    const Walk w = walk(c.m_blocks, c.bh, true, 132, c.bm, c.bn);
    long long total = 0, most = 0;
    for (long long x : w.work) {
      total += x;
      most = std::max(most, x);
    }
    const double mean = static_cast<double>(total) / 132.0;
    const int heaviest = causal_tiles(c.m_blocks - 1, c.bm, c.bn);
    // The busiest CTA is at most one heaviest item above the mean (a greedy bound; the snake order does it).
    EXPECT_LE(static_cast<double>(most), mean + heaviest) << "m_blocks " << c.m_blocks;
  }
  // The snake: at S=8192 within 1 % of the mean (plain striding: the low CTAs get the heavier item of every
  // round, 6 % over).
  const Walk w = walk(64, 32, true, 132, 128, 128);
  long long total = 0;
  for (long long x : w.work) total += x;
  const long long most = *std::max_element(w.work.begin(), w.work.end());
  EXPECT_LE(static_cast<double>(most), 1.01 * static_cast<double>(total) / 132.0);
}

TEST(PersistentSchedule, TileNamesAndJson) {
  FusedTile t;
  t.block_m = 128;
  t.block_n = 128;
  t.warps = 12;
  t.stages = 2;
  t.ws = true;
  EXPECT_EQ(t.name(), "m128n128w12s2ws");
  EXPECT_FALSE(t.to_json().contains("persistent"));
  t.persistent = true;
  EXPECT_EQ(t.name(), "m128n128w12s2wsp");
  const nlohmann::json j = t.to_json();
  EXPECT_EQ(j.value("persistent", false), true);
  EXPECT_EQ(j.value("name", std::string()), "m128n128w12s2wsp");
  EXPECT_TRUE(fused_tile_from_json(j, "test") == t);
  FusedTile plain = t;
  plain.persistent = false;
  EXPECT_FALSE(plain == t);
  nlohmann::json old = plain.to_json();  // a cache written before the persistent tiles
  EXPECT_TRUE(fused_tile_from_json(old, "test") == plain);
}
