// The warp-specialized split-KV decode kernel of `fused` (tiles "decode-ws", "decode-ws-s8"), Hopper (sm_90)
// only. Included by kernels/fused_decode.cu only.
//
// Same grid, packed rows, splits, math and merge as fused_decode_fwd (fused_decode.cuh); what differs is how
// K/V reach shared memory. A 5th warp is the producer: it streams each 64-key tile of K and V into a
// STAGES-deep ring by TMA tensor copies (cp.async.bulk.tensor, 128-byte swizzle: 64-column boxes, conflict-free
// ldmatrix without padding) that complete on the stage's `full` mbarrier; the 4 consumer warps wait on that
// barrier only, each computes its 16 keys, and each releases the stage by one arrive on its `empty` barrier.
// No CTA-wide barrier per tile. Contiguous K/V: one [64 rows x 64 columns] box per half of D from the
// [B*KVH][S][D] tensor (rows past S zero-filled). Paged: one box of min(page_size, 64) rows per page and half,
// from the pool seen as [slots*KVH][page_size][D]; the producer holds the block-table entries of 32 pages per
// lane register window (the next window loaded 32 pages ahead). Rows past the split's end that a box still
// brings (the rest of the last page, or of a contiguous tile) may hold anything: the consumer warp zeroes its
// V rows there before use (P = 0 times a NaN would be NaN), and masks the scores of those keys.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

#include "fused_decode.cuh"
#include "mbarrier_tma.cuh"  // mbar_*, tma_load_3d

namespace ab::kernels::fused_detail {

template <int D_, int MT_, int STAGES_>
struct TCfg {
  static constexpr int D = D_, MT = MT_, STAGES = STAGES_;
  static constexpr int CONSUMER_WARPS = 4, CONSUMERS = 128, THREADS = 160;  // warp 4 is the producer
  static constexpr int ROWS = 16 * MT, WN = 16, BN = 64;
  static constexpr int HALVES = D / 64;             // 64-column (128-byte) boxes per row
  static constexpr int HALF_BYTES = BN * 128;       // one box column block of a tile
  static constexpr int TILE_BYTES = HALVES * HALF_BYTES;
  static constexpr int LDQ = D + 8, DT = D / 8, KD = D / 16, CPR = D / 8;
  static constexpr int Q_BYTES = ROWS * LDQ * 2;
  static constexpr int RING_BYTES = 2 * STAGES * TILE_BYTES;  // K stages, then V stages
  static constexpr int MERGE_BYTES = CONSUMER_WARPS * ROWS * (D + 4) * 4 + 2 * CONSUMER_WARPS * ROWS * 4;
  static constexpr int BODY = RING_BYTES > MERGE_BYTES ? RING_BYTES : MERGE_BYTES;
  static constexpr int SMEM = 1024 /*alignment slack*/ + BODY + Q_BYTES + 2 * STAGES * 8;
  static constexpr int MIN_BLOCKS = 2 * (SMEM + 1024) <= 228 * 1024 ? 2 : 1;
  static_assert(D % 64 == 0, "TMA decode: head_dim a multiple of 64");
  static_assert((ROWS * CPR) % CONSUMERS == 0, "Q load splits evenly");
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define AB_DECODE_TMA 1
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 128;\n" ::: "memory"); }
#endif

template <class C, bool BF16>
__global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS)
    fused_decode_tma(const DParams p, const __grid_constant__ CUtensorMap tm_k, const __grid_constant__ CUtensorMap tm_v) {
#ifdef AB_DECODE_TMA
  constexpr int D = C::D, MT = C::MT, ST = C::STAGES, ROWS = C::ROWS, BN = C::BN, WN = C::WN;
  constexpr int LDQ = C::LDQ, DT = C::DT, KD = C::KD, CPR = C::CPR, HALVES = C::HALVES;
  extern __shared__ __align__(1024) unsigned char tma_smem_raw[];
  unsigned char* smem = tma_smem_raw + ((1024 - (smem_u32(tma_smem_raw) & 1023)) & 1023);
  const std::uint32_t ring_a = smem_u32(smem);  // K stage s at s*TILE_BYTES, V stage s at (ST+s)*TILE_BYTES
  std::uint16_t* sQ = reinterpret_cast<std::uint16_t*>(smem + C::BODY);
  const std::uint32_t bar_a = smem_u32(smem + C::BODY + C::Q_BYTES);
  auto full_bar = [&](int s) { return bar_a + 8u * s; };
  auto empty_bar = [&](int s) { return bar_a + 8u * (ST + s); };

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int split = blockIdx.x;
  const int kvh = blockIdx.y / p.chunks;
  const int chunk = blockIdx.y - kvh * p.chunks;
  const int b = blockIdx.z;
  const int QL = p.q_len;
  const int rows_total = p.group * QL;
  const int row0 = chunk * ROWS;
  const int L = p.kv_lens ? __ldg(p.kv_lens + b) : p.seq_len;
  const int diag = L - QL;
  const int k_begin = split * p.keys_per_split;
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
    const int box_rows = paged ? min(ps, BN) : BN;
    const int boxes = BN / box_rows;  // per tile and half and tensor
    const int first_page = paged ? k_begin / ps : 0;
    const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(b) * p.pages;
    auto load_window = [&](int w) -> int {  // slot of page first_page + w*32 + lane, 0 where none
      const int pg = first_page + w * 32 + lane;
      return (paged && pg < p.pages && pg * ps < k_end) ? __ldg(bt + pg) : 0;
    };
    int win = 0, cur = load_window(0), nxt = load_window(1);
    const int bh = b * p.kv_heads + kvh;
    for (int t = 0; t < n_tiles; ++t) {
      const int s = t % ST;
      mbar_wait(empty_bar(s), ((t / ST) & 1) ^ 1);  // round 0 passes at once
      const int key0 = k_begin + t * BN;
      const int nb = paged ? min(boxes, (k_end - key0 + box_rows - 1) / box_rows) : 1;
      const int ops = nb * HALVES * 2;
      int slot = 0, row = key0, i = 0, h = 0, kv = 0;
      if (paged) {
        while (((key0 / ps - first_page) >> 5) > win) {  // warp-uniform: advance the window
          cur = nxt;
          ++win;
          nxt = load_window(win + 1);
        }
        i = lane / (HALVES * 2);
        const int key = key0 + i * box_rows;
        const int rel = key / ps - first_page - win * 32;  // 0..63 (a tile spans at most 8 pages)
        const int a = __shfl_sync(0xffffffffu, cur, rel & 31);
        const int c = __shfl_sync(0xffffffffu, nxt, rel & 31);
        slot = rel < 32 ? a : c;
        row = key - (key / ps) * ps;
      }
      h = (lane / 2) % HALVES;
      kv = lane & 1;
      if (lane == 0) mbar_expect_tx(full_bar(s), static_cast<std::uint32_t>(ops * box_rows * 128));
      __syncwarp();
      if (lane < ops) {
        const std::uint32_t dst = ring_a + (kv * ST + s) * C::TILE_BYTES + h * C::HALF_BYTES + i * box_rows * 128;
        const int outer = paged ? slot * p.kv_heads + kvh : bh;
        tma_load_3d(dst, kv ? tm_v : tm_k, h * 64, row, outer, full_bar(s));
      }
    }
    return;
  }

  // ---- consumer warps 0-3 ----
  auto q_row_of = [&](int r) -> std::int64_t {
    if (r >= rows_total) return -1;
    const int hq = kvh * p.group + r / QL;
    return (static_cast<std::int64_t>(b) * p.heads + hq) * QL + (r % QL);
  };
#pragma unroll
  for (int i = 0; i < (ROWS * CPR) / C::CONSUMERS; ++i) {
    const int c = tid + i * C::CONSUMERS;
    const int row = c / CPR, ch = c % CPR;
    const std::int64_t qr = q_row_of(row0 + row);
    cp_async16(smem_u32(sQ + row * LDQ + ch * 8), qr >= 0 ? p.q + qr * D + ch * 8 : p.q, qr >= 0);
  }
  cp_async_commit();
  cp_async_wait<0>();
  consumers_sync();

  const int g = lane >> 2, tq = lane & 3;
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8, a_col = (lane >> 4) * 8;
  const int k_row = (lane & 7) + (lane >> 4) * 8, k_col = ((lane >> 3) & 1) * 8;
  const std::uint32_t sQ_lane = smem_u32(sQ + a_row * LDQ + a_col);
  // Swizzled (128-byte) byte offsets of this lane's ldmatrix rows: row*128 plus the 16-byte chunk XOR row%8.
  const int kr = warp * WN + k_row, vr = warp * WN + a_row;
  const std::uint32_t k_base = kr * 128, k_x = kr & 7, k_c = k_col / 8;
  const std::uint32_t v_base = vr * 128, v_x = vr & 7, v_c = a_col / 8;

  int row_lim[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int pr = row0 + mt * 16 + g + r * 8;
      row_lim[mt][r] = p.causal ? min(L, (pr % QL) + diag + 1) : L;
    }
  float acc_o[MT][DT][4];
  float row_max[MT][2], row_sum[MT][2];
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
  const float sl2 = p.scale_log2;
  const int mask_from = p.causal ? min(k_end, diag + 1) : k_end;

  for (int n = 0; n < n_tiles; ++n) {
    const int s = n % ST;
    mbar_wait(full_bar(s), (n / ST) & 1);
    const int k0 = k_begin + n * BN + warp * WN;
    const std::uint32_t sK_t = ring_a + s * C::TILE_BYTES;
    const std::uint32_t sV_t = ring_a + (ST + s) * C::TILE_BYTES;
    if (k0 < k_end) {
      if (k0 + WN > k_end) {  // this warp's V rows past the split's end: zero (whole rows, so no swizzle)
        const int first = k_end - (k_begin + n * BN);
        for (int c = lane; c < WN * HALVES * 8; c += 32) {
          const int r = warp * WN + c / (HALVES * 8);
          const int hc = c % (HALVES * 8);
          if (r >= first)
            asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(sV_t + (hc / 8) * C::HALF_BYTES + r * 128 +
                                                                        (hc % 8) * 16),
                         "r"(0)
                         : "memory");
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
      }
      float acc_s[MT][2][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        std::uint32_t kb[4];
        ldsm_x4(kb, sK_t + (kk / 4) * C::HALF_BYTES + k_base + ((((kk & 3) * 2 + k_c) ^ k_x) << 4));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          std::uint32_t qa[4];
          ldsm_x4(qa, sQ_lane + (mt * 16 * LDQ + kk * 16) * 2);
          mma16816<BF16>(acc_s[mt][0], qa, kb[0], kb[1]);
          mma16816<BF16>(acc_s[mt][1], qa, kb[2], kb[3]);
        }
      }
      if (k0 + WN > mask_from) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < 2; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int col = k0 + nt * 8 + tq * 2 + (e & 1);
              if (col >= k_end || col >= row_lim[mt][e >> 1]) acc_s[mt][nt][e] = -INFINITY;
            }
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          float mx = row_max[mt][r];
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) mx = fmaxf(mx, fmaxf(acc_s[mt][nt][2 * r], acc_s[mt][nt][2 * r + 1]));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          const float mb = (mx == -INFINITY ? 0.f : mx) * sl2;
          const float alpha = ex2(row_max[mt][r] * sl2 - mb);
          row_max[mt][r] = mx;
          float sum = 0.f;
#pragma unroll
          for (int nt = 0; nt < 2; ++nt)
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
      std::uint32_t pa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        pa[mt][0] = pack2<BF16>(acc_s[mt][0][0], acc_s[mt][0][1]);
        pa[mt][1] = pack2<BF16>(acc_s[mt][0][2], acc_s[mt][0][3]);
        pa[mt][2] = pack2<BF16>(acc_s[mt][1][0], acc_s[mt][1][1]);
        pa[mt][3] = pack2<BF16>(acc_s[mt][1][2], acc_s[mt][1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        std::uint32_t vb[4];
        ldsm_x4_t(vb, sV_t + (dp / 4) * C::HALF_BYTES + v_base + ((((dp & 3) * 2 + v_c) ^ v_x) << 4));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<BF16>(acc_o[mt][2 * dp], pa[mt], vb[0], vb[1]);
          mma16816<BF16>(acc_o[mt][2 * dp + 1], pa[mt], vb[2], vb[3]);
        }
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(empty_bar(s));
  }
  consumers_sync();  // every consumer is done with the ring (and every copy into it has landed): merge there

  float* merge = reinterpret_cast<float*>(smem);
  decode_stash_warp_state<D, MT, ROWS, C::CONSUMER_WARPS>(merge, warp, lane, acc_o, row_max, row_sum, sl2);
  consumers_sync();
  decode_write_rows<D, ROWS, C::CONSUMER_WARPS, BF16>(merge, tid, p, split, q_row_of, row0);
#endif
}

}  // namespace ab::kernels::fused_detail
