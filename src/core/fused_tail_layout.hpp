// The workspace of the persistent fused kernel's tail split (core/query_block_order.hpp: tail_split): first
// a counter per (split block, consumer warp), kCounters of them whatever the grid, then two slots of partial
// results per CTA (a CTA's share of the split round spans at most two blocks). A slot holds, per consumer
// warp of 16 query rows, each lane's unnormalized O fragment (head_dim / 2 floats) and its two rows' running
// max and sum (2 + 2), lane-major. The counters must be zero before the first launch; the merging warp sets
// its counter back to zero. They sit where no launch's partials reach, so launches of other tiles or grids on
// one workspace leave them at zero too. Host and device code, no CUDA headers: the layout and its size.
#pragma once
#include <cstdint>

#include "core/query_block_order.hpp"  // AB_HOST_DEVICE

namespace ab::fused_tail {

// The largest grid the split runs on (a persistent grid is one CTA per SM): larger grids do not split.
inline constexpr int kGridBound = 256;
// Counters: a split block is one of the last round's, fewer than the grid's CTAs; at most 16 warps a block.
inline constexpr int kMaxWarps = 16;
inline constexpr std::int64_t kCounters = static_cast<std::int64_t>(kGridBound) * kMaxWarps;

AB_HOST_DEVICE constexpr int lane_floats(int head_dim) { return head_dim / 2 + 4; }
AB_HOST_DEVICE constexpr int warps_of(int block_m) { return block_m / 16; }
// Floats of one slot.
AB_HOST_DEVICE constexpr std::int64_t slot_floats(int block_m, int head_dim) {
  return static_cast<std::int64_t>(warps_of(block_m)) * 32 * lane_floats(head_dim);
}
// Bytes the split needs on a grid of `grid` CTAs (at most kGridBound: no overflow): the counters, then the
// partials. 0 for a larger grid (no split).
AB_HOST_DEVICE constexpr std::int64_t workspace_bytes(int grid, int block_m, int head_dim) {
  return grid < 1 || grid > kGridBound || block_m < 16 || block_m > 16 * kMaxWarps || head_dim < 2
             ? 0
             : kCounters * 4 + 2 * static_cast<std::int64_t>(grid) * slot_floats(block_m, head_dim) * 4;
}

// Enough for any persistent tile at `head_dim` on any grid the split runs on (the tallest block, 192 rows): the
// developer tools' workspace, allocated before a tile is picked.
AB_HOST_DEVICE constexpr std::int64_t any_tile_workspace_bytes(int head_dim) {
  return workspace_bytes(kGridBound, 192, head_dim);
}

}  // namespace ab::fused_tail
