// The warp-specialized Hopper (sm_90a) fused attention forward (tiles named "...ws"): one producer
// warpgroup feeds two consumer warpgroups through a shared-memory ring, one query block per CTA
// (OneBlockPerCta, fused_tile_scheduler.cuh). The kernel and its configuration; the launch is fused_ws_launch.cuh's.
// Included by fused_ws_launch.cuh and fused_kernel_wsp.cuh.
//
// CTA = 3 warpgroups, BLOCK_M = 128 query rows (64 per consumer warpgroup) of one (batch, query head h);
// K/V come from KV head h / group (grouped KV heads).
//   producer (warpgroup 0): gives up registers (setmaxnreg.dec). Loads land in stage t % STAGES of two
//     rings (K and V), each stage with a full barrier and an empty barrier (one arrive per consumer
//     thread). Two ways to fill a stage:
//     - TMA (cp.async.bulk.tensor, 128-byte swizzle, the layout the wgmma descriptors read), issued by one
//       thread (fused_ws_producer.cuh), completing on the full barrier by its bytes (arrive.expect_tx). Q once ([B*H][q_len][D]
//       map: rows past q_len are zero-filled), contiguous K/V from a [B*KVH][seq_len][D] map, paged K/V
//       from a [slots*KVH][page_size][D] map over the pool, one box per page piece, where a page is a
//       multiple of 8 rows and pages and tiles nest (page_size a multiple of BLOCK_N or dividing it).
//     - cp.async by all 128 producer threads (16-byte chunks into the same swizzled layout, rows past the
//       sequence zero-filled), each tracked by the full barrier (cp.async.mbarrier.arrive), then one
//       arrive after a producer-only named barrier: any other page size, and the tile that holds a ragged
//       sequence's end (its rows past kv_len must not reach P V even if they hold NaN; TMA only
//       zero-fills past the map's bounds). Consumers fence the async proxy after waiting on such a stage.
//   consumers (warpgroups 1, 2): take the registers (setmaxnreg.inc) and run the loop of the wgmma
//     kernel (fused_kernel_wg.cuh): S_j = Q K_j^T and O += P_{j-1} V_{j-1} issued back to back, softmax
//     of S_j while P_{j-1} V_{j-1} runs (fused_wg_rows.cuh, with the bottom-right causal rule and the
//     per-sequence length of fused_kernel.cuh). They wait only on the full barrier of the stage they read
//     and release K_j as soon as S_j has landed and V_{j-1} once its product has: no CTA-wide barrier
//     after the barrier initialisation.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: the encode function comes from the runtime's entry point)

#include "fused_kernel_wg.cuh"
#include "fused_tile_scheduler.cuh"  // OneBlockPerCta: one query block per CTA
#include "fused_ws_consumer.cuh"  // ws_tile_step: the consumers' key-tile step
#include "fused_ws_producer.cuh"  // WsKvLoader: the producer's K/V loads
#include "fused_ws_smem.cuh"  // WsRingSmem: the shared memory layout
#include "mbarrier_tma.cuh"  // mbar_*, tma_load_3d
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
  // Shared memory: one Q buffer (a full barrier, no empty one), the K/V ring, the barriers.
  using Smem = WsRingSmem<Q_BYTES, 1, false, TILE_BYTES, STAGES>;
  using Off = WsRingOffsets<Smem>;
  static constexpr int SMEM = 1024 /*alignment slack*/ + static_cast<int>(sizeof(Smem));
  static constexpr int PRODUCER_REGS = 24, CONSUMER_REGS = 240;  // 128*24 + 256*240 <= 64K registers
  static constexpr int COPY_PASSES = BN * CPR / 128;              // cp.async fill: 16-byte chunks per producer thread

  static_assert(D % 64 == 0 && D <= 256, "ws kernel: head_dim a multiple of 64, at most 256");
  static_assert(BN % 16 == 0 && BN <= 256, "ws kernel: BLOCK_N a multiple of 16, at most 256 (TMA box)");
  static_assert(STAGES >= 2, "ws kernel: at least two stages");
  static_assert((BN * CPR) % 128 == 0, "ws kernel: the cp.async fill splits evenly over the producer warpgroup");
};

// Whether the ws tiles load paged K/V by TMA boxes (a page a multiple of 8 rows, the swizzle atom, and
// pages nesting with tiles of bn rows); else by cp.async. One rule for the launch's map and the kernel.
__host__ __device__ constexpr bool ws_pages_by_tma(int page_size, int bn) {
  return page_size % 8 == 0 && page_size <= 256 && (page_size % bn == 0 || bn % page_size == 0);
}

#ifdef AB_FUSED_WGMMA
// The first key tile of a sequence that goes by cp.async rather than TMA (n_tiles when none does); tile t
// goes by TMA exactly when t < it. All of them go by cp.async when the pages do not fit boxes; else the tiles
// that hold keys at or past the sequence's end S that the map does not zero-fill (a ragged sequence, or the
// unused rows of a last page), the tiles from S / bn on. A consumer fences the proxies before reading
// them (one comparison per tile).
__device__ __forceinline__ int ws_first_copy_tile(bool paged, bool pages_by_tma, int S, int seq_len, int n_tiles,
                                                  int bn) {
  if (paged && !pages_by_tma) return 0;
  return !paged && S == seq_len ? n_tiles : S / bn;
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

// VAR: the instance that applies the variants (KVarParams: the block's key tiles start at its first row's window,
// the consumers mask each row's window and soft-cap the scores, the sink joins each row's denominator in the
// epilogue: WgRows<..., true>, as fused_kernel_wsp.cuh's VAR instances); the other takes KParams and keeps its code.
template <class C, bool BF16, bool VAR = false>
__global__ void __launch_bounds__(C::THREADS, 1)
    fused_attention_fwd_ws(const KParamsOf<VAR> p, const __grid_constant__ CUtensorMap tm_q,
                           const __grid_constant__ CUtensorMap tm_k, const __grid_constant__ CUtensorMap tm_v) {
#ifdef AB_FUSED_WGMMA
  constexpr int D = C::D, BM = C::BM, BN = C::BN, ST = C::STAGES;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  unsigned char* sQ = smem;
  const std::uint32_t sQ_a = smem_u32(sQ);
  using Off = typename C::Off;  // offsets of C::Smem's members
  const std::uint32_t sK_a = sQ_a + Off::K;  // ST slots
  const std::uint32_t sV_a = sQ_a + Off::V;  // ST slots
  const std::uint32_t bar_q = sQ_a + Off::FULL_Q;
  const WsBars<Off> bars{sQ_a};  // the K/V stages' barriers

  const int tid = threadIdx.x;
  const int warp = __shfl_sync(0xffffffffu, tid >> 5, 0);
  const int lane = tid & 31;
  const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);

  const QueryBlock qblk = OneBlockPerCta::block(p);  // fused_tile_scheduler.cuh
  const int m_block = qblk.m_block, bh = qblk.bh;
  const int b = bh / p.heads;
  const int kvh = (bh - b * p.heads) / p.group;  // grouped KV heads: query head h reads KV head h / group
  const int b_kvh = b * p.kv_heads + kvh;        // row block of K/V in the [B*KVH][seq_len][D] map
  const int q_row0 = m_block * BM;
  const int QL = p.q_len;
  const int S = p.kv_lens ? __ldg(p.kv_lens + b) : p.seq_len;  // this sequence's KV length
  const int diag = causal_diag(S, QL);
  const int kv_end = kv_end_for_rows(q_row0 + BM, S, diag, p.causal);
  // At least one tile: a block whose rows see no key gets all-masked scores (p = 0, O = 0).
  const int n_tiles = max(1, (kv_end + BN - 1) / BN);
  // Key tiles [t_first, n_tiles): with a window, from the tile of the block's first row's window start. The ring
  // counts tiles from t_first (k = t - t_first: stage k % ST, round k / ST).
  int t_first = 0;
  if constexpr (VAR) {
    if (p.window > 0) t_first = min(n_tiles - 1, max(0, q_row0 + diag - p.window) / BN);
  }
  const bool paged = p.paged != 0;
  const int ps = p.page_size;
  const bool pages_by_tma = paged && ws_pages_by_tma(ps, BN);
  const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(b) * p.pages;
  const int first_copy = ws_first_copy_tile(paged, pages_by_tma, S, p.seq_len, n_tiles, BN);
  auto tile_by_tma = [&](int t) { return t < first_copy; };
  auto by_copy = [&](int t) { return !tile_by_tma(t); };

  if (tid == 0) ws_init_barriers(bars, C::CONSUMERS * 128);  // fused_ws_smem.cuh
  __syncthreads();  // the only CTA-wide barrier: the barriers exist before anyone waits on them

  if (wg == 0) {
    // ---- producer ----
    regs_dec<C::PRODUCER_REGS>();
    const bool leader = warp == 0 && lane == 0;
    const WsKvLoader<D, BN, false> kv{p, paged, ps, bt, b_kvh, kvh, S, tid};  // fused_ws_producer.cuh
    if (leader) {
      ws_load_q<BM, D>(sQ_a, tm_q, q_row0, bh, bar_q);  // fused_ws_producer.cuh
    }
    // With a cp.async tile ahead (cp.async tiles are all tiles or only the last), every producer thread
    // follows the ring, waiting on each tile's empty barriers, and the producer's named barrier follows each
    // tile: a parity wait cannot tell phase k from phase k+2, so no producer thread may fall a phase behind
    // the leader (fused_kernel_wsp.cuh). Else the leader alone, issuing every box (kWarpIssues false: the
    // warp's path spilled and slowed head_dim 256, fused_ws_producer.cuh).
    const bool all_follow = !tile_by_tma(n_tiles - 1);
    for (int t = t_first; t < n_tiles && (leader || all_follow); ++t) {
      const int s = (t - t_first) % ST;
      const std::uint32_t free_parity = (((t - t_first) / ST) & 1) ^ 1;  // round 0 passes at once
      const std::uint32_t dk = sK_a + s * C::TILE_BYTES, dv = sV_a + s * C::TILE_BYTES;
      kv.fill(tm_k, tm_v, tile_by_tma(t), all_follow, leader, t, dk, dv,
              WsStageBars{bars.full_k(s), bars.empty_k(s), bars.full_v(s), bars.empty_v(s)}, free_parity, 0);
    }
  } else {
    // ---- consumers ----
    regs_inc<C::CONSUMER_REGS>();
    const int cw = warp - 4;  // warp index among the consumers: rows cw*16 .. +15 of the CTA tile
    const int g = lane >> 2, tq = lane & 3;
    const int warp_row0 = q_row0 + cw * 16;
    const float sl2 = p.scale_log2;
    using Rows = WgRows<BN, D, BF16, VAR>;
    const typename Rows::Geom rg = [&] {
      if constexpr (VAR) {
        return WgVarGeom{{warp_row0, g, tq, S, diag, p.causal != 0}, p.window, p.cap_in, p.cap_out};
      } else {
        return WgRowGeom{warp_row0, g, tq, S, diag, p.causal != 0};
      }
    }();

    WgStep<BN, D, BF16, false, VAR> w;  // fused_wg_step.cuh
    w.begin();
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

    const std::uint64_t dq = sw128_desc(sQ_a + (wg - 1) * 64 * 128, 16, 1024);
    const std::uint64_t dk = sw128_desc(sK_a, 16, 1024);
    const std::uint64_t dv = sw128_desc(sV_a, BN * 128, 1024);
    mbar_wait(bar_q, 0);
    int j = t_first;  // the key tile; k = j - t_first its place in the ring's sequence
    do {
      const int k = j - t_first;
      const int s = k % ST;
      const int sp = (k + ST - 1) % ST;  // stage of tile j-1
      const bool has_pv = k > 0;
      ws_tile_step<BM, C::TILE_BYTES>(  // fused_ws_consumer.cuh
          w, bars, dq, dk, dv, has_pv, j, s, sp, [&] { return (k / ST) & 1; }, [&] { return ((k - 1) / ST) & 1; },
          by_copy, rg, sl2, row_max, row_sum);
    } while (++j < n_tiles);
    // ---- the last tile's P V ----
    const int k_last = n_tiles - 1 - t_first;
    ws_last_pv<C::TILE_BYTES>(w, bars, dv, n_tiles - 1, k_last % ST, [&] { return (k_last / ST) & 1; }, by_copy);

    // ---- epilogue: O / l into this warp's 16 rows of sQ (its warpgroup's rows, no longer read), then
    // 16-byte stores ----
    const std::int64_t q_rows = static_cast<std::int64_t>(bh) * QL;  // row of (b,h,0) in O [B,H,q_len,D]
    __syncwarp();
    // VAR with sinks: the head's sink in every row's denominator.
    Rows::template stage_rows_of<BM>(p, bh % p.heads, w.acc_o, row_sum, row_max, sl2, sQ, cw * 16, rg);
    __syncwarp();
    Rows::template copy_rows<BM>(sQ, cw * 16, rg, QL, p.o + q_rows * D, lane);
  }
#else
  (void)p;
  (void)tm_q;
  (void)tm_k;
  (void)tm_v;
  __trap();  // built without sm_90a; fused_can_implement refuses these tiles on such devices
#endif
}

}  // namespace ab::kernels::fused_detail
