// The fused attention forward kernel (FlashAttention-2 class) as a template, and its launcher.
// Included by kernels/fused_attention*.cu only; each of those instantiates a set of configurations.
//
// One CTA computes BLOCK_M query rows of one (batch, head); WARPS warps each own BLOCK_M/WARPS rows
// (16*MT, MT m16 slices). Per KV tile of BLOCK_N keys:
//   S = Q K^T       mma.sync m16n8k16 (fp32 accumulate), A = Q fragments (registers, or ldmatrix from
//                   shared memory when registers are short), B = K via ldmatrix (non-transposed)
//   online softmax  in registers: row max over the quad (2 shuffles), p = ex2(s*scale*log2e - m*scale*log2e)
//                   (one FFMA + one MUFU.EX2), per-thread partial row sums reduced once at the end
//   O += P V        P re-packed from the S accumulators into A fragments (fp16/bf16), V via ldmatrix.trans
// K/V tiles stream through a STAGES-deep ring of shared-memory buffers filled with 16-byte cp.async
// (one commit group per tile, one __syncthreads per tile). Shared-memory rows are padded by 16 bytes,
// which makes every 8-row ldmatrix phase and the fragment stores of the epilogue bank-conflict free.
// Paged K/V: each row's address goes through the block table; the slot of the tile after next is read
// from global memory one iteration ahead and parked in shared memory as a 64-bit row offset, so the
// block-table load latency never sits in front of the cp.async issue. Any page size >= 1 works.
// Causal: the KV loop stops at the diagonal, only tiles that cross the diagonal (or the end of the
// sequence) are masked, warps whose rows all lie before a tile skip it, and CTAs are scheduled
// heaviest query block first.
// Inference shapes: query head h reads KV head h / group; the q_len queries of a sequence of KV length L
// (kv_lens[b], ragged) are its last q_len positions, so with causal masking query i sees keys
// 0 .. i + L - q_len (bottom-right aligned); keys at or past L are never read (block-table entries past a
// sequence's last page are -1).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/fused_tile.hpp"  // the kernel table's tiles (Entry)
#include "core/query_block_order.hpp"  // grid_query_block: which (head, query block) a CTA runs
#include "mma_online_softmax.cuh"        // mma_softmax_step, mma_pack_p_frag: S to P
#include "mma_sync_ops.cuh"              // the PTX wrappers: cp.async, ldmatrix, mma.sync, ex2, pack2

namespace ab::kernels::fused_detail {

struct KParams {
  const std::uint16_t* q;
  const std::uint16_t* k;
  const std::uint16_t* v;
  std::uint16_t* o;
  const std::int32_t* block_table;
  const std::int32_t* kv_lens;  // [B] KV length per sequence; nullptr: every sequence has seq_len
  int batch, heads, seq_len, pages, page_size;
  int kv_heads, group, q_len;   // KV heads, query heads per KV head, queries per sequence
  int m_blocks;                 // query blocks per (batch, head): ceil(q_len / BLOCK_M)
  float scale_log2;  // scale * log2(e)
  int causal, paged;
  std::int64_t pool_slots;      // paged: slots of the pool [slots][KVH][page_size][D] (the ws tiles' TMA map)
  float* tail_ws;               // persistent tiles: the tail split's workspace (core/fused_tail_layout.hpp), or null
  std::int64_t tail_ws_bytes;
  TailSplit tail;               // the walk's tail split, decided by launch_wsp for its grid (rem 0: none)
};

// The parameters of the instances that apply the variants (the wsp kernel's VAR instances): the sliding window
// (keys before a query's position - window masked, an item's first key tiles skipped), the soft-cap (a raw score s
// becomes cap_out * tanh(s * cap_in); cap_in 0: none) and the sinks ([H] logits in the rows' denominators; null:
// none). Every launch takes them; the instances without variants take KParams alone, so their code is unchanged.
struct KVarParams : KParams {
  int window;
  float cap_in, cap_out;
  const float* sinks;
  // A mixed batch: [B] queries per sequence (the persistent tiles' instances: each sequence's own causal diagonal;
  // rows past a count are padding, not compared); nullptr: every sequence has q_len. The other tiles refuse one.
  const std::int32_t* q_lens;
};
template <bool VAR>
using KParamsOf = std::conditional_t<VAR, KVarParams, KParams>;
// Whether a launch needs the variants' instances.
inline bool applies_variants(const KVarParams& kp) {
  return kp.window > 0 || kp.cap_in > 0.f || kp.sinks != nullptr || kp.q_lens != nullptr;
}

// ---- the inference-shape rules every fused kernel applies (one definition) ------------------------------
// Bottom-right causal alignment (FlashAttention, FlashInfer): the q_len queries of a sequence of kv_len keys
// are its last q_len positions, so query row i sees keys 0 .. i + diag with diag = kv_len - q_len.
__device__ __forceinline__ int causal_diag(int kv_len, int q_len) { return kv_len - q_len; }
// Keys [0, end) that query rows below row_end need: kv_len, or with causal masking up to the diagonal.
__device__ __forceinline__ int kv_end_for_rows(int row_end, int kv_len, int diag, bool causal) {
  return max(0, causal ? min(kv_len, row_end + diag) : kv_len);
}
// Whether key col is masked for query row (past the sequence end, or above the diagonal).
__device__ __forceinline__ bool key_masked(int col, int row, int kv_len, int diag, bool causal) {
  return col >= kv_len || (causal && col > row + diag);
}
// Whether a tile of keys [n0, n0 + bn) holds a masked key for some query row at or after row_first.
__device__ __forceinline__ bool tile_needs_mask(int n0, int bn, int row_first, int kv_len, int diag, bool causal) {
  return n0 + bn > kv_len || (causal && n0 + bn - 1 > row_first + diag);
}

// ---- configuration -------------------------------------------------------------------------------------

template <int D_, int BM_, int BN_, int WARPS_, int STAGES_>
struct Cfg {
  static constexpr int D = D_, BM = BM_, BN = BN_, WARPS = WARPS_, STAGES = STAGES_;
  static constexpr int THREADS = WARPS * 32;
  static constexpr int MW = BM / WARPS;  // query rows per warp
  static constexpr int MT = MW / 16;     // m16 slices per warp
  static constexpr int LD = D + 8;       // padded shared-memory row, in 16-bit elements
  static constexpr int NT = BN / 8;      // n8 tiles of S per slice
  static constexpr int DT = D / 8;       // n8 tiles of O per slice
  static constexpr int KD = D / 16;      // k16 steps of Q K^T
  static constexpr int KN = BN / 16;     // k16 steps of P V
  static constexpr int CPR = D / 8;      // 16-byte chunks per row
  // Register budget: accumulators of O and S per thread decide how many warps an SM can hold
  // (16 warps: <= 128 registers, 12: <= 168, 8: <= 255). Q's A fragments stay in registers for the
  // whole KV loop when they fit in that budget next to the accumulators; otherwise they are re-read
  // from shared memory (ldmatrix) at every k step.
  static constexpr int ACC_REGS = MT * DT * 4 + MT * NT * 4;
  static constexpr int Q_FRAG_REGS = MT * KD * 4;
  static constexpr int WARPS_PER_SM = ACC_REGS <= 64 ? 16 : (ACC_REGS <= 100 ? 12 : 8);
  static constexpr int Q_LIMIT = WARPS_PER_SM == 16 ? 80 : (WARPS_PER_SM == 12 ? 120 : 192);
  static constexpr bool Q_REGS = ACC_REGS + Q_FRAG_REGS <= Q_LIMIT;
  static constexpr int Q_BYTES = BM * LD * 2;
  static constexpr int TILE_BYTES = BN * LD * 2;
  static constexpr int OFF_BYTES = 2 * BN * 8;  // row-offset table (paged), two tiles
  static constexpr int SMEM = Q_BYTES + 2 * STAGES * TILE_BYTES + OFF_BYTES;
  static constexpr int MIN_BLOCKS = WARPS_PER_SM / WARPS > 0 ? WARPS_PER_SM / WARPS : 1;

  static_assert(D % 16 == 0, "head_dim must be a multiple of 16");
  static_assert(MW % 16 == 0 && MT >= 1, "BLOCK_M / WARPS must be a multiple of 16");
  static_assert(BN % 16 == 0, "BLOCK_N must be a multiple of 16");
  static_assert(BN <= THREADS, "one thread per row of the block-table prefetch");
  static_assert((BN * CPR) % THREADS == 0 && (BM * CPR) % THREADS == 0, "tile loads must split evenly");
  static_assert(STAGES >= 2, "at least double buffering");
};

// ---- the kernel ------------------------------------------------------------------------------------------

// Element offset of key/value row s of KV head kvh in K (or V): contiguous, the head's rows from bh_rows on
// ([B*KVH][seq_len][D]); paged, through the sequence's block table bt into the pool ([slots][KVH][page_size][D]).
template <int D>
__device__ __forceinline__ std::int64_t kv_row_offset(const KParams& p, bool paged, const std::int32_t* __restrict__ bt,
                                                      std::int64_t bh_rows, int kvh, int ps, int s) {
  if (!paged) return (bh_rows + s) * D;
  const int page = s / ps;
  const int slot = __ldg(bt + page);
  return ((static_cast<std::int64_t>(slot) * p.kv_heads + kvh) * ps + (s - page * ps)) * D;
}

// VAR: the instance that applies the variants (KVarParams: the window, whose key tiles before the block's first
// row's window it never loads, the soft-cap and the sinks); the other takes KParams and keeps its code.
template <class C, bool BF16, bool VAR = false>
__global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS) fused_attention_fwd(const KParamsOf<VAR> p) {
  constexpr int D = C::D, BM = C::BM, BN = C::BN, STAGES = C::STAGES, THREADS = C::THREADS;
  constexpr int MW = C::MW, MT = C::MT, LD = C::LD, NT = C::NT, DT = C::DT, KD = C::KD, KN = C::KN;
  constexpr int CPR = C::CPR;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  std::uint16_t* sQ = reinterpret_cast<std::uint16_t*>(smem_raw);
  std::uint16_t* sK = reinterpret_cast<std::uint16_t*>(smem_raw + C::Q_BYTES);
  std::int64_t* sOff = reinterpret_cast<std::int64_t*>(smem_raw + C::Q_BYTES + 2 * STAGES * C::TILE_BYTES);

  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;

  // Block -> (query block, batch*head): a head's blocks side by side (they share its K/V in L2), causal
  // ones longest first.
  const QueryBlock qblk = grid_query_block(blockIdx.x, p.m_blocks, p.causal != 0);  // core/query_block_order.hpp
  const int m_block = qblk.m_block, bh = qblk.bh;
  const int b = bh / p.heads;
  const int h = bh - b * p.heads;
  const int kvh = h / p.group;
  const int q_row0 = m_block * BM;
  const int QL = p.q_len;
  const int S = p.kv_lens ? __ldg(p.kv_lens + b) : p.seq_len;  // this sequence's KV length
  const int diag = causal_diag(S, QL);  // query i sees keys 0 .. i + diag (causal)
  const std::int64_t q_rows = static_cast<std::int64_t>(bh) * QL;  // row of (b,h,0) in Q/O [B,H,q_len,D]
  // Row of (b,kvh,0) in contiguous K/V [B,KVH,seq_len,D].
  const std::int64_t bh_rows = (static_cast<std::int64_t>(b) * p.kv_heads + kvh) * p.seq_len;

  const int kv_end = kv_end_for_rows(q_row0 + BM, S, diag, p.causal);
  // Key tiles [t_first, t_first + n_tiles): with a window, from the tile of the block's first row's first
  // visible key (fused_kernel_wsp.cuh's items likewise); the loop and the ring count tiles from t_first.
  int t_first = 0;
  if constexpr (VAR) t_first = p.window > 0 ? min(max(0, q_row0 + diag - p.window), kv_end) / BN : 0;
  const int n_tiles = (kv_end + BN - 1) / BN - t_first;

  const std::uint16_t* __restrict__ gK = p.k;
  const std::uint16_t* __restrict__ gV = p.v;
  const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(b) * p.pages;
  const int ps = p.page_size;
  const bool paged = p.paged != 0;

  // Element offset of key/value row s (s < S) in K/V, computed directly (prologue) ...
  auto row_off_direct = [&](int s) { return kv_row_offset<D>(p, paged, bt, bh_rows, kvh, ps, s); };

  // ... and the 16-byte cp.async issue of one K/V tile into ring slot `slot`. When the chunks of a row
  // divide the CTA evenly, every pass of a thread covers the same chunk column, RPP rows further down:
  // one base pointer per thread and compile-time offsets per pass.
  constexpr int RPP = THREADS / CPR;  // rows per pass
  const int ld_row0 = tid / CPR;
  const int ld_ch = tid % CPR;
  const std::int64_t kv_thr = (bh_rows + ld_row0) * D + ld_ch * 8;  // contiguous: row ld_row0 of tile 0
  const std::uint32_t sK_thr = smem_u32(sK + ld_row0 * LD + ld_ch * 8);
  constexpr std::uint32_t V_MINUS_K = STAGES * C::TILE_BYTES;
  auto issue_tile = [&](int t, int slot, bool from_table) {  // t: the t-th tile of the loop (tile t_first + t)
    const int n0 = (t_first + t) * BN;
    if constexpr (THREADS % CPR == 0) {
      static_assert(BN % RPP == 0, "whole passes per tile");
      const std::uint32_t dK = sK_thr + slot * C::TILE_BYTES;
      const int rows_left = S - n0 - ld_row0;  // pass i is valid when i*RPP < rows_left
#pragma unroll
      for (int i = 0; i < BN / RPP; ++i) {
        const bool valid = i * RPP < rows_left;
        std::int64_t off;
        if (from_table)
          off = sOff[(t & 1) * BN + ld_row0 + i * RPP] + ld_ch * 8;
        else if (paged)
          off = valid ? row_off_direct(n0 + ld_row0 + i * RPP) + ld_ch * 8 : 0;
        else
          off = kv_thr + static_cast<std::int64_t>(n0 + i * RPP) * D;
        const std::uint32_t so = i * RPP * LD * 2;
        cp_async16(dK + so, valid ? gK + off : gK, valid);
        cp_async16(dK + V_MINUS_K + so, valid ? gV + off : gV, valid);
      }
    } else {
      const std::uint32_t dK = smem_u32(sK + slot * BN * LD);
#pragma unroll
      for (int i = 0; i < (BN * CPR) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        const int row = c / CPR;
        const int ch = c % CPR;
        const int s = n0 + row;
        const bool valid = s < S;
        std::int64_t off = 0;
        if (valid) off = from_table ? sOff[(t & 1) * BN + row] : row_off_direct(s);
        off += ch * 8;
        const std::uint32_t so = (row * LD + ch * 8) * 2;
        cp_async16(dK + so, valid ? gK + off : gK, valid);
        cp_async16(dK + V_MINUS_K + so, valid ? gV + off : gV, valid);
      }
    }
  };

  // ---- prologue: Q + tile 0 as group 0, tiles 1..STAGES-2 as one group each ----
  {
    const std::uint32_t dQ = smem_u32(sQ);
#pragma unroll
    for (int i = 0; i < (BM * CPR) / THREADS; ++i) {
      const int c = tid + i * THREADS;
      const int row = c / CPR;
      const int ch = c % CPR;
      const int s = q_row0 + row;
      const bool valid = s < QL;
      const std::uint16_t* src = valid ? p.q + (q_rows + s) * D + ch * 8 : p.q;
      cp_async16(dQ + (row * LD + ch * 8) * 2, src, valid);
    }
  }
#pragma unroll
  for (int t = 0; t < STAGES - 1; ++t) {
    if (t < n_tiles) issue_tile(t, t, false);
    cp_async_commit();
  }
  // Row offsets of tile STAGES-1 (issued in iteration 0) into the table.
  if (paged && tid < BN) {
    const int s = (t_first + STAGES - 1) * BN + tid;
    if (STAGES - 1 < n_tiles && s < S) sOff[((STAGES - 1) & 1) * BN + tid] = row_off_direct(s);
  }

  // ---- per-thread fragment geometry ----
  const int g = lane >> 2;  // row within an m16 slice (and +8)
  const int tq = lane & 3;  // column pair within an n8 tile
  const int warp_row0 = q_row0 + warp * MW;        // first query row of this warp
  const int warp_row_last = warp_row0 + MW - 1;
  // ldmatrix lane addressing: A (Q) and V^T use rows (lane%8) + 8*((lane/8)%2), cols 8*(lane/16);
  // K (B operand, non-transposed) uses rows (lane%8) + 8*(lane/16), cols 8*((lane/8)%2).
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8;
  const int a_col = (lane >> 4) * 8;
  const int k_row = (lane & 7) + (lane >> 4) * 8;
  const int k_col = ((lane >> 3) & 1) * 8;
  const std::uint32_t sQ_warp = smem_u32(sQ + (warp * MW + a_row) * LD + a_col);

  float acc_o[MT][DT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][dt][e] = 0.f;
  float row_max[MT][2], row_sum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = -INFINITY;
      row_sum[mt][r] = 0.f;
    }

  const float sl2 = p.scale_log2;

  // Q fragments stay in registers when there is room (loaded after group 0 lands).
  std::uint32_t q_frag[C::Q_REGS ? MT : 1][C::Q_REGS ? KD : 1][4];
  if constexpr (C::Q_REGS) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) ldsm_x4(q_frag[mt][kk], sQ_warp + (mt * 16 * LD + kk * 16) * 2);
  }

  for (int n = 0; n < n_tiles; ++n) {
    cp_async_wait<STAGES - 2>();  // tile n landed (this thread's copies) ...
    __syncthreads();              // ... everyone's; and everyone is done with tile n-1's slot

    // Refill the slot tile n-1 used with tile n+STAGES-1.
    {
      const int t = n + STAGES - 1;
      if (t < n_tiles) issue_tile(t, t % STAGES, paged);
      cp_async_commit();
    }
    // Block-table prefetch for tile n+STAGES (stored into the table at the end of this iteration).
    const int t_pf = n + STAGES;
    const int s_pf = (t_first + t_pf) * BN + tid;
    const bool do_pf = paged && tid < BN && t_pf < n_tiles && s_pf < S;
    int slot_pf = 0;
    if (do_pf) slot_pf = __ldg(bt + s_pf / ps);

    const int n0 = (t_first + n) * BN;
    const int stage = n % STAGES;
    bool warp_sees = !p.causal || n0 <= warp_row_last + diag;
    // A tile wholly before the window of the warp's first row: nothing of it is seen.
    if constexpr (VAR) warp_sees = warp_sees && !(p.window > 0 && n0 + BN - 1 < warp_row0 + diag - p.window);
    if (warp_sees) {
      // ---- S = Q K^T ----
      float acc_s[MT][NT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;

      const std::uint32_t sK_lane = smem_u32(sK + (stage * BN + k_row) * LD + k_col);
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        std::uint32_t qa[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          if constexpr (C::Q_REGS) {
#pragma unroll
            for (int e = 0; e < 4; ++e) qa[mt][e] = q_frag[mt][kk][e];
          } else {
            ldsm_x4(qa[mt], sQ_warp + (mt * 16 * LD + kk * 16) * 2);
          }
        }
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
          std::uint32_t kb[4];
          ldsm_x4(kb, sK_lane + (np * 16 * LD + kk * 16) * 2);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma16816<BF16>(acc_s[mt][2 * np], qa[mt], kb[0], kb[1]);
            mma16816<BF16>(acc_s[mt][2 * np + 1], qa[mt], kb[2], kb[3]);
          }
        }
      }

      if constexpr (VAR) {
        if (p.cap_in > 0.f) mma_cap_scores<MT, NT>(acc_s, p.cap_in, p.cap_out);
      }
      // ---- mask: keys past the sequence end, and above the diagonal (only tiles that need it) ----
      bool need_mask = tile_needs_mask(n0, BN, warp_row0, S, diag, p.causal);
      // VAR: and keys before a row's window (the tile starts before the warp's last row's first visible key).
      if constexpr (VAR) need_mask = need_mask || (p.window > 0 && n0 < warp_row_last + diag - p.window);
      if (need_mask) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int col = n0 + nt * 8 + tq * 2 + (e & 1);
              const int row = warp_row0 + mt * 16 + g + (e >> 1) * 8;
              bool masked = key_masked(col, row, S, diag, p.causal);
              if constexpr (VAR) masked = masked || (p.window > 0 && col < row + diag - p.window);
              if (masked) acc_s[mt][nt][e] = -INFINITY;
            }
      }

      // ---- online softmax (scale folded into exp2) ----
      mma_softmax_step<MT, NT, DT>(acc_s, row_max, row_sum, acc_o, sl2);

      // ---- O += P V  (P from the S accumulators, V^T through ldmatrix.trans) ----
      const std::uint32_t sV_lane = smem_u32(sK + ((STAGES + stage) * BN + a_row) * LD + a_col);  // V ring follows K
#pragma unroll
      for (int kk = 0; kk < KN; ++kk) {
        std::uint32_t pa[MT][4];  // per key step: packing every step first changed 30 instances' SASS
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) mma_pack_p_frag<BF16>(acc_s[mt][2 * kk], acc_s[mt][2 * kk + 1], pa[mt]);
#pragma unroll
        for (int dp = 0; dp < DT / 2; ++dp) {
          std::uint32_t vb[4];
          ldsm_x4_t(vb, sV_lane + (kk * 16 * LD + dp * 16) * 2);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma16816<BF16>(acc_o[mt][2 * dp], pa[mt], vb[0], vb[1]);
            mma16816<BF16>(acc_o[mt][2 * dp + 1], pa[mt], vb[2], vb[3]);
          }
        }
      }
    }

    if (do_pf) {
      const int page = s_pf / ps;
      sOff[(t_pf & 1) * BN + tid] =
          ((static_cast<std::int64_t>(slot_pf) * p.kv_heads + kvh) * ps + (s_pf - page * ps)) * D;
    }
  }
  cp_async_wait<0>();

  // ---- epilogue: O / l, through this warp's own rows of sQ, 16-byte coalesced stores ----
  __syncwarp();
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = row_sum[mt][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      float keep = 1.f;  // VAR with sinks: the accumulator's factor at the sink's common scale
      if constexpr (VAR) {
        if (p.sinks) {
          const float m = row_max[mt][r] == -INFINITY ? -INFINITY : row_max[mt][r] * sl2;
          keep = mma_add_sink(m, l, __ldg(p.sinks + h) * 1.4426950408889634f);
        }
      }
      const float inv = l > 0.f ? keep / l : 0.f;
      std::uint16_t* dst = sQ + (warp * MW + mt * 16 + g + r * 8) * LD + tq * 2;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt)
        *reinterpret_cast<std::uint32_t*>(dst + dt * 8) =
            pack2<BF16>(acc_o[mt][dt][2 * r] * inv, acc_o[mt][dt][2 * r + 1] * inv);
    }
  __syncwarp();
#pragma unroll
  for (int i = 0; i < (MW * CPR + 31) / 32; ++i) {
    const int c = lane + i * 32;
    if ((MW * CPR) % 32 == 0 || c < MW * CPR) {
      const int row = c / CPR;
      const int ch = c % CPR;
      const int s = warp_row0 + row;
      if (s < QL) {
        const uint4 val = *reinterpret_cast<const uint4*>(sQ + (warp * MW + row) * LD + ch * 8);
        *reinterpret_cast<uint4*>(p.o + (q_rows + s) * D + ch * 8) = val;
      }
    }
  }
}

// ---- host side: one compiled configuration ------------------------------------------------------------

using LaunchFn = int (*)(const KVarParams&, void* stream);
using AttrFn = int (*)(cudaFuncAttributes*);

struct Entry {
  int head_dim;
  // Its family (prefill: this kernel with 4 warps, fused_kernel_wg.cuh's with 8+; prefill_ws:
  // fused_kernel_ws.cuh; prefill_wsp: fused_kernel_wsp.cuh) and geometry; tile.wgmma(): built for sm_90a.
  FusedTile tile;
  bool bf16;
  int smem_bytes;
  bool q_in_regs;
  LaunchFn launch;
  AttrFn attrs;
  bool tail_split = false;  // persistent: the walk may split its last round over the grid (WspCfg::TAIL)
  bool variants = false;    // it applies the window, the soft-cap and the sinks (the wsp tiles; mma ones where built)
};

template <class C, bool BF16, bool VAR>
int launch_instance(const KParamsOf<VAR>& kp, void* stream) {
  auto kern = fused_attention_fwd<C, BF16, VAR>;
  if (C::SMEM > 48 * 1024) {
    // Per device; cheap enough to repeat, and always right after a device switch.
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  const long long blocks = static_cast<long long>(kp.m_blocks) * kp.batch * kp.heads;
  kern<<<static_cast<unsigned>(blocks), C::THREADS, C::SMEM, static_cast<cudaStream_t>(stream)>>>(kp);
  return static_cast<int>(cudaGetLastError());
}

// A tile's launch: the variants' instance where the launch asks for a variant and the tile has it (VARIANTS;
// fused_can_implement refuses the others), else the plain one.
template <class C, bool BF16, bool VARIANTS>
int launch_cfg(const KVarParams& kp, void* stream) {
  if constexpr (VARIANTS) {
    if (applies_variants(kp)) return launch_instance<C, BF16, true>(kp, stream);
  }
  return launch_instance<C, BF16, false>(static_cast<const KParams&>(kp), stream);
}

template <class C, bool BF16>
int attrs_cfg(cudaFuncAttributes* a) {
  return static_cast<int>(cudaFuncGetAttributes(a, fused_attention_fwd<C, BF16>));
}

// VARIANTS: the tile also has the variants' instance (fused_attention_dother.cu's head dims, which no persistent
// tile covers).
template <int D, int BM, int BN, int W, int ST, bool BF16, bool VARIANTS = false>
constexpr Entry make_entry() {
  using C = Cfg<D, BM, BN, W, ST>;
  return Entry{D, FusedTile::prefill_tile(BM, BN, W, ST), BF16, C::SMEM, C::Q_REGS, &launch_cfg<C, BF16, VARIANTS>,
               &attrs_cfg<C, BF16>, false, VARIANTS};
}

// Per-translation-unit tables (kernels/fused_attention*.cu).
const Entry* entries_d64(int* count);
const Entry* entries_d128(int* count);
const Entry* entries_dother(int* count);
const Entry* entries_wg(int* count);
const Entry* entries_ws(int* count);
const Entry* entries_wsp(int* count);

}  // namespace ab::kernels::fused_detail
