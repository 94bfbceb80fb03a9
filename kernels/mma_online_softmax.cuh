// The online softmax of the mma.sync kernels, one definition: fused_kernel.cuh's prefill and the two decode
// kernels (fused_decode.cuh, fused_decode_tma.cuh) call it on a warp's S accumulators of one key tile.
#pragma once
#include <cuda_runtime.h>

#include "mma_sync_ops.cuh"  // ex2

namespace ab::kernels::fused_detail {

// S of a warp: MT m16 slices by NT n8 tiles of mma.sync m16n8k16 accumulators; a thread holds rows g and g + 8
// of each slice (r = 0, 1: elements 2r and 2r + 1 of a tile), whose other columns sit in the 3 lanes of its quad.
// In exp2 units (sl2 = scale * log2 e): the new row max over the quad, P = 2^(S*sl2 - max*sl2) in place of S
// (0 for masked, -inf, scores; a row with no key seen yet keeps max -inf and uses 0), the running sum
// l = l * alpha + sum P and the O accumulator rescaled by alpha = 2^(old max*sl2 - new max*sl2) (0 at first).
// Each thread's l is its own columns' part; the quad's parts are added once, at the end.
template <int MT, int NT, int DT>
__device__ __forceinline__ void mma_softmax_step(float (&acc_s)[MT][NT][4], float (&row_max)[MT][2],
                                                 float (&row_sum)[MT][2], float (&acc_o)[MT][DT][4], float sl2) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[mt][r];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mx = fmaxf(mx, fmaxf(acc_s[mt][nt][2 * r], acc_s[mt][nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float mb = (mx == -INFINITY ? 0.f : mx) * sl2;
      const float alpha = ex2(row_max[mt][r] * sl2 - mb);  // 0 when the old max was -inf
      row_max[mt][r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pv = ex2(fmaf(acc_s[mt][nt][2 * r + e], sl2, -mb));
          acc_s[mt][nt][2 * r + e] = pv;
          sum += pv;
        }
      row_sum[mt][r] = row_sum[mt][r] * alpha + sum;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        acc_o[mt][dt][2 * r] *= alpha;
        acc_o[mt][dt][2 * r + 1] *= alpha;
      }
    }
}

}  // namespace ab::kernels::fused_detail
