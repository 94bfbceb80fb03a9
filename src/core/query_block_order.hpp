// The order in which the prefill fused kernels take their (batch*head, query block) work: which block a
// CTA of a one-block-per-CTA grid runs (kernels/fused_kernel*.cuh), and which blocks a CTA of the persistent
// grid (kernels/fused_kernel_wsp.cuh) walks. Host and device code (no CUDA headers), so the CPU tests check
// the order the kernels run (tests/cpu/test_query_block_order.cpp).
//
// Two goals: the CTAs running at one time share few heads' K/V (so it stays in L2), and every SM gets the
// same work under a causal mask, where query block m has about m+1 key tiles.
//   - L2: blocks go head by head. At B=8 H=16 S=2048 D=128 causal, the former order (each query block across
//     all 128 heads, longest first) had the 132 resident CTAs read 128 heads' K/V (1 MB each, 128 MB against
//     the H100's 50 MB L2): every block read its keys from DRAM, 1.1 GB, which alone takes 0.34 ms at
//     3.35 TB/s; the causal row ran at 0.89x the non-causal time for half the FLOPs.
//   - Balance, one block per CTA: the hardware hands blocks out as SMs free up (a greedy list schedule), so a
//     head's blocks go longest first and the grid ends on the last head's shortest blocks.
//   - Balance, persistent: a static walk (the prefill launch has no workspace to reset a counter in before
//     every launch). Causal blocks go in pairs, m_blocks-1-j then j, of m_blocks+1 key tiles together
//     (bottom-right causal and q_len < seq_len shift every block alike; an odd m_blocks pairs the middle
//     blocks of two heads), and in round r CTA c takes pair r*G + (c + r) % G: every CTA gets about the same
//     work but for the partial last round (3 % over the mean at B=8 H=16 S=2048 on 132 SMs), whose pairs are
//     split into single blocks over twice as many CTAs when they are at most G / 2; that round then holds the
//     innermost unit of each of the last groups, whose blocks are the shortest. Non-causal: CTA c takes block
//     c, c+G, ..., each head's blocks in an order rotated by the head. Without the rotation a grid that is
//     a multiple of m_blocks (132 SMs and 3 blocks of 192 rows at S=512) hands CTA c block c % m_blocks at
//     every step, and where q_len is not a multiple of BLOCK_M the CTAs holding the short last block idle
//     while the others run only full ones (9 full blocks against a balanced 8 at B=32 H=12 S=512).
//   - The tail split (non-causal, every block with the same key tiles, a workspace for the partials): where
//     the last round is partial, every block is the same work and the CTAs without a block of that round
//     idle for one block's time (3.6-4 % of the span at D=128 on an H200, session 25). There the last round's
//     key tiles go out over the whole grid instead, CTA c taking tiles [c U / G, (c+1) U / G) of the round's
//     U: pieces of one or two blocks, whose partial results the last piece of a block to finish merges
//     (kernels/fused_tail_merge.cuh).
#pragma once

#include "core/host_device.hpp"

namespace ab {

struct QueryBlock {
  int bh;       // batch * heads + head
  int m_block;  // query block
};

// Block and unit indices are below 2^32 (fused_can_implement refuses m_blocks * batch * heads >= 2^31), so
// the divisions here are 32-bit ones: a 64-bit division is a call to a slow routine in device code.

// One-block-per-CTA grids: the block of CTA `i` (of m_blocks * bh_count).
AB_HOST_DEVICE inline QueryBlock grid_query_block(long long i, int m_blocks, bool causal) {
  const unsigned ui = static_cast<unsigned>(i), mb = static_cast<unsigned>(m_blocks);
  QueryBlock q;
  q.bh = static_cast<int>(ui / mb);
  const int r = static_cast<int>(ui - static_cast<unsigned>(q.bh) * mb);
  q.m_block = causal ? m_blocks - 1 - r : r;
  return q;
}

// Persistent grids. Causal units are pairs of blocks, in groups of two heads: each head's blocks
// m_blocks-1-j and j (j < m_blocks / 2), then, for an odd m_blocks, the two heads' middle blocks together;
// a last, odd head's middle block is a unit alone. Not causal: single blocks.
struct CausalUnits {
  int half;           // pairs per head: m_blocks / 2
  int middle;         // 1 when m_blocks is odd (a middle block per head), else 0
  int per_group;      // units per group of two heads: 2 * half + middle
};

AB_HOST_DEVICE inline CausalUnits causal_units(int m_blocks) {
  CausalUnits c;
  c.half = m_blocks / 2;
  c.middle = m_blocks & 1;
  c.per_group = 2 * c.half + c.middle;
  return c;
}

// The units the CTAs of a persistent grid take in turn.
AB_HOST_DEVICE inline long long persistent_units(int m_blocks, int bh_count, bool causal) {
  if (!causal) return static_cast<long long>(m_blocks) * bh_count;
  const CausalUnits c = causal_units(m_blocks);
  return static_cast<long long>(bh_count / 2) * c.per_group + (bh_count & 1) * (c.half + c.middle);
}

// Where a persistent tile's query blocks start (kernels/fused_kernel_wsp.cuh): block m's first row is
// m * block_m - causal_row_shift(...). Causal, with q_len not a multiple of block_m, the blocks end at the
// last query row (within 64 rows) and the first block starts above row 0 by whole 64-row warpgroups, which
// have no rows and skip their work. So the short block is the first, with the fewest key tiles, and not the
// last, with the most: at B=32 H=12 S=512 with 192-row blocks and 128-key tiles the warpgroups of blocks
// 0, 1, 2 see (1, 1, 2), (2, 3, 3), (4, 4, none) tiles from the top, (none, 1, 1), (2, 2, 3), (3, 4, 4) from
// the bottom: a block takes about as long as its busiest warpgroup, 9 tile steps a head against 8. Not
// causal, every block has the same keys: no shift.
AB_HOST_DEVICE inline int causal_row_shift(int q_len, int block_m, bool causal) {
  if (!causal || q_len <= 0) return 0;
  const int pad = (block_m - q_len % block_m) % block_m;  // rows of the last block past q_len
  return pad / 64 * 64;
}

enum class WalkStep { run, skip, done };

struct PersistentStep {
  WalkStep step;
  QueryBlock block;  // when step == run
  // A piece of the tail split: key tiles [t_begin, t_end) of the block, which is block `tail` (0 .. rem-1) of
  // the split round; `piece` is 0 or 1, the CTA's first or second piece. tail -1: the whole block.
  int t_begin = 0, t_end = 0, tail = -1, piece = 0;
};

// The tail split of a non-causal persistent walk (rem 0: none). Split when the last round is partial and a
// CTA's share of its key tiles is at least min_gain tiles under a whole block's n_tiles. The default,
// kTailMinGain, from one H200 (session 33, 132 CTAs, 68 blocks in the last round, fp16, interleaved): at
// S=2048 with 128-key tiles (16 a block, shares of 9) the split was 2.3 % slower, at S=8192 (64, shares of
// 33) 1.7 % faster. Writing and merging the partials costs 7-10 us; a partial round runs faster per block
// than a full one (a 16th block took 21.6 us against a mean of 27.1), so the idle it removes is worth less
// than its share of the span.
inline constexpr int kTailMinGain = 24;
struct TailSplit {
  unsigned rounds = 0;      // whole rounds: units / grid
  unsigned rem = 0;         // blocks of the last round, which is split (0: no split)
  unsigned n_tiles = 0;     // key tiles per block
  unsigned tile_units = 0;  // rem * n_tiles: the key tiles shared out over the grid
  // CTA c's range of the round's key tiles: [lo(c), lo(c + 1)).
  AB_HOST_DEVICE unsigned lo(unsigned c, unsigned grid) const { return c * tile_units / grid; }
  // The CTA whose range holds key tile x of the round.
  AB_HOST_DEVICE unsigned cta_of(unsigned x, unsigned grid) const { return ((x + 1) * grid - 1) / tile_units; }
  // The CTAs that run pieces of split block i: first_cta(i) .. last_cta(i).
  AB_HOST_DEVICE unsigned first_cta(unsigned i, unsigned grid) const { return cta_of(i * n_tiles, grid); }
  AB_HOST_DEVICE unsigned last_cta(unsigned i, unsigned grid) const { return cta_of((i + 1) * n_tiles - 1, grid); }
  // The partials slot of CTA c's piece of split block i: two per CTA (a range spans at most two blocks: a
  // CTA's share is under a block's tiles). The first CTA of a block may hold it as its second piece; every
  // later one as its first: the slots of block i are slot(i, first), 2 (first + 1), ..., 2 last.
  AB_HOST_DEVICE unsigned slot(unsigned i, unsigned c, unsigned grid) const {
    return 2 * c + (i - lo(c, grid) / n_tiles);
  }
};

// No split (rem 0) where n_tiles is under min_gain + 1, the last round is whole, the round has fewer key
// tiles than the grid has CTAs, or the products c * tile_units would reach 2^31 (the divisions are 32-bit
// ones: a 64-bit division is a call to a slow routine in device code, and the producer walks this at every
// step).
AB_HOST_DEVICE inline TailSplit tail_split(int grid, int m_blocks, int bh_count, int n_tiles,
                                           int min_gain = kTailMinGain) {
  TailSplit t;
  if (min_gain < 1) min_gain = 1;
  if (n_tiles < min_gain + 1 || grid < 2) return t;
  const unsigned g = static_cast<unsigned>(grid);
  const unsigned units = static_cast<unsigned>(m_blocks) * static_cast<unsigned>(bh_count);
  const unsigned rounds = units / g, rem = units - rounds * g;
  if (rem == 0) return t;
  const long long tile_units = static_cast<long long>(rem) * n_tiles;
  if (tile_units < grid || tile_units * (grid + 1) >= (1ll << 31)) return t;
  const unsigned share = (static_cast<unsigned>(tile_units) + g - 1) / g;  // the most key tiles a CTA gets
  if (static_cast<unsigned>(n_tiles) < share + static_cast<unsigned>(min_gain)) return t;
  t.rounds = rounds;
  t.rem = rem;
  t.n_tiles = static_cast<unsigned>(n_tiles);
  t.tile_units = static_cast<unsigned>(tile_units);
  return t;
}

// The unit at position p of the causal walk when its last round is split into single blocks (below): that
// round runs the innermost unit of each of the last `rem` groups (the group's last unit: the two heads' middle
// blocks, or the pair nearest the middle, whose longer block is the shortest of the group's), and the others
// keep their order before it. With blocks that end at the last row (causal_row_shift) B=32 H=12 S=512 on
// 192-row blocks has blocks of (none, 1, 1), (2, 2, 3) and (3, 4, 4) warpgroup key tiles: a split last round
// of the groups' last units in order puts the (3, 4, 4) blocks in it, a fifth block of 11 warpgroup tiles
// after 4 units of 13-14 on a third of the CTAs; of their middle units, one of 7.
AB_HOST_DEVICE inline unsigned causal_split_round_unit(unsigned p, unsigned units, unsigned rem, unsigned per_group,
                                                       unsigned groups) {
  const unsigned first = (groups - rem) * per_group;  // the units before the first group with one moved
  if (p < first) return p;
  if (p >= units - rem) return (groups - rem + (p - (units - rem))) * per_group + per_group - 1;
  const unsigned q = p - first, kept = per_group - 1;  // the moved groups' other units, in order
  return (groups - rem + q / kept) * per_group + q % kept;
}

// Step `step` of CTA `cta` of a persistent grid of `grid` CTAs: the block it runs, `skip` (the empty second
// half of a lone middle block: go on to the next step), or `done` (no block in this or any later step).
// CTA c takes unit c, c + grid, c + 2 grid, ... (not causal) or one unit of each round of grid units, moving
// by one each round (causal: below); causal units in two steps, the longer block first (but for a short
// last round: below). t: the tail split of this walk (tail_split for the grid; non-causal only; rem 0: no
// split), its pieces then coming after the CTA's whole blocks, at most two.
AB_HOST_DEVICE inline PersistentStep persistent_step(int step, int cta, int grid, int m_blocks, int bh_count,
                                                     bool causal, const TailSplit& t = TailSplit{}) {
  PersistentStep s{WalkStep::done, {0, 0}};
  const long long units = persistent_units(m_blocks, bh_count, causal);
  if (!causal) {
    long long u = static_cast<long long>(step) * grid + cta;
    if (t.rem > 0 && static_cast<unsigned>(step) >= t.rounds) {
      const unsigned piece = static_cast<unsigned>(step) - t.rounds, g = static_cast<unsigned>(grid);
      const unsigned c = static_cast<unsigned>(cta);
      const unsigned lo = t.lo(c, g), hi = t.lo(c + 1, g);
      const unsigned i = lo / t.n_tiles + piece;
      if (piece > 1 || lo == hi || i * t.n_tiles >= hi) return s;
      const unsigned b0 = i * t.n_tiles;
      s.t_begin = static_cast<int>((lo > b0 ? lo : b0) - b0);
      s.t_end = static_cast<int>((hi < b0 + t.n_tiles ? hi : b0 + t.n_tiles) - b0);
      s.tail = static_cast<int>(i);
      s.piece = static_cast<int>(piece);
      u = static_cast<long long>(t.rounds) * grid + i;
    }
    if (u >= units) return s;
    s.step = WalkStep::run;
    s.block = grid_query_block(u, m_blocks, false);
    // Head h runs its blocks from h % m_blocks on (a permutation of them, so each still runs once).
    const unsigned mb = static_cast<unsigned>(m_blocks);
    unsigned m = static_cast<unsigned>(s.block.m_block) + static_cast<unsigned>(s.block.bh) % mb;
    if (m >= mb) m -= mb;
    s.block.m_block = static_cast<int>(m);
    return s;
  }
  // The partial last round, when it has at most grid / 2 pairs, goes as single blocks: CTA c < rem runs the
  // longer block of the round's pair c, CTA rem + c its shorter one, one step each (a whole pair on rem CTAs
  // would leave the others idle for a pair's time: 5 pairs against a mean of 4.36 at B=32 H=12 S=512 with
  // 192-row blocks).
  const unsigned g = static_cast<unsigned>(grid), rounds = static_cast<unsigned>(units) / g;
  const unsigned rem = static_cast<unsigned>(units) - rounds * g, ci = static_cast<unsigned>(cta);
  // Round r hands unit r * grid + (cta + r) % grid to CTA cta: the units of a round are the same (the heads
  // running at one time too), but a CTA's unit moves by one each round. Without that, a grid that is a
  // multiple of the units per group of two heads hands a CTA the same kind of unit every round: at
  // B=32 H=12 S=512 with 192-row blocks (3 units per group, 132 = 44 x 3) a third of the CTAs ran only the
  // middle blocks' pairs, 16 key tiles of warpgroup work against 12 for the others' pairs (the last block
  // has 128 rows: its third warpgroup idles).
  const unsigned round = static_cast<unsigned>(step / 2);
  unsigned slot = ci + round;
  while (slot >= g) slot -= g;  // (ci + round) % g: round / g passes, none while rounds stay under the grid
  long long u = static_cast<long long>(round) * grid + slot;
  bool second = (step & 1) != 0;
  if (rem > 0 && 2 * rem <= g && round >= rounds) {
    if (static_cast<unsigned>(step) != 2 * rounds || ci >= 2 * rem) return s;
    u = static_cast<long long>(rounds) * grid + (ci < rem ? ci : ci - rem);
    second = ci >= rem;
  }
  if (u >= units) return s;
  const CausalUnits c = causal_units(m_blocks);
  const unsigned per_group = static_cast<unsigned>(c.per_group), groups = static_cast<unsigned>(bh_count / 2);
  unsigned uu = static_cast<unsigned>(u);
  if (rem > 0 && 2 * rem <= g && per_group >= 2 && (bh_count & 1) == 0 && rem <= groups)
    uu = causal_split_round_unit(uu, static_cast<unsigned>(units), rem, per_group, groups);
  const int group = static_cast<int>(uu / per_group);
  const int r = static_cast<int>(uu - static_cast<unsigned>(group) * per_group);
  const int head0 = 2 * group;
  const bool lone = head0 + 1 >= bh_count;  // the last group of an odd head count has one head
  s.step = WalkStep::run;
  if (r < (lone ? 1 : 2) * c.half) {  // a pair of one head: its longer block, then its shorter
    const int j = r % c.half;
    s.block = QueryBlock{head0 + r / c.half, second ? j : m_blocks - 1 - j};
    return s;
  }
  // The middle blocks of the group's two heads, or of a last, odd head alone.
  if (second && lone) {
    s.step = WalkStep::skip;
    return s;
  }
  s.block = QueryBlock{head0 + (second ? 1 : 0), c.half};
  return s;
}

}  // namespace ab
