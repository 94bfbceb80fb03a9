// The producer of the warp-specialized Hopper kernels (ws, wsp): a work item's Q load and its K/V loads into the
// shared-memory ring. A key tile goes by TMA boxes (one thread arms the stage's full barrier and loads a
// contiguous tile or one inside a page; a tile over several pages takes a box a page, issued by warp 0's lanes
// from rows looked up a tile ahead (wsp) or by the leader (ws): WsKvLoader's kWarpIssues; completing by its
// bytes) or by cp.async from every producer thread (rows past the sequence zero-filled, tracked by the full
// barrier, one arrive after the producer's named barrier): fused_kernel_ws.cuh says when each.
#pragma once
#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "fused_kernel_wg.cuh"  // KParams, cp_async16, sw_off
#include "mbarrier_tma.cuh"    // mbar_*, tma_load_3d

namespace ab::kernels::fused_detail {

#ifdef AB_FUSED_WGMMA
// Row of key `key` (below its sequence's length) of batch b's KV head kvh in K or V: contiguous [B, KVH, seq_len, D]
// (b_kvh = b * kv_heads + kvh) or the paged pool [slots][KVH][page_size][D] through bt, batch b's row of the
// block table (paged: p.paged != 0, ps: p.page_size).
__device__ __forceinline__ std::int64_t ws_kv_row(const KParams& p, bool paged, int ps, const std::int32_t* bt,
                                                  std::int64_t b_kvh, int kvh, int key) {
  if (paged) {
    const int page = key / ps;
    return (static_cast<std::int64_t>(__ldg(bt + page)) * p.kv_heads + kvh) * ps + (key - page * ps);
  }
  return b_kvh * p.seq_len + key;
}
// Barrier 1 over the producer warpgroup only (the consumers never wait on it). Its warps may come from
// divergent code (the leader's copies): reconverge first, bar.sync is warp-aligned.
__device__ __forceinline__ void producer_sync() {
  __syncwarp();
  asm volatile("bar.sync 1, 128;\n" ::: "memory");
}

// Q of a block of BM rows (row0 on, head bh of the [B*H][q_len][D] map) into the buffer at dst, completing on bar
// by its bytes; rows outside the map land as zeros. By the leader thread.
template <int BM, int D>
__device__ __forceinline__ void ws_load_q(std::uint32_t dst, const CUtensorMap& tm_q, int row0, int bh,
                                          std::uint32_t bar) {
  mbar_expect_tx(bar, BM * D * 2);
#pragma unroll
  for (int a = 0; a < D / 64; ++a) tma_load_3d(dst + a * BM * 128, tm_q, a * 64, row0, bh, bar);
}

// The barriers of one ring stage (shared-memory addresses).
struct WsStageBars {
  std::uint32_t full_k, empty_k, full_v, empty_v;
};

// One item's K/V loads, BN keys of head_dim D a tile: where its keys live (batch b's KV head kvh: b_kvh's rows of
// a contiguous map, or pages through bt, batch b's row of the block table) and its sequence's length S.
// kWarpIssues: how a paged TMA tile over several pages is issued.
//  - true (wsp): by warp 0's lanes, a page each, from rows looked up a tile ahead (page_row); chunked prefill on
//    pages of 16 ran 1.30x faster so than by one thread (session 47, H200).
//  - false (ws): by the leader alone, the tile's block-table entries loaded all at once just before its boxes.
//    The ws kernel's producer spilled 3.5x more with the warp's path and its head_dim 256 prefill (Gemma,
//    m128n64w12s2ws) ran 2.7 % slower paged and 3.9 % slower contiguous (session 48, H200, one call).
template <int D, int BN, bool kWarpIssues>
struct WsKvLoader {
  static constexpr int ATOMS = D / 64;               // 64-column (128-byte) blocks of a row: one TMA box each
  static constexpr int TILE_BYTES = BN * D * 2;
  static constexpr int CPR = D / 8;                  // 16-byte chunks of a row
  static constexpr int COPY_PASSES = BN * CPR / 128;  // cp.async fill: chunks per producer thread
  static_assert(BN / 8 <= 32, "a paged TMA tile's pages (8 rows at least each) fit warp 0's lanes");

  const KParams& p;
  bool paged;
  int ps;  // page size
  const std::int32_t* __restrict__ bt;
  int b_kvh, kvh, S;
  int ptid;  // this producer thread, 0..127

  // Pages under one key tile: BN / ps whole pages, or one page holding the tile (ps a multiple of BN).
  __device__ __forceinline__ int pages_per_tile() const { return ps >= BN ? 1 : BN / ps; }
  // Paged TMA tiles: the pool row (slot x KV heads + kvh) of this thread's page of tile t, for the first
  // pages_per_tile() producer threads (warp 0's lanes, lane i the tile's i-th page); 0 for the others, for pages
  // past the sequence (such tiles go by cp.async) and without pages. The producer loops load it a tile ahead, so
  // that its latency passes under the waits on the ring (loaded just before each box, the loads' latencies added
  // up on the producer's path: chunked prefill on pages of 16 ran at 0.41x its contiguous speed).
  // A tile inside one page (ps >= BN) takes its row in tma_tile instead: ahead, pages of 128 ran 8 % slower
  // than loaded on the spot (session 47, H200, one call; pages of 16 1.30x faster ahead).
  __device__ __forceinline__ int page_row(int t) const {
    if (!kWarpIssues || !paged || ps >= BN || ptid >= pages_per_tile()) return 0;
    const int key = t * BN + ptid * ps;
    if (key >= S) return 0;
    return __ldg(bt + key / ps) * p.kv_heads + kvh;
  }
  // TMA: tile t of K or V into stage slot `dst`, completing on `bar`, by the threads that issue (issues()): with
  // kWarpIssues warp 0 (all its lanes, converged), else the leader. Lane 0 arms the barrier, then without pages,
  // or within one page (its row looked up here), it loads the tile; with several pages each page gets a box:
  // from lane i's `row` (page_row of t) with kWarpIssues, else from entries the leader loads here.
  __device__ __forceinline__ void tma_tile(const CUtensorMap& map, std::uint32_t dst, int t, std::uint32_t bar,
                                           int row) const {
    if (!paged || ps >= BN) {
      if (ptid == 0) {
        mbar_expect_tx(bar, TILE_BYTES);
        int at = t * BN, outer = b_kvh;
        if (paged) {
          const int page = at / ps;
          outer = __ldg(bt + page) * p.kv_heads + kvh;
          at -= page * ps;
        }
#pragma unroll
        for (int a = 0; a < ATOMS; ++a) tma_load_3d(dst + a * BN * 128, map, a * 64, at, outer, bar);
      }
      return;
    }
    if constexpr (kWarpIssues) {
      if (ptid == 0) mbar_expect_tx(bar, TILE_BYTES);
      __syncwarp();  // the barrier armed before any box completes on it
      if (ptid < pages_per_tile()) {
#pragma unroll
        for (int a = 0; a < ATOMS; ++a) tma_load_3d(dst + a * BN * 128 + ptid * ps * 128, map, a * 64, 0, row, bar);
      }
    } else {
      mbar_expect_tx(bar, TILE_BYTES);
      constexpr int kMostPages = BN / 8;
      const int pages = BN / ps, page0 = t * BN / ps;
      int rows[kMostPages];
#pragma unroll
      for (int i = 0; i < kMostPages; ++i) rows[i] = i < pages ? __ldg(bt + page0 + i) : 0;
#pragma unroll
      for (int i = 0; i < kMostPages; ++i) {
        if (i >= pages) break;
        const int pool_row = rows[i] * p.kv_heads + kvh;
#pragma unroll
        for (int a = 0; a < ATOMS; ++a)
          tma_load_3d(dst + a * BN * 128 + i * ps * 128, map, a * 64, 0, pool_row, bar);
      }
    }
  }
  // The producer threads that issue TMA tiles: warp 0 (kWarpIssues) or the leader (thread 0).
  __device__ __forceinline__ bool issues() const { return kWarpIssues ? ptid < 32 : ptid == 0; }
  // cp.async: this producer thread's chunks of tile t of K or V (from `src`) into slot `dst`, rows at or past
  // the sequence end zero-filled; then `bar` tracks them.
  __device__ __forceinline__ void copy_tile(const std::uint16_t* src, std::uint32_t dst, int t, std::uint32_t bar) const {
#pragma unroll 1
    for (int i = 0; i < COPY_PASSES; ++i) {
      const int c = ptid + i * 128;
      const int r = c / CPR, ch = c % CPR;
      const int key = t * BN + r;
      const bool valid = key < S;
      std::int64_t row = 0;
      if (valid) row = ws_kv_row(p, paged, ps, bt, b_kvh, kvh, key);
      cp_async16(dst + sw_off(BN, r, ch), src + row * D + ch * 8, valid);
    }
    mbar_track_cp_async(bar);
  }
  // Key tile t into the stage at dk/dv with barriers `b`, once its previous round was read (free_parity). By
  // TMA the issuing threads load (issues(); row: page_row of t); with all_follow every producer thread waits on
  // the empty barriers too, and they refill a stage only after the named barrier, once every producer thread saw
  // it free (a parity wait cannot tell phase k from phase k+2: no producer thread may fall a phase behind). Else
  // the issuing threads alone follow the ring (warp 0 reconverged at each box issue). By cp.async every producer thread copies and follows.
  __device__ __forceinline__ void fill(const CUtensorMap& tm_k, const CUtensorMap& tm_v, bool by_tma, bool all_follow,
                                       bool leader, int t, std::uint32_t dk, std::uint32_t dv, const WsStageBars& b,
                                       std::uint32_t free_parity, int row) const {
    if (by_tma) {
      const bool loads = issues();
      mbar_wait(b.empty_k, free_parity);
      if (all_follow) producer_sync();
      if (loads) tma_tile(tm_k, dk, t, b.full_k, row);
      mbar_wait(b.empty_v, free_parity);
      if (all_follow) producer_sync();
      if (loads) tma_tile(tm_v, dv, t, b.full_v, row);
    } else {
      mbar_wait(b.empty_k, free_parity);
      mbar_wait(b.empty_v, free_parity);
      copy_tile(p.k, dk, t, b.full_k);
      copy_tile(p.v, dv, t, b.full_v);
      producer_sync();  // every producer thread's copies are tracked before the phase's one arrive
      if (leader) {
        mbar_arrive(b.full_k);
        mbar_arrive(b.full_v);
      }
    }
  }
};
#endif

}  // namespace ab::kernels::fused_detail
