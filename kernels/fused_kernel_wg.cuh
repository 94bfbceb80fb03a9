// The Hopper (sm_90a) variant of the fused attention forward: wgmma instead of mma.sync.
// Included by kernels/fused_attention_wg.cu only.
//
// A CTA has NWG warpgroups; each owns 64 query rows (BLOCK_M = 64*NWG) and every warp of it 16 rows, so
// a thread holds rows g and g+8 of its warp's slice, exactly as in the mma.sync kernel with MT = 1.
// Per KV tile j (BLOCK_N keys):
//   S_j = Q K_j^T         wgmma m64nBNk16, A = Q and B = K from shared memory (K-major, 128-byte swizzle)
//   O  += P_{j-1} V_{j-1} wgmma m64nDk16, A = P from registers (the previous tile's probabilities, packed
//                         from the S accumulators), B = V from shared memory (N-major, same swizzle)
//   softmax of S_j        runs on the CUDA cores while the tensor cores still do P_{j-1} V_{j-1}
//                         (wgmma.wait_group 1 waits only for S_j), then O is rescaled once that lands.
// The two GEMMs of an iteration are issued back to back, the probabilities of a tile are multiplied in
// the next iteration, and the last tile's P V runs after the loop. Every wgmma operand (descriptors, P
// registers) is defined before the batch's first MMA and the issue sits in block-uniform control flow,
// which is what keeps ptxas from serializing the asynchronous MMAs (check -Xptxas -v for C7513/C7514). Tiles arrive by 16-byte cp.async
// from all threads (K of tile j+1 and V of tile j in iteration j, two-slot rings for each, one barrier
// and one fence.proxy.async per tile); shared memory uses the 128-byte swizzle that wgmma descriptors
// read (16-byte chunk c of row r lands at chunk c ^ (r % 8)), which also keeps the cp.async stores and
// the epilogue's fragment stores free of bank conflicts. Paged K/V, causal skipping/masking and the
// grid order are those of the mma.sync kernel (fused_kernel.cuh).
#pragma once
#include "fused_kernel.cuh"
#include "fused_wg_step.cuh"  // WgStep: the consumer warpgroup's MMAs and key-tile step

namespace ab::kernels::fused_detail {

template <int D_, int BN_, int NWG_, int MINB_ = 0>
struct WgCfg {
  static constexpr int D = D_, BN = BN_, NWG = NWG_;
  static constexpr int THREADS = NWG * 128;
  static constexpr int BM = NWG * 64;
  static constexpr int NT = BN / 8, DT = D / 8, KD = D / 16, KN = BN / 16, CPR = D / 8;
  static constexpr int ATOMS = D / 64;  // 64-element (128-byte) column blocks of a row
  static constexpr int Q_BYTES = BM * D * 2;
  static constexpr int TILE_BYTES = BN * D * 2;
  static constexpr int OFF_BYTES = 3 * BN * 8;  // row-offset table (paged), three tiles
  static constexpr int SMEM = 1024 /*alignment slack*/ + Q_BYTES + 4 * TILE_BYTES + OFF_BYTES;
  // Registers per thread held across the loop: S (BN/2), two P buffers (BN/4 each), O (D/2).
  static constexpr int ACC_REGS = BN / 2 + BN / 2 + D / 2;
  static constexpr int MIN_BLOCKS = MINB_ > 0 ? MINB_ : (ACC_REGS <= 96 && NWG <= 2 ? 2 : 1);
  static constexpr int RPP = THREADS / CPR;  // rows per load pass (the last pass may be partial)

  static_assert(D % 64 == 0, "wgmma kernel: head_dim must be a multiple of 64");
  static_assert(BN % 16 == 0 && BN <= 256, "wgmma kernel: BLOCK_N multiple of 16, at most 256");
  static_assert(D <= 256, "wgmma N is at most 256");
  static_assert(RPP % 8 == 0, "load passes keep the swizzle phase");
  static_assert(BN <= THREADS, "one thread per row of the block-table prefetch");
};

template <class C, bool BF16>
__global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS) fused_attention_fwd_wg(const KParams p) {
#ifdef AB_FUSED_WGMMA
  constexpr int D = C::D, BM = C::BM, BN = C::BN;
  constexpr int CPR = C::CPR, RPP = C::RPP;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  unsigned char* sQ = smem;
  unsigned char* sK = smem + C::Q_BYTES;             // 2 slots
  unsigned char* sV = sK + 2 * C::TILE_BYTES;        // 2 slots
  std::int64_t* sOff = reinterpret_cast<std::int64_t*>(sV + 2 * C::TILE_BYTES);  // 3 tiles
  const std::uint32_t sQ_a = smem_u32(sQ), sK_a = smem_u32(sK), sV_a = smem_u32(sV);

  const int tid = threadIdx.x;
  // Warp and warpgroup indices through a shuffle, so the compiler knows they are warp-uniform and keeps
  // the wgmma descriptors in uniform registers (else it serializes the asynchronous MMAs).
  const int warp = __shfl_sync(0xffffffffu, tid >> 5, 0);
  const int lane = tid & 31;
  const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);

  const QueryBlock qblk = grid_query_block(blockIdx.x, p.m_blocks, p.causal != 0);  // core/query_block_order.hpp
  const int m_block = qblk.m_block, bh = qblk.bh;
  const int b = bh / p.heads;
  const int h = bh - b * p.heads;
  const int kvh = h / p.group;  // grouped KV heads: query head h reads KV head h / group
  const int q_row0 = m_block * BM;
  const int QL = p.q_len;
  const int S = p.kv_lens ? __ldg(p.kv_lens + b) : p.seq_len;  // this sequence's KV length
  const int diag = causal_diag(S, QL);
  const std::int64_t q_rows = static_cast<std::int64_t>(bh) * QL;  // row of (b,h,0) in Q/O [B,H,q_len,D]
  // Row of (b,kvh,0) in contiguous K/V [B,KVH,seq_len,D].
  const std::int64_t bh_rows = (static_cast<std::int64_t>(b) * p.kv_heads + kvh) * p.seq_len;
  const int kv_end = kv_end_for_rows(q_row0 + BM, S, diag, p.causal);
  // At least one tile: a block whose rows see no key gets all-masked scores (p = 0, O = 0).
  const int n_tiles = max(1, (kv_end + BN - 1) / BN);
  // Both warpgroups run every tile of the CTA (a warpgroup whose rows all precede a causal tile gets
  // all-masked scores there, p = 0, alpha = 1): keeping the wgmma issue in block-uniform control flow is
  // what lets ptxas leave the asynchronous MMAs unserialized.

  const std::uint16_t* __restrict__ gK = p.k;
  const std::uint16_t* __restrict__ gV = p.v;
  const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(b) * p.pages;
  const int ps = p.page_size;
  const bool paged = p.paged != 0;

  auto row_off_direct = [&](int s) { return kv_row_offset<D>(p, paged, bt, bh_rows, kvh, ps, s); };  // fused_kernel.cuh

  // Load geometry: thread covers chunk ld_ch of rows ld_row0 + i*RPP (RPP is a multiple of 8, so the
  // swizzled chunk is the same for every pass).
  const int ld_row0 = tid / CPR;
  const int ld_ch = tid % CPR;
  const std::int64_t kv_thr = (bh_rows + ld_row0) * D + ld_ch * 8;
  const std::uint32_t ld_sw = sw_off(BN, ld_row0, ld_ch);  // pass 0 offset within a K/V tile

  // One operand (K or V) of tile t into ring slot t&1; offsets of paged rows from table slot t%3.
  auto issue = [&](bool is_v, int t, bool from_table) {
    const int n0 = t * BN;
    const std::uint16_t* g = is_v ? gV : gK;
    const std::uint32_t dst = (is_v ? sV_a : sK_a) + (t & 1) * C::TILE_BYTES + ld_sw;
    if (!from_table && !paged && n0 + BN <= S) {
      // Whole tile inside the sequence, contiguous K/V: one base pointer, constant offsets per pass.
      const std::uint16_t* src = g + kv_thr + static_cast<std::int64_t>(n0) * D;
#pragma unroll
      for (int i = 0; i < (BN + RPP - 1) / RPP; ++i) {
        if (BN % RPP != 0 && ld_row0 + i * RPP >= BN) break;
        cp_async16(dst + i * RPP * 128, src + i * RPP * D, true);
      }
      return;
    }
    const int rows_left = S - n0 - ld_row0;
#pragma unroll
    for (int i = 0; i < (BN + RPP - 1) / RPP; ++i) {
      if (BN % RPP != 0 && ld_row0 + i * RPP >= BN) break;  // partial last pass
      const bool valid = i * RPP < rows_left;
      std::int64_t off;
      if (from_table)
        off = sOff[(t % 3) * BN + ld_row0 + i * RPP] + ld_ch * 8;
      else if (paged)
        off = valid ? row_off_direct(n0 + ld_row0 + i * RPP) + ld_ch * 8 : 0;
      else
        off = kv_thr + static_cast<std::int64_t>(n0 + i * RPP) * D;
      cp_async16(dst + i * RPP * 128, valid ? g + off : g, valid);
    }
  };

  // ---- prologue: Q and K_0 (group 0); paged offsets of tiles 0 and 1 into the table ----
  {
    const std::int64_t q_thr = (q_rows + q_row0 + ld_row0) * D + ld_ch * 8;
    const std::uint32_t dst = sQ_a + sw_off(BM, ld_row0, ld_ch);
#pragma unroll
    for (int i = 0; i < (BM + RPP - 1) / RPP; ++i) {
      if (BM % RPP != 0 && ld_row0 + i * RPP >= BM) break;
      const bool valid = q_row0 + ld_row0 + i * RPP < QL;
      cp_async16(dst + i * RPP * 128, valid ? p.q + q_thr + static_cast<std::int64_t>(i) * RPP * D : p.q, valid);
    }
  }
  issue(false, 0, false);
  cp_async_commit();
  if (paged && tid < BN) {
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const int s = t * BN + tid;
      if (t < n_tiles && s < S) sOff[t * BN + tid] = row_off_direct(s);
    }
  }

  // ---- per-thread fragment geometry ----
  const int g = lane >> 2, tq = lane & 3;
  const int warp_row0 = q_row0 + warp * 16;  // this warp's 16 rows (wg*64 + (warp&3)*16)
  const float sl2 = p.scale_log2;
  using Rows = WgRows<BN, D, BF16>;
  const WgRowGeom rg{warp_row0, g, tq, S, diag, p.causal != 0};

  WgStep<BN, D, BF16> w;  // fused_wg_step.cuh
  w.begin();
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

  // Descriptor bases. Q (A, K-major): rows of this warpgroup, 8-row groups 1024 bytes apart.
  // K (B, K-major): BN rows. V (B, N-major): 8-key groups 1024 bytes apart (SBO), 64-column blocks
  // BN*128 bytes apart (LBO).
  const std::uint32_t q_base = sQ_a + wg * 64 * 128;

  // Start of iteration j: tile j's K (and V of tile j-1) landed and visible to the async proxy, every
  // thread is done with K_{j-1} and V_{j-2}; refill those slots with K_{j+1} and V_j; block-table
  // prefetch for tile j+2 (stored into the table at the end of the iteration).
  int slot_pf = 0;
  bool do_pf = false;
  auto top = [&](int j) {
    cp_async_wait<0>();
    fence_proxy_async();
    __syncthreads();
    if (j + 1 < n_tiles) issue(false, j + 1, paged);
    if (j < n_tiles) issue(true, j, paged);
    cp_async_commit();
    const int t_pf = j + 2;
    const int s_pf = t_pf * BN + tid;
    do_pf = paged && tid < BN && t_pf < n_tiles && s_pf < S;
    if (do_pf) slot_pf = __ldg(bt + s_pf / ps);
  };
  auto bottom = [&](int j) {
    if (do_pf) {
      const int t_pf = j + 2;
      const int s_pf = t_pf * BN + tid;
      const int page = s_pf / ps;
      sOff[(t_pf % 3) * BN + tid] =
          ((static_cast<std::int64_t>(slot_pf) * p.kv_heads + kvh) * ps + (s_pf - page * ps)) * D;
    }
  };
  // Descriptors: bases built once (loop invariant), then per k step a constant is added to the
  // start-address field (byte offset / 16). Every descriptor of a batch is computed and pinned before
  // the batch's first MMA: an operand register defined while MMAs of its batch are in flight makes
  // ptxas serialize the whole batch.
  const std::uint64_t dq = sw128_desc(q_base, 16, 1024);
  const std::uint64_t dk0 = sw128_desc(sK_a, 16, 1024), dk1 = sw128_desc(sK_a + C::TILE_BYTES, 16, 1024);
  const std::uint64_t dv0 = sw128_desc(sV_a, BN * 128, 1024);
  const std::uint64_t dv1 = sw128_desc(sV_a + C::TILE_BYTES, BN * 128, 1024);
  // ---- iterations j = 0..n_tiles-1: S_j, and from j = 1 on P_{j-1} V_{j-1} in flight with it ----
  int j = 0;
  do {
    top(j);
    const bool has_pv = j > 0;
    w.template s_descs<BM>(dq, (j & 1) ? dk1 : dk0);
    if (has_pv) w.v_descs((j & 1) ? dv0 : dv1);  // tile j-1
    w.step(has_pv, j, rg, sl2, row_max, row_sum, [] {}, [] {});
    bottom(j);
  } while (++j < n_tiles);
  // ---- the last tile's P V ----
  top(n_tiles);
  w.v_descs(((n_tiles - 1) & 1) ? dv1 : dv0);
  w.last_pv();
  cp_async_wait<0>();

  // ---- epilogue: O / l into this warp's 16 rows of sQ (same swizzle), then 16-byte stores ----
  Rows::template store<BM>(w.acc_o, row_sum, sQ, warp * 16, rg, QL, p.o + q_rows * D, lane);
#else
  (void)p;
  __trap();  // built without sm_90a; fused_can_implement refuses these tiles on such devices
#endif
}

template <class C, bool BF16>
int launch_wg(const KVarParams& kp, void* stream) {
  auto kern = fused_attention_fwd_wg<C, BF16>;
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
  if (e != cudaSuccess) return static_cast<int>(e);
  const long long blocks = static_cast<long long>(kp.m_blocks) * kp.batch * kp.heads;
  kern<<<static_cast<unsigned>(blocks), C::THREADS, C::SMEM, static_cast<cudaStream_t>(stream)>>>(kp);
  return static_cast<int>(cudaGetLastError());
}

template <class C, bool BF16>
int attrs_wg(cudaFuncAttributes* a) {
  return static_cast<int>(cudaFuncGetAttributes(a, fused_attention_fwd_wg<C, BF16>));
}

template <int D, int BN, int NWG, bool BF16, int MINB = 0>
constexpr Entry make_entry_wg() {
  using C = WgCfg<D, BN, NWG, MINB>;
  return Entry{D, FusedTile::prefill_tile(C::BM, BN, NWG * 4, 2), BF16, C::SMEM, true, &launch_wg<C, BF16>, &attrs_wg<C, BF16>};
}

}  // namespace ab::kernels::fused_detail
