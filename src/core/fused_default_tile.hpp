// The problem-dependent part of fused's default plan (the rest is the kernel table's order: the first tile that
// can implement a problem). One rule so far, measured on an H200 (session 46, docs/perf-notes.md): a narrow
// sliding window at head_dim 64 (gpt-oss's 128) runs best on 64-key tiles with a five-stage ring, which holds
// every key tile a 192-row item sees ((192 + window) / 64 = 5 at window 128), so the three consumer
// warpgroups, each starting at its own rows' window, never wait on one another's stage releases. At window
// 128 it is 21% faster than the head_dim-64 default (m192n128w16s4wsp) at S=8192 and 20% at 32768; at 512
// about even (1-1.5% faster); at 2048 19% slower, where the 128-key tiles' fewer, larger MMAs win.
#pragma once
#include <optional>

#include "core/fused_tile.hpp"
#include "core/problem.hpp"

namespace ab {

inline constexpr std::int64_t kNarrowWindowMax = 512;  // the widest window the rule takes (keys)

// The tile fused tries before the table's order for `p`, if any (it still has to be compiled and to take `p`).
inline std::optional<FusedTile> preferred_fused_tile(const Problem& p) {
  if (p.head_dim == 64 && p.window > 0 && p.window <= kNarrowWindowMax)
    return FusedTile::prefill_tile(192, 64, 16, 5, TileFamily::prefill_wsp);
  return std::nullopt;
}

}  // namespace ab
