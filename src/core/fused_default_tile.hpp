// The problem-dependent part of fused's default plan (the rest is the kernel table's order: the first tile that
// can implement a problem). Three rules, measured on an H200 (docs/perf-notes.md):
// - A narrow sliding window at head_dim 64 (gpt-oss's 128) runs best on 64-key tiles with a five-stage ring, which
//   holds every key tile a 192-row item sees ((192 + window) / 64 = 5 at window 128), so the three consumer
//   warpgroups, each starting at its own rows' window, never wait on one another's stage releases. At window
//   128 it is 21% faster than the head_dim-64 default (m192n128w16s4wsp) at S=8192 and 20% at 32768; at 512
//   about even (1-1.5% faster); at 2048 19% slower, where the 128-key tiles' fewer, larger MMAs win (session 46).
// - Decode at head_dim 128 with more than one m16 slice of packed rows per KV head (speculative decode: 8 draft
//   tokens x GQA 4 = 32 rows) runs on the 64-key TMA tile (decode-ws): the 128-key tiles, the table's first at
//   128, hold twice the scores and probabilities a thread and ran 1.6-1.7x slower there (B=16, 8k keys: 0.2568
//   ms against 0.1516; at 16 rows they are 1-2% ahead; session 47).
// - Decode at head_dim 64 with more than one 32-row chunk a KV head (MQA: Falcon-7B's 71 heads, 64) runs on the
//   128-key TMA tile (decode-ws-n128): 1.11-1.44x decode-ws on Falcon-7B at B=16-64, 2k-8k keys, 1.03x at 64
//   MQA heads (session 47, H200, each with its own split count); at GQA 8 (gpt-oss, 8 rows) the two are within 2%.
#pragma once
#include <optional>

#include "core/fused_decode_plan.hpp"
#include "core/fused_tile.hpp"
#include "core/problem.hpp"

namespace ab {

inline constexpr std::int64_t kNarrowWindowMax = 512;  // the widest window the rule takes (keys)
inline constexpr std::int64_t kDecodeSliceRows = 16;   // packed query rows of one m16 slice

// The tile fused tries before the table's order for `p`, if any (it still has to be compiled and to take `p`).
inline std::optional<FusedTile> preferred_fused_tile(const Problem& p) {
  if (p.head_dim == 64 && p.window > 0 && p.window <= kNarrowWindowMax)
    return FusedTile::prefill_tile(192, 64, 16, 5, TileFamily::prefill_wsp);
  if (p.head_dim == 128 && fused_decode::takes_q_len(p.q_len) && fused_decode::rows_per_kv_head(p) > kDecodeSliceRows)
    return FusedTile::decode_tile(0, true);
  if (p.head_dim == 64 && fused_decode::takes_q_len(p.q_len) &&
      fused_decode::rows_per_kv_head(p) > fused_decode::max_rows_per_cta(p.head_dim))
    return FusedTile::decode_tile(0, true, 128);
  return std::nullopt;
}

}  // namespace ab
