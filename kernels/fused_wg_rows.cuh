// The per-warp row work the Hopper fused kernels share (through fused_wg_step.cuh, and the epilogue directly):
// the mask and online softmax of one S tile into the P fragments of the next P V, the O rescale, and the
// epilogue (O / l into a swizzled shared-memory staging tile, then 16-byte stores or the kernel's TMA store).
// A thread holds rows g and g + 8 of its warp's 16 (the wgmma m64 accumulator layout, as mma.sync with one m16
// slice).
#pragma once
#include <type_traits>

#include "fused_kernel.cuh"

namespace ab::kernels::fused_detail {

// Byte offset of 16-byte chunk c of row r in a 128-byte-swizzled tile of `rows` rows (64-column blocks
// rows*128 bytes apart; chunk c of row r lands at chunk c ^ (r % 8)): the layout TMA's 128-byte swizzle
// writes and the wgmma descriptors read.
__device__ __forceinline__ std::uint32_t sw_off(int rows, int r, int c) {
  return static_cast<std::uint32_t>(((c >> 3) * rows + r) * 128 + (((c & 7) ^ (r & 7)) << 4));
}

// Where this thread's rows lie and which keys they see (causal bottom-right, per-sequence KV length).
struct WgRowGeom {
  int warp_row0;  // first of the warp's 16 query rows (0-based among q_len)
  int g, tq;      // row within the slice (and +8), column pair within an n8 tile
  int kv_len, diag;
  bool causal;
};
// The same with the variants (WgRows<..., VAR>): the sliding window (a row sees no key before row + diag - window;
// 0: none) and the soft-cap (a raw score s becomes cap_out * tanh(s * cap_in); cap_in 0: none).
struct WgVarGeom : WgRowGeom {
  int window;
  float cap_in, cap_out;
};

// VAR: the rows of the instances that apply the variants (their geometry WgVarGeom); the others keep their code.
template <int BN, int D, bool BF16, bool VAR = false>
struct WgRows {
  using Geom = std::conditional_t<VAR, WgVarGeom, WgRowGeom>;
  static constexpr int NT = BN / 8, KN = BN / 16, DT = D / 8, CPR = D / 8;

  // The causal mask as bits at head_dim 64: this thread's masked elements of one row (bit 2 nt + e: column
  // nt * 8 + e past its first, masked where at or after lim), so that an element costs a select on a predicate
  // (R2P moves 7 bits at once) instead of a comparison and a select (a diagonal 128-key tile: 124 instructions
  // against 134). On an H200 (session 29) 0.4-0.5 % faster on the causal head_dim-64 rows; at head_dim 128 level to
  // 0.6 % slower, and without causal masking (one bound for both rows) the comparisons are fewer.
  static constexpr bool MASK_BITS = D == 64;
  using MaskBits = std::conditional_t<(2 * NT > 32), unsigned long long, std::uint32_t>;
  static __device__ __forceinline__ MaskBits masked_bits(int lim) {
    constexpr MaskBits even = static_cast<MaskBits>(0x5555555555555555ull), odd = even << 1;
    constexpr int W = 2 * NT;  // bits in use
    // e = 0: masked from n8 tile ceil(lim / 8) on; e = 1: from ceil((lim - 1) / 8) (arithmetic shifts: floors)
    const int k0 = min(max((lim + 7) >> 3, 0), NT), k1 = min(max((lim + 6) >> 3, 0), NT);
    const MaskBits m0 = k0 < NT ? even << (2 * k0) : MaskBits(0);
    const MaskBits m1 = k1 < NT ? odd << (2 * k1) : MaskBits(0);
    return (m0 | m1) & (W >= 8 * static_cast<int>(sizeof(MaskBits)) ? ~MaskBits(0) : ((MaskBits(1) << W) - 1));
  }

  // Masks S_j (keys n0 ..) where needed, folds it into the running max and sum, and packs the
  // probabilities into pa (the A fragments of P_j V_j). alpha: the factor O must be rescaled by.
  static __device__ __forceinline__ void softmax(float (&acc_s)[NT][4], std::uint32_t (&pa)[KN][4],
                                                 float (&row_max)[2], float (&row_sum)[2], float (&alpha)[2],
                                                 int n0, const Geom& r, float sl2) {
    softmax_exp(acc_s, row_max, row_sum, alpha, n0, r, sl2);
    pack(acc_s, pa);
  }
  // The same without the packing: the probabilities stay in acc_s (fp32).
  static __device__ __forceinline__ void softmax_exp(float (&acc_s)[NT][4], float (&row_max)[2],
                                                     float (&row_sum)[2], float (&alpha)[2], int n0,
                                                     const Geom& r, float sl2) {
    mask_tile(acc_s, n0, r);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Four independent partial maxima / sums per row: short dependency chains (two warps per
      // scheduler leave little else to hide them).
      float m4[4] = {row_max[h], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) m4[nt & 3] = fmaxf(m4[nt & 3], fmaxf(acc_s[nt][2 * h], acc_s[nt][2 * h + 1]));
      float mx = fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_use = (mx == -INFINITY) ? 0.f : mx;
      const float mb = m_use * sl2;
      alpha[h] = ex2(row_max[h] * sl2 - mb);  // 0 while the old max is -inf
      row_max[h] = mx;
      float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pv = ex2(fmaf(acc_s[nt][2 * h + e], sl2, -mb));
          acc_s[nt][2 * h + e] = pv;
          s4[nt & 3] += pv;
        }
      row_sum[h] = row_sum[h] * alpha[h] + ((s4[0] + s4[1]) + (s4[2] + s4[3]));
    }
  }
  // Masks S (keys n0 ..) where needed: key_masked(col, row) as one bound per row (keys from min(kv_len, row + diag
  // + 1) on are masked when causal, from kv_len on otherwise), counted from this thread's first column, so each
  // element is one comparison with a constant (at head_dim 64 causal, a select on a bit of masked_bits).
  // VAR: the soft-cap first (every score), then the window's lower bound with the upper one (the tiles that hold a
  // key before some row's window start are masked too; the plain comparisons, not the mask bits).
  static __device__ __forceinline__ void mask_tile(float (&acc_s)[NT][4], int n0, const Geom& r) {
    bool needs = tile_needs_mask(n0, BN, r.warp_row0, r.kv_len, r.diag, r.causal);
    if constexpr (VAR) {
      if (r.cap_in > 0.f) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[nt][e] = soft_cap(acc_s[nt][e], r.cap_in, r.cap_out);
      }
      needs = needs || (r.window > 0 && n0 < r.warp_row0 + 15 + r.diag - r.window);
    }
    if (needs) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = r.warp_row0 + r.g + h * 8;
        const int end = r.causal ? min(r.kv_len, row + r.diag + 1) : r.kv_len;
        const int lim = end - (n0 + r.tq * 2);
        if constexpr (VAR) {
          // Columns [lo, lim) of this thread's first are visible (lo: the window's start, or none below).
          const int lo = r.window > 0 ? row + r.diag - r.window - (n0 + r.tq * 2) : -BN;
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (nt * 8 + e >= lim || nt * 8 + e < lo) acc_s[nt][2 * h + e] = -INFINITY;
        } else if (MASK_BITS && r.causal) {
          const MaskBits m = masked_bits(lim);
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if ((m >> (2 * nt + e)) & 1u) acc_s[nt][2 * h + e] = -INFINITY;
        } else {
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (nt * 8 + e >= lim) acc_s[nt][2 * h + e] = -INFINITY;
        }
      }
    }
  }
  // The speculative base (fused_wg_step.cuh: SPEC_BASE): the exponentials on the rows' base so far (row_max: the
  // maximum they were last rebased to; finite after a block's first tile for every row that sees a key, since
  // that tile holds its first key), so that they do not wait for this tile's maximum. Returns whether the warp
  // must rebase (a row's maximum rose by more than 2^8 in p); mx: each row's maximum in this tile, sum: the sum
  // of its p on the old base.
  static __device__ __forceinline__ float base_of(float m, float sl2) { return m == -INFINITY ? 0.f : m * sl2; }
  static __device__ __forceinline__ bool softmax_exp_spec(float (&acc_s)[NT][4], const float (&row_max)[2],
                                                          float (&mx)[2], float (&sum)[2], int n0,
                                                          const Geom& r, float sl2) {
    mask_tile(acc_s, n0, r);
    float mb_old[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mb_old[h] = base_of(row_max[h], sl2);  // a row with no key so far: its p are 0
      float m4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) m4[nt & 3] = fmaxf(m4[nt & 3], fmaxf(acc_s[nt][2 * h], acc_s[nt][2 * h + 1]));
      float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pv = ex2(fmaf(acc_s[nt][2 * h + e], sl2, -mb_old[h]));
          acc_s[nt][2 * h + e] = pv;
          s4[nt & 3] += pv;
        }
      float m = fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3]));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      mx[h] = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
      sum[h] = (s4[0] + s4[1]) + (s4[2] + s4[3]);
    }
    return __any_sync(0xffffffffu, mx[0] * sl2 > mb_old[0] + 8.f || mx[1] * sl2 > mb_old[1] + 8.f);
  }
  // Whether a p of the speculative pass may have overflowed (2^128): a row's maximum rose by 2^120 or more.
  static __device__ __forceinline__ bool base_overflowed(const float (&mx)[2], const float (&row_max)[2], float sl2) {
    return __any_sync(0xffffffffu, mx[0] * sl2 - base_of(row_max[0], sl2) >= 120.f ||
                                       mx[1] * sl2 - base_of(row_max[1], sl2) >= 120.f);
  }
  // The rebase: each row to its maximum so far; O, this tile's p and the sums scaled by the factor.
  static __device__ __forceinline__ void rebase(float (&acc_o)[DT][4], float (&acc_s)[NT][4], float (&row_max)[2],
                                                float (&row_sum)[2], const float (&mx)[2], const float (&sum)[2],
                                                float sl2) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float m_new = fmaxf(mx[h], row_max[h]);
      const float a = m_new == -INFINITY ? 1.f : ex2(base_of(row_max[h], sl2) - m_new * sl2);
      row_max[h] = m_new;
      row_sum[h] = (row_sum[h] + sum[h]) * a;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        acc_s[nt][2 * h] *= a;
        acc_s[nt][2 * h + 1] *= a;
      }
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        acc_o[dt][2 * h] *= a;
        acc_o[dt][2 * h + 1] *= a;
      }
    }
  }
  // The probabilities in acc_s as the A fragments of a P V.
  static __device__ __forceinline__ void pack(const float (&acc_s)[NT][4], std::uint32_t (&pa)[KN][4]) {
#pragma unroll
    for (int kk = 0; kk < KN; ++kk) {
      pa[kk][0] = pack2<BF16>(acc_s[2 * kk][0], acc_s[2 * kk][1]);
      pa[kk][1] = pack2<BF16>(acc_s[2 * kk][2], acc_s[2 * kk][3]);
      pa[kk][2] = pack2<BF16>(acc_s[2 * kk + 1][0], acc_s[2 * kk + 1][1]);
      pa[kk][3] = pack2<BF16>(acc_s[2 * kk + 1][2], acc_s[2 * kk + 1][3]);
    }
  }

  // Whether O must be rescaled: not when alpha is 1 for every row of the warp (exact either way, and once a
  // row's maximum settles it is exactly 1).
  static __device__ __forceinline__ bool o_needs_rescale(const float (&alpha)[2]) {
    return __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f);
  }
  // O *= alpha.
  static __device__ __forceinline__ void rescale(float (&acc_o)[DT][4], const float (&alpha)[2]) {
#pragma unroll
    for (int dt = 0; dt < DT; ++dt) {
      acc_o[dt][0] *= alpha[0];
      acc_o[dt][1] *= alpha[0];
      acc_o[dt][2] *= alpha[1];
      acc_o[dt][3] *= alpha[1];
    }
  }
  // O *= alpha where needed, then P_j becomes the P of the next P V.
  static __device__ __forceinline__ void rescale_and_shift(float (&acc_o)[DT][4], const float (&alpha)[2],
                                                           std::uint32_t (&pa_prev)[KN][4],
                                                           const std::uint32_t (&pa_cur)[KN][4]) {
    if (o_needs_rescale(alpha)) rescale(acc_o, alpha);
#pragma unroll
    for (int kk = 0; kk < KN; ++kk)
#pragma unroll
      for (int e = 0; e < 4; ++e) pa_prev[kk][e] = pa_cur[kk][e];
  }

  // A row's sum over its quad (each thread holds its own columns' part).
  static __device__ __forceinline__ float quad_sum(float l) {
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    return l;
  }
  // Row h (0: g, 1: g + 8) of the warp's 16 rows times inv into `stage`.
  template <int BM>
  static __device__ __forceinline__ void stage_row(const float (&acc_o)[DT][4], int h, float inv, unsigned char* stage,
                                                   int lrow0, const WgRowGeom& r) {
    const int lr = lrow0 + r.g + 8 * h;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
      *reinterpret_cast<std::uint32_t*>(stage + sw_off(BM, lr, dt) + r.tq * 4) =
          pack2<BF16>(acc_o[dt][2 * h] * inv, acc_o[dt][2 * h + 1] * inv);
  }
  // O / l of the warp's 16 rows into rows lrow0 .. +15 of `stage` (a swizzled tile of BM rows, 64-column blocks
  // BM * 128 bytes apart, that only this warp touches now: the layout a TMA store of 16-row boxes reads). A row
  // that saw no key (l = 0) is staged as zeros.
  template <int BM>
  static __device__ __forceinline__ void stage_rows(const float (&acc_o)[DT][4], const float (&row_sum)[2],
                                                    unsigned char* stage, int lrow0, const WgRowGeom& r) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(row_sum[h]);
      stage_row<BM>(acc_o, h, l > 0.f ? __fdividef(1.f, l) : 0.f, stage, lrow0, r);  // l <= the key count
    }
  }
  // The same with a sink logit in every row's denominator (VAR; sink2 in log2 units, the rows' maxima row_max in
  // raw units): l gains 2^(sink2 - m) at the common scale max(m, sink2); a row that saw no key is staged as zeros.
  template <int BM>
  static __device__ __forceinline__ void stage_rows_sink(const float (&acc_o)[DT][4], const float (&row_sum)[2],
                                                         const float (&row_max)[2], float sink2, float sl2,
                                                         unsigned char* stage, int lrow0, const WgRowGeom& r) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = quad_sum(row_sum[h]);
      const float m = row_max[h] == -INFINITY ? -INFINITY : row_max[h] * sl2;
      const float top = fmaxf(m, sink2);
      const float sc = m == -INFINITY ? 0.f : ex2(m - top);
      l = l * sc + ex2(sink2 - top);
      stage_row<BM>(acc_o, h, l > 0.f ? __fdividef(sc, l) : 0.f, stage, lrow0, r);
    }
  }
  // The rows of a kernel's epilogue: with the head's sink (`head` of p.sinks) where p has one (VAR), else plain.
  template <int BM, class P>
  static __device__ __forceinline__ void stage_rows_of(const P& p, int head, const float (&acc_o)[DT][4],
                                                       const float (&row_sum)[2], const float (&row_max)[2], float sl2,
                                                       unsigned char* stage, int lrow0, const WgRowGeom& r) {
    if constexpr (VAR) {
      if (p.sinks) {
        stage_rows_sink<BM>(acc_o, row_sum, row_max, __ldg(p.sinks + head) * 1.4426950408889634f, sl2, stage, lrow0, r);
        return;
      }
    }
    stage_rows<BM>(acc_o, row_sum, stage, lrow0, r);
  }
  // The warp's 16 rows staged as above, then copy_rows.
  template <int BM>
  static __device__ __forceinline__ void store(const float (&acc_o)[DT][4], const float (&row_sum)[2],
                                               unsigned char* stage, int lrow0, const WgRowGeom& r, int q_len,
                                               std::uint16_t* o_head, int lane) {
    __syncwarp();
    stage_rows<BM>(acc_o, row_sum, stage, lrow0, r);
    __syncwarp();
    copy_rows<BM>(stage, lrow0, r, q_len, o_head, lane);
  }
  // The warp's 16 staged rows: 16-byte stores of those below q_len to o_head (row 0 of this (batch, head) in O).
  template <int BM>
  static __device__ __forceinline__ void copy_rows(const unsigned char* stage, int lrow0, const WgRowGeom& r,
                                                   int q_len, std::uint16_t* o_head, int lane) {
#pragma unroll
    for (int i = 0; i < (16 * CPR) / 32; ++i) {
      const int c = lane + i * 32;
      const int row = c / CPR;
      const int ch = c % CPR;
      const int q = r.warp_row0 + row;
      if (q < q_len) {
        const uint4 val = *reinterpret_cast<const uint4*>(stage + sw_off(BM, lrow0 + row, ch));
        *reinterpret_cast<uint4*>(o_head + static_cast<std::int64_t>(q) * D + ch * 8) = val;
      }
    }
  }
};

}  // namespace ab::kernels::fused_detail
