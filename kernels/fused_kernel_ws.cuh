// The warp-specialized Hopper (sm_90a) fused attention forward (tiles named "...ws"): one producer
// warpgroup feeds two consumer warpgroups through a shared-memory ring. Included by
// kernels/fused_attention_ws.cu only.
//
// CTA = 3 warpgroups, BLOCK_M = 128 query rows (64 per consumer warpgroup).
//   producer (warpgroup 0): gives up registers (setmaxnreg.dec), and one thread issues every load as a
//     TMA tensor copy (cp.async.bulk.tensor, 128-byte swizzle, the layout the wgmma descriptors read):
//     Q once, then K_t and V_t for each KV tile t into stage t % STAGES of two rings (K and V), each
//     stage with a full barrier (arrive.expect_tx by the producer, completed by the copy's bytes) and an
//     empty barrier (one arrive per consumer thread). Rows past the sequence are zero-filled by the copy
//     engine (the tensor map is [B*H][S][D], so a tile never reads the next head's rows).
//   consumers (warpgroups 1, 2): take the registers (setmaxnreg.inc) and run the loop of the wgmma
//     kernel (fused_kernel_wg.cuh): S_j = Q K_j^T and O += P_{j-1} V_{j-1} issued back to back, softmax
//     of S_j while P_{j-1} V_{j-1} runs. They wait only on the full barrier of the stage they read and
//     release K_j as soon as S_j has landed and V_{j-1} once its product has: no CTA-wide barrier after
//     the barrier initialisation.
// Contiguous K/V, kv_heads = heads, q_len = seq_len only (fused_can_implement refuses the rest).
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: the encode function comes from the runtime's entry point)

#include "fused_kernel_wg.cuh"
#include "tensor_map.cuh"  // encode_rows_map: [B*H][S][D] maps, 128-byte swizzle

namespace ab::kernels::fused_detail {

template <int D_, int BN_, int ST_>
struct WsCfg {
  static constexpr int D = D_, BN = BN_, STAGES = ST_;
  static constexpr int CONSUMERS = 2;  // consumer warpgroups
  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int BM = CONSUMERS * 64;
  static constexpr int NT = BN / 8, DT = D / 8, KD = D / 16, KN = BN / 16, CPR = D / 8;
  static constexpr int ATOMS = D / 64;  // 64-column (128-byte) blocks of a row: one TMA box each
  static constexpr int Q_BYTES = BM * D * 2;
  static constexpr int TILE_BYTES = BN * D * 2;
  static constexpr int BARRIERS = 1 + 4 * STAGES;  // Q, then full/empty of K and of V per stage
  static constexpr int SMEM = 1024 /*alignment slack*/ + Q_BYTES + 2 * STAGES * TILE_BYTES + BARRIERS * 8;
  static constexpr int PRODUCER_REGS = 24, CONSUMER_REGS = 240;  // 128*24 + 256*240 <= 64K registers

  static_assert(D % 64 == 0 && D <= 256, "ws kernel: head_dim a multiple of 64, at most 256");
  static_assert(BN % 16 == 0 && BN <= 256, "ws kernel: BLOCK_N a multiple of 16, at most 256 (TMA box)");
  static_assert(STAGES >= 2, "ws kernel: at least two stages");
};

#ifdef AB_FUSED_WGMMA
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase of parity `parity` of the barrier has completed (the loop inside the asm: no
// branch in the C++ control flow around the wgmma issue).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// One TMA box (64 columns x box rows of one (batch, head)) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap& map, int col, int row, int bh,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(col), "r"(row), "r"(bh), "r"(bar)
      : "memory");
}
template <int N>
__device__ __forceinline__ void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
#endif

template <class C, bool BF16>
__global__ void __launch_bounds__(C::THREADS, 1)
    fused_attention_fwd_ws(const KParams p, const __grid_constant__ CUtensorMap tm_q,
                           const __grid_constant__ CUtensorMap tm_k, const __grid_constant__ CUtensorMap tm_v) {
#ifdef AB_FUSED_WGMMA
  constexpr int D = C::D, BM = C::BM, BN = C::BN, ST = C::STAGES;
  constexpr int NT = C::NT, DT = C::DT, KD = C::KD, KN = C::KN, CPR = C::CPR;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  unsigned char* sQ = smem;
  const std::uint32_t sQ_a = smem_u32(sQ);
  const std::uint32_t sK_a = sQ_a + C::Q_BYTES;            // ST slots
  const std::uint32_t sV_a = sK_a + ST * C::TILE_BYTES;    // ST slots
  const std::uint32_t bar_a = sV_a + ST * C::TILE_BYTES;   // barriers, 8 bytes each
  const std::uint32_t bar_q = bar_a;
  auto full_k = [&](int s) { return bar_a + 8u * (1 + s); };
  auto empty_k = [&](int s) { return bar_a + 8u * (1 + ST + s); };
  auto full_v = [&](int s) { return bar_a + 8u * (1 + 2 * ST + s); };
  auto empty_v = [&](int s) { return bar_a + 8u * (1 + 3 * ST + s); };

  const int tid = threadIdx.x;
  const int warp = __shfl_sync(0xffffffffu, tid >> 5, 0);
  const int lane = tid & 31;
  const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
  const int S = p.seq_len;
  const int bh_count = p.batch * p.heads;

  int m_block, bh;
  if (p.causal) {  // longest query blocks first
    bh = blockIdx.x % bh_count;
    m_block = p.m_blocks - 1 - static_cast<int>(blockIdx.x) / bh_count;
  } else {
    m_block = blockIdx.x % p.m_blocks;
    bh = blockIdx.x / p.m_blocks;
  }
  const int q_row0 = m_block * BM;
  const std::int64_t bh_rows = static_cast<std::int64_t>(bh) * S;
  const int kv_end = p.causal ? min(S, q_row0 + BM) : S;
  const int n_tiles = (kv_end + BN - 1) / BN;

  if (tid == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < ST; ++s) {
      mbar_init(full_k(s), 1);
      mbar_init(full_v(s), 1);
      mbar_init(empty_k(s), C::CONSUMERS * 128);  // every consumer thread
      mbar_init(empty_v(s), C::CONSUMERS * 128);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();  // the only CTA-wide barrier: the barriers exist before anyone waits on them

  if (wg == 0) {
    // ---- producer ----
    regs_dec<C::PRODUCER_REGS>();
    if (warp == 0 && lane == 0) {
      mbar_expect_tx(bar_q, C::Q_BYTES);
#pragma unroll
      for (int a = 0; a < C::ATOMS; ++a) tma_load_3d(sQ_a + a * BM * 128, tm_q, a * 64, q_row0, bh, bar_q);
      for (int t = 0; t < n_tiles; ++t) {
        const int s = t % ST;
        const std::uint32_t free_parity = ((t / ST) & 1) ^ 1;  // round 0 passes at once
        mbar_wait(empty_k(s), free_parity);
        mbar_expect_tx(full_k(s), C::TILE_BYTES);
#pragma unroll
        for (int a = 0; a < C::ATOMS; ++a)
          tma_load_3d(sK_a + s * C::TILE_BYTES + a * BN * 128, tm_k, a * 64, t * BN, bh, full_k(s));
        mbar_wait(empty_v(s), free_parity);
        mbar_expect_tx(full_v(s), C::TILE_BYTES);
#pragma unroll
        for (int a = 0; a < C::ATOMS; ++a)
          tma_load_3d(sV_a + s * C::TILE_BYTES + a * BN * 128, tm_v, a * 64, t * BN, bh, full_v(s));
      }
    }
  } else {
    // ---- consumers ----
    regs_inc<C::CONSUMER_REGS>();
    const int cw = warp - 4;  // warp index among the consumers: rows cw*16 .. +15 of the CTA tile
    const int g = lane >> 2, tq = lane & 3;
    const int warp_row0 = q_row0 + cw * 16;
    const float sl2 = p.scale_log2;

    float acc_o[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[dt][e] = 0.f;
    float acc_s[NT][4];
    std::uint32_t pa_prev[KN][4], pa_cur[KN][4];
#pragma unroll
    for (int kk = 0; kk < KN; ++kk)
#pragma unroll
      for (int e = 0; e < 4; ++e) pa_prev[kk][e] = 0u;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

    const std::uint64_t dq = sw128_desc(sQ_a + (wg - 1) * 64 * 128, 16, 1024);
    const std::uint64_t dk = sw128_desc(sK_a, 16, 1024);
    const std::uint64_t dv = sw128_desc(sV_a, BN * 128, 1024);
    std::uint64_t desc_a[KD], desc_b[KD], desc_v[KN];
    auto make_s_descs = [&](int s) {
      const std::uint64_t kb = dk + static_cast<std::uint64_t>((s * C::TILE_BYTES) >> 4);
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        desc_a[kk] = dq + static_cast<std::uint64_t>(((kk >> 2) * BM * 128 + (kk & 3) * 32) >> 4);
        desc_b[kk] = kb + static_cast<std::uint64_t>(((kk >> 2) * BN * 128 + (kk & 3) * 32) >> 4);
        asm volatile("" : "+l"(desc_a[kk]), "+l"(desc_b[kk]));
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[nt][e] = 0.f;
    };
    auto make_v_descs = [&](int s) {
      const std::uint64_t vb = dv + static_cast<std::uint64_t>((s * C::TILE_BYTES) >> 4);
#pragma unroll
      for (int kk = 0; kk < KN; ++kk) {
        desc_v[kk] = vb + static_cast<std::uint64_t>((kk * 16 * 128) >> 4);
        asm volatile("" : "+l"(desc_v[kk]));
      }
    };
    auto issue_s = [&]() {
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) Wgmma<BN, BF16>::ss(acc_s, desc_a[kk], desc_b[kk]);
      wg_commit();
    };
    auto issue_pv = [&]() {
#pragma unroll
      for (int kk = 0; kk < KN; ++kk) Wgmma<D, BF16>::rs(acc_o, pa_prev[kk], desc_v[kk]);
      wg_commit();
    };
    auto softmax = [&](int j, float (&alpha)[2]) {
      const int n0 = j * BN;
      const bool need_mask = (n0 + BN > S) || (p.causal && n0 + BN - 1 > warp_row0);
      if (need_mask) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + nt * 8 + tq * 2 + (e & 1);
            const int row = warp_row0 + g + (e >> 1) * 8;
            if (col >= S || (p.causal && col > row)) acc_s[nt][e] = -INFINITY;
          }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float m4[4] = {row_max[r], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) m4[nt & 3] = fmaxf(m4[nt & 3], fmaxf(acc_s[nt][2 * r], acc_s[nt][2 * r + 1]));
        float mx = fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_use = (mx == -INFINITY) ? 0.f : mx;
        const float mb = m_use * sl2;
        alpha[r] = ex2(row_max[r] * sl2 - mb);
        row_max[r] = mx;
        float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float pv = ex2(fmaf(acc_s[nt][2 * r + e], sl2, -mb));
            acc_s[nt][2 * r + e] = pv;
            s4[nt & 3] += pv;
          }
        row_sum[r] = row_sum[r] * alpha[r] + ((s4[0] + s4[1]) + (s4[2] + s4[3]));
      }
#pragma unroll
      for (int kk = 0; kk < KN; ++kk) {
        pa_cur[kk][0] = pack2<BF16>(acc_s[2 * kk][0], acc_s[2 * kk][1]);
        pa_cur[kk][1] = pack2<BF16>(acc_s[2 * kk][2], acc_s[2 * kk][3]);
        pa_cur[kk][2] = pack2<BF16>(acc_s[2 * kk + 1][0], acc_s[2 * kk + 1][1]);
        pa_cur[kk][3] = pack2<BF16>(acc_s[2 * kk + 1][2], acc_s[2 * kk + 1][3]);
      }
    };
    auto rescale_and_shift = [&](const float (&alpha)[2]) {
      if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          acc_o[dt][0] *= alpha[0];
          acc_o[dt][1] *= alpha[0];
          acc_o[dt][2] *= alpha[1];
          acc_o[dt][3] *= alpha[1];
        }
      }
#pragma unroll
      for (int kk = 0; kk < KN; ++kk)
#pragma unroll
        for (int e = 0; e < 4; ++e) pa_prev[kk][e] = pa_cur[kk][e];
    };

    mbar_wait(bar_q, 0);
    int j = 0;
    do {
      const int s = j % ST;
      const int sp = (j + ST - 1) % ST;  // stage of tile j-1
      const bool has_pv = j > 0;
      mbar_wait(full_k(s), (j / ST) & 1);
      if (has_pv) mbar_wait(full_v(sp), ((j - 1) / ST) & 1);
      make_s_descs(s);
      make_v_descs(sp);
      pin(acc_s);
      pin(acc_o);
      pin(pa_prev);
      wg_fence();
      issue_s();
      if (has_pv) {
        issue_pv();
        wg_wait<1>();  // S_j landed; P_{j-1} V_{j-1} may still run
      } else {
        wg_wait<0>();
      }
      pin(acc_s);
      mbar_arrive(empty_k(s));  // K_j read: the producer may refill its slot
      float alpha[2];
      softmax(j, alpha);
      wg_wait<0>();
      pin(acc_o);
      pin(pa_prev);
      if (has_pv) mbar_arrive(empty_v(sp));  // V_{j-1} read
      rescale_and_shift(alpha);
    } while (++j < n_tiles);
    // ---- the last tile's P V ----
    {
      const int sl = (n_tiles - 1) % ST;
      mbar_wait(full_v(sl), ((n_tiles - 1) / ST) & 1);
      make_v_descs(sl);
      pin(acc_o);
      pin(pa_prev);
      wg_fence();
      issue_pv();
      wg_wait<0>();
      pin(acc_o);
      pin(pa_prev);
    }

    // ---- epilogue: O / l into this warp's 16 rows of sQ (its warpgroup's rows, no longer read), then
    // 16-byte stores ----
    __syncwarp();
    const int lrow0 = cw * 16;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = row_sum[r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const float inv = l > 0.f ? 1.f / l : 0.f;
      const int lr = lrow0 + g + 8 * r;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt)
        *reinterpret_cast<std::uint32_t*>(sQ + sw_off(BM, lr, dt) + tq * 4) =
            pack2<BF16>(acc_o[dt][2 * r] * inv, acc_o[dt][2 * r + 1] * inv);
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < (16 * CPR) / 32; ++i) {
      const int c = lane + i * 32;
      const int row = c / CPR;
      const int ch = c % CPR;
      const int srow = warp_row0 + row;
      if (srow < S) {
        const uint4 val = *reinterpret_cast<const uint4*>(sQ + sw_off(BM, lrow0 + row, ch));
        *reinterpret_cast<uint4*>(p.o + (bh_rows + srow) * D + ch * 8) = val;
      }
    }
  }
#else
  (void)p;
  (void)tm_q;
  (void)tm_k;
  (void)tm_v;
  __trap();  // built without sm_90a; fused_can_implement refuses these tiles on such devices
#endif
}


template <class C, bool BF16>
int launch_ws(const KParams& kp, void* stream) {
  CUtensorMap mq, mk, mv;
  const long long bh = static_cast<long long>(kp.batch) * kp.heads;
  int e = encode_rows_map(&mq, kp.q, BF16, C::D, kp.seq_len, bh, C::BM);
  if (e == 0) e = encode_rows_map(&mk, kp.k, BF16, C::D, kp.seq_len, bh, C::BN);
  if (e == 0) e = encode_rows_map(&mv, kp.v, BF16, C::D, kp.seq_len, bh, C::BN);
  if (e != 0) return e;
  auto kern = fused_attention_fwd_ws<C, BF16>;
  cudaError_t ce = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
  if (ce != cudaSuccess) return static_cast<int>(ce);
  const long long blocks = static_cast<long long>(kp.m_blocks) * bh;
  kern<<<static_cast<unsigned>(blocks), C::THREADS, C::SMEM, static_cast<cudaStream_t>(stream)>>>(kp, mq, mk, mv);
  return static_cast<int>(cudaGetLastError());
}

template <class C, bool BF16>
int attrs_ws(cudaFuncAttributes* a) {
  return static_cast<int>(cudaFuncGetAttributes(a, fused_attention_fwd_ws<C, BF16>));
}

template <int D, int BN, int ST, bool BF16>
constexpr Entry make_entry_ws() {
  using C = WsCfg<D, BN, ST>;
  return Entry{D, C::BM, BN, C::THREADS / 32, ST, BF16, C::SMEM, true, &launch_ws<C, BF16>, &attrs_ws<C, BF16>,
               true, true};
}

}  // namespace ab::kernels::fused_detail
