// The persistent kernel's tail split, one consumer warp's end of a piece (fused_kernel_wsp.cuh): a block of
// the split last round runs as pieces of its key tiles on several CTAs (core/query_block_order.hpp:
// tail_split). Each piece's warp writes its partial (unnormalized O, row max, row sum) to its slot of the
// workspace (core/fused_tail_layout.hpp) and counts itself on the block's counter for that warp; the warp
// that counts last reads every piece's partial, its own included, in CTA order (so the result does not depend
// on which piece finished last) and writes the block's rows of O. Nothing waits on another CTA: the last to
// finish merges, so a grid that is not all resident cannot deadlock.
#pragma once
#include <cstdint>

#include "core/fused_tail_layout.hpp"
#include "fused_kernel.cuh"  // ex2, pack2

namespace ab::kernels::fused_detail {

// Where a piece's partial goes and which partials its block has, noted by the producer (ItemNote).
struct TailPiece {
  int block;       // the split block: its counters
  int slot;        // this piece's slot
  int first_slot;  // the block's first piece's slot; the others follow at the next CTAs' first slots
  int pieces;      // the block's pieces
};

template <int D, int BM, bool BF16>
struct TailMerge {
  static constexpr int DT = D / 8;
  static constexpr int LANE_FLOATS = fused_tail::lane_floats(D);
  static constexpr int WARPS = fused_tail::warps_of(BM);
  static_assert(LANE_FLOATS == DT * 4 + 4, "tail partial: O fragment, two row maxima, two row sums");
  static_assert(WARPS <= fused_tail::kMaxWarps, "tail merge: a counter per warp of the block");

  static __device__ __forceinline__ float* lane_slab(float* ws, int slot, int cw, int lane) {
    return ws + fused_tail::kCounters + (static_cast<long long>(slot) * WARPS + cw) * (32 * LANE_FLOATS) + lane;
  }

  // Warp `cw` (rows cw*16 .. of the block) ends its piece: its partial to its slot, then it counts itself on
  // the block's counter; the one that counts last merges every piece's partial in slot order and writes the
  // block's rows of O (o_warp: the warp's first row in O; q_left: the rows from there on below q_len).
  // Out of line, on the caller's copies of its registers (on its stack: passing the live arrays would take
  // their address): inlined into the item loop's epilogue, the merge cost every item of the split kernel 1 %
  // at S=8192 D=128 (H200, session 33, interleaved), though the key-tile loop kept its instruction count.
  static __device__ __noinline__ void finish(float* ws, TailPiece tp, int cw, int lane,
                                                const float (&acc_o)[DT][4], const float (&row_max)[2],
                                                const float (&row_sum)[2], float sl2, std::uint16_t* o_warp,
                                                int q_left) {
    float* mine = lane_slab(ws, tp.slot, cw, lane);
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) __stcg(mine + (dt * 4 + e) * 32, acc_o[dt][e]);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      __stcg(mine + (DT * 4 + h) * 32, row_max[h]);
      __stcg(mine + (DT * 4 + 2 + h) * 32, row_sum[h]);
    }
    __threadfence();  // every lane's partial before the warp is counted
    __syncwarp();
    int* counter = reinterpret_cast<int*>(ws) + tp.block * WARPS + cw;
    int before = 0;
    if (lane == 0) before = atomicAdd(counter, 1);
    before = __shfl_sync(0xffffffffu, before, 0);
    if (before != tp.pieces - 1) return;  // a piece still runs: it merges
    __threadfence();
    // Online over the pieces: each piece's whole slab loaded at once (one L2 round trip a piece), folded into
    // the running max, sum and O.
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, o[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[dt][e] = 0.f;
    for (int k = 0; k < tp.pieces; ++k) {
      const int slot = k == 0 ? tp.first_slot : (tp.first_slot & ~1) + 2 * k;
      const float* p = lane_slab(ws, slot, cw, lane);
      float x[LANE_FLOATS];
#pragma unroll
      for (int f = 0; f < LANE_FLOATS; ++f) x[f] = __ldcg(p + f * 32);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m_c = x[DT * 4 + h], mx = fmaxf(m[h], m_c);
        const float mu = mx == -INFINITY ? 0.f : mx;
        const float a = ex2((m[h] - mu) * sl2), b = ex2((m_c - mu) * sl2);  // 0 for a max still at -inf
        m[h] = mx;
        l[h] = l[h] * a + x[DT * 4 + 2 + h] * b;
#pragma unroll
        for (int dt = 0; dt < DT; ++dt)
#pragma unroll
          for (int e = 0; e < 2; ++e) o[dt][2 * h + e] = o[dt][2 * h + e] * a + x[dt * 4 + 2 * h + e] * b;
      }
    }
    const int gq = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = l[h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = sum > 0.f ? __fdividef(1.f, sum) : 0.f;
      const int row = gq + 8 * h;
      const bool keep = row < q_left;  // a predicate, not a branch: a lane-divergent path here serializes the
                                       // tile loop's wgmma (C7520)
#pragma unroll
      for (int dt = 0; dt < DT; ++dt)
        if (keep)
          *reinterpret_cast<std::uint32_t*>(o_warp + static_cast<long long>(row) * D + dt * 8 + tq * 2) =
              pack2<BF16>(o[dt][2 * h] * inv, o[dt][2 * h + 1] * inv);
    }
    if (lane == 0) *counter = 0;  // for the next launch
  }
};

}  // namespace ab::kernels::fused_detail
