// The split-KV decode path of `fused` (kernels/fused_decode.cu) as host arithmetic, no CUDA: which problems
// it takes, how many splits the heuristic picks, the bound on splits and the bytes of the split partials
// that the strategy allocates in setup. One definition each, shared by the kernel side, the strategy and
// the CPU tests.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/problem.hpp"
#include "core/sizes.hpp"

namespace ab::fused_decode {

inline constexpr std::int64_t kMaxQLen = 16;         // decode path: q_len <= 16 query tokens
inline constexpr std::int64_t kKeysPerTile = 64;     // keys a CTA loads per pipeline stage (4 warps x 16)
inline constexpr std::int64_t kMinKeysPerSplit = 256; // the heuristic gives each split at least this many keys
inline constexpr std::int64_t kMaxSplits = 64;       // hard bound on splits (tuner and user included)
inline constexpr int kCtasPerSm = 2;                  // the kernel's design occupancy (head_dim <= 128)
inline constexpr int kSearchSplits[] = {1, 2, 4, 8, 16, 32};  // explicit counts the tuner tries

inline bool takes_q_len(std::int64_t q_len) { return q_len >= 1 && q_len <= kMaxQLen; }

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

// Splits that fill the GPU: `work` CTAs per split (batch x KV heads x row chunks), `sms` multiprocessors
// of `ctas_per_sm` slots each. The smallest count whose CTAs fill >= 85% of the last wave and at least
// one whole wave; if none does, the count with the fullest waves. Bounded by max_splits and by
// kMinKeysPerSplit keys per split.
inline std::int64_t heuristic_splits(std::int64_t work, std::int64_t seq_len, int sms, int ctas_per_sm) {
  if (work < 1 || sms < 1 || ctas_per_sm < 1) return 1;
  const std::int64_t slots = static_cast<std::int64_t>(sms) * ctas_per_sm;
  const std::int64_t by_keys = std::max<std::int64_t>(1, seq_len / kMinKeysPerSplit);
  const std::int64_t cap = std::max<std::int64_t>(1, std::min(max_splits(seq_len), by_keys));
  std::int64_t best = 1;
  double best_eff = -1;
  for (std::int64_t s = 1; s <= cap; ++s) {
    const std::int64_t ctas = work * s;
    const std::int64_t waves = (ctas + slots - 1) / slots;
    const double eff = static_cast<double>(ctas) / static_cast<double>(waves * slots);
    if (ctas >= slots && eff >= 0.85) return s;
    if (eff > best_eff + 1e-9) {
      best_eff = eff;
      best = s;
    }
  }
  return best;
}

// Query rows a CTA holds at most (2 m16 slices): the g query heads x q_len rows of one KV head are cut
// into chunks of this many.
inline constexpr std::int64_t kMaxRowsPerCta = 32;
inline std::int64_t rows_per_kv_head(const Problem& p) { return p.group() * p.q_len; }
inline std::int64_t row_chunks(const Problem& p) {
  return (rows_per_kv_head(p) + kMaxRowsPerCta - 1) / kMaxRowsPerCta;
}
// CTAs per split: batch x KV heads x row chunks.
inline std::int64_t work_per_split(const Problem& p) { return size_mul(p.batch, p.kv_heads, row_chunks(p)); }

// Splits a decode run of `p` uses for a requested count (0: the heuristic on `sms` multiprocessors).
inline std::int64_t resolve_splits(const Problem& p, std::int64_t requested, int sms) {
  if (requested > 0) return requested;
  return heuristic_splits(work_per_split(p), p.seq_len, sms, kCtasPerSm);
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
  const std::int64_t s = requested > 0 ? requested : max_splits(p.seq_len);
  return partial_bytes(p.batch, p.heads, p.q_len, p.head_dim, s);
}

}  // namespace ab::fused_decode
