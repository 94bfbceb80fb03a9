// The order of the prefill fused kernels' work (core/query_block_order.hpp): every (head, query block) runs
// exactly once for any grid, one-block-per-CTA or persistent; the CTAs running at one time share few heads'
// K/V (the L2 working set); causal work, and non-causal work with a short last block, is balanced across the
// persistent CTAs at the issue-20 shapes; the non-causal tail split runs every key tile once, with the
// partials' slots the kernel's merge reads; causal blocks end at the last row; and the persistent tiles'
// names and JSON ("...wsp", "persistent") round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "core/attention_kernels.hpp"
#include "core/query_block_order.hpp"
#include "tune/cache_entries.hpp"

using namespace ab;

namespace {

// Key tiles of query block m of a causal self-attention head: blocks of bm rows, key tiles of bn.
int causal_tiles(int m, int bm, int bn) { return ((m + 1) * bm + bn - 1) / bn; }

struct Walk {
  std::vector<int> seen;                   // runs per block
  std::vector<long long> work;             // key tiles per CTA (or the caller's measure of a block's work)
  std::vector<std::set<int>> step_heads;   // heads the CTAs run at each step
  bool done_stays_done = true;             // no block after a CTA's first `done`
};

Walk walk(int m_blocks, int bh_count, bool causal, int grid, int bm, int bn,
          const std::function<long long(int m_block)>& block_work = {}) {
  const long long blocks = static_cast<long long>(m_blocks) * bh_count;
  Walk w;
  w.seen.assign(static_cast<std::size_t>(blocks), 0);
  w.work.assign(static_cast<std::size_t>(grid), 0);
  for (int cta = 0; cta < grid; ++cta) {
    bool done = false;
    for (int step = 0; step < 4 * (blocks / grid + 2); ++step) {
      const PersistentStep st = persistent_step(step, cta, grid, m_blocks, bh_count, causal);
      if (st.step == WalkStep::done) {
        done = true;
        continue;
      }
      if (done) w.done_stays_done = false;
      if (st.step == WalkStep::skip) continue;
      const QueryBlock b = st.block;
      EXPECT_GE(b.bh, 0);
      EXPECT_LT(b.bh, bh_count);
      EXPECT_GE(b.m_block, 0);
      EXPECT_LT(b.m_block, m_blocks);
      ++w.seen[static_cast<std::size_t>(b.bh) * m_blocks + b.m_block];
      w.work[static_cast<std::size_t>(cta)] +=
          block_work ? block_work(b.m_block) : causal ? causal_tiles(b.m_block, bm, bn) : m_blocks;
      if (w.step_heads.size() <= static_cast<std::size_t>(step)) w.step_heads.resize(step + 1);
      w.step_heads[static_cast<std::size_t>(step)].insert(b.bh);
    }
  }
  return w;
}

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace

TEST(QueryBlockOrder, GridCoversEveryBlockOnceHeadByHead) {
  for (bool causal : {false, true})
    for (int m_blocks : {1, 2, 7, 16})
      for (int bh : {1, 3, 128}) {
        std::vector<int> seen(static_cast<std::size_t>(m_blocks) * bh, 0);
        for (long long i = 0; i < static_cast<long long>(m_blocks) * bh; ++i) {
          const QueryBlock b = grid_query_block(i, m_blocks, causal);
          ASSERT_GE(b.bh, 0);
          ASSERT_LT(b.bh, bh);
          ASSERT_GE(b.m_block, 0);
          ASSERT_LT(b.m_block, m_blocks);
          ++seen[static_cast<std::size_t>(b.bh) * m_blocks + b.m_block];
          EXPECT_EQ(b.bh, i / m_blocks);  // a head's blocks side by side: they share its K/V in L2
          if (causal && i % m_blocks != 0) {  // longest first within a head
            EXPECT_LT(b.m_block, grid_query_block(i - 1, m_blocks, causal).m_block);
          }
        }
        for (int n : seen) ASSERT_EQ(n, 1) << "m_blocks " << m_blocks << " bh " << bh;
      }
}

TEST(QueryBlockOrder, PersistentRunsEveryBlockOnceForAnyGrid) {
  for (bool causal : {false, true})
    for (int m_blocks : {1, 2, 3, 7, 16})
      for (int bh : {1, 3, 128})
        for (int grid : {1, 2, 5, 7, 100, 132, 1000}) {
          const long long units = persistent_units(m_blocks, bh, causal);
          const int g = static_cast<int>(std::min<long long>(grid, units));
          const Walk w = walk(m_blocks, bh, causal, g, 128, 128);
          for (int n : w.seen) ASSERT_EQ(n, 1) << "m_blocks " << m_blocks << " bh " << bh << " grid " << g;
          EXPECT_TRUE(w.done_stays_done) << "m_blocks " << m_blocks << " bh " << bh << " grid " << g;
        }
}

TEST(QueryBlockOrder, ConcurrentCtasShareFewHeads) {
  // B=8 H=16 S=2048 D=128 causal on 132 SMs: the CTAs of one step read about 132 / 8 pairs per head = 17
  // heads' K/V (17 MB), where longest-first-across-heads read all 128 (128 MB, over the 50 MB L2).
  const Walk causal = walk(16, 128, true, 132, 128, 128);
  for (const auto& heads : causal.step_heads) EXPECT_LE(static_cast<int>(heads.size()), ceil_div(132, 8) + 1);
  const Walk plain = walk(16, 128, false, 132, 128, 128);
  for (const auto& heads : plain.step_heads) EXPECT_LE(static_cast<int>(heads.size()), ceil_div(132, 16) + 1);
  // One block per CTA: any 132 consecutive blocks span at most ceil(132 / 16) + 1 heads.
  for (bool c : {false, true})
    for (long long first = 0; first + 132 <= 16 * 128; first += 7) {
      std::set<int> heads;
      for (long long i = first; i < first + 132; ++i) heads.insert(grid_query_block(i, 16, c).bh);
      EXPECT_LE(static_cast<int>(heads.size()), ceil_div(132, 16) + 1);
    }
}

TEST(QueryBlockOrder, CausalWorkIsBalanced) {
  // B=8 H=16 S=2048 and B=2 H=16 S=8192 (BLOCK_M = BLOCK_N = 128), B=32 H=12 S=512 with the
  // three-consumer tile (BLOCK_M 192, BLOCK_N 64: 3 blocks, an odd count), on 132 SMs.
  struct Case {
    int m_blocks, bh, bm, bn;
  };
  for (const Case c : {Case{16, 128, 128, 128}, Case{64, 32, 128, 128}, Case{3, 384, 192, 64}}) {
    const int grid = 132;
    const Walk w = walk(c.m_blocks, c.bh, true, grid, c.bm, c.bn);
    long long total = 0;
    for (long long x : w.work) total += x;
    const long long most = *std::max_element(w.work.begin(), w.work.end());
    const long long least = *std::min_element(w.work.begin(), w.work.end());
    // A pair of blocks is m_blocks + 1 key tiles (times bm / bn): every CTA's work is its number of pairs
    // times that, give or take the lone middle block of an odd m_blocks, so CTAs differ by at most one pair.
    const int pair_tiles = causal_tiles(c.m_blocks - 1, c.bm, c.bn) + causal_tiles(0, c.bm, c.bn);
    EXPECT_LE(most - least, pair_tiles) << "m_blocks " << c.m_blocks;
    const long long units = persistent_units(c.m_blocks, c.bh, true);
    const double rounds = static_cast<double>(units) / grid;
    // The busiest CTA is over the mean only by the partial last round.
    EXPECT_LE(static_cast<double>(most), static_cast<double>(total) / grid * std::ceil(rounds) / rounds + pair_tiles / 2.0)
        << "m_blocks " << c.m_blocks;
  }
}

TEST(QueryBlockOrder, CausalShortLastRoundGoesAsSingleBlocks) {
  // B=32 H=12 S=512 causal with 192-row blocks and 128-key tiles: 576 units on 132 SMs, 4 whole rounds and
  // 48 pairs. Split over 96 CTAs, the busiest CTA is over the mean by less than the longest block; left as
  // pairs, 48 CTAs would run a whole fifth pair (5 x 7 = 35 tiles against a mean of 28.2).
  const int m_blocks = 3, bh = 384, bm = 192, bn = 128, grid = 132;
  const long long units = persistent_units(m_blocks, bh, true);
  ASSERT_EQ(units % grid, 48);
  const Walk w = walk(m_blocks, bh, true, grid, bm, bn);
  for (int n : w.seen) ASSERT_EQ(n, 1);
  long long total = 0;
  for (long long x : w.work) total += x;
  const long long most = *std::max_element(w.work.begin(), w.work.end());
  EXPECT_LT(static_cast<double>(most), static_cast<double>(total) / grid + causal_tiles(m_blocks - 1, bm, bn));
}

TEST(QueryBlockOrder, CausalPairsOfUnequalWorkRotateOverTheCtas) {
  // B=32 H=12 S=512 causal with 192-row blocks and 128-key tiles on 132 SMs: a group of two heads is 3 units,
  // and 132 is a multiple of 3. The work of a block is the key tiles each of its 64-row warpgroups sees. From
  // the top (no row shift) that is 4, 8 and 8 for blocks 0, 1, 2 (the last block has 128 rows, so its third
  // warpgroup sees none): the pairs (2, 0) are 12 and the middle pair (1, 1) of two heads 16, and a walk that
  // hands a CTA the same kind of unit every round leaves a third of the CTAs 24 % over the mean; moving each
  // CTA by one unit a round, 10 %. With the blocks ending at the last row (causal_row_shift, what the
  // persistent kernel runs) 2, 7 and 11: pairs of 13 and middle pairs of 14, and the split last round holds
  // the groups' middle units (causal_split_round_unit), singles of 7, not the blocks of 11.
  const int m_blocks = 3, bh = 384, bm = 192, bn = 128, q_len = 512, grid = 132;
  auto wg_work = [&](int shift) {
    return [=](int m) {
      int tiles = 0;
      for (int r0 = m * bm - shift; r0 < (m + 1) * bm - shift; r0 += 64)
        if (r0 >= 0 && r0 < q_len) tiles += ceil_div(std::min(r0 + 64, q_len), bn);
      return tiles;
    };
  };
  auto busiest_over_mean = [&](int shift) {
    const Walk w = walk(m_blocks, bh, true, grid, bm, bn, wg_work(shift));
    for (int n : w.seen) EXPECT_EQ(n, 1);
    long long total = 0;
    for (long long x : w.work) total += x;
    return static_cast<double>(*std::max_element(w.work.begin(), w.work.end())) / (static_cast<double>(total) / grid);
  };
  ASSERT_EQ(wg_work(0)(0) + wg_work(0)(2), 12);
  ASSERT_EQ(2 * wg_work(0)(1), 16);
  EXPECT_LE(busiest_over_mean(0), 1.11);
  const int shift = causal_row_shift(q_len, bm, true);
  ASSERT_EQ(wg_work(shift)(0) + wg_work(shift)(2), 13);
  ASSERT_EQ(2 * wg_work(shift)(1), 14);
  EXPECT_LE(busiest_over_mean(shift), 1.05);
}

TEST(QueryBlockOrder, NonCausalShortLastBlocksAreSpreadOverTheCtas) {
  // q_len not a multiple of BLOCK_M: a head's last block is short. B=32 H=12 S=512 with 192-row blocks
  // (3 blocks, the last of 128 rows) and B=8 H=12 S=2048 (11 blocks), on 132 SMs, a multiple of both block
  // counts; and 5 blocks on 132 (not a multiple). Rows per CTA: the busiest CTA is over the mean by less
  // than half a block beyond the partial last round, and every CTA runs some full blocks.
  struct Case {
    int q_len, bm, bh;
  };
  for (const Case c : {Case{512, 192, 384}, Case{2048, 192, 96}, Case{900, 192, 400}}) {
    const int m_blocks = ceil_div(c.q_len, c.bm), grid = 132;
    std::vector<long long> rows(grid, 0);
    std::vector<int> full(grid, 0);
    for (int cta = 0; cta < grid; ++cta)
      for (int step = 0;; ++step) {
        const PersistentStep st = persistent_step(step, cta, grid, m_blocks, c.bh, false);
        if (st.step == WalkStep::done) break;
        const int r = std::min(c.bm, c.q_len - st.block.m_block * c.bm);
        rows[static_cast<std::size_t>(cta)] += r;
        full[static_cast<std::size_t>(cta)] += r == c.bm;
      }
    long long total = 0;
    for (long long x : rows) total += x;
    const long long units = static_cast<long long>(m_blocks) * c.bh;
    const double rounds = static_cast<double>(units) / grid;
    const long long most = *std::max_element(rows.begin(), rows.end());
    EXPECT_LT(static_cast<double>(most), static_cast<double>(total) / grid * std::ceil(rounds) / rounds + c.bm / 2)
        << "q_len " << c.q_len;
    EXPECT_GT(*std::min_element(full.begin(), full.end()), 0) << "q_len " << c.q_len;
  }
}

// The tail split (non-causal, every block n_tiles key tiles): every (block, key tile) runs exactly once for
// any grid, each CTA has at most two pieces, after its whole blocks; the pieces of a block come from the
// CTAs first_cta .. last_cta; each piece's slot is 2 cta + piece (the kernel's note), distinct, and the
// sequence the merge reads (first_slot, then the next CTAs' first slots); the last round's tiles are shared
// out evenly.
TEST(QueryBlockOrder, TailSplitRunsEveryKeyTileOnce) {
  struct Case {
    int m_blocks, bh, n_tiles;
  };
  int split_walks = 0, most_pieces = 0;
  for (const int min_gain : {2, kTailMinGain})
    for (const Case c : {Case{16, 128, 16}, Case{64, 32, 64}, Case{8, 15, 8}, Case{3, 7, 5}, Case{1, 1, 9},
                         Case{17, 2, 17}, Case{32, 2, 32}})
      for (int grid : {2, 3, 7, 60, 132, 1000}) {
        const long long units = static_cast<long long>(c.m_blocks) * c.bh;
        if (grid > units) continue;
        const TailSplit t = tail_split(grid, c.m_blocks, c.bh, c.n_tiles, min_gain);
        split_walks += t.rem > 0;
        std::vector<int> seen(static_cast<std::size_t>(units * c.n_tiles), 0);
        std::vector<std::vector<unsigned>> piece_ctas(t.rem);
        std::set<unsigned> slots;
        std::vector<int> tail_tiles(static_cast<std::size_t>(grid), 0);
        for (int cta = 0; cta < grid; ++cta) {
          int pieces = 0;
          for (int step = 0; step < units / grid + 4; ++step) {
            const PersistentStep st = persistent_step(step, cta, grid, c.m_blocks, c.bh, false, t);
            if (st.step == WalkStep::done) continue;
            ASSERT_EQ(st.step, WalkStep::run);
            const int b = st.tail >= 0 ? st.t_begin : 0, e = st.tail >= 0 ? st.t_end : c.n_tiles;
            ASSERT_LT(b, e);
            for (int k = b; k < e; ++k)
              ++seen[(static_cast<std::size_t>(st.block.bh) * c.m_blocks + st.block.m_block) * c.n_tiles + k];
            if (st.tail < 0) {
              EXPECT_EQ(pieces, 0) << "a whole block after a piece";
              continue;
            }
            ASSERT_LT(static_cast<unsigned>(st.tail), t.rem);
            EXPECT_EQ(st.piece, pieces);
            ++pieces;
            tail_tiles[static_cast<std::size_t>(cta)] += e - b;
            piece_ctas[static_cast<std::size_t>(st.tail)].push_back(static_cast<unsigned>(cta));
            const unsigned slot = t.slot(st.tail, cta, grid);
            EXPECT_EQ(slot, 2u * cta + st.piece);
            EXPECT_TRUE(slots.insert(slot).second) << "slot taken twice";
            EXPECT_LT(slot, 2u * grid);
          }
          EXPECT_LE(pieces, 2);
        }
        for (int n : seen) ASSERT_EQ(n, 1) << "m_blocks " << c.m_blocks << " bh " << c.bh << " grid " << grid;
        for (unsigned i = 0; i < t.rem; ++i) {
          const auto& ctas = piece_ctas[i];
          ASSERT_FALSE(ctas.empty());
          const unsigned first = t.first_cta(i, grid), last = t.last_cta(i, grid);
          EXPECT_EQ(*std::min_element(ctas.begin(), ctas.end()), first);
          EXPECT_EQ(*std::max_element(ctas.begin(), ctas.end()), last);
          EXPECT_EQ(ctas.size(), last - first + 1);
          const unsigned first_slot = t.slot(i, first, grid);
          for (unsigned k = 1; k < ctas.size(); ++k)  // the merge's sequence of slots
            EXPECT_EQ(t.slot(i, first + k, grid), (first_slot & ~1u) + 2 * k);
          most_pieces = std::max(most_pieces, static_cast<int>(ctas.size()));
        }
        if (t.rem > 0) {
          const int most = *std::max_element(tail_tiles.begin(), tail_tiles.end());
          EXPECT_EQ(most, static_cast<int>((t.tile_units + grid - 1) / grid));
          EXPECT_LE(most, c.n_tiles - min_gain);
        }
      }
  EXPECT_GE(split_walks, 12);
  EXPECT_GE(most_pieces, 7);  // 7 CTAs on 120 blocks of 8 tiles: the last block in 7 pieces
}

// Where the default threshold splits: B=2 H=16 S=8192 D=128 (2048 blocks of 128 rows on 132 SMs, 68 in the
// last round, 64 key tiles each, 33 per CTA when split); not B=8 H=16 S=2048 (16 key tiles, 9 a CTA: slower
// on an H200), nor B=32 H=12 S=512 D=64, nor where the rounds are whole.
TEST(QueryBlockOrder, TailSplitWhereTheLastRoundIsPartial) {
  const TailSplit s8192 = tail_split(132, 64, 32, 64);
  EXPECT_EQ(s8192.rem, 68u);
  EXPECT_EQ(s8192.rounds, 15u);
  EXPECT_EQ((s8192.tile_units + 131) / 132, 33u);
  EXPECT_EQ(tail_split(132, 16, 128, 16).rem, 0u);
  EXPECT_EQ(tail_split(132, 16, 128, 16, 2).rem, 68u);
  EXPECT_EQ(tail_split(132, 3, 384, 4).rem, 0u);
  EXPECT_EQ(tail_split(128, 64, 32, 64).rem, 0u);
  EXPECT_EQ(tail_split(132, 64, 32, 0).rem, 0u);
  // Without a split the walk is the plain one.
  for (int step = 0; step < 17; ++step)
    for (int cta : {0, 67, 68, 131}) {
      const PersistentStep a = persistent_step(step, cta, 132, 16, 128, false, tail_split(132, 16, 128, 16));
      const PersistentStep b = persistent_step(step, cta, 132, 16, 128, false);
      EXPECT_EQ(a.step, b.step);
      EXPECT_EQ(a.tail, -1);
      if (a.step == WalkStep::run) {
        EXPECT_EQ(a.block.bh * 16 + a.block.m_block, b.block.bh * 16 + b.block.m_block);
      }
    }
}

TEST(QueryBlockOrder, CausalBlocksEndAtTheLastRow) {
  // Block m of a persistent tile covers rows [m * bm - shift, (m + 1) * bm - shift): every row of [0, q_len)
  // in exactly one block; rows above 0 only as whole 64-row warpgroups of block 0, never all of it; fewer
  // than 64 rows past q_len. Not causal: no shift.
  for (int bm : {128, 192})
    for (int q_len : {1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 301, 320, 400, 512, 2048, 8191}) {
      const int m_blocks = ceil_div(q_len, bm);
      EXPECT_EQ(causal_row_shift(q_len, bm, false), 0);
      const int shift = causal_row_shift(q_len, bm, true);
      EXPECT_EQ(shift % 64, 0) << "bm " << bm << " q_len " << q_len;
      EXPECT_GE(shift, 0);
      EXPECT_LT(shift, bm) << "bm " << bm << " q_len " << q_len;
      EXPECT_LT(m_blocks * bm - shift - q_len, 64) << "bm " << bm << " q_len " << q_len;
      std::vector<int> seen(static_cast<std::size_t>(q_len), 0);
      for (int m = 0; m < m_blocks; ++m)
        for (int r = m * bm - shift; r < (m + 1) * bm - shift; ++r)
          if (r >= 0 && r < q_len) ++seen[static_cast<std::size_t>(r)];
      for (int n : seen) ASSERT_EQ(n, 1) << "bm " << bm << " q_len " << q_len;
    }
  // The issue-20 row B=32 H=12 S=512 causal, 192-row blocks, 128-key tiles: a block takes about as long as
  // its busiest warpgroup. From the top the warpgroups see (1, 1, 2), (2, 3, 3), (4, 4, none) tiles: 9 steps
  // a head; ending at the last row, (none, 1, 1), (2, 2, 3), (3, 4, 4): 8.
  auto steps = [](int shift) {
    const int q_len = 512, bm = 192, bn = 128;
    int total = 0;
    for (int m = 0; m < ceil_div(q_len, bm); ++m) {
      int most = 0;
      for (int r0 = m * bm - shift; r0 < (m + 1) * bm - shift; r0 += 64)
        if (r0 >= 0 && r0 < q_len) most = std::max(most, ceil_div(std::min(r0 + 64, q_len), bn));
      total += most;
    }
    return total;
  };
  EXPECT_EQ(steps(0), 9);
  EXPECT_EQ(steps(causal_row_shift(512, 192, true)), 8);
}

TEST(QueryBlockOrder, PersistentTileNamesAndJson) {
  FusedTile t;
  t.block_m = 128;
  t.block_n = 128;
  t.warps = 12;
  t.stages = 2;
  t.family = TileFamily::prefill_ws;
  EXPECT_EQ(t.name(), "m128n128w12s2ws");
  EXPECT_FALSE(t.to_json().contains("persistent"));
  t.family = TileFamily::prefill_wsp;
  EXPECT_EQ(t.name(), "m128n128w12s2wsp");
  const nlohmann::json j = t.to_json();
  EXPECT_EQ(j.value("persistent", false), true);
  EXPECT_EQ(j.value("name", std::string()), "m128n128w12s2wsp");
  EXPECT_TRUE(fused_tile_from_json(j, "test") == t);
  FusedTile plain = t;
  plain.family = TileFamily::prefill_ws;
  EXPECT_FALSE(plain == t);
  nlohmann::json old = plain.to_json();  // a cache written before the persistent tiles
  EXPECT_TRUE(fused_tile_from_json(old, "test") == plain);
}
