// The split-KV decode path of `fused` (kernels/fused_decode.cu) as host arithmetic, no CUDA: which problems
// it takes, how many splits the heuristic picks, the bound on splits and the bytes of the split partials
// that the strategy allocates in setup. One definition each, shared by the kernel side, the strategy and
// the CPU tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/host_device.hpp"
#include "core/problem.hpp"
#include "core/sizes.hpp"

namespace ab::fused_decode {

inline constexpr std::int64_t kMaxQLen = 16;         // decode path: q_len <= 16 query tokens
inline constexpr std::int64_t kKeysPerTile = 64;     // keys a CTA loads per pipeline stage (4 warps x 16)
// The heuristic gives each split at least this many keys (two 64-key tiles): 256 kept short decode problems
// (1000-3000 keys, one MQA head) at 3-5 splits where 8-16 run 13-22% faster (session 47, H200).
inline constexpr std::int64_t kMinKeysPerSplit = 128;
inline constexpr std::int64_t kMaxSplits = 64;       // hard bound on splits (tuner and user included)
inline constexpr int kCtasPerSm = 2;                  // the kernel's design occupancy (head_dim <= 128)
// head_dim 256 (the cp.async kernel only): one CTA per SM (three stages of 64 K and V rows fill shared memory).
inline int ctas_per_sm(std::int64_t head_dim) { return head_dim > 128 ? 1 : kCtasPerSm; }
inline constexpr int kSearchSplits[] = {1, 2, 4, 8, 16, 32};  // explicit counts the tuner tries

inline bool takes_q_len(std::int64_t q_len) { return q_len >= 1 && q_len <= kMaxQLen; }

// The first key a split-KV decode of a sequence of `len` keys walks: 0, or with a sliding window (window > 0)
// the first query's first visible key (Problem::first_visible_key) rounded down to a whole tile, so that the
// splits cover only keys some query sees and start where a page box may (the kernels, fused_decode*.cuh).
AB_HOST_DEVICE inline std::int64_t window_base(std::int64_t len, std::int64_t q_len, std::int64_t window) {
  const std::int64_t first = window > 0 ? len - q_len - window : 0;
  return first > 0 ? first / kKeysPerTile * kKeysPerTile : 0;
}
// Keys the splits of a sequence of `len` keys cover (from window_base to its end).
inline std::int64_t walked_keys(std::int64_t len, std::int64_t q_len, std::int64_t window) {
  return len - window_base(len, q_len, window);
}
// The most keys any sequence of a problem whose longest has `seq_len` walks: what the splits are cut for.
inline std::int64_t walked_keys_bound(std::int64_t seq_len, std::int64_t q_len, std::int64_t window) {
  if (window <= 0 || window >= seq_len) return seq_len;  // (and no overflow for any window)
  return std::min(seq_len, window + q_len + kKeysPerTile - 1);
}

// Largest split count for a KV length of `seq_len` (the longest sequence): one CTA tile per split at least.
inline std::int64_t max_splits(std::int64_t seq_len) {
  const std::int64_t tiles = (std::max<std::int64_t>(seq_len, 1) + kKeysPerTile - 1) / kKeysPerTile;
  return std::min(kMaxSplits, tiles);
}

// Keys of each split (the last may be shorter or empty): a whole number of CTA tiles.
inline std::int64_t keys_per_split(std::int64_t seq_len, std::int64_t splits) {
  const std::int64_t per = (seq_len + splits - 1) / splits;
  return (per + kKeysPerTile - 1) / kKeysPerTile * kKeysPerTile;
}

// The split heuristic's model of one decode launch (time in microseconds). The CTAs are dispatched in
// grid order (split fastest, then KV head x row chunk, then sequence) onto `sms * ctas_per_sm` slots; the
// resident CTAs share the DRAM bandwidth equally, each capped by what its own loads in flight can move
// (tiles_in_flight tiles of the tile's block_n keys per loaded DRAM latency: a 128-key tile moves twice what
// a 64-key one does, so it needs half the CTAs to fill the bandwidth) and by its share of its SM's (the CTAs
// of the most loaded SM set the pace), so a CTA left alone at the end runs
// slower than the GPU could: that tail is what splitting long sequences removes. Each CTA pays a start (Q, pipeline fill), and
// more than one split pays the combine (partials written and read, one more launch).
// The constants were fitted (session 47) to H200 sweeps of every decode tile at 1-32 splits over 32 problems
// (docs/perf-log/2026-11-28-s47-decode-classes-h200.md; test_decode_split_regret holds the heuristic to them),
// each instance's own occupancy for the slots: the split the model picks runs within 1.7% of the fastest
// measured one on geometric mean, 13% at worst (3.0% and 26% before).
struct DecodeCostModel {
  double dram_bytes_per_us = 4.0e6;   // ~4 TB/s (H100/H200 HBM); only the ratios below matter
  double loaded_latency_us = 4.5;     // per tile in flight (a 64-key tile alone: ~14.6 GB/s a CTA)
  double cta_start_us = 3.0;          // Q load and pipeline fill before the first tile lands
  double combine_launch_us = 5.0;     // the combine kernel's launch and ramp
  double combine_per_split_us = 0.4;  // and its walk over each row's partials, per split
  int tiles_in_flight = 2;            // STAGES - 1 tiles of K and V per CTA
  // What one SM's CTAs move together at most (~1/132 of the DRAM bandwidth): a split count that puts two CTAs on
  // a few SMs and one on the rest leaves the doubled ones a tail. Session 48's H200 sweep: one sequence of 64k-256k
  // keys (8 CTAs a split) on 17-18 splits ran 1.06-1.10x slower than on 16 (128 CTAs, one a SM), which the model
  // without this cap picked.
  double sm_bytes_per_us = 3.0e4;
};

// What the model needs of a decode problem: per sequence its KV length, and per sequence the CTAs of a
// split (KV heads x row chunks) and the packed query rows each holds.
struct DecodeShape {
  std::vector<std::int64_t> lens;       // KV length of each sequence
  std::int64_t ctas_per_seq = 1;        // KV heads x row chunks
  std::int64_t rows_per_cta = 1;        // packed query rows per CTA (<= kMaxRowsPerCta)
  std::int64_t head_dim = 128;
  std::int64_t block_n = kKeysPerTile;  // keys of the tile's pipeline stage (64, or 128 for the -n128 tiles)
};

// Modeled launch time of `shape` with `splits` splits (keys_per_split of the longest sequence each).
inline double modeled_decode_us(const DecodeShape& shape, std::int64_t splits, int sms, int ctas_per_sm,
                                const DecodeCostModel& m = {}) {
  const std::int64_t longest = shape.lens.empty() ? 1 : *std::max_element(shape.lens.begin(), shape.lens.end());
  const std::int64_t kps = keys_per_split(std::max<std::int64_t>(longest, 1), splits);
  const double key_bytes = 4.0 * static_cast<double>(shape.head_dim);  // K and V rows, 16-bit
  const double slots = static_cast<double>(sms) * ctas_per_sm;
  const double tile_keys = static_cast<double>(std::max<std::int64_t>(shape.block_n, 1));
  const double cap = m.tiles_in_flight * tile_keys * key_bytes / m.loaded_latency_us;  // bytes/us per CTA
  const double start_bytes = m.cta_start_us * m.dram_bytes_per_us / slots;  // a start, as bytes at fair share
  // Fluid simulation: every resident CTA advances at the same rate, so a CTA is done when the shared
  // progress counter passes its start value plus its bytes (a min-heap of those finish values).
  std::vector<double> finish;  // heap (greater-first comparator: smallest on top)
  auto cmp = [](double a, double b) { return a > b; };
  double now_us = 0, progress = 0;
  std::int64_t partial_rows = 0;
  auto advance_one = [&] {  // run until the first resident CTA finishes, then retire it
    const double n = static_cast<double>(finish.size());
    const double most_on_one_sm = std::ceil(n / std::max(sms, 1));  // the block scheduler spreads CTAs over SMs
    const double rate = std::min({cap, m.dram_bytes_per_us / n, m.sm_bytes_per_us / most_on_one_sm});
    std::pop_heap(finish.begin(), finish.end(), cmp);
    now_us += (finish.back() - progress) / rate;
    progress = finish.back();
    finish.pop_back();
  };
  for (const std::int64_t len : shape.lens) {
    const std::int64_t pieces = std::max<std::int64_t>(1, (len + kps - 1) / kps);
    if (pieces > 1) partial_rows += pieces * shape.ctas_per_seq * shape.rows_per_cta;
    for (std::int64_t c = 0; c < shape.ctas_per_seq; ++c)
      for (std::int64_t s = 0; s < pieces; ++s) {
        const std::int64_t keys = std::min(kps, len - s * kps);
        if (static_cast<double>(finish.size()) >= slots) advance_one();
        finish.push_back(progress + start_bytes + static_cast<double>(std::max<std::int64_t>(keys, 0)) * key_bytes);
        std::push_heap(finish.begin(), finish.end(), cmp);
      }
  }
  while (!finish.empty()) advance_one();
  if (splits > 1) {
    const double partial_bytes = static_cast<double>(partial_rows) * (shape.head_dim + 2) * 4.0 * 2.0;
    now_us += m.combine_launch_us + m.combine_per_split_us * static_cast<double>(splits) +
              partial_bytes / m.dram_bytes_per_us;
  }
  return now_us;
}

// Splits for `shape` on `sms` multiprocessors of `ctas_per_sm` slots: the count with the least modeled time
// (the smallest on a tie within 1%), from 1 to max_splits of the longest sequence, each split keeping
// kMinKeysPerSplit keys of the longest. Counts whose CTAs exceed 32 waves (and those of 1 split) are not
// modeled: they are bandwidth-bound with no tail left to remove.
inline std::int64_t heuristic_splits(const DecodeShape& shape, int sms, int ctas_per_sm) {
  if (shape.lens.empty() || shape.ctas_per_seq < 1 || sms < 1 || ctas_per_sm < 1) return 1;
  const std::int64_t longest = *std::max_element(shape.lens.begin(), shape.lens.end());
  const std::int64_t by_keys = std::max<std::int64_t>(1, longest / kMinKeysPerSplit);
  const std::int64_t cap = std::max<std::int64_t>(1, std::min(max_splits(longest), by_keys));
  const double slots = static_cast<double>(sms) * ctas_per_sm;
  const double one_split_ctas = static_cast<double>(shape.lens.size()) * shape.ctas_per_seq;
  std::int64_t best = 1;
  double best_us = modeled_decode_us(shape, 1, sms, ctas_per_sm);
  for (std::int64_t s = 2; s <= cap; ++s) {
    if (one_split_ctas * s > std::max(32 * slots, one_split_ctas)) break;
    const double us = modeled_decode_us(shape, s, sms, ctas_per_sm);
    if (us < best_us * 0.99) {
      best_us = us;
      best = s;
    }
  }
  return best;
}

// The same for `work` CTAs per split (batch x KV heads x row chunks) of `seq_len` keys each and
// `rows_per_cta` packed query rows: what the kernel side uses when it has no per-sequence lengths on the
// host (equal lengths model the same as decode_shape's batch of them).
inline std::int64_t heuristic_splits(std::int64_t work, std::int64_t seq_len, int sms, int ctas_per_sm,
                                     std::int64_t head_dim = 128, std::int64_t rows_per_cta = 1,
                                     std::int64_t block_n = kKeysPerTile) {
  if (work < 1) return 1;
  DecodeShape shape;
  shape.lens.assign(1, std::max<std::int64_t>(seq_len, 1));
  shape.ctas_per_seq = work;
  shape.rows_per_cta = rows_per_cta;
  shape.head_dim = head_dim;
  shape.block_n = block_n;
  return heuristic_splits(shape, sms, ctas_per_sm);
}

// Query rows a CTA holds at most (2 m16 slices): the g query heads x q_len rows of one KV head are cut
// into chunks of this many.
// head_dim 256: one slice (16 rows), two would hold 256 accumulators a thread.
inline constexpr std::int64_t kMaxRowsPerCta = 32;
inline std::int64_t max_rows_per_cta(std::int64_t head_dim) { return head_dim > 128 ? 16 : kMaxRowsPerCta; }
inline std::int64_t rows_per_kv_head(const Problem& p) { return p.group() * p.q_len; }
inline std::int64_t row_chunks(const Problem& p) {
  const std::int64_t most = max_rows_per_cta(p.head_dim);
  return (rows_per_kv_head(p) + most - 1) / most;
}
// CTAs per split: batch x KV heads x row chunks.
inline std::int64_t work_per_split(const Problem& p) { return size_mul(p.batch, p.kv_heads, row_chunks(p)); }

// The model's view of `p` on a tile of `block_n` keys a stage: each sequence's own walked keys (its length, or
// with a window what the window leaves; the longest for all when not ragged).
inline DecodeShape decode_shape(const Problem& p, std::int64_t block_n = kKeysPerTile) {
  DecodeShape s;
  s.lens.resize(static_cast<std::size_t>(std::max<std::int64_t>(p.batch, 0)));
  for (std::int64_t b = 0; b < p.batch; ++b)
    s.lens[static_cast<std::size_t>(b)] = walked_keys(p.kv_len(b), p.q_len, p.window);
  s.ctas_per_seq = std::max<std::int64_t>(1, p.kv_heads * row_chunks(p));
  s.rows_per_cta = std::min(max_rows_per_cta(p.head_dim), std::max<std::int64_t>(1, rows_per_kv_head(p)));
  s.head_dim = p.head_dim;
  s.block_n = block_n;
  return s;
}
// Splits a decode run of `p` on a tile of `block_n` keys a stage uses for a requested count (0: the heuristic
// on `sms` multiprocessors of `resident` CTAs each, the compiled kernel's occupancy, or ctas_per_sm's design
// value when 0, from each sequence's own length). The occupancy matters: the TMA tiles at head_dim 64 with one
// m16 slice keep three CTAs a SM, and gpt-oss's B=64 decode (512 CTAs) then fills 1.3 waves on one split.
inline std::int64_t resolve_splits(const Problem& p, std::int64_t requested, int sms,
                                   std::int64_t block_n = kKeysPerTile, int resident = 0) {
  if (requested > 0) return requested;
  return heuristic_splits(decode_shape(p, block_n), sms, resident > 0 ? resident : ctas_per_sm(p.head_dim));
}

// Bytes of the split partials for `splits` splits: per query row and split, D fp32 accumulators and the
// (max, sum) pair. 0 for one split (the kernel writes O directly). Saturating (core/sizes.hpp).
inline std::int64_t partial_bytes(std::int64_t batch, std::int64_t heads, std::int64_t q_len,
                                  std::int64_t head_dim, std::int64_t splits) {
  if (splits <= 1) return 0;
  return size_mul(batch, heads, q_len, splits, size_add(head_dim, 2), 4);
}
// The most the partials of `p` can need: at the bound on splits (or the requested count when given).
inline std::int64_t workspace_bound(const Problem& p, std::int64_t requested) {
  const std::int64_t s = requested > 0 ? requested : max_splits(walked_keys_bound(p.seq_len, p.q_len, p.window));
  return partial_bytes(p.batch, p.heads, p.q_len, p.head_dim_v, s);  // partial outputs: O's width
}

}  // namespace ab::fused_decode
