// The tile schedulers of the warp-specialized Hopper kernels (fused_kernel_ws.cuh, fused_kernel_wsp.cuh): which
// work items (a query block of one batch*head, or with the tail split a piece of one) a CTA runs, as types, as
// FlashAttention-3's kernels take theirs. The order itself is core/query_block_order.hpp's (host and device
// code, checked by the CPU tests); the grid each launches is the host's (fused_ws_launch.cuh).
//   OneBlockPerCta      the ws kernel: CTA i runs query block i of grid_query_block's order, the grid all of
//                       them (causal: longest blocks first).
//   PersistentWalk      the wsp kernel: a grid of the CTAs that fit at once, each walking persistent_step's
//                       static order (causal: pairs of blocks); with the tail split (TailSplit, p.tail) a
//                       partial last round shared out by key tiles.
#pragma once
#include "core/query_block_order.hpp"  // grid_query_block, persistent_step
#include "fused_kernel.cuh"            // KParams

namespace ab::kernels::fused_detail {

struct OneBlockPerCta {
  // The CTA's one query block.
  __device__ __forceinline__ static QueryBlock block(const KParams& p) {
    return grid_query_block(blockIdx.x, p.m_blocks, p.causal != 0);
  }
  // The grid: every query block of every batch*head.
  static long long grid(const KParams& p) { return static_cast<long long>(p.m_blocks) * p.batch * p.heads; }
};

struct PersistentWalk {
  int cta, grid, bh_count;
  // Step `step` of this CTA's walk: an item to run, a step to skip, or the end. The kernel loops over the steps
  // itself, as FlashAttention-3's kernels loop over their scheduler's work tiles (a loop inside this type, around a
  // lambda of the kernel's item, moved ptxas's schedule of the wsp kernel: 18 of 24 instances' SASS changed).
  __device__ __forceinline__ PersistentStep step(const KParams& p, int step) const {
    return persistent_step(step, cta, grid, p.m_blocks, bh_count, p.causal != 0, p.tail);  // p.tail: the launch's split
  }
  // The work units the walk shares out (causal pairs of blocks, else blocks): a grid needs no more CTAs.
  static long long units(const KParams& p) {
    return persistent_units(p.m_blocks, static_cast<int>(static_cast<long long>(p.batch) * p.heads), p.causal != 0);
  }
};

}  // namespace ab::kernels::fused_detail
