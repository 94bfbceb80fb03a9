// The warp-specialized split-KV decode kernel of `fused` (tiles "decode-ws...", fused_decode_tma.cu), Hopper
// (sm_90) only.
//
// Same grid, packed rows, splits, math and merge as fused_decode_fwd (fused_decode.cuh); what differs is how
// K/V reach shared memory. A 5th warp is the producer: it streams each BN-key tile of K and V into a ring of
// STAGES slots by TMA tensor copies (cp.async.bulk.tensor, 128-byte swizzle: conflict-free ldmatrix without
// padding) that complete on the slot's `full` mbarrier; the 4 consumer warps wait on that barrier only, each
// computes its BN/4 keys, and each releases the slot by one arrive on its `empty` barrier. No CTA-wide
// barrier per tile. Variants (TCfg):
//   - BN 64 (tiles "decode-ws"): a slot holds K and V of one tile.
//   - BN 128 (SPLIT_RING, "decode-ws-n128"): a slot holds K or V of one tile (unit u = 2*tile + V, slot
//     u % STAGES), so a 128-key tile fits 2 CTAs per SM (3 slots of 32 KB at head_dim 128) and each warp
//     frees the K slot right after S = Q K^T, before the softmax and P V.
//   - ROW_BOXES ("-rows", head_dim 128 and 256): one copy per box of rows brings whole rows from a 4-D map
//     [outer][rows][D/64][64] (shared-memory line of (row, 64-column block) = row * D/64 + block) instead of
//     one copy per 64-column block (line = block * BN + row).
// Contiguous K/V: boxes of BN rows from the [B*KVH][S][D] tensor (rows past S zero-filled). Paged: one box of
// min(page_size, 64) rows per page (or per 64 rows of it) from the pool seen as [slots*KVH][page_size][D];
// the producer holds the block-table entries of 32 pages per lane register window (the next window loaded 32
// pages ahead). Rows past the split's end that a box still brings (the rest of the last page, of a contiguous
// tile, or the next split's keys) may hold anything: the consumer warp zeroes its V rows there before use
// (P = 0 times a NaN would be NaN), and masks the scores of those keys.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

#include "fused_decode.cuh"
#include "mbarrier_tma.cuh"  // mbar_*, tma_load_3d, tma_load_4d

namespace ab::kernels::fused_detail {

template <int D_, int MT_, int STAGES_, int BN_ = 64, bool SPLIT_RING_ = false, bool ROW_BOXES_ = false>
struct TCfg {
  static constexpr int D = D_, MT = MT_, STAGES = STAGES_, BN = BN_;
  static constexpr bool SPLIT_RING = SPLIT_RING_, ROW_BOXES = ROW_BOXES_;
  static constexpr int CONSUMER_WARPS = 4, CONSUMERS = 128, THREADS = 160;  // warp 4 is the producer
  static constexpr int ROWS = 16 * MT, WN = BN / CONSUMER_WARPS;
  static constexpr int NT = WN / 8, KS = WN / 16;    // n8 tiles of S, k16 steps of P V per warp and tile
  static constexpr int HALVES = D / 64;             // 64-column (128-byte) blocks per row
  static constexpr int HALF_BYTES = BN * 128;       // one 64-column block of a tile
  static constexpr int TILE_BYTES = HALVES * HALF_BYTES;  // one tensor's tile
  static constexpr int SLOT_BYTES = SPLIT_RING ? TILE_BYTES : 2 * TILE_BYTES;
  static constexpr int LDQ = D + 8, DT = D / 8, KD = D / 16, CPR = D / 8;
  static constexpr int Q_BYTES = ROWS * LDQ * 2;
  static constexpr int RING_BYTES = STAGES * SLOT_BYTES;  // split: slot s at s*TILE; else K at s*TILE, V at (ST+s)*TILE
  static constexpr int MERGE_BYTES = CONSUMER_WARPS * ROWS * (D + 4) * 4 + 2 * CONSUMER_WARPS * ROWS * 4;
  static constexpr int BODY = RING_BYTES > MERGE_BYTES ? RING_BYTES : MERGE_BYTES;
  static constexpr int SMEM = 1024 /*alignment slack*/ + BODY + Q_BYTES + 2 * STAGES * 8;
  static constexpr int MIN_BLOCKS = 2 * (SMEM + 1024) <= 228 * 1024 ? 2 : 1;
  // TMA copies per box of rows (K and V in one slot; each 64-column block unless whole-row boxes).
  static constexpr int PER_BOX = (ROW_BOXES ? 1 : HALVES) * (SPLIT_RING ? 1 : 2);
  static_assert(D % 64 == 0, "TMA decode: head_dim a multiple of 64");
  static_assert(WN % 16 == 0 && (BN == 64 || BN == 128), "TMA decode: 64- or 128-key tiles, 16 keys per k-step");
  static_assert((BN / 8) * PER_BOX <= 32, "one producer lane per copy of a tile of 8-row pages");
  static_assert(!SPLIT_RING || STAGES >= 2, "a split ring holds at least the K and V of a tile");
  static_assert((ROWS * CPR) % CONSUMERS == 0, "Q load splits evenly");
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define AB_DECODE_TMA 1
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 128;\n" ::: "memory"); }
#endif

// VAR: the instance that applies the variants (window, soft-cap, sinks; fused_decode.cuh's DVarParams); the other keeps
// the code of the kernel without them.
template <class C, bool BF16, bool VAR>
__global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS)
    fused_decode_tma(const DParamsOf<VAR> p, const __grid_constant__ CUtensorMap tm_k, const __grid_constant__ CUtensorMap tm_v) {
#ifdef AB_DECODE_TMA
  constexpr int D = C::D, MT = C::MT, ST = C::STAGES, ROWS = C::ROWS, BN = C::BN, WN = C::WN;
  constexpr int NT = C::NT, KS = C::KS;
  constexpr int LDQ = C::LDQ, DT = C::DT, KD = C::KD, CPR = C::CPR, HALVES = C::HALVES;
  constexpr bool SPLIT = C::SPLIT_RING, RB = C::ROW_BOXES;
  extern __shared__ __align__(1024) unsigned char tma_smem_raw[];
  unsigned char* smem = tma_smem_raw + ((1024 - (smem_u32(tma_smem_raw) & 1023)) & 1023);
  const std::uint32_t ring_a = smem_u32(smem);
  std::uint16_t* sQ = reinterpret_cast<std::uint16_t*>(smem + C::BODY);
  const std::uint32_t bar_a = smem_u32(smem + C::BODY + C::Q_BYTES);
  auto full_bar = [&](int s) { return bar_a + 8u * s; };
  auto empty_bar = [&](int s) { return bar_a + 8u * (ST + s); };
  // Ring units: one per tile (K and V in one slot), or two (K, then V) with a split ring.
  constexpr int UNITS_PER_TILE = SPLIT ? 2 : 1;
  auto tile_addr = [&](int slot, int kv) -> std::uint32_t {
    return ring_a + static_cast<std::uint32_t>((SPLIT ? slot : kv * ST + slot) * C::TILE_BYTES);
  };
  // Shared-memory line (128 bytes) of row r, 64-column block blk of a tile; swizzled by line % 8.
  auto line_of = [](int r, int blk) -> std::uint32_t {
    return static_cast<std::uint32_t>(RB ? r * HALVES + blk : blk * BN + r);
  };

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int split = blockIdx.x;
  const int kvh = blockIdx.y / p.chunks;
  const int chunk = blockIdx.y - kvh * p.chunks;
  const int b = blockIdx.z;
  const int QL = p.q_len;
  const int rows_total = p.group * QL;
  const int row0 = chunk * ROWS;
  const int L = p.kv_lens ? __ldg(p.kv_lens + b) : p.seq_len;
  int diag = L - QL;
  if constexpr (VAR) {
    if (p.q_lens) diag = L - __ldg(p.q_lens + b);  // a mixed batch: this sequence's own queries
  }
  // The splits cover keys [window_base, L) (core/fused_decode_plan.hpp): a whole tile of 64 keys from the start.
  int base = 0;
  if constexpr (VAR) base = static_cast<int>(fused_decode::window_base(L, QL, p.window));
  const int k_begin = base + split * p.keys_per_split;
  const int k_end = min(L, k_begin + p.keys_per_split);
  const int n_tiles = k_end > k_begin ? (k_end - k_begin + BN - 1) / BN : 0;

  if (tid == 0) {
    for (int s = 0; s < ST; ++s) {
      mbar_init(full_bar(s), 1);
      mbar_init(empty_bar(s), C::CONSUMER_WARPS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();  // the only CTA-wide barrier

  if (warp == C::CONSUMER_WARPS) {
    // ---- producer warp ----
    const int ps = p.page_size;
    const bool paged = p.paged != 0;
    const int box_rows = paged ? min(ps, 64) : BN;  // a box never crosses a page (splits start at 64k)
    const int boxes = BN / box_rows;  // per tile and tensor
    const int first_page = paged ? k_begin / ps : 0;
    const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(b) * p.pages;
    auto load_window = [&](int w) -> int {  // slot of page first_page + w*32 + lane, 0 where none
      const int pg = first_page + w * 32 + lane;
      return (paged && pg < p.pages && pg * ps < k_end) ? __ldg(bt + pg) : 0;
    };
    int win = 0, cur = load_window(0), nxt = load_window(1);
    const int bh = b * p.kv_heads + kvh;
    for (int u = 0; u < n_tiles * UNITS_PER_TILE; ++u) {
      const int t = u / UNITS_PER_TILE;
      const int s = u % ST;
      mbar_wait(empty_bar(s), ((u / ST) & 1) ^ 1);  // round 0 passes at once
      const int key0 = k_begin + t * BN;
      const int nb = paged ? min(boxes, (k_end - key0 + box_rows - 1) / box_rows) : 1;
      const int ops = nb * C::PER_BOX;
      // This lane's copy: box i (of rows), 64-column block h, tensor kv.
      const int kv = SPLIT ? (u & 1) : (lane & 1);
      const int rest = SPLIT ? lane : (lane >> 1);
      const int h = RB ? 0 : rest % HALVES;
      const int i = RB ? rest : rest / HALVES;
      int slot = 0, row = key0;
      if (paged) {
        while (((key0 / ps - first_page) >> 5) > win) {  // warp-uniform: advance the window
          cur = nxt;
          ++win;
          nxt = load_window(win + 1);
        }
        const int key = key0 + i * box_rows;
        const int rel = key / ps - first_page - win * 32;  // 0..63 (a tile spans at most 16 pages)
        const int a = __shfl_sync(0xffffffffu, cur, rel & 31);
        const int c = __shfl_sync(0xffffffffu, nxt, rel & 31);
        slot = rel < 32 ? a : c;
        row = key - (key / ps) * ps;
      }
      constexpr int TENSORS = SPLIT ? 1 : 2;
      if (lane == 0) mbar_expect_tx(full_bar(s), static_cast<std::uint32_t>(nb * TENSORS * box_rows * D * 2));
      __syncwarp();
      if (lane < ops) {
        const int outer = paged ? slot * p.kv_heads + kvh : bh;
        const std::uint32_t dst = tile_addr(s, kv) + line_of(i * box_rows, h) * 128;
        if constexpr (RB) {
          tma_load_4d(dst, kv ? tm_v : tm_k, row, outer, full_bar(s));
        } else {
          tma_load_3d(dst, kv ? tm_v : tm_k, h * 64, row, outer, full_bar(s));
        }
      }
    }
    return;
  }

  // ---- consumer warps 0-3 ----
  const DecodeQRows q_row_of{p, b, kvh, QL, rows_total};  // fused_decode.cuh
  decode_load_q<D, ROWS, CPR, C::CONSUMERS, LDQ>(sQ, p.q, tid, q_row_of, row0);
  cp_async_commit();
  cp_async_wait<0>();
  consumers_sync();

  const int g = lane >> 2, tq = lane & 3;
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8, a_col = (lane >> 4) * 8;
  const int k_row = (lane & 7) + (lane >> 4) * 8, k_col = ((lane >> 3) & 1) * 8;
  const std::uint32_t sQ_lane = smem_u32(sQ + a_row * LDQ + a_col);
  // This lane's ldmatrix rows (of each 16-key step j: + 16 j) and 16-byte chunks within a 64-column block.
  const int kr = warp * WN + k_row, vr = warp * WN + a_row;
  const std::uint32_t k_c = k_col / 8, v_c = a_col / 8;
  // Byte offset in a tile of the 16-byte chunk `chunk` (0..7) of row r, 64-column block blk (128-byte swizzle).
  auto swz = [&](int r, int blk, std::uint32_t chunk) -> std::uint32_t {
    if constexpr (RB) {
      const std::uint32_t l = line_of(r, blk);
      return l * 128 + ((chunk ^ (l & 7)) << 4);
    } else {  // line blk*BN + r: its index mod 8 is r's
      return blk * C::HALF_BYTES + r * 128 + ((chunk ^ (r & 7)) << 4);
    }
  };

  int row_lim[MT][2], row_lo[MT][2];
  float acc_o[MT][DT][4];
  float row_max[MT][2], row_sum[MT][2];
  decode_init_rows<MT, DT>(row_lim, acc_o, row_max, row_sum, row0, g, QL, L, diag, p.causal);
  if constexpr (VAR) decode_window_rows<MT>(row_lo, row0, g, QL, diag, p.window);
  const float sl2 = p.scale_log2;
  const int mask_from = p.causal ? min(k_end, diag + 1) : k_end;
  int mask_below = 0;  // keys below this: before some row's window
  if constexpr (VAR) mask_below = p.window > 0 ? QL - 1 + diag - p.window : 0;

  // This warp's V rows past the split's end in the V tile at sV_t: zero (whole rows, so no swizzle).
  auto zero_v_tail = [&](std::uint32_t sV_t, int tile_key0) {
    const int first = k_end - tile_key0;
    for (int c = lane; c < WN * HALVES * 8; c += 32) {
      const int r = warp * WN + c / (HALVES * 8);
      const int hc = c % (HALVES * 8);
      if (r >= first)
        asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(sV_t + line_of(r, hc / 8) * 128 + (hc % 8) * 16),
                     "r"(0)
                     : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncwarp();
  };

  for (int n = 0; n < n_tiles; ++n) {
    const int uk = n * UNITS_PER_TILE, uv = uk + (SPLIT ? 1 : 0);  // ring units of K and V
    const int sk = uk % ST, sv = uv % ST;
    mbar_wait(full_bar(sk), (uk / ST) & 1);
    const int tile_key0 = k_begin + n * BN;
    const int k0 = tile_key0 + warp * WN;
    const bool active = k0 < k_end;
    const bool v_tail = k0 + WN > k_end;
    const std::uint32_t sK_t = tile_addr(sk, 0);
    const std::uint32_t sV_t = tile_addr(sv, 1);
    float acc_s[MT][NT][4];
    if (active) {
      if (!SPLIT && v_tail) zero_v_tail(sV_t, tile_key0);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        std::uint32_t kb[KS][4];
#pragma unroll
        for (int j = 0; j < KS; ++j) ldsm_x4(kb[j], sK_t + swz(kr + 16 * j, kk / 4, (kk & 3) * 2 + k_c));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          std::uint32_t qa[4];
          ldsm_x4(qa, sQ_lane + (mt * 16 * LDQ + kk * 16) * 2);
#pragma unroll
          for (int j = 0; j < KS; ++j) {
            mma16816<BF16>(acc_s[mt][2 * j], qa, kb[j][0], kb[j][1]);
            mma16816<BF16>(acc_s[mt][2 * j + 1], qa, kb[j][2], kb[j][3]);
          }
        }
      }
    }
    if constexpr (SPLIT) {  // K is in registers as S: free its slot before the softmax
      __syncwarp();
      if (lane == 0) mbar_arrive(empty_bar(sk));
    }
    std::uint32_t pa[MT][KS][4];
    if (active) {
      if constexpr (VAR) {
        if (p.cap_in > 0.f) mma_cap_scores<MT, NT>(acc_s, p.cap_in, p.cap_out);
      }
      if (k0 + WN > mask_from || (VAR && k0 < mask_below)) decode_mask_keys<MT, NT, VAR>(acc_s, k0, tq, k_end, row_lim, row_lo);
      mma_softmax_step<MT, NT, DT>(acc_s, row_max, row_sum, acc_o, sl2);
      mma_pack_p<MT, NT, BF16>(acc_s, pa);
    }
    if constexpr (SPLIT) {
      mbar_wait(full_bar(sv), (uv / ST) & 1);
      if (active && v_tail) zero_v_tail(sV_t, tile_key0);
    }
    if (active) {
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
#pragma unroll
        for (int j = 0; j < KS; ++j) {
          std::uint32_t vb[4];
          ldsm_x4_t(vb, sV_t + swz(vr + 16 * j, dp / 4, (dp & 3) * 2 + v_c));
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma16816<BF16>(acc_o[mt][2 * dp], pa[mt][j], vb[0], vb[1]);
            mma16816<BF16>(acc_o[mt][2 * dp + 1], pa[mt][j], vb[2], vb[3]);
          }
        }
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(empty_bar(sv));
  }
  consumers_sync();  // every consumer is done with the ring (and every copy into it has landed): merge there

  float* merge = reinterpret_cast<float*>(smem);
  decode_stash_warp_state<D, MT, ROWS, C::CONSUMER_WARPS>(merge, warp, lane, acc_o, row_max, row_sum, sl2);
  consumers_sync();
  decode_write_rows<D, ROWS, C::CONSUMER_WARPS, BF16, VAR>(merge, tid, p, split, q_row_of, row0);
#endif
}

}  // namespace ab::kernels::fused_detail
