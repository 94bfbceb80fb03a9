// The online softmax of the mma.sync kernels, one definition: fused_kernel.cuh's prefill and the two decode
// kernels (fused_decode.cuh, fused_decode_tma.cuh) call it on a warp's S accumulators of one key tile, then pack
// P into the A fragments of P V.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "mma_sync_ops.cuh"  // ex2, pack2

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

// The variants' steps of the mma.sync kernels (the decode kernels' and the prefill kernel's VAR instances):
// mma_cap_scores soft-caps S (a raw score s becomes cap_out * tanh(s * cap_in)); mma_add_sink puts a head's sink
// logit (log2 units) into a finished row's denominator: with the row's max m (log2 units, -inf for a row that saw
// no key) and its sum l, l gains 2^(sink - top) at the common scale top = max(m, sink), and the factor the row's
// accumulator takes is returned (0 for a row that saw no key: its output is 0).
template <int MT, int NT>
__device__ __forceinline__ void mma_cap_scores(float (&acc_s)[MT][NT][4], float cap_in, float cap_out) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = soft_cap(acc_s[mt][nt][e], cap_in, cap_out);
}

__device__ __forceinline__ float mma_add_sink(float m, float& l, float sink_log2) {
  const float top = fmaxf(m, sink_log2);
  const float sc = m == -INFINITY ? 0.f : ex2(m - top);
  l = l * sc + ex2(sink_log2 - top);
  return sc;
}

// P (the softmax's output in S's accumulators) as the A operand of O += P V, rounded to fp16/bf16 pairs:
// mma_pack_p_frag makes the fragment of 16 keys from the two n8 tiles of S that hold them (s0: keys 0-7, s1:
// 8-15); mma_pack_p makes every fragment of a warp's tile at once (pa[mt][j]: keys 16j .. 16j + 15 of slice mt).
template <bool BF16>
__device__ __forceinline__ void mma_pack_p_frag(const float (&s0)[4], const float (&s1)[4], std::uint32_t (&a)[4]) {
  a[0] = pack2<BF16>(s0[0], s0[1]);
  a[1] = pack2<BF16>(s0[2], s0[3]);
  a[2] = pack2<BF16>(s1[0], s1[1]);
  a[3] = pack2<BF16>(s1[2], s1[3]);
}

template <int MT, int NT, bool BF16>
__device__ __forceinline__ void mma_pack_p(const float (&acc_s)[MT][NT][4], std::uint32_t (&pa)[MT][NT / 2][4]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < NT / 2; ++j) mma_pack_p_frag<BF16>(acc_s[mt][2 * j], acc_s[mt][2 * j + 1], pa[mt][j]);
}

}  // namespace ab::kernels::fused_detail
