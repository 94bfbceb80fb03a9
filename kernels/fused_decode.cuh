// The split-KV decode kernel of `fused` (flash-decoding) for q_len <= 16, as a template, and the combine
// kernel. Included by kernels/fused_decode.cu only.
//
// Grid (split, KV head x row chunk, batch). A CTA holds ROWS = 16*MT query rows of one KV head, GQA-packed:
// packed row r is query head kvh*g + r / q_len, query r % q_len, so the g query heads sharing the KV head
// read its K/V once. It walks its split's keys [split*kps, min((split+1)*kps, L)) in tiles of 64 keys that
// stream through a STAGES-deep ring of shared memory (16-byte cp.async, one commit group per tile). Paged:
// the block-table entry of every key row of a tile is copied into a shared-memory ring by 4-byte cp.async
// in the commit group issued STAGES-1 iterations before the tile's own, so the K/V issue never waits on a
// global load (a plain load there sits behind the CTA's own bulk traffic: 27% slower on the H200). Each of the
// 4 warps takes 16 keys of a tile with every row (S = Q K^T and O += P V on mma.sync m16n8k16, fp32
// accumulators, online softmax in exp2) and keeps its own (m, l, acc); at the end the warps' states are
// merged through shared memory. One split: the CTA writes O. Several: it writes its unnormalised
// accumulator and (m, l) per row, and decode_combine merges the splits into O.
#pragma once
#include <type_traits>

#include "core/fused_decode_plan.hpp"  // window_base: the first key the splits cover
#include "fused_kernel.cuh"

namespace ab::kernels::fused_detail {

struct DParams {
  const std::uint16_t* q;  // [B,H,q_len,D]
  const std::uint16_t* k;  // [B,KVH,S,D] or pool [slots][KVH][ps][D]
  const std::uint16_t* v;
  std::uint16_t* o;
  const std::int32_t* block_table;  // [B, pages] (paged)
  const std::int32_t* kv_lens;      // [B] or nullptr (all seq_len)
  float* part_acc;                  // [B*H*q_len, splits, D] (splits > 1)
  float* part_ml;                   // [B*H*q_len, splits, 2]: max (log2 units) and sum
  int batch, heads, kv_heads, group, q_len, seq_len, pages, page_size;
  int splits, keys_per_split, chunks;
  float scale_log2;
  int causal, paged;
};

// The parameters of the instances that apply the variants (VAR): the sliding window (keys before a row's position -
// window masked, the splits starting at fused_decode::window_base), the soft-cap (a raw score s becomes
// cap_out * tanh(s * cap_in), the scaled score's cap * tanh(scaled / cap) in raw units; cap_in 0: none) and the sinks
// (head h's logit joins the denominator where a row's splits are merged: decode_write_rows, fused_decode_combine).
// The instances without them take DParams alone, so their code is what it was before the variants.
struct DVarParams : DParams {
  int window;
  float cap_in, cap_out;
  const float* sinks;  // [H] or nullptr
  // A mixed batch: [B] queries per sequence (its rows' causal diagonal L - q_lens[b]; rows past the count are
  // padding, not compared); nullptr: every sequence has q_len.
  const std::int32_t* q_lens;
};
template <bool VAR>
using DParamsOf = std::conditional_t<VAR, DVarParams, DParams>;

template <int D_, int MT_, int STAGES_>
struct DCfg {
  static constexpr int D = D_, MT = MT_, STAGES = STAGES_;
  static constexpr int WARPS = 4, THREADS = 128;
  static constexpr int ROWS = 16 * MT;   // packed query rows per CTA
  static constexpr int WN = 16;          // keys per warp per tile
  static constexpr int BN = WARPS * WN;  // keys per tile (fused_decode::kKeysPerTile)
  static constexpr int LD = D + 8;       // padded shared-memory row (16-bit elements)
  static constexpr int DT = D / 8, KD = D / 16, CPR = D / 8;
  static constexpr int RPP = THREADS / CPR;  // tile rows per load pass
  static constexpr int PASSES = BN / RPP;
  static constexpr int Q_BYTES = ROWS * LD * 2;
  static constexpr int TILE_BYTES = BN * LD * 2;
  static constexpr int RING_BYTES = 2 * STAGES * TILE_BYTES;
  static constexpr int SLOT_RING = 2 * STAGES;  // tiles of block-table slots in flight (paged)
  static constexpr int SLOT_BYTES = SLOT_RING * BN * 4;
  static constexpr int MERGE_BYTES = WARPS * ROWS * (D + 4) * 4 + 2 * WARPS * ROWS * 4;
  static constexpr int SMEM = Q_BYTES + SLOT_BYTES + (RING_BYTES > MERGE_BYTES ? RING_BYTES : MERGE_BYTES);
  static constexpr int MIN_BLOCKS = 2 * (SMEM + 1024) <= 228 * 1024 ? 2 : 1;  // CTAs per SM that fit
  static_assert(THREADS % CPR == 0 && BN % RPP == 0, "whole load passes");
  static_assert((ROWS * CPR) % THREADS == 0, "Q load splits evenly");
};

// One tile's step of a warp, shared by both decode kernels: the warp holds S for its NT*8 keys (n8 tiles of
// mma.sync accumulators, rows of MT m16 slices). mma_cap_scores (mma_online_softmax.cuh) soft-caps S where the
// problem asks for it; decode_mask_keys sets S to -inf for keys at or past k_end, past each row's visible limit and before its
// window's first key (WINDOW; k0: the warp's first key); then the online softmax and the packing of P
// (mma_online_softmax.cuh's mma_softmax_step and mma_pack_p, the prefill kernel's too).
template <int MT, int NT, bool WINDOW>
__device__ __forceinline__ void decode_mask_keys(float (&acc_s)[MT][NT][4], int k0, int tq, int k_end,
                                                 const int (&row_lim)[MT][2], const int (&row_lo)[MT][2]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = k0 + nt * 8 + tq * 2 + (e & 1);
        bool masked = col >= k_end || col >= row_lim[mt][e >> 1];
        if constexpr (WINDOW) masked = masked || col < row_lo[mt][e >> 1];
        if (masked) acc_s[mt][nt][e] = -INFINITY;
      }
}

// The end of a decode CTA, shared by both decode kernels (this file's and fused_decode_tma.cuh's): WARPS
// math warps (thread ids 0 .. 32*WARPS-1) each hold (m, l, acc) for every packed row of the CTA.
// decode_stash_warp_state puts one warp's state into shared memory at `merge` (sAcc [WARPS][ROWS][D+4], then
// sM and sL [WARPS][ROWS], fp32); after a barrier among those warps, decode_write_rows merges the warps per
// row and writes O (one split) or the split's unnormalised accumulator and (m, l) for decode_combine.
template <int D, int MT, int ROWS, int WARPS>
__device__ __forceinline__ void decode_stash_warp_state(float* merge, int warp, int lane,
                                                        const float (&acc_o)[MT][D / 8][4],
                                                        const float (&row_max)[MT][2], const float (&row_sum)[MT][2],
                                                        float sl2) {
  constexpr int DT = D / 8;
  float* sAcc = merge;
  float* sM = sAcc + WARPS * ROWS * (D + 4);
  float* sL = sM + WARPS * ROWS;
  const int g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = row_sum[mt][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const int row = mt * 16 + g + r * 8;
      if (tq == 0) {
        sM[warp * ROWS + row] = row_max[mt][r] == -INFINITY ? -INFINITY : row_max[mt][r] * sl2;
        sL[warp * ROWS + row] = l;
      }
      float* dst = sAcc + (warp * ROWS + row) * (D + 4) + tq * 2;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        dst[dt * 8] = acc_o[mt][dt][2 * r];
        dst[dt * 8 + 1] = acc_o[mt][dt][2 * r + 1];
      }
    }
}

// Thread layout for the output: D/4 threads per row (4 columns each), rows strided over the 32*WARPS threads.
// q_row_of(r): packed row r's row of Q/O, or -1 past the group's rows. VAR: the instance that applies the
// variants (here the sinks, with one split).
template <int D, int ROWS, int WARPS, bool BF16, bool VAR, class P, class RowOf>
__device__ __forceinline__ void decode_write_rows(const float* merge, int tid, const P& p, int split,
                                                  RowOf q_row_of, int row0) {
  const float* sAcc = merge;
  const float* sM = sAcc + WARPS * ROWS * (D + 4);
  const float* sL = sM + WARPS * ROWS;
  constexpr int TPR = D / 4;
  constexpr int RSTEP = 32 * WARPS / TPR;
  const int col = (tid % TPR) * 4;
  for (int row = tid / TPR; row < ROWS; row += RSTEP) {
    const std::int64_t qr = q_row_of(row0 + row);
    if (qr < 0) continue;
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) m = fmaxf(m, sM[w * ROWS + row]);
    float l = 0.f, o[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      const float mw = sM[w * ROWS + row];
      const float sc = mw == -INFINITY ? 0.f : ex2(mw - m);
      l += sL[w * ROWS + row] * sc;
      const float4 a = *reinterpret_cast<const float4*>(sAcc + (w * ROWS + row) * (D + 4) + col);
      o[0] += a.x * sc;
      o[1] += a.y * sc;
      o[2] += a.z * sc;
      o[3] += a.w * sc;
    }
    if (p.splits == 1) {
      if constexpr (VAR) {
        if (p.sinks) {  // the only split: the sink joins here (else in fused_decode_combine)
          const float sc = mma_add_sink(m, l, __ldg(p.sinks + (qr / p.q_len) % p.heads) * 1.4426950408889634f);
#pragma unroll
          for (int c = 0; c < 4; ++c) o[c] *= sc;
        }
      }
      const float inv = l > 0.f ? 1.f / l : 0.f;
      uint2 packed;
      packed.x = pack2<BF16>(o[0] * inv, o[1] * inv);
      packed.y = pack2<BF16>(o[2] * inv, o[3] * inv);
      *reinterpret_cast<uint2*>(p.o + qr * D + col) = packed;
    } else {
      const std::int64_t pr = qr * p.splits + split;
      *reinterpret_cast<float4*>(p.part_acc + pr * D + col) = make_float4(o[0], o[1], o[2], o[3]);
      if (col == 0) {
        p.part_ml[pr * 2] = m;
        p.part_ml[pr * 2 + 1] = l;
      }
    }
  }
}

// A decode CTA's packed rows (the query heads of one KV head, QL queries each, rows_total of them): row r's row
// of Q/O [B,H,q_len,D], or -1 past the group's rows.
struct DecodeQRows {
  const DParams& p;
  int b, kvh, QL, rows_total;
  __device__ __forceinline__ std::int64_t operator()(int r) const {
    if (r >= rows_total) return -1;
    const int hq = kvh * p.group + r / QL;
    return (static_cast<std::int64_t>(b) * p.heads + hq) * QL + (r % QL);
  }
};

// Issues the cp.async loads of the packed rows row0 .. row0 + ROWS - 1 of Q into sQ (rows LD elements apart, CPR
// 16-byte chunks each), by THREADS threads (tid among them); rows past the group's are zero-filled.
template <int D, int ROWS, int CPR, int THREADS, int LD>
__device__ __forceinline__ void decode_load_q(std::uint16_t* sQ, const std::uint16_t* q, int tid,
                                              const DecodeQRows& q_row_of, int row0) {
#pragma unroll
  for (int i = 0; i < (ROWS * CPR) / THREADS; ++i) {
    const int c = tid + i * THREADS;
    const int row = c / CPR, ch = c % CPR;
    const std::int64_t qr = q_row_of(row0 + row);
    cp_async16(smem_u32(sQ + row * LD + ch * 8), qr >= 0 ? q + qr * D + ch * 8 : q, qr >= 0);
  }
}

// A decode warp's rows before its first key tile: each row's visible-key limit (L, or with causal (nonzero) its query's
// position + 1; row pr of the split is query pr % QL), and its O accumulator, running max and sum cleared.
template <int MT, int DT>
__device__ __forceinline__ void decode_init_rows(int (&row_lim)[MT][2], float (&acc_o)[MT][DT][4],
                                                 float (&row_max)[MT][2], float (&row_sum)[MT][2], int row0, int g,
                                                 int QL, int L, int diag, int causal) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int pr = row0 + mt * 16 + g + r * 8;
      row_lim[mt][r] = causal ? min(L, (pr % QL) + diag + 1) : L;
    }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][dt][e] = 0.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = -INFINITY;
      row_sum[mt][r] = 0.f;
    }
  }
}

// With a sliding window (the variants' instance), each row's first visible key: its position - window (0 below).
template <int MT>
__device__ __forceinline__ void decode_window_rows(int (&row_lo)[MT][2], int row0, int g, int QL, int diag, int window) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) row_lo[mt][r] = window > 0 ? max(0, (row0 + mt * 16 + g + r * 8) % QL + diag - window) : 0;
}

// VAR: the instance that applies the variants (window, soft-cap, sinks: DParams); the other keeps the code of the
// kernel without them.
template <class C, bool BF16, bool VAR>
__global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS) fused_decode_fwd(const DParamsOf<VAR> p) {
  constexpr int D = C::D, MT = C::MT, STAGES = C::STAGES, ROWS = C::ROWS, BN = C::BN, WN = C::WN;
  constexpr int LD = C::LD, DT = C::DT, KD = C::KD, CPR = C::CPR, RPP = C::RPP, PASSES = C::PASSES;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  std::uint16_t* sQ = reinterpret_cast<std::uint16_t*>(smem_raw);
  std::int32_t* sSlot = reinterpret_cast<std::int32_t*>(smem_raw + C::Q_BYTES);  // [SLOT_RING][BN]
  std::uint16_t* sK = reinterpret_cast<std::uint16_t*>(smem_raw + C::Q_BYTES + C::SLOT_BYTES);

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int split = blockIdx.x;
  const int kvh = blockIdx.y / p.chunks;
  const int chunk = blockIdx.y - kvh * p.chunks;
  const int b = blockIdx.z;
  const int QL = p.q_len;
  const int rows_total = p.group * QL;
  const int row0 = chunk * ROWS;  // first packed row of this CTA
  const int L = p.kv_lens ? __ldg(p.kv_lens + b) : p.seq_len;
  int diag = causal_diag(L, QL);
  if constexpr (VAR) {
    if (p.q_lens) diag = causal_diag(L, __ldg(p.q_lens + b));  // a mixed batch: this sequence's own queries
  }
  // The splits cover keys [window_base, L): all of them, or those the window leaves (core/fused_decode_plan.hpp;
  // a mixed batch's from its longest q_len: a few keys more than this sequence's rows need, never fewer).
  int base = 0;
  if constexpr (VAR) base = static_cast<int>(fused_decode::window_base(L, QL, p.window));
  const int k_begin = base + split * p.keys_per_split;
  const int k_end = min(L, k_begin + p.keys_per_split);
  const int n_tiles = k_end > k_begin ? (k_end - k_begin + BN - 1) / BN : 0;

  // Packed row r -> row of Q/O [B,H,q_len,D]; -1 past the group's rows.
  const DecodeQRows q_row_of{p, b, kvh, QL, rows_total};

  // ---- Q (group 0 with tile 0) ----
  decode_load_q<D, ROWS, CPR, C::THREADS, LD>(sQ, p.q, tid, q_row_of, row0);

  const std::uint16_t* __restrict__ gK = p.k;
  const std::uint16_t* __restrict__ gV = p.v;
  const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(b) * p.pages;
  const int ps = p.page_size;
  const bool paged = p.paged != 0;
  const int ld_row0 = tid / CPR, ld_ch = tid % CPR;
  const std::int64_t contig0 = ((static_cast<std::int64_t>(b) * p.kv_heads + kvh) * p.seq_len) * D + ld_ch * 8;
  const std::uint32_t sK_thr = smem_u32(sK + ld_row0 * LD + ld_ch * 8);
  constexpr std::uint32_t V_MINUS_K = STAGES * C::TILE_BYTES;

  // Block-table slot of every key row of tile t into ring entry t % SLOT_RING: `async` by 4-byte cp.async
  // (lands with the commit group it joins), else by plain loads (prologue).
  constexpr int LOOK = 2 * (STAGES - 1);  // slots of tile n + LOOK are copied in iteration n
  auto fetch_slots = [&](int t, bool async) {
    if (!paged || t >= n_tiles || tid >= BN) return;
    const int s = k_begin + t * BN + tid;
    if (s >= k_end) return;
    std::int32_t* dst = sSlot + (t % C::SLOT_RING) * BN + tid;
    if (async) {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_u32(dst)), "l"(bt + s / ps) : "memory");
    } else {
      *dst = __ldg(bt + s / ps);
    }
  };
  auto issue_tile = [&](int t, int stage) {
    if (t < n_tiles) {
      const std::uint32_t dK = sK_thr + stage * C::TILE_BYTES;
#pragma unroll
      for (int i = 0; i < PASSES; ++i) {
        const int s = k_begin + t * BN + ld_row0 + i * RPP;
        const bool valid = s < k_end;
        std::int64_t off = 0;
        if (valid) {
          if (paged) {
            const int page = s / ps;
            const int slot = sSlot[(t % C::SLOT_RING) * BN + ld_row0 + i * RPP];
            off = ((static_cast<std::int64_t>(slot) * p.kv_heads + kvh) * ps + (s - page * ps)) * D + ld_ch * 8;
          } else {
            off = contig0 + static_cast<std::int64_t>(s) * D;
          }
        }
        const std::uint32_t so = i * RPP * LD * 2;
        cp_async16(dK + so, valid ? gK + off : gK, valid);
        cp_async16(dK + V_MINUS_K + so, valid ? gV + off : gV, valid);
      }
    }
    cp_async_commit();
  };

  // Slots of the first LOOK tiles by plain loads, before any bulk traffic; later ones ride in the groups.
  for (int t = 0; t < LOOK; ++t) fetch_slots(t, false);
  __syncthreads();
#pragma unroll
  for (int t = 0; t < STAGES - 1; ++t) issue_tile(t, t);

  const int g = lane >> 2, tq = lane & 3;
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8, a_col = (lane >> 4) * 8;
  const int k_row = (lane & 7) + (lane >> 4) * 8, k_col = ((lane >> 3) & 1) * 8;
  const std::uint32_t sQ_lane = smem_u32(sQ + a_row * LD + a_col);

  // Visible keys of this thread's rows [row_lo (VAR), row_lim), O, max and sum.
  int row_lim[MT][2], row_lo[MT][2];
  float acc_o[MT][DT][4];
  float row_max[MT][2], row_sum[MT][2];
  decode_init_rows<MT, DT>(row_lim, acc_o, row_max, row_sum, row0, g, QL, L, diag, p.causal);
  if constexpr (VAR) decode_window_rows<MT>(row_lo, row0, g, QL, diag, p.window);
  const float sl2 = p.scale_log2;
  const int mask_from = p.causal ? min(k_end, diag + 1) : k_end;  // keys below this are seen by every row
  int mask_below = 0;  // keys below this: before some row's window
  if constexpr (VAR) mask_below = p.window > 0 ? QL - 1 + diag - p.window : 0;

  for (int n = 0; n < n_tiles; ++n) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    // Group n: K/V of tile n+STAGES-1 (its slots landed with group n-STAGES+1, complete now) and the
    // slots of tile n+LOOK, read when that tile is issued, STAGES-1 iterations from now.
    fetch_slots(n + LOOK, true);
    issue_tile(n + STAGES - 1, (n + STAGES - 1) % STAGES);
    const int stage = n % STAGES;
    const int k0 = k_begin + n * BN + warp * WN;
    if (k0 < k_end) {
      float acc_s[MT][2][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;
      const std::uint32_t sK_lane = smem_u32(sK + (stage * BN + warp * WN + k_row) * LD + k_col);
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        std::uint32_t kb[4];
        ldsm_x4(kb, sK_lane + kk * 16 * 2);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          std::uint32_t qa[4];
          ldsm_x4(qa, sQ_lane + (mt * 16 * LD + kk * 16) * 2);
          mma16816<BF16>(acc_s[mt][0], qa, kb[0], kb[1]);
          mma16816<BF16>(acc_s[mt][1], qa, kb[2], kb[3]);
        }
      }
      if constexpr (VAR) {
        if (p.cap_in > 0.f) mma_cap_scores<MT, 2>(acc_s, p.cap_in, p.cap_out);
      }
      if (k0 + WN > mask_from || (VAR && k0 < mask_below)) decode_mask_keys<MT, 2, VAR>(acc_s, k0, tq, k_end, row_lim, row_lo);
      mma_softmax_step<MT, 2, DT>(acc_s, row_max, row_sum, acc_o, sl2);
      const std::uint32_t sV_lane = smem_u32(sK + ((STAGES + stage) * BN + warp * WN + a_row) * LD + a_col);
      std::uint32_t pa[MT][1][4];
      mma_pack_p<MT, 2, BF16>(acc_s, pa);
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        std::uint32_t vb[4];
        ldsm_x4_t(vb, sV_lane + dp * 16 * 2);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<BF16>(acc_o[mt][2 * dp], pa[mt][0], vb[0], vb[1]);
          mma16816<BF16>(acc_o[mt][2 * dp + 1], pa[mt][0], vb[2], vb[3]);
        }
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free: reuse it for the merge

  // ---- merge the warps' states (decode_stash_warp_state's layout) ----
  float* merge = reinterpret_cast<float*>(smem_raw + C::Q_BYTES + C::SLOT_BYTES);
  decode_stash_warp_state<D, MT, ROWS, C::WARPS>(merge, warp, lane, acc_o, row_max, row_sum, sl2);
  __syncthreads();

  decode_write_rows<D, ROWS, C::WARPS, BF16, VAR>(merge, tid, p, split, q_row_of, row0);
}

// One block per query row: O = sum_s acc_s 2^(m_s - M) / sum_s l_s 2^(m_s - M), with sinks (a row of
// [B,H,q_len] belongs to head (row / q_len) % heads) the head's sink in the denominator (mma_add_sink).
// (SINKS: the instance that reads them; the other leaves its last three parameters alone).
template <bool BF16, bool SINKS>
__global__ void __launch_bounds__(128) fused_decode_combine(const float* __restrict__ part_acc,
                                                            const float* __restrict__ part_ml,
                                                            std::uint16_t* __restrict__ o, int splits, int D,
                                                            const float* __restrict__ sinks, int heads, int q_len) {
  const std::int64_t row = blockIdx.x;
  const float* ml = part_ml + row * splits * 2;
  float m = -INFINITY;
  for (int s = 0; s < splits; ++s) m = fmaxf(m, ml[2 * s]);
  float l = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float ms = ml[2 * s];
    l += ms == -INFINITY ? 0.f : ml[2 * s + 1] * ex2(ms - m);
  }
  float inv;
  if constexpr (SINKS) {  // the splits' common factor after the sink joins, over the new sum
    const float sc = mma_add_sink(m, l, __ldg(sinks + (row / q_len) % heads) * 1.4426950408889634f);
    inv = l > 0.f ? sc / l : 0.f;
  } else {
    (void)sinks;
    (void)heads;
    (void)q_len;
    inv = l > 0.f ? 1.f / l : 0.f;
  }
  for (int c = threadIdx.x * 2; c < D; c += blockDim.x * 2) {
    float a0 = 0.f, a1 = 0.f;
    for (int s = 0; s < splits; ++s) {
      const float ms = ml[2 * s];
      if (ms == -INFINITY) continue;
      const float w = ex2(ms - m);
      const float2 a = *reinterpret_cast<const float2*>(part_acc + (row * splits + s) * D + c);
      a0 += a.x * w;
      a1 += a.y * w;
    }
    *reinterpret_cast<std::uint32_t*>(o + row * D + c) = pack2<BF16>(a0 * inv, a1 * inv);
  }
}

}  // namespace ab::kernels::fused_detail
