// One consumer warpgroup of the Hopper (sm_90a) fused kernels (fused_kernel_wg.cuh, fused_kernel_ws.cuh,
// fused_kernel_wsp.cuh): its MMA state and the key-tile step the three share, and the wgmma plumbing under it.
//   WgStep::step()     S_j = Q K_j^T issued beside P_{j-1} V_{j-1} (when there is one); the softmax of S_j on
//                      the CUDA cores while that P V still runs (at head_dim 128: see WAIT_AFTER_EXPS; in the wsp
//                      kernel on a speculative base, SPEC_BASE); then O rescaled and P_j kept for the next step.
//   WgStep::last_pv()  the last tile's P V, alone.
//   WgTurns            consumer warpgroups taking turns to issue their MMAs (NoTurns: not).
// The kernels own the loads, the barriers and the order of tiles; they pass the descriptor bases of the K and
// V stage a step reads, and hooks for the moments a stage may go back (S_j landed: K_j read; the P V done:
// V_{j-1} read). Every operand of an MMA batch is defined and pinned before its first MMA and the issue sits
// in warp-uniform control flow: otherwise ptxas serializes the asynchronous MMAs (check -Xptxas -v for
// C7513/C7514/C7515).
#pragma once
#include <cstdint>

#include "fused_wg_rows.cuh"     // WgRows: mask, softmax, rescale, epilogue
#include "fused_wgmma_ops.cuh"  // Wgmma: the wgmma.mma_async wrappers

// The wgmma instructions exist only in the sm_90a target; elsewhere these kernels compile to a trap.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define AB_FUSED_WGMMA 1
#endif

namespace ab::kernels::fused_detail {

__device__ __forceinline__ void wg_fence() {
#ifdef AB_FUSED_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wg_commit() {
#ifdef AB_FUSED_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wg_wait() {
#ifdef AB_FUSED_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
__device__ __forceinline__ void fence_proxy_async() {
#ifdef AB_FUSED_WGMMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Pin registers that an in-flight wgmma reads or writes (the compiler must neither move nor reuse them
// between the issue and the wait).
template <int R, int C>
__device__ __forceinline__ void pin(float (&x)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) asm volatile("" : "+f"(x[i][j])::"memory");
}
template <int R, int C>
__device__ __forceinline__ void pin(std::uint32_t (&x)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) asm volatile("" : "+r"(x[i][j])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle (layout type 1 in bits 62-63), base offset 0 (every
// swizzle atom is 1024-byte aligned). lbo/sbo in bytes.
__device__ __forceinline__ std::uint64_t sw128_desc(std::uint32_t smem_addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((smem_addr & 0x3FFFFu) >> 4) |
         (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFFu) << 16) |
         (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

// Turn-taking between the consumer warpgroups (FlashAttention-3's ping-pong): a warpgroup waits for its
// turn before it issues a step's MMAs and passes the turn to the next one right after, so the tensor pipe
// runs one warpgroup's MMAs while another's softmax runs. Warpgroup k (1..n) waits on named barrier 1 + k
// (256 threads: its own 128 and the passing warpgroup's); barrier 1 is the producer's. Every warpgroup must
// take the same number of turns. NoTurns: each issues when it is ready.
struct NoTurns {
  __device__ __forceinline__ NoTurns() {}
  __device__ __forceinline__ NoTurns(int, int) {}
  __device__ __forceinline__ void wait() const {}
  __device__ __forceinline__ void pass() const {}
};
struct WgTurns {
  int mine, next;  // named barriers: this warpgroup's, the next one's
  __device__ __forceinline__ WgTurns(int wg, int consumers) : mine(1 + wg), next(2 + wg % consumers) {}
  __device__ __forceinline__ void wait() const { asm volatile("bar.sync %0, 256;\n" ::"r"(mine) : "memory"); }
  __device__ __forceinline__ void pass() const { asm volatile("bar.arrive %0, 256;\n" ::"r"(next) : "memory"); }
};

// No K rows from global memory (the kernels without the speculative base).
struct NoKRow {
  __device__ __forceinline__ const std::uint16_t* operator()(int) const { return nullptr; }
};

// VAR: the step of the instances that apply the variants (WgRows<..., true>, geometry WgVarGeom).
template <int BN, int D, bool BF16, bool SPEC_BASE = false, bool VAR = false>
struct WgStep {
  using Rows = WgRows<BN, D, BF16, VAR>;
  using Geom = typename Rows::Geom;
  static constexpr int NT = BN / 8, KN = BN / 16, DT = D / 8, KD = D / 16;
  // Where the step waits for P_{j-1} V_{j-1}. Written after the softmax, ptxas still hoisted that wait above
  // the row maximum: it packs P_j straight into P_{j-1}'s registers, which the P V reads, so no softmax ran
  // under its own warpgroup's P V (cuobjdump, every Hopper instance up to session 30). At head_dim 128 the
  // exponentials stay in fp32, the wait sits in the rescale's branch, and P_j is packed after it (one P
  // buffer, as FlashAttention-3 does): H200, session 31, with O by TMA stores, 1.4-2.4 % faster on every
  // head_dim-128 row. At head_dim 64 it was 0.4-1 % slower, so those instances keep the old order.
  static constexpr bool WAIT_AFTER_EXPS = D == 128;
  // SPEC_BASE (the wsp kernel at head_dim 128): after a block's first key tile, which sets each row's base (its
  // maximum, as before), the exponentials of a tile run on the base so far instead of waiting for the tile's
  // own maximum (its FMNMX chain and two shuffles). The maximum is still found, beside them: where a row's rose
  // by more than 2^8 in p (FlashAttention-4's threshold: p up to 256 is exact in fp16 and bf16 and far from
  // their range) the warp rebases: O, the sums and this tile's p times 2^(old - new), rows to their new
  // maximum. Random data then rebase on no tile after the first. Where a maximum rose by 2^120 or more a p of
  // the pass may have overflowed, so the warp computes S_j again on the CUDA cores (Q from shared memory, K
  // from global memory through the kernel's k_row: the K stage went back when S_j landed) and runs the
  // exact softmax. On an H200 (session 34) 2.3 % faster at S=2048 D=128, 1.7 % causal, 2.3-2.6 % at S=8192.
  static_assert(!SPEC_BASE || WAIT_AFTER_EXPS, "WgStep: the speculative base is written for head_dim 128");

  float acc_o[DT][4];
  float acc_s[NT][4];
  std::uint32_t pa_prev[KN][4], pa_cur[KN][4];  // probabilities of the previous / current tile
  std::uint64_t desc_a[KD], desc_b[KD], desc_v[KN];
  // The running max and sum of the rows are the caller's locals: as members here they change how ptxas
  // schedules the softmax (a slower loop, same instructions).

  // A query block starts: O and the pending P start over.
  __device__ __forceinline__ void begin() {
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[dt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KN; ++kk)
#pragma unroll
      for (int e = 0; e < 4; ++e) pa_prev[kk][e] = 0u;
  }
  // S_j's operands: this warpgroup's Q rows (dq, in a BM-row tile) and the K stage kb, 128-byte swizzle, one
  // k16 step per descriptor (64-column block kk/4, 32 bytes per step inside it); S starts at zero.
  template <int BM>
  __device__ __forceinline__ void s_descs(std::uint64_t dq, std::uint64_t kb) {
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
  }
  // The V stage vb (N-major): 16 keys per k step.
  __device__ __forceinline__ void v_descs(std::uint64_t vb) {
#pragma unroll
    for (int kk = 0; kk < KN; ++kk) {
      desc_v[kk] = vb + static_cast<std::uint64_t>((kk * 16 * 128) >> 4);
      asm volatile("" : "+l"(desc_v[kk]));
    }
  }
  // Key tile j (keys j*BN ..): S_j with the previous tile's P V beside it when has_pv, folded into the rows'
  // running max and sum. s_landed() runs once S_j has landed, pv_done() once the P V has (both before the
  // softmax's result is folded into O). The key offset is computed here, after the MMAs went out: computed
  // by the caller, before them, it changes the whole loop's schedule.
  template <class SLanded, class PvDone, class Turns = NoTurns, class KRow = NoKRow>
  __device__ __forceinline__ void step(bool has_pv, int j, const Geom& rg, float sl2, float (&row_max)[2],
                                       float (&row_sum)[2], SLanded&& s_landed, PvDone&& pv_done,
                                       const Turns& turns = Turns{}, const KRow& k_row = KRow{}) {
    pin(acc_s);
    pin(acc_o);
    pin(pa_prev);
    turns.wait();
    wg_fence();
    issue_s();
    if (has_pv) {
      issue_pv();
      turns.pass();  // inside each branch: a pass after the merge would cross it with MMAs in flight (C7514)
      wg_wait<1>();  // S_j landed; P_{j-1} V_{j-1} may still run
    } else {
      turns.pass();
      wg_wait<0>();
    }
    pin(acc_s);
    s_landed();
    float alpha[2];
    if constexpr (WAIT_AFTER_EXPS) {
      if constexpr (SPEC_BASE) {
        float mx[2], sum[2] = {0.f, 0.f};
        bool rb = false;
        if (has_pv)
          rb = Rows::softmax_exp_spec(acc_s, row_max, mx, sum, j * BN, rg, sl2);
        else  // the block's first tile: its maximum is the rows' base
          Rows::softmax_exp(acc_s, row_max, row_sum, alpha, j * BN, rg, sl2);
        pin(acc_s);
        // The wait for P_{j-1} V_{j-1} in both arms, as below.
        if (rb) {
          pv_landed();
          if (Rows::base_overflowed(mx, row_max, sl2)) {
            recompute_s(j, rg, k_row);
            Rows::softmax_exp(acc_s, row_max, row_sum, alpha, j * BN, rg, sl2);
            Rows::rescale(acc_o, alpha);
          } else {
            Rows::rebase(acc_o, acc_s, row_max, row_sum, mx, sum, sl2);
          }
        } else {
          pv_landed();
          row_sum[0] += sum[0];
          row_sum[1] += sum[1];
        }
      } else {
        Rows::softmax_exp(acc_s, row_max, row_sum, alpha, j * BN, rg, sl2);
        pin(acc_s);
        // The wait for P_{j-1} V_{j-1} in both arms of the rescale's branch: a basic block ptxas does not hoist
        // it out of, so the exponentials above run while that P V does.
        if (Rows::o_needs_rescale(alpha)) {
          pv_landed();
          Rows::rescale(acc_o, alpha);
        } else {
          pv_landed();
        }
      }
      pv_done();
      Rows::pack(acc_s, pa_prev);  // P_j into the one P buffer, now that P_{j-1} V_{j-1} has read it
    } else {
      Rows::softmax(acc_s, pa_cur, row_max, row_sum, alpha, j * BN, rg, sl2);
      pv_landed();  // P_{j-1} stays in its registers until its MMA is done
      pv_done();
      Rows::rescale_and_shift(acc_o, alpha, pa_prev, pa_cur);
    }
  }
  // The last tile's P V (its V descriptors set).
  template <class Turns = NoTurns>
  __device__ __forceinline__ void last_pv(const Turns& turns = Turns{}) {
    pin(acc_o);
    pin(pa_prev);
    turns.wait();
    wg_fence();
    issue_pv();
    turns.pass();
    pv_landed();
  }

 private:
  // Every MMA of this warpgroup done (the P V's last): O and the P it read pinned from here on.
  __device__ __forceinline__ void pv_landed() {
    wg_wait<0>();
    pin(acc_o);
    pin(pa_prev);
  }
  // S_j again on the CUDA cores: Q from this warpgroup's rows in shared memory (its descriptors name them), K
  // from global memory (k_row(key): the row of the item's key, nullptr past its length; the stage may be gone).
  // Head_dim 128 (two 64-column blocks of Q); the rare path of the speculative base (a p overflowed).
  __device__ __forceinline__ static float2 to_float2(std::uint32_t v) {
    if constexpr (BF16)
      return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v));
    else
      return __half22float2(*reinterpret_cast<const __half2*>(&v));
  }
  __device__ __forceinline__ static uint4 lds128(std::uint32_t addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
  }
  template <class KRow>
  __device__ __forceinline__ void recompute_s(int j, const Geom& rg, const KRow& k_row) {
    static_assert(D == 128, "recompute_s: head_dim 128");
    const std::uint32_t qa = static_cast<std::uint32_t>(desc_a[0] & 0x3FFFu) << 4;  // this warpgroup's Q rows
    const std::uint32_t q_blk = static_cast<std::uint32_t>((desc_a[4] - desc_a[0]) & 0x3FFFu) << 4;  // BM * 128
    const int wr = static_cast<int>((threadIdx.x >> 5) & 3);
#pragma unroll 1
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll 1
      for (int e = 0; e < 2; ++e) {
        const std::uint16_t* krow = k_row(j * BN + nt * 8 + rg.tq * 2 + e);
        float d0 = 0.f, d1 = 0.f;
        if (krow != nullptr) {
#pragma unroll 1
          for (int c = 0; c < D / 8; ++c) {  // 16-byte chunks (Q: 128-byte swizzle, chunk c ^ (row % 8))
            const uint4 kv = __ldg(reinterpret_cast<const uint4*>(krow) + c);
            const int r0 = wr * 16 + rg.g, r1 = r0 + 8;
            const uint4 q0 = lds128(qa + (c >> 3) * q_blk + r0 * 128 + (((c & 7) ^ (r0 & 7)) << 4));
            const uint4 q1 = lds128(qa + (c >> 3) * q_blk + r1 * 128 + (((c & 7) ^ (r1 & 7)) << 4));
            const std::uint32_t kw[4] = {kv.x, kv.y, kv.z, kv.w}, w0[4] = {q0.x, q0.y, q0.z, q0.w},
                                w1[4] = {q1.x, q1.y, q1.z, q1.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const float2 k = to_float2(kw[i]), a = to_float2(w0[i]), b = to_float2(w1[i]);
              d0 = fmaf(a.x, k.x, fmaf(a.y, k.y, d0));
              d1 = fmaf(b.x, k.x, fmaf(b.y, k.y, d1));
            }
          }
        }
        // acc_s[nt][e] (row g) and [nt][2 + e] (row g + 8), written through a select chain so that the
        // indices stay compile-time constants for every other use of acc_s
#pragma unroll
        for (int t = 0; t < NT; ++t)
#pragma unroll
          for (int f = 0; f < 2; ++f)
            if (t == nt && f == e) {
              acc_s[t][f] = d0;
              acc_s[t][2 + f] = d1;
            }
      }
  }
  __device__ __forceinline__ void issue_s() {
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) Wgmma<BN, BF16>::ss(acc_s, desc_a[kk], desc_b[kk]);
    wg_commit();
  }
  __device__ __forceinline__ void issue_pv() {  // O += P V, P in pa_prev
#pragma unroll
    for (int kk = 0; kk < KN; ++kk) Wgmma<D, BF16>::rs(acc_o, pa_prev[kk], desc_v[kk]);
    wg_commit();
  }
};

}  // namespace ab::kernels::fused_detail
